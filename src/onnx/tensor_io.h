// ONNX TensorProto <-> tessel Tensor, and the .pb tensor files of the ONNX
// test format (test_data_set_N/input_K.pb).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "core/status.h"
#include "ir/tensor.h"

namespace onnx {
class TensorProto;
}

namespace tessel::onnx_io {

// ONNX TensorProto.DataType code -> DType; Unsupported for strings, complex
// numbers and unknown codes.
StatusOr<DType> DTypeFromOnnx(int32_t onnx_type, const std::string& what);
int32_t DTypeToOnnx(DType t);

// Decodes every encoding: raw_data, the typed fields, and external data
// (a file relative to `base_dir`, checked by CheckExternalData). `what`
// names the tensor in messages.
StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto,
                                 const std::filesystem::path& base_dir, const std::string& what);
void TensorToProto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

// Whether the external data `proto` names may be read: its location is a
// relative path without "..", that resolves (links included) inside
// `base_dir` to a regular file, and its offset and length are byte counts.
// Otherwise one line naming `what` and the location.
Status CheckExternalData(const onnx::TensorProto& proto, const std::filesystem::path& base_dir,
                         const std::string& what);

// A serialized TensorProto file. ReadTensorFile also returns the proto's name.
StatusOr<Tensor> ReadTensorFile(const std::filesystem::path& path, std::string* name = nullptr);
// Writes through a temporary file and a rename: never a half-written file.
Status WriteTensorFile(const std::filesystem::path& path, const Tensor& t, const std::string& name);

}  // namespace tessel::onnx_io
