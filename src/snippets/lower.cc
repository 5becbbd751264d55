#include "snippets/lower.h"

#include <algorithm>

#include "snippets/canonicalize.h"
#include "snippets/insert_memory_ops.h"
#include "snippets/normalize_domain.h"

namespace tessel::snippets {

namespace {

Shape Padded(const Shape& shape, size_t rank) {
  Shape padded(rank - std::min(rank, shape.size()), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  return padded;
}

}  // namespace

bool SameInBothLayouts(const Shape& shape, size_t rank) {
  const Shape p = Padded(shape, rank);
  if (p.size() < 3 || p[1] == 1) return true;
  return NumElements(Shape(p.begin() + 2, p.end())) == 1;
}

StatusOr<KernelIR> LowerSubgraph(const ir::Graph& body, bool channels_last) {
  TESSEL_ASSIGN_OR_RETURN(KernelIR ir, Canonicalize(body));
  if (channels_last) {
    size_t rank = 3;
    for (const KernelArg& a : ir.args) {
      if (a.is_output) rank = std::max(rank, a.shape.size());
    }
    for (KernelArg& a : ir.args) {
      a.shape = Padded(a.shape, rank);
      std::rotate(a.shape.begin() + 1, a.shape.begin() + 2, a.shape.end());
    }
  }
  TESSEL_RETURN_IF_ERROR(NormalizeDomain(ir));
  TESSEL_RETURN_IF_ERROR(InsertMemoryOps(ir));
  return ir;
}

}  // namespace tessel::snippets
