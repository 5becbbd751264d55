#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ops/op_registry.h"

namespace tessel::ops {
namespace {

Tensor F32(const std::vector<float>& v, const Shape& s) { return Tensor::FromVector<float>(v, s); }

Tensor RandomF32(const Shape& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(NumElements(s)));
  for (float& x : v) x = dist(rng);
  return F32(v, s);
}

// Runs a one-output op; an undefined Tensor (and a test failure) on error.
Tensor RunOne(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& in,
              int opset = 17) {
  StatusOr<std::vector<Tensor>> r = RunSingleOp(op, attrs, in, 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return Tensor();
  return r.value()[0];
}

Status RunError(const std::string& op, const AttributeMap& attrs, const std::vector<Tensor>& in,
                int opset = 17) {
  StatusOr<std::vector<Tensor>> r = RunSingleOp(op, attrs, in, 1, opset);
  return r.status();
}

void ExpectValues(const Tensor& t, const Shape& shape, const std::vector<double>& expected,
                  double tol = 0.0) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.shape(), shape) << ShapeToString(t.shape());
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(expected.size()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    EXPECT_NEAR(t.GetAsDouble(i), expected[i], tol) << "element " << i;
  }
}

void ExpectClose(const Tensor& actual, const Tensor& expected, double tol) {
  ASSERT_TRUE(actual.defined());
  ASSERT_EQ(actual.shape(), expected.shape()) << ShapeToString(actual.shape());
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    ASSERT_NEAR(actual.GetAsDouble(i), expected.GetAsDouble(i), tol) << "element " << i;
  }
}

AttributeMap Attrs(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  AttributeMap m;
  for (const auto& [k, v] : kv) m.Set(k, v);
  return m;
}

// numpy matmul written out index by index: promote 1-D operands, broadcast
// the batch dimensions by clamping indices of size-1 dimensions, then a
// triple loop per output matrix.
Tensor NaiveMatMul(const Tensor& a, const Tensor& b) {
  Shape sa = a.shape(), sb = b.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  const size_t batch_rank = std::max(sa.size(), sb.size()) - 2;
  Shape ba(batch_rank, 1), bb(batch_rank, 1), batch(batch_rank, 1);
  for (size_t i = 0; i + 2 < sa.size(); ++i) ba[batch_rank - (sa.size() - 2) + i] = sa[i];
  for (size_t i = 0; i + 2 < sb.size(); ++i) bb[batch_rank - (sb.size() - 2) + i] = sb[i];
  for (size_t i = 0; i < batch_rank; ++i) batch[i] = std::max(ba[i], bb[i]);
  Shape out_shape = batch;
  if (a.rank() > 1) out_shape.push_back(m);
  if (b.rank() > 1) out_shape.push_back(n);
  Tensor out(DType::kFloat32, out_shape);
  float* o = out.data<float>();
  const int64_t batches = NumElements(batch);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi, a_off = 0, b_off = 0, a_mul = 1, b_mul = 1;
    for (int64_t d = static_cast<int64_t>(batch_rank) - 1; d >= 0; --d) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      a_off += (ba[d] == 1 ? 0 : idx) * a_mul;
      b_off += (bb[d] == 1 ? 0 : idx) * b_mul;
      a_mul *= ba[d];
      b_mul *= bb[d];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum +=
              a.GetAsDouble(a_off * m * k + i * k + p) * b.GetAsDouble(b_off * k * n + p * n + j);
        }
        o[bi * m * n + i * n + j] = static_cast<float>(sum);
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// MatMul

TEST(MatMulTest, TwoByThreeTimesThreeByTwo) {
  Tensor y =
      RunOne("MatMul", {}, {F32({1, 2, 3, 4, 5, 6}, {2, 3}), F32({7, 8, 9, 10, 11, 12}, {3, 2})});
  ExpectValues(y, {2, 2}, {58, 64, 139, 154});
}

TEST(MatMulTest, OneDimensionalPromotions) {
  std::mt19937 rng(1);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{4}, {4, 3}}, {{2, 4}, {4}}, {{4}, {4}}, {{4}, {2, 4, 3}}, {{2, 3, 4}, {4}}};
  const std::vector<Shape> expected_shapes = {{3}, {2}, {}, {2, 3}, {2, 3}};
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(ShapeToString(cases[c].first) + " @ " + ShapeToString(cases[c].second));
    Tensor a = RandomF32(cases[c].first, rng), b = RandomF32(cases[c].second, rng);
    Tensor y = RunOne("MatMul", {}, {a, b});
    ASSERT_TRUE(y.defined());
    EXPECT_EQ(y.shape(), expected_shapes[c]);
    ExpectClose(y, NaiveMatMul(a, b), 1e-5);
  }
}

TEST(MatMulTest, BatchBroadcasting) {
  std::mt19937 rng(2);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 1, 3, 4}, {5, 4, 2}}, {{3, 4}, {2, 4, 5}}, {{2, 3, 4}, {1, 4, 5}}, {{1, 2, 3}, {3, 1}}};
  const std::vector<Shape> expected_shapes = {{2, 5, 3, 2}, {2, 3, 5}, {2, 3, 5}, {1, 2, 1}};
  for (size_t c = 0; c < cases.size(); ++c) {
    SCOPED_TRACE(ShapeToString(cases[c].first) + " @ " + ShapeToString(cases[c].second));
    Tensor a = RandomF32(cases[c].first, rng), b = RandomF32(cases[c].second, rng);
    Tensor y = RunOne("MatMul", {}, {a, b});
    ASSERT_TRUE(y.defined());
    EXPECT_EQ(y.shape(), expected_shapes[c]);
    ExpectClose(y, NaiveMatMul(a, b), 1e-5);
  }
}

TEST(MatMulTest, IntegerTypes) {
  Tensor y32 = RunOne("MatMul", {},
                      {Tensor::FromVector<int32_t>({1, -2, 3, 4}, {2, 2}),
                       Tensor::FromVector<int32_t>({5, 6, -7, 8}, {2, 2})});
  ASSERT_EQ(y32.dtype(), DType::kInt32);
  ExpectValues(y32, {2, 2}, {19, -10, -13, 50});
  Tensor y64 = RunOne("MatMul", {},
                      {Tensor::FromVector<int64_t>({3000000000LL, 1}, {1, 2}),
                       Tensor::FromVector<int64_t>({2, 5}, {2, 1})});
  ASSERT_EQ(y64.dtype(), DType::kInt64);
  ExpectValues(y64, {1, 1}, {6000000005.0});
}

TEST(MatMulTest, Float64AndFloat16) {
  Tensor y = RunOne("MatMul", {},
                    {Tensor::FromVector<double>({0.5, 0.25}, {2}),
                     Tensor::FromVector<double>({2, 4, 8, 16}, {2, 2})});
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  ExpectValues(y, {2}, {3, 6});

  auto half = [](std::vector<float> v, Shape s) {
    std::vector<Half> h;
    for (float f : v) h.push_back(Half{FloatToHalf(f)});
    return Tensor::FromVector<Half>(h, s);
  };
  Tensor yh = RunOne("MatMul", {},
                     {half({1, 2, 3, 4, 5, 6}, {2, 3}), half({1, 0.5f, -1, 2, 0.25f, 0}, {3, 2})});
  ASSERT_EQ(yh.dtype(), DType::kFloat16);
  ExpectValues(yh, {2, 2}, {-0.25, 4.5, 0.5, 12});
}

// Large enough to cross the kernel's blocking; timing belongs in bench/.
TEST(MatMulTest, LargeProductIsCorrect) {
  std::mt19937 rng(3);
  Tensor a = RandomF32({128, 256}, rng), b = RandomF32({256, 1024}, rng);
  Tensor y = RunOne("MatMul", {}, {a, b});
  ASSERT_TRUE(y.defined());
  ASSERT_EQ(y.shape(), (Shape{128, 1024}));
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t i = 0; i < 128; i += 17) {
    for (int64_t j = 0; j < 1024; j += 97) {
      double sum = 0;
      for (int64_t p = 0; p < 256; ++p) sum += double{pa[i * 256 + p]} * pb[p * 1024 + j];
      EXPECT_NEAR(y.GetAsDouble(i * 1024 + j), sum, 1e-4) << i << "," << j;
    }
  }
}

TEST(MatMulTest, MatMul_rejects_inner_dimension_mismatch) {
  Status s = RunError(
      "MatMul", {}, {Tensor(DType::kFloat32, {1, 128, 256}), Tensor(DType::kFloat32, {512, 256})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "MatMul 'node': inner dimensions differ: 1x128x256 @ 512x256");
}

TEST(MatMulTest, MatMul_rejects_unbroadcastable_batch) {
  Status s = RunError("MatMul", {},
                      {Tensor(DType::kFloat32, {2, 3, 4}), Tensor(DType::kFloat32, {3, 4, 5})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "MatMul 'node': batch dimensions do not broadcast: 2x3x4 @ 3x4x5");
}

TEST(MatMulTest, MatMul_rejects_scalar_and_mixed_dtypes) {
  Status s = RunError("MatMul", {}, {Tensor(DType::kFloat32, {}), Tensor(DType::kFloat32, {3})});
  EXPECT_EQ(s.message(), "MatMul 'node': inputs must have rank >= 1: scalar @ 3");
  s = RunError("MatMul", {}, {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kInt32, {3, 2})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("must have the same dtype"), std::string::npos) << s.message();
  s = RunError("MatMul", {}, {Tensor(DType::kUInt8, {2, 3}), Tensor(DType::kUInt8, {3, 2})});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

// ---------------------------------------------------------------------------
// Gemm

// A = [[1,2,3],[4,5,6]], B = [[1,2],[3,4],[5,6]]: A @ B = [[22,28],[49,64]].
const std::vector<float> kGemmA = {1, 2, 3, 4, 5, 6};
const std::vector<float> kGemmAT = {1, 4, 2, 5, 3, 6};
const std::vector<float> kGemmB = {1, 2, 3, 4, 5, 6};
const std::vector<float> kGemmBT = {1, 3, 5, 2, 4, 6};

TEST(GemmTest, EachTransposeFlag) {
  ExpectValues(RunOne("Gemm", {}, {F32(kGemmA, {2, 3}), F32(kGemmB, {3, 2})}), {2, 2},
               {22, 28, 49, 64});
  ExpectValues(
      RunOne("Gemm", Attrs({{"transA", int64_t{1}}}), {F32(kGemmAT, {3, 2}), F32(kGemmB, {3, 2})}),
      {2, 2}, {22, 28, 49, 64});
  ExpectValues(
      RunOne("Gemm", Attrs({{"transB", int64_t{1}}}), {F32(kGemmA, {2, 3}), F32(kGemmBT, {2, 3})}),
      {2, 2}, {22, 28, 49, 64});
  ExpectValues(RunOne("Gemm", Attrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}}),
                      {F32(kGemmAT, {3, 2}), F32(kGemmBT, {2, 3})}),
               {2, 2}, {22, 28, 49, 64});
}

TEST(GemmTest, AlphaBetaAndBroadcastC) {
  const AttributeMap ab = Attrs({{"alpha", 2.0f}, {"beta", 0.5f}});
  const Tensor a = F32(kGemmA, {2, 3}), b = F32(kGemmB, {3, 2});
  // 2 * [[22,28],[49,64]] = [[44,56],[98,128]], plus 0.5 * C.
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({2, 4, 6, 8}, {2, 2})}), {2, 2}, {45, 58, 101, 132});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({10}, {})}), {2, 2}, {49, 61, 103, 133});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({10}, {1})}), {2, 2}, {49, 61, 103, 133});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({2, 4}, {2})}), {2, 2}, {45, 58, 99, 130});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({2, 4}, {1, 2})}), {2, 2}, {45, 58, 99, 130});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({2, 4}, {2, 1})}), {2, 2}, {45, 57, 100, 130});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({10}, {1, 1})}), {2, 2}, {49, 61, 103, 133});
  ExpectValues(RunOne("Gemm", ab, {a, b}), {2, 2}, {44, 56, 98, 128});
  // beta = 0 ignores C, even a non-finite one.
  ExpectValues(RunOne("Gemm", Attrs({{"beta", 0.0f}}), {a, b, F32({INFINITY}, {})}), {2, 2},
               {22, 28, 49, 64});
}

TEST(GemmTest, Opset6_broadcasts_C_only_with_broadcast_1) {
  const AttributeMap ab = Attrs({{"alpha", 2.0f}, {"beta", 0.5f}});
  const AttributeMap ab_bcast = Attrs({{"alpha", 2.0f}, {"beta", 0.5f}, {"broadcast", int64_t{1}}});
  const Tensor a = F32(kGemmA, {2, 3}), b = F32(kGemmB, {3, 2});
  ExpectValues(RunOne("Gemm", ab_bcast, {a, b, F32({2, 4}, {2})}, 6), {2, 2}, {45, 58, 99, 130});
  ExpectValues(RunOne("Gemm", ab, {a, b, F32({2, 4, 6, 8}, {2, 2})}, 6), {2, 2},
               {45, 58, 101, 132});
  Status s = RunError("Gemm", ab, {a, b, F32({2, 4}, {2})}, 6);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "Gemm 'node': C of shape 2 is not 2x2; before opset 7 (model opset 6) broadcasting C "
            "needs broadcast=1");
}

TEST(GemmTest, Float64) {
  Tensor y =
      RunOne("Gemm", Attrs({{"alpha", 0.5f}}),
             {Tensor::FromVector<double>({1, 2}, {1, 2}),
              Tensor::FromVector<double>({3, 4}, {2, 1}), Tensor::FromVector<double>({1}, {1})});
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  ExpectValues(y, {1, 1}, {6.5});
}

TEST(GemmTest, Gemm_rejects_bad_shapes) {
  Status s =
      RunError("Gemm", {}, {Tensor(DType::kFloat32, {1, 2, 3}), Tensor(DType::kFloat32, {3, 2})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("expected rank 2"), std::string::npos) << s.message();

  s = RunError("Gemm", Attrs({{"transB", int64_t{1}}}),
               {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat32, {3, 2})});
  EXPECT_EQ(s.message(),
            "Gemm 'node': inner dimensions differ: A 2x3 (transA=0) @ B 3x2 (transB=1)");

  s = RunError("Gemm", {},
               {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat32, {3, 4}),
                Tensor(DType::kFloat32, {3})});
  EXPECT_EQ(s.message(), "Gemm 'node': C of shape 3 does not broadcast to 2x4");
  s = RunError("Gemm", {},
               {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat32, {3, 4}),
                Tensor(DType::kFloat32, {4, 1})});
  EXPECT_EQ(s.message(), "Gemm 'node': C of shape 4x1 does not broadcast to 2x4");
  s = RunError("Gemm", {},
               {Tensor(DType::kFloat32, {2, 3}), Tensor(DType::kFloat32, {3, 4}),
                Tensor(DType::kFloat32, {1, 2, 4})});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------
// Einsum

Tensor Einsum(const std::string& equation, const std::vector<Tensor>& in) {
  return RunOne("Einsum", Attrs({{"equation", equation}}), in, 12);
}

TEST(EinsumTest, MatMulAndImplicitOutput) {
  const Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3}), b = F32({7, 8, 9, 10, 11, 12}, {3, 2});
  ExpectValues(Einsum("ij,jk->ik", {a, b}), {2, 2}, {58, 64, 139, 154});
  ExpectValues(Einsum("ij, jk", {a, b}), {2, 2}, {58, 64, 139, 154});
  // An explicit output may order its labels freely.
  ExpectValues(Einsum("ij,jk->ki", {a, b}), {2, 2}, {58, 139, 64, 154});
}

TEST(EinsumTest, TransposeTraceDiagonal) {
  const Tensor a = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectValues(Einsum("ij->ji", {a}), {3, 2}, {1, 4, 2, 5, 3, 6});
  ExpectValues(Einsum("ba", {a}), {3, 2}, {1, 4, 2, 5, 3, 6});
  ExpectValues(Einsum("ij->", {a}), {}, {21});
  const Tensor sq = F32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  ExpectValues(Einsum("ii->", {sq}), {}, {15});
  ExpectValues(Einsum("ii", {sq}), {}, {15});
  ExpectValues(Einsum("ii->i", {sq}), {3}, {1, 5, 9});
}

TEST(EinsumTest, DotOuterAndIntegers) {
  const Tensor u = F32({1, 2, 3}, {3}), v = F32({4, 5, 6}, {3});
  ExpectValues(Einsum("i,i", {u, v}), {}, {32});
  ExpectValues(Einsum("i,j->ij", {u, F32({1, 10}, {2})}), {3, 2}, {1, 10, 2, 20, 3, 30});
  Tensor yi = Einsum("ij,j->i", {Tensor::FromVector<int32_t>({1, 2, 3, 4}, {2, 2}),
                                 Tensor::FromVector<int32_t>({-1, 1}, {2})});
  ASSERT_EQ(yi.dtype(), DType::kInt32);
  ExpectValues(yi, {2}, {1, 1});
}

TEST(EinsumTest, BatchMatMulMatchesNaive) {
  std::mt19937 rng(4);
  Tensor a = RandomF32({3, 2, 4}, rng), b = RandomF32({3, 4, 5}, rng);
  ExpectClose(Einsum("bij,bjk->bik", {a, b}), NaiveMatMul(a, b), 1e-5);
}

TEST(EinsumTest, EllipsisBroadcasts) {
  std::mt19937 rng(5);
  Tensor a = RandomF32({2, 1, 3, 4}, rng), b = RandomF32({5, 4, 2}, rng);
  ExpectClose(Einsum("...ij,...jk->...ik", {a, b}), NaiveMatMul(a, b), 1e-5);
  // Implicit output puts the '...' dimensions first.
  Tensor t = F32({1, 2, 3, 4, 5, 6}, {2, 3});
  ExpectValues(Einsum("...i", {t}), {2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectValues(Einsum("i...->...i", {t}), {3, 2}, {1, 4, 2, 5, 3, 6});
  ExpectValues(Einsum("...ii->...i", {F32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})}), {2, 2},
               {1, 4, 5, 8});
}

TEST(EinsumTest, Einsum_rejects_bad_equations) {
  const Tensor a(DType::kFloat32, {2, 3}), b(DType::kFloat32, {3, 4});
  auto error = [](const std::string& eq, const std::vector<Tensor>& in) {
    return RunError("Einsum", Attrs({{"equation", eq}}), in, 12).message();
  };
  EXPECT_EQ(error("ij,jk->il", {a, b}),
            "Einsum 'node': equation 'ij,jk->il': output label 'l' does not appear in any input");
  EXPECT_EQ(error("ij,jk->ii", {a, b}),
            "Einsum 'node': equation 'ij,jk->ii': output label 'i' is repeated");
  EXPECT_EQ(error("ij", {a, b}),
            "Einsum 'node': equation 'ij': has 1 input terms but the node has 2 inputs");
  EXPECT_EQ(error("ijk,jk->i", {a, b}),
            "Einsum 'node': equation 'ijk,jk->i': term 'ijk' has 3 labels but input 0 has "
            "shape 2x3");
  EXPECT_EQ(error("i#,jk", {a, b}),
            "Einsum 'node': equation 'i#,jk': invalid character '#' in term 'i#'");
  EXPECT_EQ(error("i..j,jk", {a, b}),
            "Einsum 'node': equation 'i..j,jk': '.' must be part of '...' in term 'i..j'");
  EXPECT_EQ(error("ij,ik->jk", {a, b}),
            "Einsum 'node': equation 'ij,ik->jk': label 'i' has sizes 2 and 3");
  EXPECT_EQ(error("ii->i", {a}),
            "Einsum 'node': equation 'ii->i': label 'i' of input 0 has sizes 2 and 3");
  EXPECT_EQ(error("...j->j", {a}),
            "Einsum 'node': equation '...j->j': the inputs use '...' but the output does not");
  EXPECT_EQ(error("", {a}), "Einsum 'node': attribute 'equation' is missing or empty");
}

}  // namespace
}  // namespace tessel::ops
