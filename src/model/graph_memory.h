// A compiled graph's buffers as a planning problem, the layout a plan makes
// of them, and the checks a runtime runs on a layout read from a file. The
// compiler's plan-memory stage (model/plan_memory.h) plans them; a
// target's Prepare checks them against the kernels it builds.
//
// Buffers and their lifespans, in schedule steps (node i runs at step i; a
// lifespan is the half-open [first_use, last_use)):
//   - a value produced by node p and last read by node c: [p, c + 1); a graph
//     output lives to the end, a value nobody reads only while p runs;
//   - a scratch buffer of node i (its kernel's, targets::NodeKernel): [i, i + 1), so it shares
//     memory with tensors of other steps and with other nodes' scratch;
//   - a graph input, when inputs are planned: [0, last read + 1);
//   - a constant: the whole run, in a read-only pool.
// Values in a texture scope (ir::Value::scope) lie in 2D images instead
// (memory/texture_plan.h), with the same lifespans: activations (scope
// texture) are kind "texture", constants (texture:weight) kind "weight",
// read-only; images are at most ir::kMinImage2dExtent on a side, what every
// device with images offers. They never run in place.
// An elementwise or broadcast op, or a fused Subgraph, whose input dies at it
// with the output's dtype and shape, writes its output over that input: the
// two values are one buffer (in place). So is a view's output (a Reshape, or
// a node whose kernel is one: ir::KernelChoice::view) its input's buffer when
// that dies at it. Precondition: the graph is typed,
// verified and final (value ids and node order are the layout's keys).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/liveness.h"
#include "ir/memory_layout.h"
#include "memory/planner.h"
#include "memory/texture_plan.h"
#include "model/target.h"
#include "ops/op_registry.h"

namespace tessel {

struct MemoryOptions {
  // A registered planner (memory::AlgorithmNames()), or "none": every
  // buffer at an offset of its own, shared with nothing (the baseline a plan
  // is measured against).
  std::string algorithm = std::string(memory::kDefaultAlgorithm);
  // Pools in order of preference: read-write pools take activations and
  // scratch, read-only ones constants. Each kind defaults to one unbounded
  // pool ("workspace", "constants") when none is given.
  std::vector<memory::PoolInfo> pools;
  // Plan graph inputs and outputs into the workspace too; otherwise they are
  // the caller's memory.
  bool plan_io = false;
  // Let elementwise ops write over an input that dies at them.
  bool in_place = true;
  // The byte pools' planner; `verify` covers the texture plan too.
  memory::PlannerOptions planner;
  // The texture planner (ignored with algorithm "none": every texture then
  // has an image of its own).
  memory::TexturePlannerOptions textures;
};

// The graph's buffers as a planning problem, and what each buffer is.
struct GraphMemoryProblem {
  memory::Problem problem;
  struct Origin {
    int32_t value_id = -1;  // a value (the first of those sharing the buffer)
    int32_t node = -1;      // or the scratch buffer `scratch` of this node
    int32_t scratch = -1;
  };
  std::vector<Origin> origins;                       // by buffer
  std::vector<int32_t> value_buffer;                 // by value id; -1: not planned
  std::vector<std::vector<int32_t>> scratch_buffer;  // by node, one per need
  std::vector<int32_t> in_place;                     // by node: the input output 0 reuses, or -1
  // The values in a texture scope, one token each (kinds: kTextureKind,
  // kWeightKind); no token when no value is a texture.
  memory::TextureProblem textures;
  std::vector<int32_t> value_texture;  // by value id: its token in `textures`, or -1
};

// The kinds of GraphMemoryProblem::textures.
inline constexpr int32_t kTextureKind = 0;  // scope texture: images "texture0", ...
inline constexpr int32_t kWeightKind = 1;   // scope texture:weight: images "weight0", ...

// `kernels`: the target's choice for every node (their scratch is planned);
// `liveness`: the graph's (a compiled model holds it), computed when not given.
StatusOr<GraphMemoryProblem> BuildMemoryProblem(const ir::Graph& graph,
                                                const ir::Liveness& liveness,
                                                const std::vector<targets::NodeKernel>& kernels,
                                                const MemoryOptions& options);
StatusOr<GraphMemoryProblem> BuildMemoryProblem(const ir::Graph& graph,
                                                const std::vector<targets::NodeKernel>& kernels,
                                                const MemoryOptions& options);

// `textures` places the tokens of buffers.textures.
ir::MemoryLayout MakeMemoryLayout(const GraphMemoryProblem& buffers, const memory::Plan& plan,
                                  const memory::TexturePlan& textures);

// Algorithm "none": every buffer after the previous one in its first
// candidate pool, so no two share a byte (no pool limit is enforced: it is
// the unplanned baseline a plan is measured against).
memory::Plan PlaceUnshared(const memory::Problem& problem);
// The graph's buffers placed so (all in the default pools, inputs and
// outputs the caller's): what an executor runs on without a plan.
StatusOr<ir::MemoryLayout> UnsharedLayout(const ir::Graph& graph,
                                          const std::vector<targets::NodeKernel>& kernels);

// Checks a layout read from a file against its graph, so that no buffer
// reaches outside its arena: counts match, every placement lies inside its
// pool, constants sit in read-only pools and everything else in read-write
// ones, every value a node produces has a place unless it is a graph output,
// and in-place outputs share their input's place. Values in a texture scope
// have a region of their extent inside a texture pool of their kind (and no
// byte placement), pools are within ir::kMinImage2dExtent, and the texture
// plan passes memory::VerifyTexturePlan (no two values live at once share a
// texel). Names the value, node or pool.
Status CheckMemoryLayout(const ir::Graph& graph, const ir::MemoryLayout& layout);

// CheckMemoryLayout, and then that the layout holds the scratch of
// `kernels` (what a target builds on this machine) at their sizes and
// alignments, with no two buffers live at once sharing a byte.
Status CheckLayoutFitsKernels(const ir::Graph& graph, const ir::MemoryLayout& layout,
                              const std::vector<targets::NodeKernel>& kernels);

}  // namespace tessel
