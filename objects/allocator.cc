// The naive and pooled tensor-memory allocators (objects/allocator.h).
#include "objects/allocator.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm {
namespace {

size_t RoundUp(size_t n, size_t multiple) { return (n + multiple - 1) / multiple * multiple; }

// No request above this is served whatever the options say: rounding a larger one up to
// its size class would wrap around to a tiny buffer.
constexpr size_t kLargestRequest = std::numeric_limits<size_t>::max() / 2;

// The effective limit of `options`.
size_t Limit(const AllocatorOptions& options) {
  return std::min(options.max_allocation_bytes, kLargestRequest);
}

absl::Status TooLarge(size_t nbytes, size_t limit) {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "allocation of %d bytes exceeds the limit of %d bytes", nbytes, limit));
}

// Asks the system for `size` bytes (a multiple of kAllocAlignment, at least one unit so
// that zero-byte tensors still get a distinct, valid pointer).
absl::StatusOr<void*> SystemAllocate(size_t size) {
  void* data = std::aligned_alloc(kAllocAlignment, std::max(size, kAllocAlignment));
  if (data == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("out of memory allocating %d bytes", size));
  }
  return data;
}

class NaiveAllocator final : public Allocator {
 public:
  explicit NaiveAllocator(AllocatorOptions options) : options_(options) {}

  absl::StatusOr<Buffer> Allocate(size_t nbytes) override {
    if (nbytes > Limit(options_)) {
      return TooLarge(nbytes, Limit(options_));
    }
    size_t size = RoundUp(nbytes, kAllocAlignment);
    absl::StatusOr<void*> data = SystemAllocate(size);
    if (!data.ok()) return data.status();
    std::lock_guard lock(mu_);
    stats_.allocations++;
    stats_.system_allocations++;
    stats_.bytes_live += static_cast<int64_t>(size);
    stats_.peak_bytes_live = std::max(stats_.peak_bytes_live, stats_.bytes_live);
    return Buffer{*data, size};
  }

  void Free(Buffer buffer) override {
    std::free(buffer.data);
    std::lock_guard lock(mu_);
    stats_.bytes_live -= static_cast<int64_t>(buffer.size);
  }

  AllocatorStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

 private:
  const AllocatorOptions options_;
  // std::mutex rather than absl::Mutex: Debian's Abseil is not built for
  // ThreadSanitizer, which then cannot see absl::Mutex, while it intercepts pthreads.
  mutable std::mutex mu_;
  AllocatorStats stats_ ABSL_GUARDED_BY(mu_);
};

class PooledAllocator final : public Allocator {
 public:
  explicit PooledAllocator(AllocatorOptions options) : options_(options) {}
  ~PooledAllocator() override { ReleaseCached(); }

  absl::StatusOr<Buffer> Allocate(size_t nbytes) override {
    if (nbytes > Limit(options_)) {
      return TooLarge(nbytes, Limit(options_));
    }
    size_t size = PoolSizeClass(nbytes);
    {
      std::lock_guard lock(mu_);
      auto it = free_lists_.find(size);
      if (it != free_lists_.end() && !it->second.empty()) {
        void* data = it->second.back();
        it->second.pop_back();
        stats_.bytes_cached -= static_cast<int64_t>(size);
        stats_.pool_hits++;
        CountAllocation(size);
        return Buffer{data, size};
      }
    }
    absl::StatusOr<void*> data = SystemAllocate(size);
    if (!data.ok()) return data.status();
    std::lock_guard lock(mu_);
    stats_.system_allocations++;
    CountAllocation(size);
    return Buffer{*data, size};
  }

  void Free(Buffer buffer) override {
    std::lock_guard lock(mu_);
    free_lists_[buffer.size].push_back(buffer.data);
    stats_.bytes_live -= static_cast<int64_t>(buffer.size);
    stats_.bytes_cached += static_cast<int64_t>(buffer.size);
  }

  AllocatorStats stats() const override {
    std::lock_guard lock(mu_);
    return stats_;
  }

  void ReleaseCached() override {
    std::lock_guard lock(mu_);
    for (auto& [size, list] : free_lists_) {
      for (void* data : list) std::free(data);
      list.clear();
    }
    stats_.bytes_cached = 0;
  }

 private:
  void CountAllocation(size_t size) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    stats_.allocations++;
    stats_.bytes_live += static_cast<int64_t>(size);
    stats_.peak_bytes_live = std::max(stats_.peak_bytes_live, stats_.bytes_live);
  }

  const AllocatorOptions options_;
  // std::mutex rather than absl::Mutex: Debian's Abseil is not built for
  // ThreadSanitizer, which then cannot see absl::Mutex, while it intercepts pthreads.
  mutable std::mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_lists_ ABSL_GUARDED_BY(mu_);
  AllocatorStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

size_t PoolSizeClass(size_t nbytes) {
  constexpr size_t kSmall = 1024;
  if (nbytes <= kSmall) return RoundUp(std::max<size_t>(nbytes, 1), kAllocAlignment);
  // Four classes per power of two: the step is a quarter of the largest power of two
  // not above nbytes.
  size_t step = std::bit_floor(nbytes) / 4;
  return RoundUp(nbytes, step);
}

std::shared_ptr<Allocator> MakeNaiveAllocator(AllocatorOptions options) {
  return std::make_shared<NaiveAllocator>(options);
}

std::shared_ptr<Allocator> MakePooledAllocator(AllocatorOptions options) {
  return std::make_shared<PooledAllocator>(options);
}

}  // namespace dynvm
