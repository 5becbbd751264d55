#include "ops/fused_activation.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace tessel::ops {
namespace {

ir::Node FusedConv(std::initializer_list<std::pair<std::string, AttrValue>> attrs) {
  ir::Node node;
  node.name = "c1";
  node.op_type = "FusedConv";
  node.domain = "tessel";
  for (const auto& [k, v] : attrs) node.attrs.Set(k, v);
  return node;
}

FusedActivation Parsed(const ir::Node& node) {
  StatusOr<FusedActivation> a = ParseFusedActivation(node);
  EXPECT_TRUE(a.ok()) << a.status().message();
  return a.ok() ? *a : FusedActivation{};
}

TEST(ParseFusedActivation, Defaults_where_the_node_leaves_parameters_out) {
  struct Case {
    const char* name;
    FusedActivation want;
  };
  const Case cases[] = {
      {.name = "", .want = {.kind = ActivationKind::kNone}},
      {.name = "Relu", .want = {.kind = ActivationKind::kRelu}},
      {.name = "Clip", .want = {.kind = ActivationKind::kClip, .alpha = -FLT_MAX, .beta = FLT_MAX}},
      {.name = "LeakyRelu", .want = {.kind = ActivationKind::kLeakyRelu, .alpha = 0.01f}},
      {.name = "Sigmoid", .want = {.kind = ActivationKind::kSigmoid}},
      {.name = "HardSigmoid",
       .want = {.kind = ActivationKind::kHardSigmoid, .alpha = 0.2f, .beta = 0.5f}},
      {.name = "HardSwish", .want = {.kind = ActivationKind::kHardSwish}},
      {.name = "Swish", .want = {.kind = ActivationKind::kSwish}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Parsed(FusedConv({{"activation", std::string(c.name)}})), c.want);
  }
  EXPECT_EQ(Parsed(FusedConv({})), FusedActivation{});
}

TEST(ParseFusedActivation, Reads_each_kinds_parameters_and_only_those) {
  const std::pair<std::string, AttrValue> params[] = {{"activation_min", -1.5f},
                                                      {"activation_max", 6.f},
                                                      {"activation_alpha", 0.3f},
                                                      {"activation_beta", 0.4f}};
  auto with = [&](const char* name) {
    ir::Node n = FusedConv({{"activation", std::string(name)}});
    for (const auto& [k, v] : params) n.attrs.Set(k, v);
    return Parsed(n);
  };
  EXPECT_EQ(with("Clip"), (FusedActivation{ActivationKind::kClip, -1.5f, 6.f}));
  EXPECT_EQ(with("LeakyRelu"), (FusedActivation{ActivationKind::kLeakyRelu, 0.3f, 0}));
  EXPECT_EQ(with("HardSigmoid"), (FusedActivation{ActivationKind::kHardSigmoid, 0.3f, 0.4f}));
  EXPECT_EQ(with("Relu"), (FusedActivation{ActivationKind::kRelu, 0, 0}));
  EXPECT_EQ(with("Swish"), (FusedActivation{ActivationKind::kSwish, 0, 0}));
}

TEST(ParseFusedActivation, Rejects_an_unknown_name_naming_the_node_and_the_known_ones) {
  StatusOr<FusedActivation> a = ParseFusedActivation(FusedConv({{"activation", "Gelu"}}));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a.status().message(),
            "FusedConv 'c1': activation 'Gelu'; supported: none, Relu, Clip, LeakyRelu, Sigmoid, "
            "HardSigmoid, HardSwish, Swish");
}

TEST(ParseFusedActivation, Takes_none_spelled_out_as_no_activation) {
  EXPECT_EQ(Parsed(FusedConv({{"activation", std::string("none")}})), FusedActivation{});
}

TEST(SetFusedActivation, Round_trips_every_kind) {
  for (ActivationKind kind : kActivationKinds) {
    SCOPED_TRACE(ActivationName(kind));
    FusedActivation a = DefaultActivation(kind);
    if (kind == ActivationKind::kClip || kind == ActivationKind::kLeakyRelu ||
        kind == ActivationKind::kHardSigmoid) {
      a.alpha = 0.125f;
    }
    if (kind == ActivationKind::kClip || kind == ActivationKind::kHardSigmoid) a.beta = 0.75f;
    ir::Node n = FusedConv({{"activation", std::string("Relu")}});
    SetFusedActivation(n.attrs, a);
    EXPECT_EQ(Parsed(n), a);
    EXPECT_EQ(n.attrs.Has("activation"), kind != ActivationKind::kNone);
  }
}

TEST(ApplyActivation, Computes_what_the_onnx_op_computes) {
  const std::vector<float> x = {-4, -1, 0, 0.5f, 3};
  struct Case {
    FusedActivation a;
    std::vector<float> want;
  };
  auto sigmoid = [](float v) { return 1 / (1 + std::exp(-v)); };
  const Case cases[] = {
      {{ActivationKind::kNone}, x},
      {{ActivationKind::kRelu}, {0, 0, 0, 0.5f, 3}},
      {{ActivationKind::kClip, -2, 1}, {-2, -1, 0, 0.5f, 1}},
      {{ActivationKind::kLeakyRelu, 0.5f}, {-2, -0.5f, 0, 0.5f, 3}},
      {{ActivationKind::kSigmoid}, {sigmoid(-4), sigmoid(-1), 0.5f, sigmoid(0.5f), sigmoid(3)}},
      {{ActivationKind::kHardSigmoid, 0.25f, 0.5f}, {0, 0.25f, 0.5f, 0.625f, 1}},
      {{ActivationKind::kHardSwish}, {0, -1.f / 3, 0, 0.5f * 3.5f / 6, 3}},
      {{ActivationKind::kSwish},
       {-4 * sigmoid(-4), -sigmoid(-1), 0, 0.5f * sigmoid(0.5f), 3 * sigmoid(3)}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ActivationName(c.a.kind));
    std::vector<float> y = x;
    ApplyActivation(c.a, y);
    std::vector<double> yd(x.begin(), x.end());
    ApplyActivation(c.a, yd);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(y[i], c.want[i], 1e-6) << "at " << x[i];
      EXPECT_NEAR(yd[i], c.want[i], 1e-6) << "at " << x[i];
    }
  }
}

TEST(ActivationCDefines, One_macro_per_kind_with_its_enum_value) {
  EXPECT_EQ(ActivationCDefines(),
            "#define TESSEL_ACT_NONE 0\n"
            "#define TESSEL_ACT_RELU 1\n"
            "#define TESSEL_ACT_CLIP 2\n"
            "#define TESSEL_ACT_LEAKY_RELU 3\n"
            "#define TESSEL_ACT_SIGMOID 4\n"
            "#define TESSEL_ACT_HARD_SIGMOID 5\n"
            "#define TESSEL_ACT_HARD_SWISH 6\n"
            "#define TESSEL_ACT_SWISH 7\n");
}

}  // namespace
}  // namespace tessel::ops
