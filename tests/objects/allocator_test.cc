// Tests of objects/allocator.h: the naive and pooled allocators' statistics, pooled
// reuse, the size classes, the allocation limit, zero-byte requests, ReleaseCached, and
// a multi-threaded smoke test.
#include "objects/allocator.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm {
namespace {

using ::testing::HasSubstr;

bool Aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAllocAlignment == 0; }

TEST(NaiveAllocatorTest, StatsTrackLiveAndPeak) {
  auto alloc = MakeNaiveAllocator();
  absl::StatusOr<Buffer> a = alloc->Allocate(100);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(Aligned(a->data));
  EXPECT_EQ(a->size, 128u);  // rounded to the alignment
  std::memset(a->data, 1, a->size);
  absl::StatusOr<Buffer> b = alloc->Allocate(64);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size, 64u);
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.bytes_live, 192);
  EXPECT_EQ(s.peak_bytes_live, 192);
  EXPECT_EQ(s.allocations, 2);
  EXPECT_EQ(s.system_allocations, 2);
  EXPECT_EQ(s.pool_hits, 0);
  EXPECT_EQ(s.bytes_cached, 0);

  alloc->Free(*a);
  s = alloc->stats();
  EXPECT_EQ(s.bytes_live, 64);
  EXPECT_EQ(s.peak_bytes_live, 192);
  EXPECT_EQ(s.bytes_cached, 0);  // naive keeps nothing

  absl::StatusOr<Buffer> c = alloc->Allocate(64);
  ASSERT_TRUE(c.ok());
  s = alloc->stats();
  EXPECT_EQ(s.system_allocations, 3);  // every request goes to the system
  EXPECT_EQ(s.pool_hits, 0);
  EXPECT_EQ(s.peak_bytes_live, 192);
  alloc->Free(*b);
  alloc->Free(*c);
  EXPECT_EQ(alloc->stats().bytes_live, 0);
}

TEST(NaiveAllocatorTest, ZeroBytes) {
  auto alloc = MakeNaiveAllocator();
  absl::StatusOr<Buffer> a = alloc->Allocate(0);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_NE(a->data, nullptr);
  EXPECT_TRUE(Aligned(a->data));
  absl::StatusOr<Buffer> b = alloc->Allocate(0);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(a->data, b->data);  // distinct pointers
  alloc->Free(*a);
  alloc->Free(*b);
  EXPECT_EQ(alloc->stats().bytes_live, 0);
  EXPECT_EQ(alloc->stats().allocations, 2);
}

TEST(PooledAllocatorTest, ReusesAFreedBufferOfTheSameClass) {
  auto alloc = MakePooledAllocator();
  absl::StatusOr<Buffer> a = alloc->Allocate(5000);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(Aligned(a->data));
  EXPECT_EQ(a->size, PoolSizeClass(5000));
  std::memset(a->data, 0x5a, a->size);
  void* first = a->data;
  alloc->Free(*a);
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.bytes_live, 0);
  EXPECT_EQ(s.bytes_cached, static_cast<int64_t>(PoolSizeClass(5000)));

  // A different request in the same class is served from the pool.
  ASSERT_EQ(PoolSizeClass(4900), PoolSizeClass(5000));
  absl::StatusOr<Buffer> b = alloc->Allocate(4900);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data, first);
  s = alloc->stats();
  EXPECT_EQ(s.pool_hits, 1);
  EXPECT_EQ(s.allocations, 2);
  EXPECT_EQ(s.system_allocations, 1);
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.bytes_live, static_cast<int64_t>(PoolSizeClass(5000)));

  // A request in another class is not.
  absl::StatusOr<Buffer> c = alloc->Allocate(100);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->data, first);
  s = alloc->stats();
  EXPECT_EQ(s.pool_hits, 1);
  EXPECT_EQ(s.system_allocations, 2);
  EXPECT_EQ(s.peak_bytes_live, static_cast<int64_t>(PoolSizeClass(5000) + 128));
  alloc->Free(*b);
  alloc->Free(*c);
  EXPECT_EQ(alloc->stats().bytes_live, 0);
}

TEST(PooledAllocatorTest, DifferentClassMissesThePool) {
  auto alloc = MakePooledAllocator();
  Buffer a = *alloc->Allocate(64);
  alloc->Free(a);
  Buffer b = *alloc->Allocate(65);  // class 128
  EXPECT_EQ(alloc->stats().pool_hits, 0);
  EXPECT_EQ(alloc->stats().bytes_cached, 64);
  alloc->Free(b);
  EXPECT_EQ(alloc->stats().bytes_cached, 192);
}

TEST(PooledAllocatorTest, ZeroBytes) {
  auto alloc = MakePooledAllocator();
  absl::StatusOr<Buffer> a = alloc->Allocate(0);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_NE(a->data, nullptr);
  EXPECT_TRUE(Aligned(a->data));
  EXPECT_EQ(a->size, PoolSizeClass(0));
  alloc->Free(*a);
  EXPECT_EQ(alloc->stats().bytes_live, 0);
}

TEST(PooledAllocatorTest, ReleaseCached) {
  auto alloc = MakePooledAllocator();
  Buffer a = *alloc->Allocate(2048);
  Buffer b = *alloc->Allocate(64);
  Buffer keep = *alloc->Allocate(64);
  alloc->Free(a);
  alloc->Free(b);
  EXPECT_EQ(alloc->stats().bytes_cached, 2048 + 64);
  alloc->ReleaseCached();
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.bytes_cached, 0);
  EXPECT_EQ(s.bytes_live, 64);  // live buffers are untouched
  Buffer c = *alloc->Allocate(2048);
  EXPECT_EQ(alloc->stats().pool_hits, 0);  // the pool was emptied
  EXPECT_EQ(alloc->stats().system_allocations, 4);
  alloc->Free(c);
  alloc->Free(keep);
  // The destructor releases the rest (ASan would report a leak otherwise).
}

TEST(AllocatorTest, NaiveReleaseCachedIsANoOp) {
  auto alloc = MakeNaiveAllocator();
  Buffer a = *alloc->Allocate(64);
  alloc->ReleaseCached();
  EXPECT_EQ(alloc->stats().bytes_live, 64);
  alloc->Free(a);
}

class LimitTest : public ::testing::TestWithParam<bool> {
 protected:
  std::shared_ptr<Allocator> Make(AllocatorOptions options) {
    return GetParam() ? MakePooledAllocator(options) : MakeNaiveAllocator(options);
  }
};

TEST_P(LimitTest, MaxAllocationBytes) {
  auto alloc = Make(AllocatorOptions{.max_allocation_bytes = 4096});
  absl::StatusOr<Buffer> ok = alloc->Allocate(4096);
  ASSERT_TRUE(ok.ok()) << ok.status();
  absl::StatusOr<Buffer> too_big = alloc->Allocate(4097);
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(too_big.status().message(),
              HasSubstr("allocation of 4097 bytes exceeds the limit of 4096 bytes"));
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.allocations, 1);  // the failure is not counted
  EXPECT_EQ(s.bytes_live, static_cast<int64_t>(ok->size));
  alloc->Free(*ok);
}

TEST_P(LimitTest, DefaultLimitRefusesHugeRequests) {
  auto alloc = Make({});
  absl::StatusOr<Buffer> huge = alloc->Allocate(std::numeric_limits<size_t>::max());
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_P(LimitTest, RoundingUpAHugeRequestDoesNotWrap) {
  // With no limit in the options, a request within a rounding step of SIZE_MAX must not
  // wrap around to a tiny buffer: it is refused (no system could serve it anyway).
  auto alloc = Make(AllocatorOptions{.max_allocation_bytes = std::numeric_limits<size_t>::max()});
  for (size_t n : {std::numeric_limits<size_t>::max(), std::numeric_limits<size_t>::max() - 40,
                   std::numeric_limits<size_t>::max() / 2 + 1}) {
    absl::StatusOr<Buffer> b = alloc->Allocate(n);
    ASSERT_FALSE(b.ok()) << n << " gave a buffer of " << b->size;
    EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(b.status().message(), HasSubstr(absl::StrFormat("allocation of %d bytes", n)));
  }
  EXPECT_EQ(alloc->stats().allocations, 0);
}

INSTANTIATE_TEST_SUITE_P(NaiveAndPooled, LimitTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Pooled" : "Naive";
                         });

TEST(PoolSizeClassTest, SmallRequestsRoundToSixtyFour) {
  EXPECT_EQ(PoolSizeClass(0), 64u);
  EXPECT_EQ(PoolSizeClass(1), 64u);
  EXPECT_EQ(PoolSizeClass(64), 64u);
  EXPECT_EQ(PoolSizeClass(65), 128u);
  EXPECT_EQ(PoolSizeClass(1000), 1024u);
  EXPECT_EQ(PoolSizeClass(1024), 1024u);
}

TEST(PoolSizeClassTest, FourClassesPerPowerOfTwo) {
  EXPECT_EQ(PoolSizeClass(1025), 1280u);
  EXPECT_EQ(PoolSizeClass(1280), 1280u);
  EXPECT_EQ(PoolSizeClass(1281), 1536u);
  EXPECT_EQ(PoolSizeClass(2047), 2048u);
  EXPECT_EQ(PoolSizeClass(2049), 2560u);
  EXPECT_EQ(PoolSizeClass((size_t{1} << 20) + 1), (size_t{1} << 20) + (size_t{1} << 18));
}

TEST(PoolSizeClassTest, Properties) {
  std::mt19937_64 rng(20240611);
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 5000; ++n) sizes.push_back(n);
  for (int shift = 10; shift < 48; ++shift) {
    const size_t p = size_t{1} << shift;
    for (size_t n : {p - 1, p, p + 1, p + p / 4, p + p / 4 + 1}) sizes.push_back(n);
  }
  for (int i = 0; i < 20000; ++i) sizes.push_back(rng() >> (16 + rng() % 40));
  for (size_t n : sizes) {
    const size_t c = PoolSizeClass(n);
    ASSERT_GE(c, n) << n;
    ASSERT_EQ(c % kAllocAlignment, 0u) << n;
    ASSERT_GT(c, 0u) << n;
    if (n > 1024) {
      // At most 25% waste: c - n <= n / 4, written without division rounding.
      ASSERT_LE(4 * (c - n), n) << n << " -> " << c;
    }
    // Idempotent: a class is its own class.
    ASSERT_EQ(PoolSizeClass(c), c) << n;
  }
}

TEST(PoolSizeClassTest, MonotonicWithFewClasses) {
  size_t prev = 0;
  std::vector<size_t> classes;
  for (size_t n = 0; n <= (size_t{1} << 16); ++n) {
    const size_t c = PoolSizeClass(n);
    ASSERT_GE(c, prev) << n;
    if (c != prev) classes.push_back(c);
    prev = c;
  }
  // 16 classes up to 1 KiB, then 4 for each of the 6 octaves up to 64 KiB.
  EXPECT_EQ(classes.size(), 16u + 4u * 6u);
}

TEST(PooledAllocatorTest, ThreadSafetySmoke) {
  auto alloc = MakePooledAllocator();
  constexpr int kThreads = 4;
  constexpr int kIterations = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([alloc, t] {
      std::mt19937 rng(1234 + t);
      std::vector<Buffer> held;
      for (int i = 0; i < kIterations; ++i) {
        if (held.size() < 8 && (held.empty() || rng() % 2 == 0)) {
          const size_t n = 1 + rng() % 3000;
          absl::StatusOr<Buffer> b = alloc->Allocate(n);
          if (!b.ok()) continue;  // checked after the join through the stats
          // Write the whole buffer with a thread-specific byte: a buffer handed to two
          // threads at once would show up as a mismatch below or as an ASan report.
          std::memset(b->data, t + 1, b->size);
          held.push_back(*b);
        } else {
          Buffer b = held.back();
          held.pop_back();
          const auto* p = static_cast<const unsigned char*>(b.data);
          for (size_t k = 0; k < b.size; k += 61) {
            if (p[k] != t + 1) std::abort();
          }
          alloc->Free(b);
        }
      }
      for (const Buffer& b : held) alloc->Free(b);
    });
  }
  for (std::thread& th : threads) th.join();
  AllocatorStats s = alloc->stats();
  EXPECT_EQ(s.bytes_live, 0);
  EXPECT_GT(s.allocations, 0);
  EXPECT_EQ(s.allocations, s.pool_hits + s.system_allocations);
  EXPECT_GT(s.pool_hits, 0);
  EXPECT_GT(s.bytes_cached, 0);
  EXPECT_LE(s.peak_bytes_live, int64_t{kThreads} * 8 * static_cast<int64_t>(PoolSizeClass(3000)));
}

TEST(NaiveAllocatorTest, ThreadSafetySmoke) {
  auto alloc = MakeNaiveAllocator();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([alloc, t] {
      std::mt19937 rng(99 + t);
      for (int i = 0; i < 1000; ++i) {
        Buffer b = *alloc->Allocate(rng() % 500);
        alloc->Free(b);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(alloc->stats().bytes_live, 0);
  EXPECT_EQ(alloc->stats().allocations, 4000);
}

}  // namespace
}  // namespace dynvm
