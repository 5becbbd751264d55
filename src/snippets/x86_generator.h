// x86-64 code generation for a lowered snippet (the seed's Kernel, Tile and
// Data emission): the vector tile runs while a full vector of the innermost
// dimension remains, the scalar tile finishes the row one element at a time,
// and the data section holds every immediate broadcast to 64 bytes.
//
//   push callee-saved; load argument pointers from the KernelCall
//   load pinned immediates into the registers the tiles leave free
//   row:    rax = inner
//   unrolled: while rax >= U lanes: U copies of the vector tile, interleaved
//           instruction by instruction (U = 4, 2 or 1, as registers allow)
//   vector: while rax >= lanes: <vector tile>; advance streaming pointers
//   scalar: while rax > 0:      <scalar tile>; advance by one element
//           pointers += row_advance_bytes; loop while rows remain
//   [sfence]; vzeroupper; pop; ret
//   data:   64-byte aligned constants
//
// TESSEL_SNIPPETS_DUMP=DIR writes every generated function's machine code to
// DIR/<serial>_<snippet>[.nt].bin (objdump -D -b binary -m i386:x86-64).
#pragma once

#include <memory>

#include "core/status.h"
#include "snippets/isa.h"
#include "snippets/kernel_call.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

class X86Function {
 public:
  using Entry = void (*)(const KernelCall*);
  virtual ~X86Function() = default;
  virtual Entry entry() const = 0;
  // Vector registers the tiles use (the larger of the two tiles).
  virtual int registers_used() const = 0;
  virtual size_t code_size_bytes() const = 0;
};

// Vector registers a tile may use.
int NumVectorRegisters(Isa isa);

// Precondition: `ir` is lowered (LowerSubgraph) and `isa` is kAvx2 or kAvx512
// and supported by this CPU. `nontemporal` makes the vector tile's float
// stores bypass the cache (the caller guarantees 64-byte aligned rows).
// Fails when a tile needs more vector registers than the ISA has. With
// `dump_dir`, the machine code is also written there as N_NAME[.nt].bin
// (for objdump -b binary -m i386:x86-64 -D).
StatusOr<std::unique_ptr<X86Function>> GenerateX86(const KernelIR& ir, Isa isa, bool nontemporal,
                                                   const std::string& dump_dir = "");
// Functions GenerateX86 made in this process so far: a statistic, for tests
// that check kernels are compiled once.
int64_t GeneratedFunctionCount();

}  // namespace tessel::snippets
