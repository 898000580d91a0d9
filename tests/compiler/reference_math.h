// Double-precision references for the compiler's end-to-end tests (tests/compiler/e2e,
// tests/compiler/relay_text): a matrix product and a row softmax over row-major
// std::vector<double>.
#ifndef DYNVM_TESTS_COMPILER_REFERENCE_MATH_H_
#define DYNVM_TESTS_COMPILER_REFERENCE_MATH_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace dynvm::compiler::testing {

// a [m, k] · b [k, n], or · bᵀ for b [n, k] when `transpose_b`.
inline std::vector<double> MatMul(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t k,
                                  int64_t n, bool transpose_b) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * (transpose_b ? b[j * k + p] : b[p * n + j]);
    }
  }
  return c;
}

// Softmax of each row of `s` [rows, cols], in place.
inline void SoftmaxRows(std::vector<double>& s, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    double max = -INFINITY, sum = 0;
    for (int64_t j = 0; j < cols; ++j) max = std::max(max, s[i * cols + j]);
    for (int64_t j = 0; j < cols; ++j) sum += (s[i * cols + j] = std::exp(s[i * cols + j] - max));
    for (int64_t j = 0; j < cols; ++j) s[i * cols + j] /= sum;
  }
}

}  // namespace dynvm::compiler::testing

#endif  // DYNVM_TESTS_COMPILER_REFERENCE_MATH_H_
