#include "python/dtypes.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "pybind11/numpy.h"

namespace dynvm::python {

namespace py = pybind11;

py::object NumpyDType(DType dtype) {
  const char* name = nullptr;
  switch (dtype) {
    case DType::kF32: name = "float32"; break;
    case DType::kF64: name = "float64"; break;
    case DType::kF16: name = "float16"; break;
    case DType::kBF16:
    case DType::kString: return py::none();  // numpy's strings are not pointers
    case DType::kI8: name = "int8"; break;
    case DType::kI16: name = "int16"; break;
    case DType::kI32: name = "int32"; break;
    case DType::kI64: name = "int64"; break;
    case DType::kU8: name = "uint8"; break;
    case DType::kU16: name = "uint16"; break;
    case DType::kU32: name = "uint32"; break;
    case DType::kU64: name = "uint64"; break;
    case DType::kBool: name = "bool"; break;
  }
  return py::dtype(name);
}

absl::StatusOr<DType> DTypeFromBufferFormat(std::string_view format, size_t itemsize) {
  // A byte-order or size prefix: '@', '=', '<' are native order on the little-endian
  // machines dynvm runs on; '>' and '!' are not.
  std::string_view code = format;
  if (!code.empty() && (code[0] == '@' || code[0] == '=' || code[0] == '<')) code.remove_prefix(1);
  if (code.size() == 1) {
    switch (code[0]) {
      case 'e': if (itemsize == 2) return DType::kF16; break;
      case 'f': if (itemsize == 4) return DType::kF32; break;
      case 'd': if (itemsize == 8) return DType::kF64; break;
      case '?': if (itemsize == 1) return DType::kBool; break;
      case 'B': case 'H': case 'I': case 'L': case 'Q':  // C types whose size varies
        switch (itemsize) {
          case 1: return DType::kU8;
          case 2: return DType::kU16;
          case 4: return DType::kU32;
          case 8: return DType::kU64;
        }
        break;
      case 'b': case 'h': case 'i': case 'l': case 'q':  // C types whose size varies
        switch (itemsize) {
          case 1: return DType::kI8;
          case 2: return DType::kI16;
          case 4: return DType::kI32;
          case 8: return DType::kI64;
        }
        break;
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unsupported element type (buffer format '%s', %d bytes): expected float16/32/64, "
      "int8/16/32/64, uint8/16/32/64 or bool",
      std::string(format), itemsize));
}

}  // namespace dynvm::python
