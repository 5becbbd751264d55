// Memory planning end to end: the shared planning instances, the shared
// models (plans near the lower bound, the executor's outputs unchanged by the
// plan), and `tessel plan` on the command line, bad input included.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_runner.h"
#include "compiler/compile.h"
#include "core/file_io.h"
#include "memory/instance_csv.h"
#include "memory/lower_bound.h"
#include "memory/planner.h"
#if TESSEL_WITH_PERFECT_PLANNER
#include "memory/perfect/perfect_planner.h"
#endif
#include "memory/verifier.h"
#include "model/model_file.h"
#include "onnx/model_builder.h"
#include "onnx/tensor_io.h"
#include "onnx/test_data.h"
#include "targets/cpu/executor.h"
#include "targets/testing.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kPlanning = fs::path(TESSEL_SHARED_DIR) / "planning";
const fs::path kModels = fs::path(TESSEL_SHARED_DIR) / "models";

std::vector<std::string> SharedInstances() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kPlanning, ec)) {
    if (e.path().extension() == ".csv") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names.empty()) names.push_back("absent");
  return names;
}

// `perfect` is opt-in (-DTESSEL_WITH_PERFECT_PLANNER=ON): registered here as
// the CLI registers it, so that `--algo all` means the same in both.
const bool kPerfectPlanner = [] {
#if TESSEL_WITH_PERFECT_PLANNER
  memory::RegisterPerfectPlanner();
  return true;
#else
  return false;
#endif
}();

// The shared instances are synthetic zero-slack cases (README there): the
// opt-in `perfect` planner is what they are for. Every plan must verify, and
// on a node budget (no clock) `perfect` packs every instance at its capacity
// but the 4,000-buffer one (open: nothing here packs it, docs/benchmarks.md).
TEST(SharedInstances, Perfect_fits_all_but_one_at_their_capacity) {
  if (!kPerfectPlanner) {
    GTEST_SKIP() << "skipped: the opt-in 'perfect' planner is not built "
                    "(cmake -DTESSEL_WITH_PERFECT_PLANNER=ON)";
  }
  const std::vector<std::string> names = SharedInstances();
  if (!fs::exists(kPlanning / names[0])) {
    GTEST_SKIP() << "skipped: " << kPlanning << " is absent (../shared not beside the checkout)";
  }
  memory::PlannerOptions options;
  options.verify = true;
  options.node_limit = 20000;
  for (const std::string& name : names) {
    StatusOr<memory::Instance> inst = memory::ReadInstanceCsv(kPlanning / name);
    ASSERT_TRUE(inst.ok()) << inst.status().message();
    ASSERT_TRUE(inst->capacity_bytes.has_value()) << name;
    StatusOr<memory::Plan> plan = memory::MakePlan(inst->problem, "perfect", options);
    ASSERT_TRUE(plan.ok()) << name << ": " << plan.status().message();
    const int64_t peak = plan->pool_used_bytes[0];
    std::printf("%s: peak %lld bytes, %.1f%% over its capacity\n", name.c_str(),
                static_cast<long long>(peak),
                100.0 * static_cast<double>(peak - *inst->capacity_bytes) /
                    static_cast<double>(*inst->capacity_bytes));
    if (name.find("_4000.") != std::string::npos) continue;  // the open one
    EXPECT_EQ(peak, *inst->capacity_bytes) << name;
    EXPECT_TRUE(plan->proven_optimal) << name;
  }
}

// The four shared models and the demo: compiled once without a plan.
struct Model {
  std::string name;
  fs::path onnx;
};

void PrintTo(const Model& m, std::ostream* os) { *os << m.name; }

std::vector<Model> Models() {
  std::vector<Model> models;
  for (const char* m :
       {"mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0", "transformer_encoder"}) {
    models.push_back({m, kModels / m / "model.onnx"});
  }
  models.push_back({"demo", TESSEL_DEMO_MODEL});
  return models;
}

class PlannedModel : public ::testing::TestWithParam<Model> {};

TEST_P(PlannedModel, Default_plan_meets_the_bound_and_optimal_proves_it) {
  if (!fs::exists(GetParam().onnx)) GTEST_SKIP() << "skipped: " << GetParam().onnx << " is absent";
  CompilerOptions o;
  o.memory.algorithm = "none";
  StatusOr<CompiledModel> m = Compile(GetParam().onnx, targets::testing::Cpu(), o);
  ASSERT_TRUE(m.ok()) << m.status().message();
  StatusOr<targets::KernelDecisions> kernels = targets::testing::Cpu().SelectKernels(*m->graph);
  ASSERT_TRUE(kernels.ok());
  StatusOr<GraphMemoryProblem> buffers =
      BuildMemoryProblem(*m->graph, kernels->nodes, MemoryOptions{});
  ASSERT_TRUE(buffers.ok());
  memory::PlannerOptions options;
  options.verify = true;
  options.node_limit = 20000;
  for (const char* algo : {"auto", "optimal"}) {
    StatusOr<memory::Plan> plan = memory::MakePlan(buffers->problem, algo, options);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    const std::vector<int64_t> bounds = memory::PoolLowerBounds(buffers->problem, plan->placements);
    for (size_t p = 0; p < bounds.size(); ++p) {
      EXPECT_EQ(plan->pool_used_bytes[p], bounds[p])
          << algo << " pool " << buffers->problem.pools[p].name;
    }
    if (std::string(algo) == "optimal") {
      EXPECT_TRUE(plan->proven_optimal) << GetParam().name;
    }
  }
}

TEST_P(PlannedModel, Executor_gives_the_same_bits_with_and_without_the_plan) {
  if (!fs::exists(GetParam().onnx)) GTEST_SKIP() << "skipped: " << GetParam().onnx << " is absent";
  CompilerOptions planned_options, plain_options;
  plain_options.memory.algorithm = "none";
  StatusOr<CompiledModel> planned =
      Compile(GetParam().onnx, targets::testing::Cpu(), planned_options);
  StatusOr<CompiledModel> plain = Compile(GetParam().onnx, targets::testing::Cpu(), plain_options);
  ASSERT_TRUE(planned.ok() && plain.ok());
  ASSERT_FALSE(planned->memory.empty());
  // The data set's input where there is one, seeded random values otherwise.
  std::vector<Tensor> inputs;
  auto sets = onnx_io::ReadTestDataSets(GetParam().onnx.parent_path());
  if (sets.ok() && !sets->empty()) {
    for (const auto& nt : (*sets)[0].inputs) inputs.push_back(nt.tensor);
  } else {
    for (const ir::Value* v : plain->graph->inputs()) {
      Tensor t(v->dtype, v->shape);
      for (int64_t i = 0; i < t.num_elements(); ++i)
        t.data<float>()[i] = static_cast<float>(i % 13) / 13.0f;
      inputs.push_back(t);
    }
  }
  cpu::CpuExecutor a(*plain->graph);
  cpu::CpuExecutor b(*planned->graph, planned->memory);
  StatusOr<std::vector<Tensor>> out_a = a.Run(inputs);
  StatusOr<std::vector<Tensor>> out_b = b.Run(inputs);
  StatusOr<std::vector<Tensor>> out_b2 = b.Run(inputs);  // the arenas are dirty now
  ASSERT_TRUE(out_a.ok() && out_b.ok() && out_b2.ok());
  ASSERT_EQ(out_a->size(), out_b->size());
  for (size_t k = 0; k < out_a->size(); ++k) {
    const Tensor& x = (*out_a)[k];
    for (const Tensor* y : {&(*out_b)[k], &(*out_b2)[k]}) {
      ASSERT_EQ(x.size_bytes(), y->size_bytes());
      EXPECT_EQ(std::memcmp(x.raw_data(), y->raw_data(), x.size_bytes()), 0) << "output " << k;
    }
  }
  EXPECT_EQ(b.stats().peak_activation_bytes, a.stats().peak_activation_bytes);
}

INSTANTIATE_TEST_SUITE_P(Models, PlannedModel, ::testing::ValuesIn(Models()),
                         [](const auto& info) { return info.param.name; });

// A tight instance the default node budget does not solve (bench/planner).
constexpr const char* kHardInstance = "tight_09_271.1048576.csv";

class PlanCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessel_plan_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // y = Relu(Concat(x, x)) over float32 1x256.
    onnx_io::ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {1, 256});
    b.Node("Relu", {"x"}, {"r"});
    onnx_io::ModelBuilder::SetAttr(b.Node("Concat", {"r", "r"}, {"c"}), "axis", int64_t{1});
    b.Node("Sigmoid", {"c"}, {"y"});
    b.Output("y");
    ASSERT_TRUE(b.Save(path("m.onnx")).ok());
    Write("i.12.csv", "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(dir_ / name, text).ok());
  }

  fs::path dir_;
};

TEST_F(PlanCli, Plans_an_instance_and_writes_it_back) {
  CliResult r =
      RunTessel("plan --instance " + path("i.12.csv") + " --algo all --node-limit 100000 --out " +
                path("o.csv") + " --json " + path("o.json") + " --svg " + path("o.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("5 buffers, capacity 12 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("optimal: peak 12 bytes, fits; lower bound 12, gap 0.00%, proven optimal"),
            std::string::npos)
      << r.out;
  StatusOr<memory::Instance> back = memory::ReadInstanceCsv(path("o.csv"));
  ASSERT_TRUE(back.ok()) << back.status().message();
  // The written plan, checked here on its own terms (the CSV contract): every
  // buffer within the capacity, no two live at once sharing a byte.
  const auto& bs = back->problem.buffers;
  for (size_t i = 0; i < bs.size(); ++i) {
    ASSERT_TRUE(bs[i].fixed_offset_bytes.has_value());
    EXPECT_LE(*bs[i].fixed_offset_bytes + bs[i].size_bytes, 12);
    for (size_t j = 0; j < i; ++j) {
      const bool live_together =
          bs[i].live.first_use < bs[j].live.last_use && bs[j].live.first_use < bs[i].live.last_use;
      const bool share_bytes =
          *bs[i].fixed_offset_bytes < *bs[j].fixed_offset_bytes + bs[j].size_bytes &&
          *bs[j].fixed_offset_bytes < *bs[i].fixed_offset_bytes + bs[i].size_bytes;
      EXPECT_FALSE(live_together && share_bytes) << bs[i].name << " and " << bs[j].name;
    }
  }
  const nlohmann::json j = nlohmann::json::parse(ReadAll(path("o.json")));
  ASSERT_EQ(j["plans"].size(), memory::AlgorithmNames().size());
  EXPECT_EQ(j["capacity_bytes"], 12);
  for (const auto& plan : j["plans"]) {
    EXPECT_TRUE(plan.contains("planning_ms"));
    EXPECT_EQ(plan["pools"][0]["lower_bound_bytes"], 12);
    EXPECT_EQ(plan["buffers"].size(), 5u);
  }
  EXPECT_EQ(ReadAll(path("o.svg")).rfind("<svg", 0), 0u);
}

TEST_F(PlanCli, A_node_limit_gives_the_same_plan_every_time) {
  const std::string cmd =
      "plan --instance " + path("i.12.csv") + " --algo optimal --node-limit 50 --out ";
  CliResult a = RunTessel(cmd + path("a.csv"));
  CliResult b = RunTessel(cmd + path("b.csv"));
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_EQ(ReadAll(path("a.csv")), ReadAll(path("b.csv")));
  EXPECT_NE(RunTessel("plan --instance " + path("i.12.csv") + " --node-limit -1").exit_code, 0);
  // One budget or the other: nodes (the default) or seconds.
  ExpectRejected(
      RunTessel("plan --instance " + path("i.12.csv") + " --node-limit 50 --time-limit 1"),
      {"--time-limit"});
}

// Threads that spin until destroyed: a loaded machine.
class CpuBurner {
 public:
  CpuBurner() {
    const unsigned n = 2 * std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  }
  ~CpuBurner() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// Reproducible compiles: the default search budget is a number of nodes, so
// the same input and options give the same bytes however loaded the machine.
// The demo model meets its lower bound with the greedy plan (no search); the
// tight instance does not, and the default budget runs out before the search
// proves a plan optimal (measured), so its plan is where the budget cut the
// search. Under the former default (10 s of wall clock) a loaded run visits
// fewer nodes than a quiet one and stops elsewhere, and the test fails
// (measured with --time-limit 10 on 2 cores: 1054720 bytes quiet, 1060864
// with four spinning processes; 1060864 both ways on the node budget).
TEST_F(PlanCli, The_default_budget_gives_the_same_bytes_on_a_loaded_machine) {
  const std::string instance = std::string(TESSEL_SOURCE_DIR) + "/bench/planner/" + kHardInstance;
  const auto run = [&](const std::string& tag) {
    CliResult plan =
        RunTessel("plan --instance " + instance + " --algo auto --out " + path(tag + ".csv"));
    EXPECT_NE(plan.exit_code, 2) << plan.err;
    EXPECT_NE(plan.out.find("not proven optimal"), std::string::npos)
        << "the search must run out of budget: " << plan.out;
    CliResult compile =
        RunTessel(std::string("compile ") + TESSEL_DEMO_MODEL + " -o " + path(tag + ".tsl"));
    EXPECT_EQ(compile.exit_code, 0) << compile.err;
    return plan.exit_code;
  };
  const int quiet = run("quiet");
  int loaded = -1;
  {
    CpuBurner burner;
    loaded = run("loaded");
  }
  EXPECT_EQ(quiet, loaded);
  const std::string plan = ReadAll(path("quiet.csv"));
  EXPECT_FALSE(plan.empty());
  EXPECT_TRUE(plan == ReadAll(path("loaded.csv"))) << "the plans differ";
  const std::string tsl = ReadAll(path("quiet.tsl"));
  EXPECT_FALSE(tsl.empty());
  EXPECT_TRUE(tsl == ReadAll(path("loaded.tsl"))) << "the .tsl files differ";
}

TEST_F(PlanCli, A_capacity_too_small_is_reported_as_not_fitting) {
  CliResult r =
      RunTessel("plan --instance " + path("i.12.csv") + " --capacity 11 --node-limit 100000");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("auto: peak 12 bytes, does not fit"), std::string::npos) << r.out;
}

TEST_F(PlanCli, Plans_a_model_with_every_algorithm_and_compiles_runs_with_a_pool) {
  CliResult r = RunTessel("plan " + path("m.onnx") + " --algo all --node-limit 100000 --json " +
                          path("m.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("reference executor peak"), std::string::npos) << r.out;
  for (const std::string& algo : memory::AlgorithmNames())
    EXPECT_NE(r.out.find(algo), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(ReadAll(path("m.json")))["plans"].size(),
            memory::AlgorithmNames().size());

  CliResult c = RunTessel("compile " + path("m.onnx") + " -o " + path("m.tsl") +
                          " --pool name=sram,size=4KiB --planner greedy_by_size");
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_NE(c.out.find("pool rw 'sram'"), std::string::npos) << c.out;
  CliResult a = RunTessel("run " + path("m.tsl") + " --output-dir " + path("a"));
  CliResult b = RunTessel("run " + path("m.onnx") + " --planner none --output-dir " + path("b"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(a.out.find("planned workspace"), std::string::npos) << a.out;
  EXPECT_EQ(ReadAll(path("a/output_0.pb")), ReadAll(path("b/output_0.pb")));
}

// Until the OpenCL target's select-kernels puts values in textures, a
// compiled model whose values were put there by hand: a = Conv(x, w),
// b = Relu(a), c = Relu(b), d = Add(a, c) in scope texture (NCHW4c,
// 16x32 texels each; three live at once), w in texture:weight (72x2).
TEST_F(PlanCli, Reports_texture_images_against_the_2d_bound) {
  onnx_io::ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 8, 16, 16});
  b.Initializer("w", Tensor(DType::kFloat32, {8, 8, 3, 3}));
  onnx_io::ModelBuilder::SetAttr(b.Node("Conv", {"x", "w"}, {"a"}), "pads",
                                 std::vector<int64_t>{1, 1, 1, 1});
  b.Node("Relu", {"a"}, {"b"});
  b.Node("Relu", {"b"}, {"c"});
  b.Node("Add", {"a", "c"}, {"d"});
  b.Node("Relu", {"d"}, {"y"});
  b.Output("y");
  ASSERT_TRUE(b.Save(path("t.onnx")).ok());
  CompilerOptions o;
  o.fusion = false;
  StatusOr<CompiledModel> m = Compile(path("t.onnx"), targets::testing::Reference(), o);
  ASSERT_TRUE(m.ok()) << m.status().message();
  for (const auto& v : m->graph->values()) {
    if (v->name == "w") {
      v->scope = ir::StorageScope::kTextureWeight;
      v->layout = ir::Layout::kOIHW4o;
    } else if (v->name.size() == 1 && v->name != "x" && v->name != "y") {
      v->scope = ir::StorageScope::kTexture;
      v->layout = ir::Layout::kNCHW4c;
    }
  }
  StatusOr<ir::MemoryLayout> layout =
      PlanMemory(*m->graph, targets::ReferenceKernels(*m->graph), MemoryOptions{});
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  m->memory = *layout;
  ASSERT_TRUE(WriteCompiledModel(*m, path("t.tsl")).ok());

  CliResult r = RunTessel("plan " + path("t.tsl") + " --target reference --json " + path("t.json") +
                          " --svg " + path("t.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("5 values in textures (texels of 16 bytes), planned in 2D:"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("weight0   weight   72 x 2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3       1680           26.2 KiB  1680         1.0000"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rfc"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(path("t.json")));
  ASSERT_TRUE(j.contains("textures"));
  EXPECT_EQ(j["textures"]["lower_bound_texels"], 3 * 512 + 144);
  ASSERT_EQ(j["textures"]["plans"].size(), 2u);
  EXPECT_EQ(j["textures"]["plans"][0]["area_texels"], 3 * 512 + 144);
  EXPECT_EQ(j["textures"]["plans"][0]["bytes"], (3 * 512 + 144) * 16);
  EXPECT_EQ(j["textures"]["plans"][1]["algorithm"], "rfc");
  EXPECT_EQ(j["textures"]["tokens"].size(), 5u);
  EXPECT_EQ(j["textures"]["plans"][0]["positions"].size(), 5u);
  const std::string svg = ReadAll(path("t.svg"));
  EXPECT_NE(svg.find(">weight0 72x2"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>d: 16 x 32 texels at ("), std::string::npos) << svg;

  // Without textures, nothing about them.
  CliResult plain =
      RunTessel("plan " + path("t.onnx") + " --target reference --json " + path("p.json"));
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  EXPECT_EQ(plain.out.find("in textures"), std::string::npos) << plain.out;
  EXPECT_FALSE(nlohmann::json::parse(ReadAll(path("p.json"))).contains("textures"));
}

TEST_F(PlanCli, compile_rejects_a_pool_too_small_naming_pool_limit_and_need) {
  ExpectRejected(RunTessel("compile " + path("m.onnx") + " -o " + path("m.tsl") +
                           " --pool name=sram,size=1KiB"),
                 {"pool 'sram' is too small", "limit 1.0 KiB (1024 bytes)",
                  "the plan needs 3.0 KiB (3072 bytes)"});
  EXPECT_FALSE(fs::exists(path("m.tsl")));
  ExpectRejected(RunTessel("run " + path("m.onnx") + " --pool name=sram,size=1KiB"),
                 {"pool 'sram' is too small"});
}

TEST_F(PlanCli, rejects_a_bad_pool_spec_and_unknown_planners) {
  ExpectRejected(RunTessel("plan " + path("m.onnx") + " --pool name=sram,size=lots"),
                 {"--pool 'name=sram,size=lots'", "size 'lots' is not a byte count"});
  ExpectRejected(RunTessel("run " + path("m.onnx") + " --pool size=1KiB"),
                 {"name=NAME is required"});
  ExpectRejected(
      RunTessel("compile " + path("m.onnx") + " -o " + path("x.tsl") + " --planner best"),
      {"--planner 'best'", "greedy_by_size"});
  ExpectRejected(RunTessel("plan --instance " + path("i.12.csv") + " --algo best"),
                 {"--algo 'best'", "hill_climb"});
  CliResult help = RunTessel("plan --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--pool"), std::string::npos) << help.out;
}

// Issue 36: a small fast pool before an unbounded one goes where the slow
// one peaks. For MobileNetV2, with and without fusion, `tessel plan` reports
// dram's bound given sram (lower_bound.h: FallbackBounds). The issue's
// target, dram at least 0.9 MiB below its peak without sram, holds wherever
// that bound allows it: with a 2 MiB sram (first-fit fallback took 0.38 MiB
// off with fusion, the assignment 1.15 MiB). With 1 MiB it does not: every
// buffer live at dram's peak is larger than 1 MiB (4.59 and 1.15 MiB with
// fusion; 4.59, 4.59, 1.15 and 1.15 MiB without), so no assignment lowers
// it, and the plan must meet the bound instead. The plan with both pools
// runs to the same bytes as no plan at all.
TEST_F(PlanCli, MobileNetV2s_dram_peak_falls_as_far_as_sram_allows) {
  const fs::path model = kModels / "mobilenet_v2" / "model.onnx";
  if (!fs::exists(model)) GTEST_SKIP() << "skipped: " << model << " is absent";
  constexpr int64_t kMiB = int64_t{1} << 20;
  // The plan's pool `name` in the JSON `tessel plan` writes.
  auto plan = [&](const std::string& options, const std::string& name) {
    CliResult r = RunTessel("plan " + model.string() + " " + options + " --json " + path("p.json"));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const nlohmann::json j = nlohmann::json::parse(ReadAll(path("p.json")));
    for (const auto& pool : j["plans"][0]["pools"]) {
      if (pool["name"] == name) return pool;
    }
    ADD_FAILURE() << "no pool '" << name << "' in " << r.out;
    return nlohmann::json{};
  };
  for (const std::string fusion : {"", " --no-fusion"}) {
    const int64_t alone = plan("--pool name=dram" + fusion, "dram")["used_bytes"];
    for (const int64_t sram : {1 * kMiB, 2 * kMiB}) {
      const nlohmann::json dram = plan(
          "--pool name=sram,size=" + std::to_string(sram) + " --pool name=dram" + fusion, "dram");
      const int64_t used = dram["used_bytes"], given = dram["lower_bound_given_earlier_bytes"];
      std::printf(
          "mobilenet_v2%s, sram %lld MiB: dram %lld bytes (alone %lld, bound given sram "
          "%lld): %.2f MiB lower\n",
          fusion.c_str(), static_cast<long long>(sram / kMiB), static_cast<long long>(used),
          static_cast<long long>(alone), static_cast<long long>(given),
          static_cast<double>(alone - used) / static_cast<double>(kMiB));
      EXPECT_GE(used, given) << fusion << " " << sram;
      EXPECT_LE(used, std::max(alone - kMiB * 9 / 10, given)) << fusion << " " << sram;
      EXPECT_LE(dram["lower_bound_alone_bytes"].get<int64_t>(), alone + alone / 100);
      if (sram == 2 * kMiB) {
        EXPECT_GE(alone - used, kMiB * 9 / 10) << fusion;
      }
    }
  }
  const std::string pools = " --pool name=sram,size=2MiB --pool name=dram";
  CliResult a = RunTessel("run " + model.string() + pools + " --output-dir " + path("a"));
  CliResult b = RunTessel("run " + model.string() + " --planner none --output-dir " + path("b"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(ReadAll(path("a/output_0.pb")), ReadAll(path("b/output_0.pb")));
}

TEST_F(PlanCli, plan_rejects_a_corrupt_instance_naming_file_and_line) {
  Write("bad.64.csv", "id,lower,upper,size\nb0,0,3,4\nb1,0,x,4\n");
  ExpectRejected(RunTessel("plan --instance " + path("bad.64.csv")),
                 {"bad.64.csv", "line 3", "'x'"});
  ExpectRejected(RunTessel("plan --instance " + path("none.csv")), {"none.csv"});
  ExpectRejected(RunTessel("plan"), {"give a MODEL or --instance"});
}

}  // namespace
}  // namespace tessel::testing
