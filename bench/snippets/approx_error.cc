// Maximum error of the snippets JIT's transcendental approximations over all
// 2^32 float inputs (NaN inputs skipped), against the function in double.
//
//   approx_error [STRIDE]   (default 1: every float; a larger stride samples)
//
// Prints a markdown table: max error in ulp of the exact result, the same as
// relative error in units of FLT_EPSILON, the max absolute error where the
// exact result is subnormal, and NaN/infinity mismatches. Runs with the
// best ISA of this CPU (TESSEL_JIT=avx2 to measure the AVX2 path).
#include "snippets/approx_error.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "targets/cpu/thread_pool.h"

int main(int argc, char** argv) {
  using namespace tessel;
  const uint64_t stride = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  if (stride == 0) {
    std::fprintf(stderr, "approx_error: STRIDE must be a positive integer\n");
    return 2;
  }
  // TESSEL_JIT=avx2 caps the JIT at AVX2, as it does for the tessel CLI.
  snippets::Isa isa = snippets::HostIsa();
  if (const char* jit = std::getenv("TESSEL_JIT"); jit != nullptr && std::string(jit) == "avx2") {
    isa = std::min(isa, snippets::Isa::kAvx2);
  }
  cpu::ThreadPool& pool = cpu::ThreadPool::Current();
  auto parallel_for = [&](int64_t n, const std::function<void(int64_t)>& fn) {
    pool.ParallelFor(n, fn);
  };
  std::printf("isa %s, stride %llu, %d threads\n\n", snippets::IsaName(isa),
              static_cast<unsigned long long>(stride), pool.num_threads());
  std::printf(
      "| function | inputs | max ulp | at x | max rel (FLT_EPSILON) | max abs, subnormal results | "
      "NaN/inf mismatches |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const std::string& f : snippets::ApproxFunctions()) {
    const auto t0 = std::chrono::steady_clock::now();
    const snippets::ApproxError e = snippets::MeasureApproxError(f, isa, stride, 0, parallel_for);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("| %s | %lld | %.3f | %.9g | %.3f | %.3g | %lld |\n", f.c_str(),
                static_cast<long long>(e.inputs), e.max_ulp, e.max_ulp_at, e.max_rel_eps,
                e.max_abs_subnormal, static_cast<long long>(e.special_mismatches));
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %.1f s\n", f.c_str(), s);
  }
  return 0;
}
