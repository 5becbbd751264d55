#include "snippets/lower.h"

#include <algorithm>

#include "ops/op_registry.h"
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

bool SameAsPlain(const Shape& shape, size_t rank, ArgLayout layout) {
  const Shape p = Padded(shape, rank);
  if (layout == ArgLayout::kPlain || p.size() < 3 || p[1] == 1) return true;
  const bool one_pixel = NumElements(Shape(p.begin() + 2, p.end())) == 1;
  return layout == ArgLayout::kChannelsLast ? one_pixel : one_pixel && p[1] % 16 == 0;
}

StatusOr<KernelIR> LowerSubgraph(const ir::Graph& body, ArgLayout layout) {
  TESSEL_ASSIGN_OR_RETURN(KernelIR ir, Canonicalize(body));
  if (layout != ArgLayout::kPlain) {
    size_t rank = 3;
    for (const KernelArg& a : ir.args) {
      if (a.is_output) rank = std::max(rank, a.shape.size());
    }
    if (layout == ArgLayout::kBlocked16 && rank != 4) {
      return Unsupported("snippet '" + ir.name + "' has rank-" + std::to_string(rank) +
                         " outputs; blocks of 16 channels are for rank 4");
    }
    for (KernelArg& a : ir.args) {
      a.shape = Padded(a.shape, rank);
      if (layout == ArgLayout::kChannelsLast) {
        std::rotate(a.shape.begin() + 1, a.shape.begin() + 2, a.shape.end());
        continue;
      }
      const int64_t c = a.shape[1];
      if (c != 1 && c % 16 != 0) {
        return Unsupported("snippet '" + ir.name + "': argument '" + a.name + "' has " +
                           std::to_string(c) + " channels, not a multiple of 16");
      }
      a.shape = {a.shape[0], c == 1 ? 1 : c / 16, a.shape[2], a.shape[3], c == 1 ? 1 : 16};
    }
  }
  TESSEL_RETURN_IF_ERROR(NormalizeDomain(ir));
  TESSEL_RETURN_IF_ERROR(InsertMemoryOps(ir));
  return ir;
}

StatusOr<std::unique_ptr<ir::Graph>> SingleOpBody(const ir::Node& node, int opset,
                                                  std::vector<ir::Value*>* outer_inputs) {
  auto body = std::make_unique<ir::Graph>();
  body->set_opset_version(opset);
  body->set_name(node.name);
  std::vector<ir::Value*> ins;
  for (ir::Value* in : node.inputs) {
    if (!in) {
      ins.push_back(nullptr);
    } else if (in->is_constant() && in->constant.num_elements() == 1) {
      ins.push_back(body->AddConstant(body->UniqueValueName(in->name), in->constant));
    } else {
      ir::Value* v = body->AddValue(body->UniqueValueName(in->name), in->dtype, in->shape, true);
      body->inputs().push_back(v);
      outer_inputs->push_back(in);
      ins.push_back(v);
    }
  }
  std::vector<ir::Value*> outs;
  for (ir::Value* o : node.outputs) {
    outs.push_back(o ? body->AddValue(body->UniqueValueName(o->name), o->dtype, o->shape, true)
                     : nullptr);
  }
  ir::Node* copy = body->AddNode(node.op_type, node.name, ins, outs);
  copy->domain = node.domain;
  copy->attrs = node.attrs;
  TESSEL_RETURN_IF_ERROR(ops::InferNode(*copy, opset));
  for (ir::Value* o : outs) {
    if (o) body->outputs().push_back(o);
  }
  return body;
}

}  // namespace tessel::snippets
