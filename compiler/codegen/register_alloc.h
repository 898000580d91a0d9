// Register allocation: the generator gives every value a register of its own; this pass
// gives registers whose values are never live at the same time the same number, so a
// frame is as small as the most values alive at once, and releases objects (tensors,
// storages, ADTs, closures) where they die, so memory returns to the pool as soon as the
// program is done with it rather than when the frame ends.
//
//   before                                after
//   r3 = ...; r4 = f(r3); r5 = g(r4)      r1 = ...; r2 = f(r1); kill r1; r1 = g(r2); kill r2
//
// Steps: instructions without effects whose results nobody reads go (repeated until none
// is left); registers are colored greedily in the order they are first written, each
// taking the lowest number no register it interferes with holds (two registers
// interfere when one is written while the other is live, or read by the same
// instruction); parameters keep registers 0..num_params-1; then `kill` follows the last
// read of every object register, at the start of a branch for objects live into a
// jump but dead on its target, and after the write of an object nobody reads.
#ifndef DYNVM_COMPILER_CODEGEN_REGISTER_ALLOC_H_
#define DYNVM_COMPILER_CODEGEN_REGISTER_ALLOC_H_

#include "compiler/codegen/function_code.h"

namespace dynvm::compiler {

// Removes unread results of pure instructions (function_code.h's IsPure).
void RemoveDeadCode(FunctionCode& f);

// Renumbers the registers of `f` as above and inserts kills; `f.num_registers` becomes
// the frame size.
void AllocateRegisters(FunctionCode& f);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_CODEGEN_REGISTER_ALLOC_H_
