// tessel: the command-line tool. One file per subcommand (cmd_*.cc).
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <new>

#include "common.h"
#include "core/messages.h"
#include "core/process.h"
#if TESSEL_WITH_PERFECT_PLANNER
#include "memory/perfect/perfect_planner.h"
#endif
#include "target.h"

int main(int argc, char** argv) {
#if TESSEL_WITH_ONEDNN
  // oneDNN runs on libgomp, which reads its wait policy once, when it is
  // loaded (before main). Its default spins 300,000 times at every barrier
  // before sleeping; not spinning at all (the passive policy) pays a futex
  // wake-up at every parallel region, which made 2 threads slower than one.
  // About 100,000 spins (tens of microseconds) bridge the gaps between a
  // model's kernels without holding a core long when the machine is busy
  // (libgomp spins less by itself when threads outnumber free cores).
  // Measured on 2 cores, MobileNetV2 at 2 threads: passive 4.1 ms, 100,000
  // spins 2.0 ms (quiet) and 6.9 ms with another process spinning on one
  // core (passive: 3.7 ms; ONNX Runtime 7.5 ms there). Unless the user chose
  // a policy or a spin count, re-run this program with that spin count.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    setenv("GOMP_SPINCOUNT", "100000", 1);
    execv("/proc/self/exe", argv);  // returns only if it failed: run as we are
  }
#endif
  tessel::ConfigureAllocatorOnce();  // as the API does (core/process.h)
  tessel::cli::ApplyEnvironment();
#if TESSEL_WITH_PERFECT_PLANNER
  tessel::memory::RegisterPerfectPlanner();  // before the options list the planners
#endif
  CLI::App app{"tessel: an ahead-of-time compiler and runtime for ONNX inference"};
  app.require_subcommand(1);
  int exit_code = 0;
  tessel::cli::AddRunCommand(app, exit_code);
  tessel::cli::AddCheckCommand(app, exit_code);
  tessel::cli::AddShowCommand(app, exit_code);
  tessel::cli::AddCompileCommand(app, exit_code);
  tessel::cli::AddBenchCommand(app, exit_code);
  tessel::cli::AddConformanceCommand(app, exit_code);
  tessel::cli::AddPlanCommand(app, exit_code);
  tessel::cli::AddTuneCommand(app, exit_code);
  tessel::cli::AddTuneCacheCommand(app, exit_code);
  tessel::cli::AddInfoCommand(app, exit_code);
  // CLI11 would only say "a subcommand is required"; name the culprit.
  const auto subcommands = app.get_subcommands([](const CLI::App*) { return true; });
  bool known = argc < 2 || argv[1][0] == '-';
  std::string names;
  for (const CLI::App* sub : subcommands) {
    known = known || sub->get_name() == argv[1];
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  if (!known) {
    std::cerr << "tessel: error: unknown command '" << tessel::EscapeForMessage(argv[1])
              << "' (commands: " << names << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Usage errors are bad input: one line, exit code 2.
    std::cerr << "tessel: error: " << tessel::OneLine(e.what()) << " (see tessel --help)\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "tessel: error: out of memory\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessel: error: " << tessel::OneLine(e.what()) << "\n";
    return 2;
  }
  return exit_code;
}
