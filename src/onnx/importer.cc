#include "onnx/importer.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/file_io.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/tensor_io.h"
#include "onnx/validate.h"
#include "ops/op_registry.h"

namespace tessel::onnx_io {

namespace fs = std::filesystem;

namespace {

// What Debian's libonnx (1.12) checker knows.
constexpr int kLibOnnxIrVersion = 8;
constexpr int kLibOnnxOpset = 17;

StatusOr<AttrValue> ConvertAttribute(const onnx::AttributeProto& a, const ir::Node& node,
                                     const fs::path& base_dir) {
  using AP = onnx::AttributeProto;
  const std::string what = node.Describe() + " attribute '" + a.name() + "'";
  switch (a.type()) {
    case AP::FLOAT:
      return AttrValue(a.f());
    case AP::INT:
      return AttrValue(static_cast<int64_t>(a.i()));
    case AP::STRING:
      return AttrValue(a.s());
    case AP::FLOATS:
      return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case AP::INTS:
      return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case AP::STRINGS:
      return AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case AP::TENSOR: {
      TESSEL_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(a.t(), base_dir, what));
      return AttrValue(std::move(t));
    }
    case AP::GRAPH:
    case AP::GRAPHS:
      return Unsupported(what + " is a subgraph (control flow); not supported");
    default:
      return Unsupported(what + " has attribute type " + AP::AttributeType_Name(a.type()) +
                         "; not supported");
  }
}

// dtype and static shape of a graph input from its ValueInfo.
StatusOr<std::pair<DType, Shape>> InputType(const onnx::ValueInfoProto& info,
                                            const ImportOptions& options) {
  const std::string what = "graph input '" + info.name() + "'";
  if (!info.type().has_tensor_type()) {
    return Unsupported(what + " is not a tensor (sequence, map or optional); not supported");
  }
  const auto& tt = info.type().tensor_type();
  TESSEL_ASSIGN_OR_RETURN(DType dtype, DTypeFromOnnx(tt.elem_type(), what));
  auto given = options.input_shapes.find(info.name());
  if (!tt.has_shape()) {
    if (given == options.input_shapes.end()) {
      return InvalidArgument(what + " has no shape; give one with --input-shape " + info.name() +
                             "=D0,D1,...");
    }
    return std::make_pair(dtype, given->second);
  }
  Shape shape;
  std::string symbolic;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      shape.push_back(d.dim_value());
    } else {
      shape.push_back(-1);
      if (symbolic.empty()) symbolic = d.has_dim_param() ? d.dim_param() : "?";
    }
  }
  if (given != options.input_shapes.end()) {
    const Shape& g = given->second;
    bool compatible = g.size() == shape.size();
    for (size_t i = 0; compatible && i < g.size(); ++i) {
      compatible = shape[i] < 0 || shape[i] == g[i];
    }
    if (!compatible) {
      return InvalidArgument("--input-shape " + info.name() + "=" + ShapeToString(g) +
                             " does not match the model's shape for it (" + ShapeToString(shape) +
                             ", -1 = symbolic)");
    }
    return std::make_pair(dtype, g);
  }
  if (!symbolic.empty()) {
    return InvalidArgument(what + " has symbolic dimension '" + symbolic +
                           "'; give its shape with --input-shape " + info.name() + "=D0,D1,...");
  }
  return std::make_pair(dtype, shape);
}

// A value bound with ImportOptions::constant_inputs must have the input's
// declared dtype and fit its declared shape; symbolic or unknown dims accept
// any size, since binding is how a user fixes them.
Status CheckBoundValue(const onnx::ValueInfoProto& info, const Tensor& value) {
  const std::string what = "graph input '" + info.name() + "'";
  if (!info.type().has_tensor_type()) {
    return Unsupported(what + " is not a tensor (sequence, map or optional); not supported");
  }
  const auto& tt = info.type().tensor_type();
  TESSEL_ASSIGN_OR_RETURN(DType dtype, DTypeFromOnnx(tt.elem_type(), what));
  const std::string bind = "--bind " + info.name() + ": the value has ";
  if (value.dtype() != dtype) {
    return InvalidArgument(bind + "dtype " + DTypeName(value.dtype()) + "; the model declares " +
                           DTypeName(dtype));
  }
  if (!tt.has_shape()) return Status::Ok();
  Shape declared;
  bool fits = tt.shape().dim_size() == static_cast<int>(value.shape().size());
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
    declared.push_back(fixed ? d.dim_value() : -1);
    if (fits && fixed) fits = value.shape()[static_cast<size_t>(i)] == d.dim_value();
  }
  if (!fits) {
    return InvalidArgument(bind + "shape " + ShapeToString(value.shape()) +
                           "; the model declares " + ShapeToString(declared) + " (-1 = symbolic)");
  }
  return Status::Ok();
}

std::string JoinQuoted(const std::vector<std::string>& names) {
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "'" : ", '") + n + "'";
  return all;
}

int DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return static_cast<int>(o.version());
  }
  return -1;
}

// Registered ops whose oldest form tessel does not implement: below
// `first_opset` the op had other inputs or attributes, or was experimental (the
// ONNX checker knows no schema for it). Every other op handles its old forms in
// its own infer and run (src/ops/).
struct OldForm {
  const char* op_type;
  int first_opset;
  const char* what;
};
constexpr OldForm kUnsupportedOldForms[] = {
    {"Pad", 2, "attribute 'paddings'"},
    {"Upsample", 7, "attributes 'height_scale' and 'width_scale'"},
    {"MeanVarianceNormalization", 9, "experimental"},
    {"ThresholdedRelu", 10, "experimental"},
};

// Why the default-domain op `op_type` is not supported at `opset`, or "" if it
// is.
std::string OldFormReason(const std::string& op_type, int opset) {
  for (const OldForm& f : kUnsupportedOldForms) {
    if (op_type == f.op_type && opset < f.first_opset) {
      return " before opset " + std::to_string(f.first_opset) + " (" + f.what + ")";
    }
  }
  return "";
}

// Why the version of `op_type` that `opset` selects is not supported, when
// a version after the one at `implemented` (the op's max_opset) changes more
// than its types; else "".
std::string NewerVersionReason(const std::string& op_type, int opset, int implemented) {
  int changed = 0;
  if (OnlyTypesChangeBetween(op_type, implemented, opset, &changed)) return "";
  return " at opset " + std::to_string(opset) + " (version " + std::to_string(changed) +
         " changed it; tessel implements version " +
         std::to_string(OnnxOpVersion(op_type, implemented)) + ")";
}

// `opset` is the model's default-domain opset, or -1 when it has none.
Status CheckSupportedOps(const onnx::GraphProto& g, int opset) {
  // op type -> node names, in first-seen order for a stable message.
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::string>> unsupported;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    const bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    std::string old_form = default_domain && opset >= 0 ? OldFormReason(n.op_type(), opset) : "";
    const ops::OpSchema* op = ops::OpRegistry::Global().Find(n.op_type(), n.domain());
    if (op && old_form.empty() && default_domain && opset > op->max_opset) {
      old_form = NewerVersionReason(n.op_type(), opset, op->max_opset);
    }
    if (old_form.empty() && op) continue;
    std::string type =
        (n.domain().empty() ? n.op_type() : n.domain() + "." + n.op_type()) + old_form;
    if (!unsupported.count(type)) order.push_back(type);
    unsupported[type].push_back(n.name().empty() ? "#" + std::to_string(i) : n.name());
  }
  if (order.empty()) return Status::Ok();
  std::ostringstream msg;
  msg << "unsupported ops: ";
  for (size_t k = 0; k < order.size(); ++k) {
    const auto& nodes = unsupported[order[k]];
    msg << (k ? "; " : "") << order[k] << " (node" << (nodes.size() > 1 ? "s " : " ");
    for (size_t j = 0; j < nodes.size() && j < 5; ++j) msg << (j ? ", '" : "'") << nodes[j] << "'";
    if (nodes.size() > 5) msg << " and " << nodes.size() - 5 << " more";
    msg << ")";
  }
  return Unsupported(msg.str());
}

}  // namespace

StatusOr<std::pair<std::string, Shape>> ParseInputShape(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return InvalidArgument("--input-shape '" + spec + "': expected NAME=D0,D1,...");
  }
  Shape shape;
  std::stringstream ss(spec.substr(eq + 1));
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || d < 0) {
      return InvalidArgument("--input-shape '" + spec + "': '" + item +
                             "' is not a non-negative integer");
    }
    shape.push_back(d);
  }
  return std::make_pair(spec.substr(0, eq), shape);
}

StatusOr<std::pair<std::string, Tensor>> ParseBinding(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    return InvalidArgument("--bind '" + spec + "': expected NAME=FILE.pb");
  }
  TESSEL_ASSIGN_OR_RETURN(Tensor value, ReadTensorFile(spec.substr(eq + 1)));
  return std::make_pair(spec.substr(0, eq), std::move(value));
}

StatusOr<std::vector<std::string>> ReadNodeOpTypes(const fs::path& path) {
  TESSEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes)) {
    return DataLoss("'" + path.string() +
                    "' is not a valid ONNX model (truncated or not a protobuf file)");
  }
  std::vector<std::string> op_types;
  for (const auto& n : model.graph().node()) op_types.push_back(n.op_type());
  return op_types;
}

StatusOr<std::unique_ptr<ir::Graph>> ImportModel(const fs::path& path,
                                                 const ImportOptions& options) {
  const std::string where = "'" + path.string() + "'";
  std::ifstream in;
  TESSEL_RETURN_IF_ERROR(OpenForReading(path, &in));
  std::error_code ec;
  if (fs::file_size(path, ec) == 0 && !ec) return DataLoss(where + " is empty; not an ONNX model");
  // Parsed from the stream, a buffer at a time: the file's bytes and the
  // parsed model are never both in memory (a model's weights would be held
  // twice at the peak).
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in)) {
    return DataLoss(where + " is not a valid ONNX model (truncated or not a protobuf file)");
  }
  in.close();
  if (!model.has_graph() || model.opset_import_size() == 0) {
    return DataLoss(where + " is not a valid ONNX model (no graph or no opset)");
  }
  const int opset = DefaultOpset(model);
  if (opset < 0) {
    // Without a default-domain opset every node is of another domain (e.g.
    // ai.onnx.ml, ai.onnx.preview.training): naming those ops says more than
    // naming the missing opset.
    TESSEL_RETURN_IF_ERROR(CheckSupportedOps(model.graph(), -1));
    return Unsupported(where + " imports no opset of the default domain (ai.onnx); supported: " +
                       std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
  }
  if (opset < kMinOpset || opset > kMaxOpset) {
    return Unsupported(where + " uses opset " + std::to_string(opset) +
                       " of the default domain; supported: " + std::to_string(kMinOpset) + " to " +
                       std::to_string(kMaxOpset));
  }
  // Unsupported ops first: the checker would stop at the first unknown one,
  // and users want the whole list.
  TESSEL_RETURN_IF_ERROR(CheckSupportedOps(model.graph(), opset));
  // The checker on the parsed model, not on the file: reading it a second
  // time would hold the model's bytes twice more at the peak. External data
  // needs the file's folder, which only the path form knows.
  // External data stays inside the model's folder: checked before anyone
  // (the checker included) opens a file the model names.
  bool external_data = false;
  for (const auto& init : model.graph().initializer()) {
    if (init.data_location() != onnx::TensorProto::EXTERNAL) continue;
    external_data = true;
    TESSEL_RETURN_IF_ERROR(
        CheckExternalData(init, path.parent_path(), "initializer '" + init.name() + "'"));
  }
  // Debian's libonnx checker judges IR versions up to 8 and opsets up to
  // 17; newer models get tessel's own validation only, which every model
  // gets after it.
  if (model.ir_version() < 3) {
    return InvalidArgument(where + " has IR version " + std::to_string(model.ir_version()) +
                           "; an ONNX model with opset imports has IR version 3 or later");
  }
  if (model.ir_version() <= kLibOnnxIrVersion && opset <= kLibOnnxOpset) {
    try {
      if (external_data) {
        onnx::checker::check_model(path.string());
      } else {
        onnx::checker::check_model(model);
      }
    } catch (const std::exception& e) {
      std::string what = e.what();
      // The checker's messages can span lines; the first says what is wrong.
      what = what.substr(0, what.find('\n'));
      return InvalidArgument(where + " failed the ONNX checker: " + what);
    }
  }
  TESSEL_RETURN_IF_ERROR(ValidateModel(model, opset, where));
  const onnx::GraphProto& g = model.graph();

  const fs::path base_dir = path.parent_path();
  auto graph = std::make_unique<ir::Graph>();
  graph->set_name(g.name());
  graph->set_opset_version(opset);

  std::set<std::string> initializer_names;
  for (int i = 0; i < g.initializer_size(); ++i) {
    const onnx::TensorProto& init = g.initializer(i);
    TESSEL_ASSIGN_OR_RETURN(Tensor t,
                            TensorFromProto(init, base_dir, "initializer '" + init.name() + "'"));
    graph->AddConstant(init.name(), std::move(t));
    initializer_names.insert(init.name());
    // The bytes now live in the graph: drop the proto's copy as we go, so
    // the weights are not held twice at the peak.
    std::string().swap(*model.mutable_graph()->mutable_initializer(i)->mutable_raw_data());
  }
  if (g.sparse_initializer_size() > 0) {
    return Unsupported(where + " has sparse initializers; not supported");
  }
  std::vector<std::string> input_names;
  for (const auto& in : g.input()) {
    // Before IR version 4, initializers were also listed as inputs.
    if (initializer_names.count(in.name())) continue;
    input_names.push_back(in.name());
    auto bound = options.constant_inputs.find(in.name());
    if (bound != options.constant_inputs.end()) {
      TESSEL_RETURN_IF_ERROR(CheckBoundValue(in, bound->second));
      graph->AddConstant(in.name(), bound->second.Clone());
      continue;
    }
    TESSEL_ASSIGN_OR_RETURN(auto type, InputType(in, options));
    graph->inputs().push_back(graph->AddValue(in.name(), type.first, type.second, true));
  }
  auto is_input = [&](const std::string& name) {
    return std::find(input_names.begin(), input_names.end(), name) != input_names.end();
  };
  for (const auto& [name, value] : options.constant_inputs) {
    if (!is_input(name)) {
      return InvalidArgument("--bind names '" + name + "', which is not a graph input (inputs: " +
                             JoinQuoted(input_names) + ")");
    }
    if (options.input_shapes.count(name)) {
      return InvalidArgument("--input-shape and --bind both name '" + name +
                             "'; a bound input takes the shape of its value");
    }
  }
  for (const auto& [name, shape] : options.input_shapes) {
    if (!is_input(name)) {
      return InvalidArgument("--input-shape names '" + name +
                             "', which is not a graph input (inputs: " + JoinQuoted(input_names) +
                             ")");
    }
  }

  std::set<std::string> node_names;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& np = g.node(i);
    std::string name = np.name();
    if (name.empty() || node_names.count(name)) name = np.op_type() + "_" + std::to_string(i);
    node_names.insert(name);
    std::vector<ir::Value*> inputs;
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      ir::Value* v = graph->FindValue(in);
      // The ONNX checker guarantees inputs are defined before use in a
      // topologically sorted graph; an unsorted one is sorted below.
      if (!v) v = graph->AddValue(in);
      inputs.push_back(v);
    }
    std::vector<ir::Value*> outputs;
    for (const std::string& out : np.output()) {
      if (out.empty()) {
        outputs.push_back(nullptr);
        continue;
      }
      ir::Value* v = graph->FindValue(out);
      if (v && (v->producer || v->is_constant())) {
        return InvalidArgument("value '" + out + "' is produced twice (node '" + name + "')");
      }
      outputs.push_back(v ? v : graph->AddValue(out));
    }
    ir::Node* node = graph->AddNode(np.op_type(), name, inputs, outputs);
    node->domain = np.domain() == "ai.onnx" ? "" : np.domain();
    for (const auto& a : np.attribute()) {
      TESSEL_ASSIGN_OR_RETURN(AttrValue v, ConvertAttribute(a, *node, base_dir));
      node->attrs.Set(a.name(), std::move(v));
    }
  }
  for (const auto& out : g.output()) {
    ir::Value* v = graph->FindValue(out.name());
    if (!v) return InvalidArgument("graph output '" + out.name() + "' is not produced by any node");
    graph->outputs().push_back(v);
  }
  for (const auto& v : graph->values()) {
    if (!v->producer && !v->is_constant() &&
        std::find(graph->inputs().begin(), graph->inputs().end(), v.get()) ==
            graph->inputs().end()) {
      return InvalidArgument("value '" + v->name + "' is used but never produced");
    }
  }
  TESSEL_RETURN_IF_ERROR(graph->SortTopologically());
  return graph;
}

}  // namespace tessel::onnx_io
