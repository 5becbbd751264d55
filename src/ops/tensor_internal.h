// Helpers shared by the tensor op family (the tensor*.cc files). Not part of
// the ops API: other families use op_util.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "ops/op_util.h"

namespace tessel::ops::tensor_internal {

// InvalidArgument / Unsupported with the node named first: "Op 'name': msg".
Status NodeError(const ir::Node& node, const std::string& msg);
Status NodeUnsupported(const ir::Node& node, const std::string& msg);

// "[1,-2,3]".
std::string ListToString(const std::vector<int64_t>& v);

// The integer elements of constant input i (int32 or int64); Unsupported
// when the input is not known at compile time.
StatusOr<std::vector<int64_t>> ConstantInts(const ir::Node& node, size_t i, const char* what);

// Integers given by input `input` from opset `since` on and by attribute
// `attr` before it; nullopt when neither is present. The form that does not
// belong to `opset` is rejected, so a model cannot silently lose a value.
StatusOr<std::optional<std::vector<int64_t>>> IntsFromInputOrAttr(const ir::Node& node, int opset,
                                                                  size_t input, const char* attr,
                                                                  int since);

// The same choice in a kernel, where the input is the tensor the kernel got.
std::optional<std::vector<int64_t>> KernelIntsFromInputOrAttr(const KernelContext& ctx,
                                                              size_t input, const char* attr,
                                                              int since);

// Rejects a shape with a negative dimension or an element count that does not
// fit in int64 (sizes computed from constant data, e.g. Tile's repeats).
Status CheckShape(const ir::Node& node, const Shape& shape, const char* what);

inline const uint8_t* Bytes(const Tensor& t) { return static_cast<const uint8_t*>(t.raw_data()); }
inline uint8_t* Bytes(Tensor& t) { return static_cast<uint8_t*>(t.raw_data()); }
inline size_t ElemSize(const Tensor& t) { return DTypeSize(t.dtype()); }

// out's elements, in row-major order of `walk`, are in[base + offset] where
// offset advances by strides[d] along walk dimension d. NumElements(walk)
// must equal out.num_elements(). Covers transposes, broadcasts, slices and
// tiles as byte copies of any dtype.
void CopyStrided(const Tensor& in, int64_t base, const Shape& walk,
                 const std::vector<int64_t>& strides, Tensor& out);

// Advances a row-major multi-index over `shape`.
void NextIndex(std::vector<int64_t>& index, const Shape& shape);

// Element i of `t` set to `v` converted to t's dtype (static_cast semantics).
void StoreDouble(Tensor& t, int64_t i, double v);

// Fills every element of `out` with the `size`-byte element at `value`.
void FillBytes(Tensor& out, const void* value, size_t size);

// Product of shape[begin, end).
int64_t DimProduct(const Shape& shape, size_t begin, size_t end);

// Registration of the ops in the other tensor_*.cc files.
void RegisterTensorGenerateOps(OpRegistry& r);  // tensor_generate.cc
void RegisterTensorIndexOps(OpRegistry& r);     // tensor_index.cc
void RegisterTensorSpatialOps(OpRegistry& r);   // tensor_spatial.cc

}  // namespace tessel::ops::tensor_internal
