// A growable, 64-byte-aligned buffer for a kernel's temporaries (packed GEMM panels,
// im2col columns, attention score blocks...), kept across calls so that a steady state
// allocates nothing: it grows when a request exceeds every earlier one, geometrically,
// and is reused otherwise. Not shared between threads: kernels keep one per thread.
//
//   thread_local internal::ScratchBuffer pack;
//   float* panel = pack.As<float>(kc * nr);
#ifndef DYNVM_KERNELS_INTERNAL_SCRATCH_H_
#define DYNVM_KERNELS_INTERNAL_SCRATCH_H_

#include <cstddef>
#include <memory>
#include <new>

namespace dynvm::kernels::internal {

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

}  // namespace dynvm::kernels::internal

#endif  // DYNVM_KERNELS_INTERNAL_SCRATCH_H_
