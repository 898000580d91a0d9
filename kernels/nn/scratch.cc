#include "kernels/nn/scratch.h"

#include "kernels/internal/scratch.h"

namespace dynvm::kernels::nn {

void* ThreadScratchBytes(ScratchSlot slot, size_t bytes) {
  thread_local internal::ScratchBuffer buffers[2];
  return buffers[slot == ScratchSlot::kCall ? 0 : 1].Bytes(bytes);
}

}  // namespace dynvm::kernels::nn
