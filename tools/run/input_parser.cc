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
#include "objects/string_tensor.h"
#include "serializer/npy.h"
#include "tools/run/elements.h"

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

template <typename T>
void Store(NDArrayObj& array, int64_t index, T value) {
  std::memcpy(static_cast<char*>(array.data()) + index * sizeof(T), &value, sizeof(T));
}

// Stores `text` as an integer of type `T`, or fails with why not.
template <typename T>
absl::Status StoreInt(NDArrayObj& array, int64_t index, std::string_view text) {
  T v = 0;
  std::errc ec = ParseNumber(text, v);
  if (ec == std::errc()) {
    Store<T>(array, index, v);
    return absl::OkStatus();
  }
  if (std::is_unsigned_v<T> && ec == std::errc::invalid_argument && text.starts_with('-')) {
    uint64_t magnitude = 0;  // "-5" is a number, out of an unsigned type's range
    if (ParseNumber(text.substr(1), magnitude) != std::errc::invalid_argument) {
      ec = std::errc::result_out_of_range;
    }
  }
  if (ec == std::errc::invalid_argument) return absl::InvalidArgumentError("not an integer");
  return absl::InvalidArgumentError(absl::StrFormat(
      "out of range [%d, %d]", std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// Stores `text` as a float of the array's dtype, or fails with why not.
absl::Status StoreFloat(NDArrayObj& array, int64_t index, std::string_view text) {
  std::errc ec;
  if (array.dtype() == DType::kF32) {  // read as a float directly: rounded once
    float v = 0;
    if ((ec = ParseNumber(text, v)) == std::errc()) Store(array, index, v);
  } else {
    double v = 0;
    if ((ec = ParseNumber(text, v)) == std::errc()) {
      if (array.dtype() == DType::kF64) {
        Store(array, index, v);
      } else {
        Store(array, index, array.dtype() == DType::kF16 ? DoubleToF16(v) : DoubleToBF16(v));
      }
    }
  }
  if (ec == std::errc()) return absl::OkStatus();
  return absl::InvalidArgumentError(ec == std::errc::invalid_argument ? "not a number"
                                                                      : "out of range");
}

absl::Status StoreElement(NDArrayObj& array, int64_t index, std::string_view text) {
  switch (array.dtype()) {
    case DType::kF32:
    case DType::kF64:
    case DType::kF16:
    case DType::kBF16: return StoreFloat(array, index, text);
    case DType::kI8: return StoreInt<int8_t>(array, index, text);
    case DType::kI16: return StoreInt<int16_t>(array, index, text);
    case DType::kI32: return StoreInt<int32_t>(array, index, text);
    case DType::kI64: return StoreInt<int64_t>(array, index, text);
    case DType::kU8: return StoreInt<uint8_t>(array, index, text);
    case DType::kU16: return StoreInt<uint16_t>(array, index, text);
    case DType::kU32: return StoreInt<uint32_t>(array, index, text);
    case DType::kU64: return StoreInt<uint64_t>(array, index, text);
    case DType::kString: SetStringElement(array, index, text); return absl::OkStatus();
    case DType::kBool: break;
  }
  std::optional<bool> b = ParseBool(text);
  if (!b.has_value()) {
    if (text == "1" || text == "0")
      b = text == "1";
    else
      return absl::InvalidArgumentError("not true, false, 1 or 0");
  }
  Store<uint8_t>(array, index, *b ? 1 : 0);
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

// "'y' (argument 1 of 'main')", or "argument 1 of 'main'" for an unnamed parameter.
std::string ParamLabel(const vm::Function& function, size_t index) {
  const std::string& name = function.params[index].name;
  const std::string position = absl::StrFormat("argument %d of '%s'", index, function.name);
  return name.empty() ? position : absl::StrFormat("'%s' (%s)", name, position);
}

// "x, y" ("#1" for an unnamed parameter), or "none".
std::string ParamList(const vm::Function& function) {
  std::string out;
  for (size_t i = 0; i < function.params.size(); ++i) {
    const std::string& name = function.params[i].name;
    absl::StrAppendFormat(&out, "%s%s", i == 0 ? "" : ", ",
                          name.empty() ? absl::StrFormat("#%d", i) : name);
  }
  return out.empty() ? "none" : out;
}

// An input split into the parameter it names (if any) and its value spec.
struct BoundInput {
  std::optional<size_t> param;
  std::string_view value;
};

absl::StatusOr<BoundInput> SplitInput(const vm::Function& function, std::string_view input) {
  const size_t eq = input.find('=');
  if (input.starts_with('@') || eq == std::string_view::npos) return BoundInput{{}, input};
  const std::string_view prefix = input.substr(0, eq);
  for (size_t i = 0; i < function.params.size(); ++i) {
    if (!prefix.empty() && function.params[i].name == prefix) {
      return BoundInput{i, input.substr(eq + 1)};
    }
  }
  // Not a name: a tensor type, whose errors ParseInlineTensor reports.
  if (ParseTensorType(prefix).ok() || (!prefix.empty() && prefix[0] >= '0' && prefix[0] <= '9')) {
    return BoundInput{{}, input};
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unknown input name '%s': '%s' has parameters %s", prefix, function.name,
                      ParamList(function)));
}

absl::Status MissingInputs(const vm::Function& function,
                           absl::Span<const std::optional<std::string_view>> specs) {
  std::string missing;
  int count = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].has_value()) continue;
    const std::string& name = function.params[i].name;
    const std::string type = vm::ValueSpecToString(function.params[i]);
    absl::StrAppend(&missing, count++ == 0 ? "" : ", ",
                    name.empty() ? absl::StrFormat("argument %d (%s)", i, type)
                                 : absl::StrFormat("'%s' (argument %d, %s)", name, i, type));
  }
  if (count == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("missing input%s for '%s': %s",
                                                    count == 1 ? "" : "s", function.name, missing));
}

}  // namespace

absl::StatusOr<std::vector<Value>> BindInputs(const vm::Function& function,
                                              absl::Span<const std::string> inputs,
                                              const std::shared_ptr<Allocator>& allocator) {
  const size_t num_params = function.params.size();
  std::vector<std::optional<std::string_view>> specs(num_params);
  size_t positional = 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    DYNVM_ASSIGN_OR_RETURN(const BoundInput input, SplitInput(function, inputs[k]));
    if (!input.param.has_value() && positional == num_params) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "too many inputs: '%s' takes %d (%s) but input %d ('%s') would be argument %d",
          function.name, num_params, ParamList(function), k, inputs[k], positional));
    }
    const size_t index = input.param.value_or(positional);
    if (specs[index].has_value()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("input %s given twice (again by input %d: '%s')",
                          ParamLabel(function, index), k, inputs[k]));
    }
    if (!input.param.has_value()) ++positional;
    specs[index] = input.value;
  }
  DYNVM_RETURN_IF_ERROR(MissingInputs(function, specs));
  std::vector<Value> args;
  args.reserve(num_params);
  for (size_t i = 0; i < num_params; ++i) {
    absl::StatusOr<Value> value = ParseValue(*specs[i], function.params[i].kind, allocator);
    if (!value.ok()) {
      return absl::Status(
          value.status().code(),
          absl::StrFormat("input %s: %s", ParamLabel(function, i), value.status().message()));
    }
    args.push_back(*std::move(value));
  }
  return args;
}

}  // namespace dynvm::tools
