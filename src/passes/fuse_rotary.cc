#include "passes/fuse_rotary.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "ops/strided_view.h"
#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool IsFloat32(const ir::Value* v) { return v && v->dtype == DType::kFloat32 && v->shape_known; }

// A Slice of `of` along its last axis: (start, count, step).
std::optional<ops::LastAxisRange> RangeOf(const ir::Value* v, const ir::Value* of, int opset) {
  const ir::Node* n = v ? v->producer : nullptr;
  if (!IsOnnxOp(n, "Slice") || n->inputs[0] != of) return std::nullopt;
  return ops::LastAxisRangeOf(*n, opset);
}

bool Is(const std::optional<ops::LastAxisRange>& r, int64_t start, int64_t count, int64_t step) {
  return r && r->start == start && r->count == count && (count == 1 || r->step == step);
}

// A Concat of two inputs along its last axis.
bool IsLastAxisConcat(const ir::Node* n) {
  if (!IsOnnxOp(n, "Concat") || n->inputs.size() != 2) return false;
  const int64_t rank = static_cast<int64_t>(n->output(0)->shape.size());
  int64_t axis = n->attrs.Int("axis", 0);
  if (axis < 0) axis += rank;
  return axis == rank - 1;
}

struct Rotation {
  std::vector<ir::Node*> nodes;  // the ones that make rot(x)
  std::vector<ir::Node*> reads;  // those of them that read x
  bool interleaved = false;
};

// How `r` is rot(x), if it is: rotate_half or interleaved (the header's).
std::optional<Rotation> RotationOf(ir::Value* r, const ir::Value* x, const Readers& readers,
                                   int opset) {
  const int64_t width = x->shape.back(), half = width / 2;
  if (width % 2 != 0 || r->shape != x->shape) return std::nullopt;
  Rotation rot;
  ir::Node* concat = r->producer;
  ir::Node* reshape = nullptr;
  if (IsOnnxOp(concat, "Reshape")) {  // interleaved: [..., R/2, 2] back to [..., R]
    reshape = concat;
    concat = reshape->inputs[0]->producer;
    if (readers.Sole(reshape->inputs[0]) != reshape) return std::nullopt;
    rot.interleaved = true;
    rot.nodes.push_back(reshape);
  }
  if (!IsLastAxisConcat(concat)) return std::nullopt;
  rot.nodes.push_back(concat);
  // Its two parts: -(the second half, or the odd features), then the first
  // half (or the even ones); each interleaved part on a new last axis.
  ir::Value* parts[2] = {concat->inputs[0], concat->inputs[1]};
  for (ir::Value*& part : parts) {
    if (readers.Sole(part) != concat) return std::nullopt;
    if (!rot.interleaved) continue;
    ir::Node* u = part->producer;
    if (!IsOnnxOp(u, "Unsqueeze")) return std::nullopt;
    Shape want = u->inputs[0]->shape;
    want.push_back(1);
    if (part->shape != want || readers.Sole(u->inputs[0]) != u) return std::nullopt;
    rot.nodes.push_back(u);
    part = u->inputs[0];
  }
  ir::Node* neg = parts[0]->producer;
  if (!IsOnnxOp(neg, "Neg") || readers.Sole(neg->inputs[0]) != neg) return std::nullopt;
  rot.nodes.push_back(neg);
  const std::optional<ops::LastAxisRange> second = RangeOf(neg->inputs[0], x, opset);
  const std::optional<ops::LastAxisRange> first = RangeOf(parts[1], x, opset);
  const bool ok = rot.interleaved ? Is(second, 1, half, 2) && Is(first, 0, half, 2)
                                  : Is(second, half, half, 1) && Is(first, 0, half, 1);
  if (!ok) return std::nullopt;
  rot.reads = {neg->inputs[0]->producer, parts[1]->producer};
  rot.nodes.insert(rot.nodes.end(), rot.reads.begin(), rot.reads.end());
  return rot;
}

// Whether c (cos or sin) broadcasts to x from the right with all R features.
bool Table(const ir::Value* c, const Shape& x) {
  if (!IsFloat32(c) || c->shape.empty() || c->shape.size() > x.size() ||
      c->shape.back() != x.back()) {
    return false;
  }
  for (size_t a = 0; a < c->shape.size(); ++a) {
    const int64_t want = x[x.size() - c->shape.size() + a];
    if (c->shape[a] != 1 && c->shape[a] != want) return false;
  }
  return true;
}

// A Slice of `of` that keeps every axis whole but `axis`, of which it keeps
// [start, start + count): (start, count).
std::optional<std::pair<int64_t, int64_t>> AxisRangeOf(const ir::Value* v, const ir::Value* of,
                                                       size_t axis, int opset) {
  const ir::Node* n = v ? v->producer : nullptr;
  if (!IsOnnxOp(n, "Slice") || n->inputs[0] != of) return std::nullopt;
  const std::optional<ops::StridedView> view = ops::StridedViewOf(*n, opset);
  const Shape& in = of->shape;
  if (!view || view->out.size() != in.size() || axis >= in.size()) return std::nullopt;
  const std::vector<int64_t> dense = StridesOf(in);
  for (size_t d = 0; d < in.size(); ++d) {
    if ((d != axis && view->out[d] != in[d]) || (view->out[d] > 1 && view->strides[d] != dense[d]))
      return std::nullopt;
  }
  if (dense[axis] == 0 || view->base % dense[axis] != 0) return std::nullopt;
  return std::make_pair(view->base / dense[axis], view->out[axis]);
}

// `table` (cos or sin, a constant whose second-to-last axis runs along the
// sequence) with `rows` rows of `fill` before each run of its rows.
ir::Value* PrependRows(ir::Graph& graph, const ir::Value* table, int64_t rows, float fill) {
  const Shape& s = table->shape;
  const int64_t seq = s[s.size() - 2], width = s.back();
  const int64_t outer = NumElements(s) / (seq * width);
  std::vector<float> data;
  const std::vector<float> old = table->constant.ToFloatVector();
  for (int64_t o = 0; o < outer; ++o) {
    data.insert(data.end(), static_cast<size_t>(rows * width), fill);
    data.insert(data.end(), old.begin() + o * seq * width, old.begin() + (o + 1) * seq * width);
  }
  Shape shape = s;
  shape[shape.size() - 2] += rows;
  return graph.AddConstant(graph.UniqueValueName(table->name + "/prefixed"),
                           Tensor::FromVector<float>(data, shape));
}

}  // namespace

StatusOr<int> FuseRotary(ir::Graph& graph) {
  const Readers readers(graph);
  ChainFusion fusion;
  const int opset = graph.opset_version();
  int fused = 0;
  for (const auto& owned : graph.nodes()) {
    ir::Node* add = owned.get();
    if (!IsOnnxOp(add, "Add") || add->inputs.size() != 2 || fusion.Taken(add) ||
        !IsFloat32(add->output(0))) {
      continue;
    }
    // Add(Mul(x, cos), Mul(rot(x), sin)), either way round.
    for (int order = 0; order < 2; ++order) {
      ir::Node* m1 = add->inputs[order]->producer;
      ir::Node* m2 = add->inputs[1 - order]->producer;
      if (!IsOnnxOp(m1, "Mul") || !IsOnnxOp(m2, "Mul") || m1 == m2 || fusion.Taken(m1) ||
          fusion.Taken(m2) || readers.Sole(m1->output(0)) != add ||
          readers.Sole(m2->output(0)) != add) {
        continue;
      }
      std::optional<Rotation> rot;
      ir::Value *x = nullptr, *cos = nullptr, *sin = nullptr;
      for (int i = 0; i < 2 && !rot; ++i) {
        for (int j = 0; j < 2 && !rot; ++j) {
          x = m1->inputs[i];
          cos = m1->inputs[1 - i];
          sin = m2->inputs[1 - j];
          if (!IsFloat32(x) || x->shape.empty() || x->shape != add->output(0)->shape) continue;
          rot = RotationOf(m2->inputs[j], x, readers, opset);
        }
      }
      if (!rot || !Table(cos, x->shape) || !Table(sin, x->shape)) continue;
      if (std::any_of(rot->nodes.begin(), rot->nodes.end(),
                      [&](const ir::Node* n) { return fusion.Taken(n); })) {
        continue;
      }
      std::vector<ir::Node*> chain = rot->nodes;
      chain.push_back(m1);
      chain.push_back(m2);
      chain.push_back(add);
      ir::Node* host = add;
      ir::Value* input = x;
      const int64_t rotary = x->shape.back();
      // A partial rotation: x the first R features of X, the rest after.
      std::vector<ir::Node*> x_readers = rot->reads;
      x_readers.push_back(m1);
      const std::vector<ir::Node*>& actual = readers.of(x);
      const bool x_ours = !readers.IsGraphOutput(x) && actual.size() == x_readers.size() &&
                          std::is_permutation(actual.begin(), actual.end(), x_readers.begin());
      ir::Node* cut = x->producer;
      ir::Node* concat = readers.Sole(add->output(0));
      if (x_ours && IsOnnxOp(cut, "Slice") && !fusion.Taken(cut) && IsLastAxisConcat(concat) &&
          !fusion.Taken(concat) && concat->inputs[0] == add->output(0)) {
        ir::Value* whole = cut->inputs[0];
        const int64_t width = whole->shape.empty() ? 0 : whole->shape.back();
        ir::Value* rest = concat->inputs[1];
        ir::Node* rest_cut = rest->producer;
        if (Is(RangeOf(x, whole, opset), 0, rotary, 1) &&
            Is(RangeOf(rest, whole, opset), rotary, width - rotary, 1) &&
            readers.Sole(rest) == concat && !fusion.Taken(rest_cut)) {
          chain.insert(chain.end(), {cut, rest_cut, concat});
          host = concat;
          input = whole;
        }
      }
      // Prefix tokens left out of the rotation (EVA-02's class token: X's
      // first P rows along the sequence sliced off, concatenated back
      // before the embedded rest): with constant tables, rows of cos 1 and
      // sin 0 embed them as they are, and the node reads X whole.
      const size_t seq = x->shape.size() - 2;
      ir::Node* joined = readers.Sole(host->output(0));
      ir::Node* rest_cut = input->producer;
      if (host == add && x->shape.size() >= 3 && cos->is_constant() && sin->is_constant() &&
          cos->shape.size() >= 2 && sin->shape.size() >= 2 && IsOnnxOp(rest_cut, "Slice") &&
          !fusion.Taken(rest_cut) && IsOnnxOp(joined, "Concat") && joined->inputs.size() == 2 &&
          joined->inputs[1] == add->output(0) && !fusion.Taken(joined) &&
          cos->shape[cos->shape.size() - 2] == x->shape[seq] &&
          sin->shape[sin->shape.size() - 2] == x->shape[seq]) {
        ir::Value* whole = rest_cut->inputs[0];
        ir::Value* prefix = joined->inputs[0];
        const auto rest = AxisRangeOf(x, whole, seq, opset);
        const auto head = AxisRangeOf(prefix, whole, seq, opset);
        int64_t axis = joined->attrs.Int("axis", 0);
        if (axis < 0) axis += static_cast<int64_t>(x->shape.size());
        const std::vector<ir::Node*>& x_users = readers.of(x);
        const bool x_ours = std::all_of(x_users.begin(), x_users.end(), [&](const ir::Node* n) {
          return std::find(chain.begin(), chain.end(), n) != chain.end();
        });
        if (rest && head && head->first == 0 && rest->first == head->second &&
            rest->first + rest->second == whole->shape[seq] && axis == static_cast<int64_t>(seq) &&
            readers.Sole(prefix) == joined && !fusion.Taken(prefix->producer) && x_ours &&
            !readers.IsGraphOutput(x)) {
          chain.insert(chain.end(), {rest_cut, prefix->producer, joined});
          host = joined;
          input = whole;
          cos = PrependRows(graph, cos, head->second, 1.f);
          sin = PrependRows(graph, sin, head->second, 0.f);
        }
      }
      AttributeMap attrs;
      attrs.Set("rotary_dim", rotary);
      attrs.Set("interleaved", int64_t{rot->interleaved ? 1 : 0});
      fusion.Fuse(chain, host, "Rotary", add->name, std::move(attrs), {input, cos, sin});
      ++fused;
      break;
    }
  }
  fusion.Finish(graph);
  return fused;
}

}  // namespace tessel::passes
