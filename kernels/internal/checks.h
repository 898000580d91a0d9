// The argument checks and shape-function plumbing every kernel family shares: axes,
// output shapes and dtypes, arity, index dtypes, the dtype attribute, and the grain of
// a memory-bound ParallelFor. Every error is InvalidArgument; its message names the
// operator, what was wrong and what was expected:
//
//   DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis("softmax", -1, x.ndim()));
//   DYNVM_RETURN_IF_ERROR(CheckOutput("take", out, x.dtype(), shape));
#ifndef DYNVM_KERNELS_INTERNAL_CHECKS_H_
#define DYNVM_KERNELS_INTERNAL_CHECKS_H_

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/kernel.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::internal {

// A ParallelFor grain giving each chunk about 64 KiB of traffic when one unit of work
// moves `bytes_per_unit` bytes (at least 1).
int64_t GrainForBytes(int64_t bytes_per_unit);

// `axis` normalised into [0, rank) (negative counts from the end), or InvalidArgument
// "`op`: axis A out of range for rank R".
absl::StatusOr<int> NormalizeAxis(std::string_view op, int64_t axis, int rank);

// InvalidArgument "`op`: ..." unless `shape` is a valid tensor shape (rank, extents,
// element count: see ShapeNumElements).
absl::Status ValidateShape(std::string_view op, absl::Span<const int64_t> shape);
// InvalidArgument unless output `index` of `op` has shape `expected`.
absl::Status CheckOutputShape(std::string_view op, const NDArrayObj& out,
                              absl::Span<const int64_t> expected, int index = 0);
// InvalidArgument unless output `index` of `op` has dtype `dtype` and shape `shape`.
absl::Status CheckOutput(std::string_view op, const NDArrayObj& out, DType dtype,
                         absl::Span<const int64_t> shape, int index = 0);
// InvalidArgument unless `t` (called `what` in the message) has dtype `expected`.
absl::Status CheckDType(std::string_view op, std::string_view what, const NDArrayObj& t,
                        DType expected);
// InvalidArgument "unsupported dtype X for `op` `what`: expected `expected`".
absl::Status UnsupportedDType(std::string_view op, std::string_view what, DType dtype,
                              std::string_view expected);
// InvalidArgument unless `t` is i32 or i64.
absl::Status CheckIndexDType(std::string_view op, std::string_view what, const NDArrayObj& t);
// InvalidArgument unless every index up to `extent` fits index output `what` of
// `dtype` (i32 or i64).
absl::Status CheckIndexCapacity(std::string_view op, std::string_view what, DType dtype,
                                int64_t extent);
// InvalidArgument unless a variadic kernel was given `expected` `what` (inputs or
// outputs).
absl::Status CheckArity(std::string_view op, std::string_view what, int got, int expected);

// InvalidArgument unless `t` has rank 0 (a scalar input called `what`).
absl::Status CheckScalar(std::string_view op, std::string_view what, const NDArrayObj& t);

// Computes the one output shape of a kernel from its bound state and inputs; shared
// by the kernel's shape function and its wrapper, which checks the output against it.
using InferShapeFn = absl::StatusOr<Shape> (*)(const void* state,
                                               absl::Span<NDArrayObj* const> inputs);

// The ShapeFn of a single-output kernel whose shape `kInfer` computes.
template <InferShapeFn kInfer>
absl::Status SingleShapeFn(const ShapeCall& call) {
  absl::StatusOr<Shape> shape = kInfer(call.state, call.input_span());
  if (!shape.ok()) return shape.status();
  call.output_shapes[0] = *std::move(shape);
  return absl::OkStatus();
}

// The dtype attribute `name` (a short or long dtype name), or `fallback` if absent.
absl::StatusOr<DType> GetDTypeAttr(const Attrs& attrs, std::string_view name, DType fallback);

}  // namespace dynvm::kernels::internal

#endif  // DYNVM_KERNELS_INTERNAL_CHECKS_H_
