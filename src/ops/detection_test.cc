// NonMaxSuppression and RoiAlign on small hand-computed cases.
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

// ---- NonMaxSuppression ------------------------------------------------------

// Box 1 is box 0 shifted by 0.1 (IoU 0.9 / 1.1), box 2 lies far away.
Tensor Boxes() { return F32({0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11}, {1, 3, 4}); }
Tensor Scores() { return F32({0.9f, 0.95f, 0.5f}, {1, 1, 3}); }
Tensor Max(int64_t n) { return I64({n}, {1}); }
Tensor Threshold(float t) { return F32({t}, {1}); }

TEST(NonMaxSuppression, Keeps_boxes_by_score_and_suppresses_overlaps) {
  Tensor out = Run1("NonMaxSuppression", {}, {Boxes(), Scores(), Max(3), Threshold(0.5f)});
  EXPECT_EQ(out.shape(), (Shape{2, 3}));
  EXPECT_THAT(Ints(out), ElementsAre(0, 0, 1, 0, 0, 2));
  // An IoU threshold above 0.9 / 1.1 keeps box 0 too.
  out = Run1("NonMaxSuppression", {}, {Boxes(), Scores(), Max(3), Threshold(0.85f)});
  EXPECT_THAT(Ints(out), ElementsAre(0, 0, 1, 0, 0, 0, 0, 0, 2));
}

TEST(NonMaxSuppression, Limits_and_score_threshold) {
  EXPECT_THAT(Ints(Run1("NonMaxSuppression", {}, {Boxes(), Scores(), Max(1), Threshold(0.5f)})),
              ElementsAre(0, 0, 1));
  // Without max_output_boxes_per_class nothing is selected.
  Tensor none = Run1("NonMaxSuppression", {}, {Boxes(), Scores()});
  EXPECT_EQ(none.shape(), (Shape{0, 3}));
  Tensor high =
      Run1("NonMaxSuppression", {}, {Boxes(), Scores(), Max(3), Threshold(0.85f), Threshold(0.6f)});
  EXPECT_THAT(Ints(high), ElementsAre(0, 0, 1, 0, 0, 0));
}

TEST(NonMaxSuppression, NaN_scores_order_last) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor scores = F32({nan, 0.5f, 0.9f}, {1, 1, 3});
  EXPECT_THAT(Ints(Run1("NonMaxSuppression", {}, {Boxes(), scores, Max(3), Threshold(0.5f)})),
              ElementsAre(0, 0, 2, 0, 0, 1));
}

TEST(NonMaxSuppression, Flipped_corners_and_center_format) {
  // Box 0 given as (1, 1, 0, 0), and the same boxes as centers and sizes.
  Tensor flipped = F32({1, 1, 0, 0, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11}, {1, 3, 4});
  EXPECT_THAT(Ints(Run1("NonMaxSuppression", {}, {flipped, Scores(), Max(3), Threshold(0.5f)})),
              ElementsAre(0, 0, 1, 0, 0, 2));
  Tensor centers = F32({0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 10.5f, 0.5f, 1, 1}, {1, 3, 4});
  EXPECT_THAT(Ints(Run1("NonMaxSuppression", Attrs({{"center_point_box", int64_t{1}}}),
                        {centers, Scores(), Max(3), Threshold(0.5f)})),
              ElementsAre(0, 0, 1, 0, 0, 2));
}

TEST(NonMaxSuppression, NonMaxSuppression_rejects_bad_shapes) {
  Status s = RunError("NonMaxSuppression", {}, {F32({0, 0, 1}, {1, 1, 3}), F32({1}, {1, 1, 1})});
  EXPECT_EQ(s.message(),
            "NonMaxSuppression 'node': boxes shape 1x1x3 and scores shape 1x1x1 must be batches x "
            "boxes x 4 and batches x classes x boxes");
  s = RunError("NonMaxSuppression", {}, {Boxes(), Scores(), I64({1, 2}, {2})});
  EXPECT_EQ(s.message(),
            "NonMaxSuppression 'node': max_output_boxes_per_class 'in2' has shape 2; expected one "
            "value");
}

TEST(NonMaxSuppression, NonMaxSuppression_rejects_boxes_unknown_at_compile_time) {
  ir::Graph g;
  ir::Value* boxes = g.AddValue("boxes", DType::kFloat32, {1, 3, 4}, true);
  ir::Value* scores = g.AddConstant("scores", Scores());
  ir::Node* node = g.AddNode("NonMaxSuppression", "nms", {boxes, scores}, {g.AddValue("out")});
  Status s = InferNode(*node, 17);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "NonMaxSuppression 'nms': input boxes ('boxes') must be known at compile time; tessel "
            "compiles static shapes");
}

// ---- RoiAlign ---------------------------------------------------------------

Tensor Square() { return F32({1, 2, 3, 4}, {1, 1, 2, 2}); }

AttributeMap RoiAttrs(const char* mode, const char* coord, int64_t out) {
  return Attrs({{"mode", std::string(mode)},
                {"coordinate_transformation_mode", std::string(coord)},
                {"output_height", out},
                {"output_width", out},
                {"sampling_ratio", int64_t{1}}});
}

TEST(RoiAlign, Averages_bilinear_samples_per_bin) {
  // One bin over the whole 1x1 roi samples its centre (0.5, 0.5).
  Tensor y = Run1("RoiAlign", RoiAttrs("avg", "output_half_pixel", 1),
                  {Square(), F32({0, 0, 1, 1}, {1, 4}), I64({0}, {1})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1}));
  EXPECT_THAT(Doubles(y), ElementsAre(2.5));
  // half_pixel shifts the roi by half a pixel: the sample lands on (0, 0).
  y = Run1("RoiAlign", RoiAttrs("avg", "half_pixel", 1),
           {Square(), F32({0, 0, 1, 1}, {1, 4}), I64({0}, {1})});
  EXPECT_THAT(Doubles(y), ElementsAre(1));
  // 2x2 bins over a 2x2 roi sample 0.5 and 1.5; 1.5 clamps onto the edge.
  y = Run1("RoiAlign", RoiAttrs("avg", "output_half_pixel", 2),
           {Square(), F32({0, 0, 2, 2}, {1, 4}), I64({0}, {1})});
  EXPECT_THAT(Doubles(y), Pointwise(DoubleNear(1e-9), std::vector<double>{2.5, 3, 3.5, 4}));
}

TEST(RoiAlign, Max_takes_the_largest_weighted_corner) {
  Tensor y = Run1("RoiAlign", RoiAttrs("max", "output_half_pixel", 1),
                  {Square(), F32({0, 0, 1, 1}, {1, 4}), I64({0}, {1})});
  EXPECT_THAT(Doubles(y), ElementsAre(1));
}

TEST(RoiAlign, RoiAlign_rejects_bad_batch_index_and_mode) {
  Status s = RunError("RoiAlign", {}, {Square(), F32({0, 0, 1, 1}, {1, 4}), I64({1}, {1})});
  EXPECT_EQ(s.message(), "RoiAlign 'node': batch index 1 of roi 0 is out of range [0, 1)");
  s = RunError("RoiAlign", Attrs({{"mode", std::string("sum")}}),
               {Square(), F32({0, 0, 1, 1}, {1, 4}), I64({0}, {1})});
  EXPECT_EQ(s.message(), "RoiAlign 'node': mode 'sum' is not one of avg, max");
}

}  // namespace
}  // namespace tessel::ops
