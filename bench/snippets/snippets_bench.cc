// Fused snippet kernels against the same ops unfused, and against memcpy of
// the same bytes (the bandwidth limit), on tensors from 4 KiB to 256 MiB.
//
//   snippets_bench [--max-mib N] [--min-kib N] [--threads N] [--workload NAME] [--cold]
//
// Workloads (float32):
//   gelu      y = 0.5 x (1 + erf(x / sqrt 2))   5 ops, reads x, writes y
//   silu      y = x sigmoid(x)                   2 ops, reads x, writes y
//   add_clip  y = clip(a + b, 0, 6)              2 ops, reads a and b, writes y
//
// Variants, all in one run on the same buffers:
//   fused        one JIT kernel for the whole chain, over the thread pool
//   unfused JIT  one JIT kernel per op, intermediates through memory
//   unfused ref  the reference kernels of src/ops, one op at a time (what the
//                executor ran before snippets)
//   memcpy       the same number of bytes read and written, split over the
//                same threads (and on one thread)
//
// Bandwidth is (bytes read + bytes written) / time, best of several runs.
// By default buffers stay warm between runs, so tensors that fit the
// last-level cache are measured from it; --cold evicts the cache before every
// timed run (by writing a buffer twice its size), which measures DRAM
// streaming for every variant alike. Results go to docs/benchmarks.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/op_registry.h"
#include "snippets/snippet_kernel.h"
#include "snippets/x86_generator.h"
#include "targets/cpu/thread_pool.h"

namespace tessel {
namespace {

using Clock = std::chrono::steady_clock;

struct Op {
  std::string type;
  std::vector<int> in;         // buffer indices: 0..num_inputs-1 are inputs, then op results
  std::vector<float> scalars;  // extra scalar operands, appended after `in`
};

struct Workload {
  std::string name;
  int num_inputs;
  std::vector<Op> ops;  // op k writes buffer num_inputs + k; the last is the output
};

const std::vector<Workload>& Workloads() {
  static const std::vector<Workload> w = {
      {"gelu",
       1,
       {{"Div", {0}, {1.41421356f}},
        {"Erf", {1}, {}},
        {"Add", {2}, {1.0f}},
        {"Mul", {0, 3}, {}},
        {"Mul", {4}, {0.5f}}}},
      {"silu", 1, {{"Sigmoid", {0}, {}}, {"Mul", {0, 1}, {}}}},
      {"add_clip", 2, {{"Add", {0, 1}, {}}, {"Clip", {2}, {0.0f, 6.0f}}}},
  };
  return w;
}

// A body over `n` floats computing ops[first, last) of `w`; its inputs are
// the buffers those ops read from outside the range.
struct Body {
  std::unique_ptr<ir::Graph> graph;
  std::vector<int> inputs;  // buffer indices
  int output = 0;
};

Body MakeBody(const Workload& w, size_t first, size_t last, int64_t n) {
  Body b;
  b.graph = std::make_unique<ir::Graph>();
  ir::Graph& g = *b.graph;
  g.set_opset_version(17);
  g.set_name(w.name);
  std::vector<ir::Value*> buffer(static_cast<size_t>(w.num_inputs) + w.ops.size(), nullptr);
  for (size_t k = first; k < last; ++k) {
    const Op& op = w.ops[k];
    std::vector<ir::Value*> ins;
    for (int i : op.in) {
      if (!buffer[static_cast<size_t>(i)]) {
        buffer[static_cast<size_t>(i)] =
            g.AddValue("b" + std::to_string(i), DType::kFloat32, {n}, true);
        g.inputs().push_back(buffer[static_cast<size_t>(i)]);
        b.inputs.push_back(i);
      }
      ins.push_back(buffer[static_cast<size_t>(i)]);
    }
    for (float s : op.scalars) {
      ins.push_back(g.AddConstant(g.UniqueValueName("c"), Tensor::FromVector<float>({s}, {})));
    }
    const int out = w.num_inputs + static_cast<int>(k);
    buffer[static_cast<size_t>(out)] = g.AddValue("b" + std::to_string(out));
    ir::Node* node =
        g.AddNode(op.type, op.type + std::to_string(k), ins, {buffer[static_cast<size_t>(out)]});
    Status s = ops::InferNode(*node, 17);
    if (!s.ok()) {
      std::fprintf(stderr, "snippets_bench: %s\n", s.message().c_str());
      std::exit(1);
    }
    b.output = out;
  }
  g.outputs().push_back(buffer[static_cast<size_t>(b.output)]);
  return b;
}

// Run before every timed repetition (--cold: evict the caches).
std::function<void()> g_before_each = [] {};

// Best time of `fn` in seconds: at least 3 runs and 0.3 s, at most 50 runs.
double BestSeconds(const std::function<void()>& fn) {
  fn();  // warm up: page faults, caches
  double best = 1e30, total = 0;
  for (int r = 0; r < 50 && (r < 3 || total < 0.3); ++r) {
    g_before_each();
    const auto t0 = Clock::now();
    fn();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}

// Tensors, allocated as the executor allocates its arenas (huge pages from
// 4 MiB up, see src/ir/tensor.cc).
struct Buffers {
  std::vector<Tensor> data;
  float* at(int i) { return data[static_cast<size_t>(i)].data<float>(); }
};

Buffers Allocate(size_t count, int64_t n) {
  Buffers b;
  for (size_t i = 0; i < count; ++i) {
    b.data.emplace_back(DType::kFloat32, Shape{n});
    float* p = b.data.back().data<float>();
    for (int64_t k = 0; k < n; ++k) p[k] = std::sin(static_cast<float>(k) * 0.001f) * 3.0f;
  }
  return b;
}

std::string Size(int64_t bytes) {
  char buf[32];
  if (bytes < (1 << 20)) {
    std::snprintf(buf, sizeof buf, "%lld KiB", static_cast<long long>(bytes >> 10));
  } else {
    std::snprintf(buf, sizeof buf, "%lld MiB", static_cast<long long>(bytes >> 20));
  }
  return buf;
}

int Main(int argc, char** argv) {
  int64_t max_mib = 256;
  int64_t min_kib = 4;
  int threads = 0;
  bool cold = false;
  std::string only;
  std::string isa = "auto";
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--cold") {
      cold = true;
      --i;
      continue;
    }
    const bool known = flag == "--max-mib" || flag == "--min-kib" || flag == "--threads" ||
                       flag == "--workload" || flag == "--isa";
    if (!known || i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: snippets_bench [--max-mib N] [--min-kib N] [--threads N] "
                   "[--workload gelu|silu|add_clip] [--isa auto|avx512|avx2] [--cold]\n");
      return 2;
    }
    if (flag == "--max-mib") max_mib = std::atoll(argv[i + 1]);
    if (flag == "--min-kib") min_kib = std::atoll(argv[i + 1]);
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    if (flag == "--workload") only = argv[i + 1];
    if (flag == "--isa") isa = argv[i + 1];
  }
  // --isa caps the JIT's instruction set, as `tessel --isa` does: an AVX-512
  // machine measures the AVX2 code.
  snippets::SnippetOptions jit;
  if (const char* dir = std::getenv("TESSEL_SNIPPETS_DUMP")) jit.dump_dir = dir;
  if (isa == "avx2") {
    jit.isa = snippets::Isa::kAvx2;
  } else if (isa == "avx512" && snippets::IsaSupported(snippets::Isa::kAvx512)) {
    jit.isa = snippets::Isa::kAvx512;
  } else if (isa != "auto") {
    std::fprintf(stderr,
                 "snippets_bench: --isa %s: expected auto, avx2, or avx512 on a CPU "
                 "that has it\n",
                 isa.c_str());
    return 2;
  }
  cpu::ThreadPool pool(threads);
  const snippets::ParallelFor parallel_for =
      [&](int64_t n, const std::function<void(int64_t)>& fn) { pool.ParallelFor(n, fn); };
  // Twice the last-level cache, written in parallel, leaves none of the
  // benchmark's buffers cached.
  const int64_t flush_bytes = 2 * snippets::LastLevelCacheBytes();
  std::vector<char> flush(cold ? static_cast<size_t>(flush_bytes) : 0);
  if (cold) {
    g_before_each = [&] {
      const int64_t parts = pool.num_threads();
      pool.ParallelFor(parts, [&](int64_t t) {
        const int64_t lo = flush_bytes * t / parts, hi = flush_bytes * (t + 1) / parts;
        std::memset(flush.data() + lo, static_cast<int>(t), static_cast<size_t>(hi - lo));
      });
    };
  }
  std::printf("snippets_bench: isa %s, %d threads, %s caches (LLC %lld MiB)\n\n",
              snippets::IsaName(jit.isa), pool.num_threads(), cold ? "cold" : "warm",
              static_cast<long long>(snippets::LastLevelCacheBytes() >> 20));
  std::printf(
      "| workload | tensor | memcpy 1T GB/s | memcpy GB/s | fused GB/s | fused / memcpy | "
      "unfused JIT GB/s | unfused ref GB/s | fused vs unfused JIT | fused vs unfused ref |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Workload& w : Workloads()) {
    if (!only.empty() && w.name != only) continue;
    for (int64_t bytes : {int64_t{4} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20,
                          int64_t{64} << 20, int64_t{256} << 20}) {
      if (bytes > (max_mib << 20) || bytes < (min_kib << 10)) continue;
      const int64_t n = bytes / 4;
      Buffers buf = Allocate(static_cast<size_t>(w.num_inputs) + w.ops.size(), n);
      const int out = w.num_inputs + static_cast<int>(w.ops.size()) - 1;
      // Bytes a fused kernel walks: every input once, the output once.
      const double walked = static_cast<double>(bytes) * (w.num_inputs + 1);

      // memcpy: copy `walked / 2` bytes (read + write = walked).
      const int64_t copy_bytes = static_cast<int64_t>(walked / 2);
      Buffers copy = Allocate(2, copy_bytes / 4);
      auto* src = reinterpret_cast<char*>(copy.at(0));
      auto* dst = reinterpret_cast<char*>(copy.at(1));
      const double memcpy1 =
          BestSeconds([&] { std::memcpy(dst, src, static_cast<size_t>(copy_bytes)); });
      const int64_t parts = pool.num_threads();
      const double memcpyp = BestSeconds([&] {
        pool.ParallelFor(parts, [&](int64_t t) {
          const int64_t lo = copy_bytes * t / parts / 64 * 64;
          const int64_t hi = t + 1 == parts ? copy_bytes : copy_bytes * (t + 1) / parts / 64 * 64;
          std::memcpy(dst + lo, src + lo, static_cast<size_t>(hi - lo));
        });
      });

      // Fused.
      Body fused_body = MakeBody(w, 0, w.ops.size(), n);
      auto fused = snippets::SnippetKernel::Compile(*fused_body.graph, jit);
      if (!fused.ok()) {
        std::fprintf(stderr, "snippets_bench: %s\n", fused.status().message().c_str());
        return 1;
      }
      std::vector<const void*> fused_in;
      for (int i : fused_body.inputs) fused_in.push_back(buf.at(i));
      const double fused_s =
          BestSeconds([&] { (*fused)->Run(fused_in, {buf.at(out)}, parallel_for); });

      // Unfused JIT: one kernel per op.
      std::vector<std::unique_ptr<snippets::SnippetKernel>> kernels;
      std::vector<Body> bodies;
      for (size_t k = 0; k < w.ops.size(); ++k) {
        bodies.push_back(MakeBody(w, k, k + 1, n));
        auto kernel = snippets::SnippetKernel::Compile(*bodies.back().graph, jit);
        if (!kernel.ok()) return 1;
        kernels.push_back(std::move(*kernel));
      }
      const double unfused_jit_s = BestSeconds([&] {
        for (size_t k = 0; k < kernels.size(); ++k) {
          std::vector<const void*> in;
          for (int i : bodies[k].inputs) in.push_back(buf.at(i));
          kernels[k]->Run(in, {buf.at(bodies[k].output)}, parallel_for);
        }
      });

      // Unfused reference: the reference kernels, allocating results as the
      // executor does.
      std::vector<Tensor> views;
      for (int i = 0; i < w.num_inputs; ++i)
        views.push_back(Tensor::View(DType::kFloat32, {n}, buf.at(i)));
      const double unfused_ref_s = BestSeconds([&] {
        std::vector<Tensor> values = views;
        values.resize(static_cast<size_t>(w.num_inputs) + w.ops.size());
        for (size_t k = 0; k < bodies.size(); ++k) {
          const ir::Node& node = *bodies[k].graph->nodes()[0];
          std::vector<const Tensor*> in;
          size_t next = 0;
          for (const ir::Value* v : node.inputs) {
            in.push_back(v->is_constant() ? &v->constant
                                          : &values[static_cast<size_t>(bodies[k].inputs[next++])]);
          }
          auto r = ops::EvaluateNode(node, 17, in);
          values[static_cast<size_t>(bodies[k].output)] = std::move((*r)[0]);
        }
      });

      const double gbs = walked / 1e9;
      std::printf("| %s | %s | %.1f | %.1f | %.1f | %.0f%% | %.1f | %.2f | %.1fx | %.0fx |\n",
                  w.name.c_str(), Size(bytes).c_str(), walked / memcpy1 / 1e9,
                  walked / memcpyp / 1e9, gbs / fused_s, 100 * memcpyp / fused_s,
                  gbs / unfused_jit_s, gbs / unfused_ref_s, unfused_jit_s / fused_s,
                  unfused_ref_s / fused_s);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace tessel

int main(int argc, char** argv) { return tessel::Main(argc, argv); }
