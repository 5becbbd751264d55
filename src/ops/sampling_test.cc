// GridSample on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Pointwise;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

Tensor Square() { return F32({1, 2, 3, 4}, {1, 1, 2, 2}); }
// A 1 x n x 1 x 2 grid of (x, y) points.
Tensor Grid(std::vector<float> xy) {
  const int64_t n = static_cast<int64_t>(xy.size()) / 2;
  return F32(std::move(xy), {1, n, 1, 2});
}

AttributeMap Mode(const char* mode, const char* padding, int64_t align_corners) {
  return Attrs({{"mode", std::string(mode)},
                {"padding_mode", std::string(padding)},
                {"align_corners", align_corners}});
}

TEST(GridSample, Bilinear_with_aligned_corners) {
  Tensor y = Run1("GridSample", Mode("bilinear", "zeros", 1),
                  {Square(), Grid({-1, -1, 1, 1, 0, 0, 1, -1})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 1}));
  EXPECT_THAT(Doubles(y), ElementsAre(1, 4, 2.5, 2));
}

TEST(GridSample, Corner_pixel_centres_and_padding_modes) {
  // Without aligned corners -1 is the outer edge of pixel 0, (-0.5, -0.5):
  // a quarter of pixel (0, 0), the rest padding.
  const Tensor grid = Grid({-1, -1, 0, 0});
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bilinear", "zeros", 0), {Square(), grid})),
              ElementsAre(0.25, 2.5));
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bilinear", "border", 0), {Square(), grid})),
              ElementsAre(1, 2.5));
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bilinear", "reflection", 0), {Square(), grid})),
              ElementsAre(1, 2.5));
}

TEST(GridSample, Out_of_range_positions_per_padding_mode) {
  // x = 3 maps to column 2 of a 2-wide image; y = 0 sits between the rows.
  const Tensor grid = Grid({3, 0});
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bilinear", "zeros", 1), {Square(), grid})),
              ElementsAre(0));
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bilinear", "border", 1), {Square(), grid})),
              ElementsAre(3));
  // Column 2 mirrors at column 1 back onto column 0.
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bilinear", "reflection", 1), {Square(), grid})),
              ElementsAre(2));
}

TEST(GridSample, Nearest_rounds_half_to_even) {
  // (0.2, -0.2) is (0.6, 0.4) -> pixel (0, 1); (0, 0) is (0.5, 0.5) -> (0, 0).
  Tensor y = Run1("GridSample", Mode("nearest", "zeros", 1), {Square(), Grid({0.2f, -0.2f, 0, 0})});
  EXPECT_THAT(Doubles(y), ElementsAre(2, 1));
}

TEST(GridSample, Bicubic_weighs_four_taps_per_axis) {
  // Column 1.5 of [0, 0, 16, 0]: weights -3/32, 19/32, 19/32, -3/32.
  Tensor row = F32({0, 0, 16, 0}, {1, 1, 1, 4});
  Tensor y = Run1("GridSample", Mode("bicubic", "zeros", 1), {row, Grid({0, 0, -1, 0})});
  EXPECT_THAT(Doubles(y), Pointwise(DoubleNear(1e-6), std::vector<double>{9.5, 0}));
  EXPECT_THAT(Doubles(Run1("GridSample", Mode("bicubic", "border", 1), {Square(), Grid({1, 1})})),
              Pointwise(DoubleNear(1e-9), std::vector<double>{4}));
}

TEST(GridSample, Non_finite_grid_points_read_nothing) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  Tensor y = Run1("GridSample", Mode("bilinear", "border", 0), {Square(), Grid({nan, 0, inf, 0})});
  EXPECT_THAT(Doubles(y), ElementsAre(0, 0));
}

TEST(GridSample, GridSample_rejects_bad_shapes_and_modes) {
  Status s = RunError("GridSample", {}, {Square(), F32({0, 0, 0}, {1, 1, 1, 3})});
  EXPECT_EQ(s.message(),
            "GridSample 'node': X shape 1x1x2x2 and grid shape 1x1x1x3 must be N x C x H x W and "
            "N x H_out x W_out x 2");
  s = RunError("GridSample", Mode("bilinear", "wrap", 0), {Square(), Grid({0, 0})});
  EXPECT_EQ(s.message(),
            "GridSample 'node': padding_mode 'wrap' is not one of zeros, border, reflection");
  s = RunError("GridSample", Mode("area", "zeros", 0), {Square(), Grid({0, 0})});
  EXPECT_EQ(s.message(), "GridSample 'node': mode 'area' is not one of nearest, bilinear, bicubic");
}

}  // namespace
}  // namespace tessel::ops
