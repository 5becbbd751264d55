// The target-independent lowering passes one by one: domain normalization,
// memory ops with broadcast loads, the scalar tile, register allocation.
#include <gtest/gtest.h>

#include <sstream>

#include "snippets/assign_registers.h"
#include "snippets/canonicalize.h"
#include "snippets/insert_memory_ops.h"
#include "snippets/lower.h"
#include "snippets/normalize_domain.h"
#include "snippets/test_util.h"

namespace tessel::snippets {
namespace {

using testing::BodyBuilder;

KernelIR Lowered(BodyBuilder& b) {
  auto ir = LowerSubgraph(b.graph());
  EXPECT_TRUE(ir.ok()) << ir.status().message();
  return ir.ok() ? std::move(*ir) : KernelIR{};
}

std::array<int64_t, kDomainRank> D(std::initializer_list<int64_t> tail) {
  std::array<int64_t, kDomainRank> d;
  d.fill(1);
  std::copy(tail.begin(), tail.end(), d.end() - static_cast<std::ptrdiff_t>(tail.size()));
  return d;
}

TEST(NormalizeDomain, Merges_dimensions_every_argument_walks_alike) {
  {  // A bias along the rows: rows stay a dimension, the bias has stride 0 on them.
    BodyBuilder b;
    b.Output(b.Op("Add", {b.Input("x", {1, 128, 1024}), b.Input("bias", {1024})}));
    const KernelIR ir = Lowered(b);
    EXPECT_EQ(ir.domain, D({128, 1024}));
    EXPECT_EQ(ir.args[1].strides, (std::array<int64_t, 6>{0, 0, 0, 0, 0, 1}));
  }
  {  // Same shapes collapse to one row.
    BodyBuilder b;
    b.Output(b.Op("Relu", {b.Input("x", {1, 32, 112, 112})}));
    EXPECT_EQ(Lowered(b).domain, D({401408}));
  }
  {  // Per channel: the scale is broadcast along the row, a BroadcastLoad.
    BodyBuilder b;
    b.Output(b.Op("Mul", {b.Input("x", {1, 32, 56, 56}), b.Input("s", {1, 32, 1, 1})}));
    const KernelIR ir = Lowered(b);
    EXPECT_EQ(ir.domain, D({32, 3136}));
    EXPECT_EQ(ir.args[1].strides, (std::array<int64_t, 6>{0, 0, 0, 0, 1, 0}));
    EXPECT_EQ(ir.body[1].op, KOp::kBroadcastLoad);
    EXPECT_EQ(ir.scalar_body[0].op, KOp::kScalarLoad);
    EXPECT_EQ(ir.scalar_body[1].op, KOp::kScalarLoad);
    EXPECT_EQ(ir.scalar_body.back().op, KOp::kScalarStore);
  }
  {  // An outer product keeps both dimensions.
    BodyBuilder b;
    b.Output(b.Op("Sub", {b.Input("a", {4, 1}), b.Input("b", {1, 19})}));
    const KernelIR ir = Lowered(b);
    EXPECT_EQ(ir.domain, D({4, 19}));
    EXPECT_TRUE(ir.args[0].broadcast_inner());
    EXPECT_FALSE(ir.args[1].broadcast_inner());
  }
}

TEST(LowerSubgraph, Channels_last_and_blocked_arguments_are_rewritten_to_where_they_lie) {
  BodyBuilder b;
  // x * s + m: x of the full shape, s per channel, m one channel per pixel.
  b.Output(b.Op("Add", {b.Op("Mul", {b.Input("x", {1, 32, 5, 7}), b.Input("s", {32, 1, 1})}),
                        b.Input("m", {1, 1, 5, 7})}));
  auto nhwc = LowerSubgraph(b.graph(), ArgLayout::kChannelsLast);
  ASSERT_TRUE(nhwc.ok()) << nhwc.status().message();
  EXPECT_EQ(nhwc->args[0].shape, (Shape{1, 5, 7, 32}));
  EXPECT_EQ(nhwc->args[1].shape, (Shape{1, 1, 1, 32}));
  EXPECT_EQ(nhwc->args[2].shape, (Shape{1, 5, 7, 1}));
  EXPECT_EQ(nhwc->args[3].shape, (Shape{1, 5, 7, 32}));  // the output
  auto blocked = LowerSubgraph(b.graph(), ArgLayout::kBlocked16);
  ASSERT_TRUE(blocked.ok()) << blocked.status().message();
  EXPECT_EQ(blocked->args[0].shape, (Shape{1, 2, 5, 7, 16}));
  EXPECT_EQ(blocked->args[1].shape, (Shape{1, 2, 1, 1, 16}));
  EXPECT_EQ(blocked->args[2].shape, (Shape{1, 1, 5, 7, 1}));
  // What reads the same bytes as plain: one pixel per channel, one channel.
  EXPECT_TRUE(SameAsPlain({32, 1, 1}, 4, ArgLayout::kChannelsLast));
  EXPECT_TRUE(SameAsPlain({1, 1, 5, 7}, 4, ArgLayout::kChannelsLast));
  EXPECT_FALSE(SameAsPlain({1, 32, 5, 7}, 4, ArgLayout::kChannelsLast));
  EXPECT_TRUE(SameAsPlain({1, 32, 1, 1}, 4, ArgLayout::kBlocked16));
  EXPECT_FALSE(SameAsPlain({1, 24, 1, 1}, 4, ArgLayout::kBlocked16));  // padded to 32
}

TEST(LowerSubgraph, Blocks_of_16_need_channels_by_16) {
  BodyBuilder b;
  b.Output(b.Op("Relu", {b.Input("x", {1, 24, 5, 7})}));
  EXPECT_FALSE(LowerSubgraph(b.graph(), ArgLayout::kBlocked16).ok());
  EXPECT_TRUE(LowerSubgraph(b.graph(), ArgLayout::kChannelsLast).ok());
}

TEST(NormalizeDomain, Rejects_outputs_that_do_not_span_the_domain) {
  auto ir = [] {
    BodyBuilder b;
    ir::Value* x = b.Input("x", {2, 3});
    b.Output(b.Op("Add", {x, b.Input("y", {3})}));
    b.Output(b.Op("Neg", {b.graph().inputs()[1]}));
    return Canonicalize(b.graph());
  }();
  ASSERT_TRUE(ir.ok());
  Status s = NormalizeDomain(*ir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output 'Neg_out' has shape 3"), std::string::npos) << s.message();
}

TEST(Canonicalize, Scalars_become_immediates_and_Pow_becomes_PowerStatic) {
  BodyBuilder b;
  ir::Value* x = b.Input("x", {8});
  b.Output(b.Op("Mul", {b.Op("Pow", {x, b.Scalar(3.0f)}), b.Scalar(0.5f)}));
  const KernelIR ir = Lowered(b);
  std::ostringstream os;
  PrintInstrs(ir.body, os, "");
  EXPECT_EQ(os.str(),
            "v0 = Load arg0\n"
            "v1 = PowerStatic v0 [3]\n"
            "v2 = Scalar [0.5]\n"
            "v3 = Mul v1 v2\n"
            "Store arg1 <- v3\n");
  EXPECT_EQ(ir.args.size(), 2u);  // the scalars are not arguments
}

TEST(AssignRegisters, Reuses_registers_of_dead_values_and_names_the_limit) {
  BodyBuilder b;
  ir::Value* v = b.Input("x", {16});
  for (int i = 0; i < 6; ++i) v = b.Op("Relu", {b.Op("Abs", {v})});
  b.Output(v);
  const KernelIR ir = Lowered(b);
  auto ra = AssignRegisters(ir, ir.body, 16);
  ASSERT_TRUE(ra.ok());
  // A chain needs its value, a bound (ClampLow's aux) and a result at most.
  EXPECT_LE(ra->num_used, 3);

  // Seventeen values live at once cannot fit sixteen registers.
  BodyBuilder wide;
  ir::Value* x = wide.Input("x", {16});
  std::vector<ir::Value*> vs;
  for (int i = 0; i < 17; ++i) vs.push_back(wide.Op("Mul", {x, wide.Scalar(1.0f + i)}));
  wide.Output(wide.Op("Max", vs));
  const KernelIR w = Lowered(wide);
  auto r = AssignRegisters(w, w.body, 16);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("needs more than 16 vector registers"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(AssignRegisters(w, w.body, 32).ok());
}

}  // namespace
}  // namespace tessel::snippets
