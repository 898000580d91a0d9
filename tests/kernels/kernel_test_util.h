// Helpers for kernel tests: tensors from values or random, and running a registered
// kernel the way the VM does — shape function first, outputs allocated from its
// answer, then the kernel — so every call also checks the shape function against what
// the kernel accepts.
//
//   std::mt19937 rng(1);
//   NDArray x = RandomTensor({2, 3}, DType::kF32, rng);
//   absl::StatusOr<std::vector<NDArray>> out = RunKernel("nn.softmax", {{"axis", -1}}, {x});
#ifndef DYNVM_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
#define DYNVM_TESTS_KERNELS_KERNEL_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "kernels/microkernels.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::testing {

// A tensor of `shape` holding `values` (stored as they are; bool as 0/1), row-major.
// Aborts unless there is exactly one value per element.
template <typename T>
NDArray TensorOf(std::vector<int64_t> shape, std::vector<T> values);

// A tensor with elements uniform in [lo, hi) (integers: rounded; bool: 0/1).
NDArray RandomTensor(std::vector<int64_t> shape, DType dtype, std::mt19937& rng,
                     double lo = -1.0, double hi = 1.0);

// `n` floats uniform in [lo, hi), for microkernels that take raw arrays.
std::vector<float> RandomFloats(std::mt19937& rng, int64_t n, float lo, float hi);

// Element i of `t` as a double, whatever its dtype (f16/bf16 included).
double ElementAsDouble(const NDArrayObj& t, int64_t i);
// Element i of `t` exactly, i64 included (a long double holds every int64 and double).
long double ElementExact(const NDArrayObj& t, int64_t i);

// Binds `name` from the default registry with `attrs`, computes the output shapes
// with its shape function, allocates outputs of `output_dtypes` (default: the first
// input's dtype for each output) and runs it on `pool` (default: the default pool).
absl::StatusOr<std::vector<NDArray>> RunKernel(std::string_view name, const Attrs& attrs,
                                               std::vector<NDArray> inputs,
                                               std::vector<DType> output_dtypes = {},
                                               int num_outputs = 1,
                                               ThreadPool* pool = nullptr);

// Whether two floats have the same bits, or are both NaN.
bool SameBits(float a, float b);

// Expects f32 tensor `got` to equal `want` bit for bit (any NaN equals any NaN), shape
// included; reports the first few differences, prefixed by `what`.
void ExpectSameBits(const NDArray& got, const NDArray& want, std::string_view what = "");

// How many inputs a fused_elementwise program reads: 1 + the highest iJ in its text
// (J a single digit, as the tests' programs use).
int ProgramInputCount(std::string_view program);

// The micro-kernel table of every level this CPU runs (kernels/microkernels.h), lowest
// first: what a micro-kernel test walks.
std::vector<const Microkernels*> EveryMicrokernelTable();

// A test's name for a table parameter: its level's name ("scalar", "avx2").
std::string MicrokernelTableName(const ::testing::TestParamInfo<const Microkernels*>& info);

}  // namespace dynvm::kernels::testing

#endif  // DYNVM_TESTS_KERNELS_KERNEL_TEST_UTIL_H_
