// numpy dtypes and buffer formats mapped to dynvm dtypes through objects/dtype.h's tables.
#include "python/dtypes.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "pybind11/numpy.h"

namespace dynvm::python {

namespace py = pybind11;

py::object NumpyDType(DType dtype) {
  // numpy has no bfloat16, and its strings are not pointers.
  if (dtype == DType::kBF16 || dtype == DType::kString) return py::none();
  return py::dtype(std::string(DTypeLongName(dtype)));
}

absl::StatusOr<DType> DTypeFromBufferFormat(std::string_view format, size_t itemsize) {
  // A byte-order or size prefix: '@', '=', '<' are native order on the little-endian
  // machines dynvm runs on; '>' and '!' are not. The struct-module codes say the kind
  // of element; its size comes from `itemsize` (C types' sizes vary), and the DLPack
  // type of that kind and size names the dtype.
  std::string_view code = format;
  if (!code.empty() && (code[0] == '@' || code[0] == '=' || code[0] == '<')) code.remove_prefix(1);
  constexpr std::string_view kFloat = "efd", kSigned = "bhilq", kUnsigned = "BHILQ";
  std::optional<uint8_t> kind;
  if (code.size() == 1) {
    // A float code has one size ('e' 2, 'f' 4, 'd' 8 bytes): another itemsize
    // contradicts the format, and is refused rather than read as another width.
    const size_t float_code = kFloat.find(code[0]);
    if (float_code != std::string_view::npos && itemsize == (size_t{2} << float_code)) {
      kind = kDLFloat;
    }
    if (kSigned.find(code[0]) != std::string_view::npos) kind = kDLInt;
    if (kUnsigned.find(code[0]) != std::string_view::npos) kind = kDLUInt;
    if (code[0] == '?') kind = kDLBoolCode;
  }
  if (kind.has_value() && itemsize <= 8) {
    absl::StatusOr<DType> dtype =
        FromDLDataType(DLDataType{*kind, static_cast<uint8_t>(itemsize * 8), 1});
    if (dtype.ok()) return dtype;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unsupported element type (buffer format '%s', %d bytes): expected float16/32/64, "
      "int8/16/32/64, uint8/16/32/64 or bool",
      std::string(format), itemsize));
}

}  // namespace dynvm::python
