// Typed access to the elements of a tensor of any dtype, for the tools that read values
// from a command line and print or compare what a function returned.
//
// Elements are addressed by their flat (C-order) index. f16 and bf16 are converted to
// and from double with IEEE round-to-nearest-even, so text such as "0.1" becomes the
// nearest half-precision value, and every f16/bf16 value converts back exactly.
//
//   double v = ElementAsDouble(*t, 5);            // any float dtype
//   uint16_t h = DoubleToF16(0.1);                // 0x2e66
#ifndef DYNVM_TOOLS_RUN_ELEMENTS_H_
#define DYNVM_TOOLS_RUN_ELEMENTS_H_

#include <cstdint>
#include <string>

#include "objects/dtype.h"
#include "objects/ndarray.h"

namespace dynvm::tools {

// The IEEE binary16 bits nearest to `value` (ties to even; overflow gives infinity, NaN
// stays NaN with its sign).
uint16_t DoubleToF16(double value);
// The value of IEEE binary16 bits `bits` (exact).
double F16ToDouble(uint16_t bits);
// The bfloat16 bits nearest to `value`, rounded as DoubleToF16.
uint16_t DoubleToBF16(double value);
// The value of bfloat16 bits `bits` (exact).
double BF16ToDouble(uint16_t bits);

// Whether `dtype` is f32, f64, f16 or bf16.
bool IsFloatDType(DType dtype);

// Element `index` of `array` as a double; exact for every dtype except i64 and u64
// values beyond 2^53. `index` must be below num_elements().
double ElementAsDouble(const NDArrayObj& array, int64_t index);
// Element `index` of `array`, which must be of an integer or bool dtype. A u64 element
// beyond INT64_MAX comes back as its bits (negative): equal elements stay equal, but
// text must come from IntElementText.
int64_t ElementAsInt(const NDArrayObj& array, int64_t index);
// Element `index` of an integer or bool `array` in decimal ("-3", "18446744073709551615").
std::string IntElementText(const NDArrayObj& array, int64_t index);
// Element `index` of a string `array` quoted as Python's repr quotes it, non-printable
// bytes escaped ('it\'s', 'a\n'); an element the storage does not hold (see
// objects/string_tensor.h) prints as <invalid string>.
std::string StringElementRepr(const NDArrayObj& array, int64_t index);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_RUN_ELEMENTS_H_
