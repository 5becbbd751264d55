// Op schemas: for every supported op, shape inference and the reference
// kernel — plain, obviously correct C++ that every target is checked against.
//
// Adding an op: write its Infer and Run in the src/ops/ file of its family and
// register it in that file's Register*Ops function:
//
//   r.Register({.op_type = "Relu", .op_class = OpClass::kElementwise,
//               .min_inputs = 1, .max_inputs = 1, .infer = InferUnary,
//               .run = RunRelu});
//
// Contract of `infer(node, opset)`: every present input has a known dtype and
// shape (and `constant` when known at compile time). It validates attributes
// and input dtypes/shapes — a bad one is an InvalidArgument/Unsupported Status
// that names the node (node.Describe()) and the values — and sets dtype, shape
// and shape_known on every present output. It may also set an output's
// `constant` (Shape does). Attribute *types* were already checked at import.
//
// Contract of `run(ctx)`: inputs and outputs have exactly the inferred dtypes
// and shapes; outputs are allocated and zeroed. It returns a Status only for
// problems that depend on data (an index out of range); it never re-checks
// what infer validated.
//
// Memory the kernel needs beyond its outputs (a padded input, an im2col
// matrix, transposed weights) it declares through `scratch(node, opset)`: the
// memory plan places these buffers with the tensors between ops, and the
// kernel finds them in ctx.scratch, one pointer per declared need, aligned as
// asked and with unspecified contents. Elementwise and broadcast kernels must
// also accept an output that is the very memory of an input of the same dtype
// and shape (the plan reuses it in place): element i of the output may be
// written only after element i of that input was read.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::ops {

enum class OpClass {
  kElementwise,  // same shape in and out, one element at a time
  kBroadcast,    // elementwise with numpy broadcasting
  kInjective,    // every output element reads one input element (copies, layout)
  kReduction,
  kOpaque,  // everything else (conv, matmul, pooling, ...)
};

struct KernelContext {
  const ir::Node& node;
  int opset = 0;
  std::vector<const Tensor*> inputs;  // nullptr for an absent optional input
  std::vector<Tensor*> outputs;       // nullptr for an omitted optional output

  const Tensor& in(size_t i) const { return *inputs[i]; }
  bool has_in(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  Tensor& out(size_t i) { return *outputs[i]; }
  bool has_out(size_t i) const { return i < outputs.size() && outputs[i] != nullptr; }
  // One buffer per need the op's `scratch` function declared, in order.
  std::vector<void*> scratch;
};

// A buffer a kernel needs while it runs, beyond its outputs.
struct ScratchNeed {
  std::string name;  // what it holds ("padded input"), for reports
  int64_t size_bytes = 0;
  int64_t alignment = 64;  // a power of two
};
using ScratchFn = std::vector<ScratchNeed> (*)(const ir::Node& node, int opset);

using InferFn = Status (*)(ir::Node& node, int opset);
using KernelFn = Status (*)(KernelContext& ctx);

struct OpSchema {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  OpClass op_class = OpClass::kOpaque;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  InferFn infer = nullptr;
  KernelFn run = nullptr;
  // A view: output 0 holds input 0's bytes unchanged, only its shape
  // differs (Identity, Reshape, Flatten, Squeeze, Unsqueeze). Such a node
  // may share its input's buffer, and a target may run it as a copy.
  bool view = false;
  // May be evaluated at compile time when every input is a constant.
  bool foldable = true;
  // Scratch buffers the kernel needs; none when null.
  ScratchFn scratch = nullptr;
  // The newest opset whose version of the op infer and run implement. A
  // model of a later opset runs the op only when every version in between
  // merely added element types (onnx_io::OnlyTypesChangeBetween); otherwise
  // the importer rejects it as unsupported, naming the version, rather than
  // guess at a behaviour written after the kernel. Default-domain ops only.
  int max_opset = 17;
};

// Whether `node` is a view (OpSchema::view) with one output.
bool IsView(const ir::Node& node);

class OpRegistry {
 public:
  // Every op tessel supports, registered once.
  static const OpRegistry& Global();

  void Register(OpSchema schema);
  // Sets the max_opset of the default-domain op `op_type`, registered before.
  void SetMaxOpset(std::string_view op_type, int max_opset);
  const OpSchema* Find(std::string_view op_type, std::string_view domain = "") const;
  std::vector<const OpSchema*> All() const;

 private:
  std::map<std::pair<std::string, std::string>, OpSchema> schemas_;
};

// Validates the node's input/output counts against its schema, then runs
// the schema's infer. Unknown ops are Unsupported.
Status InferNode(ir::Node& node, int opset);

// Runs `schema`'s kernel on `ctx`, unless every present output is empty:
// an empty result needs no computing, and a kernel looping over the
// dimensions beside a 0 ({0, 2^40}) would spin for nothing. Executors run
// reference kernels through this.
Status RunKernel(const OpSchema& schema, KernelContext& ctx);

// Runs the reference kernel of `node` on `inputs`, allocating outputs of the
// node's inferred dtypes and shapes.
StatusOr<std::vector<Tensor>> EvaluateNode(const ir::Node& node, int opset,
                                           const std::vector<const Tensor*>& inputs);

// The scratch buffers `node`'s kernel declares (none for unknown ops).
std::vector<ScratchNeed> ScratchNeeds(const ir::Node& node, int opset);

// For tests and constant folding: builds a one-node graph with `inputs`
// (an undefined Tensor is an omitted optional input), infers shapes and runs
// the reference kernel. Returns `num_outputs` tensors.
StatusOr<std::vector<Tensor>> RunSingleOp(const std::string& op_type, const AttributeMap& attrs,
                                          const std::vector<Tensor>& inputs, int num_outputs = 1,
                                          int opset = 17);

// One registration function per op family (src/ops/<family>.cc).
void RegisterElementwiseOps(OpRegistry& r);  // elementwise.cc
void RegisterNnOps(OpRegistry& r);           // conv, pooling, normalization, ... nn.cc
void RegisterMatmulOps(OpRegistry& r);       // Gemm, MatMul: matmul.cc
void RegisterTensorOps(OpRegistry& r);       // shape/data movement: tensor.cc
void RegisterReductionOps(OpRegistry& r);    // Reduce*, ArgMax/Min: reduction.cc
void RegisterSubgraphOps(OpRegistry& r);     // tessel's Subgraph (fused snippets): subgraph.cc
void RegisterLossOps(OpRegistry& r);         // NegativeLogLikelihoodLoss, ...: loss.cc
void RegisterQuantizeOps(OpRegistry& r);     // QuantizeLinear, QLinearConv, ...: quantize.cc
void RegisterDetectionOps(OpRegistry& r);    // NonMaxSuppression, RoiAlign: detection.cc
void RegisterSamplingOps(OpRegistry& r);     // GridSample: sampling.cc
void RegisterSignalOps(OpRegistry& r);       // DFT, STFT, windows, ...: signal.cc
void RegisterSelectionOps(OpRegistry& r);    // Compress, Unique: selection.cc
void RegisterLinalgOps(OpRegistry& r);       // Det: linalg.cc
void RegisterReorderOps(OpRegistry& r);      // ReverseSequence, MaxUnpool: reorder.cc
void RegisterTextOps(OpRegistry& r);         // TfIdfVectorizer: text.cc
void RegisterRnnOps(OpRegistry& r);          // RNN, GRU, LSTM: rnn.cc
void RegisterAttentionOps(OpRegistry& r);    // Attention, RotaryEmbedding: attention.cc

}  // namespace tessel::ops
