/* dynvm's C API: load an executable, run its functions on DLPack tensors, from C or
 * any language with a C FFI. Only C types cross it; objects are opaque handles.
 *
 *   DynvmExecutable* exe = NULL;
 *   if (dynvm_executable_load_file("exe.fbs", &exe) != DYNVM_OK) {
 *     fprintf(stderr, "%s\n", dynvm_last_error());
 *   }
 *   DynvmVm* vm = NULL;
 *   dynvm_vm_create(exe, NULL, &vm);               // one VM per thread, sharing exe
 *   DynvmValue in[2] = {dynvm_tensor_value(x), dynvm_tensor_value(y)};
 *   DynvmValue out[1];
 *   size_t num_out = 0;
 *   dynvm_vm_invoke(vm, "main", in, 2, out, 1, &num_out);
 *   ... out[0].tensor->dl_tensor ...
 *   dynvm_value_release(&out[0]);
 *   dynvm_vm_release(vm);
 *   dynvm_executable_release(exe);
 *
 * Conventions:
 * - Every function that can fail returns a DynvmStatus; DYNVM_OK is 0 and the others are
 *   the canonical codes of absl::Status (and gRPC). On failure, dynvm_last_error() holds
 *   the runtime's message for this thread, and out-parameters are left untouched
 *   (but where a function says otherwise).
 * - Every argument is checked: a null handle or pointer, an index out of range or a bad
 *   option is DYNVM_INVALID_ARGUMENT (DYNVM_NOT_FOUND for names), never a crash.
 * - Handles are reference counted: release functions accept NULL, and a VM keeps its
 *   executable, thread pool and allocator alive, so they may be released in any order.
 * - An executable is immutable and may be shared by VMs on any number of threads; a VM
 *   is used by one thread at a time.
 * - Tensors cross as DLPack (dlpack/dlpack.h, CPU, contiguous) without copying: input
 *   tensors are taken over by dynvm_vm_invoke, output tensors are handed to the caller.
 * - Strings returned as `const char*` live as long as the handle they came from.
 * - Structs passed in or out (DynvmVmOptions, DynvmValueSpec, ...) only grow at their
 *   end, and only with a new library version: rebuild against the header you link.
 * See docs/embedding.md.
 */
#ifndef DYNVM_CAPI_C_API_H_
#define DYNVM_CAPI_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "capi/version.h"
#include "dlpack/dlpack.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define DYNVM_C_EXPORT __attribute__((visibility("default")))
#else
#define DYNVM_C_EXPORT
#endif

/* The canonical status codes (absl::StatusCode); values are fixed. */
typedef enum DynvmStatus {
  DYNVM_OK = 0,
  DYNVM_CANCELLED = 1,
  DYNVM_UNKNOWN = 2,
  DYNVM_INVALID_ARGUMENT = 3,
  DYNVM_DEADLINE_EXCEEDED = 4,
  DYNVM_NOT_FOUND = 5,
  DYNVM_ALREADY_EXISTS = 6,
  DYNVM_PERMISSION_DENIED = 7,
  DYNVM_RESOURCE_EXHAUSTED = 8,
  DYNVM_FAILED_PRECONDITION = 9,
  DYNVM_ABORTED = 10,
  DYNVM_OUT_OF_RANGE = 11,
  DYNVM_UNIMPLEMENTED = 12,
  DYNVM_INTERNAL = 13,
  DYNVM_UNAVAILABLE = 14,
  DYNVM_DATA_LOSS = 15,
  DYNVM_UNAUTHENTICATED = 16
} DynvmStatus;

/* The message of the last call on this thread that failed ("" if none). Valid until
 * the next failing call on this thread. */
DYNVM_C_EXPORT const char* dynvm_last_error(void);
/* "OK", "INVALID_ARGUMENT", ... */
DYNVM_C_EXPORT const char* dynvm_status_name(DynvmStatus status);
/* The library's version, "MAJOR.MINOR.PATCH": DYNVM_VERSION_STRING of the header it was
 * built with (capi/version.h). */
DYNVM_C_EXPORT const char* dynvm_version(void);

typedef struct DynvmExecutable DynvmExecutable;
typedef struct DynvmVm DynvmVm;
typedef struct DynvmThreadPool DynvmThreadPool;
typedef struct DynvmAllocator DynvmAllocator;

/* ---- Executables ---------------------------------------------------------------- */

/* How an executable is loaded. */
typedef struct DynvmLoadOptions {
  /* Nonzero: load and run the executable's native code (machine code for its fused
   * programs, which the verifier cannot check: only for executables trusted as much as
   * this process). 0, the default: the fused programs run on the portable evaluator. */
  int trust_native_code;
} DynvmLoadOptions;

/* Fills `options` with the defaults (native code not trusted). */
DYNVM_C_EXPORT void dynvm_load_options_init(DynvmLoadOptions* options);

/* Maps the file read-only, verifies it and binds its kernels, with the default options. */
DYNVM_C_EXPORT DynvmStatus dynvm_executable_load_file(const char* path, DynvmExecutable** out);
/* The same from `size` bytes the caller owns (copied once; the caller may free them). */
DYNVM_C_EXPORT DynvmStatus dynvm_executable_load_memory(const void* data, size_t size,
                                                        DynvmExecutable** out);
/* The two with `options` (NULL: the defaults). */
DYNVM_C_EXPORT DynvmStatus dynvm_executable_load_file_with_options(const char* path,
                                                                   const DynvmLoadOptions* options,
                                                                   DynvmExecutable** out);
DYNVM_C_EXPORT DynvmStatus dynvm_executable_load_memory_with_options(const void* data, size_t size,
                                                                     const DynvmLoadOptions* options,
                                                                     DynvmExecutable** out);
/* *out = 1 when the executable has native code that was not loaded (not trusted), so
 * its fused programs run on the portable evaluator; else 0. */
DYNVM_C_EXPORT DynvmStatus dynvm_executable_native_code_ignored(const DynvmExecutable* exe, int* out);
DYNVM_C_EXPORT void dynvm_executable_release(DynvmExecutable* exe);

/* The kinds of values (the file format's, vm::ValueSpec::Kind). */
typedef enum DynvmValueKind {
  DYNVM_KIND_ANY = 0,
  DYNVM_KIND_TENSOR = 1,
  DYNVM_KIND_INT = 2,
  DYNVM_KIND_FLOAT = 3,
  DYNVM_KIND_BOOL = 4,
  DYNVM_KIND_TUPLE = 5
} DynvmValueKind;

/* One input or output of a function's signature. */
typedef struct DynvmValueSpec {
  const char* name;         /* the ONNX name, "%x", ... */
  const char* type;         /* the whole type as text: "tensor f32[batch, seq]", "int" */
  DynvmValueKind kind;
  DLDataType dtype;         /* tensors only */
  int32_t rank;             /* tensors only; -1 otherwise */
  const int64_t* dims;      /* `rank` extents; -1 where not a constant */
  const char* const* dim_symbols;  /* `rank` names: the symbol, "?" for any, "" for a constant */
  size_t num_fields;        /* tuples only: their fields are not described here (see `type`) */
} DynvmValueSpec;
/* A function's outputs are the leaves of its result, depth first, as dynvm_vm_invoke
 * returns them; an output of kind DYNVM_KIND_ANY may still flatten to several values. */

DYNVM_C_EXPORT DynvmStatus dynvm_executable_num_functions(const DynvmExecutable* exe,
                                                          size_t* out);
DYNVM_C_EXPORT DynvmStatus dynvm_executable_function_name(const DynvmExecutable* exe,
                                                          size_t function, const char** out);
/* The index of the function called `name`; DYNVM_NOT_FOUND if there is none. */
DYNVM_C_EXPORT DynvmStatus dynvm_executable_find_function(const DynvmExecutable* exe,
                                                          const char* name, size_t* out);
DYNVM_C_EXPORT DynvmStatus dynvm_function_num_inputs(const DynvmExecutable* exe,
                                                     size_t function, size_t* out);
DYNVM_C_EXPORT DynvmStatus dynvm_function_num_outputs(const DynvmExecutable* exe,
                                                      size_t function, size_t* out);
DYNVM_C_EXPORT DynvmStatus dynvm_function_input(const DynvmExecutable* exe, size_t function,
                                                size_t index, DynvmValueSpec* out);
DYNVM_C_EXPORT DynvmStatus dynvm_function_output(const DynvmExecutable* exe, size_t function,
                                                 size_t index, DynvmValueSpec* out);

/* ---- Thread pools and allocators ------------------------------------------------ */

/* A pool of `num_threads` threads in all, counting the caller (1: no workers); kernels
 * of the VMs given it parallelise there. `num_threads` in [1, 1024]. */
DYNVM_C_EXPORT DynvmStatus dynvm_thread_pool_create(int32_t num_threads, DynvmThreadPool** out);
DYNVM_C_EXPORT void dynvm_thread_pool_release(DynvmThreadPool* pool);

typedef enum DynvmAllocatorKind {
  DYNVM_ALLOCATOR_POOLED = 0,  /* size classes; freed buffers are reused */
  DYNVM_ALLOCATOR_NAIVE = 1    /* every request goes to the system */
} DynvmAllocatorKind;

/* An allocator of tensor memory that VMs may share (it is thread-safe). A request over
 * `max_allocation_bytes` fails with DYNVM_RESOURCE_EXHAUSTED; 0 means the default
 * (64 GiB). */
DYNVM_C_EXPORT DynvmStatus dynvm_allocator_create(DynvmAllocatorKind kind,
                                                  uint64_t max_allocation_bytes,
                                                  DynvmAllocator** out);
DYNVM_C_EXPORT void dynvm_allocator_release(DynvmAllocator* allocator);

typedef struct DynvmAllocatorStats {
  int64_t bytes_live;
  int64_t peak_bytes_live;
  int64_t bytes_cached;
  int64_t allocations;
  int64_t pool_hits;
  int64_t system_allocations;
} DynvmAllocatorStats;
DYNVM_C_EXPORT DynvmStatus dynvm_allocator_stats(const DynvmAllocator* allocator,
                                                 DynvmAllocatorStats* out);

/* ---- Virtual machines ----------------------------------------------------------- */

typedef struct DynvmVmOptions {
  uint32_t max_call_depth;     /* frames deeper than this: DYNVM_RESOURCE_EXHAUSTED */
  int64_t max_steps;           /* calls + backward jumps per invocation; 0: no limit */
  int64_t timeout_us;          /* per invocation: DYNVM_DEADLINE_EXCEEDED; 0: none */
  int64_t max_memory_bytes;    /* tensor memory one invocation may hold; 0: no limit */
  DynvmThreadPool* thread_pool;  /* NULL: the process-wide pool */
  DynvmAllocator* allocator;     /* NULL: a pooled allocator private to the VM */
} DynvmVmOptions;

/* Fills `options` with the defaults (those of vm::VmOptions). */
DYNVM_C_EXPORT void dynvm_vm_options_init(DynvmVmOptions* options);

/* A VM running `exe`; `options` may be NULL for the defaults. */
DYNVM_C_EXPORT DynvmStatus dynvm_vm_create(DynvmExecutable* exe, const DynvmVmOptions* options,
                                           DynvmVm** out);
DYNVM_C_EXPORT void dynvm_vm_release(DynvmVm* vm);

/* An argument or result: a tensor, or an unboxed int, float or bool. */
typedef struct DynvmValue {
  DynvmValueKind kind;  /* DYNVM_KIND_TENSOR, _INT, _FLOAT or _BOOL */
  DLManagedTensor* tensor;
  int64_t i;            /* ints, and bools as 0/1 */
  double f;
} DynvmValue;

DYNVM_C_EXPORT DynvmValue dynvm_tensor_value(DLManagedTensor* tensor);
DYNVM_C_EXPORT DynvmValue dynvm_int_value(int64_t i);
DYNVM_C_EXPORT DynvmValue dynvm_float_value(double f);
DYNVM_C_EXPORT DynvmValue dynvm_bool_value(int b);
/* Calls a tensor value's deleter (once: the value is emptied) and does nothing for
 * others; NULL is allowed. */
DYNVM_C_EXPORT void dynvm_value_release(DynvmValue* value);

/* Runs `function` on `args`. Tensor arguments are taken over whatever the outcome:
 * dynvm calls each one's deleter when it no longer needs the memory (after the call,
 * or later while a result still views it); each must be a DLManagedTensor of its own
 * (the same one twice is DYNVM_INVALID_ARGUMENT). Programs do not write their
 * arguments. The result is flattened depth-first (the fields of a tuple, or of any
 * ADT, in order) into `results`; the caller owns each result and releases it with
 * dynvm_value_release. Result tensors are read-only: they may view the executable's
 * weights (mapped read-only from its file) or an argument. `num_results` receives the count; when it exceeds
 * `max_results`, nothing is stored in `results` and the call fails with
 * DYNVM_OUT_OF_RANGE. Arguments that do not fit the signature fail with
 * DYNVM_INVALID_ARGUMENT naming the argument and what was expected; every failure
 * leaves the VM ready for the next call. */
DYNVM_C_EXPORT DynvmStatus dynvm_vm_invoke(DynvmVm* vm, const char* function,
                                           const DynvmValue* args, size_t num_args,
                                           DynvmValue* results, size_t max_results,
                                           size_t* num_results);

/* dynvm_vm_invoke within limits of this call, instead of the VM's options: it may run
 * `timeout_us` (DYNVM_DEADLINE_EXCEEDED past it) and hold `max_memory_bytes` of tensor
 * memory (DYNVM_RESOURCE_EXHAUSTED beyond); 0 means no limit. A server's per-request
 * budget. */
DYNVM_C_EXPORT DynvmStatus dynvm_vm_invoke_with_limits(DynvmVm* vm, const char* function,
                                                       const DynvmValue* args, size_t num_args,
                                                       DynvmValue* results, size_t max_results,
                                                       size_t* num_results, int64_t timeout_us,
                                                       int64_t max_memory_bytes);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* DYNVM_CAPI_C_API_H_ */
