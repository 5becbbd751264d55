#include "targets/opencl/launch_plan.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

#include "core/check.h"
#include "ir/texture.h"
#include "ops/op_registry.h"
#include "snippets/canonicalize.h"
#include "snippets/lower.h"
#include "targets/opencl/texture_launches.h"

namespace tessel::opencl {

namespace {

// Kernels index with 32-bit ints (fast on every GPU): no tensor, and no
// planned offset, may reach 2^31 elements.
constexpr int64_t kMaxElements = std::numeric_limits<int32_t>::max();

// Every value's buffer and element offset: the pools of `layout`, then a
// buffer for each value in none.
Status PlaceValues(const ir::Graph& graph, const ir::MemoryLayout& layout,
                   const StorageDecisions* storage, LaunchPlan& plan) {
  const auto& values = graph.values();
  const bool planned = !layout.empty();
  if (planned) TESSEL_CHECK(layout.values.size() == values.size());
  auto scope = [&](const ir::Value& v) {
    return storage ? storage->values[static_cast<size_t>(v.id)].scope : ir::StorageScope::kGlobal;
  };
  for (const auto& v : values) {
    if (scope(*v) != ir::StorageScope::kGlobal) continue;
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
  const size_t first_texture = plan.buffers.size();
  for (size_t t = 0; t < layout.textures.size(); ++t) {
    const ir::TexturePool& pool = layout.textures[t];
    plan.buffers.push_back({.pool = static_cast<int>(t),
                            .read_only = pool.read_only,
                            .image = true,
                            .width = pool.width,
                            .height = pool.height});
  }
  plan.values.resize(values.size());
  for (const auto& v : values) {
    const auto id = static_cast<size_t>(v->id);
    if (scope(*v) != ir::StorageScope::kGlobal) {
      const ir::Layout texel_layout = storage->values[id].layout;
      const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v->shape, texel_layout);
      TESSEL_CHECK(e.has_value());
      TensorRef& ref = plan.values[id];
      if (id < layout.texture_values.size() && layout.texture_values[id].planned()) {
        const ir::TexturePlacement& p = layout.texture_values[id];
        ref = {.buffer = static_cast<int32_t>(first_texture + static_cast<size_t>(p.pool)),
               .x = static_cast<int32_t>(p.x),
               .y = static_cast<int32_t>(p.y)};
      } else {
        ref.buffer = static_cast<int32_t>(plan.buffers.size());
        plan.buffers.push_back({.value = static_cast<int>(v->id),
                                .read_only = v->is_constant(),
                                .image = true,
                                .width = e->width,
                                .height = e->height});
      }
      continue;
    }
    const int64_t elem = static_cast<int64_t>(std::max<size_t>(DTypeSize(v->dtype), 1));
    TensorRef& ref = plan.values[id];
    if (planned && layout.values[id].planned()) {
      const ir::BufferPlacement& p = layout.values[id];
      TESSEL_CHECK(p.offset_bytes % elem == 0);
      // Kernels index the pool from the value's offset in int: its last
      // element too must be within reach.
      if (p.offset_bytes / elem + NumElements(v->shape) > kMaxElements) {
        return Unsupported("value '" + v->name + "' ends past byte " +
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
// they are not the node's go to `inputs`.
Status LowerSnippet(const ir::Graph& graph, size_t i, LaunchPlan& plan,
                    std::vector<ir::Value*>* inputs) {
  TESSEL_ASSIGN_OR_RETURN(plan.snippets[i],
                          LowerNodeSnippet(*graph.nodes()[i], graph.opset_version(), inputs));
  return Status::Ok();
}

// Node `i` on a typed elementwise kernel, when the snippets or the op
// library refused it (`refused`, which stands when no typed kernel takes
// the op either).
Status PlanTypedNode(const ir::Graph& graph, size_t i, const Status& refused,
                     const NodeContext& ctx, LaunchPlan& plan) {
  if (refused.code() != StatusCode::kUnsupported) return refused;
  TESSEL_ASSIGN_OR_RETURN(plan.typed[i],
                          PlanTypedElementwise(*graph.nodes()[i], graph.opset_version()));
  if (!plan.typed[i]) return refused;
  for (PendingLaunch& l :
       TypedElementwiseLaunches(*plan.typed[i], ctx, TypedKernelName(*plan.typed[i], i))) {
    plan.launches.push_back(std::move(l));
  }
  return Status::Ok();
}

// The scratch textures image nodes convert through, shared by every node
// (launches run in order on one queue). Each use takes, among the images
// the node has not taken yet, the one that grows least in area (the RFC's
// rule), or a new image when every one would grow by more than the use's
// own area.
struct ScratchTextures {
  std::vector<int32_t> buffers;  // the plan's buffers
  std::vector<bool> taken;       // by image: by the current node

  void NextNode() { taken.assign(buffers.size(), false); }
  TensorRef Use(const ir::TextureExtent& e, LaunchPlan& plan) {
    int best = -1;
    int64_t best_added = e.area();
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (taken[i]) continue;
      const PlannedBuffer& b = plan.buffers[static_cast<size_t>(buffers[i])];
      const int64_t added =
          std::max(b.width, e.width) * std::max(b.height, e.height) - b.width * b.height;
      if (best < 0 ? added <= best_added : added < best_added) {
        best = static_cast<int>(i);
        best_added = added;
      }
    }
    if (best < 0) {
      best = static_cast<int>(buffers.size());
      buffers.push_back(static_cast<int32_t>(plan.buffers.size()));
      taken.push_back(false);
      plan.buffers.push_back({.image = true, .width = 1, .height = 1});
    }
    taken[static_cast<size_t>(best)] = true;
    PlannedBuffer& b = plan.buffers[static_cast<size_t>(buffers[static_cast<size_t>(best)])];
    b.width = std::max(b.width, e.width);
    b.height = std::max(b.height, e.height);
    return {.buffer = buffers[static_cast<size_t>(best)]};
  }
};

// A snippet over NCHW4c images: one work item per output texel; its float
// rank-4 activations are images, the rest buffers (`image_args`, by
// argument, is filled in).
void ImageSnippetLaunch(const NodeContext& ctx, const std::string& kernel,
                        const std::vector<ir::Value*>& inputs, std::vector<bool>& image_args,
                        std::vector<PendingLaunch>& launches) {
  PendingLaunch l;
  l.kernel_name = kernel;
  l.program = KernelProgram::kSnippets;
  image_args.clear();
  const ir::Value* out = ctx.node.output(0);
  for (const ir::Value* v : inputs) {
    const bool image = IsSnippetImageArg(*v);
    image_args.push_back(image);
    if (image) {
      l.args.Image(ctx.ref(v));
    } else {
      l.args.Tensor(ctx.ref(v));
    }
    l.bytes += static_cast<int64_t>(v->size_bytes());
  }
  image_args.push_back(true);
  l.args.Image(ctx.ref(out));
  l.bytes += static_cast<int64_t>(out->size_bytes());
  const ir::TextureExtent e = *ir::TextureExtentOf(out->shape, ir::Layout::kNCHW4c);
  l.geometry = {.dims = 2,
                .global = {static_cast<size_t>(e.width), static_cast<size_t>(e.height), 1}};
  l.flops = NumElements(out->shape) *
            static_cast<int64_t>(ctx.node.body ? ctx.node.body->nodes().size() : 1);
  launches.push_back(std::move(l));
}

// Node `i`'s launches on its image kernel: its activations in buffers are
// converted into scratch textures first (the RFC's A0, cache_read into a
// texture), and its output, when it stays a buffer, is written to a
// scratch texture and converted back.
Status PlanImageNode(const ir::Graph& graph, size_t i, const StorageDecisions& storage,
                     const PlanOptions& options, ScratchTextures& scratch, LaunchPlan& plan) {
  const ir::Node& node = *graph.nodes()[i];
  const std::optional<TextureOperands> ops = ImageKernelOperands(node, graph.opset_version());
  TESSEL_CHECK(ops.has_value());
  std::vector<ir::Value*> snippet_inputs;
  TESSEL_ASSIGN_OR_RETURN(plan.snippets[i],
                          LowerNodeSnippet(node, graph.opset_version(), &snippet_inputs));
  auto in_texture = [&](const ir::Value* v) {
    return storage.values[static_cast<size_t>(v->id)].scope != ir::StorageScope::kGlobal;
  };
  std::unordered_map<const ir::Value*, TensorRef> converted;
  scratch.NextNode();
  auto staged = [&](const ir::Value* v) {
    const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v->shape, ir::Layout::kNCHW4c);
    if (!e || e->width > ir::kMinImage2dExtent || e->height > ir::kMinImage2dExtent) {
      return Unsupported(node.Describe() + ": value '" + v->name + "' does not fit an image");
    }
    converted[v] = scratch.Use(*e, plan);
    return Status::Ok();
  };
  for (int k : ops->image_inputs) {
    const ir::Value* v = node.input(static_cast<size_t>(k));
    if (!v || in_texture(v) || converted.count(v)) continue;
    TESSEL_RETURN_IF_ERROR(staged(v));
    AppendBufferToTexture(plan.values[static_cast<size_t>(v->id)], v->shape, converted[v],
                          &plan.launches);
  }
  const ir::Value* out = node.output(0);
  const bool out_in_buffer = !in_texture(out);
  if (out_in_buffer) TESSEL_RETURN_IF_ERROR(staged(out));
  NodeContext ctx{node, graph.opset_version(), [&](const ir::Value* v) {
                    if (!v) return TensorRef{};
                    auto it = converted.find(v);
                    return it != converted.end() ? it->second
                                                 : plan.values[static_cast<size_t>(v->id)];
                  }};
  ctx.compute_units = std::max<int64_t>(options.compute_units, 1);
  if (plan.snippets[i]) {
    ImageSnippetLaunch(ctx, SnippetKernelName(i),
                       node.op_type == "Subgraph" ? node.inputs : snippet_inputs,
                       plan.snippet_image_args[i], plan.launches);
  } else {
    TESSEL_RETURN_IF_ERROR(BuildTextureNodeLaunches(ctx, &plan.launches));
  }
  if (out_in_buffer) {
    AppendTextureToBuffer(converted[out], out->shape, plan.values[static_cast<size_t>(out->id)],
                          &plan.launches);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::optional<snippets::KernelIR>> LowerNodeSnippet(const ir::Node& node, int opset,
                                                             std::vector<ir::Value*>* inputs) {
  std::unique_ptr<ir::Graph> single;
  if (node.op_type != "Subgraph" && snippets::IsFusable(node, opset)) {
    TESSEL_ASSIGN_OR_RETURN(single, snippets::SingleOpBody(node, opset, inputs));
  } else if (node.op_type != "Subgraph" || !node.body) {
    return std::optional<snippets::KernelIR>();
  }
  StatusOr<snippets::KernelIR> ir = snippets::LowerSubgraph(single ? *single : *node.body);
  if (!ir.ok() && single) {
    // An op the snippet lowering does not take in this form (PRelu's
    // per-channel slope before opset 7, say) has no OpenCL kernel.
    return Unsupported(node.Describe() + ": the OpenCL target has no kernel for it (" +
                       ir.status().message() + ")");
  }
  if (!ir.ok()) return ir.status().WithContext(node.Describe() + " on OpenCL");
  return std::optional<snippets::KernelIR>(std::move(*ir));
}

std::vector<bool> InBuffers(const ir::Graph& graph, const PlanOptions& options) {
  std::vector<bool> in_buffer(graph.values().size(), true);
  if (!options.storage) return in_buffer;
  for (size_t v = 0; v < in_buffer.size(); ++v) {
    in_buffer[v] = options.storage->values[v].scope == ir::StorageScope::kGlobal;
  }
  return in_buffer;
}

std::string SnippetKernelName(size_t index) {
  return "f32_snippet_" + std::to_string(index) + "__opencl";
}

StatusOr<LaunchPlan> PlanLaunches(const ir::Graph& graph, const ir::MemoryLayout& layout,
                                  const PlanOptions& options) {
  LaunchPlan plan;
  plan.placements = options.storage ? options.storage->values
                                    : std::vector<targets::ValuePlacement>(graph.values().size());
  TESSEL_RETURN_IF_ERROR(PlaceValues(graph, layout, options.storage, plan));
  const auto& nodes = graph.nodes();
  plan.snippets.resize(nodes.size());
  plan.snippet_image_args.resize(nodes.size());
  plan.typed.resize(nodes.size());
  ScratchTextures scratch;
  int32_t scratch_buffer = -1;  // ctx.scratch's, once a node asks
  const std::vector<std::vector<int64_t>> held = HeldStrides(graph, InBuffers(graph, options));
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (options.storage && options.storage->image_node[i]) {
      const size_t first = plan.launches.size();
      TESSEL_RETURN_IF_ERROR(PlanImageNode(graph, i, *options.storage, options, scratch, plan));
      for (size_t k = first; k < plan.launches.size(); ++k) {
        plan.launches[k].node = static_cast<int>(i);
      }
      continue;
    }
    std::vector<ir::Value*> single_op_inputs;
    const Status lowered = LowerSnippet(graph, i, plan, &single_op_inputs);
    const bool snippet = plan.snippets[i].has_value();
    NodeContext ctx{*nodes[i], graph.opset_version(),
                    [&plan](const ir::Value* v) {
                      return v ? plan.values[static_cast<size_t>(v->id)] : TensorRef{};
                    },
                    snippet ? SnippetKernelName(i) : std::string(),
                    snippet && nodes[i]->op_type != "Subgraph" ? &single_op_inputs : nullptr};
    ctx.compute_units = std::max<int64_t>(options.compute_units, 1);
    ctx.held = &held;
    ctx.scratch = [&plan, &scratch_buffer](int64_t bytes) {
      if (scratch_buffer < 0) {
        scratch_buffer = static_cast<int32_t>(plan.buffers.size());
        plan.buffers.push_back({});
      }
      PlannedBuffer& b = plan.buffers[static_cast<size_t>(scratch_buffer)];
      b.size_bytes = std::max(b.size_bytes, bytes);
      return TensorRef{.buffer = scratch_buffer};
    };
    const size_t first = plan.launches.size();
    const Status built = lowered.ok() ? BuildNodeLaunches(ctx, &plan.launches) : lowered;
    if (!built.ok()) {
      plan.launches.resize(first);
      TESSEL_RETURN_IF_ERROR(PlanTypedNode(graph, i, built, ctx, plan));
    }
    for (size_t k = first; k < plan.launches.size(); ++k) {
      plan.launches[k].node = static_cast<int>(i);
    }
  }
  return plan;
}

}  // namespace tessel::opencl
