// Compress and Unique on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::ElementsAre;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

Tensor Bools(std::vector<bool> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<bool>(v, {n});
}
AttributeMap Axis(int64_t axis) { return Attrs({{"axis", axis}}); }

// ---- Compress ---------------------------------------------------------------

Tensor Rows() { return F32({1, 2, 3, 4, 5, 6}, {3, 2}); }

TEST(Compress, Selects_slices_along_an_axis) {
  Tensor y = Run1("Compress", Axis(0), {Rows(), Bools({false, true, true})});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_THAT(Doubles(y), ElementsAre(3, 4, 5, 6));
  // A condition shorter than the axis drops the slices past its end.
  for (int64_t axis : {1, -1}) {
    y = Run1("Compress", Axis(axis), {Rows(), Bools({true})});
    EXPECT_EQ(y.shape(), (Shape{3, 1}));
    EXPECT_THAT(Doubles(y), ElementsAre(1, 3, 5));
  }
}

TEST(Compress, Without_axis_selects_flattened_elements) {
  Tensor y = Run1("Compress", {}, {Rows(), Bools({false, true, false, false, true})});
  EXPECT_EQ(y.shape(), (Shape{2}));
  EXPECT_THAT(Doubles(y), ElementsAre(2, 5));
  Tensor none = Run1("Compress", Axis(0), {Rows(), Bools({false, false, false})});
  EXPECT_EQ(none.shape(), (Shape{0, 2}));
}

TEST(Compress, Compress_rejects_long_or_unknown_conditions) {
  Status s = RunError("Compress", Axis(1), {Rows(), Bools({true, true, true})});
  EXPECT_EQ(s.message(),
            "Compress 'node': condition has 3 values, more than the 2 slices along axis 1 of "
            "input shape 3x2");
  ir::Graph g;
  ir::Value* x = g.AddConstant("x", Rows());
  ir::Value* c = g.AddValue("c", DType::kBool, {3}, true);
  ir::Node* node = g.AddNode("Compress", "cmp", {x, c}, {g.AddValue("y")});
  s = InferNode(*node, 17);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "Compress 'cmp': input condition ('c') must be known at compile time; tessel compiles "
            "static shapes");
}

// ---- Unique -----------------------------------------------------------------

std::vector<Tensor> Unique(const AttributeMap& attrs, const Tensor& x) {
  return RunAll("Unique", attrs, {x}, 4);
}

TEST(Unique, Sorted_and_in_order_of_first_occurrence) {
  Tensor x = F32({2, 1, 1, 3, 4, 3}, {6});
  std::vector<Tensor> out = Unique(Attrs({{"sorted", int64_t{0}}}), x);
  EXPECT_THAT(Doubles(out[0]), ElementsAre(2, 1, 3, 4));
  EXPECT_THAT(Ints(out[1]), ElementsAre(0, 1, 3, 4));
  EXPECT_THAT(Ints(out[2]), ElementsAre(0, 1, 1, 2, 3, 2));
  EXPECT_THAT(Ints(out[3]), ElementsAre(1, 2, 2, 1));
  out = Unique({}, x);
  EXPECT_THAT(Doubles(out[0]), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Ints(out[1]), ElementsAre(1, 0, 3, 4));
  EXPECT_THAT(Ints(out[2]), ElementsAre(1, 0, 0, 2, 3, 2));
  EXPECT_THAT(Ints(out[3]), ElementsAre(2, 1, 2, 1));
}

TEST(Unique, Slices_along_an_axis_compare_lexicographically) {
  Tensor rows = F32({1, 0, 0, 1, 0, 0, 2, 3, 4}, {3, 3});
  std::vector<Tensor> out = Unique(Axis(0), rows);
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_THAT(Doubles(out[0]), ElementsAre(1, 0, 0, 2, 3, 4));
  EXPECT_THAT(Ints(out[1]), ElementsAre(0, 2));
  EXPECT_THAT(Ints(out[2]), ElementsAre(0, 0, 1));
  EXPECT_THAT(Ints(out[3]), ElementsAre(2, 1));
  // Columns (1, 2) and (0, 0): the second sorts first.
  out = Unique(Axis(-1), F32({1, 0, 2, 0}, {2, 2}));
  EXPECT_THAT(Doubles(out[0]), ElementsAre(0, 1, 0, 2));
  EXPECT_THAT(Ints(out[1]), ElementsAre(1, 0));
}

TEST(Unique, NaNs_are_equal_and_last_and_int64_stays_exact) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Tensor> out = Unique({}, F32({nan, 1, nan}, {3}));
  ASSERT_EQ(out[0].num_elements(), 2);
  EXPECT_EQ(out[0].GetAsDouble(0), 1);
  EXPECT_TRUE(std::isnan(out[0].GetAsDouble(1)));
  EXPECT_THAT(Ints(out[3]), ElementsAre(1, 2));
  // 2^53 + 1 and 2^53 are one double apart only as int64.
  const int64_t big = int64_t{1} << 53;
  out = Unique({}, I64({big + 1, big}, {2}));
  EXPECT_THAT(Ints(out[0]), ElementsAre(big, big + 1));
}

TEST(Unique, Unique_rejects_axis_out_of_range) {
  Status s = RunError("Unique", Axis(2), {F32({1, 2}, {2})});
  EXPECT_EQ(s.message(), "Unique 'node': axis 2 is out of range [-1, 0] for rank 1");
  // Only the values requested.
  Tensor y = Run1("Unique", {}, {I32({3, 3, 1}, {3})});
  EXPECT_THAT(Ints(y), ElementsAre(1, 3));
}

}  // namespace
}  // namespace tessel::ops
