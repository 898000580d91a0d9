// The bytecode verifier: everything the interpreter relies on, checked once before
// anything runs, so that the dispatch loop only debug-asserts.
//
// A spec that passes has, in every function: a frame that holds its parameters;
// instructions that decode with lengths matching their formats; register operands
// inside the frame; constant, function and kernel indices inside their tables; jumps
// that land on instruction starts; call arities that match the callee; InvokePacked
// arities that match the kernel-table entry; valid dtypes, ranks and non-negative static
// dims; and a last instruction that does not fall through (ret, fatal, goto,
// tail_invoke). Fatal names a string constant. Function names are unique. A source
// map names instruction starts, in increasing order, and sources in the table.
//
// And every register an instruction reads is defined on every path from the function's
// entry to it, so no reachable instruction reads a register that was never written or was
// killed. Parameters (registers 0..num_params-1) are defined at the entry; 'W' operands
// define their register (invoke and invoke_closure when the call returns); kill undefines
// it; 'R' operands and '+' lists are read, except the last B registers of
// invoke_shape_fn's list, which it writes (invoke_packed's outputs are filled in place, so
// they are reads). Unreachable code is not checked. For example
//
//   .func @main(c: bool) -> (int) regs 2
//     if %0, then, join          ; pc 0
//   then:
//     load_consti %1, 7          ; pc 4
//   join:
//     ret %1                     ; pc 8
//   .end
//
// is refused: `function 'main': instruction 8 (ret): reads register 1, which is not
// defined on every path to it`. The analysis is bounded: see kMaxDefinednessBits and
// kMaxDefinednessSweeps.
#ifndef DYNVM_VM_VERIFIER_H_
#define DYNVM_VM_VERIFIER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "vm/executable_spec.h"

namespace dynvm::vm {

// The largest frame a function may declare.
inline constexpr uint32_t kMaxRegisters = 1u << 16;

// The most state the defined-register analysis keeps for one function: a bitset of the
// frame's registers (rounded up to 64) for each basic block, 2^28 bits (32 MiB). A
// function whose basic blocks x registers exceed it is refused with InvalidArgument before
// the bitsets are allocated (65536 registers allow 4096 blocks, 64 registers 4M blocks).
inline constexpr uint64_t kMaxDefinednessBits = uint64_t{1} << 28;

// The time the analysis may take, in sweeps over a function's basic blocks in code order,
// each visiting at most every block once. A jump forward is followed within a sweep, a
// jump backward in the next: code without backward jumps (all that the compiler emits)
// settles in one sweep, a loop nest in about its depth plus one. A function that needs
// more (a chain of backward jumps, one sweep per link) is refused with InvalidArgument,
// so the analysis costs at most this many passes over the code and the bitsets.
inline constexpr uint64_t kMaxDefinednessSweeps = 16;

// Returns OK or InvalidArgument naming the function, the instruction offset, and what
// was wrong (`function 'main': instruction 12 (invoke): register 40 out of range: frame
// has 8`).
absl::Status VerifyExecutable(const ExecutableSpec& spec);

}  // namespace dynvm::vm

#endif  // DYNVM_VM_VERIFIER_H_
