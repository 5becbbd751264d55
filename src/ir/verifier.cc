#include "ir/verifier.h"

#include <unordered_set>

namespace tessel::ir {

namespace {

Status CheckTyped(const Value& v, bool require_types) {
  if (!require_types) return Status::Ok();
  if (v.dtype == DType::kUndefined || !v.shape_known) {
    return InvalidArgument("value '" + v.name + "' has no dtype or shape");
  }
  for (int64_t d : v.shape) {
    if (d < 0)
      return InvalidArgument("value '" + v.name + "' has a dynamic shape " +
                             ShapeToString(v.shape));
  }
  if (v.is_constant() && (v.constant.dtype() != v.dtype || v.constant.shape() != v.shape)) {
    return InvalidArgument("constant '" + v.name + "' holds " + DTypeName(v.constant.dtype()) +
                           " " + ShapeToString(v.constant.shape()) + " but is typed " +
                           DTypeName(v.dtype) + " " + ShapeToString(v.shape));
  }
  return Status::Ok();
}

}  // namespace

Status VerifyGraph(const Graph& graph, bool require_types) {
  std::unordered_set<std::string> value_names, node_names;
  std::unordered_set<const Value*> owned;
  for (size_t i = 0; i < graph.values().size(); ++i) {
    const Value& v = *graph.values()[i];
    if (v.id != static_cast<int>(i))
      return InvalidArgument("value '" + v.name + "' has a stale id");
    if (!value_names.insert(v.name).second) {
      return InvalidArgument("two values are named '" + v.name + "'");
    }
    owned.insert(&v);
  }
  std::unordered_set<const Value*> available;
  for (const Value* in : graph.inputs()) {
    if (!owned.count(in)) return InvalidArgument("a graph input is not owned by the graph");
    TESSEL_RETURN_IF_ERROR(CheckTyped(*in, require_types));
    available.insert(in);
  }
  for (const auto& n : graph.nodes()) {
    if (!node_names.insert(n->name).second) {
      return InvalidArgument("two nodes are named '" + n->name + "'");
    }
    for (const Value* in : n->inputs) {
      if (!in) continue;
      if (!owned.count(in))
        return InvalidArgument(n->Describe() + " reads a value the graph does not own");
      if (!in->is_constant() && !available.count(in)) {
        return InvalidArgument(n->Describe() + " reads '" + in->name + "' before it is produced");
      }
    }
    for (const Value* o : n->outputs) {
      if (!o) continue;
      if (!owned.count(o))
        return InvalidArgument(n->Describe() + " writes a value the graph does not own");
      if (o->producer != n.get()) {
        return InvalidArgument(n->Describe() + " writes '" + o->name + "' but is not its producer");
      }
      if (!available.insert(o).second) {
        return InvalidArgument("value '" + o->name + "' is written twice");
      }
      TESSEL_RETURN_IF_ERROR(CheckTyped(*o, require_types));
    }
  }
  for (const Value* o : graph.outputs()) {
    if (!o->is_constant() && !available.count(o)) {
      return InvalidArgument("graph output '" + o->name + "' is never produced");
    }
    TESSEL_RETURN_IF_ERROR(CheckTyped(*o, require_types));
  }
  return Status::Ok();
}

}  // namespace tessel::ir
