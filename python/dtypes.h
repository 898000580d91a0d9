// The correspondence between dynvm's element types and numpy's.
//
// numpy has no bfloat16: a bf16 tensor has no numpy dtype, so signatures show it as
// None and such results cannot be returned as arrays (UnimplementedError).
//
//   NumpyDType(DType::kF32)                       // numpy.dtype('float32')
//   DTypeFromBufferFormat("l", /*itemsize=*/8)    // DType::kI64
#ifndef DYNVM_PYTHON_DTYPES_H_
#define DYNVM_PYTHON_DTYPES_H_

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "objects/dtype.h"
#include "pybind11/pybind11.h"

namespace dynvm::python {

// The numpy dtype of `dtype`, or None for bf16. Needs the GIL.
pybind11::object NumpyDType(DType dtype);

// The element type of a buffer whose struct-module `format` ("f", "<i8", "?") has
// elements of `itemsize` bytes; InvalidArgument for formats no DType matches (complex,
// unsigned wider than a byte, records, ...).
absl::StatusOr<DType> DTypeFromBufferFormat(std::string_view format, size_t itemsize);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_DTYPES_H_
