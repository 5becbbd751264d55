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

}  // namespace
}  // namespace tessel::passes
