// The argument checks every kernel family shares (kernels/internal/checks.h).
#include "kernels/internal/checks.h"

#include <algorithm>
#include <limits>
#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace dynvm::kernels::internal {

int64_t GrainForBytes(int64_t bytes_per_unit) {
  return std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, bytes_per_unit));
}

absl::StatusOr<int> NormalizeAxis(std::string_view op, int64_t axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: axis %d out of range for rank %d", op, axis, rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

absl::Status ValidateShape(std::string_view op, absl::Span<const int64_t> shape) {
  absl::Status valid = ShapeNumElements(shape).status();
  if (valid.ok()) return valid;
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", op, valid.message()));
}

absl::Status CheckOutputShape(std::string_view op, const NDArrayObj& out,
                              absl::Span<const int64_t> expected, int index) {
  if (absl::MakeConstSpan(out.shape()) == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: output %d has shape %s, expected %s", op,
                                                    index, ShapeToString(out.shape()),
                                                    ShapeToString(expected)));
}

absl::Status CheckOutput(std::string_view op, const NDArrayObj& out, DType dtype,
                         absl::Span<const int64_t> shape, int index) {
  if (out.dtype() != dtype) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: output %d has dtype %s, expected %s", op,
                                                      index, DTypeName(out.dtype()),
                                                      DTypeName(dtype)));
  }
  return CheckOutputShape(op, out, shape, index);
}

absl::Status CheckDType(std::string_view op, std::string_view what, const NDArrayObj& t,
                        DType expected) {
  if (t.dtype() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s has dtype %s, expected %s", op, what,
                                                    DTypeName(t.dtype()), DTypeName(expected)));
}

absl::Status UnsupportedDType(std::string_view op, std::string_view what, DType dtype,
                              std::string_view expected) {
  return absl::InvalidArgumentError(absl::StrFormat("unsupported dtype %s for %s %s: expected %s",
                                                    DTypeName(dtype), op, what, expected));
}

absl::Status CheckIndexDType(std::string_view op, std::string_view what, const NDArrayObj& t) {
  if (t.dtype() == DType::kI32 || t.dtype() == DType::kI64) return absl::OkStatus();
  return UnsupportedDType(op, what, t.dtype(), "i32 or i64");
}

absl::Status CheckIndexCapacity(std::string_view op, std::string_view what, DType dtype,
                                int64_t extent) {
  if (dtype == DType::kI64 || extent <= std::numeric_limits<int32_t>::max()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s of dtype i32 cannot index an extent of %d", op, what, extent));
}

absl::Status CheckArity(std::string_view op, std::string_view what, int got, int expected) {
  if (got == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: expected %d %s, got %d", op, expected, what, got));
}

absl::Status CheckScalar(std::string_view op, std::string_view what, const NDArrayObj& t) {
  if (t.ndim() == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s must be a scalar (rank 0), got %s", op,
                                                    what, ShapeToString(t.shape())));
}

absl::StatusOr<DType> GetDTypeAttr(const Attrs& attrs, std::string_view name, DType fallback) {
  if (!attrs.contains(name)) return fallback;
  DYNVM_ASSIGN_OR_RETURN(std::string text, GetStringAttr(attrs, name));
  absl::StatusOr<DType> dtype = ParseDType(text);
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute '%s': %s", name, dtype.status().message()));
  }
  return *dtype;
}

}  // namespace dynvm::kernels::internal
