#include "model/graph_memory.h"

#include <algorithm>

#include "core/resources.h"
#include "ir/texture.h"
#include "memory/verifier.h"
#include "ops/subgraph.h"

namespace tessel {

namespace {

// Tensors are aligned for vector loads of any width the targets use.
constexpr int64_t kBufferAlignment = 64;

// An op whose output 0 may be written over an input of its dtype and shape:
// elementwise and broadcast kernels by contract (op_registry.h), and fused
// Subgraphs, whose JIT kernel allows an output to be an input of the same
// shape and whose reference kernel writes outputs only once the body has
// run, except an output that is a body input passed through (a copy onto
// itself).
// A view (ops::IsView: output 0 holds input 0's bytes unchanged) may simply
// be input 0's buffer when that dies here (the copy kernels skip copying a
// buffer onto itself).
// So may a node whose kernel is a view (ir::KernelChoice::view): a Transpose
// between channels last and plain.
// Whether output 0 of `node`, run by `kernel`, may share the buffer of its
// input `in`.
bool MayShare(const ir::Node& node, const ir::KernelChoice& kernel, const ir::Value& in,
              const ir::Value& out) {
  if (in.dtype != out.dtype) return false;
  if (ops::IsView(node) || kernel.view) {
    return node.input(0) == &in && in.size_bytes() == out.size_bytes();
  }
  return in.shape == out.shape;
}

bool MayRunInPlace(const ir::Node& node, const ir::KernelChoice& kernel) {
  if (ops::IsView(node) || kernel.view) return true;
  if (ops::IsSubgraph(node)) {
    if (!node.body || node.body->outputs().empty()) return false;
    const ir::Value* first = node.body->outputs()[0];
    const auto& body_inputs = node.body->inputs();
    return !first->is_constant() &&
           std::find(body_inputs.begin(), body_inputs.end(), first) == body_inputs.end();
  }
  if (node.outputs.size() != 1) return false;
  const ops::OpSchema* schema = ops::OpRegistry::Global().Find(node.op_type, node.domain);
  return schema && (schema->op_class == ops::OpClass::kElementwise ||
                    schema->op_class == ops::OpClass::kBroadcast);
}

bool IsTexture(const ir::Value& v) { return v.scope != ir::StorageScope::kGlobal; }

// The values of `graph` in a texture scope as a 2D problem (graph_memory.h),
// each with the lifespan its buffer would have; `value_texture` by value id.
Status AddTextureValues(const ir::Graph& graph, const ir::Liveness& liveness,
                        memory::TextureProblem& textures, std::vector<int32_t>& value_texture) {
  textures.kinds.resize(2);
  textures.kinds[kTextureKind] = {.name = "texture"};
  textures.kinds[kWeightKind] = {.name = "weight", .read_only = true};
  textures.max_width = textures.max_height = ir::kMinImage2dExtent;
  value_texture.assign(graph.values().size(), -1);
  std::vector<bool> boundary(graph.values().size(), false);
  for (const ir::Value* v : graph.inputs()) boundary[static_cast<size_t>(v->id)] = true;
  for (const ir::Value* v : graph.outputs()) boundary[static_cast<size_t>(v->id)] = true;
  const int64_t num_steps = liveness.num_steps;
  std::vector<int64_t> produced_at(graph.values().size(), -1);
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    for (const ir::Value* v : graph.nodes()[i]->outputs) {
      if (v) produced_at[static_cast<size_t>(v->id)] = static_cast<int64_t>(i);
    }
  }
  auto add = [&](const ir::Value& v, memory::Lifespan live) -> Status {
    const auto id = static_cast<size_t>(v.id);
    const std::string who = "value '" + v.name + "' in scope " + ir::StorageScopeName(v.scope);
    const bool weight = v.scope == ir::StorageScope::kTextureWeight;
    if (boundary[id]) {
      return InvalidArgument(who + " is a graph input or output; those are buffers");
    }
    if (weight != v.is_constant()) {
      return InvalidArgument(who + (weight ? " is not a constant" : " is a constant") +
                             "; constants take texture:weight, activations texture");
    }
    const std::optional<ir::TextureExtent> e = ir::TextureExtentOf(v);
    if (!e) {
      return InvalidArgument(who + " has layout " + ir::LayoutName(v.layout) +
                             ", which has no 2D extent for its shape");
    }
    value_texture[id] = static_cast<int32_t>(textures.tokens.size());
    textures.tokens.push_back({.name = v.name,
                               .width = e->width,
                               .height = e->height,
                               .live = live,
                               .kind = weight ? kWeightKind : kTextureKind});
    return Status::Ok();
  };
  for (const auto& v : graph.values()) {
    const auto id = static_cast<size_t>(v->id);
    if (!IsTexture(*v)) continue;
    if (v->is_constant() || produced_at[id] < 0) {
      if (!liveness.read[id]) continue;  // an unused constant, as for buffers
      TESSEL_RETURN_IF_ERROR(add(*v, {0, std::max<int64_t>(num_steps, 1)}));
      continue;
    }
    const int64_t step = produced_at[id];
    TESSEL_RETURN_IF_ERROR(add(*v, {step, std::max(liveness.last_read[id], step + 1)}));
  }
  // A node's texture inputs and its texture outputs lie in different images:
  // its kernel reads the ones and writes the others.
  for (const auto& node : graph.nodes()) {
    for (const ir::Value* out : node->outputs) {
      const int32_t o = out ? value_texture[static_cast<size_t>(out->id)] : -1;
      if (o < 0) continue;
      for (const ir::Value* in : node->inputs) {
        const int32_t i = in ? value_texture[static_cast<size_t>(in->id)] : -1;
        if (i < 0 || i == o) continue;
        auto& a = textures.tokens[static_cast<size_t>(o)].apart;
        if (std::find(a.begin(), a.end(), i) != a.end()) continue;
        a.push_back(i);
        textures.tokens[static_cast<size_t>(i)].apart.push_back(o);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<GraphMemoryProblem> BuildMemoryProblem(const ir::Graph& graph,
                                                const std::vector<targets::NodeKernel>& kernels,
                                                const MemoryOptions& options) {
  return BuildMemoryProblem(graph, ir::ComputeLiveness(graph), kernels, options);
}

StatusOr<GraphMemoryProblem> BuildMemoryProblem(const ir::Graph& graph,
                                                const ir::Liveness& liveness,
                                                const std::vector<targets::NodeKernel>& kernels,
                                                const MemoryOptions& options) {
  if (kernels.size() != graph.nodes().size()) {
    return Internal("kernels were selected for " + std::to_string(kernels.size()) +
                    " nodes; the graph has " + std::to_string(graph.nodes().size()));
  }
  GraphMemoryProblem out;
  memory::Problem& problem = out.problem;
  std::vector<memory::PoolIndex> workspace, constants;
  for (const memory::PoolInfo& pool : options.pools) {
    for (const memory::PoolInfo& other : problem.pools) {
      if (other.name == pool.name) {
        return InvalidArgument("pool '" + pool.name + "' is given twice");
      }
    }
    (pool.read_only ? constants : workspace)
        .push_back(static_cast<memory::PoolIndex>(problem.pools.size()));
    problem.pools.push_back(pool);
  }
  if (workspace.empty()) {
    workspace.push_back(static_cast<memory::PoolIndex>(problem.pools.size()));
    problem.pools.push_back({.name = "workspace"});
  }
  if (constants.empty()) {
    constants.push_back(static_cast<memory::PoolIndex>(problem.pools.size()));
    problem.pools.push_back({.name = "constants", .read_only = true});
  }

  const auto& nodes = graph.nodes();
  const auto num_steps = static_cast<int64_t>(nodes.size());
  const size_t num_values = graph.values().size();
  if (liveness.last_read.size() != num_values || liveness.num_steps != num_steps) {
    return Internal("the liveness given is not this graph's");
  }
  // last_use[v]: one past the last step that reads v.
  const std::vector<int64_t>& last_use = liveness.last_read;
  const std::vector<bool>& used = liveness.read;
  std::vector<bool> is_output(num_values, false);
  for (const ir::Value* v : graph.outputs()) is_output[static_cast<size_t>(v->id)] = true;

  out.value_buffer.assign(num_values, -1);
  out.scratch_buffer.resize(nodes.size());
  out.in_place.assign(nodes.size(), -1);
  auto add_buffer = [&](std::string name, int64_t size, int64_t first, int64_t last,
                        const std::vector<memory::PoolIndex>& candidates,
                        GraphMemoryProblem::Origin origin) {
    memory::BufferInfo b;
    b.name = std::move(name);
    b.size_bytes = size;
    b.alignment = kBufferAlignment;
    b.live = {first, std::max(last, first + 1)};
    b.pool_candidates = candidates;
    problem.buffers.push_back(std::move(b));
    out.origins.push_back(origin);
    return static_cast<int32_t>(problem.buffers.size() - 1);
  };

  TESSEL_RETURN_IF_ERROR(AddTextureValues(graph, liveness, out.textures, out.value_texture));
  // Constants live for the whole run; they never share memory.
  for (const auto& v : graph.values()) {
    if (!v->is_constant() || !used[static_cast<size_t>(v->id)] || IsTexture(*v)) continue;
    out.value_buffer[static_cast<size_t>(v->id)] =
        add_buffer(v->name, static_cast<int64_t>(v->size_bytes()), 0,
                   std::max<int64_t>(num_steps, 1), constants, {.value_id = v->id});
  }
  if (options.plan_io) {
    for (const ir::Value* v : graph.inputs()) {
      const auto id = static_cast<size_t>(v->id);
      if (v->is_constant() || out.value_buffer[id] >= 0) continue;
      out.value_buffer[id] = add_buffer(v->name, static_cast<int64_t>(v->size_bytes()), 0,
                                        last_use[id], workspace, {.value_id = v->id});
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    const auto step = static_cast<int64_t>(i);
    const std::vector<ops::ScratchNeed>& needs = kernels[i].scratch;
    for (size_t k = 0; k < needs.size(); ++k) {
      const ops::ScratchNeed& need = needs[k];
      if (need.size_bytes < 0 || need.alignment < 1 || (need.alignment & (need.alignment - 1))) {
        return Internal(node.Describe() + " declares scratch '" + need.name +
                        "' with a bad size or alignment");
      }
      const int32_t b =
          add_buffer(node.name + "/" + need.name, need.size_bytes, step, step + 1, workspace,
                     {.node = static_cast<int32_t>(i), .scratch = static_cast<int32_t>(k)});
      problem.buffers[static_cast<size_t>(b)].alignment =
          std::max(kBufferAlignment, need.alignment);
      out.scratch_buffer[i].push_back(b);
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      const ir::Value* v = node.outputs[k];
      if (!v) continue;
      const auto id = static_cast<size_t>(v->id);
      if ((is_output[id] && !options.plan_io) || IsTexture(*v)) continue;  // the caller's, or 2D
      const int64_t last = std::max(last_use[id], step + 1);
      if (k == 0 && options.in_place && MayRunInPlace(node, kernels[i].kernel)) {
        for (size_t j = 0; j < node.inputs.size(); ++j) {
          const ir::Value* in = node.inputs[j];
          if (!in || in->is_constant() || !MayShare(node, kernels[i].kernel, *in, *v)) continue;
          const auto in_id = static_cast<size_t>(in->id);
          const int32_t shared = out.value_buffer[in_id];
          if (shared < 0 || last_use[in_id] != step + 1 || is_output[in_id]) continue;
          out.value_buffer[id] = shared;
          problem.buffers[static_cast<size_t>(shared)].live.last_use = last;
          out.in_place[i] = static_cast<int32_t>(j);
          break;
        }
        if (out.value_buffer[id] >= 0) continue;
      }
      out.value_buffer[id] = add_buffer(v->name, static_cast<int64_t>(v->size_bytes()), step, last,
                                        workspace, {.value_id = v->id});
    }
  }
  return out;
}

ir::MemoryLayout MakeMemoryLayout(const GraphMemoryProblem& buffers, const memory::Plan& plan,
                                  const memory::TexturePlan& textures) {
  ir::MemoryLayout layout;
  layout.algorithm = plan.algorithm;
  for (size_t p = 0; p < buffers.problem.pools.size(); ++p) {
    const memory::PoolInfo& pool = buffers.problem.pools[p];
    layout.pools.push_back({pool.name, plan.pool_used_bytes[p], pool.read_only});
  }
  auto placement = [&](int32_t b) {
    if (b < 0) return ir::BufferPlacement{};
    const memory::Placement& p = plan.placements[static_cast<size_t>(b)];
    return ir::BufferPlacement{p.pool, p.offset_bytes};
  };
  for (int32_t b : buffers.value_buffer) layout.values.push_back(placement(b));
  for (const auto& node_scratch : buffers.scratch_buffer) {
    layout.scratch.emplace_back();
    for (int32_t b : node_scratch) layout.scratch.back().push_back(placement(b));
  }
  layout.in_place = buffers.in_place;
  if (buffers.textures.tokens.empty()) return layout;
  for (const memory::TextureImage& image : textures.images) {
    layout.textures.push_back(
        {.name = image.name,
         .width = image.width,
         .height = image.height,
         .read_only = buffers.textures.kinds[static_cast<size_t>(image.kind)].read_only});
  }
  layout.texture_values.resize(buffers.value_texture.size());
  for (size_t id = 0; id < buffers.value_texture.size(); ++id) {
    const int32_t t = buffers.value_texture[id];
    if (t < 0) continue;
    const memory::TexturePosition& p = textures.positions[static_cast<size_t>(t)];
    layout.texture_values[id] = {.pool = p.image, .x = p.x, .y = p.y};
  }
  return layout;
}

memory::Plan PlaceUnshared(const memory::Problem& problem) {
  memory::Plan plan;
  plan.algorithm = "none";
  plan.pool_used_bytes.assign(problem.pools.size(), 0);
  for (const memory::BufferInfo& b : problem.buffers) {
    const memory::PoolIndex pool = b.pool_candidates.front();
    int64_t& used = plan.pool_used_bytes[static_cast<size_t>(pool)];
    const int64_t offset = (used + b.alignment - 1) / b.alignment * b.alignment;
    plan.placements.push_back({.pool = pool, .offset_bytes = offset});
    used = offset + b.size_bytes;
  }
  return plan;
}

StatusOr<ir::MemoryLayout> UnsharedLayout(const ir::Graph& graph,
                                          const std::vector<targets::NodeKernel>& kernels) {
  TESSEL_ASSIGN_OR_RETURN(GraphMemoryProblem buffers, BuildMemoryProblem(graph, kernels, {}));
  return MakeMemoryLayout(buffers, PlaceUnshared(buffers.problem),
                          memory::PlaceTexturesUnshared(buffers.textures));
}

namespace {

// CheckMemoryLayout's texture part (graph_memory.h).
Status CheckTextureLayout(const ir::Graph& graph, const ir::MemoryLayout& layout) {
  const bool any = std::any_of(graph.values().begin(), graph.values().end(),
                               [](const auto& v) { return IsTexture(*v); });
  if (!any && layout.textures.empty() && layout.texture_values.empty()) return Status::Ok();
  if (layout.texture_values.size() != graph.values().size()) {
    return InvalidArgument("its texture placements do not match the graph (" +
                           std::to_string(layout.texture_values.size()) + " for " +
                           std::to_string(graph.values().size()) + " values)");
  }
  for (const ir::TexturePool& pool : layout.textures) {
    if (pool.width < 1 || pool.height < 1 || pool.width > ir::kMinImage2dExtent ||
        pool.height > ir::kMinImage2dExtent) {
      return InvalidArgument("texture pool '" + pool.name + "' is " + std::to_string(pool.width) +
                             "x" + std::to_string(pool.height) + " texels; images are 1x1 to " +
                             std::to_string(ir::kMinImage2dExtent) + "x" +
                             std::to_string(ir::kMinImage2dExtent));
    }
  }
  memory::TextureProblem problem;
  std::vector<int32_t> value_texture;
  TESSEL_RETURN_IF_ERROR(
      AddTextureValues(graph, ir::ComputeLiveness(graph), problem, value_texture));
  memory::TexturePlan plan;
  plan.algorithm = layout.algorithm;
  for (const ir::TexturePool& pool : layout.textures) {
    plan.images.push_back({.name = pool.name,
                           .width = pool.width,
                           .height = pool.height,
                           .kind = pool.read_only ? kWeightKind : kTextureKind});
  }
  plan.positions.resize(problem.tokens.size());
  for (const auto& v : graph.values()) {
    const auto id = static_cast<size_t>(v->id);
    const ir::TexturePlacement& p = layout.texture_values[id];
    const int32_t t = value_texture[id];
    if (t < 0) {
      if (p.planned() || p.pool < -1) {
        return InvalidArgument("value '" + v->name + "' in scope " +
                               ir::StorageScopeName(v->scope) + " has a place in a texture pool");
      }
      continue;
    }
    const memory::TextureToken& token = problem.tokens[static_cast<size_t>(t)];
    const std::string who = "value '" + v->name + "' (" + std::to_string(token.width) + "x" +
                            std::to_string(token.height) + " texels, scope " +
                            ir::StorageScopeName(v->scope) + ")";
    if (p.pool < 0 || static_cast<size_t>(p.pool) >= layout.textures.size()) {
      return InvalidArgument(who + " has no texture pool");
    }
    const ir::TexturePool& pool = layout.textures[static_cast<size_t>(p.pool)];
    if (pool.read_only != (token.kind == kWeightKind)) {
      return InvalidArgument(who + " lies in " + (pool.read_only ? "read-only" : "read-write") +
                             " texture pool '" + pool.name + "'");
    }
    if (p.x < 0 || p.y < 0 || p.x > pool.width - token.width || p.y > pool.height - token.height) {
      return InvalidArgument(who + " at (" + std::to_string(p.x) + ", " + std::to_string(p.y) +
                             ") does not fit texture pool '" + pool.name + "' (" +
                             std::to_string(pool.width) + "x" + std::to_string(pool.height) + ")");
    }
    plan.positions[static_cast<size_t>(t)] = {.image = p.pool, .x = p.x, .y = p.y};
  }
  if (Status s = memory::VerifyTexturePlan(problem, plan); !s.ok()) {
    return InvalidArgument("its textures do not hold: " + s.message());
  }
  return Status::Ok();
}

}  // namespace

Status CheckMemoryLayout(const ir::Graph& graph, const ir::MemoryLayout& layout) {
  constexpr int64_t kMaxPoolBytes = int64_t{1} << 40;
  const auto& nodes = graph.nodes();
  if (layout.values.size() != graph.values().size() || layout.scratch.size() != nodes.size() ||
      layout.in_place.size() != nodes.size()) {
    return InvalidArgument("its size does not match the graph");
  }
  int64_t workspace = 0;
  for (const ir::MemoryPool& pool : layout.pools) {
    if (pool.size_bytes < 0 || pool.size_bytes > kMaxPoolBytes) {
      return InvalidArgument("pool '" + pool.name + "' has size " +
                             std::to_string(pool.size_bytes));
    }
    if (!pool.read_only) workspace += pool.size_bytes;
  }
  // Refused before any arena is allocated.
  if (workspace > PhysicalMemoryBytes()) {
    return ResourceExhausted("its workspace pools need " + FormatByteSize(workspace) +
                             "; this machine has " + FormatByteSize(PhysicalMemoryBytes()));
  }
  auto inside = [&](const ir::BufferPlacement& p, int64_t size, bool constant) -> bool {
    if (p.pool < 0 || static_cast<size_t>(p.pool) >= layout.pools.size()) return false;
    const ir::MemoryPool& pool = layout.pools[static_cast<size_t>(p.pool)];
    return pool.read_only == constant && p.offset_bytes >= 0 && size >= 0 &&
           p.offset_bytes <= pool.size_bytes - size;
  };
  std::vector<bool> is_output(graph.values().size(), false);
  for (const ir::Value* v : graph.outputs()) is_output[static_cast<size_t>(v->id)] = true;
  for (const auto& v : graph.values()) {
    const ir::BufferPlacement& p = layout.values[static_cast<size_t>(v->id)];
    if (p.pool < -1)
      return InvalidArgument("value '" + v->name + "' has pool " + std::to_string(p.pool));
    if (IsTexture(*v)) {
      if (p.planned()) {
        return InvalidArgument("value '" + v->name + "' in scope " +
                               ir::StorageScopeName(v->scope) + " has a place in a byte pool");
      }
      continue;
    }
    if (p.planned() && !inside(p, static_cast<int64_t>(v->size_bytes()), v->is_constant())) {
      return InvalidArgument("value '" + v->name + "' does not fit where it is placed");
    }
    if (!p.planned() && v->producer && !is_output[static_cast<size_t>(v->id)]) {
      return InvalidArgument("value '" + v->name + "' has no place");
    }
  }
  TESSEL_RETURN_IF_ERROR(CheckTextureLayout(graph, layout));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    const int32_t j = layout.in_place[i];
    if (j == -1) continue;
    const ir::Value* in = j >= 0 ? node.input(static_cast<size_t>(j)) : nullptr;
    const ir::Value* out = node.output(0);
    if (!in || !out || IsTexture(*in) || IsTexture(*out) || !MayRunInPlace(node, node.kernel) ||
        !MayShare(node, node.kernel, *in, *out) ||
        layout.values[static_cast<size_t>(in->id)].pool !=
            layout.values[static_cast<size_t>(out->id)].pool ||
        layout.values[static_cast<size_t>(in->id)].offset_bytes !=
            layout.values[static_cast<size_t>(out->id)].offset_bytes) {
      return InvalidArgument(node.Describe() + " runs in place over an input it cannot share");
    }
  }
  return Status::Ok();
}

Status CheckLayoutFitsKernels(const ir::Graph& graph, const ir::MemoryLayout& layout,
                              const std::vector<targets::NodeKernel>& kernels) {
  TESSEL_RETURN_IF_ERROR(CheckMemoryLayout(graph, layout));
  const auto& nodes = graph.nodes();
  auto inside = [&](const ir::BufferPlacement& p, int64_t size) -> bool {
    if (p.pool < 0 || static_cast<size_t>(p.pool) >= layout.pools.size()) return false;
    const ir::MemoryPool& pool = layout.pools[static_cast<size_t>(p.pool)];
    return !pool.read_only && p.offset_bytes >= 0 && size >= 0 &&
           p.offset_bytes <= pool.size_bytes - size;
  };
  // The buffers as this target's kernels need them, placed where the file says.
  MemoryOptions options;
  for (const ir::MemoryPool& pool : layout.pools) {
    options.pools.push_back(
        {.name = pool.name, .size_limit_bytes = pool.size_bytes, .read_only = pool.read_only});
  }
  options.plan_io = false;
  for (const ir::Value* v : graph.inputs()) {
    options.plan_io |= !v->is_constant() && layout.values[static_cast<size_t>(v->id)].planned();
  }
  for (const ir::Value* v : graph.outputs()) {
    options.plan_io |= v->producer && layout.values[static_cast<size_t>(v->id)].planned();
  }
  options.in_place =
      std::any_of(layout.in_place.begin(), layout.in_place.end(), [](int32_t j) { return j >= 0; });
  TESSEL_ASSIGN_OR_RETURN(GraphMemoryProblem buffers, BuildMemoryProblem(graph, kernels, options));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& node = *nodes[i];
    const std::vector<int32_t>& needs = buffers.scratch_buffer[i];
    if (needs.size() != layout.scratch[i].size()) {
      return InvalidArgument(node.Describe() + " has " + std::to_string(layout.scratch[i].size()) +
                             " scratch buffers; its kernel here needs " +
                             std::to_string(needs.size()) + " (recompile the model here)");
    }
    for (size_t k = 0; k < needs.size(); ++k) {
      const memory::BufferInfo& need = buffers.problem.buffers[static_cast<size_t>(needs[k])];
      const ir::BufferPlacement& p = layout.scratch[i][k];
      if (!inside(p, need.size_bytes) || p.offset_bytes % need.alignment != 0) {
        return InvalidArgument(node.Describe() + ": scratch '" + need.name +
                               "' does not fit where it is placed (recompile the model here)");
      }
    }
  }
  if (buffers.in_place != layout.in_place) {
    return InvalidArgument("its in-place choices are not this compiler's (recompile the model)");
  }
  // No two buffers live at once may share a byte at the sizes this
  // machine's kernels use: a scratchpad can be larger here than where the
  // model was compiled, and a reorder buffer planned at zero bytes there may be needed.
  memory::Plan plan;
  plan.pool_used_bytes.assign(buffers.problem.pools.size(), 0);
  for (size_t b = 0; b < buffers.problem.buffers.size(); ++b) {
    const GraphMemoryProblem::Origin& origin = buffers.origins[b];
    const ir::BufferPlacement& p =
        origin.value_id >= 0
            ? layout.values[static_cast<size_t>(origin.value_id)]
            : layout.scratch[static_cast<size_t>(origin.node)][static_cast<size_t>(origin.scratch)];
    if (!p.planned()) {
      return InvalidArgument("buffer '" + buffers.problem.buffers[b].name + "' has no place");
    }
    plan.placements.push_back({.pool = p.pool, .offset_bytes = p.offset_bytes});
    int64_t& used = plan.pool_used_bytes[static_cast<size_t>(p.pool)];
    used = std::max(used, p.offset_bytes + buffers.problem.buffers[b].size_bytes);
  }
  if (Status s = memory::VerifyPlan(buffers.problem, plan); !s.ok()) {
    return InvalidArgument("its buffers overlap at the sizes of this machine's kernels: " +
                           s.message() + " (recompile the model here)");
  }
  return Status::Ok();
}

}  // namespace tessel
