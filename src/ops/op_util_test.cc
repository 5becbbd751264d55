#include "ops/op_util.h"

#include <gtest/gtest.h>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

ir::Node MakeNode() {
  ir::Node n;
  n.op_type = "Add";
  n.name = "add_1";
  return n;
}

TEST(OpUtil, BroadcastShapes_follows_numpy) {
  const ir::Node n = MakeNode();
  EXPECT_EQ(*BroadcastShapes(n, {{2, 1, 4}, {3, 1}}), (Shape{2, 3, 4}));
  EXPECT_EQ(*BroadcastShapes(n, {{}, {5}}), (Shape{5}));
  EXPECT_EQ(*BroadcastShapes(n, {{0, 1}, {1, 3}}), (Shape{0, 3}));
  auto bad = BroadcastShapes(n, {{2, 3}, {4}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Add 'add_1': shapes 2x3, 4 do not broadcast");
}

TEST(OpUtil, BroadcastWalker_visits_broadcast_offsets) {
  const Shape out{2, 3};
  BroadcastWalker w(out, {BroadcastStrides({2, 1}, out), BroadcastStrides({3}, out)});
  std::vector<std::pair<int64_t, int64_t>> seen;
  for (int i = 0; i < 6; ++i, w.Next()) seen.emplace_back(w.offset(0), w.offset(1));
  EXPECT_EQ(seen, (std::vector<std::pair<int64_t, int64_t>>{
                      {0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
}

TEST(OpUtil, NormalizeAxis_rejects_out_of_range_naming_the_node) {
  const ir::Node n = MakeNode();
  EXPECT_EQ(*NormalizeAxis(n, -1, 4), 3);
  auto bad = NormalizeAxis(n, 4, 4);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Add 'add_1': axis 4 is out of range [-4, 3] for rank 4");
}

TEST(OpRegistry, InferNode_rejects_wrong_arity_and_unknown_ops) {
  ir::Graph g;
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2}, true);
  ir::Value* y = g.AddValue("y");
  ir::Node* relu = g.AddNode("Relu", "r", {x, x}, {y});
  Status s = InferNode(*relu, 13);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "Relu 'r': has 2 inputs; expected 1");
  ir::Node* frob = g.AddNode("Frobnicate", "f", {x}, {g.AddValue("z")});
  s = InferNode(*frob, 13);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(OpRegistry, Every_registered_op_has_a_kernel_and_shape_inference) {
  const auto all = OpRegistry::Global().All();
  EXPECT_GE(all.size(), 60u);
  for (const OpSchema* s : all) {
    EXPECT_NE(s->infer, nullptr) << s->op_type;
    EXPECT_NE(s->run, nullptr) << s->op_type;
    EXPECT_LE(s->min_inputs, s->max_inputs) << s->op_type;
  }
}

TEST(OpRegistry, Foundation_ops_are_all_registered) {
  for (const char* op : {"Conv",
                         "ConvTranspose",
                         "Gemm",
                         "MatMul",
                         "Add",
                         "Sub",
                         "Mul",
                         "Div",
                         "Pow",
                         "Sqrt",
                         "Exp",
                         "Log",
                         "Abs",
                         "Neg",
                         "Reciprocal",
                         "Relu",
                         "LeakyRelu",
                         "Elu",
                         "Clip",
                         "Sigmoid",
                         "HardSigmoid",
                         "HardSwish",
                         "Tanh",
                         "Erf",
                         "Softmax",
                         "LogSoftmax",
                         "LayerNormalization",
                         "BatchNormalization",
                         "InstanceNormalization",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "ReduceMean",
                         "ReduceSum",
                         "ReduceMax",
                         "ReduceMin",
                         "Concat",
                         "Split",
                         "Slice",
                         "Gather",
                         "Reshape",
                         "Flatten",
                         "Transpose",
                         "Squeeze",
                         "Unsqueeze",
                         "Expand",
                         "Shape",
                         "Constant",
                         "ConstantOfShape",
                         "Cast",
                         "Identity",
                         "Dropout",
                         "Where",
                         "Equal",
                         "Less",
                         "Greater",
                         "Not",
                         "Mod",
                         "Range",
                         "Tile",
                         "Pad",
                         "Resize",
                         "DepthToSpace"}) {
    EXPECT_NE(OpRegistry::Global().Find(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace tessel::ops
