#include "onnx/validate.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "onnx/importer.h"

namespace tessel::onnx_io {

namespace {

struct AttrSchema {
  const char* name;
  int type;  // onnx::AttributeProto::AttributeType
  bool required;
};

struct Schema {
  const char* op_type;
  int since;
  int min_inputs, max_inputs, min_outputs, max_outputs;
  bool deprecated;
  bool types_only;  // only added element types to the version before it
  std::vector<AttrSchema> attrs;
};

#define TESSEL_ONNX_SCHEMA(name, since, min_in, max_in, min_out, max_out, deprecated, types_only, \
                           ...)                                                                   \
  Schema{name, since, min_in, max_in, min_out, max_out, deprecated, types_only, __VA_ARGS__},
const std::vector<Schema>& Schemas() {
  static const std::vector<Schema> schemas = {
#include "onnx/onnx_schemas.inc"
  };
  return schemas;
}
#undef TESSEL_ONNX_SCHEMA

// Every version of each op, oldest first.
const std::map<std::string_view, std::vector<const Schema*>>& ByOp() {
  static const auto by_op = [] {
    std::map<std::string_view, std::vector<const Schema*>> m;
    for (const Schema& s : Schemas()) m[s.op_type].push_back(&s);
    for (auto& [op, versions] : m) {
      std::sort(versions.begin(), versions.end(),
                [](const Schema* a, const Schema* b) { return a->since < b->since; });
    }
    return m;
  }();
  return by_op;
}

const Schema* Find(const std::string& op_type, int opset) {
  const auto it = ByOp().find(op_type);
  if (it == ByOp().end()) return nullptr;
  const Schema* found = nullptr;
  for (const Schema* s : it->second) {
    if (s->since <= opset) found = s;
  }
  return found;
}

const char* AttrTypeName(int type) {
  return onnx::AttributeProto::AttributeType_Name(
             static_cast<onnx::AttributeProto::AttributeType>(type))
      .c_str();
}

std::string Count(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// "Relu 'r' has 2 inputs; Relu-14 takes 1" when `count` is outside [lo, hi].
Status CheckCount(const std::string& where, const std::string& node, const std::string& schema,
                  const char* what, const char* verb, int count, int lo, int hi) {
  if (count >= lo && count <= hi) return Status::Ok();
  std::string range = std::to_string(lo);
  if (hi != lo) {
    range += " to " + (hi == std::numeric_limits<int>::max() ? std::string("any number")
                                                             : std::to_string(hi));
  }
  return InvalidArgument(where + ": " + node + " has " + Count(count, what) + "; " + schema + " " +
                         verb + " " + range);
}

Status CheckNode(const onnx::NodeProto& n, int index, int opset, const std::string& where) {
  const std::string node =
      n.op_type() + " '" + (n.name().empty() ? "#" + std::to_string(index) : n.name()) + "'";
  const Schema* s = Find(n.op_type(), opset);
  if (!s) {
    const auto it = ByOp().find(n.op_type());
    if (it == ByOp().end()) return Status::Ok();  // not an ONNX op: unsupported, said later
    return InvalidArgument(where + ": " + node + ": " + n.op_type() + " does not exist at opset " +
                           std::to_string(opset) + "; it was added at opset " +
                           std::to_string(it->second.front()->since));
  }
  const std::string schema = n.op_type() + "-" + std::to_string(s->since);
  if (s->deprecated) {
    return InvalidArgument(where + ": " + node + ": " + n.op_type() + " is deprecated at opset " +
                           std::to_string(opset));
  }
  TESSEL_RETURN_IF_ERROR(CheckCount(where, node, schema, "input", "takes", n.input_size(),
                                    s->min_inputs, s->max_inputs));
  TESSEL_RETURN_IF_ERROR(CheckCount(where, node, schema, "output", "gives", n.output_size(),
                                    s->min_outputs, s->max_outputs));
  std::set<std::string> seen;
  for (const auto& a : n.attribute()) {
    if (!seen.insert(a.name()).second) {
      return InvalidArgument(where + ": " + node + " sets attribute '" + a.name() + "' twice");
    }
    if (!a.ref_attr_name().empty()) {
      return InvalidArgument(where + ": " + node + " attribute '" + a.name() +
                             "' refers to a function attribute outside a function");
    }
    const auto it = std::find_if(s->attrs.begin(), s->attrs.end(),
                                 [&](const AttrSchema& x) { return a.name() == x.name; });
    if (it == s->attrs.end()) {
      return InvalidArgument(where + ": " + node + " has attribute '" + a.name() + "', which " +
                             schema + " does not define");
    }
    if (a.type() != it->type) {
      return InvalidArgument(where + ": " + node + " attribute '" + a.name() + "' is " +
                             AttrTypeName(a.type()) + "; " + schema + " takes " +
                             AttrTypeName(it->type));
    }
  }
  for (const AttrSchema& x : s->attrs) {
    if (x.required && !seen.count(x.name)) {
      return InvalidArgument(where + ": " + node + " lacks attribute '" + x.name + "', which " +
                             schema + " requires");
    }
  }
  return Status::Ok();
}

}  // namespace

static_assert(TESSEL_ONNX_NEWEST_OPSET == kMaxOpset,
              "kMaxOpset (importer.h) is the newest opset of onnx_schemas.inc");

int OnnxOpVersion(const std::string& op_type, int opset) {
  const Schema* s = Find(op_type, opset);
  return s ? s->since : 0;
}

bool OnlyTypesChangeBetween(const std::string& op_type, int from, int to, int* first_change) {
  const auto it = ByOp().find(op_type);
  if (it == ByOp().end()) return true;
  for (const Schema* s : it->second) {
    if (s->since > from && s->since <= to && !s->types_only) {
      if (first_change) *first_change = s->since;
      return false;
    }
  }
  return true;
}

Status ValidateModel(const onnx::ModelProto& model, int opset, const std::string& where) {
  const onnx::GraphProto& g = model.graph();
  // Every name a node may read, and where it comes from.
  std::set<std::string> defined;
  for (const auto& init : g.initializer()) {
    if (init.name().empty()) return InvalidArgument(where + " has an initializer without a name");
    if (!defined.insert(init.name()).second) {
      return InvalidArgument(where + " has two initializers named '" + init.name() + "'");
    }
  }
  std::set<std::string> inputs;
  for (const auto& in : g.input()) {
    if (in.name().empty()) return InvalidArgument(where + " has a graph input without a name");
    if (!inputs.insert(in.name()).second) {
      return InvalidArgument(where + " has two graph inputs named '" + in.name() + "'");
    }
    defined.insert(in.name());  // before IR version 4, initializers are inputs too
  }
  for (int i = 0; i < g.node_size(); ++i) {
    for (const std::string& out : g.node(i).output()) {
      if (out.empty()) continue;
      if (!defined.insert(out).second) {
        return InvalidArgument(where + ": value '" + out + "' is produced twice (node " +
                               g.node(i).op_type() + " '" + g.node(i).name() + "')");
      }
    }
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const std::string& in : n.input()) {
      if (!in.empty() && !defined.count(in)) {
        return InvalidArgument(where + ": " + n.op_type() + " '" + n.name() + "' reads '" + in +
                               "', which no initializer, graph input or node defines");
      }
    }
    if (n.domain().empty() || n.domain() == "ai.onnx") {
      TESSEL_RETURN_IF_ERROR(CheckNode(n, i, opset, where));
    }
  }
  for (const auto& out : g.output()) {
    if (!defined.count(out.name())) {
      return InvalidArgument(where + ": graph output '" + out.name() + "' is not produced");
    }
  }
  return Status::Ok();
}

}  // namespace tessel::onnx_io
