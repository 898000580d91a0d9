// Per-thread free lists of object memory by 16-byte size class; see the header.
#include "objects/object_memory.h"

#include <array>
#include <new>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DYNVM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define DYNVM_ASAN 1
#endif
#ifdef DYNVM_ASAN
#include <sanitizer/asan_interface.h>
#define DYNVM_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define DYNVM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define DYNVM_POISON(p, n) ((void)(p), (void)(n))
#define DYNVM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace dynvm::internal {
namespace {

constexpr size_t kClasses = kMaxCachedBytes / kObjectMemoryAlignment;

// Class c holds blocks of (c + 1) * 16 bytes.
size_t ClassOf(size_t size) { return size == 0 ? 0 : (size - 1) / kObjectMemoryAlignment; }
size_t ClassBytes(size_t c) { return (c + 1) * kObjectMemoryAlignment; }

// One thread's cached blocks. The free lists are outside the blocks, so that cached
// blocks can stay poisoned.
struct Cache {
  std::array<std::vector<void*>, kClasses> free;

  ~Cache() {
    for (size_t c = 0; c < kClasses; ++c) {
      for (void* p : free[c]) {
        DYNVM_UNPOISON(p, ClassBytes(c));
        ::operator delete(p);
      }
    }
    destroyed = true;
  }

  // Trivially destructible, so readable while and after the thread's destructors run
  // (an object released by another thread-local's destructor finds no cache).
  static thread_local bool destroyed;
};

thread_local bool Cache::destroyed = false;

Cache* ThisThreadCache() {
  if (Cache::destroyed) return nullptr;
  static thread_local Cache cache;
  return &cache;
}

}  // namespace

void* AllocateObjectMemory(size_t size) {
  if (size > kMaxCachedBytes) return ::operator new(size);
  const size_t c = ClassOf(size);
  if (Cache* cache = ThisThreadCache(); cache != nullptr && !cache->free[c].empty()) {
    void* p = cache->free[c].back();
    cache->free[c].pop_back();
    DYNVM_UNPOISON(p, ClassBytes(c));
    return p;
  }
  return ::operator new(ClassBytes(c));
}

void FreeObjectMemory(void* p, size_t size) noexcept {
  if (p == nullptr) return;
  if (size > kMaxCachedBytes) {
    ::operator delete(p);
    return;
  }
  const size_t c = ClassOf(size);
  Cache* cache = ThisThreadCache();
  if (cache == nullptr || cache->free[c].size() >= kMaxCachedPerClass) {
    ::operator delete(p);
    return;
  }
  try {
    cache->free[c].push_back(p);  // grows only while a thread's peak grows
  } catch (const std::bad_alloc&) {
    ::operator delete(p);
    return;
  }
  DYNVM_POISON(p, ClassBytes(c));
}

}  // namespace dynvm::internal
