// det: the determinant of each square matrix of x's last two axes, f32 or f64, by LU
// decomposition with partial pivoting in double (numpy's method: LAPACK's getrf), so
// that a singular matrix gives exactly 0 once a pivot column is all zeros. A 0 x 0
// matrix's determinant is 1. Matrices run in parallel.
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/reduce/reduce.h"

namespace dynvm::kernels {
namespace {

absl::StatusOr<std::shared_ptr<const void>> BindDet(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {}));
  return std::shared_ptr<const void>();
}

absl::StatusOr<Shape> DetShape(const void*, absl::Span<NDArrayObj* const> inputs) {
  const NDArrayObj& x = *inputs[0];
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kF64) {
    return internal::UnsupportedDType("det", "x", x.dtype(), "f32 or f64");
  }
  const int rank = x.ndim();
  if (rank < 2 || x.shape()[rank - 1] != x.shape()[rank - 2]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "det: x must be [..., n, n] (square matrices), got shape %s", ShapeToString(x.shape())));
  }
  return Shape(x.shape().begin(), x.shape().end() - 2);
}

// The determinant of the n x n matrix `a` (row-major), destroyed in the process.
double Determinant(int64_t n, double* a) {
  double det = 1.0;
  for (int64_t k = 0; k < n; ++k) {
    int64_t pivot = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::fabs(a[i * n + k]) > std::fabs(a[pivot * n + k])) pivot = i;
    }
    if (a[pivot * n + k] == 0.0) return 0.0;
    if (pivot != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[pivot * n + j]);
      det = -det;
    }
    const double d = a[k * n + k];
    det *= d;
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = a[i * n + k] / d;
      for (int64_t j = k + 1; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
    }
  }
  return det;
}

template <typename T>
void DetAll(const NDArrayObj& x, const NDArrayObj& out, ThreadPool& pool) {
  const int64_t n = x.shape()[x.ndim() - 1];
  const int64_t count = out.num_elements();
  const T* in = x.data_as<T>();
  T* dets = out.data_as<T>();
  pool.ParallelFor(count, internal::GrainForBytes(sizeof(double) * n * n * n), [&](int64_t b, int64_t e) {
    std::vector<double> a(n * n);
    for (int64_t m = b; m < e; ++m) {
      for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<double>(in[m * n * n + i]);
      dets[m] = static_cast<T>(Determinant(n, a.data()));
    }
  });
}

absl::Status DetKernel(const KernelCall& call) {
  const NDArrayObj& x = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, DetShape(nullptr, call.inputs()));
  const NDArrayObj& out = *call.args[1];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput("det", out, x.dtype(), shape));
  if (x.dtype() == DType::kF32) {
    DetAll<float>(x, out, *call.pool);
  } else {
    DetAll<double>(x, out, *call.pool);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterDetKernel(KernelRegistry& registry) {
  return registry.Register({"det", 1, 1, DetKernel, BindDet, internal::SingleShapeFn<DetShape>});
}

}  // namespace dynvm::kernels
