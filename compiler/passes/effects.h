// Which expressions may have effects, for the passes that would otherwise merge or
// drop them (cse, dead_code). Every operator is pure but those whose OpDef says so,
// Relay's reference operators (ref, ref_read, ref_write: compiler/ops/reference.cc); a call of a function
// is pure unless the module uses references anywhere, since the function may reach one.
//
//   const bool impure = UsesReferences(module);
//   if (MayHaveEffects(call, impure)) ...   // keep it, once, where it is
#ifndef DYNVM_COMPILER_PASSES_EFFECTS_H_
#define DYNVM_COMPILER_PASSES_EFFECTS_H_

#include "compiler/ir/expr.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

// Whether a function of `module` calls a reference operator.
bool UsesReferences(const Module& module);
// The same within `expr`.
bool UsesReferences(const Expr& expr);

// Whether evaluating `e` itself (not its operands) may have an effect: a call of a
// reference operator, or, when `module_uses_references`, a call of anything but an
// operator or a constructor.
bool MayHaveEffects(const Expr& e, bool module_uses_references);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_EFFECTS_H_
