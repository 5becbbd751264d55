// x86-64 emitters: one function per kernel op, looked up in a table, that
// writes the op's machine code with xbyak. The generator (x86_generator.cc)
// owns the kernel, its two tiles and the data section; an emitter sees only
// its instruction's registers through an Emission.
//
// The same emitter serves both tiles and both instruction sets: registers come
// at the tile's width (xmm for the scalar tail, ymm for AVX2, zmm for
// AVX-512), and the few operations that differ between AVX2 and AVX-512
// (compare masks, blends, bitwise ops, rounding) go through JitContext.
//
// Contract of an emitter: it reads its sources, may clobber its auxiliary
// registers, and writes its result register. When the op's OpInfo allows
// result/source aliasing, the result may be a source's register, so the
// emitter must read every source before its last write; otherwise it may
// read sources after writing the result.
#pragma once

#include <xbyak/xbyak.h>

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "snippets/kernel_ir.h"

namespace tessel::snippets::x86 {

// A compare result: a vector register (AVX2) or a k register (AVX-512).
struct Mask {
  Xbyak::Xmm vec;
  Xbyak::Opmask k;
  bool is_k = false;
};

// An immediate as an operand: a vector register that holds it in every lane
// (pinned for the whole kernel), or its 64-byte slot in the data section.
class ConstOperand {
 public:
  explicit ConstOperand(const Xbyak::Address& mem) : mem_(mem) {}
  explicit ConstOperand(const Xbyak::Xmm& reg) : reg_(reg) {}
  operator const Xbyak::Operand&() const {  // NOLINT: used as an xbyak operand
    if (mem_) return *mem_;
    return reg_;
  }

 private:
  std::optional<Xbyak::Address> mem_;
  Xbyak::Xmm reg_;
};

class JitContext {
 public:
  JitContext(Xbyak::CodeGenerator& g, bool avx512) : g(g), avx512(avx512) {}

  Xbyak::CodeGenerator& g;
  const bool avx512;
  int lanes = 1;             // 1 in the scalar tile, 8 (ymm) or 16 (zmm) in the vector tile
  bool nontemporal = false;  // vector float stores bypass the cache
  const KernelIR* ir = nullptr;
  std::array<Xbyak::Reg64, kMaxKernelArgs> arg_ptr;  // each argument's current element
  // The unrolled copy of the vector tile being emitted reads and writes this
  // many elements past arg_ptr.
  int element_offset = 0;
  Xbyak::Reg64 scratch{Xbyak::Operand::R15};

  // Where a memory op of `in` reads or writes: its argument's pointer, plus
  // the unroll offset unless the argument is broadcast along the row.
  Xbyak::RegExp ArgAddress(const Instr& in) const;

  // Vector register `r` at the current tile's width.
  Xbyak::Xmm Vec(int r) const;
  // `v` in every lane: a pinned register while pins are on, else a 64-byte
  // slot of the data section.
  ConstOperand Const(float v);
  ConstOperand Bits(uint32_t bits);
  // The data-section slot of `bits`, never a register.
  Xbyak::Address Slot(uint32_t bits);
  // The immediates Const and Bits were asked for so far, most used first.
  std::vector<uint32_t> ConstantsByUse() const;
  // Const(bits) becomes register `reg` (at the tile's width) while
  // `pins_on`; the generator loads it once per call, before the loops.
  void Pin(uint32_t bits, int reg) { pins_.push_back({bits, reg}); }
  bool pins_on = false;
  // Emits the data section; call once, after all code.
  void EmitData();

  // Operations whose encoding differs between AVX2 and AVX-512.
  void Zero(const Xbyak::Xmm& d);
  void LoadConst(const Xbyak::Xmm& d, float v);
  void And(const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Operand& b);
  void Or(const Xbyak::Xmm& d, const Xbyak::Xmm& a, const Xbyak::Operand& b);
  void Round(const Xbyak::Xmm& d, const Xbyak::Operand& a, uint8_t mode);
  // d = |magnitude| with the sign of `sign`, for a non-negative `magnitude`;
  // AVX2 uses `tmp`. d may alias magnitude.
  void CopySign(const Xbyak::Xmm& d, const Xbyak::Xmm& magnitude, const Xbyak::Xmm& sign,
                const Xbyak::Xmm& tmp);
  // a <pred> b; AVX2 writes the mask into `vec_tmp`, AVX-512 into k`k_index`.
  Mask Compare(const Xbyak::Xmm& a, const Xbyak::Operand& b, uint8_t pred,
               const Xbyak::Xmm& vec_tmp, int k_index = 1);
  // d = m ? if_set : if_clear.
  void Blend(const Xbyak::Xmm& d, const Xbyak::Xmm& if_clear, const Xbyak::Operand& if_set,
             const Mask& m);
  // d = m ? 1.0 : 0.0.
  void MaskToOne(const Xbyak::Xmm& d, const Mask& m);
  // d = m ? a : 0.0.
  void MaskSelect(const Xbyak::Xmm& d, const Mask& m, const Xbyak::Operand& a);

 private:
  size_t SlotIndex(uint32_t bits);  // adds `bits` to the data section if new

  Xbyak::Label data_;
  std::vector<uint32_t> constants_;
  std::vector<int> uses_;  // per constant, calls of Bits
  std::vector<std::pair<uint32_t, int>> pins_;
};

// Compare predicates (the AVX encoding of vcmpps' immediate).
inline constexpr uint8_t kCmpEqOq = 0x00;
inline constexpr uint8_t kCmpUnordQ = 0x03;
inline constexpr uint8_t kCmpNeqUq = 0x04;
inline constexpr uint8_t kCmpNgeUq = 0x09;
inline constexpr uint8_t kCmpNeqOq = 0x0C;
inline constexpr uint8_t kCmpGeOq = 0x1D;
inline constexpr uint8_t kCmpGtOq = 0x1E;
inline constexpr uint8_t kCmpLtOq = 0x11;
inline constexpr uint8_t kCmpLeOq = 0x12;

// One instruction's operands, as registers at the tile's width.
class Emission {
 public:
  Emission(JitContext& c, const Instr& in, std::optional<Xbyak::Xmm> dst,
           std::vector<std::optional<Xbyak::Xmm>> src_regs, std::vector<float> src_imms,
           std::vector<Xbyak::Xmm> aux);

  const Instr& in() const { return in_; }
  const Xbyak::Xmm& Dst() const { return *dst_; }
  // Source i as an operand: its register, or its immediate's data slot.
  const Xbyak::Operand& Src(size_t i);
  // Source i in a register (an immediate is loaded into the next aux).
  Xbyak::Xmm SrcReg(size_t i);
  // The next unused auxiliary register.
  Xbyak::Xmm Aux();

 private:
  JitContext& c_;
  const Instr& in_;
  std::optional<Xbyak::Xmm> dst_;
  std::vector<std::optional<Xbyak::Xmm>> src_regs_;
  std::vector<float> src_imms_;
  std::vector<std::optional<ConstOperand>> src_mems_;
  std::vector<Xbyak::Xmm> aux_;
  size_t next_aux_ = 0;
};

using EmitFn = void (*)(JitContext& c, Emission& e);
// The emitter of `op`; every KOp except kParameter, kResult and kScalar has one.
EmitFn GetEmitter(KOp op);

// An emitter of several independent copies of one instruction (the unrolled
// vector tile), interleaving their instructions so that long dependency
// chains overlap; nullptr where the generator emits the copies one after
// the other. Same contract as EmitFn for every copy.
using EmitCopiesFn = void (*)(JitContext& c, std::vector<Emission>& copies);
EmitCopiesFn GetCopiesEmitter(KOp op);

// Transcendentals (x86_math.cc); the table above refers to them.
void EmitExp(JitContext& c, Emission& e);
void EmitLog(JitContext& c, Emission& e);
void EmitErf(JitContext& c, Emission& e);
void EmitErfInterleaved(JitContext& c, std::vector<Emission>& copies);
void EmitTanh(JitContext& c, Emission& e);
void EmitSigmoid(JitContext& c, Emission& e);
void EmitSigmoidInterleaved(JitContext& c, std::vector<Emission>& copies);
void EmitElu(JitContext& c, Emission& e);
void EmitSelu(JitContext& c, Emission& e);

}  // namespace tessel::snippets::x86
