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

namespace {

thread_local const CpuOptions* active_options = nullptr;
thread_local ThreadPool* active_pool = nullptr;

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

std::unique_ptr<ThreadPool> ThreadPool::Make(int num_threads) {
  const int n = num_threads > 0 ? num_threads : PhysicalCores();
#if TESSEL_WITH_ONEDNN
  return std::unique_ptr<ThreadPool>(new ThreadPool(OpenMpTag{}, n));
#else
  return std::make_unique<ThreadPool>(n);
#endif
}

ThreadPool& ThreadPool::Current() {
  if (active_pool) return *active_pool;
  // Never destroyed: worker threads must not be joined during static
  // destruction, when other statics they might touch are gone.
  static ThreadPool* fallback = Make(0).release();
  return *fallback;
}

void ThreadPool::NoteTeam(int threads) {
  int seen = widest_team_.load(std::memory_order_relaxed);
  while (threads > seen && !widest_team_.compare_exchange_weak(seen, threads)) {
  }
}

int64_t ParallelCopyBytes() {
  return static_cast<int64_t>(ActiveOptions().parallel_min_kib * 1024);
}

const CpuOptions& ActiveOptions() {
  if (active_options) return *active_options;
  static const CpuOptions defaults = [] {
    CpuOptions o;
    o.isa = HostIsa();
    return o;
  }();
  return defaults;
}

CpuScope::CpuScope(const CpuOptions& options, ThreadPool& pool)
    : saved_options_(active_options), saved_pool_(active_pool) {
  active_options = &options;
  active_pool = &pool;
#if TESSEL_WITH_ONEDNN
  saved_omp_threads_ = omp_get_max_threads();
  omp_set_num_threads(pool.num_threads());
#endif
}

CpuScope::~CpuScope() {
  active_options = saved_options_;
  active_pool = saved_pool_;
#if TESSEL_WITH_ONEDNN
  omp_set_num_threads(saved_omp_threads_);
#endif
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
    NoteTeam(threads);
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
  NoteTeam(static_cast<int>(workers_.size()) + 1);
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
