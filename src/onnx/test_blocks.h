// Transformer blocks as PyTorch's exporters write them out, for the tests
// that check each target fuses and runs them:
//
//   onnx_io::ModelBuilder b(17);
//   onnx_io::test_blocks::LlamaAttention(b, /*S=*/7, /*D=*/8, /*Hq=*/4, /*Hkv=*/2);
//   b.Output("y");
#pragma once

#include <string>
#include <vector>

#include "onnx/model_builder.h"

namespace tessel::onnx_io::test_blocks {

// Llama's attention: inputs q [1, S, Hq * D], k and v [1, S, Hkv * D], cos
// and sin [S, D], mask [1, 1, S, S]; heads split by Reshape + Transpose,
// rotate_half on q and k (Slice, Neg, Concat, Mul, Add), k and v repeated
// by Unsqueeze, Expand and Reshape, then torch's scaled_dot_product_attention
// (q and k^T scaled, MatMul, + mask, Softmax, NaN -> 0, MatMul) into "y"
// [1, Hq, S, D].
inline void LlamaAttention(ModelBuilder& b, int64_t S, int64_t D, int64_t Hq, int64_t Hkv) {
  auto ints = [&](const std::string& name, const std::vector<int64_t>& v) {
    b.Initializer(name, Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}));
  };
  ints("half", {D / 2});
  ints("zero", {0});
  ints("end", {D});
  ints("last", {-1});
  ints("axis2", {2});
  ints("expand", {1, Hkv, Hq / Hkv, S, D});
  ints("heads", {1, Hq, S, D});
  b.Initializer("root", Tensor::FromVector<float>({0.5946f}, {}));
  b.Initializer("zero_f", Tensor::FromVector<float>({0.f}, {}));
  b.Input("cos", DType::kFloat32, {S, D});
  b.Input("sin", DType::kFloat32, {S, D});
  b.Input("mask", DType::kFloat32, {1, 1, S, S});
  for (const std::string x : {"q", "k", "v"}) {
    const int64_t h = x == "q" ? Hq : Hkv;
    b.Input(x, DType::kFloat32, {1, S, h * D});
    ints(x + ".split", {1, S, h, D});
    b.Node("Reshape", {x, x + ".split"}, {x + ".h"});
    ModelBuilder::SetAttr(b.Node("Transpose", {x + ".h"}, {x + ".t"}), "perm",
                          std::vector<int64_t>{0, 2, 1, 3});
  }
  for (const std::string x : {"q", "k"}) {
    b.Node("Slice", {x + ".t", "half", "end", "last"}, {x + ".x2"});
    b.Node("Slice", {x + ".t", "zero", "half", "last"}, {x + ".x1"});
    b.Node("Neg", {x + ".x2"}, {x + ".n"});
    ModelBuilder::SetAttr(b.Node("Concat", {x + ".n", x + ".x1"}, {x + ".rot"}), "axis",
                          int64_t{-1});
    b.Node("Mul", {x + ".t", "cos"}, {x + ".c"});
    b.Node("Mul", {x + ".rot", "sin"}, {x + ".s"});
    b.Node("Add", {x + ".c", x + ".s"}, {x + ".e"});
  }
  for (const std::string x : {"k.e", "v.t"}) {
    b.Node("Unsqueeze", {x, "axis2"}, {x + ".u"});
    b.Node("Expand", {x + ".u", "expand"}, {x + ".x"});
    b.Node("Reshape", {x + ".x", "heads"}, {x + ".r"});
  }
  ModelBuilder::SetAttr(b.Node("Transpose", {"k.e.r"}, {"kt"}), "perm",
                        std::vector<int64_t>{0, 1, 3, 2});
  b.Node("Mul", {"q.e", "root"}, {"qs"});
  b.Node("Mul", {"kt", "root"}, {"ks"});
  b.Node("MatMul", {"qs", "ks"}, {"scores"});
  b.Node("Add", {"scores", "mask"}, {"masked"});
  b.Node("Softmax", {"masked"}, {"p"});
  b.Node("IsNaN", {"p"}, {"nan"});
  b.Node("Where", {"nan", "zero_f", "p"}, {"p0"});
  b.Node("MatMul", {"p0", "v.t.r"}, {"y"});
}

}  // namespace tessel::onnx_io::test_blocks
