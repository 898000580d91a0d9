// ScratchBuffer's growth, and the per-thread slots.
#include "kernels/scratch.h"

#include <algorithm>

namespace dynvm::kernels {

void* ScratchBuffer::Bytes(size_t bytes) {
  if (data_ == nullptr || bytes > capacity_) {
    // Geometric growth, so that a slowly rising size does not reallocate every call.
    const size_t capacity = std::max({bytes, 2 * capacity_, size_t{4096}});
    data_.reset(static_cast<std::byte*>(::operator new[](capacity, kAlignment)));
    capacity_ = capacity;
  }
  return data_.get();
}

void* ThreadScratchBytes(ScratchSlot slot, size_t bytes) {
  thread_local ScratchBuffer buffers[2];
  return buffers[slot == ScratchSlot::kCall ? 0 : 1].Bytes(bytes);
}

}  // namespace dynvm::kernels
