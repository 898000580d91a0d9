// Helpers shared by the tests of the neural-network kernels (kernels/nn/): tensors as
// doubles, comparison with a reference under a stated tolerance, calls with outputs the
// test chooses (for output-shape errors and in-place calls), and error expectations.
#ifndef DYNVM_TESTS_KERNELS_NN_TEST_UTIL_H_
#define DYNVM_TESTS_KERNELS_NN_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {

// The elements of `t`, row-major, as doubles.
inline std::vector<double> Values(const NDArray& t) {
  std::vector<double> v(static_cast<size_t>(t->num_elements()));
  for (int64_t i = 0; i < t->num_elements(); ++i) v[i] = ElementAsDouble(*t, i);
  return v;
}

// A uniform integer in [lo, hi].
inline int64_t RandomInt(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// A shape `out` broadcasts from: some extents set to 1, some leading axes dropped.
inline std::vector<int64_t> BroadcastFrom(const std::vector<int64_t>& out, std::mt19937& rng) {
  std::vector<int64_t> shape = out;
  for (int64_t& d : shape) {
    if (RandomInt(rng, 0, 2) == 0) d = 1;
  }
  const int64_t drop =
      RandomInt(rng, 0, 2) == 0 ? RandomInt(rng, 0, static_cast<int64_t>(shape.size())) : 0;
  return std::vector<int64_t>(shape.begin() + drop, shape.end());
}

// The number of elements of `shape`.
inline int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Expects `got` to hold `want.size()` elements with |got - want| <= tol[i] each, where
// tol[i] = abs_tol + rel_tol * |want[i]|; NaN must meet NaN. Reports the first few
// mismatches with their index.
inline void ExpectClose(const NDArray& got, const std::vector<double>& want, double abs_tol,
                        double rel_tol) {
  ASSERT_EQ(got->num_elements(), static_cast<int64_t>(want.size()));
  int failures = 0;
  for (size_t i = 0; i < want.size() && failures < 5; ++i) {
    const double g = ElementAsDouble(*got, static_cast<int64_t>(i));
    if (std::isnan(want[i])) {
      if (!std::isnan(g)) {
        ADD_FAILURE() << "element " << i << ": got " << g << ", want NaN";
        ++failures;
      }
      continue;
    }
    const double tol = abs_tol + rel_tol * std::fabs(want[i]);
    if (!(std::fabs(g - want[i]) <= tol)) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << want[i] << " (tolerance "
                    << tol << ")";
      ++failures;
    }
  }
}

// As above with a tolerance per element: |got[i] - want[i]| <= tol[i].
inline void ExpectClose(const NDArray& got, const std::vector<double>& want,
                        const std::vector<double>& tol) {
  ASSERT_EQ(got->num_elements(), static_cast<int64_t>(want.size()));
  ASSERT_EQ(tol.size(), want.size());
  int failures = 0;
  for (size_t i = 0; i < want.size() && failures < 5; ++i) {
    const double g = ElementAsDouble(*got, static_cast<int64_t>(i));
    if (!(std::fabs(g - want[i]) <= tol[i])) {
      ADD_FAILURE() << "element " << i << ": got " << g << ", want " << want[i] << " (tolerance "
                    << tol[i] << ")";
      ++failures;
    }
  }
}

// Runs `name` on `inputs` writing into `outputs` the test made (bypassing the shape
// function), on the default pool.
inline absl::Status CallWithOutputs(std::string_view name, const Attrs& attrs,
                                    const std::vector<NDArray>& inputs,
                                    const std::vector<NDArray>& outputs) {
  absl::StatusOr<BoundKernel> kernel = DefaultRegistry().Bind(
      name, attrs, static_cast<int>(inputs.size()), static_cast<int>(outputs.size()));
  if (!kernel.ok()) return kernel.status();
  std::vector<NDArrayObj*> args;
  for (const NDArray& t : inputs) args.push_back(t.get());
  for (const NDArray& t : outputs) args.push_back(t.get());
  return kernel->Call(args.data(), ThreadPool::Default());
}

// An uninitialised tensor of `shape` and `dtype`.
inline NDArray Empty(const std::vector<int64_t>& shape, DType dtype = DType::kF32) {
  return *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
}

// Expects InvalidArgument with `substr` in the message.
inline void ExpectInvalid(const absl::Status& status, std::string_view substr) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr(std::string(substr)));
}
template <typename T>
void ExpectInvalid(const absl::StatusOr<T>& result, std::string_view substr) {
  ExpectInvalid(result.status(), substr);
}

}  // namespace dynvm::kernels::testing

#endif  // DYNVM_TESTS_KERNELS_NN_TEST_UTIL_H_
