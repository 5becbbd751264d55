// The tessel IR: a Graph owns Nodes and Values.
//
//   graph inputs ──► Node ──► Value ──► Node ──► ... ──► graph outputs
//
// A Value has a dtype, a static shape, and, when known at compile time, a
// constant payload (initializers and folded results). Nodes are kept in a
// topological order (SortTopologically establishes it; passes preserve it).
// A Subgraph node (a fused snippet, domain "tessel") owns a body Graph.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ir/attribute.h"
#include "ir/tensor.h"

namespace tessel::ir {

enum class Layout : uint8_t { kPlain = 0, kNCHW4c };
enum class StorageScope : uint8_t { kGlobal = 0, kTexture, kTextureWeight };
const char* LayoutName(Layout l);
const char* StorageScopeName(StorageScope s);

struct Node;
class Graph;

struct Value {
  int id = 0;  // index in Graph::values(); stable until the graph is compacted
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;
  bool shape_known = false;
  Tensor constant;  // defined() when the value is known at compile time
  Node* producer = nullptr;
  Layout layout = Layout::kPlain;
  StorageScope scope = StorageScope::kGlobal;

  bool is_constant() const { return constant.defined(); }
  size_t size_bytes() const { return static_cast<size_t>(NumElements(shape)) * DTypeSize(dtype); }
};

struct Node {
  std::string name;  // unique in the graph (the importer invents missing ones)
  std::string op_type;
  std::string domain;           // "" is the default ONNX domain
  std::vector<Value*> inputs;   // nullptr marks an omitted optional input
  std::vector<Value*> outputs;  // nullptr marks an omitted optional output
  AttributeMap attrs;
  std::unique_ptr<Graph> body;  // Subgraph nodes only
  // The kernel the target chose for it (the select-kernels stage), for
  // reports; empty before that stage.
  std::string kernel;

  // Input i, or nullptr when absent or omitted.
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  // "Conv 'conv_3'": how messages name a node.
  std::string Describe() const { return op_type + " '" + name + "'"; }
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Creates a value; names must be unique (checked by the verifier).
  Value* AddValue(std::string name, DType dtype = DType::kUndefined, Shape shape = {},
                  bool shape_known = false);
  // A constant value holding `t`.
  Value* AddConstant(std::string name, Tensor t);
  // Appends a node and makes it the producer of its outputs.
  Node* AddNode(std::string op_type, std::string name, std::vector<Value*> inputs,
                std::vector<Value*> outputs);

  Value* FindValue(const std::string& name) const;
  // A name not used by any value yet, derived from `base`.
  std::string UniqueValueName(const std::string& base);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*>& inputs() { return inputs_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  std::vector<Value*>& outputs() { return outputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }

  int opset_version() const { return opset_version_; }
  void set_opset_version(int v) { opset_version_ = v; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Orders nodes so every node follows the producers of its inputs. Fails,
  // naming a node on the cycle, if there is one.
  Status SortTopologically();

  // Removes the nodes for which `pred` holds (their outputs lose their
  // producer), then drops values no longer referenced by any node, graph
  // input or output. Keeps the order of the remaining nodes.
  void RemoveNodes(const std::function<bool(const Node&)>& pred);

  // For each value id, the nodes that read it (in node order).
  std::vector<std::vector<Node*>> Consumers() const;

 private:
  void Compact();  // drops unreferenced values and renumbers ids

  std::string name_;
  int opset_version_ = 0;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::unordered_map<std::string, Value*> by_name_;
};

}  // namespace tessel::ir
