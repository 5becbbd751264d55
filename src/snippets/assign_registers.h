// Linear-scan register allocation over one tile (a basic block of SSA
// values): every value gets a vector register from its definition to its last
// use, every instruction the auxiliary registers its emitter needs
// (OpInfo::aux_registers, plus one per immediate operand it may have to
// materialize). Immediates never occupy a register: emitters read them from
// the kernel's data section.
//
// Registers are handed out lowest first, so a tile that needs N registers uses
// exactly 0..N-1. A result may reuse the register of a source read for the
// last time when the op allows it; auxiliary registers never alias sources.
#pragma once

#include <vector>

#include "core/status.h"
#include "snippets/kernel_ir.h"

namespace tessel::snippets {

struct RegisterAssignment {
  std::vector<int> value_reg;         // per value; -1 for immediates
  std::vector<std::vector<int>> aux;  // per instruction
  int num_used = 0;                   // registers 0..num_used-1 are touched
};

// `tile` is ir.body or ir.scalar_body. ResourceExhausted when more than
// `num_registers` would be live at once.
StatusOr<RegisterAssignment> AssignRegisters(const KernelIR& ir, const std::vector<Instr>& tile,
                                             int num_registers);

}  // namespace tessel::snippets
