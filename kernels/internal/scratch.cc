#include "kernels/internal/scratch.h"

#include <algorithm>

namespace dynvm::kernels::internal {

void* ScratchBuffer::Bytes(size_t bytes) {
  if (data_ == nullptr || bytes > capacity_) {
    // Geometric growth, so that a slowly rising size does not reallocate every call.
    const size_t capacity = std::max({bytes, 2 * capacity_, size_t{4096}});
    data_.reset(static_cast<std::byte*>(::operator new[](capacity, kAlignment)));
    capacity_ = capacity;
  }
  return data_.get();
}

}  // namespace dynvm::kernels::internal
