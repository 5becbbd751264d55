// A small fixed-size thread pool for data-parallel loops.
//
//   ThreadPool pool(2);                                  // a CPU target's own
//   CpuScope scope(options, pool);                       // this thread builds/runs for it
//   ThreadPool::Current().ParallelFor(n, [&](int64_t i) { work(i); });
//
// The calling thread takes part, so a pool of N threads uses N-1 workers.
// Items are handed out one at a time from a shared counter, which balances
// uneven items. Workers spin briefly before sleeping, so the kernels of one
// inference, launched back to back, do not pay a wake-up each. A ParallelFor
// issued while the pool is busy (from another thread, or from inside an
// item) runs serially on its caller instead of waiting, so nested or
// concurrent use cannot deadlock.
//
// Every CPU target owns a pool of its `threads`; its kernels are built and
// run inside a CpuScope, which makes that pool (and the target's options)
// the ones this thread sees. With oneDNN, whose Debian build runs its
// primitives on OpenMP, a pool hands its items to OpenMP's threads instead
// of its own, and the scope sets this thread's OpenMP thread count to the
// pool's: one set of threads for oneDNN's primitives and the snippet
// kernels, rather than two sets spinning against each other on the same
// cores.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "targets/cpu/options.h"

namespace tessel::cpu {

// Memory-bound kernels (snippets, copies) that write fewer bytes than this
// run on the calling thread: the active CPU target's parallel_min_kib
// (options.h; 256 KiB by default). Measured on
// the transformer at 2 threads on 2 quiet cores (threads spinning between
// kernels, tools/tessel/main.cc): median 2.28-2.35 ms at 256 KiB, 2.38-2.44
// at 1 MiB, 2.33-2.36 at 64 KiB (its snippets and Transposes write 128-512
// KiB); the CNNs did not move.
int64_t ParallelCopyBytes();

class ThreadPool {
 public:
  // `num_threads` <= 0: std::thread::hardware_concurrency() (at least 1).
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run items, the caller included.
  int num_threads() const {
    return openmp_threads_ > 0 ? openmp_threads_ : static_cast<int>(workers_.size()) + 1;
  }

  void ParallelFor(int64_t n, const std::function<void(int64_t)>& fn);

  // The most threads that ran items of one ParallelFor so far: what a
  // target's thread count came to (1 until a loop ran in parallel).
  int widest_team() const { return widest_team_.load(std::memory_order_relaxed); }

  // A pool of `num_threads` (<= 0: one per physical core): on OpenMP's
  // threads with oneDNN, else on workers of its own.
  static std::unique_ptr<ThreadPool> Make(int num_threads);
  // The pool of the CpuScope active on this thread; outside any scope, a
  // process-wide pool of one thread per physical core (for code that runs
  // kernels without a target: tests, benchmarks).
  static ThreadPool& Current();
  // Physical cores of this machine (from sysfs; logical CPUs when unknown).
  static int PhysicalCores();

 private:
  struct OpenMpTag {};
  ThreadPool(OpenMpTag, int num_threads);
  std::atomic<int> widest_team_{1};
  void NoteTeam(int threads);

  void WorkerLoop();
  void RunItems();

  std::vector<std::thread> workers_;
  std::mutex busy_;         // held by the ParallelFor in progress
  int openmp_threads_ = 0;  // > 0: items run on OpenMP's threads

  // The current job, published by bumping generation_ (under mu_, so a
  // worker about to sleep cannot miss it).
  const std::function<void(int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};  // workers not yet done with the current job
  std::atomic<bool> stop_{false};

  std::mutex mu_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
};

// For its lifetime, this thread builds and runs kernels for the CPU target
// whose `options` and `pool` these are (ActiveOptions, ThreadPool::Current),
// with OpenMP's thread count at the pool's. Scopes nest; each restores what
// it found.
class CpuScope {
 public:
  CpuScope(const CpuOptions& options, ThreadPool& pool);
  ~CpuScope();
  CpuScope(const CpuScope&) = delete;
  CpuScope& operator=(const CpuScope&) = delete;

 private:
  const CpuOptions* saved_options_;
  ThreadPool* saved_pool_;
  int saved_omp_threads_ = 0;
};

// The options of the active CpuScope; outside any scope, the defaults at
// this CPU's best ISA.
const CpuOptions& ActiveOptions();

}  // namespace tessel::cpu
