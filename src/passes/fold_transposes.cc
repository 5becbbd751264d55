#include "passes/fold_transposes.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "passes/eliminate_dead_nodes.h"
#include "passes/fusion.h"

namespace tessel::passes {

namespace {

bool IsTranspose(const ir::Node* n) {
  return n && n->domain.empty() && n->op_type == "Transpose" && n->outputs.size() == 1 &&
         n->input(0) && n->output(0) && n->input(0)->shape_known && n->output(0)->shape_known;
}

// The Transpose's permutation (the default reverses the axes).
std::vector<int64_t> PermOf(const ir::Node& t) {
  std::vector<int64_t> perm = t.attrs.Ints("perm", {});
  if (perm.empty()) {
    for (size_t i = t.input(0)->shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  return perm;
}

// x's axes refined so that z = first(x) viewed as `mid`, then second: the
// shape to reshape x to, the one permutation, and the shape it gives.
struct Folded {
  Shape refined_x;
  std::vector<int64_t> perm;
  Shape refined_z;
};

std::optional<Folded> Fold(const Shape& x, const std::vector<int64_t>& p1, const Shape& mid,
                           const std::vector<int64_t>& p2) {
  struct Factor {
    int64_t size, axis;
  };
  std::vector<Factor> factors;             // in the first Transpose's output order
  std::vector<std::vector<size_t>> group;  // by dim of `mid`: its factors
  group.resize(mid.size());
  size_t i = 0, j = 0;
  int64_t left_a = 0, left_b = 0;  // what is left of the current dims
  auto next_a = [&] {
    while (i < p1.size() && x[static_cast<size_t>(p1[i])] == 1) ++i;
    left_a = i < p1.size() ? x[static_cast<size_t>(p1[i])] : 0;
  };
  auto next_b = [&] {
    while (j < mid.size() && mid[j] == 1) ++j;
    left_b = j < mid.size() ? mid[j] : 0;
  };
  next_a();
  next_b();
  while (left_a > 0 && left_b > 0) {
    const int64_t f = std::min(left_a, left_b);
    if (left_a % f != 0 || left_b % f != 0) return std::nullopt;
    group[j].push_back(factors.size());
    factors.push_back({f, p1[i]});
    left_a /= f;
    left_b /= f;
    if (left_a == 1) {
      ++i;
      next_a();
    }
    if (left_b == 1) {
      ++j;
      next_b();
    }
  }
  if (left_a != 0 || left_b != 0) return std::nullopt;
  // x refined: each axis's factors in the order met (outer first).
  Folded out;
  std::vector<int64_t> position(factors.size());
  for (int64_t axis = 0; axis < static_cast<int64_t>(x.size()); ++axis) {
    for (size_t k = 0; k < factors.size(); ++k) {
      if (factors[k].axis != axis) continue;
      position[k] = static_cast<int64_t>(out.refined_x.size());
      out.refined_x.push_back(factors[k].size);
    }
  }
  for (int64_t d : p2) {
    for (size_t k : group[static_cast<size_t>(d)]) {
      out.perm.push_back(position[k]);
      out.refined_z.push_back(factors[k].size);
    }
  }
  return out;
}

}  // namespace

int FoldTransposes(ir::Graph& graph) {
  int folded = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const Readers readers(graph);
    const size_t count = graph.nodes().size();
    for (size_t n = 0; n < count && !changed; ++n) {
      ir::Node* second = graph.nodes()[n].get();
      if (!IsTranspose(second)) continue;
      ir::Value* mid = second->inputs[0];
      ir::Node* view = mid->producer;
      ir::Node* first = view;
      if (view && ops::IsView(*view) && view->input(0) && readers.Sole(mid) == second) {
        first = view->input(0)->producer;
        if (!first || readers.Sole(view->input(0)) != view) continue;
      } else {
        view = nullptr;
        if (readers.Sole(mid) != second) continue;
      }
      if (!IsTranspose(first)) continue;
      ir::Value* x = first->inputs[0];
      if (x->dtype != second->output(0)->dtype) continue;
      const std::optional<Folded> f = Fold(x->shape, PermOf(*first), mid->shape, PermOf(*second));
      if (!f) continue;
      // x -> [Reshape] -> Transpose -> [Reshape] -> z, z kept as the value.
      ir::Value* z = second->outputs[0];
      const std::string name = second->name + "/folded" + std::to_string(folded);
      ir::Value* in = x;
      if (f->refined_x != x->shape) {
        in = graph.AddValue(graph.UniqueValueName(name + "/x"), x->dtype, f->refined_x, true);
        graph.AddNode("Reshape", name + "/reshape_x",
                      {x, ShapeConstant(graph, name + "/x_shape", f->refined_x)}, {in});
      }
      ir::Value* out = z;
      if (f->refined_z != z->shape) {
        out = graph.AddValue(graph.UniqueValueName(name + "/z"), z->dtype, f->refined_z, true);
      }
      second->outputs[0] = nullptr;
      z->producer = nullptr;
      graph.AddNode("Transpose", name, {in}, {out})->attrs.Set("perm", f->perm);
      if (out != z) {
        graph.AddNode("Reshape", name + "/reshape_z",
                      {out, ShapeConstant(graph, name + "/z_shape", z->shape)}, {z});
      }
      ++folded;
      changed = true;
    }
    if (changed) {
      // The old chain no longer reaches an output.
      graph.RemoveNodes([](const ir::Node& node) {
        return std::all_of(node.outputs.begin(), node.outputs.end(),
                           [](const ir::Value* v) { return v == nullptr; });
      });
      // Sorted first: EliminateDeadNodes reads the order as the schedule.
      const Status sorted = graph.SortTopologically();  // a rewrite of a DAG stays one
      TESSEL_CHECK(sorted.ok());
      EliminateDeadNodes(graph);
    }
  }
  return folded;
}

}  // namespace tessel::passes
