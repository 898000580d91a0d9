// What the relations of every operator family share: argument checks, numpy
// broadcasting of symbolic shapes, axes, attributes with the operator's name in their
// errors; and the tables of each family, which op_registry.cc joins.
#ifndef DYNVM_COMPILER_OPS_INTERNAL_RELATIONS_H_
#define DYNVM_COMPILER_OPS_INTERNAL_RELATIONS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ops/op_registry.h"

namespace dynvm::compiler::internal {

// Argument `i` of the call, which must be a tensor (of one of `dtypes`, if given). A
// string tensor only where the op's kernel takes strings (KernelDef::takes_strings).
absl::StatusOr<Type> TensorArg(const OpCall& call, int i, std::string_view what,
                               absl::Span<const DType> dtypes = {});
// "[n, 768]".
std::string ShapeText(const std::vector<Dim>& shape);
// InvalidArgument "op: message".
absl::Status OpError(const OpCall& call, absl::string_view message);

// numpy broadcasting of two symbolic shapes (see op_registry.h on soundness): equal
// dims stay; a 1 takes the other; a constant > 1 wins over a symbol or `?`; two
// different symbols give `?`; two different constants > 1 are an error.
absl::StatusOr<std::vector<Dim>> BroadcastShapes(const OpCall& call, const std::vector<Dim>& a,
                                                 const std::vector<Dim>& b);

// The f32 tensor of the broadcast of the shapes of the first `inputs` arguments, f32
// tensors read by a fused elementwise program (fused_elementwise's, or a kernel's
// `prologue`, whose other arguments follow them); the attributes are checked by binding
// the call's kernel, so that a bad program fails at compile time with the message
// loading the executable would give.
absl::StatusOr<Type> FusedProgramRel(const OpCall& call, size_t inputs);

// The more informative of two dims required to be equal (a constant over a symbol over
// `?`).
Dim Unify(const Dim& a, const Dim& b);

// `axis` in [-rank, rank) made non-negative; an error naming the attribute otherwise.
absl::StatusOr<int> NormalizeAxis(const OpCall& call, int64_t axis, int rank,
                                  std::string_view attr = "axis");

// Attribute getters that prefix the kernels' messages with the operator.
absl::StatusOr<int64_t> IntAttr(const OpCall& call, std::string_view name, int64_t fallback);
absl::StatusOr<std::vector<int64_t>> IntsAttr(const OpCall& call, std::string_view name,
                                              std::vector<int64_t> fallback);
// Whether the attribute is present.
bool HasAttr(const OpCall& call, std::string_view name);
// Binds the call's kernel (one output) with its attributes, so that a bad one fails at
// compile time with the message loading the executable would give, prefixed with the
// operator.
absl::Status CheckKernelAttrs(const OpCall& call);

// The tables of the families.
absl::Span<const OpDef> ElementwiseOps();
absl::Span<const OpDef> ReduceOps();
absl::Span<const OpDef> NnOps();
absl::Span<const OpDef> TransformOps();
absl::Span<const OpDef> CreationOps();
absl::Span<const OpDef> ConvOps();
absl::Span<const OpDef> DetectionOps();
absl::Span<const OpDef> TextOps();
absl::Span<const OpDef> ReferenceOps();

}  // namespace dynvm::compiler::internal

#endif  // DYNVM_COMPILER_OPS_INTERNAL_RELATIONS_H_
