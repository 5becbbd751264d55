// `tessel tune`, `tessel tune-cache` and the run options that read the
// tuning cache, end to end. The tuning tests need an OpenCL device (PoCL in
// CI) and skip, saying why, without one; the cache file tests do not.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "opencl_env.h"

namespace tessel::testing {
namespace {

namespace fs = std::filesystem;

class TuneCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessel_tune_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }

  fs::path dir_;
};

// A cache of one entry for `device`, with local `local` and time `ms`.
std::string OneEntry(const std::string& device, int local, double ms) {
  nlohmann::json e{{"platform", "P"},   {"device", device},      {"driver", "1.0"},
                   {"kernel", "k"},     {"source_hash", "00ff"}, {"storage", "buffer"},
                   {"args_hash", "11"}, {"global", {64, 8}},     {"local", {local, 1}},
                   {"ms", ms},          {"default_ms", 2 * ms},  {"strategy", "race"},
                   {"launches", 12}};
  nlohmann::json j{{"format", "tessel-tuning-cache"}, {"version", 1}, {"entries", {e}}};
  return j.dump();
}

TEST_F(TuneCli, Merge_keeps_the_faster_entry_of_each_key) {
  Write("a.json", OneEntry("GPU A", 32, 0.5));
  Write("b.json", OneEntry("GPU A", 64, 0.25));
  Write("c.json", OneEntry("GPU B", 16, 1.0));
  CliResult r = RunTessel("tune-cache merge " + Path("a.json") + " " + Path("b.json") + " " +
                          Path("c.json") + " -o " + Path("out.json") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(r.out);
  EXPECT_EQ(summary["entries"], 2);
  const nlohmann::json merged = nlohmann::json::parse(ReadAll(Path("out.json")));
  ASSERT_EQ(merged["entries"].size(), 2u);
  for (const auto& e : merged["entries"]) {
    if (e["device"] == "GPU A") {
      EXPECT_EQ(e["local"][0], 64);  // the faster one
    }
  }
}

TEST_F(TuneCli, Merge_of_a_corrupt_cache_names_it_and_writes_nothing) {
  Write("a.json", OneEntry("GPU A", 32, 0.5));
  Write("bad.json", OneEntry("GPU A", 32, 0.5).substr(0, 40));  // truncated
  CliResult r = RunTessel("tune-cache merge " + Path("a.json") + " " + Path("bad.json") + " -o " +
                          Path("out.json"));
  ExpectRejected(r, {"bad.json"});
  EXPECT_FALSE(fs::exists(Path("out.json")));
  ExpectRejected(RunTessel("tune-cache show " + Path("bad.json")), {"bad.json"});
  ExpectRejected(RunTessel("tune-cache merge " + Path("none.json") + " -o " + Path("out.json")),
                 {"none.json"});
}

TEST_F(TuneCli, Tuning_options_need_the_opencl_target) {
  ExpectRejected(RunTessel(std::string("run ") + TESSEL_DEMO_MODEL + " --tune online"),
                 {"--tune online", "opencl"});
  // Through the seam: a target without tunable launches says so, naming itself.
  ExpectRejected(RunTessel(std::string("tune ") + TESSEL_DEMO_MODEL + " --target cpu"),
                 {"target 'cpu", "nothing to tune"});
  ExpectRejected(RunTessel(std::string("tune ") + TESSEL_DEMO_MODEL + " --strategy genetic"),
                 {"genetic"});
}

TEST_F(TuneCli, A_second_tune_with_the_cache_launches_nothing_until_the_driver_changes) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  const std::string cache = Path("tune.json");
  const std::string tune = std::string("tune ") + TESSEL_DEMO_MODEL +
                           " --strategy mace --repeat 1 --rounds 1 --json --cache " + cache;
  CliResult first = RunTessel(tune, CacheEnv());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const nlohmann::json a = nlohmann::json::parse(first.out);
  EXPECT_GT(a["tuning_launches"].get<int>(), 0);
  ASSERT_GT(a["kernels"].size(), 0u);
  for (const auto& k : a["kernels"]) {
    EXPECT_GT(k["tuning_launches"].get<int>(), 0) << k.dump();
    // The tuner's rule (tuning/tuner.h): another size only when it measured
    // clearly faster (2% at the median), else the default and its own time.
    if (k["local"] != k["default_local"]) {
      EXPECT_LT(k["tuned_ms"].get<double>(), k["default_ms"].get<double>() * 0.98) << k.dump();
    } else {
      EXPECT_EQ(k["tuned_ms"].get<double>(), k["default_ms"].get<double>()) << k.dump();
    }
  }

  CliResult second = RunTessel(tune, CacheEnv());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  const nlohmann::json b = nlohmann::json::parse(second.out);
  EXPECT_EQ(b["tuning_launches"], 0);
  for (const auto& k : b["kernels"]) EXPECT_TRUE(k["cached"].get<bool>()) << k.dump();

  // The cache from another driver: a note, and everything tuned again.
  nlohmann::json file = nlohmann::json::parse(ReadAll(cache));
  for (auto& e : file["entries"]) e["driver"] = "0.0-older";
  std::ofstream(cache) << file.dump();
  CliResult third = RunTessel(tune, CacheEnv());
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.err.find("tuned under driver 0.0-older"), std::string::npos) << third.err;
  const nlohmann::json c = nlohmann::json::parse(third.out);
  EXPECT_GT(c["tuning_launches"].get<int>(), 0);
  EXPECT_EQ(c["kernels"].size(), a["kernels"].size());
  for (const auto& k : c["kernels"]) EXPECT_FALSE(k["cached"].get<bool>()) << k.dump();
}

TEST_F(TuneCli, Run_ignores_a_corrupt_cache_with_a_note_and_computes_the_same) {
  const std::string skip = OpenClSkipReason();
  if (!skip.empty()) GTEST_SKIP() << "skipped: " << skip;
  Write("bad.json", "{\"format\": \"tessel-tuning-cache\", \"version\": 1, \"entries\": [");
  const std::string run = std::string("run ") + TESSEL_DEMO_MODEL + " --target opencl --json";
  CliResult plain = RunTessel(run + " --tune-cache " + Path("none.json"), CacheEnv());
  CliResult corrupt = RunTessel(run + " --tune-cache " + Path("bad.json"), CacheEnv());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(corrupt.exit_code, 0) << corrupt.err;
  EXPECT_EQ(plain.err, "");
  EXPECT_NE(corrupt.err.find("bad.json ignored"), std::string::npos) << corrupt.err;
  EXPECT_EQ(nlohmann::json::parse(plain.out)["outputs"],
            nlohmann::json::parse(corrupt.out)["outputs"]);
}

}  // namespace
}  // namespace tessel::testing
