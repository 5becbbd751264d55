// RNN, GRU and LSTM on cases small enough to check by hand: Affine(1, 0)
// activations make an RNN a linear recurrence with integer states, and
// one-unit GRU/LSTM steps are written out from the ONNX equations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

using ::testing::HasSubstr;
using Strings = std::vector<std::string>;
using Floats = std::vector<float>;

Tensor F(const std::vector<float>& v, Shape shape) {
  return Tensor::FromVector<float>(v, std::move(shape));
}

AttributeMap Attrs(std::initializer_list<std::pair<std::string, AttrValue>> kv) {
  AttributeMap m;
  for (const auto& [k, v] : kv) m.Set(k, v);
  return m;
}

// Runs the op; on failure records it and returns undefined tensors.
std::vector<Tensor> Eval(const std::string& op, const AttributeMap& attrs,
                         const std::vector<Tensor>& inputs, int num_outputs, int opset = 17) {
  auto r = RunSingleOp(op, attrs, inputs, num_outputs, opset);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : std::vector<Tensor>(num_outputs);
}

Status RunError(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& inputs,
                int num_outputs = 2) {
  return RunSingleOp(op, attrs, inputs, num_outputs).status();
}

void Expect(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
            double tol = 1e-6) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(ShapeToString(t.shape()), ShapeToString(shape));
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    EXPECT_NEAR(t.GetAsDouble(i), expected[i], tol) << "at element " << i;
  }
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// A one-unit RNN with W = 1, R = 2 and identity activation: h_t = x_t + 2 h_{t-1}.
AttributeMap Linear(int directions = 1) {
  Strings acts(directions, "Affine");
  return Attrs({{"activations", acts},
                {"activation_alpha", Floats(directions, 1.0f)},
                {"activation_beta", Floats(directions, 0.0f)}});
}
AttributeMap With(AttributeMap m, const std::string& name, AttrValue v) {
  m.Set(name, std::move(v));
  return m;
}

// ---------------------------------------------------------------------------
// RNN

TEST(Rnn, Forward_reverse_and_bidirectional) {
  const Tensor x = F({1, 2, 3}, {3, 1, 1});
  const Tensor w = F({1}, {1, 1, 1}), r = F({2}, {1, 1, 1});
  // Forward: h = 1, 2 + 2 * 1 = 4, 3 + 2 * 4 = 11.
  auto fwd = Eval("RNN", Linear(), {x, w, r}, 2);
  Expect(fwd[0], {3, 1, 1, 1}, {1, 4, 11});
  Expect(fwd[1], {1, 1, 1}, {11});
  // Reverse walks t = 2, 1, 0 (h = 3, 8, 17) and stores each at its own t.
  auto rev = Eval("RNN", With(Linear(), "direction", std::string("reverse")), {x, w, r}, 2);
  Expect(rev[0], {3, 1, 1, 1}, {17, 8, 3});
  Expect(rev[1], {1, 1, 1}, {17});
  auto bi = Eval("RNN", With(Linear(2), "direction", std::string("bidirectional")),
                 {x, F({1, 1}, {2, 1, 1}), F({2, 2}, {2, 1, 1})}, 2);
  Expect(bi[0], {3, 2, 1, 1}, {1, 17, 4, 8, 11, 3});
  Expect(bi[1], {2, 1, 1}, {11, 17});
}

TEST(Rnn, Bias_initial_h_and_default_tanh) {
  // h1 = tanh(0.5 * 1 + 0.1 + 0.2 + 2 * 0.3), h2 = tanh(0.5 * -1 + 0.3 + 2 * h1).
  const double h1 = std::tanh(0.5 + 0.3 + 0.6);
  const double h2 = std::tanh(-0.5 + 0.3 + 2 * h1);
  auto out = Eval("RNN", Attrs({{"hidden_size", int64_t{1}}}),
                  {F({1, -1}, {2, 1, 1}), F({0.5f}, {1, 1, 1}), F({2}, {1, 1, 1}),
                   F({0.1f, 0.2f}, {1, 2}), Tensor(), F({0.3f}, {1, 1, 1})},
                  2);
  Expect(out[0], {2, 1, 1, 1}, {h1, h2});
  Expect(out[1], {1, 1, 1}, {h2});
}

TEST(Rnn, Two_units_with_matrices) {
  // W = [[1, 0], [0, -1]] on a 2-wide input, R = [[0, 1], [1, 0]] swaps the state.
  const Tensor x = F({1, 2, 3, 4}, {2, 1, 2});
  const Tensor w = F({1, 0, 0, -1}, {1, 2, 2}), r = F({0, 1, 1, 0}, {1, 2, 2});
  auto out = Eval("RNN", Linear(), {x, w, r}, 2);
  // h1 = (1, -2); h2 = (3, -4) + (-2, 1) = (1, -3).
  Expect(out[0], {2, 1, 1, 2}, {1, -2, 1, -3});
}

TEST(Rnn, Sequence_lens_leave_zeros_past_each_end) {
  // Batch 0 runs all 3 steps, batch 1 one step, batch 2 none.
  const Tensor x = F({1, 1, 5, 2, 1, 5, 3, 1, 5}, {3, 3, 1});
  const Tensor lens = Tensor::FromVector<int32_t>({3, 1, 0}, {3});
  const Tensor w = F({1}, {1, 1, 1}), r = F({2}, {1, 1, 1});
  const Tensor h0 = F({0, 0, 7}, {1, 3, 1});
  auto fwd = Eval("RNN", Linear(), {x, w, r, Tensor(), lens, h0}, 2);
  Expect(fwd[0], {3, 1, 3, 1}, {1, 1, 0, 4, 0, 0, 11, 0, 0});
  // An empty sequence ends in zero state, not initial_h.
  Expect(fwd[1], {1, 3, 1}, {11, 1, 0});
  // Reverse starts at each sequence's own last step.
  auto rev = Eval("RNN", With(Linear(), "direction", std::string("reverse")),
                  {x, w, r, Tensor(), lens}, 2);
  Expect(rev[0], {3, 1, 3, 1}, {17, 1, 0, 8, 0, 0, 3, 0, 0});
  Expect(rev[1], {1, 3, 1}, {17, 1, 0});
}

TEST(Rnn, Layout_1_is_batch_major) {
  // Two sequences (1, 2) and (3, 4), batch-major.
  const Tensor x = F({1, 2, 3, 4}, {2, 2, 1});
  auto out =
      Eval("RNN", With(Linear(), "layout", int64_t{1}),
           {x, F({1}, {1, 1, 1}), F({2}, {1, 1, 1}), Tensor(), Tensor(), F({1, -1}, {2, 1, 1})}, 2);
  // Batch 0: 1 + 2 = 3, 2 + 6 = 8; batch 1: 3 - 2 = 1, 4 + 2 = 6.
  Expect(out[0], {2, 2, 1, 1}, {3, 8, 1, 6});
  Expect(out[1], {2, 1, 1}, {8, 6});
}

TEST(Rnn, Clip_and_activation_parameters) {
  const Tensor x = F({1, 2, 3}, {3, 1, 1});
  const Tensor w = F({1}, {1, 1, 1}), r = F({2}, {1, 1, 1});
  // Clipping bounds the activation's input: 1, 4, min(3 + 8, 5).
  Expect(Eval("RNN", With(Linear(), "clip", 5.0f), {x, w, r}, 1)[0], {3, 1, 1, 1}, {1, 4, 5});
  // Affine(2, 1): h = 2 (x + 2 h) + 1 = 3, 2 (2 + 6) + 1 = 17, 2 (3 + 34) + 1 = 75.
  auto affine = Attrs({{"activations", Strings{"Affine"}},
                       {"activation_alpha", Floats{2}},
                       {"activation_beta", Floats{1}}});
  Expect(Eval("RNN", affine, {x, w, r}, 1)[0], {3, 1, 1, 1}, {3, 17, 75});
  // LeakyRelu's default alpha 0.01; names match whatever their case.
  auto leaky = Attrs({{"activations", Strings{"leakyrelu"}}});
  Expect(Eval("RNN", leaky, {F({-1}, {1, 1, 1}), w, r}, 1)[0], {1, 1, 1, 1}, {-0.01});
  // An activation without alpha does not consume one: Relu then Affine(3, 0)
  // in a bidirectional RNN.
  auto mixed = Attrs({{"direction", std::string("bidirectional")},
                      {"activations", Strings{"Relu", "Affine"}},
                      {"activation_alpha", Floats{3}},
                      {"activation_beta", Floats{0}}});
  auto bi = Eval("RNN", mixed, {F({-1}, {1, 1, 1}), F({1, 1}, {2, 1, 1}), F({2, 2}, {2, 1, 1})}, 1);
  Expect(bi[0], {1, 2, 1, 1}, {0, -3});
}

TEST(Rnn, Opset_1_form_with_output_sequence) {
  auto out = Eval("RNN", With(Linear(), "output_sequence", int64_t{1}),
                  {F({1, 2}, {2, 1, 1}), F({1}, {1, 1, 1}), F({2}, {1, 1, 1})}, 2, 1);
  Expect(out[0], {2, 1, 1, 1}, {1, 4});
}

TEST(Rnn, RNN_rejects_bad_shapes_and_attributes) {
  const Tensor x = F({1, 2}, {2, 1, 1});
  const Tensor w = F({1}, {1, 1, 1}), r = F({2}, {1, 1, 1});
  Status s = RunError("RNN", {}, {x, F({1, 1}, {1, 2, 1}), r});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "RNN 'node': W has shape 1x2x1; expected 1x1x1 (directions x 1*hidden_size x "
            "input_size)");
  s = RunError("RNN", Attrs({{"direction", std::string("sideways")}}), {x, w, r});
  EXPECT_EQ(s.message(),
            "RNN 'node': direction 'sideways' must be forward, reverse or bidirectional");
  s = RunError("RNN", Attrs({{"direction", std::string("bidirectional")}}), {x, w, r});
  EXPECT_THAT(s.message(), HasSubstr("W has shape 1x1x1; expected 2x1x1"));
  s = RunError("RNN", Attrs({{"hidden_size", int64_t{3}}}), {x, w, r});
  EXPECT_EQ(s.message(), "RNN 'node': hidden_size=3 but R has shape 1x1x1 (hidden size 1)");
  s = RunError("RNN", Attrs({{"activations", Strings{"Tanh", "Tanh"}}}), {x, w, r});
  EXPECT_EQ(s.message(), "RNN 'node': activations lists 2 functions; expected 1 (1 per direction)");
  s = RunError("RNN", Attrs({{"activations", Strings{"Gelu"}}}), {x, w, r});
  EXPECT_THAT(s.message(), HasSubstr("activation 'Gelu' is not one of Relu, Tanh"));
  s = RunError("RNN", Attrs({{"clip", -1.0f}}), {x, w, r});
  EXPECT_THAT(s.message(), HasSubstr("must be a finite value > 0"));
  s = RunError("RNN", {}, {x, w, r, Tensor(), Tensor::FromVector<int32_t>({3}, {1})});
  EXPECT_EQ(s.message(), "RNN 'node': sequence_lens[0] = 3 is outside [0, 2]");
  s = RunError("RNN", {}, {x, w, r, F({0}, {1, 1})});
  EXPECT_THAT(s.message(), HasSubstr("B 'in3' has shape 1x1; expected 1x2"));
  s = RunError("RNN", {}, {x, w, r, Tensor(), Tensor(), F({0, 0}, {1, 2, 1})});
  EXPECT_THAT(s.message(), HasSubstr("initial_h 'in5' has shape 1x2x1; expected 1x1x1"));
}

// ---------------------------------------------------------------------------
// GRU

// One unit, one step from h0 = 0.5 with x = 1: weights W[zrh], R[zrh] and
// biases [Wb[zrh], Rb[zrh]].
constexpr double kW[] = {0.1, 0.2, 0.3}, kR[] = {0.4, 0.5, 0.6};
constexpr double kWb[] = {0.01, 0.02, 0.03}, kRb[] = {0.04, 0.05, 0.06};
constexpr double kX0 = 1, kH0 = 0.5;

std::vector<Tensor> GruInputs() {
  auto f = [](const double* v) { return Floats(v, v + 3); };
  Floats b = f(kWb);
  b.insert(b.end(), kRb, kRb + 3);
  return {F({static_cast<float>(kX0)}, {1, 1, 1}),
          F(f(kW), {1, 3, 1}),
          F(f(kR), {1, 3, 1}),
          F(b, {1, 6}),
          Tensor(),
          F({static_cast<float>(kH0)}, {1, 1, 1})};
}

TEST(Gru, Linear_before_reset_0_and_1) {
  const double z = Sigmoid(kW[0] * kX0 + kR[0] * kH0 + kWb[0] + kRb[0]);
  const double r = Sigmoid(kW[1] * kX0 + kR[1] * kH0 + kWb[1] + kRb[1]);
  // Default: the reset gate scales H before R_h.
  const double h0 = std::tanh(kW[2] * kX0 + kR[2] * (r * kH0) + kRb[2] + kWb[2]);
  // linear_before_reset: it scales R_h H + Rb_h.
  const double h1 = std::tanh(kW[2] * kX0 + r * (kR[2] * kH0 + kRb[2]) + kWb[2]);
  auto out = Eval("GRU", {}, GruInputs(), 2);
  Expect(out[0], {1, 1, 1, 1}, {(1 - z) * h0 + z * kH0});
  Expect(out[1], {1, 1, 1}, {(1 - z) * h0 + z * kH0});
  auto lbr = Eval("GRU", Attrs({{"linear_before_reset", int64_t{1}}}), GruInputs(), 2);
  Expect(lbr[1], {1, 1, 1}, {(1 - z) * h1 + z * kH0});
}

TEST(Gru, Custom_activations_and_two_steps) {
  // f = HardSigmoid(0.5, 0.5) for both gates, g = Affine(1, 0); x = 1 then 0.
  std::vector<Tensor> in = GruInputs();
  in[0] = F({1, 0}, {2, 1, 1});
  auto attrs = Attrs({{"activations", Strings{"HardSigmoid", "Affine"}},
                      {"activation_alpha", Floats{0.5f, 1}},
                      {"activation_beta", Floats{0.5f, 0}}});
  auto hs = [](double v) { return std::clamp(0.5 * v + 0.5, 0.0, 1.0); };
  double h = kH0;
  std::vector<double> ys;
  for (double x : {1.0, 0.0}) {
    const double z = hs(kW[0] * x + kR[0] * h + kWb[0] + kRb[0]);
    const double r = hs(kW[1] * x + kR[1] * h + kWb[1] + kRb[1]);
    const double c = kW[2] * x + kR[2] * (r * h) + kRb[2] + kWb[2];
    h = (1 - z) * c + z * h;
    ys.push_back(h);
  }
  Expect(Eval("GRU", attrs, in, 1)[0], {2, 1, 1, 1}, ys);
}

// ---------------------------------------------------------------------------
// LSTM

// One unit, one step: W[iofc], R[iofc], B, initial h and c, peepholes P[iof].
constexpr double kLw[] = {0.1, 0.2, 0.3, 0.4}, kLr[] = {0.5, 0.6, 0.7, 0.8};
constexpr double kLb[] = {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08};
constexpr double kLp[] = {0.9, 1.0, 1.1};
constexpr double kLx = 0.5, kLh = 0.2, kLc = 0.3;

std::vector<Tensor> LstmInputs(bool peepholes) {
  auto f = [](const double* v, int n) { return Floats(v, v + n); };
  return {F({static_cast<float>(kLx)}, {1, 1, 1}),
          F(f(kLw, 4), {1, 4, 1}),
          F(f(kLr, 4), {1, 4, 1}),
          F(f(kLb, 8), {1, 8}),
          Tensor(),
          F({static_cast<float>(kLh)}, {1, 1, 1}),
          F({static_cast<float>(kLc)}, {1, 1, 1}),
          peepholes ? F(f(kLp, 3), {1, 3}) : Tensor()};
}

// Pre-activation of gate g (0 = i, 1 = o, 2 = f, 3 = c), without peephole.
double Pre(int g) { return kLw[g] * kLx + kLr[g] * kLh + kLb[g] + kLb[4 + g]; }

TEST(Lstm, Peepholes_and_all_three_outputs) {
  const double i = Sigmoid(Pre(0) + kLp[0] * kLc);
  const double f = Sigmoid(Pre(2) + kLp[2] * kLc);
  const double c = f * kLc + i * std::tanh(Pre(3));
  // The output gate peeks at the new cell state.
  const double o = Sigmoid(Pre(1) + kLp[1] * c);
  const double h = o * std::tanh(c);
  auto out = Eval("LSTM", {}, LstmInputs(true), 3);
  Expect(out[0], {1, 1, 1, 1}, {h});
  Expect(out[1], {1, 1, 1}, {h});
  Expect(out[2], {1, 1, 1}, {c});
}

TEST(Lstm, Input_forget_couples_the_gates) {
  const double i = Sigmoid(Pre(0));
  const double c = (1 - i) * kLc + i * std::tanh(Pre(3));
  const double h = Sigmoid(Pre(1)) * std::tanh(c);
  auto out = Eval("LSTM", Attrs({{"input_forget", int64_t{1}}}), LstmInputs(false), 3);
  Expect(out[1], {1, 1, 1}, {h});
  Expect(out[2], {1, 1, 1}, {c});
}

TEST(Lstm, Bidirectional_float64_matches_two_single_directions) {
  // Random-ish data; each direction of a bidirectional LSTM must equal the
  // forward and the reverse LSTM run alone on its half of the weights.
  const int64_t seq = 3, batch = 2, in = 2, hs = 2;
  auto make = [](Shape s, double scale) {
    Tensor t(DType::kFloat64, std::move(s));
    for (int64_t k = 0; k < t.num_elements(); ++k) {
      t.data<double>()[k] = scale * std::sin(1.7 * static_cast<double>(k) + scale);
    }
    return t;
  };
  const Tensor x = make({seq, batch, in}, 1.0), w = make({2, 4 * hs, in}, 0.5),
               r = make({2, 4 * hs, hs}, 0.4), b = make({2, 8 * hs}, 0.1),
               p = make({2, 3 * hs}, 0.3);
  auto half = [](const Tensor& t, int64_t d) {
    Shape s = t.shape();
    s[0] = 1;
    Tensor h(DType::kFloat64, s);
    const int64_t n = h.num_elements();
    for (int64_t k = 0; k < n; ++k) h.data<double>()[k] = t.data<double>()[d * n + k];
    return h;
  };
  auto bi = Eval("LSTM", Attrs({{"direction", std::string("bidirectional")}}),
                 {x, w, r, b, Tensor(), Tensor(), Tensor(), p}, 3);
  for (int64_t d = 0; d < 2; ++d) {
    auto one =
        Eval("LSTM", Attrs({{"direction", std::string(d == 0 ? "forward" : "reverse")}}),
             {x, half(w, d), half(r, d), half(b, d), Tensor(), Tensor(), Tensor(), half(p, d)}, 3);
    ASSERT_EQ(bi[0].dtype(), DType::kFloat64);
    for (int64_t t = 0; t < seq; ++t) {
      for (int64_t k = 0; k < batch * hs; ++k) {
        EXPECT_EQ(bi[0].data<double>()[(t * 2 + d) * batch * hs + k],
                  one[0].data<double>()[t * batch * hs + k]);
      }
    }
    for (int64_t k = 0; k < batch * hs; ++k) {
      EXPECT_EQ(bi[1].data<double>()[d * batch * hs + k], one[1].data<double>()[k]);
      EXPECT_EQ(bi[2].data<double>()[d * batch * hs + k], one[2].data<double>()[k]);
    }
  }
}

TEST(Lstm, LSTM_rejects_bad_peephole_and_initial_c_shapes) {
  std::vector<Tensor> in = LstmInputs(true);
  in[7] = F({1, 2}, {1, 2});
  Status s = RunError("LSTM", {}, in);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "LSTM 'node': P 'in7' has shape 1x2; expected 1x3");
  in = LstmInputs(true);
  in[6] = F({1, 2}, {1, 2, 1});
  EXPECT_THAT(RunError("LSTM", {}, in).message(),
              HasSubstr("initial_c 'in6' has shape 1x2x1; expected 1x1x1"));
  EXPECT_THAT(
      RunError("LSTM", Attrs({{"activations", Strings{"Sigmoid", "Tanh"}}}), LstmInputs(false))
          .message(),
      HasSubstr("expected 3 (3 per direction)"));
}

}  // namespace
}  // namespace tessel::ops
