// Helpers for the tests of the data-movement kernels (transform, slice, index,
// creation, sort, dynamic): direct calls with caller-made outputs (to test the wrappers'
// output checks), status matchers, index arithmetic for plain references, and an
// element-by-element check that an output holds given source elements bit for bit.
#ifndef DYNVM_TESTS_KERNELS_DATA_TEST_UTIL_H_
#define DYNVM_TESTS_KERNELS_DATA_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <functional>
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

// `values` as a 1-D index tensor of `dtype` (i32 or i64).
inline NDArray IndexVector(const std::vector<int64_t>& values, DType dtype) {
  const std::vector<int64_t> shape = {static_cast<int64_t>(values.size())};
  if (dtype == DType::kI32) return TensorOf<int32_t>(shape, {values.begin(), values.end()});
  return TensorOf<int64_t>(shape, values);
}

// Every runtime dtype, to show that data movement is by element size.
inline const DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                   DType::kI8,  DType::kI16, DType::kI32, DType::kI64,
                                   DType::kU8,  DType::kU16, DType::kU32, DType::kU64,
                                   DType::kBool};
// One dtype of each element size.
inline const DType kOnePerSize[] = {DType::kU8, DType::kF16, DType::kF32, DType::kI64};

// An uninitialised tensor.
inline NDArray EmptyTensor(const std::vector<int64_t>& shape, DType dtype) {
  return *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
}

// A tensor of random bit patterns (whatever the dtype), so that a misplaced element is
// noticed unless it happens to equal the right one (likely only for 1-byte dtypes).
inline NDArray RandomBits(const std::vector<int64_t>& shape, DType dtype, std::mt19937& rng) {
  NDArray t = EmptyTensor(shape, dtype);
  auto* p = static_cast<unsigned char*>(t->data());
  for (size_t i = 0; i < t->nbytes(); ++i) p[i] = static_cast<unsigned char>(rng());
  return t;
}

// Binds `name` and calls it on `inputs` and caller-made `outputs`.
inline absl::Status CallKernel(std::string_view name, const Attrs& attrs,
                               const std::vector<NDArray>& inputs,
                               const std::vector<NDArray>& outputs) {
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(
      name, attrs, static_cast<int>(inputs.size()), static_cast<int>(outputs.size()));
  if (!k.ok()) return k.status();
  std::vector<NDArrayObj*> args;
  for (const NDArray& t : inputs) args.push_back(t.get());
  for (const NDArray& t : outputs) args.push_back(t.get());
  return k->Call(args.data(), ThreadPool::Default());
}

// The status of `status_or`, for matching errors of RunKernel.
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}
inline absl::Status StatusOf(const absl::Status& status) { return status; }

// Expects InvalidArgument with `substr` in the message.
#define EXPECT_INVALID(expr, substr)                                            \
  do {                                                                          \
    const absl::Status dynvm_s_ = ::dynvm::kernels::testing::StatusOf(expr);    \
    EXPECT_EQ(dynvm_s_.code(), absl::StatusCode::kInvalidArgument) << dynvm_s_; \
    EXPECT_THAT(std::string(dynvm_s_.message()), ::testing::HasSubstr(substr)); \
  } while (false)

inline int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The multi-index of row-major element `flat` of `shape`.
inline std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

// The row-major position of `index` in `shape`.
inline int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i) flat = flat * shape[i] + index[i];
  return flat;
}

inline std::vector<int64_t> ShapeOf(const NDArray& t) {
  return std::vector<int64_t>(t->shape().begin(), t->shape().end());
}

// Expects `out` to have `shape` and element i to be, bit for bit, element `source(i)`
// of `in` (source(i) < 0: the element at `fill`).
inline void ExpectGathered(const NDArray& out, const std::vector<int64_t>& shape, const NDArray& in,
                           const std::function<int64_t(int64_t)>& source,
                           const void* fill = nullptr) {
  ASSERT_EQ(ShapeOf(out), shape);
  ASSERT_EQ(out->dtype(), in->dtype());
  const size_t elem = DTypeSize(in->dtype());
  for (int64_t i = 0; i < out->num_elements(); ++i) {
    const int64_t j = source(i);
    ASSERT_LT(j, in->num_elements());
    const void* expected =
        j < 0 ? fill : static_cast<const char*>(in->data()) + static_cast<size_t>(j) * elem;
    ASSERT_NE(expected, nullptr) << "element " << i;
    ASSERT_EQ(std::memcmp(static_cast<const char*>(out->data()) + i * elem, expected, elem), 0)
        << "element " << i << " (source " << j << ")";
  }
}

// The elements of `t` as doubles.
inline std::vector<double> Values(const NDArray& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t->num_elements(); ++i) v.push_back(ElementAsDouble(*t, i));
  return v;
}

// A random shape of rank `rank` with extents in [0, max_extent], 0 and 1 often.
inline std::vector<int64_t> RandomShape(std::mt19937& rng, int rank, int64_t max_extent = 6) {
  std::vector<int64_t> shape(static_cast<size_t>(rank));
  for (int64_t& d : shape) {
    const int r = static_cast<int>(rng() % 10);
    d = r == 0 ? 0 : r < 3 ? 1 : 1 + static_cast<int64_t>(rng() % max_extent);
  }
  return shape;
}

}  // namespace dynvm::kernels::testing

#endif  // DYNVM_TESTS_KERNELS_DATA_TEST_UTIL_H_
