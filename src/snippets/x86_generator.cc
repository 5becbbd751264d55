#include "snippets/x86_generator.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <xbyak/xbyak.h>

#include "core/check.h"
#include "snippets/assign_registers.h"
#include "snippets/x86_emitters.h"

namespace tessel::snippets {

int NumVectorRegisters(Isa isa) { return isa == Isa::kAvx512 ? 32 : 16; }

namespace {

constexpr int kMaxUnroll = 2;

// x86-specific rewrite: a division by an immediate whose result only feeds
// erf or tanh becomes a multiplication by the rounded reciprocal. The
// argument moves by at most one ulp, and erf and tanh have condition numbers
// below 1, so the result stays within their documented error (this is the
// x / sqrt(2) of GeLU); vdivps costs 10 to 16 cycles per zmm on Intel cores.
// Exp, log and sigmoid amplify argument errors and keep their division, as
// does the interpreter, which stays exact.
void RelaxDivisions(KernelIR& ir) {
  std::vector<std::vector<KOp>> readers(static_cast<size_t>(ir.num_values));
  for (const Instr& in : ir.body) {
    for (int s : in.srcs) readers[static_cast<size_t>(s)].push_back(in.op);
  }
  std::vector<Instr> reciprocals;
  for (size_t i = 0; i < ir.body.size(); ++i) {
    const Instr& in = ir.body[i];
    if (in.op != KOp::kDiv || !ir.IsScalar(in.srcs[1])) continue;
    const float divisor = ir.ScalarValue(in.srcs[1]);
    const float reciprocal = 1.0f / divisor;
    if (!std::isnormal(divisor) || !std::isnormal(reciprocal)) continue;
    const auto& r = readers[static_cast<size_t>(in.dst)];
    const bool only_bounded = !r.empty() && std::all_of(r.begin(), r.end(), [](KOp op) {
      return op == KOp::kErf || op == KOp::kTanh;
    });
    if (!only_bounded) continue;
    Instr scalar;
    scalar.op = KOp::kScalar;
    scalar.dst = ir.num_values++;
    scalar.attr[0] = reciprocal;
    for (auto* tile : {&ir.body, &ir.scalar_body}) {
      Instr& div = (*tile)[i];
      div.op = KOp::kMul;
      div.srcs[1] = scalar.dst;
    }
    reciprocals.push_back(scalar);
  }
  for (auto* tile : {&ir.body, &ir.scalar_body}) {
    tile->insert(tile->begin(), reciprocals.begin(), reciprocals.end());
  }
  ir.IndexScalars();
}

class Generator : public X86Function, public Xbyak::CodeGenerator {
 public:
  Generator(KernelIR ir, Isa isa, bool nontemporal, RegisterAssignment vector_regs,
            RegisterAssignment scalar_regs)
      : Xbyak::CodeGenerator(4096, Xbyak::AutoGrow),
        ir_(std::move(ir)),
        avx512_(isa == Isa::kAvx512),
        nontemporal_(nontemporal),
        vector_regs_(std::move(vector_regs)),
        scalar_regs_(std::move(scalar_regs)) {}

  Entry entry() const override { return getCode<Entry>(); }
  int registers_used() const override {
    return std::max(vector_regs_.num_used, scalar_regs_.num_used);
  }
  size_t code_size_bytes() const override { return getSize(); }

  void Build() {
    x86::JitContext c(*this, avx512_);
    c.ir = &ir_;
    // rdi holds the KernelCall; rax counts the row's elements, r14 the rows,
    // r15 is the emitters' scratch.
    const Xbyak::Reg64 arg_regs[] = {rsi, rdx, rcx, r8, r9, r10, r11, rbx, rbp, r12, r13};
    static_assert(sizeof(arg_regs) / sizeof(arg_regs[0]) >= kMaxKernelArgs);
    const Xbyak::Reg64 saved[] = {rbx, rbp, r12, r13, r14, r15};
    for (const auto& r : saved) push(r);
    const size_t num_args = ir_.args.size();
    TESSEL_CHECK(num_args <= static_cast<size_t>(kMaxKernelArgs));
    for (size_t k = 0; k < num_args; ++k) {
      c.arg_ptr[k] = arg_regs[k];
      mov(arg_regs[k], ptr[rdi + kCallPtrOffset + static_cast<int>(8 * k)]);
    }
    Xbyak::Label row, unrolled_loop, vector_loop, vector_done, scalar_loop, scalar_done, done;
    mov(r14, ptr[rdi + kCallRowsOffset]);
    test(r14, r14);
    jz(done, T_NEAR);

    L(row);
    mov(rax, ptr[rdi + kCallInnerOffset]);
    const int lanes = avx512_ ? 16 : 8;
    c.nontemporal = nontemporal_;
    // Several independent copies of the vector tile per iteration, as many as
    // the register file holds (up to 4), overlap the long dependency chains
    // of the polynomial evaluations.
    const int num_regs = NumVectorRegisters(avx512_ ? Isa::kAvx512 : Isa::kAvx2);
    int unroll = 1;
    while (unroll < kMaxUnroll && 2 * unroll * vector_regs_.num_used <= num_regs) unroll *= 2;
    if (unroll > 1) {
      L(unrolled_loop);
      cmp(rax, unroll * lanes);
      jl(vector_loop, T_NEAR);
      for (int copy = 0; copy < unroll; ++copy) {
        c.element_offset = copy * lanes;
        EmitTile(c, ir_.body, vector_regs_, lanes, copy * vector_regs_.num_used);
      }
      c.element_offset = 0;
      Advance(c, unroll * lanes);
      sub(rax, unroll * lanes);
      jmp(unrolled_loop, T_NEAR);
    }
    L(vector_loop);
    cmp(rax, lanes);
    jl(vector_done, T_NEAR);
    EmitTile(c, ir_.body, vector_regs_, lanes, 0);
    Advance(c, lanes);
    sub(rax, lanes);
    jmp(vector_loop, T_NEAR);
    L(vector_done);

    L(scalar_loop);
    test(rax, rax);
    jz(scalar_done, T_NEAR);
    c.nontemporal = false;
    EmitTile(c, ir_.scalar_body, scalar_regs_, 1, 0);
    Advance(c, 1);
    dec(rax);
    jmp(scalar_loop, T_NEAR);
    L(scalar_done);

    for (size_t k = 0; k < num_args; ++k) {
      add(c.arg_ptr[k], ptr[rdi + kCallAdvanceOffset + static_cast<int>(8 * k)]);
    }
    dec(r14);
    jnz(row, T_NEAR);

    L(done);
    // Streaming stores are weakly ordered; fence them before returning so the
    // next kernel (on any thread) sees the data.
    if (nontemporal_) sfence();
    vzeroupper();
    for (auto it = std::rbegin(saved); it != std::rend(saved); ++it) pop(*it);
    ret();
    c.EmitData();
    ready(PROTECT_RE);
  }

 private:
  void Advance(x86::JitContext& c, int elements) {
    for (size_t k = 0; k < ir_.args.size(); ++k) {
      const KernelArg& a = ir_.args[k];
      if (a.broadcast_inner()) continue;
      add(c.arg_ptr[k], elements * static_cast<int>(DTypeSize(a.dtype)));
    }
  }

  // `reg_offset` renames every register, for the second unrolled copy.
  void EmitTile(x86::JitContext& c, const std::vector<Instr>& tile, const RegisterAssignment& ra,
                int lanes, int reg_offset) {
    c.lanes = lanes;
    auto reg = [&](int r) { return c.Vec(r + reg_offset); };
    for (size_t i = 0; i < tile.size(); ++i) {
      const Instr& in = tile[i];
      if (in.op == KOp::kScalar) continue;
      std::optional<Xbyak::Xmm> dst;
      if (in.dst >= 0) dst = reg(ra.value_reg[static_cast<size_t>(in.dst)]);
      std::vector<std::optional<Xbyak::Xmm>> src_regs;
      std::vector<float> src_imms;
      for (int s : in.srcs) {
        if (ir_.IsScalar(s)) {
          src_regs.emplace_back();
          src_imms.push_back(ir_.ScalarValue(s));
        } else {
          src_regs.emplace_back(reg(ra.value_reg[static_cast<size_t>(s)]));
          src_imms.push_back(0.0f);
        }
      }
      std::vector<Xbyak::Xmm> aux;
      for (int r : ra.aux[i]) aux.push_back(reg(r));
      x86::Emission e(c, in, dst, std::move(src_regs), std::move(src_imms), std::move(aux));
      const x86::EmitFn emit = x86::GetEmitter(in.op);
      TESSEL_CHECK_MSG(emit != nullptr, GetOpInfo(in.op).name);
      emit(c, e);
    }
  }

  const KernelIR ir_;
  const bool avx512_;
  const bool nontemporal_;
  const RegisterAssignment vector_regs_;
  const RegisterAssignment scalar_regs_;
};

}  // namespace

StatusOr<std::unique_ptr<X86Function>> GenerateX86(const KernelIR& ir, Isa isa, bool nontemporal) {
  TESSEL_CHECK(isa == Isa::kAvx2 || isa == Isa::kAvx512);
  if (!IsaSupported(isa)) {
    return Unsupported(std::string("this CPU does not support ") + IsaName(isa));
  }
  KernelIR target_ir = ir;
  RelaxDivisions(target_ir);
  const int num_registers = NumVectorRegisters(isa);
  TESSEL_ASSIGN_OR_RETURN(RegisterAssignment vector_regs,
                          AssignRegisters(target_ir, target_ir.body, num_registers));
  TESSEL_ASSIGN_OR_RETURN(RegisterAssignment scalar_regs,
                          AssignRegisters(target_ir, target_ir.scalar_body, num_registers));
  // xbyak reports failures (out of memory, a bad encoding) by exception.
  try {
    auto gen = std::make_unique<Generator>(std::move(target_ir), isa, nontemporal,
                                           std::move(vector_regs), std::move(scalar_regs));
    gen->Build();
    return std::unique_ptr<X86Function>(std::move(gen));
  } catch (const std::exception& e) {
    return Internal("snippet '" + ir.name + "': x86 code generation failed: " + e.what());
  }
}

}  // namespace tessel::snippets
