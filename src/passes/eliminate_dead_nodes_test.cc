#include "passes/eliminate_dead_nodes.h"

#include <gtest/gtest.h>

#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

// x -> Cast(float) -> Cast(float) -> Relu -> y, and a Cast(float) of x that
// is itself a graph output.
TEST(EliminateDeadNodes, Casts_to_their_own_dtype_go_unless_they_are_outputs) {
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {2, 3}, true);
  g.inputs() = {x};
  auto cast = [&](ir::Value* in, const std::string& name) {
    ir::Value* out = g.AddValue(name);
    g.AddNode("Cast", name, {in}, {out})->attrs.Set("to", int64_t{1});
    return out;
  };
  ir::Value* twice = cast(cast(x, "c1"), "c2");
  ir::Value* y = g.AddValue("y");
  g.AddNode("Relu", "relu", {twice}, {y});
  ir::Value* kept = cast(x, "c3");
  g.outputs() = {y, kept};
  ASSERT_TRUE(InferShapes(g).ok());
  EliminateDeadNodes(g);
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0]->op_type, "Relu");
  EXPECT_EQ(g.nodes()[0]->inputs[0], x);
  EXPECT_EQ(g.nodes()[1]->name, "c3");
}

TEST(EliminateDeadNodes, A_cast_that_changes_the_dtype_stays) {
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {4}, true);
  g.inputs() = {x};
  ir::Value* y = g.AddValue("y");
  g.AddNode("Cast", "c", {x}, {y})->attrs.Set("to", int64_t{7});
  g.outputs() = {y};
  ASSERT_TRUE(InferShapes(g).ok());
  EliminateDeadNodes(g);
  EXPECT_EQ(g.nodes().size(), 1u);
}

// x [1, 16, 5, 5] -> Slice of every channel -> Identity -> Transpose keeping
// the axes -> Expand to its shape -> Relu: only the Relu stays, reading x;
// a Slice that drops a channel, one that reverses, and a real Transpose stay.
TEST(EliminateDeadNodes, Nodes_that_return_their_input_go) {
  ir::Graph g;
  g.set_opset_version(17);
  ir::Value* x = g.AddValue("x", DType::kFloat32, {1, 16, 5, 5}, true);
  g.inputs() = {x};
  auto ints = [&](const std::string& name, std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return g.AddConstant(name, Tensor::FromVector<int64_t>(v, {n}));
  };
  auto slice = [&](ir::Value* in, const std::string& name, int64_t end, int64_t step) {
    ir::Value* out = g.AddValue(name);
    g.AddNode("Slice", name,
              {in, ints(name + "_s", {step > 0 ? 0 : -1}), ints(name + "_e", {end}),
               ints(name + "_a", {1}), ints(name + "_p", {step})},
              {out});
    return out;
  };
  ir::Value* all = slice(x, "all", 16, 1);
  ir::Value* same = g.AddValue("same");
  g.AddNode("Identity", "id", {all}, {same});
  ir::Value* kept = g.AddValue("kept");
  g.AddNode("Transpose", "t", {same}, {kept})->attrs.Set("perm", std::vector<int64_t>{0, 1, 2, 3});
  ir::Value* wide = g.AddValue("wide");
  g.AddNode("Expand", "e", {kept, ints("shape", {1, 16, 5, 5})}, {wide});
  ir::Value* y = g.AddValue("y");
  g.AddNode("Relu", "relu", {wide}, {y});
  ir::Value* fewer = slice(x, "fewer", 15, 1);
  ir::Value* reversed = slice(x, "reversed", -100, -1);
  ir::Value* swapped = g.AddValue("swapped");
  g.AddNode("Transpose", "swap", {x}, {swapped})
      ->attrs.Set("perm", std::vector<int64_t>{0, 1, 3, 2});
  g.outputs() = {y, fewer, reversed, swapped};
  ASSERT_TRUE(InferShapes(g).ok());
  EliminateDeadNodes(g);
  std::vector<std::string> names;
  for (const auto& n : g.nodes()) names.push_back(n->name);
  EXPECT_EQ(names, (std::vector<std::string>{"relu", "fewer", "reversed", "swap"}));
  EXPECT_EQ(g.nodes()[0]->inputs[0], x);
}

}  // namespace
}  // namespace tessel::passes
