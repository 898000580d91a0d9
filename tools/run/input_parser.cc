// vm_run's value specs (text, inline tensors, .npy files) parsed into values, and bound
// to a function's parameters through codec/argument_binder.h.
#include "tools/run/input_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "codec/argument_binder.h"
#include "objects/element_codec.h"
#include "objects/string_tensor.h"
#include "serializer/npy.h"

namespace dynvm::tools {
namespace {

struct TensorType {
  Shape shape;
  DType dtype = DType::kF32;
};

// Parses all of `text` as a number; std::errc::invalid_argument if it is not one,
// result_out_of_range if it does not fit `T`.
template <typename T>
std::errc ParseNumber(std::string_view text, T& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (ec == std::errc() && ptr != end) return std::errc::invalid_argument;
  return ec;
}

std::optional<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  return std::nullopt;
}

// "2x3xf32": dims separated by 'x', then a dtype.
absl::StatusOr<TensorType> ParseTensorType(std::string_view text) {
  TensorType type;
  size_t start = 0;
  for (size_t x = text.find('x'); x != std::string_view::npos; x = text.find('x', start)) {
    const std::string_view dim = text.substr(start, x - start);
    int64_t extent = 0;
    if (ParseNumber(dim, extent) != std::errc() || extent < 0) {
      return absl::InvalidArgumentError(absl::StrFormat("bad dim '%s' in '%s'", dim, text));
    }
    type.shape.push_back(extent);
    start = x + 1;
  }
  DYNVM_ASSIGN_OR_RETURN(type.dtype, ParseDType(text.substr(start)));
  DYNVM_RETURN_IF_ERROR(ShapeNumElements(type.shape).status());
  return type;
}

// The elements of an inline tensor: runs of commas, whitespace and brackets separate.
std::vector<std::string_view> SplitElements(std::string_view text) {
  constexpr std::string_view kSeparators = ", \t\r\n[]";
  std::vector<std::string_view> out;
  size_t start = text.find_first_not_of(kSeparators);
  while (start != std::string_view::npos) {
    const size_t end = std::min(text.find_first_of(kSeparators, start), text.size());
    out.push_back(text.substr(start, end - start));
    start = text.find_first_not_of(kSeparators, end);
  }
  return out;
}

// Stores `text` as an integer of the array's dtype, or fails with why not.
absl::Status StoreInt(NDArrayObj& array, int64_t index, std::string_view text) {
  int64_t v = 0;
  std::errc ec = ParseNumber(text, v);
  if (ec == std::errc()) return SetIntegerElement(array, index, v);
  uint64_t u = 0;  // past INT64_MAX: u64's upper half
  if (ec == std::errc::result_out_of_range && !text.starts_with('-') &&
      ParseNumber(text, u) == std::errc()) {
    return SetUnsignedElement(array, index, u);
  }
  if (ec == std::errc::invalid_argument) return absl::InvalidArgumentError("not an integer");
  return absl::InvalidArgumentError(absl::StrCat("out of range ", IntegerRangeText(array.dtype())));
}

// Stores `text` as a float of the array's dtype, or fails with why not.
absl::Status StoreFloat(NDArrayObj& array, int64_t index, std::string_view text) {
  std::errc ec;
  double v = 0;
  if (array.dtype() == DType::kF32) {  // read as a float directly: rounded once
    float f = 0;
    ec = ParseNumber(text, f);
    v = f;
  } else {
    ec = ParseNumber(text, v);
  }
  if (ec == std::errc()) {
    SetFloatElement(array, index, v);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(ec == std::errc::invalid_argument ? "not a number"
                                                                      : "out of range");
}

absl::Status StoreElement(NDArrayObj& array, int64_t index, std::string_view text) {
  if (IsFloatDType(array.dtype())) return StoreFloat(array, index, text);
  if (IsIntegerDType(array.dtype())) return StoreInt(array, index, text);
  if (array.dtype() == DType::kString) {
    SetStringElement(array, index, text);
    return absl::OkStatus();
  }
  std::optional<bool> b = ParseBool(text);
  if (!b.has_value()) {
    if (text == "1" || text == "0")
      b = text == "1";
    else
      return absl::InvalidArgumentError("not true, false, 1 or 0");
  }
  SetBoolElement(array, index, *b);
  return absl::OkStatus();
}

// A plain scalar: a float for a float parameter, else whatever the text is.
absl::StatusOr<Value> ParseScalar(std::string_view text, vm::ValueSpec::Kind kind) {
  int64_t i = 0;
  if (kind != vm::ValueSpec::Kind::kFloat && ParseNumber(text, i) == std::errc()) {
    return Value::Int(i);
  }
  double f = 0;
  if (ParseNumber(text, f) == std::errc()) return Value::Float(f);
  if (std::optional<bool> b = ParseBool(text)) return Value::Bool(*b);
  return absl::InvalidArgumentError(absl::StrFormat(
      "bad value '%s': expected @file.npy, an inline tensor such as 2x3xf32=1,2,3,4,5,6, "
      "or a scalar such as 5, 1.5 or true",
      text));
}

}  // namespace

absl::StatusOr<NDArray> ParseInlineTensor(std::string_view text,
                                          const std::shared_ptr<Allocator>& allocator) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bad inline tensor '%s': expected TYPE=VALUES as in 2x3xf32=1,2,3,4,5,6", text));
  }
  const std::string_view type_text = text.substr(0, eq);
  DYNVM_ASSIGN_OR_RETURN(const TensorType type, ParseTensorType(type_text));
  const std::vector<std::string_view> elements = SplitElements(text.substr(eq + 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t count, ShapeNumElements(type.shape));
  if (static_cast<int64_t>(elements.size()) != count) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s needs %d elements, got %d", type_text, count, elements.size()));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray array, NDArrayObj::Empty(type.shape, type.dtype, allocator));
  for (int64_t i = 0; i < count; ++i) {
    const absl::Status stored = StoreElement(*array, i, elements[i]);
    if (!stored.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("bad %s element '%s' at index %d: %s",
                                                        DTypeName(type.dtype), elements[i], i,
                                                        stored.message()));
    }
  }
  return array;
}

absl::StatusOr<Value> ParseValue(std::string_view text, vm::ValueSpec::Kind kind,
                                 const std::shared_ptr<Allocator>& allocator) {
  if (text.starts_with('@')) {
    DYNVM_ASSIGN_OR_RETURN(NDArray array,
                           serializer::ReadNpyFile(std::string(text.substr(1)), allocator));
    return Value(std::move(array));
  }
  if (text.find('=') != std::string_view::npos) {
    DYNVM_ASSIGN_OR_RETURN(NDArray array, ParseInlineTensor(text, allocator));
    return Value(std::move(array));
  }
  return ParseScalar(text, kind);
}

namespace {

// An input split into the parameter name it gives (empty if none) and its value spec.
struct SplitSpec {
  std::string name;
  std::string_view value;
};

// A prefix before the first '=' is a name when some parameter has it; otherwise the
// input is an inline tensor whose type ParseInlineTensor checks, and an unknown name
// goes to the binder, which lists the parameters.
SplitSpec SplitInput(const vm::Function& function, std::string_view input) {
  const size_t eq = input.find('=');
  if (input.starts_with('@') || eq == std::string_view::npos) return {"", input};
  const std::string_view prefix = input.substr(0, eq);
  for (const vm::ValueSpec& param : function.params) {
    if (!prefix.empty() && param.name == prefix) return {std::string(prefix), input.substr(eq + 1)};
  }
  if (ParseTensorType(prefix).ok() || (!prefix.empty() && prefix[0] >= '0' && prefix[0] <= '9')) {
    return {"", input};
  }
  return {std::string(prefix), input.substr(eq + 1)};
}

}  // namespace

absl::StatusOr<std::vector<Value>> BindInputs(const vm::Function& function,
                                              absl::Span<const std::string> inputs,
                                              const std::shared_ptr<Allocator>& allocator) {
  std::vector<codec::ArgumentSource> sources;
  sources.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    SplitSpec spec = SplitInput(function, inputs[k]);
    sources.push_back({.name = std::move(spec.name),
                       .label = absl::StrFormat("input %d ('%s')", k, inputs[k]),
                       .build = [value = spec.value, &allocator](const vm::ValueSpec& param) {
                         return ParseValue(value, param.kind, allocator);
                       }});
  }
  return codec::BindArguments(function, sources);
}

}  // namespace dynvm::tools
