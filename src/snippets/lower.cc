#include "snippets/lower.h"

#include "snippets/canonicalize.h"
#include "snippets/insert_memory_ops.h"
#include "snippets/normalize_domain.h"

namespace tessel::snippets {

StatusOr<KernelIR> LowerSubgraph(const ir::Graph& body) {
  TESSEL_ASSIGN_OR_RETURN(KernelIR ir, Canonicalize(body));
  TESSEL_RETURN_IF_ERROR(NormalizeDomain(ir));
  TESSEL_RETURN_IF_ERROR(InsertMemoryOps(ir));
  return ir;
}

}  // namespace tessel::snippets
