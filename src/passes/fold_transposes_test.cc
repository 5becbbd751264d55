#include "passes/fold_transposes.h"

#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "ops/op_test_util.h"
#include "passes/infer_shapes.h"

namespace tessel::passes {
namespace {

using ops::test_util::EvaluateGraph;
using ops::test_util::ExpectAllNear;
using ops::test_util::RandomFloats;

// x -> Transpose(p1) -> [Reshape to `mid`] -> Transpose(p2) -> z -> Relu -> y.
struct Chain {
  ir::Graph g;
  Chain(const Shape& x_shape, const std::vector<int64_t>& p1, const Shape& mid,
        const std::vector<int64_t>& p2) {
    g.set_opset_version(17);
    ir::Value* x = g.AddValue("x", DType::kFloat32, x_shape, true);
    g.inputs() = {x};
    ir::Value* t = g.AddValue("t");
    g.AddNode("Transpose", "first", {x}, {t})->attrs.Set("perm", p1);
    ir::Value* v = t;
    if (!mid.empty()) {
      v = g.AddValue("v");
      g.AddNode("Reshape", "view",
                {t, g.AddConstant("mid", Tensor::FromVector<int64_t>(
                                             std::vector<int64_t>(mid.begin(), mid.end()),
                                             {static_cast<int64_t>(mid.size())}))},
                {v});
    }
    ir::Value* z = g.AddValue("z");
    g.AddNode("Transpose", "second", {v}, {z})->attrs.Set("perm", p2);
    // Read by a node after it, as in a model (the fold's nodes must come
    // before it).
    ir::Value* y = g.AddValue("y");
    g.AddNode("Relu", "after", {z}, {y});
    g.outputs() = {y};
    EXPECT_TRUE(InferShapes(g).ok());
  }
  int Transposes() const {
    int n = 0;
    for (const auto& node : g.nodes()) n += node->op_type == "Transpose";
    return n;
  }
};

TEST(FoldTransposes, Chains_through_a_view_become_one_transpose) {
  struct Case {
    Shape x;
    std::vector<int64_t> p1;
    Shape mid;
    std::vector<int64_t> p2;
  };
  const Case cases[] = {
      // MobileViT's unfold: [C*H/2, 2, W/2, 2] -> patches, then channels last.
      {{48, 2, 5, 2}, {0, 2, 1, 3}, {1, 12, 20, 4}, {0, 3, 2, 1}},
      // MobileViT's fold back: patches -> channels first -> image.
      {{1, 4, 256, 64}, {0, 3, 2, 1}, {1024, 16, 2, 2}, {0, 2, 1, 3}},
      // Two permutations with no view between.
      {{2, 3, 4, 5}, {0, 2, 3, 1}, {}, {0, 3, 1, 2}},
      // A view that merges axes the first one moved, and size-1 axes.
      {{3, 1, 4, 6}, {2, 0, 1, 3}, {4, 18}, {1, 0}},
  };
  for (const Case& c : cases) {
    Chain chain(c.x, c.p1, c.mid, c.p2);
    const std::vector<Tensor> inputs = {RandomFloats(c.x, 5)};
    const std::vector<Tensor> before = EvaluateGraph(chain.g, inputs);
    EXPECT_EQ(FoldTransposes(chain.g), 1);
    EXPECT_LE(chain.Transposes(), 1);
    const Status ok = ir::VerifyGraph(chain.g, true);
    EXPECT_TRUE(ok.ok()) << ok.message();
    ExpectAllNear(before, EvaluateGraph(chain.g, inputs), 0.0f);
  }
}

TEST(FoldTransposes, A_view_that_mixes_axes_unevenly_stays) {
  // [2, 6] transposed to [6, 2], viewed as [4, 3]: 6 is no product of
  // whole factors of 4 and 3 in order, so no single permutation does it.
  Chain chain({2, 6}, {1, 0}, {4, 3}, {1, 0});
  EXPECT_EQ(FoldTransposes(chain.g), 0);
  EXPECT_EQ(chain.Transposes(), 2);
}

}  // namespace
}  // namespace tessel::passes
