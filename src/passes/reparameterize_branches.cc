#include "passes/reparameterize_branches.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "ops/op_registry.h"
#include "ops/strided_view.h"
#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool IsOnnx(const ir::Node* n, const char* op) {
  return n && n->domain.empty() && n->op_type == op;
}

bool FloatConstant(const ir::Value* v) {
  return v && v->is_constant() && v->dtype == DType::kFloat32;
}

// A float32 tensor of `shape` holding `values`, summed in double.
Tensor ToFloat(const std::vector<double>& values, const Shape& shape) {
  Tensor t(DType::kFloat32, shape);
  std::transform(values.begin(), values.end(), t.data<float>(),
                 [](double v) { return static_cast<float>(v); });
  return t;
}

// Makes `y` (an output of a node that goes) the output of a new Conv of x
// named `name`: `weight` [O, I/group, kh, kw] and `bias` [O] as new
// constants, padded by half the (odd) kernel on every side.
Status WriteByConv(ir::Graph& graph, const std::string& name, ir::Value* x, Tensor weight,
                   Tensor bias, ir::Value* y, int64_t group, const std::vector<int64_t>& strides) {
  const int64_t kh = weight.shape()[2], kw = weight.shape()[3];
  ir::Value* w = graph.AddConstant(graph.UniqueValueName(name + "/W"), std::move(weight));
  ir::Value* b = graph.AddConstant(graph.UniqueValueName(name + "/B"), std::move(bias));
  y->producer = nullptr;
  ir::Node* conv = graph.AddNode("Conv", name, {x, w, b}, {y});
  conv->attrs.Set("group", AttrValue(group));
  conv->attrs.Set("strides", AttrValue(strides));
  conv->attrs.Set("kernel_shape", AttrValue(std::vector<int64_t>{kh, kw}));
  conv->attrs.Set("pads", AttrValue(std::vector<int64_t>{kh / 2, kw / 2, kh / 2, kw / 2}));
  return ops::InferNode(*conv, graph.opset_version());
}

// A branch convolution: its weights [O, I/g, kh, kw] and bias, with the
// geometry every branch of a block must share.
struct Branch {
  ir::Node* conv = nullptr;
  const Tensor* weight = nullptr;
  const Tensor* bias = nullptr;  // null: none
  int64_t group = 1;
  std::vector<int64_t> strides;
};

// Whether `conv` is a branch convolution of `x` (reparameterize_branches.h).
std::optional<Branch> AsBranch(ir::Node* conv) {
  if (!IsOnnx(conv, "Conv") || conv->outputs.size() != 1) return std::nullopt;
  const ir::Value* w = conv->input(1);
  const ir::Value* b = conv->input(2);
  if (!FloatConstant(w) || w->shape.size() != 4 || (b && !FloatConstant(b))) return std::nullopt;
  const int64_t kh = w->shape[2], kw = w->shape[3];
  if (kh % 2 == 0 || kw % 2 == 0) return std::nullopt;
  const AttributeMap& a = conv->attrs;
  const std::string auto_pad = a.String("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "") return std::nullopt;
  if (a.Ints("dilations", {1, 1}) != std::vector<int64_t>{1, 1}) return std::nullopt;
  const std::vector<int64_t> pads = {(kh - 1) / 2, (kw - 1) / 2, (kh - 1) / 2, (kw - 1) / 2};
  if (a.Ints("pads", {0, 0, 0, 0}) != pads) return std::nullopt;
  if (a.Has("kernel_shape") && a.Ints("kernel_shape") != std::vector<int64_t>{kh, kw}) {
    return std::nullopt;
  }
  return Branch{.conv = conv,
                .weight = &w->constant,
                .bias = b ? &b->constant : nullptr,
                .group = a.Int("group", 1),
                .strides = a.Ints("strides", {1, 1})};
}

// The identity branch: x itself (factor 1, shift 0), or FoldBatchNorm's
// ((x - mean) * factor) + bias with per-channel constants [C, 1, 1], its
// inner values read only by the next op. Fills factor and shift per
// channel, and the nodes it is made of.
bool AsIdentity(const ir::Value* term, const ir::Value* x, const Readers& readers, int64_t channels,
                std::vector<double>& factor, std::vector<double>& shift,
                std::vector<ir::Node*>& nodes) {
  factor.assign(static_cast<size_t>(channels), 1.0);
  shift.assign(static_cast<size_t>(channels), 0.0);
  if (term == x) return true;
  const Shape per_channel = {channels, 1, 1};
  auto constant = [&](const ir::Value* v) -> const float* {
    return FloatConstant(v) && v->shape == per_channel ? v->constant.data<float>() : nullptr;
  };
  ir::Node* add = term->producer;
  if (!IsOnnx(add, "Add")) return false;
  const float* bias = constant(add->input(1));
  ir::Node* mul = add->input(0) ? add->input(0)->producer : nullptr;
  if (!bias || !IsOnnx(mul, "Mul") || readers.Sole(add->input(0)) != add) return false;
  const float* scale = constant(mul->input(1));
  ir::Node* sub = mul->input(0) ? mul->input(0)->producer : nullptr;
  if (!scale || !IsOnnx(sub, "Sub") || readers.Sole(mul->input(0)) != mul) return false;
  const float* mean = constant(sub->input(1));
  if (!mean || sub->input(0) != x) return false;
  for (int64_t c = 0; c < channels; ++c) {
    factor[static_cast<size_t>(c)] = scale[c];
    shift[static_cast<size_t>(c)] = bias[c] - static_cast<double>(mean[c]) * scale[c];
  }
  nodes = {sub, mul, add};
  return true;
}

// Whether `add` ends FoldBatchNorm's (v - mean) * factor + bias: a term
// of its own (the identity), not an inner Add of the tree.
bool EndsPerChannelAffine(const ir::Node* add) {
  const ir::Value* scaled = add->input(0);
  const ir::Node* mul = scaled ? scaled->producer : nullptr;
  const ir::Value* centred = IsOnnx(mul, "Mul") ? mul->input(0) : nullptr;
  return add->input(1) && add->input(1)->is_constant() && centred &&
         IsOnnx(centred->producer, "Sub");
}

// The terms of the tree of Adds under `add`: the inputs of its Adds that
// are not themselves an inner Add read only by the tree. Constants are
// terms too (MobileOne adds a 0 where a block has no identity branch).
void CollectTerms(ir::Node* add, const Readers& readers, std::vector<ir::Value*>& terms,
                  std::vector<ir::Node*>& adds) {
  adds.push_back(add);
  for (ir::Value* v : add->inputs) {
    ir::Node* p = v ? v->producer : nullptr;
    const bool inner = IsOnnx(p, "Add") && !EndsPerChannelAffine(p) &&
                       std::any_of(p->inputs.begin(), p->inputs.end(),
                                   [](const ir::Value* i) { return i && !i->is_constant(); });
    if (inner && p->outputs.size() == 1 && readers.Sole(v) == add) {
      CollectTerms(p, readers, terms, adds);
    } else {
      terms.push_back(v);
    }
  }
}

// Folds 1x1 convolutions into the convolution before them
// (reparameterize_branches.h); how many.
int FoldConvChains(ir::Graph& graph, std::unordered_set<const ir::Node*>& removed) {
  const Readers readers(graph);
  int folded = 0;
  for (const auto& n : graph.nodes()) {
    ir::Node* second = n.get();
    if (!IsOnnx(second, "Conv") || removed.count(second) || second->outputs.size() != 1) continue;
    ir::Value* mid = second->inputs.empty() ? nullptr : second->inputs[0];
    ir::Node* first = mid ? mid->producer : nullptr;
    if (!IsOnnx(first, "Conv") || removed.count(first) || readers.Sole(mid) != second) continue;
    const ir::Value* w1 = first->input(1);
    const ir::Value* b1 = first->input(2);
    const ir::Value* w2 = second->input(1);
    const ir::Value* b2 = second->input(2);
    if (!FloatConstant(w1) || !FloatConstant(w2) || w1->shape.size() != 4 ||
        w2->shape.size() != 4 || (b1 && !FloatConstant(b1)) || (b2 && !FloatConstant(b2))) {
      continue;
    }
    const AttributeMap& a2 = second->attrs;
    const std::string pad2 = a2.String("auto_pad", "NOTSET");
    if (first->attrs.Int("group", 1) != 1 || a2.Int("group", 1) != 1 || w2->shape[2] != 1 ||
        w2->shape[3] != 1 || (pad2 != "NOTSET" && pad2 != "VALID") ||
        a2.Ints("strides", {1, 1}) != std::vector<int64_t>{1, 1} ||
        a2.Ints("pads", {0, 0, 0, 0}) != std::vector<int64_t>{0, 0, 0, 0}) {
      continue;
    }
    const int64_t M = w1->shape[0], C = w1->shape[1], taps = w1->shape[2] * w1->shape[3];
    const int64_t O = w2->shape[0];
    if (w2->shape[1] != M || O * C * taps > M * C * taps + O * M) continue;
    std::vector<double> w(static_cast<size_t>(O * C * taps), 0.0);
    std::vector<double> bias(static_cast<size_t>(O), 0.0);
    const float* a = w2->constant.data<float>();
    const float* k = w1->constant.data<float>();
    for (int64_t o = 0; o < O; ++o) {
      for (int64_t m = 0; m < M; ++m) {
        const double f = a[o * M + m];
        for (int64_t j = 0; j < C * taps; ++j) {
          w[static_cast<size_t>(o * C * taps + j)] += f * k[m * C * taps + j];
        }
        if (b1) bias[static_cast<size_t>(o)] += f * b1->constant.data<float>()[m];
      }
      if (b2) bias[static_cast<size_t>(o)] += b2->constant.data<float>()[o];
    }
    Tensor weight = ToFloat(w, {O, C, w1->shape[2], w1->shape[3]});
    Tensor b = ToFloat(bias, {O});
    // The second becomes the first with the product's weights.
    second->inputs = {
        first->inputs[0],
        graph.AddConstant(graph.UniqueValueName(second->name + "/W_folded"), std::move(weight)),
        graph.AddConstant(graph.UniqueValueName(second->name + "/B_folded"), std::move(b))};
    second->attrs = first->attrs;
    second->attrs.Set("kernel_shape", AttrValue(std::vector<int64_t>{w1->shape[2], w1->shape[3]}));
    removed.insert(first);
    ++folded;
  }
  return folded;
}

// The nodes that cut x's channels into `parts` (the inputs of the
// convolutions, in order, each read by its convolution alone): one Split
// along axis 1 whose outputs they are, or channel-range Slices of x (what
// torch.export writes for torch.split) that follow one another from
// channel 0 to the last. Sets x; empty when they are not.
std::vector<ir::Node*> ChannelCutters(const std::vector<Branch>& parts, const Readers& readers,
                                      int opset, ir::Value*& x) {
  std::vector<ir::Node*> cutters;
  int64_t next = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const ir::Value* part = parts[k].conv->inputs[0];
    ir::Node* p = part ? part->producer : nullptr;
    if (!p || readers.Sole(part) != parts[k].conv || !p->input(0)) return {};
    if (k == 0) x = p->inputs[0];
    if (p->inputs[0] != x) return {};
    if (IsOnnx(p, "Split")) {
      int64_t axis = p->attrs.Int("axis", 0);
      if (axis < 0) axis += 4;
      if (axis != 1 || p->outputs.size() != parts.size() || p->outputs[k] != part) return {};
      if (k == 0) cutters.push_back(p);
      continue;
    }
    const std::optional<ops::ChannelRange> range =
        IsOnnx(p, "Slice") ? ops::ChannelRangeOf(*p, opset) : std::nullopt;
    if (!range || range->start != next) return {};
    next += range->count;
    cutters.push_back(p);
  }
  const bool sliced = !IsOnnx(cutters.front(), "Split");
  if (sliced && next != x->shape[1]) return {};
  return cutters;
}

}  // namespace

StatusOr<int> MergeMixedConvs(ir::Graph& graph) {
  const Readers readers(graph);
  std::unordered_set<const ir::Node*> removed;
  int merged = 0;
  const size_t count = graph.nodes().size();  // merged convs are added at the end
  for (size_t i = 0; i < count; ++i) {
    ir::Node* concat = graph.nodes()[i].get();
    if (!IsOnnx(concat, "Concat") || concat->inputs.size() < 2 || concat->outputs.size() != 1 ||
        !concat->outputs[0] || concat->outputs[0]->shape.size() != 4) {
      continue;
    }
    int64_t axis = concat->attrs.Int("axis", 0);
    if (axis < 0) axis += 4;
    if (axis != 1) continue;
    std::vector<Branch> parts;
    for (const ir::Value* y : concat->inputs) {
      std::optional<Branch> b =
          y && readers.Sole(y) == concat ? AsBranch(y->producer) : std::nullopt;
      if (!b || removed.count(b->conv)) break;
      parts.push_back(*b);
    }
    if (parts.size() != concat->inputs.size()) continue;
    ir::Value* x = nullptr;
    const std::vector<ir::Node*> cutters = ChannelCutters(parts, readers, graph.opset_version(), x);
    if (cutters.empty() || x->dtype != DType::kFloat32 || x->shape.size() != 4) continue;
    // One geometry: the same channels per group in and out, one stride.
    const Shape& first = parts[0].weight->shape();
    const int64_t per_group = first[1], out_per_group = first[0] / parts[0].group;
    int64_t kh = 1, kw = 1, O = 0, groups = 0;
    bool ok = true;
    for (const Branch& b : parts) {
      const Shape& s = b.weight->shape();
      ok = ok && s[1] == per_group && s[0] % b.group == 0 && s[0] / b.group == out_per_group &&
           b.strides == parts[0].strides && (!b.bias || b.bias->num_elements() == s[0]);
      kh = std::max(kh, s[2]);
      kw = std::max(kw, s[3]);
      O += s[0];
      groups += b.group;
    }
    if (!ok) continue;
    // The parts' kernels, zero-padded to kh x kw at their centre, stacked.
    Tensor weight(DType::kFloat32, {O, per_group, kh, kw});
    std::fill_n(weight.data<float>(), weight.num_elements(), 0.0f);
    Tensor bias(DType::kFloat32, {O});
    std::fill_n(bias.data<float>(), O, 0.0f);
    int64_t o0 = 0;
    for (const Branch& b : parts) {
      const Shape& s = b.weight->shape();
      const int64_t dr = (kh - s[2]) / 2, dc = (kw - s[3]) / 2;
      const float* src = b.weight->data<float>();
      for (int64_t o = 0; o < s[0]; ++o) {
        for (int64_t in = 0; in < per_group; ++in) {
          for (int64_t r = 0; r < s[2]; ++r) {
            float* dst =
                weight.data<float>() + (((o0 + o) * per_group + in) * kh + r + dr) * kw + dc;
            std::copy_n(src + ((o * per_group + in) * s[2] + r) * s[3], s[3], dst);
          }
        }
        if (b.bias) bias.data<float>()[o0 + o] = b.bias->data<float>()[o];
      }
      o0 += s[0];
    }
    ir::Value* y = concat->outputs[0];
    concat->outputs[0] = nullptr;
    TESSEL_RETURN_IF_ERROR(WriteByConv(graph, concat->name + "/merged", x, std::move(weight),
                                       std::move(bias), y, groups, parts[0].strides));
    removed.insert(concat);
    removed.insert(cutters.begin(), cutters.end());
    for (const Branch& b : parts) removed.insert(b.conv);
    ++merged;
  }
  if (merged > 0) {
    graph.RemoveNodes([&](const ir::Node& n) { return removed.count(&n) != 0; });
    TESSEL_RETURN_IF_ERROR(graph.SortTopologically());
  }
  return merged;
}

StatusOr<int> ReparameterizeBranches(ir::Graph& graph) {
  const Readers readers(graph);
  std::unordered_set<const ir::Node*> removed;
  std::vector<ir::Node*> roots;
  for (const auto& n : graph.nodes()) {
    if (!IsOnnx(n.get(), "Add") || n->outputs.size() != 1 || !n->outputs[0]) continue;
    // The root: not itself an inner Add of a larger tree.
    const ir::Node* parent = readers.Sole(n->outputs[0]);
    if (!IsOnnx(parent, "Add")) roots.push_back(n.get());
  }
  int folded = 0;
  // A worklist: when a tree does not fold (a term from elsewhere, such as
  // a residual added last), the Adds right under its root are tried as
  // roots of their own; when it folds, they went with it.
  for (size_t r = 0; r < roots.size(); ++r) {
    ir::Node* root = roots[r];
    if (removed.count(root)) continue;
    ir::Value* y = root->outputs[0];
    std::vector<ir::Value*> terms;
    std::vector<ir::Node*> adds;
    CollectTerms(root, readers, terms, adds);
    for (const ir::Value* v : root->inputs) {
      if (v && v->producer && std::count(adds.begin(), adds.end(), v->producer)) {
        roots.push_back(v->producer);
      }
    }
    if (y->dtype != DType::kFloat32 || y->shape.size() != 4 || terms.size() < 2) continue;
    // The convolutions first: they name x and the geometry.
    std::vector<Branch> branches;
    std::vector<ir::Value*> others;
    std::vector<const Tensor*> constants;  // a scalar, or one value per channel
    for (ir::Value* t : terms) {
      if (t && t->is_constant()) {
        constants.push_back(&t->constant);
        continue;
      }
      std::optional<Branch> b = t ? AsBranch(t->producer) : std::nullopt;
      const bool in_tree = t && std::find(adds.begin(), adds.end(), readers.Sole(t)) != adds.end();
      if (b && in_tree && !removed.count(b->conv)) {
        branches.push_back(*b);
      } else {
        others.push_back(t);
      }
    }
    if (branches.empty()) continue;
    ir::Value* x = branches[0].conv->inputs[0];
    const int64_t O = branches[0].weight->shape()[0];
    const int64_t per_group = branches[0].weight->shape()[1];
    const int64_t group = branches[0].group;
    bool ok = x && x->shape.size() == 4;
    int64_t kh = 1, kw = 1;
    for (const Branch& b : branches) {
      ok = ok && b.conv->inputs[0] == x && b.group == group && b.strides == branches[0].strides &&
           b.weight->shape()[0] == O && b.weight->shape()[1] == per_group &&
           (!b.bias || b.bias->num_elements() == O);
      kh = std::max(kh, b.weight->shape()[2]);
      kw = std::max(kw, b.weight->shape()[3]);
    }
    for (const ir::Value* t : terms) ok = ok && t && (t->is_constant() || t->shape == y->shape);
    for (const Tensor* c : constants) {
      const Shape& s = c->shape();
      const bool per_channel =
          s.size() <= 4 && (c->num_elements() == 1 ||
                            (c->num_elements() == O && s.size() >= 3 && s[s.size() - 3] == O));
      ok = ok && c->dtype() == DType::kFloat32 && per_channel;
    }
    if (!ok) continue;
    // Identity terms: only where the output is the input, channel for channel.
    const bool keeps = x->shape == y->shape && branches[0].strides == std::vector<int64_t>{1, 1};
    std::vector<std::vector<double>> factors, shifts;
    std::vector<ir::Node*> identity_nodes;
    for (const ir::Value* t : others) {
      std::vector<double> factor, shift;
      std::vector<ir::Node*> nodes;
      if (!keeps || !AsIdentity(t, x, readers, O, factor, shift, nodes)) {
        ok = false;
        break;
      }
      const bool reused = std::any_of(nodes.begin(), nodes.end(), [&](const ir::Node* n) {
        return removed.count(n) != 0 || std::count(identity_nodes.begin(), identity_nodes.end(), n);
      });
      ok = ok && !reused;
      factors.push_back(std::move(factor));
      shifts.push_back(std::move(shift));
      identity_nodes.insert(identity_nodes.end(), nodes.begin(), nodes.end());
    }
    if (!ok) continue;

    // One kernel: every branch's zero-padded to kh x kw and summed (in
    // double, once); the identities at the centre of each channel's own
    // input channel within its group.
    std::vector<double> w(static_cast<size_t>(O * per_group * kh * kw), 0.0);
    std::vector<double> bias(static_cast<size_t>(O), 0.0);
    auto at = [&](int64_t o, int64_t i, int64_t r, int64_t c) {
      return static_cast<size_t>(((o * per_group + i) * kh + r) * kw + c);
    };
    for (const Branch& b : branches) {
      const int64_t bh = b.weight->shape()[2], bw = b.weight->shape()[3];
      const int64_t dr = (kh - bh) / 2, dc = (kw - bw) / 2;
      const float* src = b.weight->data<float>();
      for (int64_t o = 0; o < O; ++o) {
        for (int64_t i = 0; i < per_group; ++i) {
          for (int64_t r = 0; r < bh; ++r) {
            for (int64_t c = 0; c < bw; ++c) {
              w[at(o, i, r + dr, c + dc)] += src[((o * per_group + i) * bh + r) * bw + c];
            }
          }
        }
        if (b.bias) bias[static_cast<size_t>(o)] += b.bias->data<float>()[o];
      }
    }
    for (const Tensor* c : constants) {
      for (int64_t o = 0; o < O; ++o) {
        bias[static_cast<size_t>(o)] += c->data<float>()[c->num_elements() == 1 ? 0 : o];
      }
    }
    for (size_t k = 0; k < factors.size(); ++k) {
      for (int64_t o = 0; o < O; ++o) {
        w[at(o, o % per_group, kh / 2, kw / 2)] += factors[k][static_cast<size_t>(o)];
        bias[static_cast<size_t>(o)] += shifts[k][static_cast<size_t>(o)];
      }
    }
    Tensor weight = ToFloat(w, {O, per_group, kh, kw});
    Tensor b = ToFloat(bias, {O});

    // The root Add's output, written by one Conv.
    root->outputs[0] = nullptr;
    TESSEL_RETURN_IF_ERROR(WriteByConv(graph, root->name + "/reparameterized", x, std::move(weight),
                                       std::move(b), y, group, branches[0].strides));
    for (ir::Node* n : adds) removed.insert(n);
    for (const Branch& br : branches) removed.insert(br.conv);
    for (ir::Node* n : identity_nodes) removed.insert(n);
    ++folded;
  }
  if (folded > 0) {
    graph.RemoveNodes([&](const ir::Node& n) { return removed.count(&n) != 0; });
    removed.clear();
  }
  const int chains = FoldConvChains(graph, removed);
  if (chains > 0) {
    graph.RemoveNodes([&](const ir::Node& n) { return removed.count(&n) != 0; });
  }
  if (folded + chains > 0) TESSEL_RETURN_IF_ERROR(graph.SortTopologically());
  return folded + chains;
}

}  // namespace tessel::passes
