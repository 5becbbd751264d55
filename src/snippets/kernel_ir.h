// The snippets kernel IR: one fused elementwise subgraph as a straight-line
// list of instructions in scalar notation (one instruction computes one
// element, as an OpenCL kernel would), plus the schedule it runs under.
//
//   Subgraph body (ir::Graph)            KernelIR
//   ─────────────────────────            ────────────────────────────────────
//   x ─┐                                 v0 = Load        arg0      (x)
//      Add ── Relu ── y          ──►     v1 = BroadcastLoad arg1    (b: 1 per row)
//   b ─┘                                 v2 = Add v0 v1
//                                        v3 = ClampLow v2 [0]
//                                        Store arg2 v3              (y)
//
// Values are SSA ids defined by exactly one instruction. Scalars (kScalar) are
// immediates: they live in the kernel's data section, never in a register.
// Booleans are carried as the floats 0.0 and 1.0; loads and stores convert.
//
// The schedule is a 6D domain (the broadcast of every output shape, with
// adjacent dimensions merged where every argument allows). The generated code
// walks the innermost dimension with a vector tile and a scalar tail tile;
// the caller walks the outer five (see snippet_kernel.h).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/tensor.h"

namespace tessel::snippets {

inline constexpr int kDomainRank = 6;
// Kernel arguments (inputs + outputs) are bounded by the general-purpose
// registers the x86 code keeps one pointer each in.
inline constexpr int kMaxKernelArgs = 10;

enum class KOp : uint8_t {
  // Canonical form (before InsertMemoryOps).
  kParameter,  // reads argument `arg` at the current element
  kResult,     // writes srcs[0] to argument `arg`
  kScalar,     // the immediate attr[0]
  // Memory (the snippets dialect).
  kLoad,           // streaming vector load of `arg`
  kBroadcastLoad,  // one element of `arg`, broadcast to every lane
  kBroadcastMove,  // lane 0 of srcs[0] broadcast to every lane
  kStore,          // vector store of srcs[0] to `arg`
  kScalarLoad,     // scalar tile: one element of `arg`
  kScalarStore,    // scalar tile: one element to `arg`
  // Compute. Semantics match the reference kernels of src/ops bit for bit,
  // except the transcendentals (documented error, see x86_math.cc).
  kCopy,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,        // NaN-propagating, as ONNX Max/Min
  kClampLow,   // x < attr0 ? attr0 : x   (NaN passes; Relu, Clip)
  kClampHigh,  // attr0 < x ? attr0 : x
  kAbs,
  kNeg,
  kSqrt,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,
  kPowerStatic,  // x ^ attr0, attr0 an integer in [-4, 4]
  kCmpEq,
  kCmpNe,
  kCmpLt,
  kCmpLe,
  kCmpGt,
  kCmpGe,      // 1.0 or 0.0
  kSelect,     // srcs[0] != 0 ? srcs[1] : srcs[2]  (Where)
  kLeakyRelu,  // x < 0 ? attr0 * x : x
  kPRelu,      // x < 0 ? x * srcs[1] : x
  kElu,        // x < 0 ? attr0 * expm1(x) : x
  kSelu,       // x > 0 ? attr0 * x : attr1 * expm1(x)
  kExp,
  kLog,
  kErf,
  kTanh,
  kSigmoid,
  kNumOps,
};

struct OpInfo {
  const char* name;
  int num_srcs;
  // Vector registers the x86 emitter needs besides its sources and result
  // (the AVX2 figure, which is the larger: AVX-512 keeps masks in k registers).
  int aux_registers;
  // The result may share a register with a source read for the last time.
  bool result_may_alias_source;
};
const OpInfo& GetOpInfo(KOp op);

struct Instr {
  KOp op = KOp::kCopy;
  int dst = -1;           // value defined; -1 for stores and results
  std::vector<int> srcs;  // values read
  int arg = -1;           // memory ops: the kernel argument
  std::array<float, 2> attr{};
};

struct KernelArg {
  std::string name;
  DType dtype = DType::kFloat32;  // kFloat32 or kBool
  bool is_output = false;
  Shape shape;
  // Element strides over the normalized domain; 0 where the argument is
  // broadcast (or the domain dimension is 1).
  std::array<int64_t, kDomainRank> strides{};

  bool broadcast_inner() const { return strides[kDomainRank - 1] == 0; }
};

struct KernelIR {
  std::string name;
  Shape output_shape;                         // the domain before normalization
  std::array<int64_t, kDomainRank> domain{};  // normalized and collapsed
  std::vector<KernelArg> args;                // inputs, then outputs
  int num_inputs = 0;
  std::vector<Instr> body;         // the vector tile
  std::vector<Instr> scalar_body;  // the scalar tail tile
  int num_values = 0;
  std::vector<std::string> source_ops;  // ONNX op types fused, in order

  int num_outputs() const { return static_cast<int>(args.size()) - num_inputs; }
  int64_t inner() const { return domain[kDomainRank - 1]; }
  // The immediate value of `v` if it is defined by kScalar.
  bool IsScalar(int v) const {
    return scalar_value_.size() > static_cast<size_t>(v) && is_scalar_[v];
  }
  float ScalarValue(int v) const { return scalar_value_[static_cast<size_t>(v)]; }
  // Recomputes the scalar lookup from `body`; passes that add kScalar call it.
  void IndexScalars();

 private:
  std::vector<char> is_scalar_;
  std::vector<float> scalar_value_;
};

// One line per instruction: "v3 = ClampLow v2 [0]", "Store arg2 <- v3".
void PrintInstrs(const std::vector<Instr>& body, std::ostream& os, const char* indent = "  ");

}  // namespace tessel::snippets
