// The intra-op thread pool: every index covered exactly once, chunks respect the grain,
// concurrent and nested submissions fall back to the caller instead of blocking.
#include "kernels/thread_pool.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace dynvm::kernels {
namespace {

TEST(ThreadPoolTest, CoversEveryIndexOnce) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.num_threads(), 3);
  for (int64_t n : {0, 1, 7, 100, 10'007}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.ParallelFor(n, /*grain=*/4, [&](int64_t begin, int64_t end) {
      ASSERT_LE(0, begin);
      ASSERT_LT(begin, end);
      ASSERT_LE(end, n);
      for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPoolTest, ChunksAreAtLeastTheGrain) {
  ThreadPool pool(2);
  std::atomic<int> short_chunks{0};
  pool.ParallelFor(1000, /*grain=*/100, [&](int64_t begin, int64_t end) {
    if (end - begin < 100 && end != 1000) short_chunks.fetch_add(1);
  });
  EXPECT_EQ(short_chunks.load(), 0);
}

TEST(ThreadPoolTest, UsesWorkerThreads) {
  ThreadPool pool(2);
  std::atomic<int> on_other_thread{0};
  const std::thread::id caller = std::this_thread::get_id();
  for (int round = 0; round < 50 && on_other_thread.load() == 0; ++round) {
    pool.ParallelFor(64, 1, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() != caller) on_other_thread.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
  }
  EXPECT_GT(on_other_thread.load(), 0);
}

TEST(ThreadPoolTest, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.ParallelFor(8, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pool.ParallelFor(10, 1, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
    }
  });
  EXPECT_EQ(total.load(), 80);
}

TEST(ThreadPoolTest, ConcurrentSubmittersAllFinish) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        pool.ParallelFor(100, 8, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
      }
    });
  }
  for (std::thread& t : submitters) t.join();
  EXPECT_EQ(total.load(), 4 * 200 * 100);
}

TEST(ThreadPoolTest, SingleThreadPoolRunsInline) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.num_threads(), 1);
  int calls = 0;
  pool.ParallelFor(1000, 1, [&](int64_t begin, int64_t end) {
    ++calls;
    EXPECT_EQ(begin, 0);
    EXPECT_EQ(end, 1000);
  });
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace dynvm::kernels
