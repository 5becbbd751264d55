// tessel show MODEL: prints the compiled graph.
#include <iostream>

#include "common.h"
#include "ir/printer.h"
#include "target.h"

namespace tessel::cli {

void AddShowCommand(CLI::App& app, int& exit_code) {
  auto model = std::make_shared<std::string>();
  auto mopts = std::make_shared<ModelOptions>();
  auto summary = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("show", "Print a model's graph after compilation");
  cmd->add_option("model", *model, "Model file: .onnx or compiled")->required();
  cmd->add_flag("--summary", *summary, "Only the header, inputs, outputs and op counts");
  auto topts = std::make_shared<TargetOptions>();
  AddModelOptions(*cmd, *mopts);
  AddTargetOptions(*cmd, *topts, /*profile=*/false);
  cmd->callback([model, mopts, topts, summary, &exit_code] {
    auto run = [&]() -> Status {
      TESSEL_ASSIGN_OR_RETURN(CompilerOptions copts, MakeCompileOptions(*mopts));
      TESSEL_ASSIGN_OR_RETURN(LoadedModel lm, LoadModel(*model, *topts, copts));
      const CompiledModel& m = lm.model;
      std::cout << "target " << m.target.ToString() << "\n";
      if (*summary) {
        ir::PrintSummary(*m.graph, std::cout);
      } else {
        ir::PrintGraph(*m.graph, std::cout);
      }
      return Status::Ok();
    };
    Status s = run();
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
