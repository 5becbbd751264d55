// Builds ONNX models in code: for tests (bad-input cases, encodings) and
// tools. Thin over the protobuf API; Save() writes atomically.
//
//   ModelBuilder b(13);
//   b.Input("x", DType::kFloat32, {1, 4});
//   b.Initializer("w", Tensor::FromVector<float>({...}, {4, 2}));
//   auto& n = b.Node("MatMul", {"x", "w"}, {"y"});
//   b.Output("y");
//   TESSEL_RETURN_IF_ERROR(b.Save("m.onnx"));
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace tessel::onnx_io {

enum class TensorEncoding {
  kRaw,       // raw_data
  kTyped,     // float_data / int32_data / int64_data / double_data / uint64_data
  kExternal,  // a file next to the model (Save writes it)
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 13, int ir_version = 7);

  // A graph input; a negative dim becomes a symbolic one named "N<index>".
  void Input(const std::string& name, DType dtype, const Shape& shape);
  // A graph output; its shape is left for the compiler to infer.
  void Output(const std::string& name, DType dtype = DType::kFloat32);
  void Initializer(const std::string& name, const Tensor& t,
                   TensorEncoding encoding = TensorEncoding::kRaw);
  onnx::NodeProto& Node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");

  static void SetAttr(onnx::NodeProto& n, const std::string& name, int64_t v);
  static void SetAttr(onnx::NodeProto& n, const std::string& name, float v);
  static void SetAttr(onnx::NodeProto& n, const std::string& name, const std::string& v);
  static void SetAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
  static void SetAttr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v);
  static void SetAttr(onnx::NodeProto& n, const std::string& name, const Tensor& v);

  onnx::ModelProto& proto() { return model_; }
  Status Save(const std::filesystem::path& path) const;

 private:
  onnx::ModelProto model_;
  struct External {
    std::string file;
    Tensor tensor;
  };
  std::vector<External> external_;
};

}  // namespace tessel::onnx_io
