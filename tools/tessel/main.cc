// tessel: the command-line tool. One file per subcommand (cmd_*.cc).
#include <iostream>
#include <new>

#include "common.h"

int main(int argc, char** argv) {
  CLI::App app{"tessel: an ahead-of-time compiler and runtime for ONNX inference"};
  app.require_subcommand(1);
  int exit_code = 0;
  tessel::cli::AddRunCommand(app, exit_code);
  tessel::cli::AddCheckCommand(app, exit_code);
  tessel::cli::AddShowCommand(app, exit_code);
  tessel::cli::AddCompileCommand(app, exit_code);
  tessel::cli::AddBenchCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors are bad input: one line, exit code 2.
    std::cerr << "tessel: error: " << e.what() << " (see tessel --help)\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "tessel: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessel: error: " << e.what() << "\n";
    return 2;
  }
  return exit_code;
}
