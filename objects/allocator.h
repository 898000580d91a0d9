// Allocators of tensor memory: a naive one (every request goes to the system) and a
// pooled one (size classes, freed buffers reused across calls).
//
// All buffers are 64-byte aligned. Allocators are shared (`std::shared_ptr`): a Storage
// keeps its allocator alive, so a tensor returned to the caller may outlive the VM that
// made it. Both implementations are thread-safe.
//
//   std::shared_ptr<Allocator> pool = MakePooledAllocator();
//   absl::StatusOr<Buffer> b = pool->Allocate(1 << 20);
//   pool->Free(*b);                                   // cached, served again next time
//   pool->stats().pool_hits
#ifndef DYNVM_OBJECTS_ALLOCATOR_H_
#define DYNVM_OBJECTS_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace dynvm {

// The alignment of every buffer and of every constant in the weights section.
inline constexpr size_t kAllocAlignment = 64;

// A block of memory. `size` is the capacity actually reserved (at least what was
// requested); allocators need it back in Free().
struct Buffer {
  void* data = nullptr;
  size_t size = 0;
};

struct AllocatorStats {
  int64_t bytes_live = 0;        // bytes handed out and not yet freed
  int64_t peak_bytes_live = 0;   // maximum of bytes_live
  int64_t bytes_cached = 0;      // freed bytes kept for reuse (pooled only)
  int64_t allocations = 0;       // Allocate() calls that succeeded
  int64_t pool_hits = 0;         // of those, served from the pool without the system
  int64_t system_allocations = 0;  // calls into the system allocator
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns at least `nbytes` (0 is allowed) of 64-byte-aligned memory, or
  // ResourceExhausted when the request exceeds the limit or the system refuses.
  virtual absl::StatusOr<Buffer> Allocate(size_t nbytes) = 0;
  // Returns a buffer obtained from this allocator's Allocate().
  virtual void Free(Buffer buffer) = 0;
  virtual AllocatorStats stats() const = 0;
  // Gives cached memory back to the system (pooled only).
  virtual void ReleaseCached() {}
};

struct AllocatorOptions {
  // The largest single request served; larger ones fail with ResourceExhausted. Requests
  // above SIZE_MAX / 2 are refused whatever this says.
  size_t max_allocation_bytes = size_t{64} << 30;
};

std::shared_ptr<Allocator> MakeNaiveAllocator(AllocatorOptions options = {});
std::shared_ptr<Allocator> MakePooledAllocator(AllocatorOptions options = {});

// The size class a pooled request of `nbytes` is rounded up to: multiples of 64 up to
// 1 KiB, then four classes per power of two (at most 25% waste). Exposed for tests.
size_t PoolSizeClass(size_t nbytes);

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_ALLOCATOR_H_
