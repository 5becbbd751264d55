#include "snippets/x86_generator.h"

#include <xbyak/xbyak.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "core/check.h"
#include "snippets/assign_registers.h"
#include "snippets/x86_emitters.h"

namespace tessel::snippets {

int NumVectorRegisters(Isa isa) { return isa == Isa::kAvx512 ? 32 : 16; }

namespace {

constexpr int kMaxUnroll = 4;
constexpr int kCacheLineBytes = 64;
constexpr int kPrefetchBytes = 2048;

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

    const int lanes = avx512_ ? 16 : 8;
    const int unroll = PinConstants(c, lanes);

    L(row);
    mov(rax, ptr[rdi + kCallInnerOffset]);
    c.nontemporal = nontemporal_;
    c.pins_on = true;
    if (unroll > 1) {
      L(unrolled_loop);
      cmp(rax, unroll * lanes);
      jl(vector_loop, T_NEAR);
      EmitTile(c, ir_.body, vector_regs_, lanes, unroll);
      Prefetch(c, unroll * lanes);
      Advance(c, unroll * lanes);
      sub(rax, unroll * lanes);
      jmp(unrolled_loop, T_NEAR);
    }
    L(vector_loop);
    cmp(rax, lanes);
    jl(vector_done, T_NEAR);
    EmitTile(c, ir_.body, vector_regs_, lanes);
    if (unroll == 1) Prefetch(c, lanes);
    Advance(c, lanes);
    sub(rax, lanes);
    jmp(vector_loop, T_NEAR);
    L(vector_done);
    c.pins_on = false;

    L(scalar_loop);
    test(rax, rax);
    jz(scalar_done, T_NEAR);
    c.nontemporal = false;
    EmitTile(c, ir_.scalar_body, scalar_regs_, 1);
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
  // Chooses how many copies of the vector tile an iteration runs, and emits
  // the loads of the pinned immediates (before the row loop).
  //
  // Copies first: GeLU's erf is a dependency chain some 60 cycles deep, and
  // four interleaved copies run it 1.25x faster per element than one (Zen 5,
  // L1-resident rows). Then immediates: by default each use is a memory
  // operand, and erf alone reads about 25 per vector; registers the copies
  // leave free hold the most used ones for the whole call (another 1.07x for
  // GeLU at four copies). Pinned registers sit above both tiles' registers;
  // the scalar tile reads immediates from memory, so no VEX-encoded scalar
  // op clears their upper lanes.
  int PinConstants(x86::JitContext& c, int lanes) {
    const int num_regs = NumVectorRegisters(avx512_ ? Isa::kAvx512 : Isa::kAvx2);
    const int tile_regs = vector_regs_.num_used;
    std::vector<uint32_t> constants;
    {
      // A dry run of the vector tile, into a scratch buffer, lists the
      // immediates it reads and how often.
      Xbyak::CodeGenerator scratch(4096, Xbyak::AutoGrow);
      x86::JitContext dry(scratch, avx512_);
      dry.ir = &ir_;
      dry.arg_ptr = c.arg_ptr;
      EmitTile(dry, ir_.body, vector_regs_, lanes);
      constants = dry.ConstantsByUse();
    }
    int unroll = 1;
    while (unroll < kMaxUnroll && 2 * unroll * tile_regs <= num_regs) unroll *= 2;
    const int lowest_free = std::max(unroll * tile_regs, scalar_regs_.num_used);
    c.lanes = lanes;
    int reg = num_regs - 1;
    for (size_t i = 0; i < constants.size() && reg >= lowest_free; ++i, --reg) {
      c.Pin(constants[i], reg);
      vmovups(c.Vec(reg), c.Slot(constants[i]));
    }
    return unroll;
  }

  // Software prefetch of the inputs, kPrefetchBytes ahead, one per cache
  // line the iteration walks. A kernel that computes (GeLU's erf) walks its
  // rows too slowly for the hardware's stream prefetchers to run ahead of it;
  // on a Xeon whose rows came from L3, GeLU at 64 MiB ran at 40% (AVX2) and
  // 56% (AVX-512) of its in-L2 speed without them, 2.5x and 1.3x faster
  // with them. Outputs get none: prefetchw measured no better there.
  void Prefetch(x86::JitContext& c, int elements) {
    for (size_t k = 0; k < ir_.args.size(); ++k) {
      const KernelArg& a = ir_.args[k];
      if (a.is_output || a.broadcast_inner()) continue;
      const int bytes = elements * static_cast<int>(DTypeSize(a.dtype));
      for (int offset = 0; offset < bytes; offset += kCacheLineBytes) {
        prefetcht0(ptr[c.arg_ptr[k] + kPrefetchBytes + offset]);
      }
    }
  }

  void Advance(x86::JitContext& c, int elements) {
    for (size_t k = 0; k < ir_.args.size(); ++k) {
      const KernelArg& a = ir_.args[k];
      if (a.broadcast_inner()) continue;
      add(c.arg_ptr[k], elements * static_cast<int>(DTypeSize(a.dtype)));
    }
  }

  // `copies` copies of `tile`, copy k on registers renamed by k * ra.num_used
  // and on elements k * lanes further; instruction by instruction, so the
  // copies' dependency chains overlap.
  void EmitTile(x86::JitContext& c, const std::vector<Instr>& tile, const RegisterAssignment& ra,
                int lanes, int copies = 1) {
    c.lanes = lanes;
    for (size_t i = 0; i < tile.size(); ++i) {
      const Instr& in = tile[i];
      if (in.op == KOp::kScalar) continue;
      const x86::EmitCopiesFn emit_copies = copies > 1 ? x86::GetCopiesEmitter(in.op) : nullptr;
      std::vector<x86::Emission> emissions;
      for (int copy = 0; copy < copies; ++copy) {
        emissions.push_back(MakeEmission(c, in, i, ra, copy * ra.num_used));
        if (emit_copies) continue;
        c.element_offset = copy * lanes;
        const x86::EmitFn emit = x86::GetEmitter(in.op);
        TESSEL_CHECK_MSG(emit != nullptr, GetOpInfo(in.op).name);
        emit(c, emissions.back());
      }
      c.element_offset = 0;
      if (emit_copies) emit_copies(c, emissions);
    }
  }

  x86::Emission MakeEmission(x86::JitContext& c, const Instr& in, size_t index,
                             const RegisterAssignment& ra, int reg_offset) {
    auto reg = [&](int r) { return c.Vec(r + reg_offset); };
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
    for (int r : ra.aux[index]) aux.push_back(reg(r));
    return x86::Emission(c, in, dst, std::move(src_regs), std::move(src_imms), std::move(aux));
  }

  const KernelIR ir_;
  const bool avx512_;
  const bool nontemporal_;
  const RegisterAssignment vector_regs_;
  const RegisterAssignment scalar_regs_;
};

}  // namespace

namespace {

std::atomic<int64_t> generated{0};

}  // namespace

int64_t GeneratedFunctionCount() { return generated.load(std::memory_order_relaxed); }

StatusOr<std::unique_ptr<X86Function>> GenerateX86(const KernelIR& ir, Isa isa, bool nontemporal,
                                                   const std::string& dump_dir) {
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
    if (const std::string& dir = dump_dir; !dir.empty()) {
      static std::atomic<int> serial{0};
      const std::string path = dir + "/" + std::to_string(serial++) + "_" + ir.name +
                               (nontemporal ? ".nt" : "") + ".bin";
      if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(gen->getCode(), 1, gen->getSize(), f);
        std::fclose(f);
      }
    }
    generated.fetch_add(1, std::memory_order_relaxed);
    return std::unique_ptr<X86Function>(std::move(gen));
  } catch (const std::exception& e) {
    return Internal("snippet '" + ir.name + "': x86 code generation failed: " + e.what());
  }
}

}  // namespace tessel::snippets
