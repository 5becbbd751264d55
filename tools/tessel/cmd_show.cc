// tessel show MODEL: prints the compiled graph.
#include <iostream>

#include "common.h"
#include "ir/printer.h"

namespace tessel::cli {

void AddShowCommand(CLI::App& app, int& exit_code) {
  auto model = std::make_shared<std::string>();
  auto mopts = std::make_shared<ModelOptions>();
  CLI::App* cmd = app.add_subcommand("show", "Print a model's graph after compilation");
  cmd->add_option("model", *model, "Model file: .onnx or compiled")->required();
  AddModelOptions(*cmd, *mopts);
  cmd->callback([model, mopts, &exit_code] {
    auto run = [&]() -> Status {
      TESSEL_ASSIGN_OR_RETURN(CompileOptions copts, MakeCompileOptions(*mopts));
      TESSEL_ASSIGN_OR_RETURN(CompiledModel m, LoadOrCompile(*model, copts));
      ir::PrintGraph(*m.graph, std::cout);
      return Status::Ok();
    };
    Status s = run();
    exit_code = s.ok() ? 0 : ReportError(s);
  });
}

}  // namespace tessel::cli
