// Record once, replay: the OpenCL executor records a model's launches into
// one command buffer (cl_khr_command_buffer) and replays it on every run,
// or enqueues the launch loop. Both compute what the reference does, the
// replay byte for byte what the loop does. Where the device lacks usable
// command buffers the replay tests skip, naming why; without an OpenCL
// platform (or in a sanitizer build) every test skips, saying why.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "compiler/compile.h"
#include "onnx/model_builder.h"
#include "onnx/test_data.h"
#include "ops/op_test_util.h"
#include "targets/opencl/executor.h"
#include "targets/opencl/runtime.h"
#include "targets/opencl/test_env.h"
#include "targets/testing.h"

namespace tessel::opencl {
namespace {

using onnx_io::ModelBuilder;
using ops::test_util::RandomFloats;

// A model of snippet and library launches (two convs, a Relu, a Softmax),
// run on executors that replay one recorded command buffer and on ones
// that enqueue the launch loop.
class OpenClReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string skip = DeviceTestSkipReason();
    if (!skip.empty()) GTEST_SKIP() << skip;
    dir_ = std::filesystem::temp_directory_path() /
           ("tessel_replay_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ModelBuilder b(13);
    b.Input("x", DType::kFloat32, {1, 4, 10, 10});
    b.Initializer("w1", RandomFloats({6, 4, 3, 3}, 1));
    b.Initializer("w2", RandomFloats({6, 6, 3, 3}, 2));
    auto conv = [&](const std::string& in, const std::string& w, const std::string& out) {
      auto& n = b.Node("Conv", {in, w}, {out});
      ModelBuilder::SetAttr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
    };
    conv("x", "w1", "a");
    b.Node("Relu", {"a"}, {"ar"});
    conv("ar", "w2", "c");
    auto& softmax = b.Node("Softmax", {"c"}, {"y"});
    ModelBuilder::SetAttr(softmax, "axis", int64_t{1});
    b.Output("y");
    ASSERT_TRUE(b.Save(dir_ / "m.onnx").ok());
    StatusOr<CompiledModel> model = Compile(dir_ / "m.onnx", targets::testing::Reference());
    ASSERT_TRUE(model.ok()) << model.status().message();
    model_ = std::make_unique<CompiledModel>(std::move(*model));
    runtime_ = MakeRuntime(/*profiling=*/false);
    ASSERT_TRUE(runtime_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static std::unique_ptr<Runtime> MakeRuntime(bool profiling) {
    StatusOr<std::unique_ptr<Runtime>> rt =
        Runtime::Create("", {.profiling = profiling, .cache_dir = TESSEL_TEST_CACHE_DIR});
    EXPECT_TRUE(rt.ok()) << rt.status().message();
    return rt.ok() ? std::move(*rt) : nullptr;
  }

  // Why the runtime cannot replay, for GTEST_SKIP; empty when it can.
  static std::string NoCommandBuffers(const Runtime& rt) {
    if (rt.command_buffers()) return "";
    return rt.device().name + " offers no usable command buffer (" +
           DescribeCommandBufferSupport(rt.command_buffer_support(),
                                        rt.device().command_buffer_version) +
           "): nothing to replay";
  }

  std::unique_ptr<OpenClExecutor> Make(Runtime& rt, const ExecutorOptions& options) {
    StatusOr<std::unique_ptr<OpenClExecutor>> exec =
        OpenClExecutor::Create(*model_->graph, model_->memory, rt, options);
    EXPECT_TRUE(exec.ok()) << exec.status().message();
    return exec.ok() ? std::move(*exec) : nullptr;
  }

  static std::vector<Tensor> Inputs(uint32_t seed) { return {RandomFloats({1, 4, 10, 10}, seed)}; }

  // Runs `exec` on `inputs` and checks the output against the reference's.
  std::vector<Tensor> RunAndCheck(OpenClExecutor& exec, const std::vector<Tensor>& inputs) {
    StatusOr<std::unique_ptr<targets::Executable>> ref =
        Prepare(*model_, targets::testing::Reference());
    EXPECT_TRUE(ref.ok());
    if (!ref.ok()) return {};
    StatusOr<std::vector<Tensor>> expected = (*ref)->Run(inputs);
    StatusOr<std::vector<Tensor>> actual = exec.Run(inputs);
    EXPECT_TRUE(expected.ok());
    EXPECT_TRUE(actual.ok()) << actual.status().message();
    if (!expected.ok() || !actual.ok()) return {};
    const auto c = onnx_io::CompareTensors((*actual)[0], (*expected)[0], 1e-4, 1e-5);
    EXPECT_TRUE(c.ok) << c.problem << " max abs error " << c.max_abs_error;
    return std::move(*actual);
  }

  std::filesystem::path dir_;
  std::unique_ptr<CompiledModel> model_;
  std::unique_ptr<Runtime> runtime_;
};

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.size_bytes() == b.size_bytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.size_bytes()) == 0;
}

TEST_F(OpenClReplayTest, Replay_computes_what_the_launch_loop_does) {
  if (std::string why = NoCommandBuffers(*runtime_); !why.empty()) GTEST_SKIP() << why;
  std::unique_ptr<OpenClExecutor> replay = Make(*runtime_, {});
  std::unique_ptr<OpenClExecutor> loop = Make(*runtime_, {.replay = false});
  ASSERT_TRUE(replay && loop);
  ASSERT_GT(replay->launches().size(), 2u);
  EXPECT_TRUE(replay->replays()) << replay->DescribeSubmission();
  EXPECT_EQ(replay->recordings(), 1);
  EXPECT_EQ(replay->DescribeSubmission().rfind("command buffer (cl_khr_command_buffer", 0), 0u)
      << replay->DescribeSubmission();
  EXPECT_FALSE(loop->replays());
  EXPECT_EQ(loop->recordings(), 0);
  // Two runs on other inputs: the replayed buffer reads each run's inputs,
  // and computes, launch for launch, what the loop does.
  for (uint32_t seed : {5u, 6u}) {
    const std::vector<Tensor> inputs = Inputs(seed);
    const std::vector<Tensor> replayed = RunAndCheck(*replay, inputs);
    const std::vector<Tensor> looped = RunAndCheck(*loop, inputs);
    ASSERT_EQ(replayed.size(), 1u);
    ASSERT_EQ(looped.size(), 1u);
    EXPECT_TRUE(SameBytes(replayed[0], looped[0])) << "seed " << seed;
    EXPECT_GT(replay->last_submit_ms(), 0);
  }
  EXPECT_TRUE(replay->replays());
  EXPECT_EQ(replay->recordings(), 1);  // recorded once, by Create
}

TEST_F(OpenClReplayTest, SetLocal_after_recording_records_again_on_the_next_run) {
  if (std::string why = NoCommandBuffers(*runtime_); !why.empty()) GTEST_SKIP() << why;
  std::unique_ptr<OpenClExecutor> exec = Make(*runtime_, {});
  ASSERT_TRUE(exec);
  ASSERT_EQ(exec->recordings(), 1);
  // A tunable launch and a legal local size other than its own.
  size_t k = 0;
  tuning::LocalSize other{};
  for (; k < exec->launches().size(); ++k) {
    const Launch& l = exec->launches()[k];
    if (!l.tunable) continue;
    other = {1, 1, 1};
    if (other != l.local && tuning::IsLegal(l.problem, other)) break;
  }
  ASSERT_LT(k, exec->launches().size()) << "no tunable launch to resize";
  ASSERT_TRUE(exec->SetLocal(k, other).ok());
  EXPECT_EQ(exec->launches()[k].local, other);
  EXPECT_EQ(exec->recordings(), 1);  // lazily: not before a run needs it
  EXPECT_TRUE(exec->replays());
  RunAndCheck(*exec, Inputs(7));
  EXPECT_EQ(exec->recordings(), 2);
  EXPECT_TRUE(exec->replays());
  // The same size again changes nothing: no new recording.
  ASSERT_TRUE(exec->SetLocal(k, other).ok());
  RunAndCheck(*exec, Inputs(8));
  EXPECT_EQ(exec->recordings(), 2);
}

TEST_F(OpenClReplayTest, Replay_off_runs_the_launch_loop) {
  std::unique_ptr<OpenClExecutor> off = Make(*runtime_, {.replay = false});
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->replays());
  EXPECT_EQ(off->recordings(), 0);
  EXPECT_EQ(off->DescribeSubmission(), "launch loop (replay off)");
  RunAndCheck(*off, Inputs(9));
  EXPECT_EQ(off->recordings(), 0);
  // By default the executor replays exactly where the runtime can.
  std::unique_ptr<OpenClExecutor> on = Make(*runtime_, {});
  ASSERT_TRUE(on);
  EXPECT_EQ(on->replays(), runtime_->command_buffers() != nullptr) << on->DescribeSubmission();
  if (!runtime_->command_buffers()) {
    EXPECT_NE(on->DescribeSubmission().find("launch loop ("), std::string::npos);
    EXPECT_NE(on->DescribeSubmission().find("cl_khr_command_buffer"), std::string::npos)
        << on->DescribeSubmission();
  }
  RunAndCheck(*on, Inputs(9));
}

TEST_F(OpenClReplayTest, Timings_and_the_queue_window_take_the_launch_loop) {
  // A queue window waits between launches: nothing is recorded.
  std::unique_ptr<OpenClExecutor> window = Make(*runtime_, {.queue_window = 2});
  ASSERT_TRUE(window);
  EXPECT_FALSE(window->replays());
  EXPECT_EQ(window->recordings(), 0);
  RunAndCheck(*window, Inputs(10));

  // Timings need each launch's event; untimed runs on the same executor
  // replay where the profiling queue takes command buffers.
  std::unique_ptr<Runtime> profiling = MakeRuntime(/*profiling=*/true);
  ASSERT_TRUE(profiling);
  std::unique_ptr<OpenClExecutor> exec = Make(*profiling, {});
  ASSERT_TRUE(exec);
  EXPECT_FALSE(exec->replays());
  RunAndCheck(*exec, Inputs(11));
  EXPECT_EQ(exec->last_timings().size(), exec->launches().size());
  exec->set_record_timings(false);
  // A driver may refuse to record for a profiling queue (before 0.9.6 of
  // the extension, the only way it can say so): then the loop, saying why.
  const bool recorded = exec->recordings() == 1;
  EXPECT_EQ(exec->replays(), recorded) << exec->DescribeSubmission();
  if (!profiling->command_buffers()) {
    EXPECT_FALSE(recorded);
  } else if (!recorded) {
    EXPECT_EQ(exec->DescribeSubmission(), "launch loop (the driver refused the command buffer)");
  }
  RunAndCheck(*exec, Inputs(12));
  EXPECT_TRUE(exec->last_timings().empty());
}

TEST_F(OpenClReplayTest, Staged_copies_give_each_run_its_own_inputs_and_outputs) {
  // Inputs and outputs through pinned staging (a GPU's default; asked for
  // here on whatever device runs the tests): each run reads its own
  // inputs, and outputs already returned keep their values when the
  // staging is reused.
  std::unique_ptr<OpenClExecutor> staged = Make(*runtime_, {.stage_copies = true});
  std::unique_ptr<OpenClExecutor> direct = Make(*runtime_, {.stage_copies = false});
  ASSERT_TRUE(staged && direct);
  EXPECT_TRUE(staged->stages_copies());
  EXPECT_FALSE(direct->stages_copies());
  std::vector<std::vector<Tensor>> kept;
  for (uint32_t seed : {13u, 14u}) {
    const std::vector<Tensor> inputs = Inputs(seed);
    kept.push_back(RunAndCheck(*staged, inputs));
    const std::vector<Tensor> plain = RunAndCheck(*direct, inputs);
    ASSERT_EQ(kept.back().size(), 1u);
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_TRUE(SameBytes(kept.back()[0], plain[0])) << "seed " << seed;
  }
  EXPECT_FALSE(SameBytes(kept[0][0], kept[1][0]));
  EXPECT_TRUE(SameBytes(kept[0][0], RunAndCheck(*direct, Inputs(13))[0]));
  // Profiled, the copies have their events: bytes as the model's, times >= 0.
  std::unique_ptr<Runtime> profiling = MakeRuntime(/*profiling=*/true);
  ASSERT_TRUE(profiling);
  std::unique_ptr<OpenClExecutor> timed = Make(*profiling, {.stage_copies = true});
  ASSERT_TRUE(timed);
  RunAndCheck(*timed, Inputs(15));
  const OpenClExecutor::CopyTiming& t = timed->last_copy_timing();
  EXPECT_EQ(t.input_bytes, 4 * 10 * 10 * 4);
  EXPECT_EQ(t.output_bytes, 6 * 10 * 10 * 4);
  EXPECT_GE(t.input_ms, 0);
  EXPECT_GE(t.output_ms, 0);
}

// Only versions whose entry points have the signatures the executor calls
// are used; any other is as if the device lacked the extension.
TEST(OpenClCommandBuffers, Only_versions_with_the_called_entry_points_are_used) {
  const auto version = [](uint32_t major, uint32_t minor, uint32_t patch) {
    return (major << 22) | (minor << 12) | patch;
  };
  for (uint32_t patch : {0u, 2u, 5u, 7u, 8u}) {
    EXPECT_TRUE(CommandBufferAbiMatches(version(0, 9, patch))) << patch;
  }
  EXPECT_TRUE(CommandBufferAbiMatches(version(1, 0, 0)));
  EXPECT_TRUE(CommandBufferAbiMatches(0));  // unknown: every published version matches
  EXPECT_FALSE(CommandBufferAbiMatches(version(0, 8, 0)));
  EXPECT_FALSE(CommandBufferAbiMatches(version(2, 0, 0)));
  EXPECT_EQ(CommandBufferVersionName(version(0, 9, 5)), "0.9.5");
  EXPECT_EQ(DescribeCommandBufferSupport(CommandBufferSupport::kVersion, version(2, 0, 0)),
            "cl_khr_command_buffer 2.0.0, a version whose entry points tessel does not call");
  EXPECT_EQ(DescribeCommandBufferSupport(CommandBufferSupport::kAbsent, 0),
            "no cl_khr_command_buffer");
}

}  // namespace
}  // namespace tessel::opencl
