// The operators the compiler knows: for each, under its Relay name (the name of the
// kernel that computes it, kernels/), the type relation that type inference applies to
// a call, over symbolic dims.
//
//   const OpDef* dense = FindOp("nn.dense");
//   absl::StatusOr<Type> out = dense->relation(
//       {"nn.dense", {Type::Tensor(DType::kF32, {n, 768}), Type::Tensor(DType::kF32, {3072, 768})},
//        attrs});
//   // Tensor[(n, 3072), float32]
//
// A relation is sound for every value of the symbols: when the kernel's shape function
// would accept concrete shapes, the relation's type, with the symbols bound to them,
// has the kernel's output shape (tests/compiler/ops/relations_test.cc checks this for
// every operator, against the kernels, at random shapes). Where the types cannot tell
// an extent, the relation says `?`, and the shape function decides at run time. A call
// that no binding of the symbols could make valid is InvalidArgument naming the
// operator and what did not fit.
#ifndef DYNVM_COMPILER_OPS_OP_REGISTRY_H_
#define DYNVM_COMPILER_OPS_OP_REGISTRY_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/type.h"
#include "kernels/kernel.h"

namespace dynvm::compiler {

// The argument types and attributes of one call.
struct OpCall {
  std::string_view op;
  absl::Span<const Type> args;
  const kernels::Attrs& attrs;
};

using TypeRelation = absl::StatusOr<Type> (*)(const OpCall& call);

struct OpDef {
  std::string_view name;
  int min_args, max_args;
  TypeRelation relation;
  // Code generation emits bytecode for it rather than calling a kernel (the reference
  // operators: compiler/ops/reference.cc).
  bool bytecode = false;
  // Evaluating it may do more than compute its value (compiler/passes/effects.h).
  bool effects = false;
};

// The operator `name`, or null.
const OpDef* FindOp(std::string_view name);
// Every operator, grouped by family.
absl::Span<const OpDef> AllOps();

// Checks the number of arguments against `def` and applies its relation.
absl::StatusOr<Type> InferCallType(const OpDef& def, absl::Span<const Type> args,
                                   const kernels::Attrs& attrs);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_OPS_OP_REGISTRY_H_
