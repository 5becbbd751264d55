#include "passes/fuse_layer_norm.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "ops/op_registry.h"
#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool Float32(const ir::Value* v) { return v && v->dtype == DType::kFloat32 && v->shape_known; }

bool Is(const ir::Node* n, const char* op_type) {
  return n && n->domain.empty() && n->op_type == op_type && n->outputs.size() == 1 &&
         n->outputs[0] != nullptr;
}

// The value of a one-element float constant.
std::optional<double> ScalarConstant(const ir::Value* v) {
  if (!v || !v->is_constant() || v->constant.num_elements() != 1) return std::nullopt;
  if (v->dtype != DType::kFloat32 && v->dtype != DType::kFloat64) return std::nullopt;
  return v->constant.GetAsDouble(0);
}

// The first normalized axis of a ReduceMean over trailing axes with
// keepdims=1 (axes as attribute, or as a constant input from opset 18).
std::optional<int64_t> TrailingMean(const ir::Node& mean, int opset) {
  if (mean.attrs.Int("keepdims", 1) != 1 || !Float32(mean.input(0))) return std::nullopt;
  std::vector<int64_t> axes;
  if (opset >= 18) {
    const ir::Value* a = mean.input(1);
    if (!a || !a->is_constant()) return std::nullopt;
    axes = a->constant.ToInt64Vector();
  } else {
    axes = mean.attrs.Ints("axes");
  }
  const auto rank = static_cast<int64_t>(mean.input(0)->shape.size());
  if (axes.empty() || rank == 0) return std::nullopt;
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != rank - static_cast<int64_t>(axes.size()) + static_cast<int64_t>(i)) {
      return std::nullopt;
    }
  }
  return axes.front();
}

// `v` reshaped to `shape` when it is a float32 constant of those elements
// (leading 1s aside).
std::optional<Tensor> AsShape(const ir::Value* v, const Shape& shape) {
  if (!v || !v->is_constant() || v->dtype != DType::kFloat32) return std::nullopt;
  Shape s = v->shape;
  while (!s.empty() && s.front() == 1 && s.size() > shape.size()) s.erase(s.begin());
  if (s != shape) return std::nullopt;
  Tensor t(DType::kFloat32, shape);
  std::copy_n(v->constant.data<float>(), t.num_elements(), t.data<float>());
  return t;
}

// The one other input of a two-input node beside `v`.
const ir::Value* Other(const ir::Node& n, const ir::Value* v) {
  if (n.inputs.size() != 2) return nullptr;
  if (n.inputs[0] == v) return n.inputs[1];
  if (n.inputs[1] == v) return n.inputs[0];
  return nullptr;
}

struct Match {
  std::vector<ir::Node*> nodes;  // the pattern, in order; the last writes Y
  ir::Value* x = nullptr;
  int64_t axis = 0;
  double epsilon = 0;
  std::optional<Tensor> gamma, beta;
};

std::optional<Match> MatchAt(ir::Node* mean, const Readers& readers, int opset,
                             const std::unordered_set<const ir::Node*>& taken) {
  std::optional<int64_t> axis = TrailingMean(*mean, opset);
  if (!axis) return std::nullopt;
  Match m;
  m.x = mean->inputs[0];
  m.axis = *axis;
  const Shape& xs = m.x->shape;
  const Shape normalized(xs.begin() + m.axis, xs.end());
  auto sole = [&](const ir::Value* v, const char* op) -> ir::Node* {
    ir::Node* r = readers.Sole(v);
    return Is(r, op) && !taken.count(r) ? r : nullptr;
  };
  ir::Node* sub = sole(mean->outputs[0], "Sub");
  if (!sub || sub->inputs.size() != 2 || sub->inputs[0] != m.x ||
      sub->inputs[1] != mean->outputs[0])
    return std::nullopt;
  const ir::Value* d = sub->outputs[0];
  // d feeds the square and the division, nothing else.
  const std::vector<ir::Node*>& dr = readers.of(d);
  if (dr.size() != 2 || readers.IsGraphOutput(d)) return std::nullopt;
  ir::Node* square = nullptr;
  ir::Node* div = nullptr;
  for (ir::Node* r : dr) {
    if (taken.count(r)) return std::nullopt;
    if (Is(r, "Pow") && r->inputs.size() == 2 && r->inputs[0] == d &&
        ScalarConstant(r->inputs[1]) == 2.0) {
      square = r;
    } else if (Is(r, "Mul") && r->inputs.size() == 2 && r->inputs[0] == d && r->inputs[1] == d) {
      square = r;
    } else if (Is(r, "Div") && r->inputs.size() == 2 && r->inputs[0] == d) {
      div = r;
    }
  }
  if (!square || !div) return std::nullopt;
  ir::Node* var = sole(square->outputs[0], "ReduceMean");
  if (!var || TrailingMean(*var, opset) != axis) return std::nullopt;
  ir::Node* add = sole(var->outputs[0], "Add");
  if (!add) return std::nullopt;
  const std::optional<double> eps = ScalarConstant(Other(*add, var->outputs[0]));
  if (!eps || !(*eps >= 0)) return std::nullopt;
  m.epsilon = *eps;
  ir::Node* sqrt = sole(add->outputs[0], "Sqrt");
  if (!sqrt || readers.Sole(sqrt->outputs[0]) != div || div->inputs[1] != sqrt->outputs[0])
    return std::nullopt;
  m.nodes = {mean, sub, square, var, add, sqrt, div};
  // Optional scale, then optional shift.
  ir::Node* last = div;
  if (ir::Node* mul = sole(last->outputs[0], "Mul")) {
    if ((m.gamma = AsShape(Other(*mul, last->outputs[0]), normalized))) {
      m.nodes.push_back(mul);
      last = mul;
      if (ir::Node* shift = sole(last->outputs[0], "Add")) {
        if ((m.beta = AsShape(Other(*shift, last->outputs[0]), normalized))) {
          m.nodes.push_back(shift);
          last = shift;
        }
      }
    }
  }
  if (last->outputs[0]->shape != xs) return std::nullopt;
  return m;
}

}  // namespace

Status FuseLayerNorm(ir::Graph& graph) {
  const int opset = graph.opset_version();
  const Readers readers(graph);
  std::unordered_set<const ir::Node*> taken, removed;
  std::vector<ir::Node*> means;
  for (const auto& n : graph.nodes()) {
    if (Is(n.get(), "ReduceMean")) means.push_back(n.get());
  }
  for (ir::Node* mean : means) {
    if (taken.count(mean)) continue;
    std::optional<Match> m = MatchAt(mean, readers, opset, taken);
    if (!m) continue;
    ir::Node* host = m->nodes.back();
    const Shape normalized(m->x->shape.begin() + m->axis, m->x->shape.end());
    if (!m->gamma) {
      m->gamma = Tensor(DType::kFloat32, normalized);
      std::fill_n(m->gamma->data<float>(), m->gamma->num_elements(), 1.0f);
    }
    std::vector<ir::Value*> inputs = {
        m->x,
        graph.AddConstant(graph.UniqueValueName(mean->name + "/gamma"), std::move(*m->gamma))};
    if (m->beta) {
      inputs.push_back(
          graph.AddConstant(graph.UniqueValueName(mean->name + "/beta"), std::move(*m->beta)));
    }
    host->op_type = "LayerNormalization";
    host->domain.clear();
    host->name = mean->name + "/LayerNormalization";
    host->attrs = AttributeMap();
    host->attrs.Set("axis", m->axis);
    host->attrs.Set("epsilon", static_cast<float>(m->epsilon));
    host->inputs = std::move(inputs);
    TESSEL_RETURN_IF_ERROR(ops::InferNode(*host, opset));
    for (ir::Node* n : m->nodes) {
      taken.insert(n);
      if (n != host) removed.insert(n);
    }
  }
  graph.RemoveNodes([&](const ir::Node& n) { return removed.count(&n) != 0; });
  return Status::Ok();
}

}  // namespace tessel::passes
