#include "targets/c/target.h"

#include "model/compiled_model.h"
#include "targets/c/emit.h"
#include "targets/c/op_calls.h"

namespace tessel::ctarget {

StatusOr<std::unique_ptr<CTarget>> CTarget::Create(const targets::TargetSpec& spec) {
  if (spec.name != "c") return InvalidArgument("not the c target: '" + spec.name + "'");
  if (!spec.options.empty()) {
    return InvalidArgument("target c has no options (got '" + spec.options.begin()->first + "')");
  }
  return std::make_unique<CTarget>();
}

StatusOr<targets::KernelDecisions> CTarget::SelectKernels(const ir::Graph& graph) const {
  targets::KernelDecisions decisions;
  decisions.nodes.resize(graph.nodes().size());
  const TensorExpr placeholder = [](const ir::Value* v) {
    return v ? "t" + std::to_string(v->id) : std::string("0");
  };
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const CallContext context{.node = *graph.nodes()[i],
                              .index = i,
                              .opset = graph.opset_version(),
                              .tensor = placeholder};
    TESSEL_ASSIGN_OR_RETURN(const NodeCall call, BuildCall(context));
    decisions.nodes[i].kernel = {.family = ir::KernelFamily::kC, .implementation = call.kernel};
  }
  decisions.values.resize(graph.values().size());
  return decisions;
}

StatusOr<std::unique_ptr<targets::Executable>> CTarget::Prepare(CompiledModel&) const {
  return Unsupported(
      "target c writes C sources and runs nothing in this process: tessel compile MODEL "
      "--target c -o DIR, then build DIR with a C compiler");
}

StatusOr<targets::EmitReport> CTarget::Emit(const CompiledModel& model,
                                            const targets::EmitRequest& request) const {
  if (model.target.name != "c") {
    return InvalidArgument("the model was compiled for target '" + model.target.ToString() +
                           "', not c: compile it with --target c");
  }
  return EmitC(model, request);
}

}  // namespace tessel::ctarget
