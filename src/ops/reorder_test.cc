// ReverseSequence and MaxUnpool on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::ElementsAre;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

// ---- ReverseSequence --------------------------------------------------------

TEST(ReverseSequence, Time_major_reverses_each_prefix) {
  // Time x batch: entry 0 has 3 steps (0, 2, 4), entry 1 only 1.
  Tensor x = F32({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor y = Run1("ReverseSequence", {}, {x, I64({3, 1}, {2})});
  EXPECT_THAT(Doubles(y), ElementsAre(4, 1, 2, 3, 0, 5));
}

TEST(ReverseSequence, Batch_major) {
  Tensor x = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor y = Run1("ReverseSequence", Attrs({{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}}),
                  {x, I64({2, 3}, {2})});
  EXPECT_THAT(Doubles(y), ElementsAre(2, 1, 3, 6, 5, 4));
}

TEST(ReverseSequence, ReverseSequence_rejects_bad_axes_and_lengths) {
  Tensor x = F32({1, 2, 3, 4}, {2, 2});
  Status s =
      RunError("ReverseSequence", Attrs({{"batch_axis", int64_t{0}}}), {x, I64({1, 1}, {2})});
  EXPECT_EQ(s.message(),
            "ReverseSequence 'node': batch_axis 0 and time_axis 0 must be 0 and 1 in some order, "
            "for input shape 2x2 of rank >= 2");
  s = RunError("ReverseSequence", {}, {x, I64({1, 3}, {2})});
  EXPECT_EQ(s.message(),
            "ReverseSequence 'node': sequence length 3 of batch entry 1 is out of range [0, 2]");
  s = RunError("ReverseSequence", {}, {x, I64({1}, {1})});
  EXPECT_EQ(s.message(),
            "ReverseSequence 'node': sequence_lens 'in1' has shape 1; expected 2 (one per batch "
            "entry)");
}

// ---- MaxUnpool --------------------------------------------------------------

AttributeMap Pool2x2() {
  return Attrs(
      {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
}
Tensor Maxima() { return F32({5, 6, 7, 8}, {1, 1, 2, 2}); }
Tensor Indices() { return I64({5, 7, 13, 15}, {1, 1, 2, 2}); }

TEST(MaxUnpool, Scatters_to_the_pooled_positions) {
  Tensor y = Run1("MaxUnpool", Pool2x2(), {Maxima(), Indices()});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_THAT(Doubles(y), ElementsAre(0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 7, 0, 8));
}

TEST(MaxUnpool, A_larger_output_shape_pads_at_the_end) {
  Tensor y = Run1("MaxUnpool", Pool2x2(), {Maxima(), Indices(), I64({1, 1, 5, 5}, {4})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 5, 5}));
  EXPECT_THAT(Doubles(y), ElementsAre(0, 0, 0, 0, 0, 0, 5, 0, 6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 8, 0, 0,
                                      0, 0, 0, 0));
}

TEST(MaxUnpool, MaxUnpool_rejects_bad_indices_and_small_output_shape) {
  Status s = RunError("MaxUnpool", Pool2x2(), {Maxima(), I64({5, 7, 13, 16}, {1, 1, 2, 2})});
  EXPECT_EQ(s.message(),
            "MaxUnpool 'node': index 16 at element 3 is out of range [0, 16) for the unpooled "
            "shape 1x1x4x4");
  s = RunError("MaxUnpool", Pool2x2(), {Maxima(), Indices(), I64({1, 1, 3, 4}, {4})});
  EXPECT_EQ(s.message(),
            "MaxUnpool 'node': output_shape 1x1x3x4 cannot hold the unpooled shape 1x1x4x4");
}

}  // namespace
}  // namespace tessel::ops
