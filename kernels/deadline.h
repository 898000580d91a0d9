// A deadline for the kernels a thread runs, so that a time limit ends a run within a few
// milliseconds even inside one long kernel (docs/security.md, "Limits").
//
// The VM sets its invocation's deadline on its thread (ScopedKernelDeadline);
// ThreadPool::ParallelFor carries it to every thread running the call's chunks. Long
// kernels (the GEMM, ...) ask KernelDeadlinePassed() between blocks of work and return
// early, their output unfinished: the VM, which looks at the deadline after every
// kernel, then fails the invocation with DEADLINE_EXCEEDED, so nothing reads it. Only
// kernels whose blocks are independent stop early (one whose later phase indexes by
// what an earlier one computed must not skip that phase).
//
//   for (int64_t block = 0; block < blocks; ++block) {
//     if (KernelDeadlinePassed()) return;
//     ...
//   }
#ifndef DYNVM_KERNELS_DEADLINE_H_
#define DYNVM_KERNELS_DEADLINE_H_

#include <chrono>
#include <cstdint>

namespace dynvm::kernels {

inline constexpr int64_t kNoKernelDeadline = INT64_MAX;

// Nanoseconds on the steady clock, the one deadlines are kept on (a step of the wall
// clock neither ends runs early nor extends them).
inline int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace internal {
inline thread_local int64_t kernel_deadline_ns = kNoKernelDeadline;
}  // namespace internal

// The deadline of the kernels this thread runs (steady-clock ns), or kNoKernelDeadline.
inline int64_t CurrentKernelDeadline() { return internal::kernel_deadline_ns; }

// Whether this thread's kernel deadline has passed. A thread-local read when there is
// none; a clock read (~20 ns) when there is.
inline bool KernelDeadlinePassed() {
  const int64_t deadline = internal::kernel_deadline_ns;
  return deadline != kNoKernelDeadline && SteadyNowNs() > deadline;
}

// Sets this thread's kernel deadline for the scope, restoring the previous one after.
class ScopedKernelDeadline {
 public:
  explicit ScopedKernelDeadline(int64_t deadline_ns) : saved_(internal::kernel_deadline_ns) {
    internal::kernel_deadline_ns = deadline_ns;
  }
  ~ScopedKernelDeadline() { internal::kernel_deadline_ns = saved_; }
  ScopedKernelDeadline(const ScopedKernelDeadline&) = delete;
  ScopedKernelDeadline& operator=(const ScopedKernelDeadline&) = delete;

 private:
  int64_t saved_;
};

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_DEADLINE_H_
