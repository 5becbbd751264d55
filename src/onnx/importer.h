// ONNX import: a .onnx file -> ir::Graph with every value typed, every
// initializer a constant, and every graph input of static shape.
//
// What the importer guarantees to the passes after it:
//   - the model parsed, passed the ONNX checker, and has a default-domain
//     opset in [kMinOpset, kMaxOpset];
//   - every node's op is registered in ops::OpRegistry (otherwise ONE message
//     lists every unsupported op type and the nodes that use it);
//   - graph inputs have dtype and static shape (symbolic dims come from
//     ImportOptions::input_shapes or are an error naming the input);
//   - nodes are in topological order.
// Shapes of intermediate values are not known yet: passes/infer_shapes does that.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"
#include "ir/graph.h"

namespace tessel::onnx_io {

inline constexpr int kMinOpset = 7;
inline constexpr int kMaxOpset = 17;

struct ImportOptions {
  // Shapes for graph inputs with symbolic or unknown dims, by input name.
  std::map<std::string, Shape> input_shapes;
};

StatusOr<std::unique_ptr<ir::Graph>> ImportModel(const std::filesystem::path& path,
                                                 const ImportOptions& options = {});

// Parses "name=1,3,224,224" into (name, shape).
StatusOr<std::pair<std::string, Shape>> ParseInputShape(const std::string& spec);

}  // namespace tessel::onnx_io
