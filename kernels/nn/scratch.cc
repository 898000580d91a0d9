#include "kernels/nn/scratch.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>

namespace dynvm::kernels::nn {
namespace {

constexpr std::align_val_t kAlignment{64};

struct AlignedDelete {
  void operator()(std::byte* p) const { ::operator delete[](p, kAlignment); }
};

struct Buffer {
  std::unique_ptr<std::byte[], AlignedDelete> data;
  size_t capacity = 0;
};

}  // namespace

void* ThreadScratchBytes(ScratchSlot slot, size_t bytes) {
  thread_local Buffer buffers[2];
  Buffer& buffer = buffers[slot == ScratchSlot::kCall ? 0 : 1];
  if (buffer.data == nullptr || bytes > buffer.capacity) {
    // Grow geometrically so that a slowly rising size does not reallocate every call.
    const size_t capacity = std::max({bytes, 2 * buffer.capacity, size_t{4096}});
    buffer.data.reset(static_cast<std::byte*>(::operator new[](capacity, kAlignment)));
    buffer.capacity = capacity;
  }
  return buffer.data.get();
}

}  // namespace dynvm::kernels::nn
