#include "targets/cpu/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace tessel::cpu {
namespace {

TEST(ThreadPool, Runs_every_item_exactly_once) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.num_threads(), 4);
  for (int64_t n : {0, 1, 2, 7, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.ParallelFor(n, [&](int64_t i) { hits[static_cast<size_t>(i)]++; });
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1) << "n=" << n;
  }
}

TEST(ThreadPool, Nested_and_concurrent_calls_run_serially_instead_of_deadlocking) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(8, [&](int64_t) { pool.ParallelFor(10, [&](int64_t j) { total += j; }); });
  EXPECT_EQ(total.load(), 8 * 45);
  std::atomic<int64_t> a{0}, b{0};
  std::thread other([&] {
    for (int r = 0; r < 50; ++r) pool.ParallelFor(100, [&](int64_t) { a++; });
  });
  for (int r = 0; r < 50; ++r) pool.ParallelFor(100, [&](int64_t) { b++; });
  other.join();
  EXPECT_EQ(a.load(), 5000);
  EXPECT_EQ(b.load(), 5000);
}

TEST(ThreadPool, Single_thread_pool_runs_on_the_caller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.num_threads(), 1);
  const auto caller = std::this_thread::get_id();
  pool.ParallelFor(5, [&](int64_t) { EXPECT_EQ(std::this_thread::get_id(), caller); });
}

}  // namespace
}  // namespace tessel::cpu
