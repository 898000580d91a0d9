// The bytecode verifier: everything the interpreter relies on, checked once before
// anything runs, so that the dispatch loop only debug-asserts.
//
// A spec that passes has, in every function: a frame that holds its parameters;
// instructions that decode with lengths matching their formats; register operands
// inside the frame; constant, function and kernel indices inside their tables; jumps
// that land on instruction starts; call arities that match the callee; InvokePacked
// arities that match the kernel-table entry; valid dtypes, ranks and non-negative static
// dims; and a last instruction that does not fall through (ret, fatal, goto,
// tail_invoke). Fatal names a string constant. Function names are unique.
#ifndef DYNVM_VM_VERIFIER_H_
#define DYNVM_VM_VERIFIER_H_

#include "absl/status/status.h"
#include "vm/executable.h"

namespace dynvm::vm {

// The largest frame a function may declare.
inline constexpr uint32_t kMaxRegisters = 1u << 16;

// Returns OK or InvalidArgument naming the function, the instruction offset, and what
// was wrong (`function 'main', instruction 12 (invoke): register 40 out of range: frame
// has 8`).
absl::Status VerifyExecutable(const ExecutableSpec& spec);

}  // namespace dynvm::vm

#endif  // DYNVM_VM_VERIFIER_H_
