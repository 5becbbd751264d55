#include "passes/fuse_attention.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/check.h"
#include "ops/op_registry.h"
#include "passes/eliminate_dead_nodes.h"
#include "passes/fold_transposes.h"
#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool IsFloat32(const ir::Value* v) { return v && v->dtype == DType::kFloat32 && v->shape_known; }

// A float32 constant of one element.
std::optional<double> Scalar(const ir::Value* v) {
  if (!IsFloat32(v) || !v->is_constant() || NumElements(v->shape) != 1) return std::nullopt;
  return v->constant.GetAsDouble(0);
}

// x * c or x / c, c a scalar constant, of x's shape: x and the factor.
struct Scaled {
  ir::Value* x = nullptr;
  double factor = 1;
};
std::optional<Scaled> ScaledBy(const ir::Node* n) {
  if (!n || !n->domain.empty() || n->inputs.size() != 2 || n->outputs.size() != 1) {
    return std::nullopt;
  }
  std::optional<Scaled> s;
  if (n->op_type == "Mul") {
    if (auto c = Scalar(n->input(1))) s = Scaled{n->inputs[0], *c};
    if (auto c = Scalar(n->input(0)); c && !s) s = Scaled{n->inputs[1], *c};
  } else if (n->op_type == "Div") {
    if (auto c = Scalar(n->input(1)); c && *c != 0) s = Scaled{n->inputs[0], 1.0 / *c};
  }
  if (!s || !IsFloat32(s->x) || s->x->shape != n->output(0)->shape) return std::nullopt;
  return s;
}

// Whether `bias` broadcasts to `scores` from the right.
bool Broadcasts(const Shape& bias, const Shape& scores) {
  if (bias.size() > scores.size()) return false;
  for (size_t i = 0; i < bias.size(); ++i) {
    const int64_t want = scores[scores.size() - bias.size() + i];
    if (bias[i] != 1 && bias[i] != want) return false;
  }
  return true;
}

std::vector<int64_t> SwapLastTwo(size_t rank) {
  std::vector<int64_t> perm;
  for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

// One attention found in the graph, not yet rewritten.
struct Found {
  std::vector<ir::Node*> chain;
  ir::Node* host = nullptr;  // the second MatMul
  ir::Value* q = nullptr;
  ir::Value* k = nullptr;   // null: K^T below, transposed back by a new node
  ir::Value* kt = nullptr;  // K^T, when k is null
  ir::Value* v = nullptr;
  ir::Value* bias = nullptr;
  double scale = 1;
  bool zero_masked_rows = false;
};

// The attention whose Softmax is `softmax`, if the chain is one.
std::optional<Found> Match(ir::Node* softmax, const Readers& readers, const ChainFusion& fusion,
                           int opset) {
  if (!IsOnnxOp(softmax, "Softmax") || fusion.Taken(softmax)) return std::nullopt;
  ir::Value* scores = softmax->inputs[0];
  const size_t rank = scores->shape.size();
  if (!IsFloat32(scores) || (rank != 3 && rank != 4)) return std::nullopt;
  int64_t axis = softmax->attrs.Int("axis", opset < 13 ? 1 : -1);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis != static_cast<int64_t>(rank) - 1) return std::nullopt;
  Found f;
  f.chain.push_back(softmax);
  // Links are taken only where the value is theirs alone.
  auto link = [&](ir::Node* n, const ir::Value* out, const ir::Node* next) {
    if (!n || fusion.Taken(n) || readers.Sole(out) != next) return false;
    f.chain.push_back(n);
    return true;
  };

  // Backwards from the Softmax: [+ bias], [* c], the scores' MatMul.
  ir::Value* s = scores;
  ir::Node* next = softmax;
  if (ir::Node* add = s->producer; IsOnnxOp(add, "Add") && add->inputs.size() == 2) {
    for (size_t i = 0; i < 2; ++i) {
      ir::Value* x = add->inputs[i];
      ir::Value* b = add->inputs[1 - i];
      ir::Node* p = x->producer;
      const bool scores_side =
          IsOnnxOp(p, "MatMul") ||
          (ScaledBy(p) && ScaledBy(p)->x->producer && IsOnnxOp(ScaledBy(p)->x->producer, "MatMul"));
      if (x->shape == s->shape && IsFloat32(b) && b != x && Broadcasts(b->shape, s->shape) &&
          scores_side) {
        if (!link(add, s, next)) return std::nullopt;
        f.bias = b;
        s = x;
        next = add;
        break;
      }
    }
  }
  if (auto scaled = ScaledBy(s->producer)) {
    if (!link(s->producer, s, next)) return std::nullopt;
    f.scale *= scaled->factor;
    next = s->producer;
    s = scaled->x;
  }
  ir::Node* mm1 = s->producer;
  if (!IsOnnxOp(mm1, "MatMul") || !link(mm1, s, next)) return std::nullopt;
  ir::Value* q = mm1->inputs[0];
  ir::Value* kt = mm1->inputs[1];
  if (q == kt) return std::nullopt;
  if (auto scaled = ScaledBy(q->producer); scaled && link(q->producer, q, mm1)) {
    f.scale *= scaled->factor;
    q = scaled->x;
  }
  ir::Node* kt_reader = mm1;
  if (auto scaled = ScaledBy(kt->producer); scaled && link(kt->producer, kt, mm1)) {
    f.scale *= scaled->factor;
    kt_reader = kt->producer;
    kt = scaled->x;
  }

  // Forwards: [Where(IsNaN(p), 0, p)], the MatMul by V.
  ir::Value* p = softmax->output(0);
  ir::Node* mm2 = readers.Sole(p);
  const std::vector<ir::Node*>& p_readers = readers.of(p);
  if (!mm2 && p_readers.size() == 2 && !readers.IsGraphOutput(p)) {
    ir::Node* isnan = p_readers[0];
    ir::Node* where = p_readers[1];
    if (IsOnnxOp(where, "IsNaN")) std::swap(isnan, where);
    if (!IsOnnxOp(isnan, "IsNaN") || !IsOnnxOp(where, "Where") || where->inputs.size() != 3 ||
        where->inputs[0] != isnan->output(0) || where->inputs[2] != p ||
        Scalar(where->inputs[1]) != 0.0 || where->output(0)->shape != p->shape ||
        !link(isnan, isnan->output(0), where) || fusion.Taken(where)) {
      return std::nullopt;
    }
    f.chain.push_back(where);
    f.zero_masked_rows = true;
    p = where->output(0);
    mm2 = readers.Sole(p);
  }
  if (!IsOnnxOp(mm2, "MatMul") || fusion.Taken(mm2) || mm2->inputs[0] != p || mm2->inputs[1] == p) {
    return std::nullopt;
  }
  f.chain.push_back(mm2);
  f.host = mm2;
  ir::Value* v = mm2->inputs[1];

  // Shapes: Q [..., Sq, D], K^T [..., D, Skv], V [..., Skv, Dv], the same
  // leading axes (no broadcasting).
  if (!IsFloat32(q) || !IsFloat32(kt) || !IsFloat32(v) || q->shape.size() != rank ||
      kt->shape.size() != rank || v->shape.size() != rank) {
    return std::nullopt;
  }
  const Shape& qs = q->shape;
  const Shape& ks = kt->shape;
  const Shape& vs = v->shape;
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (ks[i] != qs[i] || vs[i] != qs[i]) return std::nullopt;
  }
  if (ks[rank - 2] != qs[rank - 1] || vs[rank - 2] != ks[rank - 1]) return std::nullopt;
  f.q = q;
  f.v = v;
  // K: the input of a Transpose that swapped the last two axes, else K^T
  // transposed back (a new node).
  ir::Node* t = kt->producer;
  if (IsOnnxOp(t, "Transpose") && t->attrs.Ints("perm", {}) == SwapLastTwo(rank) &&
      link(t, kt, kt_reader)) {
    f.k = t->inputs[0];
  } else {
    f.kt = kt;
  }
  return f;
}

// A view (Reshape, Flatten, Squeeze, Unsqueeze) of one input: the same
// elements in the same order. (Identity Transposes are gone: the
// eliminate-dead-nodes stage and FoldTransposes drop them.)
bool IsViewOf(const ir::Node* n) {
  return n && n->outputs.size() == 1 && n->input(0) && ops::IsView(*n);
}

// K or V [B, Hq, S, D] made by repeating each of Hkv heads Hq / Hkv times
// (Expand along an axis of one, then views): the value before the Expand,
// as [B, Hkv, S, D], and the repeats. Adds a Reshape where no value of that
// shape is at hand.
struct Heads {
  ir::Value* value = nullptr;
  int64_t repeats = 1;
};
std::optional<Heads> RepeatedHeads(ir::Graph& graph, ir::Value* kv) {
  if (kv->shape.size() != 4) return std::nullopt;
  const int64_t batch = kv->shape[0], heads = kv->shape[1];
  const int64_t inner = kv->shape[2] * kv->shape[3];
  ir::Value* v = kv;
  while (v->producer && IsViewOf(v->producer)) v = v->producer->inputs[0];
  ir::Node* expand = v->producer;
  if (!IsOnnxOp(expand, "Expand") || !expand->input(0)) return std::nullopt;
  ir::Value* source = expand->inputs[0];
  const Shape& in = source->shape;
  const Shape& out = v->shape;
  if (in.size() != out.size() || NumElements(out) != NumElements(kv->shape)) return std::nullopt;
  std::optional<size_t> axis;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == out[i]) continue;
    if (in[i] != 1 || axis) return std::nullopt;
    axis = i;
  }
  if (!axis) return std::nullopt;
  const int64_t repeats = out[*axis];
  int64_t before = 1, after = 1;
  for (size_t i = 0; i < *axis; ++i) before *= out[i];
  for (size_t i = *axis + 1; i < out.size(); ++i) after *= out[i];
  if (heads % repeats != 0 || before != batch * (heads / repeats) || after != inner ||
      out.back() != kv->shape[3]) {
    return std::nullopt;
  }
  const Shape want = {batch, heads / repeats, kv->shape[2], kv->shape[3]};
  // A value of that shape at hand: the source, or one its views come from.
  ir::Value* at = source;
  while (at->shape != want && at->producer && IsViewOf(at->producer)) {
    at = at->producer->inputs[0];
  }
  if (at->shape == want) return Heads{at, repeats};
  const std::string name = graph.UniqueValueName(kv->name + "/heads");
  ir::Value* reshaped = graph.AddValue(name, source->dtype, want, true);
  graph.AddNode("Reshape", name, {source, ShapeConstant(graph, name + "_shape", want)}, {reshaped});
  return Heads{reshaped, repeats};
}

Shape NonUnit(const Shape& s) {
  Shape out;
  for (int64_t d : s) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

// An operand made by a Transpose and then views that only add or drop axes
// of one element (torchvision's heads: [S, H, D] -> [H, S, D] -> [1, H, S,
// D]) is made by one Transpose of a view of the Transpose's input instead,
// so that a target may read it through the Transpose's strides:
//   x ─ Transpose ─ view ─► z   becomes   x ─ Reshape ─ Transpose ─► z
// The old nodes are left to EliminateDeadNodes.
void TransposeLast(ir::Graph& graph, const Readers& readers, ir::Node& node, size_t input) {
  ir::Value* z = node.inputs[input];
  ir::Value* v = z;
  while (v->producer && ops::IsView(*v->producer) && v->producer->input(0) &&
         readers.Sole(v->producer->inputs[0]) == v->producer) {
    v = v->producer->inputs[0];
  }
  ir::Node* t = v->producer;
  if (v == z || !IsOnnxOp(t, "Transpose") || NonUnit(v->shape) != NonUnit(z->shape)) return;
  const ir::Value* x = t->inputs[0];
  std::vector<int64_t> perm = t->attrs.Ints("perm", {});
  if (perm.size() != x->shape.size()) return;
  // x as its axes of more than one element, after as many of one as z has.
  const size_t units = z->shape.size() - NonUnit(z->shape).size();
  Shape reshaped(units, 1);
  std::vector<int64_t> rank(x->shape.size(), -1);  // of each such axis of x
  for (size_t a = 0; a < x->shape.size(); ++a) {
    if (x->shape[a] == 1) continue;
    rank[a] = static_cast<int64_t>(reshaped.size());
    reshaped.push_back(x->shape[a]);
  }
  std::vector<int64_t> sources;  // z's axes of more than one element: x's axis
  for (int64_t a : perm) {
    if (x->shape[static_cast<size_t>(a)] != 1) sources.push_back(rank[static_cast<size_t>(a)]);
  }
  std::vector<int64_t> moved;
  int64_t unit = 0;
  size_t next = 0;
  for (int64_t d : z->shape) moved.push_back(d == 1 ? unit++ : sources[next++]);
  const std::string name = graph.UniqueValueName(z->name + "/x");
  ir::Value* in = graph.AddValue(name, x->dtype, reshaped, true);
  graph.AddNode("Reshape", name, {t->inputs[0], ShapeConstant(graph, name + "_shape", reshaped)},
                {in});
  ir::Value* out = graph.AddValue(graph.UniqueValueName(z->name + "/t"), z->dtype, z->shape, true);
  graph.AddNode("Transpose", out->name, {in}, {out})->attrs.Set("perm", moved);
  node.inputs[input] = out;
}

// ONNX's Attention (opset 23) in the form FusedAttention computes: no past
// keys, no outputs but Y, no softcap or window; a float mask (or a boolean
// one, made -inf where false) over all keys, a causal mask as a constant,
// both summed. 3-D Q, K and V (heads in the hidden axis) are split into
// heads by Reshape and Transpose, and Y merged back; the targets read such
// Transposes through strides. Returns whether it rewrote `node`.
bool RewriteOnnxAttention(ir::Graph& graph, ir::Node& node) {
  if (node.op_type != "Attention" || !node.domain.empty() || node.inputs.size() < 3) return false;
  for (size_t i = 4; i < node.inputs.size(); ++i) {
    if (node.inputs[i]) return false;  // past keys and values, nonpad_kv_seqlen
  }
  for (size_t i = 1; i < node.outputs.size(); ++i) {
    if (node.outputs[i]) return false;  // present keys and values, the scores
  }
  if (node.attrs.Float("softcap", 0.0f) != 0.0f || node.attrs.Int("left_window_size", -1) != -1 ||
      node.attrs.Int("right_window_size", -1) != -1) {
    return false;
  }
  ir::Value* q = node.inputs[0];
  ir::Value* k = node.inputs[1];
  ir::Value* v = node.inputs[2];
  ir::Value* mask = node.input(3);
  ir::Value* y = node.output(0);
  if (!IsFloat32(q) || !IsFloat32(k) || !IsFloat32(v) || !IsFloat32(y)) return false;
  const size_t rank = q->shape.size();
  if (rank != 3 && rank != 4) return false;
  const int64_t q_heads = rank == 4 ? q->shape[1] : node.attrs.Int("q_num_heads", 0);
  const int64_t kv_heads = rank == 4 ? k->shape[1] : node.attrs.Int("kv_num_heads", 0);
  if (q_heads <= 0 || kv_heads <= 0) return false;
  const int64_t q_len = q->shape[rank == 4 ? 2 : 1], kv_len = k->shape[rank == 4 ? 2 : 1];
  const int64_t head = rank == 4 ? q->shape[3] : q->shape[2] / q_heads;
  if (mask && (mask->shape.empty() || mask->shape.back() != kv_len ||
               (mask->dtype != DType::kBool && !IsFloat32(mask)))) {
    return false;
  }
  const std::string base = node.name.empty() ? "attention" : node.name;
  auto add = [&](const std::string& op, std::vector<ir::Value*> in, DType t, const Shape& shape,
                 const std::string& what) {
    ir::Value* out = graph.AddValue(graph.UniqueValueName(base + "/" + what), t, shape, true);
    graph.AddNode(op, out->name, std::move(in), {out});
    return out;
  };
  ir::Value* bias = mask;
  if (mask && mask->dtype == DType::kBool) {
    const float inf = std::numeric_limits<float>::infinity();
    bias = add("Where",
               {mask,
                graph.AddConstant(graph.UniqueValueName(base + "/zero"),
                                  Tensor::FromVector<float>({0.f}, {})),
                graph.AddConstant(graph.UniqueValueName(base + "/minus_inf"),
                                  Tensor::FromVector<float>({-inf}, {}))},
               DType::kFloat32, mask->shape, "mask");
  }
  if (node.attrs.Int("is_causal", 0) != 0) {
    std::vector<float> causal(static_cast<size_t>(q_len * kv_len));
    for (int64_t i = 0; i < q_len; ++i) {
      for (int64_t j = 0; j < kv_len; ++j) {
        causal[static_cast<size_t>(i * kv_len + j)] =
            j > i ? -std::numeric_limits<float>::infinity() : 0.f;
      }
    }
    ir::Value* c = graph.AddConstant(graph.UniqueValueName(base + "/causal"),
                                     Tensor::FromVector<float>(causal, {q_len, kv_len}));
    if (!bias) {
      bias = c;
    } else {
      Shape shape = bias->shape;
      while (shape.size() < 2) shape.insert(shape.begin(), 1);
      shape[shape.size() - 2] = q_len;
      bias = add("Add", {bias, c}, DType::kFloat32, shape, "causal_mask");
    }
  }
  // 3-D: [B, S, H * D] -> [B, H, S, D].
  auto heads = [&](ir::Value* x, int64_t h, const std::string& what) {
    if (rank == 4) return x;
    const Shape& s = x->shape;
    const Shape split = {s[0], s[1], h, s[2] / h};
    ir::Value* r = add("Reshape", {x, ShapeConstant(graph, base + "/" + what + "_heads", split)},
                       x->dtype, split, what + "_heads");
    ir::Value* t = add("Transpose", {r}, x->dtype, {s[0], h, s[1], s[2] / h}, what + "_t");
    t->producer->attrs.Set("perm", std::vector<int64_t>{0, 2, 1, 3});
    return t;
  };
  AttributeMap attrs;
  attrs.Set("scale", node.attrs.Has("scale")
                         ? node.attrs.Float("scale", 1.0f)
                         : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head))));
  attrs.Set("zero_masked_rows", int64_t{1});
  std::vector<ir::Value*> inputs = {heads(q, q_heads, "q"), heads(k, kv_heads, "k"),
                                    heads(v, kv_heads, "v")};
  if (bias) inputs.push_back(bias);
  node.op_type = "FusedAttention";
  node.domain = "tessel";
  node.attrs = std::move(attrs);
  node.inputs = std::move(inputs);
  node.outputs.resize(1);
  if (rank == 4) return true;
  // Y [B, H, S, Dv] -> [B, S, H * Dv].
  const Shape& ys = y->shape;
  const int64_t v_head = ys[2] / q_heads;
  ir::Value* o = graph.AddValue(graph.UniqueValueName(base + "/y_heads"), DType::kFloat32,
                                {ys[0], q_heads, ys[1], v_head}, true);
  node.outputs[0] = o;
  o->producer = &node;
  y->producer = nullptr;
  ir::Value* t = add("Transpose", {o}, DType::kFloat32, {ys[0], ys[1], q_heads, v_head}, "y_t");
  t->producer->attrs.Set("perm", std::vector<int64_t>{0, 2, 1, 3});
  graph.AddNode("Reshape", base + "/y", {t, ShapeConstant(graph, base + "/y_shape", ys)}, {y});
  return true;
}

void Sort(ir::Graph& graph) {
  const Status sorted = graph.SortTopologically();  // a rewrite of a DAG stays one
  TESSEL_CHECK(sorted.ok());
}

}  // namespace

StatusOr<int> FuseAttention(ir::Graph& graph) {
  int fused = 0;
  const size_t nodes = graph.nodes().size();
  for (size_t n = 0; n < nodes; ++n) fused += RewriteOnnxAttention(graph, *graph.nodes()[n]);
  {
    const Readers readers(graph);
    ChainFusion fusion;
    const size_t count = graph.nodes().size();
    for (size_t n = 0; n < count; ++n) {
      std::optional<Found> f =
          Match(graph.nodes()[n].get(), readers, fusion, graph.opset_version());
      if (!f) continue;
      ir::Value* k = f->k;
      if (!k) {
        const Shape& kts = f->kt->shape;
        Shape ks = kts;
        std::swap(ks[ks.size() - 1], ks[ks.size() - 2]);
        const std::string name = graph.UniqueValueName(f->host->name + "/k");
        k = graph.AddValue(name, DType::kFloat32, ks, true);
        graph.AddNode("Transpose", name, {f->kt}, {k})->attrs.Set("perm", SwapLastTwo(kts.size()));
      }
      std::vector<ir::Value*> inputs = {f->q, k, f->v};
      if (f->bias) inputs.push_back(f->bias);
      AttributeMap attrs;
      attrs.Set("scale", static_cast<float>(f->scale));
      attrs.Set("zero_masked_rows", int64_t{f->zero_masked_rows ? 1 : 0});
      fusion.Fuse(f->chain, f->host, "FusedAttention", f->host->name, std::move(attrs),
                  std::move(inputs));
      ++fused;
    }
    fusion.Finish(graph);
  }
  if (fused == 0) return 0;
  Sort(graph);
  // The added Transposes meet the head Transposes before them.
  FoldTransposes(graph);
  // Grouped-query attention: K and V read from the heads they repeat.
  for (size_t n = 0; n < graph.nodes().size(); ++n) {
    ir::Node* node = graph.nodes()[n].get();
    if (node->op_type != "FusedAttention" || node->domain != "tessel") continue;
    std::optional<Heads> k = RepeatedHeads(graph, node->inputs[1]);
    std::optional<Heads> v = k ? RepeatedHeads(graph, node->inputs[2]) : std::nullopt;
    if (!k || !v || k->repeats != v->repeats) continue;
    node->inputs[1] = k->value;
    node->inputs[2] = v->value;
  }
  // Heads made by a Transpose and a view: the Transpose last.
  {
    Sort(graph);
    EliminateDeadNodes(graph);
    const Readers readers(graph);
    const size_t count = graph.nodes().size();
    for (size_t n = 0; n < count; ++n) {
      ir::Node* node = graph.nodes()[n].get();
      if (node->op_type != "FusedAttention" || node->domain != "tessel") continue;
      for (size_t i = 0; i < 3; ++i) TransposeLast(graph, readers, *node, i);
    }
  }
  // The repeats, and a Reshape added for V's heads when K's were not
  // repeated alike, are gone.
  Sort(graph);
  EliminateDeadNodes(graph);
  return fused;
}

}  // namespace tessel::passes
