// The C++ API's latency, as an application gets it: tessel::Load, Prepare,
// Session::Benchmark, in a process that sets nothing (no GOMP_SPINCOUNT: the
// library's defaults). Prints one JSON line; bench/api/cli_vs_api.py runs it
// beside `tessel bench` and the Python binding.
//   api_bench MODEL.tsl [WARMUP REPEAT]
#include <tessel/tessel.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) try {
  if (argc < 2) return std::fprintf(stderr, "usage: api_bench MODEL.tsl [WARMUP REPEAT]\n"), 2;
  const int warmup = argc > 2 ? std::stoi(argv[2]) : 5;
  const int repeat = argc > 3 ? std::stoi(argv[3]) : 30;
  tessel::Session session = tessel::Load(argv[1]).Prepare();
  const tessel::BenchResult r = session.Benchmark(warmup, repeat);
  std::printf("{\"engine\": \"c++ api\", \"min_ms\": %.4f, \"median_ms\": %.4f, \"runs\": %d}\n",
              r.min_ms, r.median_ms, r.runs);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "api_bench: %s\n", e.what());
  return 2;
}
