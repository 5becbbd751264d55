// Compiling for a target and running elsewhere, end to end through the CLI:
// a model compiled for one ISA runs with the outputs of the default, a model
// records its target, and a CPU without the recorded ISA refuses it with one
// line. (DNNL_MAX_CPU_ISA=AVX2 makes tessel treat this CPU as an AVX2 one,
// so every case runs on AVX-512 and AVX2 machines alike.)
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "cli_runner.h"
#include "model/model_file.h"
#include "onnx/tensor_io.h"
#include "onnx/test_data.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class Targets : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessel_targets_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Runs MODEL (seeded random inputs) with EXTRA options and returns output 0.
  Tensor RunOnce(const std::string& model, const std::string& extra, const std::string& out,
                 const std::string& env = "") {
    CliResult r = RunTessel("run " + model + " --output-dir " + path(out) + " " + extra, env);
    EXPECT_EQ(r.exit_code, 0) << model << " " << extra << ": " << r.err;
    StatusOr<Tensor> t = onnx_io::ReadTensorFile(dir_ / out / "output_0.pb");
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t.ok() ? *t : Tensor();
  }

  fs::path dir_;
};

TEST_F(Targets, A_model_compiled_for_avx2_runs_with_the_outputs_of_auto_and_of_the_reference) {
  const std::string avx2 = path("avx2.tsl"), native = path("auto.tsl");
  CliResult c =
      RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + avx2 + " --isa avx2");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("target   cpu isa=avx2"), std::string::npos) << c.out;
  c = RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + native);
  ASSERT_EQ(c.exit_code, 0) << c.err;

  const Tensor reference = RunOnce(TESSEL_DEMO_MODEL, "--target reference", "ref");
  const Tensor from_auto = RunOnce(native, "", "auto");
  const Tensor from_avx2 = RunOnce(avx2, "", "avx2");
  // As on an AVX2-only machine: the AVX2 model runs there too.
  const Tensor on_avx2_cpu = RunOnce(avx2, "", "avx2_cpu", "DNNL_MAX_CPU_ISA=AVX2 ");
  for (const Tensor* t : {&from_auto, &from_avx2, &on_avx2_cpu}) {
    const onnx_io::Comparison cmp = onnx_io::CompareTensors(*t, reference, 1e-4, 1e-5);
    EXPECT_TRUE(cmp.ok) << cmp.problem << " max abs error " << cmp.max_abs_error;
  }
  const onnx_io::Comparison same = onnx_io::CompareTensors(from_avx2, from_auto, 1e-4, 1e-5);
  EXPECT_TRUE(same.ok) << same.problem;
}

TEST_F(Targets, A_model_whose_isa_this_cpu_lacks_is_refused_with_one_line) {
  // A model compiled for AVX2, then marked as compiled for AVX-512 (as one
  // compiled on an AVX-512 machine would be), run as on an AVX2-only CPU.
  const std::string avx2 = path("avx2.tsl"), avx512 = path("avx512.tsl");
  CliResult c =
      RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + avx2 + " --isa avx2");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  StatusOr<CompiledModel> model = ReadCompiledModel(avx2);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->target.Option("isa"), "avx2");
  model->target.options["isa"] = "avx512";
  ASSERT_TRUE(WriteCompiledModel(*model, avx512).ok());
  ExpectRejected(
      RunTessel("run " + avx512, "DNNL_MAX_CPU_ISA=AVX2 "),
      {"avx512.tsl", "cpu isa=avx512", "this CPU cannot run isa avx512", "avx2 at most"});
  // Compiling for it there is refused the same way.
  ExpectRejected(RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + path("x.tsl") +
                               " --isa avx512",
                           "DNNL_MAX_CPU_ISA=AVX2 "),
                 {"this CPU cannot run isa avx512"});
  EXPECT_FALSE(fs::exists(path("x.tsl")));
}

TEST_F(Targets, A_compiled_model_runs_only_on_its_own_target_and_isa) {
  const std::string tsl = path("m.tsl");
  CliResult c =
      RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + tsl + " --isa avx2");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  ExpectRejected(RunTessel("run " + tsl + " --target reference"),
                 {"m.tsl", "compiled for target 'cpu isa=avx2", "--target reference"});
  ExpectRejected(RunTessel("run " + tsl + " --isa generic"), {"m.tsl", "--isa generic"});
  // Run-time options may change: the plan is checked against the kernels.
  CliResult r = RunTessel("run " + tsl + " --threads 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("threads=1"), std::string::npos) << r.out;
  // The model shows what it was compiled for, and each node its kernel.
  CliResult show = RunTessel("show " + tsl);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("target cpu isa=avx2"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("[onednn conv"), std::string::npos) << show.out;
}

TEST_F(Targets, The_reference_target_runs_with_its_own_kernels_and_plan) {
  CliResult c = RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + path("r.tsl") +
                          " --target reference --dump-after select-kernels");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("[reference]"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("[onednn"), std::string::npos) << c.out;
  CliResult r = RunTessel("run " + path("r.tsl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("target  reference"), std::string::npos) << r.out;
  ExpectRejected(
      RunTessel(std::string("run ") + TESSEL_DEMO_MODEL + " --target reference --isa avx2"),
      {"--isa is an option of --target cpu"});
}

// The c target writes sources, runs nothing in process, and refuses what it
// cannot write with one line and exit code 2, naming the culprit.
TEST_F(Targets, The_c_target_writes_sources_and_refuses_bad_requests_with_one_line) {
  CliResult ok = RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " --target c -o " +
                           path("gen") + " --name demo");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  for (const char* file : {"demo.h", "demo.c", "demo_constants.c"}) {
    EXPECT_TRUE(fs::exists(dir_ / "gen" / file)) << file;
  }
  EXPECT_FALSE(fs::exists(dir_ / "gen" / "demo_check.c"));
  const struct {
    std::string args, expected;
  } cases[] = {
      {std::string("compile ") + TESSEL_DEMO_MODEL + " --target c -o " + path("bad") +
           " --name Bad-Name",
       "--name 'Bad-Name': the model's name must be a C identifier"},
      {std::string("run ") + TESSEL_DEMO_MODEL + " --target c",
       "target c writes C sources and runs nothing in this process"},
      {std::string("compile ") + TESSEL_DEMO_MODEL + " --target c -o " + path("small") +
           " --workspace-pool name=sram,size=1KiB",
       "pool 'sram' is too small"},
      {std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + path("x.tsl") + " --name demo",
       "--name is an option of --target c"},
      {std::string("compile ") + TESSEL_DEMO_MODEL + " --target c -o " + path("ro") +
           " --constant-pool name=flash,access=rw",
       "--constant-pool 'name=flash,access=rw': access is implied"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    CliResult r = RunTessel(c.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

// --dump-after select-kernels shows every value's layout and storage scope,
// decided with the kernels, on every target: graph inputs and outputs,
// every node's outputs and every constant it reads.
TEST_F(Targets, Select_kernels_shows_a_typed_layout_and_scope_for_every_value) {
  const std::regex placement("<(plain|channels last|nChw16c) (global|texture|texture:weight)>");
  const std::regex constant_ref("@[^,)<]+(<[^>]*>)?");
  std::vector<std::string> names = {"reference", "cpu"};
#if TESSEL_WITH_OPENCL
  names.push_back("opencl");
#endif
  for (const std::string& target : names) {
    SCOPED_TRACE(target);
    CliResult c =
        RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + path(target + ".tsl") +
                  " --target " + target + " --dump-after select-kernels");
    ASSERT_EQ(c.exit_code, 0) << c.err;
    std::istringstream dump(c.out);
    int nodes = 0, values = 0;
    for (std::string line; std::getline(dump, line);) {
      if (line.rfind("input ", 0) == 0 || line.rfind("output ", 0) == 0) {
        EXPECT_TRUE(std::regex_search(line, placement)) << line;
        ++values;
      } else if (line.find(" = ") != std::string::npos) {
        ++nodes;
        const std::string outs = line.substr(0, line.find(" = "));
        const std::string types = line.substr(line.rfind(" : "));
        const auto count = [&](const std::string& text, const std::regex& re) {
          return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                               std::sregex_iterator());
        };
        EXPECT_EQ(count(types, placement), count(outs, std::regex("%"))) << line;
        for (auto it = std::sregex_iterator(line.begin(), line.end(), constant_ref);
             it != std::sregex_iterator(); ++it) {
          EXPECT_TRUE((*it)[1].matched) << "constant without a placement: " << it->str();
        }
        values += static_cast<int>(count(types, placement));
        EXPECT_NE(line.find(" ["), std::string::npos) << "no kernel: " << line;
      }
    }
    EXPECT_GT(nodes, 10) << c.out;
    EXPECT_GT(values, nodes) << c.out;
  }
}

TEST_F(Targets, Compiling_for_opencl_needs_no_device_running_does) {
  const std::string tsl = path("ocl.tsl");
  CliResult c = RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + tsl +
                          " --target opencl --device no-such-gpu-xyz");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("target   opencl device=no-such-gpu-xyz"), std::string::npos) << c.out;
  ExpectRejected(RunTessel("run " + tsl), {"ocl.tsl", "no-such-gpu-xyz"});
}

}  // namespace
}  // namespace tessel::testing
