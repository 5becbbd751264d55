// Tuning a model's launches on a real OpenCL device (PoCL in CI): each
// distinct launch is tuned once, the cache replays it with no launch, and
// tuned sizes still compute what the reference does. Without an OpenCL
// platform (or in a sanitizer build) the tests skip, saying why.
#include "targets/opencl/tune.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "onnx/test_data.h"
#include "targets/opencl/test_env.h"
#include "targets/testing.h"

namespace tessel::opencl {
namespace {

using onnx_io::ModelBuilder;

Tensor Random(Shape shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor t(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    t.data<float>()[i] = std::uniform_real_distribution<float>(-1, 1)(rng);
  }
  return t;
}

// Two convs of one shape (one tuning key) and a third of another, each
// followed by a Relu, so that the model has repeated and distinct launches.
ModelBuilder ThreeConvs() {
  ModelBuilder b(13);
  b.Input("x", DType::kFloat32, {1, 8, 12, 12});
  b.Initializer("w1", Random({8, 8, 3, 3}, 1));
  b.Initializer("w2", Random({8, 8, 3, 3}, 2));
  b.Initializer("w3", Random({5, 8, 3, 3}, 3));
  auto conv = [&](const std::string& in, const std::string& w, const std::string& out) {
    auto& n = b.Node("Conv", {in, w}, {out});
    ModelBuilder::SetAttr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  };
  conv("x", "w1", "a");
  b.Node("Relu", {"a"}, {"ar"});
  conv("ar", "w2", "c");
  b.Node("Relu", {"c"}, {"cr"});
  conv("cr", "w3", "y");
  b.Output("y");
  return b;
}

class OpenClTuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string skip = DeviceTestSkipReason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    dir_ =
        std::filesystem::temp_directory_path() / ("tessel_tune_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(ThreeConvs().Save(dir_ / "m.onnx").ok());
    StatusOr<CompiledModel> model = Compile(dir_ / "m.onnx", targets::testing::Reference());
    ASSERT_TRUE(model.ok()) << model.status().message();
    model_ = std::make_unique<CompiledModel>(std::move(*model));
    RuntimeOptions options{.profiling = true, .cache_dir = TESSEL_TEST_CACHE_DIR};
    StatusOr<std::unique_ptr<Runtime>> rt = Runtime::Create("", options);
    ASSERT_TRUE(rt.ok()) << rt.status().message();
    runtime_ = std::move(*rt);
    inputs_ = {Random({1, 8, 12, 12}, 9)};
    StatusOr<std::unique_ptr<targets::Executable>> ref =
        Prepare(*model_, targets::testing::Reference());
    ASSERT_TRUE(ref.ok());
    StatusOr<std::vector<Tensor>> expected = (*ref)->Run(inputs_);
    ASSERT_TRUE(expected.ok());
    expected_ = std::move(*expected);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<OpenClExecutor> Make(const tuning::TuningCache* cache = nullptr) {
    StatusOr<std::unique_ptr<OpenClExecutor>> exec =
        OpenClExecutor::Create(*model_->graph, model_->memory, *runtime_, {.tuning_cache = cache});
    EXPECT_TRUE(exec.ok()) << exec.status().message();
    return exec.ok() ? std::move(*exec) : nullptr;
  }

  void ExpectMatches(OpenClExecutor& exec) {
    StatusOr<std::vector<Tensor>> actual = exec.Run(inputs_);
    ASSERT_TRUE(actual.ok()) << actual.status().message();
    const auto c = onnx_io::CompareTensors((*actual)[0], expected_[0], 1e-4, 1e-5);
    EXPECT_TRUE(c.ok) << c.problem;
  }

  std::filesystem::path dir_;
  std::unique_ptr<CompiledModel> model_;
  std::unique_ptr<Runtime> runtime_;
  std::vector<Tensor> inputs_, expected_;
};

TEST_F(OpenClTuneTest, Each_distinct_launch_is_tuned_once_and_the_cache_replays_it) {
  std::unique_ptr<OpenClExecutor> exec = Make();
  ASSERT_TRUE(exec);
  tuning::TuningCache cache;
  StatusOr<TuneReport> first = TuneLaunches(*exec, cache, {.strategy = tuning::Strategy::kMace});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_GT(first->launches, 0);
  EXPECT_EQ(cache.size(), first->kernels.size());
  // The two convs of one shape share a key: fewer distinct kernels than
  // tunable launches.
  int tunable = 0, uses = 0;
  for (const Launch& l : exec->launches()) tunable += l.tunable ? 1 : 0;
  for (const KernelTuning& k : first->kernels) {
    uses += k.uses;
    EXPECT_FALSE(k.cached);
    EXPECT_GT(k.launches, 0);
    // The tuner's rule (tuning/tuner.h): a size other than the default only
    // when it measured clearly faster (2% at the median), else the default
    // with the default's own time.
    if (k.local != k.default_local) {
      EXPECT_LT(k.ms, k.default_ms * 0.98) << k.kernel;
    } else {
      EXPECT_EQ(k.ms, k.default_ms) << k.kernel;
    }
  }
  EXPECT_EQ(uses, tunable);
  EXPECT_LT(static_cast<int>(first->kernels.size()), tunable);
  // The tuned sizes compute what the reference does.
  ExpectMatches(*exec);

  // Again with the cache: no launch.
  std::unique_ptr<OpenClExecutor> again = Make();
  StatusOr<TuneReport> second = TuneLaunches(*again, cache, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->launches, 0);
  for (const KernelTuning& k : second->kernels) EXPECT_TRUE(k.cached) << k.kernel;

  // An executor made with the cache takes its sizes at once.
  std::unique_ptr<OpenClExecutor> cached = Make(&cache);
  EXPECT_EQ(cached->tuned_from_cache(), tunable);
  for (size_t k = 0; k < cached->launches().size(); ++k) {
    EXPECT_EQ(cached->launches()[k].local, exec->launches()[k].local) << k;
  }
  ExpectMatches(*cached);
}

TEST_F(OpenClTuneTest, A_cached_size_the_kernel_cannot_take_is_ignored) {
  std::unique_ptr<OpenClExecutor> exec = Make();
  ASSERT_TRUE(exec);
  tuning::TuningCache cache;
  for (const Launch& l : exec->launches()) {
    if (!l.tunable) continue;
    tuning::LocalSize huge = l.default_local;
    huge[0] = l.problem.max_group + 1;  // past the kernel's work-group limit
    cache.Put({.key = l.key, .local = huge, .ms = 1, .strategy = "race"});
  }
  std::unique_ptr<OpenClExecutor> with = Make(&cache);
  EXPECT_EQ(with->tuned_from_cache(), 0);
  for (const Launch& l : with->launches()) EXPECT_EQ(l.local, l.default_local);
  ExpectMatches(*with);
}

TEST_F(OpenClTuneTest, Timing_and_setting_sizes_check_their_arguments) {
  std::unique_ptr<OpenClExecutor> exec = Make();
  ASSERT_TRUE(exec);
  size_t k = 0;
  while (k < exec->launches().size() && !exec->launches()[k].tunable) ++k;
  ASSERT_LT(k, exec->launches().size());
  const Launch& l = exec->launches()[k];
  StatusOr<double> ms = exec->TimeLaunch(k, l.default_local);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  EXPECT_GT(*ms, 0);
  StatusOr<double> mean = exec->TimeLaunch(k, l.default_local, 3);
  ASSERT_TRUE(mean.ok()) << mean.status().message();
  EXPECT_GT(*mean, 0);
  EXPECT_FALSE(exec->TimeLaunch(k, l.default_local, 0).ok());
  int64_t probe = 0;
  StatusOr<int> repeats = TimingRepeats(*exec, k, probe);
  ASSERT_TRUE(repeats.ok()) << repeats.status().message();
  EXPECT_GE(*repeats, 1);
  EXPECT_LE(*repeats, 4);
  EXPECT_EQ(probe, 3);
  tuning::LocalSize bad = l.default_local;
  bad[0] = l.problem.max_group + 1;
  EXPECT_FALSE(exec->TimeLaunch(k, bad).ok());
  EXPECT_FALSE(exec->SetLocal(k, bad).ok());
  EXPECT_EQ(exec->launches()[k].local, l.default_local);

  // Without a profiling queue there is nothing to time with.
  StatusOr<std::unique_ptr<Runtime>> plain =
      Runtime::Create("", {.profiling = false, .cache_dir = TESSEL_TEST_CACHE_DIR});
  ASSERT_TRUE(plain.ok());
  StatusOr<std::unique_ptr<OpenClExecutor>> unprofiled =
      OpenClExecutor::Create(*model_->graph, model_->memory, **plain);
  ASSERT_TRUE(unprofiled.ok());
  StatusOr<double> none = (*unprofiled)->TimeLaunch(k, l.default_local);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("profiling"), std::string::npos);
}

TEST_F(OpenClTuneTest, The_queue_window_waits_and_computes_the_same) {
  StatusOr<std::unique_ptr<OpenClExecutor>> exec =
      OpenClExecutor::Create(*model_->graph, model_->memory, *runtime_, {.queue_window = 2});
  ASSERT_TRUE(exec.ok());
  ExpectMatches(**exec);
}

}  // namespace
}  // namespace tessel::opencl
