// Dense layers on packed weights: a dense whose weight is a constant [n, k] reads it
// as the GEMM micro-kernel's panels, packed once at compile time.
//
//   nn.dense(%x, meta[relay.Constant][0], %b, activation="relu")
// becomes
//   nn.contrib_dense_pack(%x, layout_transform(meta[relay.Constant][0], src_layout="NC",
//                         dst_layout="NC16n"), %b, activation="relu", units=n)
// and constant folding turns the layout_transform into the packed constant. The kernel
// then skips packing B on every call (docs/kernels.md: packed B runs closer to peak).
// Fusion's gemm(%x, W, %b, %r, trans_b=1, residual=1, activation=a), which packs B on
// every call, becomes add(the packed dense with %b and a, %r).
//
// Requires: checked types (the weight's shape). The result needs constant folding
// (and type inference for the new calls). Only f32 constant weights are packed, and
// only those whose packed form constant folding stores (kMaxFoldedElements); a weight
// that is not a constant is left alone (packing it would cost as much as the kernel's
// own packing).
#ifndef DYNVM_COMPILER_PASSES_PACK_DENSE_H_
#define DYNVM_COMPILER_PASSES_PACK_DENSE_H_

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

absl::StatusOr<Module> PackDenseWeights(const Module& module);
absl::StatusOr<Expr> PackDenseWeights(const Expr& expr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_PACK_DENSE_H_
