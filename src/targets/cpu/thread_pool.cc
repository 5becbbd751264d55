#include "targets/cpu/thread_pool.h"

#include <algorithm>

namespace tessel::cpu {

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

ThreadPool& ThreadPool::Default() {
  // Never destroyed: worker threads must not be joined during static
  // destruction, when other statics they might touch are gone.
  static ThreadPool* pool = new ThreadPool();
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
