#include "ir/graph.h"

#include <unordered_set>

#include "core/check.h"

namespace tessel::ir {

const char* LayoutName(Layout l) {
  switch (l) {
    case Layout::kPlain:
      return "plain";
    case Layout::kChannelsLast:
      return "channels last";
    case Layout::kBlocked16:
      return "nChw16c";
    case Layout::kNCHW4c:
      return "NCHW4c";
    case Layout::kOIHW4o:
      return "OIHW4o";
    case Layout::kOHW4o:
      return "OHW4o";
    case Layout::kUnpermuted:
      return "unpermuted";
    case Layout::kPermuted:
      return "permuted";
  }
  return "?";
}

const char* StorageScopeName(StorageScope s) {
  switch (s) {
    case StorageScope::kGlobal:
      return "global";
    case StorageScope::kTexture:
      return "texture";
    case StorageScope::kTextureWeight:
      return "texture:weight";
  }
  return "?";
}

const char* KernelFamilyName(KernelFamily f) {
  switch (f) {
    case KernelFamily::kUnselected:
      return "unselected";
    case KernelFamily::kReference:
      return "reference";
    case KernelFamily::kSnippet:
      return "snippet";
    case KernelFamily::kNative:
      return "native";
    case KernelFamily::kOneDnn:
      return "onednn";
    case KernelFamily::kOpenCl:
      return "opencl";
    case KernelFamily::kC:
      return "c";
  }
  return "?";
}

std::string KernelChoice::ToString() const {
  std::string out = KernelFamilyName(family);
  if (!implementation.empty()) out += " " + implementation;
  if (!detail.empty()) out += " (" + detail + ")";
  if (!variant.empty()) out += " " + variant;
  return out;
}

Value* Graph::AddValue(std::string name, DType dtype, Shape shape, bool shape_known) {
  auto v = std::make_unique<Value>();
  v->id = static_cast<int>(values_.size());
  v->name = std::move(name);
  v->dtype = dtype;
  v->shape = std::move(shape);
  v->shape_known = shape_known;
  Value* raw = v.get();
  by_name_.emplace(raw->name, raw);
  values_.push_back(std::move(v));
  return raw;
}

Value* Graph::AddConstant(std::string name, Tensor t) {
  Value* v = AddValue(std::move(name), t.dtype(), t.shape(), true);
  v->constant = std::move(t);
  return v;
}

Node* Graph::AddNode(std::string op_type, std::string name, std::vector<Value*> inputs,
                     std::vector<Value*> outputs) {
  auto n = std::make_unique<Node>();
  n->op_type = std::move(op_type);
  n->name = std::move(name);
  n->inputs = std::move(inputs);
  n->outputs = std::move(outputs);
  for (Value* o : n->outputs) {
    if (o) o->producer = n.get();
  }
  nodes_.push_back(std::move(n));
  return nodes_.back().get();
}

std::unique_ptr<Graph> Graph::Clone() const {
  auto copy = std::make_unique<Graph>();
  copy->name_ = name_;
  copy->opset_version_ = opset_version_;
  copy->values_.reserve(values_.size());
  for (const std::unique_ptr<Value>& v : values_) {
    auto c = std::make_unique<Value>(*v);  // the constant's storage is shared
    c->producer = nullptr;
    copy->by_name_.emplace(c->name, c.get());
    copy->values_.push_back(std::move(c));
  }
  auto map = [&](const Value* v) {
    return v ? copy->values_[static_cast<size_t>(v->id)].get() : nullptr;
  };
  for (const std::unique_ptr<Node>& n : nodes_) {
    auto c = std::make_unique<Node>();
    c->name = n->name;
    c->op_type = n->op_type;
    c->domain = n->domain;
    c->attrs = n->attrs;
    c->kernel = n->kernel;
    if (n->body) c->body = n->body->Clone();
    for (const Value* in : n->inputs) c->inputs.push_back(map(in));
    for (const Value* out : n->outputs) {
      c->outputs.push_back(map(out));
      if (out) c->outputs.back()->producer = c.get();
    }
    copy->nodes_.push_back(std::move(c));
  }
  for (const Value* v : inputs_) copy->inputs_.push_back(map(v));
  for (const Value* v : outputs_) copy->outputs_.push_back(map(v));
  return copy;
}

Value* Graph::FindValue(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::string Graph::UniqueValueName(const std::string& base) {
  if (!FindValue(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "_" + std::to_string(i);
    if (!FindValue(candidate)) return candidate;
  }
}

Status Graph::SortTopologically() {
  // Kahn's algorithm, stable with respect to the current order.
  std::unordered_map<const Value*, const Node*> producer;
  for (auto& n : nodes_) {
    for (Value* o : n->outputs) {
      if (o) producer[o] = n.get();
    }
  }
  std::unordered_map<const Node*, int> pending;
  std::unordered_map<const Node*, std::vector<Node*>> users;
  for (auto& n : nodes_) {
    std::unordered_set<const Node*> deps;
    for (Value* in : n->inputs) {
      if (!in) continue;
      auto it = producer.find(in);
      if (it != producer.end() && it->second != n.get()) deps.insert(it->second);
      if (it != producer.end() && it->second == n.get()) {
        return InvalidArgument(n->Describe() + " reads its own output '" + in->name + "'");
      }
    }
    pending[n.get()] = static_cast<int>(deps.size());
    for (const Node* d : deps) users[d].push_back(n.get());
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  // Index by pointer to move out the unique_ptrs in ready order.
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  // Repeatedly take the earliest ready node (stable order).
  std::vector<size_t> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[nodes_[i].get()] == 0) ready.push_back(i);
  }
  std::vector<size_t> order;
  order.reserve(nodes_.size());
  // A min-heap by original index keeps the order stable.
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (Node* u : users[nodes_[i].get()]) {
      if (--pending[u] == 0) {
        ready.push_back(index[u]);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
    }
  }
  if (order.size() != nodes_.size()) {
    for (auto& n : nodes_) {
      if (pending[n.get()] > 0) {
        return InvalidArgument("the graph has a cycle through " + n->Describe());
      }
    }
  }
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
  return Status::Ok();
}

void Graph::RemoveNodes(const std::function<bool(const Node&)>& pred) {
  std::vector<std::unique_ptr<Node>> kept;
  kept.reserve(nodes_.size());
  for (auto& n : nodes_) {
    if (pred(*n)) {
      for (Value* o : n->outputs) {
        if (o && o->producer == n.get()) o->producer = nullptr;
      }
    } else {
      kept.push_back(std::move(n));
    }
  }
  nodes_ = std::move(kept);
  Compact();
}

void Graph::Compact() {
  std::unordered_set<const Value*> used;
  for (auto& n : nodes_) {
    for (Value* v : n->inputs) used.insert(v);
    for (Value* v : n->outputs) used.insert(v);
  }
  for (Value* v : inputs_) used.insert(v);
  for (Value* v : outputs_) used.insert(v);
  std::vector<std::unique_ptr<Value>> kept;
  kept.reserve(values_.size());
  for (auto& v : values_) {
    if (used.count(v.get())) {
      v->id = static_cast<int>(kept.size());
      kept.push_back(std::move(v));
    } else {
      by_name_.erase(v->name);
    }
  }
  values_ = std::move(kept);
}

std::vector<std::vector<Node*>> Graph::Consumers() const {
  std::vector<std::vector<Node*>> consumers(values_.size());
  for (auto& n : nodes_) {
    for (Value* in : n->inputs) {
      if (in) {
        auto& list = consumers[static_cast<size_t>(in->id)];
        if (list.empty() || list.back() != n.get()) list.push_back(n.get());
      }
    }
  }
  return consumers;
}

}  // namespace tessel::ir
