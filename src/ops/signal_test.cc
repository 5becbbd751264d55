// Windows, DFT, STFT and MelWeightMatrix on small hand-computed cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace tessel::ops {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using namespace ::tessel::ops::test_util;  // NOLINT(build/namespaces)

MATCHER(Near, "") { return std::abs(std::get<0>(arg) - std::get<1>(arg)) < 1e-6; }

Tensor Size(int64_t n) { return I64({n}, {}); }
AttributeMap Periodic(int64_t periodic) { return Attrs({{"periodic", periodic}}); }

// ---- Windows ----------------------------------------------------------------

TEST(Window, Hann_periodic_and_symmetric) {
  EXPECT_THAT(Doubles(Run1("HannWindow", {}, {Size(4)})),
              Pointwise(Near(), std::vector<double>{0, 0.5, 1, 0.5}));
  EXPECT_THAT(Doubles(Run1("HannWindow", Periodic(0), {Size(3)})),
              Pointwise(Near(), std::vector<double>{0, 1, 0}));
  // A symmetric window of one sample is its peak.
  EXPECT_THAT(Doubles(Run1("HannWindow", Periodic(0), {Size(1)})), Pointwise(Near(), {1.0}));
}

TEST(Window, Hamming_and_Blackman_coefficients) {
  EXPECT_THAT(Doubles(Run1("HammingWindow", {}, {Size(2)})),
              Pointwise(Near(), std::vector<double>{4.0 / 46, 1}));
  EXPECT_THAT(Doubles(Run1("HammingWindow", Periodic(0), {Size(2)})),
              Pointwise(Near(), std::vector<double>{4.0 / 46, 4.0 / 46}));
  Tensor b = Run1("BlackmanWindow", Attrs({{"output_datatype", int64_t{11}}}), {Size(4)});
  EXPECT_EQ(b.dtype(), DType::kFloat64);
  EXPECT_THAT(Doubles(b), Pointwise(Near(), std::vector<double>{0, 0.34, 1, 0.34}));
}

TEST(Window, HannWindow_rejects_negative_size_and_integer_output) {
  Status s = RunError("HannWindow", {}, {Size(-1)});
  EXPECT_EQ(s.message(), "HannWindow 'node': size -1 must be >= 0");
  s = RunError("HannWindow", {}, {Size(int64_t{1} << 40)});
  EXPECT_EQ(s.message(), "HannWindow 'node': size 1099511627776 is too large");
  s = RunError("HannWindow", Attrs({{"output_datatype", int64_t{7}}}), {Size(2)});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("output_datatype 7 is not supported"));
}

// ---- DFT --------------------------------------------------------------------

Tensor Signal() { return F32({1, 2, 3, 4}, {1, 4, 1}); }

TEST(Dft, Real_input_full_and_onesided) {
  // X_k of [1, 2, 3, 4]: 10, -2 + 2i, -2, -2 - 2i.
  Tensor y = Run1("DFT", {}, {Signal()});
  EXPECT_EQ(y.shape(), (Shape{1, 4, 2}));
  EXPECT_THAT(Doubles(y), Pointwise(Near(), std::vector<double>{10, 0, -2, 2, -2, 0, -2, -2}));
  Tensor half = Run1("DFT", Attrs({{"onesided", int64_t{1}}}), {Signal()});
  EXPECT_EQ(half.shape(), (Shape{1, 3, 2}));
  EXPECT_THAT(Doubles(half), Pointwise(Near(), std::vector<double>{10, 0, -2, 2, -2, 0}));
}

TEST(Dft, Inverse_restores_the_signal) {
  Tensor spectrum = F32({10, 0, -2, 2, -2, 0, -2, -2}, {1, 4, 2});
  Tensor x = Run1("DFT", Attrs({{"inverse", int64_t{1}}}), {spectrum});
  EXPECT_THAT(Doubles(x), Pointwise(Near(), std::vector<double>{1, 0, 2, 0, 3, 0, 4, 0}));
}

TEST(Dft, Length_truncates_or_pads_and_complex_input) {
  EXPECT_THAT(Doubles(Run1("DFT", {}, {Signal(), Size(2)})),
              Pointwise(Near(), std::vector<double>{3, 0, -1, 0}));
  EXPECT_THAT(Doubles(Run1("DFT", {}, {F32({1}, {1, 1, 1}), Size(3)})),
              Pointwise(Near(), std::vector<double>{1, 0, 1, 0, 1, 0}));
  // [i, 1]: X0 = 1 + i, X1 = i - 1.
  EXPECT_THAT(Doubles(Run1("DFT", {}, {F32({0, 1, 1, 0}, {1, 2, 2})})),
              Pointwise(Near(), std::vector<double>{1, 1, -1, 1}));
  // Along axis 0 of a 2 x 2 real signal: column sums and differences.
  EXPECT_THAT(Doubles(Run1("DFT", Attrs({{"axis", int64_t{0}}}), {F32({1, 2, 3, 5}, {2, 2, 1})})),
              Pointwise(Near(), std::vector<double>{4, 0, 7, 0, -2, 0, -3, 0}));
}

TEST(Dft, DFT_rejects_last_axis_and_onesided_inverse) {
  Status s = RunError("DFT", Attrs({{"axis", int64_t{2}}}), {Signal()});
  EXPECT_EQ(s.message(),
            "DFT 'node': axis 2 is out of range [-3, -2] or [0, 1] for input shape 1x4x1");
  s = RunError("DFT", Attrs({{"inverse", int64_t{1}}, {"onesided", int64_t{1}}}), {Signal()});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  s = RunError("DFT", {}, {F32({1, 2, 3}, {1, 1, 3})});
  EXPECT_EQ(s.message(),
            "DFT 'node': input shape 1x1x3 must end in 1 (real) or 2 (complex) values");
}

// ---- STFT -------------------------------------------------------------------

TEST(Stft, Frames_windows_and_onesided_bins) {
  // Frames [1, 2] and [3, 4]: sums 3, 7 and differences -1, -1.
  Tensor y = Run1("STFT", {}, {Signal(), Size(2), Tensor(), Size(2)});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_THAT(Doubles(y), Pointwise(Near(), std::vector<double>{3, 0, -1, 0, 7, 0, -1, 0}));
  // The window [1, 0.5] gives frames [1, 1] and [3, 2].
  y = Run1("STFT", {}, {Signal(), Size(2), F32({1, 0.5f}, {2})});
  EXPECT_THAT(Doubles(y), Pointwise(Near(), std::vector<double>{2, 0, 0, 0, 5, 0, 1, 0}));
}

TEST(Stft, STFT_rejects_window_of_another_length) {
  Status s = RunError("STFT", {}, {Signal(), Size(2), F32({1, 1, 1}, {3}), Size(2)});
  EXPECT_EQ(s.message(), "STFT 'node': window shape 3 must be frame_length 2");
  s = RunError("STFT", {}, {Signal(), Size(0), Tensor(), Size(2)});
  EXPECT_EQ(s.message(),
            "STFT 'node': frame_step 0 and frame_length 2 must be >= 1, the frame no longer than "
            "the signal (4)");
}

// ---- MelWeightMatrix --------------------------------------------------------

std::vector<Tensor> MelInputs(int64_t bins, int64_t dft, int64_t rate, float lo, float hi) {
  return {I64({bins}, {}), I64({dft}, {}), I64({rate}, {}), F32({lo}, {}), F32({hi}, {})};
}

TEST(MelWeightMatrix, Triangles_between_mel_spaced_edges) {
  // Edges at spectrum bins 0, 2, 4, 6 (up to 8 Hz of 16, nearly linear).
  Tensor y = Run1("MelWeightMatrix", {}, MelInputs(2, 16, 16, 0, 8));
  EXPECT_EQ(y.shape(), (Shape{9, 2}));
  EXPECT_THAT(Doubles(y),
              Pointwise(DoubleNear(1e-9), std::vector<double>{0, 0, 0.5, 0, 1, 0, 0.5, 0.5, 0, 1, 0,
                                                              0.5, 0, 0, 0, 0, 0, 0}));
}

TEST(MelWeightMatrix, MelWeightMatrix_rejects_bands_past_the_spectrum) {
  Status s = RunError("MelWeightMatrix", {}, MelInputs(2, 8, 1000, 100, 1000));
  EXPECT_THAT(s.message(), HasSubstr("MelWeightMatrix 'node': mel band edge 3 ("));
  EXPECT_THAT(
      s.message(),
      HasSubstr("Hz) falls outside the 5 spectrum bins of dft_length 8 at sample_rate 1000"));
}

}  // namespace
}  // namespace tessel::ops
