// Replays every fuzzer's seed corpus (fuzz/corpus/NAME) and every input that
// once crashed a fuzzer (fuzz/regressions/NAME) through the same entry
// points (fuzz/entry_points.h): under make test-sanitize this is the
// fuzzers' regression suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "cli_runner.h"
#include "entry_points.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

struct Fuzzer {
  std::string name;
  std::function<void(const uint8_t*, size_t)> run;
};

class FuzzRegressions : public ::testing::TestWithParam<Fuzzer> {};

TEST_P(FuzzRegressions, Every_seed_and_every_former_crash_is_handled) {
  const Fuzzer& f = GetParam();
  int replayed = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(TESSEL_SOURCE_DIR) / "fuzz" / kind / f.name;
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      const std::string bytes = ReadAll(entry.path());
      SCOPED_TRACE(entry.path().string());
      f.run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0) << "fuzz/corpus/" << f.name << " has no seeds";
}

INSTANTIATE_TEST_SUITE_P(Fuzzers, FuzzRegressions,
                         ::testing::Values(Fuzzer{"tsl", fuzz::FuzzTsl},
                                           Fuzzer{"tensor_pb", fuzz::FuzzTensorPb},
                                           Fuzzer{"instance_csv", fuzz::FuzzInstanceCsv},
                                           Fuzzer{"cli_options", fuzz::FuzzCliOptions},
                                           Fuzzer{"onnx_model", fuzz::FuzzOnnxModel},
                                           Fuzzer{"program_cache", fuzz::FuzzProgramCache},
                                           Fuzzer{"tune_cache", fuzz::FuzzTuneCache},
                                           Fuzzer{"ops", fuzz::FuzzOps}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tessel::testing
