// Resize's cubic mode, tf_crop_and_resize and the unrounded resized length
// of its coordinate transforms, on small hand-computed cases. The rest of the
// spatial ops are covered in tensor_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

AttributeMap Cubic(const char* coord, float a = -0.75f, int64_t exclude_outside = 0) {
  return Attrs({{"mode", std::string("cubic")},
                {"coordinate_transformation_mode", std::string(coord)},
                {"cubic_coeff_a", a},
                {"exclude_outside", exclude_outside}});
}

// Keys' kernel with a = -0.75 at distances 0.5 and 1.5 weighs the four taps
// around a half-way source coordinate -3/32, 19/32, 19/32, -3/32.
constexpr double kNear = 19.0 / 32, kFar = -3.0 / 32;

TEST(ResizeCubic, Asymmetric_upsample_clamps_taps_at_the_edges) {
  Tensor out =
      Run1("Resize", Cubic("asymmetric"), {F32({0, 1, 2, 3}, {4}), Tensor(), Vec<float>({2})});
  ASSERT_EQ(out.shape(), (Shape{8}));
  // Source 0.5 reads indices -1, 0, 1, 2 with -1 clamped to 0; 1.5 sits
  // inside, where the kernel reproduces a line; 2.5 and 3.5 clamp 4 and 5
  // to 3.
  const double at_half = kNear * 1 + kFar * 2;
  const double at_2_5 = kFar * 1 + kNear * 2 + kNear * 3 + kFar * 3;
  const double at_3_5 = kFar * 2 + kNear * 3 + kNear * 3 + kFar * 3;
  EXPECT_THAT(Doubles(out), Pointwise(DoubleNear(1e-6), std::vector<double>{0, at_half, 1, 1.5, 2,
                                                                            at_2_5, 3, at_3_5}));
}

TEST(ResizeCubic, Exclude_outside_renormalizes_the_weights_inside) {
  Tensor out = Run1("Resize", Cubic("asymmetric", -0.75f, 1),
                    {F32({0, 1, 2, 3}, {4}), Tensor(), Vec<float>({2})});
  // At 0.5 tap -1 drops out: (19/32 * 1 - 3/32 * 2) / (35/32) = 13/35.
  EXPECT_NEAR(out.GetAsDouble(1), 13.0 / 35, 1e-6);
  EXPECT_NEAR(out.GetAsDouble(3), 1.5, 1e-6);
}

TEST(ResizeCubic, Coefficient_a_changes_the_kernel) {
  // a = -0.5 weighs the taps at 0.5 and 1.5 by 9/16 and -1/16.
  Tensor x = F32({0, 0, 16, 0, 0}, {5});
  Tensor out = Run1("Resize", Cubic("asymmetric", -0.5f), {x, Tensor(), Vec<float>({2})});
  ASSERT_EQ(out.shape(), (Shape{10}));
  EXPECT_THAT(Doubles(out),
              Pointwise(DoubleNear(1e-6), std::vector<double>{0, -1, 0, 9, 16, 9, 0, -1, 0, 0}));
}

TEST(ResizeCubic, Integer_source_coordinates_copy_the_input) {
  Tensor x = F32({5, -1, 7}, {3});
  Tensor out = Run1("Resize", Cubic("align_corners"), {x, Tensor(), Tensor(), Vec<int64_t>({5})});
  // Sources 0, 0.5, 1, 1.5, 2: the even ones land on input elements.
  EXPECT_NEAR(out.GetAsDouble(0), 5, 1e-9);
  EXPECT_NEAR(out.GetAsDouble(2), -1, 1e-9);
  EXPECT_NEAR(out.GetAsDouble(4), 7, 1e-9);
  EXPECT_NEAR(out.GetAsDouble(1), kFar * 5 + kNear * 5 + kNear * -1 + kFar * 7, 1e-6);
}

TEST(ResizeAlignCorners, Scales_use_the_unrounded_resized_length) {
  // Scale 0.6 of 4 is 2.4 (2 pixels): x_original = x * (4 - 1) / (2.4 - 1).
  Tensor out = Run1("Resize",
                    Attrs({{"mode", std::string("linear")},
                           {"coordinate_transformation_mode", std::string("align_corners")}}),
                    {F32({1, 2, 3, 4}, {4}), Tensor(), Vec<float>({0.6f})});
  ASSERT_EQ(out.shape(), (Shape{2}));
  EXPECT_THAT(Doubles(out), Pointwise(DoubleNear(1e-6), std::vector<double>{1, 1 + 3 / 1.4}));
}

TEST(ResizeAlignCorners, Sizes_use_the_output_length) {
  Tensor out = Run1("Resize",
                    Attrs({{"mode", std::string("linear")},
                           {"coordinate_transformation_mode", std::string("align_corners")}}),
                    {F32({1, 2, 3, 4}, {4}), Tensor(), Tensor(), Vec<int64_t>({2})});
  EXPECT_THAT(Doubles(out), ElementsAre(1, 4));
}

AttributeMap Crop(const char* mode, float extrapolation_value) {
  return Attrs({{"mode", std::string(mode)},
                {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                {"extrapolation_value", extrapolation_value}});
}

TEST(ResizeCrop, Samples_the_roi_with_aligned_corners_and_extrapolates) {
  // roi [0.25, 1.25] of 5 elements spans source 1 .. 5; 5 is outside.
  Tensor x = F32({0, 10, 20, 30, 40}, {5});
  Tensor roi = Vec<float>({0.25f, 1.25f});
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Tensor out = Run1("Resize", Crop(mode, 99), {x, roi, Tensor(), Vec<int64_t>({3})});
    EXPECT_THAT(Doubles(out), Pointwise(DoubleNear(1e-6), std::vector<double>{10, 30, 99})) << mode;
  }
}

TEST(ResizeCrop, One_output_samples_the_roi_centre) {
  Tensor out =
      Run1("Resize", Crop("linear", 0),
           {F32({0, 10, 20, 30, 40}, {5}), Vec<float>({0, 0.5f}), Tensor(), Vec<int64_t>({1})});
  EXPECT_THAT(Doubles(out), ElementsAre(10));
}

TEST(ResizeCrop, Crops_each_axis_of_an_image) {
  // 3x3 image, rows cropped to [0, 0.5] (source rows 0, 1), all columns.
  Tensor x = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  Tensor out = Run1("Resize", Crop("linear", 0),
                    {x, Vec<float>({0, 0, 0.5f, 1}), Tensor(), Vec<int64_t>({2, 3})});
  ASSERT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(Doubles(out), Pointwise(DoubleNear(1e-6), std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(ResizeCrop, A_non_finite_roi_extrapolates) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor out = Run1("Resize", Crop("cubic", 7),
                    {F32({0, 10, 20}, {3}), Vec<float>({nan, 1}), Tensor(), Vec<int64_t>({2})});
  EXPECT_THAT(Doubles(out), ElementsAre(7, 7));
}

TEST(ResizeCrop, Resize_rejects_crop_without_a_full_roi) {
  Status s = RunError("Resize", Crop("linear", 0),
                      {F32({1, 2}, {2}), Tensor(), Tensor(), Vec<int64_t>({3})});
  EXPECT_EQ(s.message(),
            "Resize 'node': tf_crop_and_resize needs input roi with 2 values for input shape 2");
  s = RunError("Resize", Crop("linear", 0),
               {F32({1, 2}, {2}), Vec<float>({0, 1, 0}), Tensor(), Vec<int64_t>({3})});
  EXPECT_EQ(s.message(),
            "Resize 'node': tf_crop_and_resize needs input roi with 2 values for input shape 2; "
            "got shape 3");
}

TEST(ResizeCubic, Resize_rejects_unknown_modes) {
  Status s = RunError("Resize", Attrs({{"mode", std::string("quadratic")}}),
                      {F32({1, 2}, {2}), Tensor(), Vec<float>({2})});
  EXPECT_EQ(s.message(), "Resize 'node': mode 'quadratic' must be nearest, linear or cubic");
  s = RunError("Upsample", Attrs({{"mode", std::string("cubic")}}),
               {F32({1, 2}, {2}), Vec<float>({2})}, 1, 9);
  EXPECT_EQ(s.message(), "Upsample 'node': mode 'cubic' must be nearest or linear");
  s = RunError("Resize", Attrs({{"coordinate_transformation_mode", std::string("centred")}}),
               {F32({1, 2}, {2}), Tensor(), Vec<float>({2})}, 1, 19);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("half_pixel_symmetric"));
}

}  // namespace
}  // namespace tessel::ops
