// ONNX import: a .onnx file -> ir::Graph with every value typed, every
// initializer a constant, and every graph input of static shape.
//
// What the importer guarantees to the passes after it:
//   - the model parsed, has a default-domain opset in [kMinOpset, kMaxOpset]
//     and passed tessel's validation (onnx/validate.h: graph structure, every
//     node's arity and attribute types against its ONNX schema), and the
//     libonnx checker where it can judge (IR version <= 8, opset <= 17);
//   - every node's op is registered in ops::OpRegistry, in a form and a
//     version tessel implements at the model's opset (otherwise ONE message
//     lists every unsupported op type and the nodes that use it);
//   - graph inputs have dtype and static shape (symbolic dims come from
//     ImportOptions::input_shapes or are an error naming the input);
//   - graph inputs named in ImportOptions::constant_inputs are constants, not
//     graph inputs, and their values match the declared dtype and shape;
//   - nodes are in topological order.
// Shapes of intermediate values are not known yet: passes/infer_shapes does that.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::onnx_io {

inline constexpr int kMinOpset = 1;
// The newest opset of the ONNX release whose schemas tessel validates
// against (onnx_schemas.inc). Each op implements its versions up to its own
// ops::OpSchema::max_opset; newer versions that only add types run too.
inline constexpr int kMaxOpset = 28;

struct ImportOptions {
  // Shapes for graph inputs with symbolic or unknown dims, by input name.
  std::map<std::string, Shape> input_shapes;
  // Graph inputs bound to a value at compile time (`--bind NAME=FILE.pb`):
  // each becomes a constant, so inputs that decide output shapes (Reshape's
  // shape, Slice's starts, ...) are known to shape inference. The tensor must
  // have the input's declared dtype and fit its declared shape (symbolic dims
  // match any size); a name that is not a graph input is an InvalidArgument.
  std::map<std::string, Tensor> constant_inputs;
};

StatusOr<std::unique_ptr<ir::Graph>> ImportModel(const std::filesystem::path& path,
                                                 const ImportOptions& options = {});

// Parses "name=1,3,224,224" into (name, shape).
StatusOr<std::pair<std::string, Shape>> ParseInputShape(const std::string& spec);

// Parses "name=FILE.pb" and reads the tensor file: a `--bind` option.
StatusOr<std::pair<std::string, Tensor>> ParseBinding(const std::string& spec);

// The op type of every node of the model's main graph, in file order, read
// without importing or checking the model (for reports that group by op).
StatusOr<std::vector<std::string>> ReadNodeOpTypes(const std::filesystem::path& path);

}  // namespace tessel::onnx_io
