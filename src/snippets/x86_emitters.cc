#include "snippets/x86_emitters.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/check.h"

namespace tessel::snippets::x86 {

using Xbyak::Address;
using Xbyak::Operand;
using Xbyak::Xmm;
using Xbyak::Ymm;
using Xbyak::Zmm;

namespace {

uint32_t FloatBits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

}  // namespace

// ---------------------------------------------------------------------------
// JitContext

Xmm JitContext::Vec(int r) const {
  if (lanes == 16) return Zmm(r);
  if (lanes == 8) return Ymm(r);
  return Xmm(r);
}

Xbyak::RegExp JitContext::ArgAddress(const Instr& in) const {
  const KernelArg& arg = ir->args[static_cast<size_t>(in.arg)];
  const Xbyak::Reg64& p = arg_ptr[static_cast<size_t>(in.arg)];
  if (arg.broadcast_inner() || element_offset == 0) return Xbyak::RegExp(p);
  return p + element_offset * static_cast<int>(DTypeSize(arg.dtype));
}

size_t JitContext::SlotIndex(uint32_t bits) {
  auto it = std::find(constants_.begin(), constants_.end(), bits);
  if (it != constants_.end()) return static_cast<size_t>(it - constants_.begin());
  constants_.push_back(bits);
  uses_.push_back(0);
  return constants_.size() - 1;
}

Address JitContext::Slot(uint32_t bits) {
  return g.ptr[g.rip + data_ + static_cast<int>(SlotIndex(bits) * 64)];
}

ConstOperand JitContext::Bits(uint32_t bits) {
  ++uses_[SlotIndex(bits)];
  if (pins_on) {
    for (const auto& [pinned, reg] : pins_) {
      if (pinned == bits) return ConstOperand(Vec(reg));
    }
  }
  return ConstOperand(Slot(bits));
}

ConstOperand JitContext::Const(float v) { return Bits(FloatBits(v)); }

std::vector<uint32_t> JitContext::ConstantsByUse() const {
  std::vector<size_t> order(constants_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return uses_[a] > uses_[b]; });
  std::vector<uint32_t> bits;
  for (size_t i : order) bits.push_back(constants_[i]);
  return bits;
}

void JitContext::EmitData() {
  g.align(64);
  g.L(data_);
  for (uint32_t bits : constants_) {
    for (int lane = 0; lane < 16; ++lane) g.dd(bits);
  }
}

void JitContext::Zero(const Xmm& d) {
  if (avx512) {
    g.vpxord(d, d, d);
  } else {
    g.vxorps(d, d, d);
  }
}

void JitContext::LoadConst(const Xmm& d, float v) {
  if (FloatBits(v) == 0) {
    Zero(d);
  } else {
    const ConstOperand v_op = Const(v);
    const Operand& op = v_op;
    if (op.isMEM()) {
      g.vmovups(d, op);
    } else {
      g.vmovaps(d, op);
    }
  }
}

// AVX-512 has no vandps/vorps without AVX512DQ; the integer forms are AVX512F.
void JitContext::And(const Xmm& d, const Xmm& a, const Operand& b) {
  if (avx512) {
    g.vpandd(d, a, b);
  } else {
    g.vandps(d, a, b);
  }
}

void JitContext::Or(const Xmm& d, const Xmm& a, const Operand& b) {
  if (avx512) {
    g.vpord(d, a, b);
  } else {
    g.vorps(d, a, b);
  }
}

void JitContext::Round(const Xmm& d, const Operand& a, uint8_t mode) {
  if (avx512) {
    g.vrndscaleps(d, a, mode);
  } else {
    g.vroundps(d, a, mode);
  }
}

void JitContext::CopySign(const Xmm& d, const Xmm& magnitude, const Xmm& sign, const Xmm& tmp) {
  if (avx512) {
    // Bitwise select: sign bit from `sign`, the rest from `magnitude`
    // (truth table 0xD8 = C ? B : A with A = d, B = sign, C = the mask).
    if (d.getIdx() != magnitude.getIdx()) g.vmovaps(d, magnitude);
    g.vpternlogd(d, sign, Bits(0x80000000u), 0xD8);
    return;
  }
  g.vandps(tmp, sign, Bits(0x80000000u));
  g.vorps(d, magnitude, tmp);
}

Mask JitContext::Compare(const Xmm& a, const Operand& b, uint8_t pred, const Xmm& vec_tmp,
                         int k_index) {
  if (avx512) {
    const Xbyak::Opmask k(k_index);
    g.vcmpps(k, a, b, pred);
    return Mask{Xmm(), k, true};
  }
  g.vcmpps(vec_tmp, a, b, pred);
  return Mask{vec_tmp, Xbyak::Opmask(), false};
}

void JitContext::Blend(const Xmm& d, const Xmm& if_clear, const Operand& if_set, const Mask& m) {
  if (m.is_k) {
    g.vblendmps(d | m.k, if_clear, if_set);
  } else {
    g.vblendvps(d, if_clear, if_set, m.vec);
  }
}

void JitContext::MaskToOne(const Xmm& d, const Mask& m) { MaskSelect(d, m, Const(1.0f)); }

void JitContext::MaskSelect(const Xmm& d, const Mask& m, const Operand& a) {
  if (m.is_k) {
    if (a.isMEM()) {
      g.vmovups(d | m.k | Xbyak::util::T_z, a);
    } else {
      g.vmovaps(d | m.k | Xbyak::util::T_z, static_cast<const Xmm&>(a));
    }
  } else {
    g.vandps(d, m.vec, a);
  }
}

// ---------------------------------------------------------------------------
// Emission

Emission::Emission(JitContext& c, const Instr& in, std::optional<Xmm> dst,
                   std::vector<std::optional<Xmm>> src_regs, std::vector<float> src_imms,
                   std::vector<Xmm> aux)
    : c_(c),
      in_(in),
      dst_(dst),
      src_regs_(std::move(src_regs)),
      src_imms_(std::move(src_imms)),
      src_mems_(src_regs_.size()),
      aux_(std::move(aux)) {}

const Operand& Emission::Src(size_t i) {
  TESSEL_CHECK(i < src_regs_.size());
  if (src_regs_[i]) return *src_regs_[i];
  if (!src_mems_[i]) src_mems_[i] = c_.Const(src_imms_[i]);
  return *src_mems_[i];
}

Xmm Emission::SrcReg(size_t i) {
  TESSEL_CHECK(i < src_regs_.size());
  if (src_regs_[i]) return *src_regs_[i];
  // Materialized once; later reads of the same source reuse the register.
  const Xmm r = Aux();
  c_.LoadConst(r, src_imms_[i]);
  src_regs_[i] = r;
  return r;
}

Xmm Emission::Aux() {
  TESSEL_CHECK_MSG(next_aux_ < aux_.size(), GetOpInfo(in_.op).name);
  return aux_[next_aux_++];
}

namespace {

// ---------------------------------------------------------------------------
// Memory

const KernelArg& ArgOf(JitContext& c, const Instr& in) {
  return c.ir->args[static_cast<size_t>(in.arg)];
}

// Booleans are bytes 0 or 1, but a tensor from outside may hold any nonzero
// byte for true: clamp to 1.0 so logic and stores see 0.0/1.0 only.
void NormalizeBool(JitContext& c, const Xmm& d) {
  c.g.vcvtdq2ps(d, d);
  c.g.vminps(d, d, c.Const(1.0f));
}

// One element into lane 0 (zeroing the others).
void LoadOne(JitContext& c, const Xmm& d, const KernelArg& arg, const Xbyak::RegExp& p) {
  const Xmm x(d.getIdx());
  if (arg.dtype == DType::kBool) {
    c.g.movzx(c.scratch.cvt32(), c.g.byte[p]);
    c.g.vmovd(x, c.scratch.cvt32());
    NormalizeBool(c, x);
  } else {
    c.g.vmovss(x, c.g.dword[p]);
  }
}

void EmitLoad(JitContext& c, Emission& e) {
  const KernelArg& arg = ArgOf(c, e.in());
  const Xbyak::RegExp p = c.ArgAddress(e.in());
  const Xmm& d = e.Dst();
  if (c.lanes == 1) {
    LoadOne(c, d, arg, p);
  } else if (arg.dtype == DType::kBool) {
    c.g.vpmovzxbd(d, c.g.ptr[p]);
    NormalizeBool(c, d);
  } else {
    c.g.vmovups(d, c.g.ptr[p]);
  }
}

void EmitBroadcastLoad(JitContext& c, Emission& e) {
  const KernelArg& arg = ArgOf(c, e.in());
  const Xbyak::RegExp p = c.ArgAddress(e.in());
  const Xmm& d = e.Dst();
  if (arg.dtype == DType::kBool || c.lanes == 1) {
    LoadOne(c, d, arg, p);
    if (c.lanes > 1) c.g.vbroadcastss(d, Xmm(d.getIdx()));
  } else {
    c.g.vbroadcastss(d, c.g.dword[p]);
  }
}

void EmitBroadcastMove(JitContext& c, Emission& e) {
  c.g.vbroadcastss(e.Dst(), Xmm(e.SrcReg(0).getIdx()));
}

void EmitStore(JitContext& c, Emission& e) {
  const KernelArg& arg = ArgOf(c, e.in());
  const Xbyak::RegExp p = c.ArgAddress(e.in());
  const Xmm s = e.SrcReg(0);
  const Xmm s1(s.getIdx());
  if (arg.dtype != DType::kBool) {
    if (c.lanes == 1) {
      c.g.vmovss(c.g.dword[p], s1);
    } else if (c.nontemporal) {
      c.g.vmovntps(c.g.ptr[p], s);
    } else {
      c.g.vmovups(c.g.ptr[p], s);
    }
    return;
  }
  // Booleans are 0.0/1.0 in registers and one byte in memory.
  if (c.lanes == 1) {
    c.g.vcvtss2si(c.scratch.cvt32(), s1);
    c.g.mov(c.g.byte[p], c.scratch.cvt8());
    return;
  }
  const Xmm ints = e.Aux();
  c.g.vcvtps2dq(ints, s);
  if (c.avx512) {
    c.g.vpmovdb(c.g.ptr[p], ints);
    return;
  }
  const Xmm lo(ints.getIdx());
  const Xmm hi(e.Aux().getIdx());
  c.g.vextracti128(hi, Ymm(ints.getIdx()), 1);
  c.g.vpackssdw(lo, lo, hi);
  c.g.vpacksswb(lo, lo, lo);
  c.g.vmovq(c.g.qword[p], lo);
}

// ---------------------------------------------------------------------------
// Arithmetic and selection

void EmitCopy(JitContext& c, Emission& e) {
  const Operand& s = e.Src(0);
  if (s.isMEM()) {
    c.g.vmovups(e.Dst(), s);
  } else if (s.getIdx() != e.Dst().getIdx()) {
    c.g.vmovaps(e.Dst(), s);
  }
}

void EmitAdd(JitContext& c, Emission& e) { c.g.vaddps(e.Dst(), e.SrcReg(0), e.Src(1)); }
void EmitSub(JitContext& c, Emission& e) { c.g.vsubps(e.Dst(), e.SrcReg(0), e.Src(1)); }
void EmitMul(JitContext& c, Emission& e) { c.g.vmulps(e.Dst(), e.SrcReg(0), e.Src(1)); }
void EmitDiv(JitContext& c, Emission& e) { c.g.vdivps(e.Dst(), e.SrcReg(0), e.Src(1)); }

// Max(a, b) = isnan(a) ? a : (isnan(b) || b > a) ? b : a. vmaxps(b, a) gives
// (b > a) ? b : a, which is a whenever either is NaN; lanes where b is NaN are
// then forced to NaN (all ones).
void EmitMaxMin(JitContext& c, Emission& e, bool max) {
  const Xmm b = e.SrcReg(1);
  const Operand& a = e.Src(0);
  const Mask nan_b = c.Compare(b, b, kCmpUnordQ, e.Aux());
  if (max) {
    c.g.vmaxps(e.Dst(), b, a);
  } else {
    c.g.vminps(e.Dst(), b, a);
  }
  if (nan_b.is_k) {
    c.g.vpord(e.Dst() | nan_b.k, e.Dst(), c.Bits(0xFFFFFFFFu));
  } else {
    c.g.vorps(e.Dst(), e.Dst(), nan_b.vec);
  }
}
void EmitMax(JitContext& c, Emission& e) { EmitMaxMin(c, e, true); }
void EmitMin(JitContext& c, Emission& e) { EmitMaxMin(c, e, false); }

// std::max(x, lo) is (lo > x) ? lo : x: vmaxps with the bound first, so a NaN
// x passes through.
void EmitClampLow(JitContext& c, Emission& e) {
  const Xmm bound = e.Aux();
  c.LoadConst(bound, e.in().attr[0]);
  c.g.vmaxps(e.Dst(), bound, e.Src(0));
}

void EmitClampHigh(JitContext& c, Emission& e) {
  const Xmm bound = e.Aux();
  c.LoadConst(bound, e.in().attr[0]);
  c.g.vminps(e.Dst(), bound, e.Src(0));
}

void EmitAbs(JitContext& c, Emission& e) { c.And(e.Dst(), e.SrcReg(0), c.Bits(0x7FFFFFFFu)); }

// The reference computes 0 - x (so Neg(0) is +0, as it is there).
void EmitNeg(JitContext& c, Emission& e) {
  const Xmm zero = e.Aux();
  c.Zero(zero);
  c.g.vsubps(e.Dst(), zero, e.Src(0));
}

void EmitSqrt(JitContext& c, Emission& e) { c.g.vsqrtps(e.Dst(), e.Src(0)); }

void EmitReciprocal(JitContext& c, Emission& e) {
  const Xmm one = e.Aux();
  c.LoadConst(one, 1.0f);
  c.g.vdivps(e.Dst(), one, e.Src(0));
}

// Rounding immediates: mode bits plus "suppress precision exception".
void EmitFloor(JitContext& c, Emission& e) { c.Round(e.Dst(), e.Src(0), 0x09); }
void EmitCeil(JitContext& c, Emission& e) { c.Round(e.Dst(), e.Src(0), 0x0A); }
void EmitRound(JitContext& c, Emission& e) { c.Round(e.Dst(), e.Src(0), 0x08); }

// x^p by repeated multiplication; a negative p divides 1 by x^|p|.
void EmitPowerStatic(JitContext& c, Emission& e) {
  const int p = static_cast<int>(e.in().attr[0]);
  const int n = std::abs(p);
  if (n == 0) {
    c.LoadConst(e.Dst(), 1.0f);
    return;
  }
  const Xmm x = e.SrcReg(0);
  const Xmm t = e.Aux();
  if (n == 1) {
    c.g.vmovaps(t, x);
  } else {
    c.g.vmulps(t, x, x);
    if (n == 3) c.g.vmulps(t, t, x);
    if (n == 4) c.g.vmulps(t, t, t);
  }
  if (p > 0) {
    c.g.vmovaps(e.Dst(), t);
    return;
  }
  const Xmm one = e.Aux();
  c.LoadConst(one, 1.0f);
  c.g.vdivps(e.Dst(), one, t);
}

void EmitCompare(JitContext& c, Emission& e, uint8_t pred) {
  const Xmm a = e.SrcReg(0);
  if (c.avx512) {
    const Mask m = c.Compare(a, e.Src(1), pred, Xmm());
    c.MaskToOne(e.Dst(), m);
  } else {
    c.g.vcmpps(e.Dst(), a, e.Src(1), pred);
    c.g.vandps(e.Dst(), e.Dst(), c.Const(1.0f));
  }
}
void EmitCmpEq(JitContext& c, Emission& e) { EmitCompare(c, e, kCmpEqOq); }
// Unordered: IsNaN is lowered to x != x.
void EmitCmpNe(JitContext& c, Emission& e) { EmitCompare(c, e, kCmpNeqUq); }
void EmitCmpLt(JitContext& c, Emission& e) { EmitCompare(c, e, kCmpLtOq); }
void EmitCmpLe(JitContext& c, Emission& e) { EmitCompare(c, e, kCmpLeOq); }
void EmitCmpGt(JitContext& c, Emission& e) { EmitCompare(c, e, kCmpGtOq); }
void EmitCmpGe(JitContext& c, Emission& e) { EmitCompare(c, e, kCmpGeOq); }

void EmitSelect(JitContext& c, Emission& e) {
  const Xmm cond = e.SrcReg(0);
  const Xmm if_false = e.SrcReg(2);
  const Mask m = c.Compare(cond, c.Const(0.0f), kCmpNeqOq, e.Aux());
  c.Blend(e.Dst(), if_false, e.Src(1), m);
}

// x < 0 ? x * slope : x, for LeakyRelu (slope an attribute) and PRelu (an input).
void EmitNegativeSlope(JitContext& c, Emission& e, const Operand& slope) {
  const Xmm x = e.SrcReg(0);
  const Xmm scaled = e.Aux();
  c.g.vmulps(scaled, x, slope);
  const Mask negative = c.Compare(x, c.Const(0.0f), kCmpLtOq, e.Aux());
  c.Blend(e.Dst(), x, scaled, negative);
}
void EmitLeakyRelu(JitContext& c, Emission& e) { EmitNegativeSlope(c, e, c.Const(e.in().attr[0])); }
void EmitPRelu(JitContext& c, Emission& e) { EmitNegativeSlope(c, e, e.Src(1)); }

struct TableEntry {
  KOp op;
  EmitFn fn;
};

constexpr TableEntry kTable[] = {
    {KOp::kLoad, EmitLoad},
    {KOp::kBroadcastLoad, EmitBroadcastLoad},
    {KOp::kBroadcastMove, EmitBroadcastMove},
    {KOp::kStore, EmitStore},
    {KOp::kScalarLoad, EmitLoad},
    {KOp::kScalarStore, EmitStore},
    {KOp::kCopy, EmitCopy},
    {KOp::kAdd, EmitAdd},
    {KOp::kSub, EmitSub},
    {KOp::kMul, EmitMul},
    {KOp::kDiv, EmitDiv},
    {KOp::kMax, EmitMax},
    {KOp::kMin, EmitMin},
    {KOp::kClampLow, EmitClampLow},
    {KOp::kClampHigh, EmitClampHigh},
    {KOp::kAbs, EmitAbs},
    {KOp::kNeg, EmitNeg},
    {KOp::kSqrt, EmitSqrt},
    {KOp::kReciprocal, EmitReciprocal},
    {KOp::kFloor, EmitFloor},
    {KOp::kCeil, EmitCeil},
    {KOp::kRound, EmitRound},
    {KOp::kPowerStatic, EmitPowerStatic},
    {KOp::kCmpEq, EmitCmpEq},
    {KOp::kCmpNe, EmitCmpNe},
    {KOp::kCmpLt, EmitCmpLt},
    {KOp::kCmpLe, EmitCmpLe},
    {KOp::kCmpGt, EmitCmpGt},
    {KOp::kCmpGe, EmitCmpGe},
    {KOp::kSelect, EmitSelect},
    {KOp::kLeakyRelu, EmitLeakyRelu},
    {KOp::kPRelu, EmitPRelu},
    {KOp::kElu, EmitElu},
    {KOp::kSelu, EmitSelu},
    {KOp::kExp, EmitExp},
    {KOp::kLog, EmitLog},
    {KOp::kErf, EmitErf},
    {KOp::kTanh, EmitTanh},
    {KOp::kSigmoid, EmitSigmoid},
};

}  // namespace

EmitFn GetEmitter(KOp op) {
  for (const TableEntry& t : kTable) {
    if (t.op == op) return t.fn;
  }
  return nullptr;
}

EmitCopiesFn GetCopiesEmitter(KOp op) {
  switch (op) {
    case KOp::kErf:
      return EmitErfInterleaved;
    case KOp::kSigmoid:
      return EmitSigmoidInterleaved;
    default:
      return nullptr;
  }
}

}  // namespace tessel::snippets::x86
