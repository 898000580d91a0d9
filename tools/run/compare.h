// Checking what a function returned against expected values (vm_run's
// --expected_output), paired up with the outputs by FlattenValue (objects/adt.h).
//
// Tensors must match in dtype and shape exactly. Float elements (f32, f64, f16, bf16)
// match when |got - expected| <= atol + rtol * |expected|, NaN matching NaN and an
// infinity only itself; integer and bool elements must be equal. Scalars compare the
// same way: ints and bools exactly, a float (on either side) with the tolerance.
//
//   std::vector<Value> outputs = FlattenValue(result);
//   if (std::optional<std::string> diff = CompareValue(expected, outputs[0], {})) ...
//   // "2 of 6 elements differ (atol=1e-06, rtol=1e-05); first at [1, 0]: expected 4, got 4.5"
#ifndef DYNVM_TOOLS_RUN_COMPARE_H_
#define DYNVM_TOOLS_RUN_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "objects/adt.h"  // IWYU pragma: export (FlattenValue)
#include "objects/value.h"

namespace dynvm::tools {

struct CompareOptions {
  double atol = 1e-6;  // absolute tolerance of float elements
  double rtol = 1e-5;  // relative tolerance, times |expected|
};

// Nothing when `got` matches `expected`, else one line saying how they differ: the
// kinds, dtypes or shapes, or for elements the number that differ, the first one's
// multi-index with both values, and for floats the largest difference.
std::optional<std::string> CompareValue(const Value& expected, const Value& got,
                                        const CompareOptions& options = {});

// A short description of `value` for messages: "tensor<f32>[2, 3]", "int 5",
// "float 1.5", "bool true", or the type name of other objects.
std::string DescribeValue(const Value& value);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_RUN_COMPARE_H_
