// tessel conformance DIR...: runs every test directory (model.onnx +
// test_data_set_N/) below the given paths through import and the reference
// executor, and sorts each into exactly one outcome:
//
//   passed   every output of every data set matches (dtype, shape, values)
//   failed   ran but gave wrong numbers or shapes, failed to run, or tessel
//            rejected a valid model with an error other than Unsupported
//   skipped  rejected at compile time as unsupported (op, dtype, attribute,
//            sequence/optional/string types), with the reason
//
// Prints a per-op table, the failed tests with one-line reasons, and last the
// line "N passed, N failed, N skipped". Exit 0: nothing failed; 1: a test
// failed; 2: bad input (a path that does not exist, a bad regex, no tests).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "common.h"
#include "core/file_io.h"
#include "core/messages.h"
#include "onnx/importer.h"
#include "onnx/tensor_io.h"
#include "onnx/test_data.h"
#include "target.h"
#include "targets/registry.h"

namespace tessel::cli {

namespace {

namespace fs = std::filesystem;

struct ConformanceArgs {
  std::vector<std::string> paths;
  double rtol = 1e-3;  // the ONNX backend test defaults
  double atol = 1e-7;
  std::string filter;
  std::string json;
  std::string markdown;
  std::string suite_faults;  // file: SUITE/NAME<TAB>why the test itself is wrong
  std::string baseline;      // --baseline: a --json report of another target
  TargetOptions target_options;
  const targets::Target* target = nullptr;  // made from target_options
};

enum class Outcome { kPassed, kFailed, kSkipped };

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kSkipped:
      return "skipped";
  }
  return "?";
}

struct TestCase {
  fs::path dir;
  std::string suite;  // the parent folder: node, pytorch-converted, ...
  std::string name;   // the test folder: test_abs
  std::string id() const { return suite + "/" + name; }
};

struct TestResult {
  TestCase test;
  std::string op;  // the row of the per-op table
  Outcome outcome = Outcome::kFailed;
  std::string reason;
  std::vector<std::string> bound_inputs;  // inputs bound to constants to compile
  double ms = 0;
};

// Node tests are grouped by the op they test; the model-level suites
// (pytorch-*, simple) test no single op, so their suite is their group.
bool IsNodeSuite(const std::string& suite) { return suite.rfind("node", 0) == 0; }

// The release a suite comes from: "node-1.23" (written from the onnx wheel's
// case definitions by tests/conformance/generate_node_tests.py) is 1.23; the
// Debian package's folders (node, pytorch-*, simple) are its own release.
std::string ReleaseOf(const std::string& suite) {
  return suite.rfind("node-", 0) == 0 ? "onnx " + suite.substr(5) : "libonnx-testdata";
}

std::string OpOf(const TestCase& test) {
  if (!IsNodeSuite(test.suite)) return test.suite;
  auto ops = onnx_io::ReadNodeOpTypes(test.dir / "model.onnx");
  if (!ops.ok() || ops->empty()) return "(unreadable)";
  for (const std::string& op : *ops) {
    if (op != "Constant") return op;
  }
  return ops->front();
}

// Every folder holding a model.onnx at or below `path`, without descending
// into a test folder (its data sets are not tests).
Status FindTests(const fs::path& path, std::vector<TestCase>& tests) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound("'" + path.string() + "' does not exist");
  if (!fs::is_directory(path, ec))
    return InvalidArgument("'" + path.string() + "' is not a directory");
  auto add = [&](const fs::path& dir) {
    const fs::path canonical = fs::weakly_canonical(dir, ec);
    tests.push_back(
        {canonical, canonical.parent_path().filename().string(), canonical.filename().string()});
  };
  if (fs::exists(path / "model.onnx", ec)) {
    add(path);
    return Status::Ok();
  }
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Internal("cannot list '" + path.string() + "': " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Internal("cannot list '" + path.string() + "': " + ec.message());
    if (!it->is_directory(ec)) continue;
    if (fs::exists(it->path() / "model.onnx", ec)) {
      add(it->path());
      it.disable_recursion_pending();
    }
  }
  return Status::Ok();
}

// The ONNX test data store bfloat16 tensors as uint16 (numpy has no
// bfloat16): read those bits as the bfloat16 the model declares.
Tensor AsDeclaredDType(const Tensor& t, DType declared) {
  if (t.dtype() != DType::kUInt16 || declared != DType::kBFloat16) return t;
  Tensor bf(DType::kBFloat16, t.shape());
  std::memcpy(bf.raw_data(), t.raw_data(), t.size_bytes());
  return bf;
}

// Compares one data set's outputs; an empty string means they all match.
std::string CompareOutputs(const ir::Graph& graph, const std::vector<Tensor>& actual,
                           const onnx_io::TestDataSet& set, const ConformanceArgs& args) {
  const std::string where = set.dir.filename().string();
  if (actual.size() != set.outputs.size()) {
    return where + ": the model has " + std::to_string(actual.size()) + " outputs; expected " +
           std::to_string(set.outputs.size());
  }
  for (size_t k = 0; k < actual.size(); ++k) {
    const Tensor expected = AsDeclaredDType(set.outputs[k].tensor, graph.outputs()[k]->dtype);
    const auto c = onnx_io::CompareTensors(actual[k], expected, args.rtol, args.atol);
    if (c.ok) continue;
    const std::string out = where + " output '" + graph.outputs()[k]->name + "': ";
    if (!c.problem.empty()) return out + c.problem;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%lld of %lld elements off, max abs err %.3g, max rel err %.3g",
                  static_cast<long long>(c.mismatches),
                  static_cast<long long>(actual[k].num_elements()), c.max_abs_error,
                  c.max_rel_error);
    return out + buf;
  }
  return "";
}

// A data set's inputs in graph-input order, typed as the graph declares them.
StatusOr<std::vector<Tensor>> GraphInputs(const ir::Graph& graph, const onnx_io::TestDataSet& set) {
  TESSEL_ASSIGN_OR_RETURN(std::vector<Tensor> inputs,
                          OrderInputs(graph, set.inputs, set.dir.filename().string()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = AsDeclaredDType(inputs[i], graph.inputs()[i]->dtype);
  }
  return inputs;
}

void Fail(TestResult& r, std::string reason) {
  r.outcome = Outcome::kFailed;
  r.reason = OneLine(std::move(reason));
}

void Skip(TestResult& r, std::string reason) {
  r.outcome = Outcome::kSkipped;
  r.reason = OneLine(std::move(reason));
}

// Sorts a compile error: Unsupported is a skip; anything else means tessel
// rejected a model of the official suite, which is a failure.
void CompileFailed(TestResult& r, const Status& s) {
  if (s.code() == StatusCode::kUnsupported) {
    Skip(r, s.message());
  } else {
    Fail(r, std::string("compile: ") + StatusCodeName(s.code()) + ": " + s.message());
  }
}

// Shape inference asks for a value it needs at compile time (tessel compiles
// static shapes).
bool NeedsCompileTimeValue(const Status& s) {
  return s.code() == StatusCode::kUnsupported &&
         s.message().find("known at compile time") != std::string::npos;
}

// Runs every data set on one compiled model; false (with the reason) on the
// first failure.
bool RunDataSets(CompiledModel& model, const std::vector<onnx_io::TestDataSet>& sets,
                 const ConformanceArgs& args, TestResult& r) {
  StatusOr<std::unique_ptr<targets::Executable>> prepared = Prepare(model, *args.target);
  if (!prepared.ok()) {
    CompileFailed(r, prepared.status());
    return false;
  }
  targets::Executable& executor = **prepared;
  for (const auto& set : sets) {
    auto inputs = GraphInputs(*model.graph, set);
    if (!inputs.ok()) {
      Fail(r, inputs.status().message());
      return false;
    }
    auto outputs = executor.Run(*inputs);
    if (!outputs.ok()) {
      Fail(r, "run " + set.dir.filename().string() + ": " + outputs.status().message());
      return false;
    }
    const std::string mismatch = CompareOutputs(*model.graph, *outputs, set, args);
    if (!mismatch.empty()) {
      Fail(r, mismatch);
      return false;
    }
  }
  return true;
}

bool IsIntegerOrBool(DType t) { return !IsFloat(t) && t != DType::kUndefined; }

// The model needs some inputs at compile time (they decide output shapes), so
// binds them to each data set's values as a user would with --bind: first
// every integer and boolean input, then any other input that compilation
// still names as needed, and compiles once per data set.
void RunWithBindings(const TestCase& test, const std::vector<onnx_io::TestDataSet>& sets,
                     const Status& first_error, const ConformanceArgs& args, TestResult& r) {
  const fs::path model_path = test.dir / "model.onnx";
  auto unbound = onnx_io::ImportModel(model_path);
  if (!unbound.ok()) {
    CompileFailed(r, unbound.status());
    return;
  }
  const auto& graph_inputs = (*unbound)->inputs();
  for (const auto& set : sets) {
    auto values = GraphInputs(**unbound, set);
    if (!values.ok()) {
      Fail(r, values.status().message());
      return;
    }
    CompilerOptions copts;
    std::vector<bool> bound(graph_inputs.size(), false);
    r.bound_inputs.clear();
    auto bind = [&](size_t i) {
      bound[i] = true;
      copts.import.constant_inputs[graph_inputs[i]->name] = (*values)[i];
      r.bound_inputs.push_back(graph_inputs[i]->name);
    };
    for (size_t i = 0; i < graph_inputs.size(); ++i) {
      if (IsIntegerOrBool(graph_inputs[i]->dtype)) bind(i);
    }
    Status error = first_error;
    StatusOr<CompiledModel> model = error;
    for (bool first = true;; first = false) {
      const size_t before = r.bound_inputs.size();
      for (size_t i = 0; i < graph_inputs.size(); ++i) {
        if (!bound[i] &&
            error.message().find("('" + graph_inputs[i]->name + "')") != std::string::npos) {
          bind(i);
        }
      }
      if (r.bound_inputs.empty() || (!first && r.bound_inputs.size() == before)) {
        r.bound_inputs.clear();
        Skip(r, error.message());
        return;
      }
      model = Compile(model_path, *args.target, copts);
      if (model.ok()) break;
      if (!NeedsCompileTimeValue(model.status())) {
        CompileFailed(r, model.status());
        return;
      }
      error = model.status();
    }
    onnx_io::TestDataSet runtime{set.dir, {}, set.outputs};
    for (size_t i = 0; i < graph_inputs.size(); ++i) {
      if (!bound[i]) runtime.inputs.push_back({graph_inputs[i]->name, (*values)[i]});
    }
    if (!RunDataSets(*model, {runtime}, args, r)) return;
  }
  r.outcome = Outcome::kPassed;
}

void RunTest(const TestCase& test, const ConformanceArgs& args, TestResult& r) {
  const fs::path model_path = test.dir / "model.onnx";
  auto model = Compile(model_path, *args.target);
  const bool needs_binding = !model.ok() && NeedsCompileTimeValue(model.status());
  if (!model.ok() && !needs_binding) {
    CompileFailed(r, model.status());
    return;
  }
  auto sets = onnx_io::ReadTestDataSets(test.dir);
  if (!sets.ok()) {
    if (sets.status().code() == StatusCode::kUnsupported) {
      Skip(r, sets.status().message());
    } else {
      Fail(r, "test data: " + sets.status().message());
    }
    return;
  }
  if (sets->empty()) {
    Fail(r, "no test_data_set_* folder");
    return;
  }
  if (needs_binding) {
    RunWithBindings(test, *sets, model.status(), args, r);
    return;
  }
  if (RunDataSets(*model, *sets, args, r)) r.outcome = Outcome::kPassed;
}

// A test never ends the run: exceptions become failures naming what was thrown.
TestResult RunTestSafely(const TestCase& test, const ConformanceArgs& args) {
  TestResult r;
  r.test = test;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    r.op = OpOf(test);
    RunTest(test, args, r);
  } catch (const std::exception& e) {
    r.bound_inputs.clear();
    Fail(r, std::string("exception: ") + e.what());
  } catch (...) {
    r.bound_inputs.clear();
    Fail(r, "exception of unknown type");
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

// "[=====>    ] 412/1100 test_conv_..." on one line, redrawn in place.
void DrawProgress(size_t done, size_t total, const std::string& name) {
  constexpr size_t kWidth = 30;
  const size_t filled = total ? done * kWidth / total : kWidth;
  std::string bar(kWidth, ' ');
  std::fill(bar.begin(), bar.begin() + static_cast<std::ptrdiff_t>(filled), '=');
  if (filled < kWidth) bar[filled] = '>';
  std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %s", bar.c_str(), done, total, name.c_str());
  std::fflush(stderr);
}

struct Counts {
  int passed = 0, failed = 0, skipped = 0;
  void Add(Outcome o) {
    passed += o == Outcome::kPassed;
    failed += o == Outcome::kFailed;
    skipped += o == Outcome::kSkipped;
  }
};

struct Summary {
  std::map<std::string, Counts> by_op;
  std::map<std::string, std::map<std::string, Counts>> by_op_release;  // op -> release
  std::set<std::string> releases;
  std::map<std::string, Counts> by_suite;
  Counts total;
  int bound = 0;
  // With --baseline: the baseline's target, and every test it passes that
  // this run does not ("SUITE/NAME (op): outcome: reason").
  std::string baseline_target;
  std::vector<std::string> behind_baseline;
};

Summary Tally(const std::vector<TestResult>& results) {
  Summary s;
  for (const TestResult& r : results) {
    s.by_op[r.op].Add(r.outcome);
    s.by_op_release[r.op][ReleaseOf(r.test.suite)].Add(r.outcome);
    s.releases.insert(ReleaseOf(r.test.suite));
    s.by_suite[r.test.suite].Add(r.outcome);
    s.total.Add(r.outcome);
    s.bound += r.outcome == Outcome::kPassed && !r.bound_inputs.empty();
  }
  return s;
}

std::string TotalsLine(const Counts& c) {
  return std::to_string(c.passed) + " passed, " + std::to_string(c.failed) + " failed, " +
         std::to_string(c.skipped) + " skipped";
}

// The command line that reproduces a report, for the JSON and Markdown files.
std::string CommandLine(const ConformanceArgs& args) {
  std::string cmd = "tessel conformance";
  for (const std::string& p : args.paths) cmd += " " + p;
  if (args.rtol != ConformanceArgs{}.rtol) cmd += " --rtol " + std::to_string(args.rtol);
  if (args.atol != ConformanceArgs{}.atol) cmd += " --atol " + std::to_string(args.atol);
  if (!args.filter.empty()) cmd += " --filter '" + args.filter + "'";
  if (!args.suite_faults.empty()) cmd += " --suite-faults " + args.suite_faults;
  if (!args.target_options.target.empty()) cmd += " --target " + args.target_options.target;
  if (!args.target_options.device.empty()) cmd += " --device " + args.target_options.device;
  if (!args.target_options.isa.empty()) cmd += " --isa " + args.target_options.isa;
  if (!args.baseline.empty()) cmd += " --baseline " + args.baseline;
  return cmd;
}

std::string TodayUtc() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

void PrintText(const std::vector<TestResult>& results, const Summary& s) {
  size_t width = 2;
  for (const auto& [op, c] : s.by_op) width = std::max(width, op.size());
  const int w = static_cast<int>(width);
  std::printf("%-*s  %6s  %6s  %7s\n", w, "op", "passed", "failed", "skipped");
  for (const auto& [op, c] : s.by_op) {
    std::printf("%-*s  %6d  %6d  %7d\n", w, op.c_str(), c.passed, c.failed, c.skipped);
  }
  std::printf("\n");
  for (const auto& [suite, c] : s.by_suite) {
    std::printf("suite %s: %s\n", suite.c_str(), TotalsLine(c).c_str());
  }
  if (s.total.failed > 0) {
    std::printf("\nfailed tests:\n");
    for (const TestResult& r : results) {
      if (r.outcome != Outcome::kFailed) continue;
      std::printf("  %s [%s]: %s\n", r.test.id().c_str(), r.op.c_str(), r.reason.c_str());
    }
  }
  if (!s.baseline_target.empty()) {
    std::printf("\n%zu test(s) pass on %s but not here%s\n", s.behind_baseline.size(),
                s.baseline_target.c_str(), s.behind_baseline.empty() ? "" : ":");
    for (const std::string& line : s.behind_baseline) std::printf("  %s\n", line.c_str());
  }
  std::printf("\n%d passed test(s) had inputs bound at compile time\n", s.bound);
  std::printf("%s\n", TotalsLine(s.total).c_str());
}

Status WriteJson(const std::string& path, const ConformanceArgs& args,
                 const std::vector<TestResult>& results, const Summary& s) {
  nlohmann::json j;
  j["command"] = CommandLine(args);
  j["target"] = args.target->spec().ToString();
  j["rtol"] = args.rtol;
  j["atol"] = args.atol;
  j["totals"] = {
      {"passed", s.total.passed}, {"failed", s.total.failed}, {"skipped", s.total.skipped}};
  j["tests"] = nlohmann::json::array();
  for (const TestResult& r : results) {
    j["tests"].push_back({{"name", r.test.name},
                          {"suite", r.test.suite},
                          {"path", r.test.dir.string()},
                          {"op", r.op},
                          {"outcome", OutcomeName(r.outcome)},
                          {"reason", r.reason},
                          {"needed_binding", !r.bound_inputs.empty()},
                          {"bound_inputs", r.bound_inputs},
                          {"ms", r.ms}});
  }
  return WriteFileAtomically(path, j.dump(2) + "\n");
}

// A skip reason with what varies from test to test (quoted names and
// paths, numbers) blanked, so the same reason groups.
std::string GroupingKey(const std::string& reason) {
  const auto alpha = [&](size_t i) {
    return i < reason.size() && std::isalpha(static_cast<unsigned char>(reason[i]));
  };
  std::string key;
  bool quoted = false;
  for (size_t i = 0; i < reason.size(); ++i) {
    const char c = reason[i];
    if (c == '\'') {
      quoted = !quoted;
      key += c;
    } else if (!quoted && std::isdigit(static_cast<unsigned char>(c))) {
      // A number on its own varies per test; digits within a word (a type
      // name like FLOAT8E4M3FN) do not.
      size_t end = i;
      while (end < reason.size() && std::isdigit(static_cast<unsigned char>(reason[end]))) ++end;
      const bool word = (i > 0 && alpha(i - 1)) || alpha(end);
      key += word ? reason.substr(i, end - i) : "#";
      i = end - 1;
    } else if (!quoted) {
      key += c;
    }
  }
  return key;
}

Status WriteMarkdown(const std::string& path, const ConformanceArgs& args,
                     const std::vector<TestResult>& results, const Summary& s) {
  std::ostringstream md;
  md << "# ONNX conformance: target " << args.target->spec().name << "\n\n"
     << "Outcome of every test of the ONNX backend test suites through import,\n"
     << "compilation and target `" << args.target->spec().ToString()
     << "`: Debian's package `libonnx-testdata` (ONNX 1.12: node,\n"
     << "pytorch-converted, pytorch-operator, simple) and, as suite `node-1.23`, the\n"
     << "node tests of the onnx 1.23 wheel, written to disk by\n"
     << "`tests/conformance/generate_node_tests.py`.\n"
     << "Generated on " << TodayUtc() << " by `scripts/conformance-report.sh`, which runs:\n\n"
     << "```sh\n"
     << CommandLine(args) << "\n```\n\n"
     << "- **passed**: every output of every data set matches in dtype, shape and values\n"
     << "  (rtol " << args.rtol << ", atol " << args.atol << ").\n"
     << "- **failed**: wrong numbers or shapes, a run error, or a valid model rejected\n"
     << "  with an error other than *unsupported*.\n"
     << "- **skipped**: rejected at compile time as unsupported (op, dtype, attribute,\n"
     << "  sequence/optional/string types).\n\n"
     << "Inputs that decide output shapes are bound to their test values at compile time\n"
     << "where the model feeds them as graph inputs (`--bind`); " << s.bound
     << " passed tests needed that.\n\n"
     << "## Totals\n\n| suite | passed | failed | skipped |\n|---|---:|---:|---:|\n";
  for (const auto& [suite, c] : s.by_suite) {
    md << "| " << suite << " | " << c.passed << " | " << c.failed << " | " << c.skipped << " |\n";
  }
  md << "| **all** | **" << s.total.passed << "** | **" << s.total.failed << "** | **"
     << s.total.skipped << "** |\n\n"
     << "## Per op\n\nNode tests are grouped by the op they test; the model suites by suite.\n"
     << "Each release's suite: passed / failed / skipped.\n\n| op |";
  for (const std::string& release : s.releases) md << " " << release << " |";
  md << "\n|---|";
  for (size_t i = 0; i < s.releases.size(); ++i) md << "---:|";
  md << "\n";
  for (const auto& [op, by_release] : s.by_op_release) {
    md << "| " << op << " |";
    for (const std::string& release : s.releases) {
      const auto it = by_release.find(release);
      if (it == by_release.end()) {
        md << " |";
      } else {
        md << " " << it->second.passed << " / " << it->second.failed << " / " << it->second.skipped
           << " |";
      }
    }
    md << "\n";
  }
  // Every skip with its reason, grouped: names and paths in the reason vary
  // per test, so they are left out of the grouping key.
  std::map<std::string, std::vector<const TestResult*>> skips;
  for (const TestResult& r : results) {
    if (r.outcome != Outcome::kSkipped || r.reason.rfind("fault in the suite's test", 0) == 0) {
      continue;
    }
    skips[GroupingKey(r.reason)].push_back(&r);
  }
  if (!skips.empty()) {
    md << "\n## Skipped, by reason\n\nWhat tessel does not support, with how many tests each "
          "reason skips and the tests.\n\n";
    std::vector<std::pair<std::string, std::vector<const TestResult*>>> sorted(skips.begin(),
                                                                               skips.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second.size() > b.second.size();
    });
    for (const auto& [key, tests] : sorted) {
      std::string reason = tests.front()->reason;
      std::replace(reason.begin(), reason.end(), '|', '/');
      md << "- " << tests.size() << " × " << reason << ":";
      for (const TestResult* t : tests) md << " `" << t->test.id() << "`";
      md << "\n";
    }
  }
  bool any_fault = false;
  for (const TestResult& r : results) {
    if (r.outcome != Outcome::kSkipped || r.reason.rfind("fault in the suite's test", 0) != 0) {
      continue;
    }
    if (!any_fault) {
      md << "\n## Skipped because the suite's own data are wrong\n\n"
         << "Listed in `--suite-faults`; they run, and would count as passed if they matched.\n\n";
      any_fault = true;
    }
    std::string reason = r.reason;
    std::replace(reason.begin(), reason.end(), '|', '/');
    md << "- `" << r.test.id() << "` (" << r.op << "): " << reason << "\n";
  }
  if (s.total.failed > 0) {
    md << "\n## Failed tests\n\n";
    for (const TestResult& r : results) {
      if (r.outcome != Outcome::kFailed) continue;
      std::string reason = r.reason;
      std::replace(reason.begin(), reason.end(), '|', '/');
      md << "- `" << r.test.id() << "` (" << r.op << "): " << reason << "\n";
    }
  }
  if (!s.baseline_target.empty()) {
    md << "\n## Passed on `" << s.baseline_target << "`, not here\n\n"
       << s.behind_baseline.size() << " test(s).\n\n";
    for (std::string line : s.behind_baseline) {
      std::replace(line.begin(), line.end(), '|', '/');
      md << "- " << line << "\n";
    }
  }
  return WriteFileAtomically(path, md.str());
}

// Tests whose data contradict their own model or the current ONNX spec, by
// SUITE/NAME. Such a test still runs; only a wrong-numbers or wrong-shape
// failure of it becomes a skip that cites the fault (a crash or a rejected
// model still fails), and one that passes is reported so the entry goes.
StatusOr<std::map<std::string, std::string>> ReadSuiteFaults(const std::string& path) {
  std::map<std::string, std::string> faults;
  if (path.empty()) return faults;
  std::ifstream in(path);
  if (!in) return NotFound("--suite-faults '" + path + "': cannot be read");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos || tab == 0 || tab + 1 == line.size()) {
      return InvalidArgument("--suite-faults '" + path + "' line " + std::to_string(number) +
                             ": expected SUITE/NAME<TAB>reason");
    }
    faults[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return faults;
}

void ApplySuiteFaults(const std::map<std::string, std::string>& faults,
                      std::vector<TestResult>& results) {
  for (TestResult& r : results) {
    auto it = faults.find(r.test.id());
    if (it == faults.end()) continue;
    if (r.outcome == Outcome::kPassed) {
      std::fprintf(stderr, "note: %s is listed in --suite-faults but passed; remove it there\n",
                   r.test.id().c_str());
    } else if (r.outcome == Outcome::kFailed && r.reason.rfind("exception", 0) != 0 &&
               r.reason.rfind("compile:", 0) != 0) {
      Skip(r, "fault in the suite's test: " + it->second + " (tessel: " + r.reason + ")");
    }
  }
}

// Every test the --baseline report passes that `results` does not.
Status CompareWithBaseline(const std::string& path, const std::vector<TestResult>& results,
                           Summary& s) {
  std::ifstream in(path);
  if (!in) return NotFound("--baseline '" + path + "' cannot be read");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("tests") || !j["tests"].is_array()) {
    return InvalidArgument("--baseline '" + path +
                           "' is not a report of tessel conformance --json");
  }
  s.baseline_target = j.value("target", std::string("the baseline"));
  std::set<std::string> passed;
  for (const auto& t : j["tests"]) {
    if (t.is_object() && t.value("outcome", "") == "passed") {
      passed.insert(t.value("suite", "") + "/" + t.value("name", ""));
    }
  }
  for (const TestResult& r : results) {
    if (r.outcome == Outcome::kPassed || !passed.count(r.test.id())) continue;
    s.behind_baseline.push_back("`" + r.test.id() + "` (" + r.op + "): " + OutcomeName(r.outcome) +
                                ": " + r.reason);
  }
  return Status::Ok();
}

StatusOr<bool> Conformance(ConformanceArgs& args) {
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<targets::Target> target,
                          MakeRequestedTarget(args.target_options));
  args.target = target.get();
  TESSEL_ASSIGN_OR_RETURN(const auto faults, ReadSuiteFaults(args.suite_faults));
  std::vector<TestCase> tests;
  for (const std::string& p : args.paths) TESSEL_RETURN_IF_ERROR(FindTests(p, tests));
  std::sort(tests.begin(), tests.end(),
            [](const TestCase& a, const TestCase& b) { return a.dir < b.dir; });
  tests.erase(std::unique(tests.begin(), tests.end(),
                          [](const TestCase& a, const TestCase& b) { return a.dir == b.dir; }),
              tests.end());
  if (!args.filter.empty()) {
    std::regex re;
    try {
      re = std::regex(args.filter);
    } catch (const std::regex_error& e) {
      return InvalidArgument("--filter '" + args.filter + "': not a valid regular expression (" +
                             e.what() + ")");
    }
    std::erase_if(tests, [&](const TestCase& t) { return !std::regex_search(t.id(), re); });
  }
  if (tests.empty()) {
    std::string where;
    for (const std::string& p : args.paths) where += (where.empty() ? "'" : ", '") + p + "'";
    return NotFound("no test folder (model.onnx with test_data_set_N/) under " + where +
                    (args.filter.empty() ? "" : " matching --filter '" + args.filter + "'"));
  }

  const bool progress = ::isatty(STDERR_FILENO) == 1;
  std::vector<TestResult> results;
  results.reserve(tests.size());
  for (size_t i = 0; i < tests.size(); ++i) {
    if (progress) DrawProgress(i, tests.size(), tests[i].name);
    results.push_back(RunTestSafely(tests[i], args));
  }
  if (progress) std::fprintf(stderr, "\r\033[K");
  ApplySuiteFaults(faults, results);

  Summary summary = Tally(results);
  if (!args.baseline.empty()) {
    TESSEL_RETURN_IF_ERROR(CompareWithBaseline(args.baseline, results, summary));
  }
  if (!args.json.empty()) TESSEL_RETURN_IF_ERROR(WriteJson(args.json, args, results, summary));
  if (!args.markdown.empty()) {
    TESSEL_RETURN_IF_ERROR(WriteMarkdown(args.markdown, args, results, summary));
  }
  PrintText(results, summary);
  return summary.total.failed == 0;
}

}  // namespace

void AddConformanceCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "conformance",
      "Run every ONNX backend test folder below the given paths and sort each into "
      "passed, failed or skipped");
  cmd->add_option("paths", args->paths,
                  "Folders holding test folders (model.onnx + test_data_set_N/)")
      ->required();
  cmd->add_option("--rtol", args->rtol, "Relative tolerance")->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", args->atol, "Absolute tolerance")->check(CLI::NonNegativeNumber);
  cmd->add_option("--filter", args->filter,
                  "Run only tests whose SUITE/NAME (e.g. node/test_abs) matches this regex");
  cmd->add_option("--json", args->json, "Write every test's outcome and reason to this file");
  cmd->add_option("--markdown", args->markdown,
                  "Write the outcome tables as Markdown to this file (docs/conformance.md)");
  cmd->add_option("--suite-faults", args->suite_faults,
                  "File of tests whose own data are wrong: SUITE/NAME<TAB>reason per line "
                  "(tests/conformance/suite_faults.txt)");
  cmd->add_option("--baseline", args->baseline,
                  "A --json report of another target (e.g. reference): list every test it "
                  "passes that this run does not, with the reason");
  AddTargetOptions(*cmd, args->target_options, /*profile=*/false);
  cmd->callback([args, &exit_code] {
    StatusOr<bool> ok = Conformance(*args);
    exit_code = !ok.ok() ? ReportError(ok.status()) : (*ok ? 0 : 1);
  });
}

}  // namespace tessel::cli
