// A small fixed-size thread pool for data-parallel loops.
//
//   ThreadPool::SetDefaultNumThreads(2);                // --threads; before running
//   ThreadPool& pool = ThreadPool::Default();           // physical cores unless set
//   pool.ParallelFor(n, [&](int64_t i) { work(i); });   // returns when all i ran
//
// The calling thread takes part, so a pool of N threads uses N-1 workers.
// Items are handed out one at a time from a shared counter, which balances
// uneven items. Workers spin briefly before sleeping, so the kernels of one
// inference, launched back to back, do not pay a wake-up each. A ParallelFor
// issued while the pool is busy (from another thread, or from inside an
// item) runs serially on its caller instead of waiting, so nested or
// concurrent use cannot deadlock.
//
// The process-wide pool (Default) is the one every kernel of an inference
// shares. With oneDNN, whose Debian build runs its primitives on OpenMP, the
// default pool hands its items to OpenMP's threads instead of its own: one
// set of threads for oneDNN's primitives and the snippet kernels, sized by
// SetDefaultNumThreads (which also sets OpenMP's thread count), rather than
// two sets spinning against each other on the same cores.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessel::cpu {

// Memory-bound kernels (snippets, copies) that write fewer bytes than this
// run on the calling thread: 256 KiB unless the CPU target's
// parallel_min_kib says otherwise (options.h). Measured on
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

  // The process-wide pool, created on first use.
  static ThreadPool& Default();
  // Sizes the default pool (and oneDNN's OpenMP threads) to `n` >= 1
  // threads. Call it before the first inference; without it the default
  // pool has one thread per physical core.
  static void SetDefaultNumThreads(int n);
  // Physical cores of this machine (from sysfs; logical CPUs when unknown).
  static int PhysicalCores();

 private:
  struct OpenMpTag {};
  ThreadPool(OpenMpTag, int num_threads);

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

}  // namespace tessel::cpu
