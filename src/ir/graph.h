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

// How a value's elements are ordered in memory: the one layout enum of the
// IR, decided per value by the target's select-kernels stage together with
// the kernels that read and write it.
//   kPlain         row-major in the logical shape (NCHW for images)
//   kChannelsLast  NHWC (oneDNN's direct convolutions)
//   kBlocked16     nChw16c: channels in blocks of 16 (oneDNN's Winograd)
// Each keeps the plain size (the blocked one only takes channel counts that
// 16 divides). The texel layouts are those of 2D images (ir/texture.h):
// RGBA texels of four floats, channels padded with zeros to a multiple of 4.
//   kNCHW4c        an activation [N, C, H, W] as [N, C/4, H, W, 4]
//   kOIHW4o        a convolution's weights [O, I, KH, KW] as
//                  [O/4, I4*4, KH, KW, 4] (input channels padded to 4 too)
//   kOHW4o         a depthwise convolution's weights [C, 1, KH, KW] as
//                  [C/4, 1, KH, KW, 4]
//   kUnpermuted    a Transpose's output held as its input lies (the
//                  Transpose a view): its reader reads it through permuted
//                  strides (attention's heads, a matrix product's operand)
//   kPermuted      a Transpose's input held as its output lies (the
//                  Transpose a view): its writer writes it through permuted
//                  strides (attention's heads merged back)
enum class Layout : uint8_t {
  kPlain = 0,
  kChannelsLast,
  kBlocked16,
  kNCHW4c,
  kOIHW4o,
  kOHW4o,
  kUnpermuted,
  kPermuted
};
inline constexpr uint8_t kLastLayout = static_cast<uint8_t>(Layout::kPermuted);
// Where a value lives on its target: global memory (buffers), or a 2D
// image (texture: activations; texture:weight: constants).
enum class StorageScope : uint8_t { kGlobal = 0, kTexture, kTextureWeight };
inline constexpr uint8_t kLastStorageScope = static_cast<uint8_t>(StorageScope::kTextureWeight);
const char* LayoutName(Layout l);
const char* StorageScopeName(StorageScope s);

// Which kind of kernel runs a node, as the select-kernels stage decided it.
enum class KernelFamily : uint8_t {
  kUnselected = 0,  // before select-kernels
  kReference,       // the op's own kernel (src/ops)
  kSnippet,         // a fused elementwise region, JIT-compiled (src/snippets)
  kNative,          // a CPU kernel of tessel's own (targets/cpu/native_kernels)
  kOneDnn,          // a oneDNN primitive
  kOpenCl,          // an OpenCL kernel
  kC,               // C99 the c target emits (targets/c)
};
inline constexpr uint8_t kLastKernelFamily = static_cast<uint8_t>(KernelFamily::kC);
const char* KernelFamilyName(KernelFamily f);  // "reference", "snippet", "native", "onednn", ...

// A node's kernel, as typed data: the .tsl records it and Prepare compares
// family, implementation and variant with what the machine builds; the
// display name (ToString) is derived from it for reports, never parsed.
struct KernelChoice {
  KernelFamily family = KernelFamily::kUnselected;
  // Which kernel of the family: "conv", "winograd conv", "strided copy",
  // "f32_conv2d", "avx512" (a snippet's instruction set).
  std::string implementation;
  // How it exchanges its tensors, where that is a choice: "direct x,y"
  // (tensors a convolution reads or writes in its own layout), "channels
  // last", "nChw16c".
  std::string variant;
  // What a library picked inside the kernel on this CPU
  // ("brgconv:avx512_core"): for reports only, since another CPU of the same
  // ISA may pick otherwise and still fit the plan.
  std::string detail;
  // The target's word that this is a reference-grade path, whose time a
  // fast kernel should take.
  bool slow = false;
  // Output 0 holds input 0's bytes unchanged, though the op is no view (a
  // Transpose that moves the channels between axis 1 and the last, its one
  // side held channels last and the other plain): the planner may give the
  // two one buffer, as it does a Reshape's (model/graph_memory.h).
  bool view = false;

  // "onednn conv (brgconv:avx512_core) direct x,y"
  std::string ToString() const;
  // Family, implementation, variant and view equal: the same kernel decision.
  bool SameDecision(const KernelChoice& o) const {
    return family == o.family && implementation == o.implementation && variant == o.variant &&
           view == o.view;
  }
};

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
  // The kernel the target chose for it (the select-kernels stage); family
  // kUnselected before that stage.
  KernelChoice kernel;

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
  // A copy of the structure (values with the same ids, nodes in the same
  // order, Subgraph bodies copied too) whose constants share their storage
  // with this graph's: what lets several executables of one model each own
  // a graph while the weights are held once.
  std::unique_ptr<Graph> Clone() const;

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
