#include "passes/fuse_channel_shuffle.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "ops/strided_view.h"
#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool Typed(const ir::Value* v) { return v && v->shape_known && v->dtype != DType::kUndefined; }

bool IsOp(const ir::Node* n, const char* op_type) {
  return n && n->domain.empty() && n->op_type == op_type && n->outputs.size() == 1 &&
         Typed(n->outputs[0]);
}

}  // namespace

Status FuseChannelShuffle(ir::Graph& graph) {
  const int opset = graph.opset_version();
  const Readers readers(graph);
  ChainFusion fusion;
  for (const auto& owned : graph.nodes()) {
    ir::Node* concat = owned.get();
    if (!IsOp(concat, "Concat") || concat->inputs.size() < 2 || fusion.Taken(concat)) continue;
    ir::Value* y = concat->outputs[0];
    const Shape& x = concat->inputs[0]->shape;
    const auto groups = static_cast<int64_t>(concat->inputs.size());
    int64_t axis = concat->attrs.Int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(y->shape.size());
    if (axis != 1 || x.size() < 3) continue;
    bool same = true;
    for (const ir::Value* in : concat->inputs) same = same && Typed(in) && in->shape == x;
    if (!same) continue;

    // Reshape to [N, G, C, ...], swap axes 1 and 2, reshape back.
    ir::Node* split_view = readers.Sole(y);
    if (!IsOp(split_view, "Reshape") || split_view->inputs[0] != y) continue;
    Shape grouped = {x[0], groups};
    grouped.insert(grouped.end(), x.begin() + 1, x.end());
    if (split_view->outputs[0]->shape != grouped) continue;
    ir::Node* transpose = readers.Sole(split_view->outputs[0]);
    if (!IsOp(transpose, "Transpose")) continue;
    std::vector<int64_t> perm(grouped.size());
    for (size_t d = 0; d < perm.size(); ++d) perm[d] = static_cast<int64_t>(d);
    std::swap(perm[1], perm[2]);
    if (transpose->attrs.Ints("perm") != perm) continue;
    ir::Node* merge_view = readers.Sole(transpose->outputs[0]);
    if (!IsOp(merge_view, "Reshape") || merge_view->outputs[0]->shape != y->shape) continue;
    ir::Value* shuffled = merge_view->outputs[0];

    // Read whole, or by Slices that cut it into equal channel ranges.
    std::vector<ir::Node*> chain = {split_view, transpose, merge_view};
    std::vector<ir::Value*> outputs = {shuffled};
    std::vector<std::pair<int64_t, ir::Node*>> slices;
    for (ir::Node* r : readers.of(shuffled)) {
      if (!IsOp(r, "Slice") || r->inputs[0] != shuffled) break;
      const std::optional<ops::ChannelRange> range = ops::ChannelRangeOf(*r, opset);
      if (!range) break;
      slices.emplace_back(range->start, r);
    }
    if (!readers.IsGraphOutput(shuffled) && !slices.empty() &&
        slices.size() == readers.of(shuffled).size()) {
      std::sort(slices.begin(), slices.end());
      const int64_t part = y->shape[1] / static_cast<int64_t>(slices.size());
      bool tiles = y->shape[1] % static_cast<int64_t>(slices.size()) == 0;
      for (size_t k = 0; tiles && k < slices.size(); ++k) {
        tiles = slices[k].first == static_cast<int64_t>(k) * part &&
                slices[k].second->outputs[0]->shape[1] == part;
      }
      if (tiles) {
        outputs.clear();
        for (const auto& [start, slice] : slices) {
          chain.push_back(slice);
          outputs.push_back(slice->outputs[0]);
        }
      }
    }

    bool free = true;
    for (const ir::Node* n : chain) free = free && !fusion.Taken(n);
    if (!free) continue;
    fusion.Fuse(chain, concat, "ChannelShuffle", concat->name, AttributeMap(), concat->inputs);
    concat->outputs = outputs;
    y->producer = nullptr;
    for (ir::Value* v : outputs) v->producer = concat;
  }
  fusion.Finish(graph);
  return Status::Ok();
}

}  // namespace tessel::passes
