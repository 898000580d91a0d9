// Scratch memory for a kernel's temporaries (packed GEMM panels, im2col columns,
// attention score blocks, recurrent gate pre-activations, pooling and resize tables),
// kept across calls so that a server in steady state allocates nothing per call.
//
// A ScratchBuffer grows when a request exceeds every earlier one, geometrically, and is
// reused otherwise. It is not shared between threads: a kernel keeps its own
// `thread_local` one, or takes one of the two per-thread slots below. The slots keep
// the two lifetimes of a call apart: kCall for what the calling thread sets up before
// a ParallelFor and its tasks read, kTask for what one task uses alone (the calling
// thread runs tasks too).
//
//   thread_local ScratchBuffer pack;
//   float* panel = pack.As<float>(kc * nr);
//   float* tile = ThreadScratch<float>(ScratchSlot::kTask, rows * cols);
#ifndef DYNVM_KERNELS_SCRATCH_H_
#define DYNVM_KERNELS_SCRATCH_H_

#include <cstddef>
#include <memory>
#include <new>

namespace dynvm::kernels {

class ScratchBuffer {
 public:
  // At least `bytes` bytes, 64-byte aligned, valid until the next request. What an
  // earlier request wrote is kept only if the buffer did not grow. Never null.
  void* Bytes(size_t bytes);

  // `count` elements of the trivial type `T`.
  template <typename T>
  T* As(size_t count) {
    return static_cast<T*>(Bytes(count * sizeof(T)));
  }

 private:
  static constexpr std::align_val_t kAlignment{64};
  struct AlignedDelete {
    void operator()(std::byte* p) const { ::operator delete[](p, kAlignment); }
  };

  std::unique_ptr<std::byte[], AlignedDelete> data_;
  size_t capacity_ = 0;
};

// The calling thread's two scratch slots.
enum class ScratchSlot { kCall, kTask };

// At least `bytes` bytes, 64-byte aligned, owned by the calling thread and valid until
// its next request for the same slot. Never null. The buffers live until their thread
// exits.
void* ThreadScratchBytes(ScratchSlot slot, size_t bytes);

// `count` elements of `T` (trivial types) in the slot.
template <typename T>
T* ThreadScratch(ScratchSlot slot, size_t count) {
  return static_cast<T*>(ThreadScratchBytes(slot, count * sizeof(T)));
}

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_SCRATCH_H_
