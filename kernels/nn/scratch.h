// Per-thread scratch memory for the temporaries of the neural-network kernels: im2col
// columns, attention score blocks, recurrent gate pre-activations, pooling and resize
// tables.
//
// Each slot is an internal::ScratchBuffer per thread (kernels/internal/scratch.h): it
// grows when a request exceeds every earlier one and is reused otherwise, so a server in
// steady state allocates nothing per call. Buffers live until their thread exits. Two slots keep the two lifetimes of a call apart: kCall for what
// the calling thread sets up before a ParallelFor and its tasks read, kTask for what one
// task uses alone (the calling thread runs tasks too).
//
//   float* tile = ThreadScratch<float>(ScratchSlot::kTask, rows * cols);
#ifndef DYNVM_KERNELS_NN_SCRATCH_H_
#define DYNVM_KERNELS_NN_SCRATCH_H_

#include <cstddef>

namespace dynvm::kernels::nn {

enum class ScratchSlot { kCall, kTask };

// At least `bytes` bytes, 64-byte aligned, owned by the calling thread and valid until
// its next request for the same slot. Never null.
void* ThreadScratchBytes(ScratchSlot slot, size_t bytes);

// `count` elements of `T` (trivial types) in the slot.
template <typename T>
T* ThreadScratch(ScratchSlot slot, size_t count) {
  return static_cast<T*>(ThreadScratchBytes(slot, count * sizeof(T)));
}

}  // namespace dynvm::kernels::nn

#endif  // DYNVM_KERNELS_NN_SCRATCH_H_
