// VirtualMachine: runs the functions of a shared Executable.
//
// A VM owns one contiguous register stack; each call's frame is a window on it, so a
// call allocates nothing once the stack has grown to the program's depth, and a tail
// call reuses the caller's frame (recursion that expresses a loop runs in constant
// space). A VM is used by one thread at a time; make one per thread and share the
// Executable between them.
//
// Arguments are checked against the function's signature before anything runs (count,
// dtype, rank, constant dims, and symbolic dims bound consistently across inputs).
// Every failure — bad arguments, Fatal, a kernel's error, the call-depth limit — ends
// the invocation with a status naming the function and instruction, releases what the
// frames held, and leaves the VM ready for the next call.
//
//   vm::VirtualMachine machine(exe);
//   absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(y)});
#ifndef DYNVM_VM_VIRTUAL_MACHINE_H_
#define DYNVM_VM_VIRTUAL_MACHINE_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "objects/allocator.h"
#include "objects/value.h"
#include "vm/executable.h"
#include "vm/profiler.h"

namespace dynvm::vm {

// Limits of one invocation. Exceeding one ends that invocation with an error naming the
// limit (DeadlineExceeded, ResourceExhausted) and leaves the VM ready for the next.
struct InvokeLimits {
  // The invocation ends once this time has passed. Checked before every kernel call,
  // call and backward jump (a running kernel is not interrupted: one kernel call is
  // the granularity), on the monotonic clock: the time left is taken when the
  // invocation starts. InfiniteFuture: no deadline.
  absl::Time deadline = absl::InfiniteFuture();
  // Tensor memory the invocation may hold at once: bytes that AllocStorage and
  // DeviceCopy took from the VM's allocator and that are still live, as the allocator
  // counts them. A request is checked at its asked size, so the last one may go over by
  // the allocator's rounding (the pooled one's size classes: at most 25%). Memory the
  // allocator serves to others meanwhile (another VM sharing it, a caller freeing an
  // old result) counts too. 0: no limit.
  int64_t max_memory_bytes = 0;
};

struct VmOptions {
  // Frames deeper than this end the invocation with ResourceExhausted.
  uint32_t max_call_depth = 10000;
  // Calls and backward jumps one invocation may make before it ends with
  // ResourceExhausted; bounds the time a hostile or buggy program can take. 0: no limit.
  int64_t max_steps = 0;
  // The limits of an Invoke that names none: each invocation gets `timeout` from its
  // start (InfiniteDuration: none) and `max_memory_bytes` (0: none).
  absl::Duration timeout = absl::InfiniteDuration();
  int64_t max_memory_bytes = 0;
  // Where kernels parallelise. Null: kernels::ThreadPool::Default().
  kernels::ThreadPool* thread_pool = nullptr;
  // Where AllocStorage gets memory. Null: a pooled allocator private to this VM.
  std::shared_ptr<Allocator> allocator;
  // Times every instruction and kernel call of every invocation (vm/profiler.h); must
  // outlive the VM. Null: the dispatch loop without any timing code.
  Profiler* profiler = nullptr;
};

// OK if `args` fit the signature of `function`: kinds, dtypes, ranks, constant dims,
// and each symbolic dim with one extent across the call. Else InvalidArgument naming
// the argument and what was expected.
absl::Status CheckArguments(const Function& function, absl::Span<const Value> args);

class VirtualMachine {
 public:
  explicit VirtualMachine(std::shared_ptr<const Executable> executable, VmOptions options = {});
  ~VirtualMachine();
  VirtualMachine(const VirtualMachine&) = delete;
  VirtualMachine& operator=(const VirtualMachine&) = delete;

  // Runs the function called `function` on `args`, within the limits of VmOptions.
  // NotFound for an unknown name; InvalidArgument when the arguments do not match the
  // signature; otherwise the status of the run.
  absl::StatusOr<Value> Invoke(std::string_view function, absl::Span<const Value> args);
  // The same within `limits` (a server's per-request deadline and memory budget).
  absl::StatusOr<Value> Invoke(std::string_view function, absl::Span<const Value> args,
                               const InvokeLimits& limits);
  // The same, by index into executable().functions().
  absl::StatusOr<Value> Invoke(uint32_t function_index, absl::Span<const Value> args);
  absl::StatusOr<Value> Invoke(uint32_t function_index, absl::Span<const Value> args,
                               const InvokeLimits& limits);

  const Executable& executable() const { return *executable_; }
  const std::shared_ptr<Allocator>& allocator() const { return allocator_; }
  // Registers reserved on the stack; grows only when a call goes deeper than before.
  size_t register_stack_capacity() const { return registers_.size(); }

 private:
  struct Frame;

  // The dispatch loop: runs the frame on top of frames_ until it returns; with
  // kProfile, telling options_.profiler when each instruction starts.
  template <bool kProfile>
  absl::StatusOr<Value> Run();
  // Grows the register stack to hold `count` registers (ResourceExhausted past the
  // limit). Invalidates pointers into it.
  absl::Status EnsureRegisters(size_t count);
  // Releases every register of every frame and drops the frames (after an error).
  void Unwind();
  absl::Status DepthError(const Function& callee) const;
  // The index of the function called `name`, or NotFound.
  absl::StatusOr<uint32_t> FindFunction(std::string_view name) const;
  // Runs the function within a deadline (steady-clock ns; INT64_MAX: none) and a
  // memory limit (0: none): what every Invoke comes down to.
  absl::StatusOr<Value> InvokeWithin(uint32_t function_index, absl::Span<const Value> args,
                                     int64_t started_ns, int64_t deadline_ns,
                                     int64_t max_memory_bytes);
  // Called when steps_left_ runs out: the step limit is reached, or it is time to look
  // at the clock (with a deadline, steps are handed out in slices).
  absl::Status NextStepSlice();
  // DeadlineExceeded once the invocation's deadline has passed.
  absl::Status CheckDeadline() const;
  // ResourceExhausted if `nbytes` more would take the invocation past its memory limit.
  absl::Status CheckMemory(size_t nbytes) const;
  // Points kernel_args_[0..count) at the tensors in `registers` (indices into `regs`),
  // or names the first register that holds no tensor.
  absl::Status GatherTensors(const kernels::BoundKernel& kernel, const uint32_t* registers,
                             uint32_t count, const Value* regs);

  std::shared_ptr<const Executable> executable_;
  VmOptions options_;
  std::shared_ptr<Allocator> allocator_;
  kernels::ThreadPool* thread_pool_;
  std::vector<Value> registers_;
  std::vector<Frame> frames_;
  // The current invocation's limits. Steps (calls and backward jumps) count down in
  // steps_left_, the fast path; steps_reserve_ holds the rest of max_steps.
  int64_t steps_left_ = 0;
  int64_t steps_reserve_ = 0;
  int64_t deadline_ns_ = 0;        // on the steady clock; INT64_MAX: none
  int64_t started_ns_ = 0;         // when the invocation began (steady), for messages
  int64_t memory_limit_ = 0;       // 0: none
  int64_t memory_baseline_ = 0;    // the allocator's live bytes when the invocation began
  std::vector<Value> scratch_;            // TailInvoke's arguments in flight
  std::vector<NDArrayObj*> kernel_args_;  // InvokePacked's tensors, sized at construction
  std::vector<Shape> shapes_;             // InvokeShapeFn's results, likewise
};

}  // namespace dynvm::vm

#endif  // DYNVM_VM_VIRTUAL_MACHINE_H_
