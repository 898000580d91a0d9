// Constant folding: operator calls whose arguments are all constants (or tuples of
// constants, as concatenate takes) are evaluated at
// compile time with the kernels, and projections of tuple literals are resolved.
//
//   %0 = layout_transform(meta[relay.Constant][0], src_layout="NC", dst_layout="NC16n");
//   nn.contrib_dense_pack(%x, %0)
// becomes
//   nn.contrib_dense_pack(%x, meta[relay.Constant][1])     // the weight, packed once
//
// One run folds a call that several functions share (by operator, attributes and
// argument values) once: the executable stores its value once.
//
// Requires: nothing; keeps checked types. A call whose kernel fails on its constant
// arguments is left for run time (it may sit in a branch never taken), and so is one
// whose result would exceed kMaxFoldedElements elements (folding it would only move a
// large allocation from run time into the executable).
#ifndef DYNVM_COMPILER_PASSES_FOLD_CONSTANT_H_
#define DYNVM_COMPILER_PASSES_FOLD_CONSTANT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

absl::StatusOr<Module> FoldConstants(const Module& module);
// The same on one expression (for tests and other passes).
absl::StatusOr<Expr> FoldConstants(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_FOLD_CONSTANT_H_
