// make_tight_instances: writes the tight instances of bench/planner/
// (memory/testing/tight_instance.h) and prints a markdown row for each.
//
//   build/make_tight_instances [--out DIR] [--count N] [--buffers MIN,MAX]
//
// Instance k (seed k, 1 <= k <= N) has MIN + (k - 1) * (MAX - MIN) / (N - 1)
// buffers and is written as DIR/tight_KK_<buffers>.<capacity>.csv with the
// columns id,lower,upper,size (../shared/planning/README.md). Its capacity is
// the highest end of the constructed packing, which VerifyPlan checks before
// the file is written; the row gives the lower bound tessel computes. The
// defaults (24 instances of 150 to 500 buffers, into this folder) make the
// checked-in set again, byte for byte.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "memory/instance_csv.h"
#include "memory/lower_bound.h"
#include "memory/testing/tight_instance.h"
#include "memory/verifier.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

struct Options {
  fs::path out = fs::path(TESSEL_BENCH_PLANNER_DIR);
  int32_t count = 24;
  int32_t min_buffers = 150;
  int32_t max_buffers = 500;
};

// Writes instance `seed`; prints its row, or says what failed and returns false.
bool Write(const Options& options, int32_t seed) {
  const int32_t span = options.max_buffers - options.min_buffers;
  const int32_t n =
      options.min_buffers + (options.count > 1 ? (seed - 1) * span / (options.count - 1) : 0);
  const memory::TightInstance t =
      memory::MakeTightInstance({.num_buffers = n, .seed = static_cast<uint64_t>(seed)});
  memory::Problem limited = t.problem;
  limited.pools[0].size_limit_bytes = t.capacity_bytes;
  memory::Plan plan{.algorithm = "construction", .placements = t.placements};
  plan.pool_used_bytes = memory::PoolUsedBytes(limited, t.placements);
  if (const Status s = memory::VerifyPlan(limited, plan); !s.ok()) {
    std::fprintf(stderr, "make_tight_instances: seed %d: %s\n", seed, s.message().c_str());
    return false;
  }
  char name[96];
  std::snprintf(name, sizeof name, "tight_%02d_%d.%lld.csv", seed, n,
                static_cast<long long>(t.capacity_bytes));
  const fs::path path = options.out / name;
  std::error_code ec;
  fs::create_directories(options.out, ec);  // a failure shows as the write's
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << memory::FormatInstanceCsv(t.problem, nullptr);
  out.close();
  if (!out) {
    std::fprintf(stderr, "make_tight_instances: cannot write '%s'\n", path.string().c_str());
    return false;
  }
  std::vector<memory::BufferIndex> all(t.problem.buffers.size());
  std::iota(all.begin(), all.end(), 0);
  int64_t steps = 0, largest = 0;
  for (const memory::BufferInfo& b : t.problem.buffers) {
    steps = std::max(steps, b.live.last_use);
    largest = std::max(largest, b.size_bytes);
  }
  std::printf("| %s | %d | %lld | %lld | %lld | %lld |\n", name, n, static_cast<long long>(steps),
              static_cast<long long>(largest / 1024), static_cast<long long>(t.capacity_bytes),
              static_cast<long long>(memory::PoolLowerBound(t.problem, all)));
  return true;
}

}  // namespace
}  // namespace tessel

int main(int argc, char** argv) {
  tessel::Options options;
  bool usage = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--out" && has_value) {
      options.out = argv[++i];
    } else if (arg == "--count" && has_value) {
      options.count = std::atoi(argv[++i]);
      usage = usage || options.count < 1;
    } else if (arg == "--buffers" && has_value) {
      char* end = nullptr;
      options.min_buffers = static_cast<int32_t>(std::strtol(argv[++i], &end, 10));
      usage = usage || *end != ',';
      if (*end == ',') options.max_buffers = static_cast<int32_t>(std::strtol(end + 1, &end, 10));
      usage = usage || *end != '\0' || options.min_buffers < 1 ||
              options.max_buffers < options.min_buffers;
    } else {
      usage = true;
    }
  }
  if (usage) {
    std::fprintf(stderr,
                 "usage: make_tight_instances [--out DIR] [--count N >= 1] "
                 "[--buffers MIN,MAX]\n");
    return 2;
  }
  std::printf(
      "| instance | buffers | steps | largest, KiB | capacity (known fit) | lower bound |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  for (int32_t seed = 1; seed <= options.count; ++seed) {
    if (!tessel::Write(options, seed)) return 1;
  }
  return 0;
}
