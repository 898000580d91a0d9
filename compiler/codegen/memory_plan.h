// Memory planning: which storage each operator output lives in. The generator gives
// every output a storage of its own; this pass makes outputs that are never alive at the
// same time share memory.
//
// It plans the tensors that stay inside the function: allocated in a storage of their
// own and only read by kernels (invoke_packed, invoke_shape_fn, dim, shape_of). A tensor
// that escapes (returned, passed to a function, put in an ADT or closure, moved) keeps
// its own storage, since the callee or the data structure may hold it past the point
// this function is done with it.
//
// - Static sizes coalesce into one arena per call: `alloc_storage` of the arena's size
//   on entry, each tensor at an offset in it. Offsets come from the tensors' live
//   ranges (liveness over the bytecode): largest first, each at the lowest 64-byte
//   aligned offset clear of every tensor it is alive together with.
// - Symbolic sizes: tensors whose byte counts are the same register (shape lowering
//   computes each symbolic size once, so equal expressions are one register) share a
//   storage when their live ranges are disjoint and the storage is allocated on every
//   path to them (its allocation dominates theirs).
//
//   before                                    after
//   alloc_storage s1, 3072                    alloc_storage arena, 3072   (on entry)
//   alloc_tensor  t1, s1, 0, f32, [768]       alloc_tensor t1, arena, 0, f32, [768]
//   ... t1 read for the last time ...         ...
//   alloc_storage s2, 3072                    alloc_tensor t2, arena, 0, f32, [768]
//   alloc_tensor  t2, s2, 0, f32, [768]
//
// Works on virtual registers, before register allocation; leaves dead size constants for
// RemoveDeadCode.
#ifndef DYNVM_COMPILER_CODEGEN_MEMORY_PLAN_H_
#define DYNVM_COMPILER_CODEGEN_MEMORY_PLAN_H_

#include <cstdint>

#include "compiler/codegen/function_code.h"

namespace dynvm::compiler {

struct MemoryPlanStats {
  int64_t static_tensors = 0;  // planned into the arena
  int64_t static_bytes = 0;    // their sizes added up: what they took before
  int64_t arena_bytes = 0;     // what they take now
  int64_t symbolic_tensors = 0;   // planned tensors of symbolic size
  int64_t symbolic_storages = 0;  // the storages they now use
  MemoryPlanStats& operator+=(const MemoryPlanStats& o) {
    static_tensors += o.static_tensors;
    static_bytes += o.static_bytes;
    arena_bytes += o.arena_bytes;
    symbolic_tensors += o.symbolic_tensors;
    symbolic_storages += o.symbolic_storages;
    return *this;
  }
};

MemoryPlanStats PlanMemory(FunctionCode& f);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_CODEGEN_MEMORY_PLAN_H_
