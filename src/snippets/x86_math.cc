// Transcendental emitters: exp, expm1 (for Elu/Selu), log, erf, tanh and
// sigmoid as branch-free polynomial approximations in float, with FMA.
//
// Maximum error over every float input (bench/snippets/approx_error, all
// 2^32 bit patterns), against the function evaluated in double; "ulp" is the
// spacing of floats at the exact result, "rel" is |error| / |exact| in units
// of FLT_EPSILON (2^-23). Results below FLT_MIN are compared in absolute
// terms (all within 1.4e-45). docs/benchmarks.md records the sweep;
// approx_error_test.cc checks a dense sample of it against these bounds.
//
//   exp 1.01 ulp / 0.71 rel   log 0.83 / 0.68   erf 1.90 / 1.05
//   tanh 1.33 / 1.19          sigmoid 2.40 / 1.50   expm1 0.86 / 0.73
//
//   exp      Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2; Cephes degree-5
//            polynomial for (e^r - 1 - r) / r^2; 2^n applied in two halves so
//            results in the subnormal range and overflow round correctly.
//   expm1    the same reduction; 2^n (1 + s) - 1 evaluated as fma(2^n, s, 2^n - 1),
//            exact in the subtraction, so Elu keeps relative accuracy near 0.
//   log      x = m 2^e with m in [sqrt(1/2), sqrt(2)); Cephes degree-8
//            polynomial for log(1 + f); subnormal inputs pre-scaled by 2^23;
//            0 -> -inf, negative and NaN -> NaN, +inf -> +inf.
//   erf      |x| < 1.2: erf = a c0 + a z Q(z), z = a^2, c0 = 2/sqrt(pi) split in
//            two floats (the leading term carries no rounding); |x| >= 1.2:
//            erf = 1 - B(a)^8 with B ~ erfc^(1/8) on [1.2, 3.92] in (a - 2.56),
//            the last squaring fused into the subtraction;
//            |x| is clamped to 3.92, where erf rounds to 1. Coefficients from
//            mpmath Chebyshev fits (the fitting script was never committed;
//            bench/snippets/approx_error checks the result). AVX-512 runs
//            both ranges as one Horner chain with per-lane coefficients, AVX2
//            as two chains: the same arithmetic per lane, identical bits.
//   tanh     |x| < 0.625: x + x^3 P(x^2) (Cephes); else 1 - 2 / (e^2|x| + 1)
//            with |x| clamped to 9, where tanh rounds to 1; sign restored.
//   sigmoid  e = exp(-|x|); (x >= 0 ? 1 : e) / (1 + e), as the reference.
#include <cmath>
#include <iterator>
#include <vector>

#include "core/check.h"
#include "snippets/x86_emitters.h"

namespace tessel::snippets::x86 {

using Xbyak::Operand;
using Xbyak::Xmm;

namespace {

constexpr float kLog2e = 1.44269504088896341f;
// ln 2 = kLn2Hi - kLn2LoNeg; kLn2Hi is ln 2 rounded to float.
constexpr float kLn2Hi = 0.693147182464599609375f;
constexpr float kLn2LoNeg = 1.904654323148236e-09f;
// Cephes expf: e^r = 1 + r + r^2 P(r).
constexpr float kExpPoly[] = {1.9875691500E-4f, 1.3981999507E-3f, 8.3334519073E-3f,
                              4.1665795894E-2f, 1.6666665459E-1f, 5.0000001201E-1f};
// Cephes logf: log(1 + f) = f - f^2/2 + f^3 P(f).
constexpr float kLogPoly[] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                              -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                              2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
// Cephes tanhf on |x| < 0.625: tanh = x + x^3 P(x^2).
constexpr float kTanhPoly[] = {-5.70498872745E-3f, 2.06390887954E-2f, -5.37397155531E-2f,
                               1.33314422036E-1f, -3.33332819422E-1f};
// erf on |x| < 1.2: Q(z) with erf = a c0 + a z Q(z).
constexpr float kErfSmall[] = {-8.685049046597252e-06f, 0.00010939206661396978f,
                               -0.0008444026299542449f, 0.005218862551693147f,
                               -0.02686496191991847f,   0.11283780876859625f,
                               -0.3761263874481831f};
constexpr float kErfC0Hi = 1.128379225730896f;       // 2/sqrt(pi) rounded to float
constexpr float kErfC0Lo = -5.863538342219759e-08f;  // 2/sqrt(pi) - kErfC0Hi
constexpr float kErfSplit = 1.2f;
constexpr float kErfClamp = 3.92f;
constexpr float kErfCenter = 2.56f;
// erf on [1.2, 3.92]: B(a - 2.56) ~ erfc(a)^(1/8).
constexpr float kErfLarge[] = {5.974014541349324e-07f,   -3.477634400915995e-06f,
                               -1.5332953650209482e-05f, 0.0001664125590602499f,
                               -3.759287544635126e-05f,  -0.0037587451324565826f,
                               0.009525630969045075f,    0.04168772161242262f,
                               -0.24726246248840086f,    0.36188744117897864f};

// p(x) by Horner, p's coefficients highest degree first: acc = coef[0], then
// acc = acc * x + coef[i].
template <size_t N>
void Horner(JitContext& c, const Xmm& acc, const Xmm& x, const float (&coef)[N]) {
  c.LoadConst(acc, coef[0]);
  for (size_t i = 1; i < N; ++i) c.g.vfmadd213ps(acc, x, c.Const(coef[i]));
}

// One copy's registers for the exp helpers: `x` is read first and may be
// `out`; t is clobbered.
struct ExpRegs {
  const Operand* x;
  Xmm out;
  Xmm t[4];
};

// The helpers emit each step for every copy before the next step, so that
// independent copies (the unrolled vector tile) overlap their chains; each
// copy runs the same instructions whatever the number of copies.
template <typename Step>
void Each(std::vector<ExpRegs>& r, const Step& step) {
  for (ExpRegs& q : r) step(q);
}

// The shared part of exp and expm1: clamps x to [lo, 89], then leaves
// fx = round(x log2e) in t[1], r in t[2] and s = e^r - 1 in t[3].
void ExpReduce(JitContext& c, std::vector<ExpRegs>& r, float lo) {
  Each(r, [&](ExpRegs& q) { c.LoadConst(q.t[0], lo); });
  Each(r, [&](ExpRegs& q) { c.g.vmaxps(q.t[0], q.t[0], *q.x); });  // (lo > x) ? lo : x keeps NaN
  Each(r, [&](ExpRegs& q) { c.LoadConst(q.t[1], 89.0f); });
  Each(r, [&](ExpRegs& q) { c.g.vminps(q.t[0], q.t[1], q.t[0]); });
  Each(r, [&](ExpRegs& q) { c.g.vmulps(q.t[1], q.t[0], c.Const(kLog2e)); });
  Each(r, [&](ExpRegs& q) { c.Round(q.t[1], q.t[1], 0x08); });
  Each(r, [&](ExpRegs& q) { c.g.vmovaps(q.t[2], q.t[0]); });
  Each(r, [&](ExpRegs& q) { c.g.vfnmadd231ps(q.t[2], q.t[1], c.Const(kLn2Hi)); });
  Each(r, [&](ExpRegs& q) { c.g.vfmadd231ps(q.t[2], q.t[1], c.Const(kLn2LoNeg)); });
  // Horner's scheme, as Horner() above.
  Each(r, [&](ExpRegs& q) { c.LoadConst(q.t[3], kExpPoly[0]); });
  for (size_t i = 1; i < std::size(kExpPoly); ++i) {
    Each(r, [&](ExpRegs& q) { c.g.vfmadd213ps(q.t[3], q.t[2], c.Const(kExpPoly[i])); });
  }
  Each(r, [&](ExpRegs& q) { c.g.vmulps(q.t[0], q.t[2], q.t[2]); });
  Each(r, [&](ExpRegs& q) { c.g.vfmadd213ps(q.t[3], q.t[0], q.t[2]); });
}

// out = e^x for every copy.
void ExpCore(JitContext& c, std::vector<ExpRegs>& r) {
  ExpReduce(c, r, -104.0f);
  Each(r, [&](ExpRegs& q) { c.g.vaddps(q.t[3], q.t[3], c.Const(1.0f)); });
  // 2^n as 2^(n>>1) * 2^(n - (n>>1)): both halves are normal floats for every
  // n in [-150, 128], and the second product rounds once.
  Each(r, [&](ExpRegs& q) { c.g.vcvtps2dq(q.t[1], q.t[1]); });
  Each(r, [&](ExpRegs& q) { c.g.vpsrad(q.t[0], q.t[1], 1); });
  Each(r, [&](ExpRegs& q) { c.g.vpsubd(q.t[1], q.t[1], q.t[0]); });
  Each(r, [&](ExpRegs& q) { c.g.vpaddd(q.t[0], q.t[0], c.Bits(127)); });
  Each(r, [&](ExpRegs& q) { c.g.vpslld(q.t[0], q.t[0], 23); });
  Each(r, [&](ExpRegs& q) { c.g.vpaddd(q.t[1], q.t[1], c.Bits(127)); });
  Each(r, [&](ExpRegs& q) { c.g.vpslld(q.t[1], q.t[1], 23); });
  Each(r, [&](ExpRegs& q) { c.g.vmulps(q.t[3], q.t[3], q.t[0]); });
  Each(r, [&](ExpRegs& q) { c.g.vmulps(q.out, q.t[3], q.t[1]); });
}

// out = e^x; `x` may be `out`, it is read first. Clobbers t.
void ExpCore(JitContext& c, const Operand& x, const Xmm& out, const Xmm (&t)[4]) {
  std::vector<ExpRegs> one = {{&x, out, {t[0], t[1], t[2], t[3]}}};
  ExpCore(c, one);
}

// out = e^x - 1 for x < 0 (other lanes are not meaningful). Below -87 the
// result is -1 in float; the clamp keeps 2^n normal.
void Expm1Core(JitContext& c, const Operand& x, const Xmm& out, const Xmm (&t)[4]) {
  std::vector<ExpRegs> one = {{&x, out, {t[0], t[1], t[2], t[3]}}};
  ExpReduce(c, one, -87.0f);
  c.g.vcvtps2dq(t[1], t[1]);
  c.g.vpaddd(t[1], t[1], c.Bits(127));
  c.g.vpslld(t[1], t[1], 23);
  c.g.vsubps(t[0], t[1], c.Const(1.0f));
  c.g.vfmadd213ps(t[3], t[1], t[0]);
  c.g.vmovaps(out, t[3]);
}

}  // namespace

void EmitExp(JitContext& c, Emission& e) {
  const Xmm t[4] = {e.Aux(), e.Aux(), e.Aux(), e.Aux()};
  ExpCore(c, e.Src(0), e.Dst(), t);
}

void EmitElu(JitContext& c, Emission& e) {
  const Xmm x = e.SrcReg(0);
  const Xmm r = e.Aux();
  const Xmm t[4] = {e.Aux(), e.Aux(), e.Aux(), e.Aux()};
  Expm1Core(c, x, r, t);
  c.g.vmulps(r, r, c.Const(e.in().attr[0]));
  const Mask negative = c.Compare(x, c.Const(0.0f), kCmpLtOq, t[0]);
  c.Blend(e.Dst(), x, r, negative);
}

void EmitSelu(JitContext& c, Emission& e) {
  const Xmm x = e.SrcReg(0);
  const Xmm r = e.Aux();
  const Xmm t[4] = {e.Aux(), e.Aux(), e.Aux(), e.Aux()};
  const Xmm scaled = e.Aux();
  Expm1Core(c, x, r, t);
  c.g.vmulps(r, r, c.Const(e.in().attr[1]));
  c.g.vmulps(scaled, x, c.Const(e.in().attr[0]));
  const Mask positive = c.Compare(x, c.Const(0.0f), kCmpGtOq, t[0]);
  c.Blend(e.Dst(), r, scaled, positive);
}

void EmitLog(JitContext& c, Emission& e) {
  const Xmm x = e.SrcReg(0);
  const Xmm m = e.Aux(), ex = e.Aux(), t2 = e.Aux(), y = e.Aux(), mask_tmp = e.Aux();
  // Subnormal inputs: scale by 2^23 first and subtract 23 from the exponent.
  Mask tiny = c.Compare(x, c.Const(1.17549435e-38f), kCmpLtOq, mask_tmp);
  c.g.vmulps(m, x, c.Const(8388608.0f));
  c.Blend(m, x, m, tiny);
  c.MaskSelect(t2, tiny, c.Const(-23.0f));
  c.g.vpsrld(ex, m, 23);
  c.g.vpsubd(ex, ex, c.Bits(126));
  c.g.vcvtdq2ps(ex, ex);
  c.g.vaddps(ex, ex, t2);
  c.And(m, m, c.Bits(0x007FFFFFu));
  c.Or(m, m, c.Bits(0x3F000000u));  // m in [0.5, 1)
  // m < sqrt(1/2): use 2m - 1 and e - 1, so the argument stays near 0.
  Mask low = c.Compare(m, c.Const(0.707106781186547524f), kCmpLtOq, mask_tmp);
  c.MaskToOne(t2, low);
  c.g.vsubps(ex, ex, t2);
  c.MaskSelect(t2, low, m);
  c.g.vaddps(m, m, t2);
  c.g.vsubps(m, m, c.Const(1.0f));
  c.g.vmulps(t2, m, m);  // z = f^2
  Horner(c, y, m, kLogPoly);
  c.g.vmulps(y, y, m);
  c.g.vmulps(y, y, t2);
  c.g.vfmadd231ps(y, ex, c.Const(-2.12194440e-4f));
  c.g.vfmadd231ps(y, t2, c.Const(-0.5f));
  c.g.vaddps(y, y, m);
  c.g.vfmadd231ps(y, ex, c.Const(0.693359375f));
  // Special inputs, read from the untouched x (the op does not alias).
  Mask inf = c.Compare(x, c.Const(INFINITY), kCmpEqOq, mask_tmp);
  c.Blend(y, y, c.Const(INFINITY), inf);
  Mask zero = c.Compare(x, c.Const(0.0f), kCmpEqOq, mask_tmp);
  c.Blend(y, y, c.Const(-INFINITY), zero);
  Mask not_positive = c.Compare(x, c.Const(0.0f), kCmpNgeUq, mask_tmp);
  c.Blend(e.Dst(), y, c.Const(NAN), not_positive);
}

namespace {

// AVX-512: one Horner chain for both ranges instead of two. Lanes below the
// split evaluate the small-range polynomial in z, the others the large-range
// one in a - 2.56, each lane picking its coefficients with a k-masked blend.
// The small polynomial is three coefficients shorter: its lanes take S0 by a
// masked move at the step where the large chain adds L3 (0 * z + S0 would
// be S0 too), so every lane computes bit for bit what the two-chain AVX2
// code computes, with nine FMAs instead of fifteen.
//
// The copies (unrolled vectors, one k register each) are emitted step by
// step, interleaved: the chain is some 60 cycles deep, and one vector at a
// time leaves the FP pipes waiting on it.
void EmitErfAvx512(JitContext& c, std::vector<Emission>& copies) {
  constexpr size_t kLead = std::size(kErfLarge) - std::size(kErfSmall);
  struct Regs {
    Xmm x, a, z, acc, v, coef;
    Xbyak::Opmask small;
  };
  std::vector<Regs> r;
  for (Emission& e : copies) {
    TESSEL_CHECK(r.size() < 7);
    const Xmm x = e.SrcReg(0);
    r.push_back({x, e.Aux(), e.Aux(), e.Aux(), e.Aux(), e.Dst(),
                 Xbyak::Opmask(1 + static_cast<int>(r.size()))});
  }
  auto each = [&](const auto& step) {
    for (Regs& q : r) step(q);
  };
  each([&](Regs& q) { c.And(q.a, q.x, c.Bits(0x7FFFFFFFu)); });
  each([&](Regs& q) { c.LoadConst(q.z, kErfClamp); });
  each([&](Regs& q) { c.g.vminps(q.a, q.z, q.a); });  // a NaN stays NaN
  each([&](Regs& q) { c.g.vcmpps(q.small, q.a, c.Const(kErfSplit), kCmpLtOq); });
  each([&](Regs& q) { c.g.vmulps(q.z, q.a, q.a); });
  each([&](Regs& q) { c.g.vsubps(q.v, q.a, c.Const(kErfCenter)); });
  each([&](Regs& q) { c.g.vmovaps(q.v | q.small, q.z); });
  each([&](Regs& q) { c.LoadConst(q.acc, kErfLarge[0]); });
  for (size_t i = 1; i <= kLead; ++i) {
    each([&](Regs& q) { c.g.vfmadd213ps(q.acc, q.v, c.Const(kErfLarge[i])); });
  }
  each([&](Regs& q) { c.g.vmovaps(q.acc | q.small, c.Const(kErfSmall[0])); });
  for (size_t i = kLead + 1; i < std::size(kErfLarge); ++i) {
    each([&](Regs& q) { c.LoadConst(q.coef, kErfLarge[i]); });
    each([&](Regs& q) { c.g.vmovaps(q.coef | q.small, c.Const(kErfSmall[i - kLead])); });
    each([&](Regs& q) { c.g.vfmadd213ps(q.acc, q.v, q.coef); });
  }
  // Small: a c0 + a z Q, c0 in two parts. Large: 1 - B^8.
  each([&](Regs& q) { c.g.vmulps(q.v, q.a, q.z); });
  each([&](Regs& q) { c.g.vmulps(q.v, q.v, q.acc); });
  each([&](Regs& q) { c.g.vfmadd231ps(q.v, q.a, c.Const(kErfC0Lo)); });
  each([&](Regs& q) { c.g.vfmadd231ps(q.v, q.a, c.Const(kErfC0Hi)); });
  each([&](Regs& q) { c.g.vmulps(q.acc, q.acc, q.acc); });
  each([&](Regs& q) { c.g.vmulps(q.acc, q.acc, q.acc); });
  each([&](Regs& q) { c.g.vfnmadd213ps(q.acc, q.acc, c.Const(1.0f)); });
  each([&](Regs& q) { c.g.vblendmps(q.coef | q.small, q.acc, q.v); });
  each([&](Regs& q) { c.CopySign(q.coef, q.coef, q.x, q.z); });
}

// AVX2: the two ranges as two Horner chains (a per-lane choice of
// coefficients costs a vblendvps or a vpermilps per step here, and measured
// slower than the six FMAs it saves), the copies interleaved step by step
// as on AVX-512 (1.05x on the Xeon of docs/benchmarks.md, rows in L2).
void EmitErfAvx2(JitContext& c, std::vector<Emission>& copies) {
  struct Regs {
    Xmm x, a, z, small, large, d;
  };
  std::vector<Regs> r;
  for (Emission& e : copies) {
    r.push_back({e.SrcReg(0), e.Aux(), e.Aux(), e.Aux(), e.Aux(), e.Dst()});
  }
  auto each = [&](const auto& step) {
    for (Regs& q : r) step(q);
  };
  each([&](Regs& q) { c.And(q.a, q.x, c.Bits(0x7FFFFFFFu)); });
  each([&](Regs& q) { c.LoadConst(q.z, kErfClamp); });
  each([&](Regs& q) { c.g.vminps(q.a, q.z, q.a); });  // a NaN stays NaN
  each([&](Regs& q) { c.g.vmulps(q.z, q.a, q.a); });
  each([&](Regs& q) { c.g.vsubps(q.d, q.a, c.Const(kErfCenter)); });
  // Horner in z (small range) and in a - 2.56 (large range), side by side.
  each([&](Regs& q) { c.LoadConst(q.small, kErfSmall[0]); });
  each([&](Regs& q) { c.LoadConst(q.large, kErfLarge[0]); });
  for (size_t i = 1; i < std::size(kErfLarge); ++i) {
    if (i < std::size(kErfSmall)) {
      each([&](Regs& q) { c.g.vfmadd213ps(q.small, q.z, c.Const(kErfSmall[i])); });
    }
    each([&](Regs& q) { c.g.vfmadd213ps(q.large, q.d, c.Const(kErfLarge[i])); });
  }
  // Small: a c0 + a z Q, c0 in two parts. Large: 1 - B^8, the last squaring
  // fused into the subtraction.
  each([&](Regs& q) { c.g.vmulps(q.d, q.a, q.z); });
  each([&](Regs& q) { c.g.vmulps(q.d, q.d, q.small); });
  each([&](Regs& q) { c.g.vfmadd231ps(q.d, q.a, c.Const(kErfC0Lo)); });
  each([&](Regs& q) { c.g.vfmadd231ps(q.d, q.a, c.Const(kErfC0Hi)); });
  each([&](Regs& q) { c.g.vmulps(q.large, q.large, q.large); });
  each([&](Regs& q) { c.g.vmulps(q.large, q.large, q.large); });
  each([&](Regs& q) { c.g.vfnmadd213ps(q.large, q.large, c.Const(1.0f)); });
  each([&](Regs& q) { c.g.vcmpps(q.z, q.a, c.Const(kErfSplit), kCmpLtOq); });
  each([&](Regs& q) { c.g.vblendvps(q.d, q.large, q.d, q.z); });
  each([&](Regs& q) { c.CopySign(q.d, q.d, q.x, q.z); });
}

}  // namespace

void EmitErfInterleaved(JitContext& c, std::vector<Emission>& copies) {
  if (c.avx512) {
    EmitErfAvx512(c, copies);
  } else {
    EmitErfAvx2(c, copies);
  }
}

void EmitErf(JitContext& c, Emission& e) {
  std::vector<Emission> one{e};
  EmitErfInterleaved(c, one);
}

void EmitTanh(JitContext& c, Emission& e) {
  const Xmm x = e.SrcReg(0);
  const Xmm a = e.Aux(), big = e.Aux(), small = e.Aux();
  const Xmm t[4] = {e.Aux(), e.Aux(), e.Aux(), e.Aux()};
  c.And(a, x, c.Bits(0x7FFFFFFFu));
  // Small |x|: x + (P(z) z) x.
  c.g.vmulps(big, x, x);
  Horner(c, small, big, kTanhPoly);
  c.g.vmulps(small, small, big);
  c.g.vfmadd213ps(small, x, x);
  // Large |x|: 1 - 2 / (e^2|x| + 1), sign of x.
  c.LoadConst(big, 9.0f);
  c.g.vminps(big, big, a);
  c.g.vaddps(big, big, big);
  ExpCore(c, big, big, t);
  c.g.vaddps(big, big, c.Const(1.0f));
  c.LoadConst(t[0], 2.0f);
  c.g.vdivps(big, t[0], big);
  c.LoadConst(t[0], 1.0f);
  c.g.vsubps(big, t[0], big);
  c.CopySign(big, big, x, t[0]);
  const Mask use_small = c.Compare(a, c.Const(0.625f), kCmpLtOq, t[0]);
  c.Blend(e.Dst(), big, small, use_small);
}

// e = exp(-|x|); (x >= 0 ? 1 : e) / (1 + e), as the reference; the copies
// interleaved step by step, as erf's.
void EmitSigmoidInterleaved(JitContext& c, std::vector<Emission>& copies) {
  TESSEL_CHECK(copies.size() < 8);
  std::vector<Xmm> x, ex;
  std::vector<ExpRegs> r;
  for (Emission& e : copies) {
    x.push_back(e.SrcReg(0));
    ex.push_back(e.Aux());
  }
  for (size_t j = 0; j < copies.size(); ++j) {
    Emission& e = copies[j];
    r.push_back({&ex[j], ex[j], {e.Aux(), e.Aux(), e.Aux(), e.Aux()}});
  }
  for (size_t j = 0; j < r.size(); ++j) c.Or(ex[j], x[j], c.Bits(0x80000000u));  // -|x|
  ExpCore(c, r);
  Each(r, [&](ExpRegs& q) { c.g.vaddps(q.t[0], q.out, c.Const(1.0f)); });
  for (size_t j = 0; j < r.size(); ++j) {
    const Mask non_negative =
        c.Compare(x[j], c.Const(0.0f), kCmpGeOq, r[j].t[1], 1 + static_cast<int>(j));
    c.Blend(r[j].t[2], ex[j], c.Const(1.0f), non_negative);
  }
  for (size_t j = 0; j < r.size(); ++j) c.g.vdivps(copies[j].Dst(), r[j].t[2], r[j].t[0]);
}

void EmitSigmoid(JitContext& c, Emission& e) {
  std::vector<Emission> one{e};
  EmitSigmoidInterleaved(c, one);
}

}  // namespace tessel::snippets::x86
