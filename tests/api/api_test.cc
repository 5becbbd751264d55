// The C++ API (include/tessel/tessel.h) as an application sees it: linked
// with libtessel.so alone (the models it runs are written with the ONNX
// model builder), every result compared with the reference target, and
// every bad input answered by the documented tessel::Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "onnx/model_builder.h"
#include "tessel/tessel.h"

namespace fs = std::filesystem;

namespace {

fs::path TempDir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("tessel-api-test-" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// y = relu(x W + b) W2: a small model every target runs, with an input of
// 1x64 floats and an output of 1x32.
fs::path SmallModel() {
  static const fs::path path = [] {
    using tessel::onnx_io::ModelBuilder;
    ModelBuilder b(13);
    b.Input("x", tessel::DType::kFloat32, {1, 64});
    std::vector<float> w(64 * 64), bias(64), w2(64 * 32);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.1f * static_cast<float>(i)) * 0.2f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * static_cast<float>(i) - 0.3f;
    for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(0.07f * static_cast<float>(i)) * 0.1f;
    b.Initializer("w", tessel::Tensor::FromVector<float>(w, {64, 64}));
    b.Initializer("b", tessel::Tensor::FromVector<float>(bias, {64}));
    b.Initializer("w2", tessel::Tensor::FromVector<float>(w2, {64, 32}));
    b.Node("MatMul", {"x", "w"}, {"xw"});
    b.Node("Add", {"xw", "b"}, {"xwb"});
    b.Node("Relu", {"xwb"}, {"h"});
    b.Node("MatMul", {"h", "w2"}, {"y"});
    b.Output("y");
    const fs::path p = TempDir() / "small.onnx";
    EXPECT_TRUE(b.Save(p).ok());
    return p;
  }();
  return path;
}

tessel::Array Input(float phase) {
  std::vector<float> x(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(phase + 0.3f * static_cast<float>(i));
  return tessel::Array::FromVector<float>({1, 64}, x);
}

void ExpectClose(const tessel::Array& a, const tessel::Array& b, float tol = 1e-4f) {
  ASSERT_EQ(a.type(), b.type());
  ASSERT_EQ(a.shape(), b.shape());
  const float* pa = a.data<float>();
  const float* pb = b.data<float>();
  for (int64_t i = 0; i < a.element_count(); ++i) {
    ASSERT_NEAR(pa[i], pb[i], tol * (1 + std::fabs(pb[i]))) << "element " << i;
  }
}

// The call's tessel::Error code, or none when it did not throw one.
template <typename F>
std::string ErrorOf(F&& f, tessel::ErrorCode* code = nullptr) {
  try {
    f();
  } catch (const tessel::Error& e) {
    if (code) *code = e.code();
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_ERROR(expr, expected_code, substring)                             \
  do {                                                                           \
    tessel::ErrorCode code_{};                                                   \
    const std::string what_ = ErrorOf([&] { (void)(expr); }, &code_);            \
    EXPECT_EQ(code_, expected_code) << what_;                                    \
    EXPECT_NE(what_.find(substring), std::string::npos) << what_;                \
    EXPECT_EQ(what_.find('\n'), std::string::npos) << "not one line: " << what_; \
  } while (0)

TEST(Api, CompilesRunsAndMatchesTheReference) {
  tessel::Model cpu = tessel::Compile(SmallModel().string());
  tessel::Model ref = tessel::Compile(SmallModel().string(), tessel::ReferenceOptions{});
  ASSERT_EQ(cpu.inputs().size(), 1u);
  EXPECT_EQ(cpu.inputs()[0].name, "x");
  EXPECT_EQ(cpu.inputs()[0].type, tessel::ElementType::kFloat32);
  EXPECT_EQ(cpu.inputs()[0].shape, (std::vector<int64_t>{1, 64}));
  ASSERT_EQ(cpu.outputs().size(), 1u);
  EXPECT_EQ(cpu.outputs()[0].shape, (std::vector<int64_t>{1, 32}));
  EXPECT_EQ(cpu.target(), "cpu");
  EXPECT_EQ(ref.target(), "reference");
  EXPECT_NE(cpu.target_options().count("isa"), 0u) << cpu.target_description();
  tessel::Session s = cpu.Prepare();
  tessel::Session r = ref.Prepare();
  const tessel::NamedArrays out = s.Run({{"x", Input(0.5f)}});
  const tessel::NamedArrays expected = r.Run({{"x", Input(0.5f)}});
  ExpectClose(out.at("y"), expected.at("y"));
}

TEST(Api, SaveLoadAndSerializeRoundTrip) {
  tessel::Model m = tessel::Compile(SmallModel().string());
  const fs::path tsl = TempDir() / "small.tsl";
  m.Save(tsl.string());
  tessel::Model loaded = tessel::Load(tsl.string());
  EXPECT_EQ(loaded.target_description(), m.target_description());
  tessel::Model bytes = tessel::Deserialize(m.Serialize());
  const tessel::NamedArrays a = m.Prepare().Run({{"x", Input(1)}});
  const tessel::NamedArrays b = loaded.Prepare().Run({{"x", Input(1)}});
  const tessel::NamedArrays c = bytes.Prepare().Run({{"x", Input(1)}});
  ExpectClose(a.at("y"), b.at("y"), 0);
  ExpectClose(a.at("y"), c.at("y"), 0);
}

TEST(Api, CompileBytesIsCompileOfTheFile) {
  std::ifstream in(SmallModel(), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  tessel::Model m = tessel::CompileBytes(bytes, tessel::ReferenceOptions{});
  tessel::Model f = tessel::Compile(SmallModel().string(), tessel::ReferenceOptions{});
  ExpectClose(m.Prepare().Run({{"x", Input(2)}}).at("y"),
              f.Prepare().Run({{"x", Input(2)}}).at("y"), 0);
}

TEST(Api, RunWritesIntoTheCallersArrays) {
  tessel::Model m = tessel::Compile(SmallModel().string());
  tessel::Session s = m.Prepare();
  std::vector<float> mine(32, -7.0f);
  tessel::NamedArrays outputs{
      {"y", tessel::Array::Borrow(tessel::ElementType::kFloat32, {1, 32}, mine.data())}};
  s.Run({{"x", Input(3)}}, outputs);
  const tessel::NamedArrays fresh = s.Run({{"x", Input(3)}});
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(mine[static_cast<size_t>(i)], fresh.at("y").data<float>()[i]);
  EXPECT_EQ(outputs.at("y").raw_data(), mine.data());  // written in place
  std::vector<float> small(16);
  tessel::NamedArrays wrong{
      {"y", tessel::Array::Borrow(tessel::ElementType::kFloat32, {1, 16}, small.data())}};
  EXPECT_ERROR(s.Run({{"x", Input(3)}}, wrong), tessel::ErrorCode::kShapeMismatch, "output 'y'");
  tessel::NamedArrays unknown{{"z", tessel::Array::Allocate(tessel::ElementType::kFloat32, {1})}};
  EXPECT_ERROR(s.Run({{"x", Input(3)}}, unknown), tessel::ErrorCode::kInvalidArgument, "'z'");
}

TEST(Api, PlanDescribesEveryBufferInsideItsPool) {
  tessel::Model m = tessel::Compile(SmallModel().string());
  const tessel::MemoryPlan plan = m.plan();
  ASSERT_FALSE(plan.pools.empty());
  ASSERT_FALSE(plan.buffers.empty());
  std::map<std::string, int64_t> pool_size;
  for (const auto& p : plan.pools) pool_size[p.name] = p.size_bytes;
  int constants = 0;
  for (const auto& b : plan.buffers) {
    constants += b.kind == "constant";
    if (b.pool.empty()) continue;
    ASSERT_TRUE(pool_size.count(b.pool)) << b.name;
    EXPECT_LE(b.offset_bytes + b.size_bytes, pool_size[b.pool]) << b.name;
    EXPECT_LE(b.first_step, b.last_step) << b.name;
  }
  EXPECT_EQ(constants, 3);  // w, b, w2
  EXPECT_GE(plan.workspace_bytes, plan.lower_bound_bytes);
  EXPECT_EQ(plan.svg.rfind("<svg", 0), 0u) << plan.svg.substr(0, 80);
}

TEST(Api, ProfileAndStats) {
  tessel::Model m = tessel::Compile(SmallModel().string());
  tessel::SessionOptions opts;
  opts.profile = true;
  tessel::Session s = m.Prepare(opts);
  for (int i = 0; i < 3; ++i) s.Run({{"x", Input(0)}});
  const std::vector<tessel::ProfileRow> rows = s.Profile();
  ASSERT_FALSE(rows.empty());
  int nodes = 0;
  for (const auto& r : rows) nodes += r.nodes;
  EXPECT_GE(nodes, 2);
  EXPECT_NE(s.ProfileReport().find(rows[0].op_type), std::string::npos);
  EXPECT_GT(s.stats().workspace_bytes, 0);
  const tessel::BenchResult b = s.Benchmark(1, 5);
  EXPECT_EQ(b.runs, 5);
  EXPECT_LE(b.min_ms, b.median_ms);
  EXPECT_ERROR(s.Benchmark(0, 0), tessel::ErrorCode::kInvalidArgument, "repeat");
  EXPECT_ERROR(s.Tune(), tessel::ErrorCode::kUnsupported, "nothing to tune");
}

TEST(Api, BadInputsAreOneLineErrorsNamingTheCulprit) {
  tessel::Model m = tessel::Compile(SmallModel().string());
  tessel::Session s = m.Prepare();
  using tessel::ElementType;
  using tessel::ErrorCode;
  EXPECT_ERROR(s.Run({{"x", tessel::Array::Allocate(ElementType::kFloat64, {1, 64})}}),
               ErrorCode::kTypeMismatch, "input 'x': float64 given; the model takes float32");
  EXPECT_ERROR(s.Run({{"x", tessel::Array::Allocate(ElementType::kFloat32, {1, 63})}}),
               ErrorCode::kShapeMismatch, "input 'x': shape 1x63");
  EXPECT_ERROR(s.Run({}), ErrorCode::kInvalidArgument, "input 'x' is missing");
  EXPECT_ERROR(s.Run({{"x", Input(0)}, {"extra", Input(0)}}), ErrorCode::kInvalidArgument,
               "no input named 'extra'");
  EXPECT_ERROR(tessel::Load((TempDir() / "absent.tsl").string()), ErrorCode::kNotFound,
               "absent.tsl");
  EXPECT_ERROR(tessel::Compile((TempDir() / "absent.onnx").string()), ErrorCode::kNotFound,
               "absent.onnx");
  EXPECT_ERROR(tessel::Load((TempDir() / "line\nbreak\x01.tsl").string()), ErrorCode::kNotFound,
               "line / break\\x01.tsl");
  EXPECT_ERROR(tessel::Load(SmallModel().string()), ErrorCode::kInvalidArgument,
               "not a compiled tessel model");
  // A file cut short: corrupt, whichever byte it ends at.
  const fs::path tsl = TempDir() / "cut.tsl";
  m.Save(tsl.string());
  fs::resize_file(tsl, fs::file_size(tsl) / 2);
  EXPECT_ERROR(tessel::Load(tsl.string()), ErrorCode::kCorruptFile, "cut.tsl");
  EXPECT_ERROR(tessel::Compile(tsl.string()), ErrorCode::kInvalidArgument, "tessel::Load it");
  EXPECT_ERROR(tessel::Deserialize("not a model"), ErrorCode::kCorruptFile, "");
  EXPECT_ERROR(tessel::Compile(SmallModel().string(), tessel::CpuOptions{.isa = "sse9"}),
               ErrorCode::kInvalidArgument, "sse9");
  tessel::CompileOptions bad_planner;
  bad_planner.planner = "magic";
  EXPECT_ERROR(tessel::Compile(SmallModel().string(), tessel::CpuOptions{}, bad_planner),
               ErrorCode::kInvalidArgument, "'magic'");
  tessel::CompileOptions tiny;
  tiny.pools = {{"sram", 64, false}, {"flash", 0, true}};
  EXPECT_ERROR(tessel::Compile(SmallModel().string(), tessel::CpuOptions{}, tiny),
               ErrorCode::kResourceExhausted, "sram");
  tessel::Model ref = tessel::Compile(SmallModel().string(), tessel::ReferenceOptions{});
  tessel::SessionOptions threads;
  threads.threads = 2;
  EXPECT_ERROR(ref.Prepare(threads), ErrorCode::kInvalidArgument, "threads");
  EXPECT_ERROR(tessel::Array::FromVector<float>({2, 2}, {1.0f}), ErrorCode::kShapeMismatch,
               "1 values");
  EXPECT_ERROR(tessel::Array::Allocate(ElementType::kFloat32, {-1}), ErrorCode::kInvalidArgument,
               "-1");
  const tessel::Array a = Input(0);
  EXPECT_ERROR(a.data<int32_t>(), ErrorCode::kTypeMismatch, "int32");
}

TEST(Api, AnUnsupportedOpIsNamed) {
  using tessel::onnx_io::ModelBuilder;
  ModelBuilder b(13);
  b.Input("x", tessel::DType::kFloat32, {1, 4});
  b.Node("NoSuchOperator", {"x"}, {"y"}, "the_culprit");
  b.Output("y");
  const fs::path p = TempDir() / "unsupported.onnx";
  ASSERT_TRUE(b.Save(p).ok());
  EXPECT_ERROR(tessel::Compile(p.string()), tessel::ErrorCode::kUnsupported, "NoSuchOperator");
}

TEST(Api, OneModelPreparedTwiceAfterItsWeightsWerePacked) {
  tessel::Model m = tessel::Compile(SmallModel().string());
  tessel::Session first = m.Prepare();  // takes the kernels built while compiling
  tessel::Session second = m.Prepare();
  tessel::SessionOptions one;
  one.threads = 1;
  tessel::Session third = m.Prepare(one);
  const tessel::NamedArrays a = first.Run({{"x", Input(4)}});
  ExpectClose(a.at("y"), second.Run({{"x", Input(4)}}).at("y"), 0);
  ExpectClose(a.at("y"), third.Run({{"x", Input(4)}}).at("y"));
  m.Save((TempDir() / "after.tsl").string());  // the model still has every weight
  ExpectClose(
      a.at("y"),
      tessel::Load((TempDir() / "after.tsl").string()).Prepare().Run({{"x", Input(4)}}).at("y"), 0);
}

// A convolutional model prepared at another thread count than it was
// compiled for: oneDNN's scratchpads change size, the plan is made again.
TEST(Api, SessionsOfOtherThreadCountsRunTheSameModel) {
  tessel::Model m = tessel::Compile(TESSEL_DEMO_MODEL, tessel::CpuOptions{.threads = 2});
  const tessel::TensorInfo& in = m.inputs()[0];
  tessel::Array x = tessel::Array::Allocate(in.type, in.shape);
  for (int64_t i = 0; i < x.element_count(); ++i) x.data<float>()[i] = std::sin(0.01f * i);
  const tessel::Array two = m.Prepare().Run({{in.name, x}}).begin()->second;
  for (int threads : {1, 3}) {
    tessel::SessionOptions opts;
    opts.threads = threads;
    ExpectClose(m.Prepare(opts).Run({{in.name, x}}).begin()->second, two, 1e-3f);
  }
  const fs::path tsl = TempDir() / "demo.tsl";
  m.Save(tsl.string());
  tessel::SessionOptions one;
  one.threads = 1;
  ExpectClose(tessel::Load(tsl.string()).Prepare(one).Run({{in.name, x}}).begin()->second, two,
              1e-3f);
}

// OpenCL through the API (PoCL in CI): the reference's outputs, and Tune on
// a profiling session only.
TEST(Api, OpenClRunsLikeTheReferenceAndTunes) {
#if TESSEL_SANITIZED_BUILD
  GTEST_SKIP() << "skipped: PoCL's LLVM is not reliable under the sanitizers";
#endif
  const std::vector<std::string> targets = tessel::Targets();
  if (std::find(targets.begin(), targets.end(), "opencl") == targets.end()) {
    GTEST_SKIP() << "skipped: this build has no OpenCL target";
  }
  if (tessel::Devices().empty()) GTEST_SKIP() << "skipped: no OpenCL device";
  tessel::OpenClOptions cl;
  cl.tuning_cache = (TempDir() / "tuning.json").string();
  tessel::Model m = tessel::Compile(SmallModel().string(), cl);
  EXPECT_EQ(m.target(), "opencl");
  tessel::Model ref = tessel::Compile(SmallModel().string(), tessel::ReferenceOptions{});
  tessel::Session s = m.Prepare();
  ExpectClose(s.Run({{"x", Input(1)}}).at("y"), ref.Prepare().Run({{"x", Input(1)}}).at("y"));
  EXPECT_ERROR(s.Tune(), tessel::ErrorCode::kInvalidArgument, "SessionOptions::profile");
  tessel::SessionOptions profiled;
  profiled.profile = true;
  tessel::Session p = m.Prepare(profiled);
  tessel::TuneOptions quick;
  quick.budget_seconds = 5;
  quick.rounds = 1;
  quick.repeat = 2;
  const tessel::TuneResult r = p.Tune(quick);
  EXPECT_GE(r.kernels, 1);
  EXPECT_TRUE(fs::exists(cl.tuning_cache));
  ExpectClose(p.Run({{"x", Input(1)}}).at("y"), ref.Prepare().Run({{"x", Input(1)}}).at("y"));
}

// 8 threads x 50 runs over two sessions of one model (4 threads on each:
// one session's Run from several threads at once is serialized), every
// output checked against the same input run alone. Run under ThreadSanitizer
// by `make test-tsan` for the targets whose threads are the project's own.
void RunConcurrently(const tessel::TargetOptions& target, int session_threads) {
  tessel::Model m = tessel::Compile(SmallModel().string(), target);
  tessel::SessionOptions opts;
  opts.threads = session_threads;
  tessel::Session alone = m.Prepare(opts);
  constexpr int kInputs = 5;
  std::vector<tessel::Array> expected;
  for (int i = 0; i < kInputs; ++i) {
    expected.push_back(alone.Run({{"x", Input(static_cast<float>(i))}}).at("y"));
  }
  std::vector<tessel::Session> sessions;
  sessions.push_back(m.Prepare(opts));
  sessions.push_back(m.Prepare(opts));
  std::atomic<int> wrong{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      tessel::Session& s = sessions[static_cast<size_t>(t % 2)];
      for (int r = 0; r < 50; ++r) {
        const int k = (t + r) % kInputs;
        const tessel::Array y = s.Run({{"x", Input(static_cast<float>(k))}}).at("y");
        const tessel::Array& e = expected[static_cast<size_t>(k)];
        for (int64_t i = 0; i < y.element_count(); ++i) {
          if (y.data<float>()[i] != e.data<float>()[i]) {
            ++wrong;
            break;
          }
        }
        ++done;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(done.load(), 400);
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ApiConcurrency, ReferenceSessions) { RunConcurrently(tessel::ReferenceOptions{}, 0); }
TEST(ApiConcurrency, CpuSessionsOfOneThread) { RunConcurrently(tessel::CpuOptions{}, 1); }
// Sessions of several threads run on OpenMP teams (oneDNN's runtime), which
// ThreadSanitizer does not see: `make test-tsan` leaves this one out.
TEST(ApiConcurrency, CpuSessionsOfTwoThreads) { RunConcurrently(tessel::CpuOptions{}, 2); }

// The shared models through the API: Check (the ONNX test layout) on the
// cpu target, and the expected output of the first data set by Run.
class ApiSharedModels : public testing::TestWithParam<const char*> {};

TEST_P(ApiSharedModels, MatchTheirExpectedOutputs) {
  const fs::path dir = fs::path(TESSEL_SHARED_DIR) / "models" / GetParam();
  if (!fs::exists(dir / "model.onnx")) {
    GTEST_SKIP() << "skipped: " << dir << " is absent (../shared not beside the checkout)";
  }
  const tessel::CheckReport report = tessel::Check(dir.string());
  EXPECT_TRUE(report.ok);
  ASSERT_FALSE(report.results.empty());
  for (const tessel::CheckResult& r : report.results) {
    EXPECT_TRUE(r.ok) << r.data_set << " " << r.output << ": " << r.problem << " max abs "
                      << r.max_abs_error;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ApiSharedModels,
                         testing::Values("mobilenet_v2", "shufflenet_v2_x1_0", "squeezenet1_1",
                                         "transformer_encoder"));

}  // namespace
