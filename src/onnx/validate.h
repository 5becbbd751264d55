// What tessel checks of every ONNX model itself, whatever its IR version and
// opset: Debian's libonnx checker stops at IR version 8 and opset 17, and
// models exported today are newer. The checks read a table of every
// default-domain op's schema at every version (onnx_schemas.inc, generated
// by scripts/gen-onnx-schemas.py from the pinned onnx release).
//
//   ValidateModel(model, opset, "'m.onnx'") checks
//     - the graph: initializers, graph inputs and node outputs each named once
//       and never twice produced; every node input and graph output defined;
//     - every default-domain node against its op's schema at `opset`: the op
//       exists there and is not deprecated, its input and output counts, and
//       every attribute is one of the op's, of the schema's type, with the
//       required ones present.
#pragma once

#include <string>

#include "core/status.h"
#include "onnx/onnx_pb.h"

namespace tessel::onnx_io {

// InvalidArgument naming `where`, the node and what is wrong.
Status ValidateModel(const onnx::ModelProto& model, int opset, const std::string& where);

// The version (since_version) of default-domain op `op_type` that `opset`
// selects; 0 when the op does not exist at that opset or is unknown.
int OnnxOpVersion(const std::string& op_type, int opset);

// Whether the versions of `op_type` that opsets (from, to] introduce only
// add element types (same inputs, outputs and attributes): a kernel written
// for the version at `from` then runs the one at `to`, rejecting the dtypes
// it does not know. When not, `*first_change` is the first version that
// changes more.
bool OnlyTypesChangeBetween(const std::string& op_type, int from, int to, int* first_change);

}  // namespace tessel::onnx_io
