// Memory for objects: per-thread caches of freed blocks by size class, so that the
// objects a VM makes and drops on every inference (tensor and storage headers, tuples,
// views) come back from a cache instead of the heap. In steady state an inference then
// makes no heap allocation at all (tests/compiler/e2e/steady_state_test.cc).
//
//   void* mem = internal::AllocateObjectMemory(sizeof(T));
//   T* obj = new (mem) T(...);
//   ...
//   obj->~T();
//   internal::FreeObjectMemory(obj, sizeof(T));
//
// A block freed on one thread goes to that thread's cache, whichever thread made it, so
// no cache is ever shared; each keeps at most kMaxCachedPerClass blocks per class and
// returns the rest to the heap. Objects a thread makes are normally dropped by the same
// thread (the VM's results by the caller that invoked it); where one thread makes and
// another drops, the maker keeps allocating and the dropper's cache fills to its bound
// (about 4 MiB of blocks per class at most) and stays there until the thread exits. Blocks of more than kMaxCachedBytes bypass the caches.
// Under AddressSanitizer a cached block is poisoned, so a use after free is still
// reported.
#ifndef DYNVM_OBJECTS_OBJECT_MEMORY_H_
#define DYNVM_OBJECTS_OBJECT_MEMORY_H_

#include <cstddef>

namespace dynvm::internal {

inline constexpr size_t kObjectMemoryAlignment = 16;  // what operator new guarantees
inline constexpr size_t kMaxCachedBytes = 512;
inline constexpr size_t kMaxCachedPerClass = 4096;

// At least `size` bytes aligned to kObjectMemoryAlignment; throws std::bad_alloc as
// operator new does.
void* AllocateObjectMemory(size_t size);

// Returns a block of AllocateObjectMemory(`size`) (the same `size`).
void FreeObjectMemory(void* p, size_t size) noexcept;

}  // namespace dynvm::internal

#endif  // DYNVM_OBJECTS_OBJECT_MEMORY_H_
