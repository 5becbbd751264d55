// The structured op fuzzer behind FuzzOps (entry_points.h): its bytes choose
// one registered op, its opset, its inputs (dtype, shape, and for small
// inputs compile-time values) and its attributes (names and types from the
// op's ONNX schema, values from tables of edge cases: 0, -1, 2^31, 2^62,
// INT64_MAX, NaN, ...). Shape inference and the scratch sizes must refuse or
// succeed without overflow (UBSan reports signed overflow and float-to-int
// casts out of range); an accepted node whose tensors are small is then run
// on the reference kernel, with inputs filled from the remaining bytes, which
// may refuse data (an index out of range) but never read or write out of
// bounds.
//
// Whole models reach ops only through the protobuf format, so the model
// fuzzer rarely builds a Pad with pads near INT64_MAX; this one does at once.
#pragma once

#include <onnx/defs/schema.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/op_registry.h"

namespace tessel::fuzz {

// Reads the fuzzer's bytes front to back; zeros once they run out.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  template <typename T>
  const T& Pick(const std::vector<T>& options) {
    return options[Byte() % options.size()];
  }
  uint64_t Raw64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  // An integer that tends to sit on an edge.
  int64_t Int() {
    static const std::vector<int64_t> edges = {0,
                                               1,
                                               2,
                                               3,
                                               4,
                                               -1,
                                               -2,
                                               5,
                                               7,
                                               8,
                                               16,
                                               64,
                                               std::numeric_limits<int32_t>::max(),
                                               int64_t{1} << 31,
                                               (int64_t{1} << 32) + 1,
                                               int64_t{1} << 40,
                                               int64_t{1} << 62,
                                               std::numeric_limits<int64_t>::max(),
                                               std::numeric_limits<int64_t>::min(),
                                               -(int64_t{1} << 62),
                                               std::numeric_limits<int32_t>::min()};
    const uint8_t b = Byte();
    if (b < 240) return edges[b % edges.size()];
    return static_cast<int64_t>(Raw64());
  }
  float Float() {
    static const std::vector<float> edges = {0.0f,
                                             1.0f,
                                             0.5f,
                                             2.0f,
                                             -1.0f,
                                             3.0f,
                                             1e-30f,
                                             1e30f,
                                             3.0e9f,
                                             -3.0e9f,
                                             9.3e18f,
                                             1e38f,
                                             std::numeric_limits<float>::infinity(),
                                             -std::numeric_limits<float>::infinity(),
                                             std::numeric_limits<float>::quiet_NaN(),
                                             -0.0f};
    const uint8_t b = Byte();
    if (b < 240) return edges[b % edges.size()];
    const uint32_t bits = static_cast<uint32_t>(Raw64());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  std::string String() {
    static const std::vector<std::string> words = {"",
                                                   "NOTSET",
                                                   "SAME_UPPER",
                                                   "SAME_LOWER",
                                                   "VALID",
                                                   "nearest",
                                                   "linear",
                                                   "cubic",
                                                   "half_pixel",
                                                   "asymmetric",
                                                   "align_corners",
                                                   "pytorch_half_pixel",
                                                   "tf_crop_and_resize",
                                                   "half_pixel_symmetric",
                                                   "round_prefer_floor",
                                                   "round_prefer_ceil",
                                                   "floor",
                                                   "ceil",
                                                   "DCR",
                                                   "CRD",
                                                   "constant",
                                                   "reflect",
                                                   "edge",
                                                   "wrap",
                                                   "none",
                                                   "mean",
                                                   "sum",
                                                   "max",
                                                   "tanh",
                                                   "Sigmoid",
                                                   "Relu",
                                                   "forward",
                                                   "reverse",
                                                   "bidirectional",
                                                   "stretch",
                                                   "not_larger",
                                                   "bilinear",
                                                   "zeros",
                                                   "border",
                                                   "reflection",
                                                   "\xff\n\x01"};
    return Pick(words);
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

inline Tensor FuzzTensorValues(ByteReader& in, DType dtype, const Shape& shape) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (IsFloat(dtype)) {
      t.SetFromDouble(i, in.Float());
    } else if (dtype == DType::kInt64) {
      t.data<int64_t>()[i] = in.Int();
    } else if (dtype == DType::kInt32) {
      t.data<int32_t>()[i] = static_cast<int32_t>(in.Int());
    } else {
      t.SetFromDouble(i, static_cast<double>(static_cast<int8_t>(in.Byte())));
    }
  }
  return t;
}

inline AttrValue FuzzAttribute(ByteReader& in, ONNX_NAMESPACE::AttributeProto::AttributeType type) {
  using AP = ONNX_NAMESPACE::AttributeProto;
  // One time in eight, a value of another type: the getters must cope.
  if (in.Byte() % 8 == 0) type = static_cast<AP::AttributeType>(1 + in.Byte() % 8);
  const int count = in.Byte() % 7;
  switch (type) {
    case AP::INT:
      return in.Int();
    case AP::FLOAT:
      return in.Float();
    case AP::STRING:
      return in.String();
    case AP::INTS: {
      std::vector<int64_t> v(count);
      for (int64_t& x : v) x = in.Int();
      return v;
    }
    case AP::FLOATS: {
      std::vector<float> v(count);
      for (float& x : v) x = in.Float();
      return v;
    }
    case AP::STRINGS: {
      std::vector<std::string> v(count);
      for (std::string& x : v) x = in.String();
      return v;
    }
    default: {  // a tensor (Constant's value, ConstantOfShape's fill)
      const DType dtype = in.Pick(std::vector<DType>{DType::kFloat32, DType::kInt64, DType::kInt32,
                                                     DType::kBool, DType::kFloat16});
      Shape shape;
      if (in.Byte() % 2) shape.push_back(count);
      return FuzzTensorValues(in, dtype, shape);
    }
  }
}

inline void FuzzOps(const uint8_t* data, size_t size) {
  static const std::vector<const ops::OpSchema*> schemas = ops::OpRegistry::Global().All();
  ByteReader in(data, size);
  const ops::OpSchema& schema = *schemas[(in.Byte() | in.Byte() << 8) % schemas.size()];
  const int opset = std::max(7, schema.max_opset - in.Byte() % 8);

  ir::Graph g;
  g.set_opset_version(opset);
  const int max_inputs = std::min(schema.max_inputs, schema.min_inputs + 4);
  const int num_inputs = schema.min_inputs + in.Byte() % (max_inputs - schema.min_inputs + 1);
  std::vector<ir::Value*> inputs;
  for (int i = 0; i < num_inputs; ++i) {
    if (i >= schema.min_inputs && in.Byte() % 4 == 0) {  // an omitted optional input
      inputs.push_back(nullptr);
      continue;
    }
    const DType dtype = in.Pick(std::vector<DType>{DType::kFloat32, DType::kInt64, DType::kFloat32,
                                                   DType::kInt32, DType::kBool, DType::kUInt8,
                                                   DType::kFloat16, DType::kInt8, DType::kFloat64});
    Shape shape(in.Byte() % 6);
    for (int64_t& d : shape) {
      const uint8_t b = in.Byte();
      d = b < 200 ? b % 6 : std::max<int64_t>(0, in.Int());
    }
    // What the compiler lets through (passes/infer_shapes.h): a tensor of at
    // most 1 MiB, counting a dimension of 0 as 1.
    int64_t bytes = 0, extent = 0;
    if (!CheckedByteSize(shape, dtype, &bytes, &extent) || extent > (int64_t{1} << 20)) {
      for (int64_t& d : shape) d = std::min<int64_t>(d, 3);
    }
    ir::Value* v = g.AddValue("in" + std::to_string(i), dtype, shape, true);
    // Small inputs are sometimes known at compile time (Reshape's shape,
    // Slice's starts, Pad's pads, Resize's scales).
    if (v->dtype != DType::kUndefined && NumElements(shape) <= 8 && in.Byte() % 2)
      v->constant = FuzzTensorValues(in, dtype, shape);
    inputs.push_back(v);
  }
  const int max_outputs = std::min(schema.max_outputs, schema.min_outputs + 3);
  const int num_outputs = schema.min_outputs + in.Byte() % (max_outputs - schema.min_outputs + 1);
  std::vector<ir::Value*> outputs;
  for (int i = 0; i < num_outputs; ++i) outputs.push_back(g.AddValue("out" + std::to_string(i)));
  ir::Node* node = g.AddNode(schema.op_type, "fuzzed", inputs, outputs);
  node->domain = schema.domain;

  if (const auto* onnx_schema = ONNX_NAMESPACE::OpSchemaRegistry::Schema(
          schema.op_type, opset,
          schema.domain.empty() ? ONNX_NAMESPACE::ONNX_DOMAIN : schema.domain)) {
    for (const auto& [name, attr] : onnx_schema->attributes()) {
      if (in.Byte() % 3 == 0) continue;
      if (attr.type == ONNX_NAMESPACE::AttributeProto::GRAPH ||
          attr.type == ONNX_NAMESPACE::AttributeProto::GRAPHS)
        continue;
      node->attrs.Set(name, FuzzAttribute(in, attr.type));
    }
  }

  if (!ops::InferNode(*node, opset).ok()) return;
  (void)ops::ScratchNeeds(*node, opset);

  // Run it when every tensor is small, like a folded constant or a run.
  int64_t elements = 0;
  for (const ir::Value* v : node->inputs) {
    if (v) elements += NumElements(v->shape);
  }
  for (const ir::Value* v : node->outputs) {
    if (!v->shape_known || v->dtype == DType::kUndefined) return;
    int64_t bytes = 0, extent = 0;
    if (!CheckedByteSize(v->shape, v->dtype, &bytes, &extent) || extent > (int64_t{1} << 20))
      return;  // the compiler refuses it
    if (NumElements(v->shape) > 4096) return;
    elements += NumElements(v->shape);
  }
  if (elements > 4096) return;
  std::vector<Tensor> values;
  values.reserve(node->inputs.size());
  std::vector<const Tensor*> pointers;
  for (const ir::Value* v : node->inputs) {
    if (!v) {
      pointers.push_back(nullptr);
      continue;
    }
    values.push_back(v->constant.defined() ? v->constant
                                           : FuzzTensorValues(in, v->dtype, v->shape));
    pointers.push_back(&values.back());
  }
  (void)ops::EvaluateNode(*node, opset, pointers);
}

}  // namespace tessel::fuzz
