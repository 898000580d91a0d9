// Comparing returned values with expected ones within tolerances, output by output
// (tools/run/compare.h).
#include "tools/run/compare.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "objects/element_codec.h"
#include "objects/ndarray.h"
#include "objects/string_tensor.h"
#include "tools/run/elements.h"
#include "tools/run/value_printer.h"

namespace dynvm::tools {
namespace {

bool Close(double expected, double got, const CompareOptions& options) {
  if (std::isnan(expected) || std::isnan(got)) return std::isnan(expected) && std::isnan(got);
  if (expected == got) return true;
  if (std::isinf(expected) || std::isinf(got)) return false;  // inf - inf is no distance
  return std::fabs(got - expected) <= options.atol + options.rtol * std::fabs(expected);
}

std::string Tolerance(const CompareOptions& options) {
  return absl::StrFormat("atol=%g, rtol=%g", options.atol, options.rtol);
}

// The C-order multi-index of flat index `flat` in `shape`: "[1, 0]".
std::string MultiIndex(const Shape& shape, int64_t flat) {
  Shape index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return ShapeToString(index);
}

std::optional<std::string> CompareTensors(const NDArrayObj& expected, const NDArrayObj& got,
                                          const CompareOptions& options) {
  if (expected.dtype() != got.dtype() || expected.shape() != got.shape()) {
    return absl::StrFormat("expected %s, got %s: wrong %s", TensorTypeString(expected),
                           TensorTypeString(got),
                           expected.dtype() != got.dtype() ? "dtype" : "shape");
  }
  const bool is_float = IsFloatDType(expected.dtype());
  int64_t mismatches = 0, first = -1;
  double max_diff = 0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    bool same;
    if (expected.dtype() == DType::kString) {  // an invalid element matches nothing
      const absl::StatusOr<std::string_view> e = StringElement(expected, i);
      const absl::StatusOr<std::string_view> g = StringElement(got, i);
      same = e.ok() && g.ok() && *e == *g;
    } else if (is_float) {
      const double e = ElementAsDouble(expected, i), g = ElementAsDouble(got, i);
      same = Close(e, g, options);
      if (!same) max_diff = std::max(max_diff, std::fabs(g - e));  // NaN leaves it
    } else {
      same = ElementAsInt(expected, i) == ElementAsInt(got, i);
    }
    if (same) continue;
    if (mismatches++ == 0) first = i;
  }
  if (mismatches == 0) return std::nullopt;
  std::string out =
      absl::StrFormat("%d of %d elements differ", mismatches, expected.num_elements());
  if (is_float) absl::StrAppend(&out, " (", Tolerance(options), ")");
  absl::StrAppendFormat(&out, "; first at %s: expected %s, got %s",
                        MultiIndex(expected.shape(), first), FormatElement(expected, first),
                        FormatElement(got, first));
  if (max_diff > 0) absl::StrAppend(&out, "; max |got - expected| = ", FormatFloat(max_diff));
  return out;
}

bool IsNumber(const Value& v) { return v.is_int() || v.is_float(); }
double AsDouble(const Value& v) {
  return v.is_float() ? v.float_value() : static_cast<double>(v.int_value());
}

}  // namespace

std::string DescribeValue(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kInt: return absl::StrCat("int ", value.int_value());
    case Value::Kind::kFloat: return absl::StrCat("float ", FormatFloat(value.float_value()));
    case Value::Kind::kBool: return value.bool_value() ? "bool true" : "bool false";
    case Value::Kind::kObject: break;
  }
  if (const NDArrayObj* t = value.As<NDArrayObj>()) return TensorTypeString(*t);
  return std::string(value.TypeName());
}

std::optional<std::string> CompareValue(const Value& expected, const Value& got,
                                        const CompareOptions& options) {
  const NDArrayObj* e = expected.As<NDArrayObj>();
  const NDArrayObj* g = got.As<NDArrayObj>();
  if (e != nullptr && g != nullptr) return CompareTensors(*e, *g, options);
  bool same;
  bool with_tolerance = false;
  if (IsNumber(expected) && IsNumber(got)) {
    with_tolerance = expected.is_float() || got.is_float();
    same = with_tolerance ? Close(AsDouble(expected), AsDouble(got), options)
                          : expected.int_value() == got.int_value();
  } else if (expected.is_bool() && got.is_bool()) {
    same = expected.bool_value() == got.bool_value();
  } else {
    return absl::StrFormat("expected %s, got %s", DescribeValue(expected), DescribeValue(got));
  }
  if (same) return std::nullopt;
  return absl::StrFormat("expected %s, got %s%s", DescribeValue(expected), DescribeValue(got),
                         with_tolerance ? absl::StrCat(" (", Tolerance(options), ")") : "");
}

}  // namespace dynvm::tools
