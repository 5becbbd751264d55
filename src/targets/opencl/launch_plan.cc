#include "targets/opencl/launch_plan.h"

#include <algorithm>
#include <limits>

#include "core/check.h"
#include "ops/op_registry.h"
#include "snippets/canonicalize.h"
#include "snippets/lower.h"

namespace tessel::opencl {

namespace {

// Kernels index with 32-bit ints (fast on every GPU): no tensor, and no
// planned offset, may reach 2^31 elements.
constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

// Every value's buffer and element offset: the pools of `layout`, then a
// buffer for each value in none.
Status PlaceValues(const ir::Graph& graph, const ir::MemoryLayout& layout, LaunchPlan& plan) {
  const auto& values = graph.values();
  const bool planned = !layout.empty();
  if (planned) TESSEL_CHECK(layout.values.size() == values.size());
  for (const auto& v : values) {
    if (NumElements(v->shape) > kMaxElements) {
      return Unsupported("value '" + v->name + "' has " + std::to_string(NumElements(v->shape)) +
                         " elements; the OpenCL target indexes at most 2^31 - 1");
    }
  }
  for (size_t p = 0; p < layout.pools.size(); ++p) {
    const ir::MemoryPool& pool = layout.pools[p];
    plan.buffers.push_back(
        {.size_bytes = pool.size_bytes, .pool = static_cast<int>(p), .read_only = pool.read_only});
  }
  plan.values.resize(values.size());
  for (const auto& v : values) {
    const auto id = static_cast<size_t>(v->id);
    const int64_t elem = static_cast<int64_t>(std::max<size_t>(DTypeSize(v->dtype), 1));
    TensorRef& ref = plan.values[id];
    if (planned && layout.values[id].planned()) {
      const ir::BufferPlacement& p = layout.values[id];
      TESSEL_CHECK(p.offset_bytes % elem == 0);
      if (p.offset_bytes / elem > kMaxElements) {
        return Unsupported("value '" + v->name + "' lies at byte " +
                           std::to_string(p.offset_bytes) + " of pool '" +
                           layout.pools[static_cast<size_t>(p.pool)].name +
                           "'; the OpenCL target indexes at most 2^31 - 1 elements");
      }
      ref.buffer = p.pool;
      ref.offset = static_cast<int32_t>(p.offset_bytes / elem);
    } else {
      ref.buffer = static_cast<int32_t>(plan.buffers.size());
      plan.buffers.push_back(
          {.size_bytes = static_cast<int64_t>(v->size_bytes()), .value = static_cast<int>(v->id)});
    }
  }
  return Status::Ok();
}

// Node `i`'s snippet kernel, lowered, when it runs as one; its inputs when
// they are not the node's (a one-op snippet's, whose scalar constants are
// immediates) go to `inputs`.
Status LowerSnippet(const ir::Graph& graph, size_t i, LaunchPlan& plan,
                    std::vector<ir::Value*>* inputs) {
  const ir::Node& node = *graph.nodes()[i];
  std::unique_ptr<ir::Graph> single;
  if (node.op_type != "Subgraph" && snippets::IsFusable(node, graph.opset_version())) {
    TESSEL_ASSIGN_OR_RETURN(single, snippets::SingleOpBody(node, graph.opset_version(), inputs));
  } else if (node.op_type != "Subgraph" || !node.body) {
    return Status::Ok();
  }
  StatusOr<snippets::KernelIR> ir = snippets::LowerSubgraph(single ? *single : *node.body);
  if (!ir.ok() && single) {
    // An op the snippet lowering does not take in this form (PRelu's
    // per-channel slope before opset 7, say) has no OpenCL kernel.
    return Unsupported(node.Describe() + ": the OpenCL target has no kernel for it (" +
                       ir.status().message() + ")");
  }
  if (!ir.ok()) return ir.status().WithContext(node.Describe() + " on OpenCL");
  plan.snippets[i] = std::move(*ir);
  return Status::Ok();
}

}  // namespace

std::string SnippetKernelName(size_t index) {
  return "f32_snippet_" + std::to_string(index) + "__opencl";
}

StatusOr<LaunchPlan> PlanLaunches(const ir::Graph& graph, const ir::MemoryLayout& layout,
                                  const PlanOptions& options) {
  LaunchPlan plan;
  TESSEL_RETURN_IF_ERROR(PlaceValues(graph, layout, plan));
  const auto& nodes = graph.nodes();
  plan.snippets.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<ir::Value*> single_op_inputs;
    TESSEL_RETURN_IF_ERROR(LowerSnippet(graph, i, plan, &single_op_inputs));
    const bool snippet = plan.snippets[i].has_value();
    NodeContext ctx{*nodes[i], graph.opset_version(),
                    [&plan](const ir::Value* v) {
                      return v ? plan.values[static_cast<size_t>(v->id)] : TensorRef{};
                    },
                    snippet ? SnippetKernelName(i) : std::string(),
                    snippet && nodes[i]->op_type != "Subgraph" ? &single_op_inputs : nullptr};
    ctx.compute_units = std::max<int64_t>(options.compute_units, 1);
    const size_t first = plan.launches.size();
    TESSEL_RETURN_IF_ERROR(BuildNodeLaunches(ctx, &plan.launches));
    for (size_t k = first; k < plan.launches.size(); ++k) {
      plan.launches[k].node = static_cast<int>(i);
    }
  }
  return plan;
}

}  // namespace tessel::opencl
