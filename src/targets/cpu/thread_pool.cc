#include "targets/cpu/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include "targets/cpu/options.h"
#if TESSEL_WITH_ONEDNN
#include <omp.h>
#endif

namespace tessel::cpu {

int64_t ParallelCopyBytes() {
  return static_cast<int64_t>(ProcessOptions().parallel_min_kib * 1024);
}

namespace {

// A few to tens of microseconds of polling, depending on the cost of pause:
// enough for launches issued back to back, short enough not to steal a core
// from the caller's single-threaded kernels in between.
constexpr int kSpinIterations = 256;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::thread::hardware_concurrency());
  num_threads = std::max(num_threads, 1);
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool::ThreadPool(OpenMpTag, int num_threads) : openmp_threads_(std::max(num_threads, 1)) {}

namespace {

int default_threads = 0;  // 0: physical cores

}  // namespace

int ThreadPool::PhysicalCores() {
  std::set<std::pair<std::string, std::string>> cores;
  const int logical = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int cpu = 0; cpu < logical; ++cpu) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream package(dir + "physical_package_id"), core(dir + "core_id");
    std::string p, c;
    if (!(package >> p) || !(core >> c)) return logical;
    cores.insert({p, c});
  }
  return std::max(1, static_cast<int>(cores.size()));
}

void ThreadPool::SetDefaultNumThreads(int n) {
  default_threads = std::max(n, 1);
#if TESSEL_WITH_ONEDNN
  omp_set_num_threads(default_threads);
  Default().openmp_threads_ = default_threads;
#endif
}

ThreadPool& ThreadPool::Default() {
  // Never destroyed: worker threads must not be joined during static
  // destruction, when other statics they might touch are gone.
  static ThreadPool* pool = [] {
    const int n = default_threads > 0 ? default_threads : PhysicalCores();
#if TESSEL_WITH_ONEDNN
    omp_set_num_threads(n);
    return new ThreadPool(OpenMpTag{}, n);
#else
    return new ThreadPool(n);
#endif
  }();
  return *pool;
}

void ThreadPool::RunItems() {
  for (int64_t i = next_.fetch_add(1, std::memory_order_relaxed); i < n_;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    (*fn_)(i);
  }
}

void ThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    bool ready = false;
    for (int i = 0; i < kSpinIterations && !ready; ++i) {
      ready = generation_.load(std::memory_order_acquire) != seen || stop_.load();
      if (!ready) CpuRelax();
    }
    if (!ready) {
      std::unique_lock<std::mutex> lock(mu_);
      work_ready_.wait(lock, [&] {
        return stop_.load() || generation_.load(std::memory_order_acquire) != seen;
      });
    }
    if (stop_.load()) return;
    seen = generation_.load(std::memory_order_acquire);
    RunItems();
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      work_done_.notify_one();
    }
  }
}

void ThreadPool::ParallelFor(int64_t n, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
  if (openmp_threads_ > 1 && n > 1 && busy.owns_lock()) {
#if TESSEL_WITH_ONEDNN
    std::atomic<int64_t> next{0};
    const int threads = static_cast<int>(std::min<int64_t>(openmp_threads_, n));
#pragma omp parallel num_threads(threads)
    {
      for (int64_t i = next.fetch_add(1, std::memory_order_relaxed); i < n;
           i = next.fetch_add(1, std::memory_order_relaxed)) {
        fn(i);
      }
    }
    return;
#endif
  }
  if (workers_.empty() || n == 1 || !busy.owns_lock()) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  fn_ = &fn;
  n_ = n;
  next_.store(0, std::memory_order_relaxed);
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_ready_.notify_all();
  RunItems();
  bool done = false;
  for (int i = 0; i < kSpinIterations && !done; ++i) {
    done = pending_.load(std::memory_order_acquire) == 0;
    if (!done) CpuRelax();
  }
  if (!done) {
    std::unique_lock<std::mutex> lock(mu_);
    work_done_.wait(lock, [&] { return pending_.load(std::memory_order_acquire) == 0; });
  }
  fn_ = nullptr;
}

}  // namespace tessel::cpu
