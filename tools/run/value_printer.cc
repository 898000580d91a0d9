// The float layout follows numpy's FloatingFormat (arrayprint.py, floatmode "maxprec",
// precision 8) and the array layout its _formatArray, so that a tensor prints as the
// same text numpy gives for the same array.
#include "tools/run/value_printer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "objects/adt.h"
#include "objects/element_codec.h"
#include "objects/shape_tuple.h"
#include "objects/string_object.h"
#include "tools/run/elements.h"

namespace dynvm::tools {
namespace {

// numpy's default print precision: at most this many digits after the point.
constexpr int kPrecision = 8;

// A finite value as ±d1.d2d3... × 10^exponent, without trailing zero digits (zero is
// the digits "0").
struct Decimal {
  bool negative = false;
  std::string digits;
  int exponent = 0;
};

// Parses printf's "%e" text ("-1.2500e+05").
Decimal ParseScientific(std::string_view text) {
  Decimal d;
  d.negative = text.starts_with('-');
  const size_t e = text.find('e');
  for (char c : text.substr(0, e)) {
    if (c >= '0' && c <= '9') d.digits += c;
  }
  d.exponent = std::atoi(std::string(text.substr(e + 1)).c_str());
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  return d;
}

// The fewest significant digits that read back to `value` in `dtype`.
Decimal Shortest(double value, DType dtype) {
  char buf[64];
  if (dtype == DType::kF64 || dtype == DType::kF32) {
    const std::to_chars_result r =
        dtype == DType::kF64
            ? std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific)
            : std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value),
                            std::chars_format::scientific);
    return ParseScientific(std::string_view(buf, r.ptr - buf));
  }
  // f16 / bf16: at most 5 significant digits are ever needed.
  const bool half = dtype == DType::kF16;
  const uint16_t bits = half ? DoubleToHalfBits(value) : DoubleToBFloat16Bits(value);
  std::string text;
  for (int precision = 0; precision < 17; ++precision) {
    text = absl::StrFormat("%.*e", precision, value);
    const double back = std::strtod(text.c_str(), nullptr);
    if ((half ? DoubleToHalfBits(back) : DoubleToBFloat16Bits(back)) == bits) break;
  }
  return ParseScientific(text);
}

// The digits of `d` (the shortest form of `value`) laid out around the point:
// {"-12", "5"} for -12.5. A value needing more than `max_frac` digits after the point is
// rounded to `max_frac` (trailing zeros dropped), as numpy does.
std::pair<std::string, std::string> Positional(const Decimal& d, double value, int max_frac) {
  const int frac_digits = std::max(0, static_cast<int>(d.digits.size()) - 1 - d.exponent);
  if (frac_digits > max_frac) {
    std::string text = absl::StrFormat("%.*f", max_frac, value);
    while (text.back() == '0') text.pop_back();
    const size_t point = text.find('.');
    return {text.substr(0, point), text.substr(point + 1)};
  }
  std::string int_part = d.negative ? "-" : "";
  std::string frac;
  if (d.exponent < 0) {
    int_part += "0";
    frac = std::string(-d.exponent - 1, '0') + d.digits;
  } else {
    std::string digits = d.digits;
    if (static_cast<int>(digits.size()) < d.exponent + 1) digits.resize(d.exponent + 1, '0');
    int_part += digits.substr(0, d.exponent + 1);
    frac = digits.substr(d.exponent + 1);
  }
  return {int_part, frac};
}

// Scientific notation parts of `decimal` (the shortest form of `value`): {"-1", "25", 5}
// for -1.25e+05, the mantissa rounded to `max_frac` digits after the point when it needs
// more.
struct SciParts {
  std::string int_part;
  std::string frac;
  int exponent = 0;
};
SciParts Scientific(const Decimal& decimal, double value, int max_frac) {
  Decimal d = decimal;
  if (static_cast<int>(d.digits.size()) - 1 > max_frac) {
    d = ParseScientific(absl::StrFormat("%.*e", max_frac, value));
  }
  return {absl::StrCat(d.negative ? "-" : "", d.digits.substr(0, 1)), d.digits.substr(1),
          d.exponent};
}

// "e+05": a sign and at least `width` digits.
std::string ExponentText(int exponent, int width) {
  return absl::StrFormat("e%c%0*d", exponent < 0 ? '-' : '+', width, std::abs(exponent));
}

std::string NonFinite(double value) {
  if (std::isnan(value)) return "nan";
  return value < 0 ? "-inf" : "inf";
}

// Python's repr of a float in `dtype`, every digit kept: fixed notation for exponents
// in [-4, 16), else scientific; "2.0" rather than "2".
std::string Repr(double value, DType dtype) {
  if (!std::isfinite(value)) return NonFinite(value);
  constexpr int kAllDigits = 1000;
  const Decimal d = Shortest(value, dtype);
  if (d.exponent >= -4 && d.exponent < 16) {
    const auto [int_part, frac] = Positional(d, value, kAllDigits);
    return absl::StrCat(int_part, ".", frac.empty() ? "0" : frac);
  }
  const SciParts p = Scientific(d, value, kAllDigits);
  return absl::StrCat(p.int_part, p.frac.empty() ? "" : ".", p.frac, ExponentText(p.exponent, 2));
}

// Formats one element by its flat index; built for the elements that will be shown,
// so that all of them share one width.
using ElementFormatter = std::function<std::string(int64_t)>;

// numpy's FloatingFormat in "maxprec" mode.
class FloatFormatter {
 public:
  FloatFormatter(const NDArrayObj& array, absl::Span<const int64_t> shown);
  std::string operator()(int64_t index) const;

 private:
  const NDArrayObj* array_;
  bool scientific_ = false;
  int pad_left_ = 0;     // width of the part before the point
  int pad_right_ = 0;    // width of the part after it
  int frac_digits_ = 0;  // scientific: digits after the point, zero-padded
  int exp_digits_ = 0;   // scientific: digits of the exponent
};

FloatFormatter::FloatFormatter(const NDArrayObj& array, absl::Span<const int64_t> shown)
    : array_(&array) {
  std::vector<double> finite;
  bool any_nonfinite = false, negative_inf = false;
  for (int64_t i : shown) {
    const double v = ElementAsDouble(array, i);
    if (std::isfinite(v)) {
      finite.push_back(v);
    } else {
      any_nonfinite = true;
      negative_inf |= std::isinf(v) && v < 0;
    }
  }
  double max_abs = 0, min_abs = INFINITY;
  for (double v : finite) {
    if (v == 0) continue;
    max_abs = std::max(max_abs, std::fabs(v));
    min_abs = std::min(min_abs, std::fabs(v));
  }
  scientific_ = max_abs > 0 && (max_abs >= 1e8 || min_abs < 1e-4 || max_abs / min_abs > 1e3);
  for (double v : finite) {
    const Decimal d = Shortest(v, array.dtype());
    if (scientific_) {
      const SciParts p = Scientific(d, v, kPrecision);
      pad_left_ = std::max(pad_left_, static_cast<int>(p.int_part.size()));
      frac_digits_ = std::max(frac_digits_, static_cast<int>(p.frac.size()));
      exp_digits_ =
          std::max({exp_digits_, 2, static_cast<int>(absl::StrCat(std::abs(p.exponent)).size())});
    } else {
      const auto [int_part, frac] = Positional(d, v, kPrecision);
      pad_left_ = std::max(pad_left_, static_cast<int>(int_part.size()));
      pad_right_ = std::max(pad_right_, static_cast<int>(frac.size()));
    }
  }
  if (scientific_) pad_right_ = exp_digits_ + 2 + frac_digits_;
  if (any_nonfinite) pad_left_ = std::max(pad_left_, 3 + negative_inf - (pad_right_ + 1));
}

std::string FloatFormatter::operator()(int64_t index) const {
  const double v = ElementAsDouble(*array_, index);
  if (!std::isfinite(v)) {
    return absl::StrFormat("%*s", pad_left_ + pad_right_ + 1, NonFinite(v));
  }
  if (scientific_) {
    // numpy fills the mantissa to the common width with more digits of the exact value,
    // which is what printf gives.
    const std::string text = absl::StrFormat("%#.*e", frac_digits_, v);  // "-1.50e+10"
    const size_t point = text.find('.'), e = text.find('e');
    return absl::StrFormat("%*s%s%s", pad_left_, text.substr(0, point),
                           text.substr(point, e - point),
                           ExponentText(std::atoi(text.c_str() + e + 1), exp_digits_));
  }
  const Decimal d = Shortest(v, array_->dtype());
  const auto [int_part, frac] = Positional(d, v, kPrecision);
  return absl::StrFormat("%*s.%-*s", pad_left_, int_part, pad_right_, frac);
}

ElementFormatter MakeElementFormatter(const NDArrayObj& array, absl::Span<const int64_t> shown) {
  if (IsFloatDType(array.dtype())) return FloatFormatter(array, shown);
  if (array.dtype() == DType::kString) {
    return [&array](int64_t i) { return StringElementRepr(array, i); };
  }
  if (array.dtype() == DType::kBool) {
    const bool pad = array.ndim() > 0;  // numpy: " True" lines up with "False"
    return [&array, pad](int64_t i) -> std::string {
      if (ElementAsInt(array, i) != 0) return pad ? " True" : "True";
      return "False";
    };
  }
  size_t width = 0;
  for (int64_t i : shown) width = std::max(width, IntElementText(array, i).size());
  return [&array, width](int64_t i) {
    return absl::StrFormat("%*s", static_cast<int>(width), IntElementText(array, i));
  };
}

// numpy's _extendLine: appends `word` to `line`, first moving `line` into `out` and
// starting a new one at `indent` when the word would pass `width` (unless the line
// holds nothing but the indent).
void ExtendLine(std::string& out, std::string& line, std::string_view word, size_t width,
                std::string_view indent) {
  if (line.size() + word.size() > width && line.size() > indent.size()) {
    line.erase(line.find_last_not_of(' ') + 1);
    absl::StrAppend(&out, line, "\n");
    line = std::string(indent);
  }
  line += word;
}

// numpy's _formatArray over the elements a summary keeps.
class ArrayPrinter {
 public:
  ArrayPrinter(const NDArrayObj& array, const PrintOptions& options);
  std::string Print() const { return Recurse(0, 0, " ", options_.line_width); }

 private:
  // Whether axis `axis` is cut to its edge items.
  bool Summarized(int axis) const {
    return summarize_ && array_.shape()[axis] > 2 * options_.edge_items;
  }
  // The indices shown along `axis`, in order.
  std::vector<int64_t> Shown(int axis) const;
  // The flat indices of every element shown.
  std::vector<int64_t> ShownElements() const;
  std::string Recurse(int axis, int64_t offset, const std::string& indent, int width) const;

  const NDArrayObj& array_;
  const PrintOptions& options_;
  bool summarize_;
  Shape strides_;
  ElementFormatter format_;
};

ArrayPrinter::ArrayPrinter(const NDArrayObj& array, const PrintOptions& options)
    : array_(array),
      options_(options),
      summarize_(array.num_elements() > options.threshold),
      strides_(array.ndim(), 1) {
  for (int axis = array.ndim() - 2; axis >= 0; --axis) {
    strides_[axis] = strides_[axis + 1] * array.shape()[axis + 1];
  }
  format_ = MakeElementFormatter(array, ShownElements());
}

std::vector<int64_t> ArrayPrinter::Shown(int axis) const {
  const int64_t n = array_.shape()[axis];
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    if (!Summarized(axis) || i < options_.edge_items || i >= n - options_.edge_items) {
      out.push_back(i);
    }
  }
  return out;
}

std::vector<int64_t> ArrayPrinter::ShownElements() const {
  std::vector<int64_t> flat = {0};
  for (int axis = 0; axis < array_.ndim(); ++axis) {
    std::vector<int64_t> next;
    for (int64_t base : flat) {
      for (int64_t i : Shown(axis)) next.push_back(base + i * strides_[axis]);
    }
    flat = std::move(next);
  }
  return flat;
}

std::string ArrayPrinter::Recurse(int axis, int64_t offset, const std::string& indent,
                                  int width) const {
  if (axis == array_.ndim()) return format_(offset);
  const std::string next_indent = indent + " ";
  const std::vector<int64_t> shown = Shown(axis);
  const size_t summary_at = Summarized(axis) ? options_.edge_items : shown.size();
  std::string out;
  if (axis == array_.ndim() - 1) {
    const size_t element_width = width - 1;  // room for the "," or "]" after it
    std::string line = indent;
    for (size_t k = 0; k < shown.size(); ++k) {
      if (k == summary_at) {
        ExtendLine(out, line, "...", element_width, indent);
        line += ", ";
      }
      ExtendLine(out, line,
                 Recurse(axis + 1, offset + shown[k] * strides_[axis], next_indent, width - 1),
                 element_width, indent);
      if (k + 1 < shown.size()) line += ", ";
    }
    out += line;
  } else {
    const std::string separator = absl::StrCat(",", std::string(array_.ndim() - axis - 1, '\n'));
    for (size_t k = 0; k < shown.size(); ++k) {
      if (k == summary_at) absl::StrAppend(&out, indent, "...", separator);
      absl::StrAppend(&out, indent,
                      Recurse(axis + 1, offset + shown[k] * strides_[axis], next_indent, width - 1),
                      k + 1 < shown.size() ? separator : "");
    }
  }
  return absl::StrCat("[", out.substr(indent.size()), "]");
}

// An ADT on one line when its fields are one-line and the whole fits, else one field
// per line.
std::string FormatAdt(const ADTObj& adt, const PrintOptions& options) {
  const std::string head = adt.tag() == 0 ? "tuple" : absl::StrFormat("adt<tag %d>", adt.tag());
  std::vector<std::string> fields;
  size_t length = head.size() + 2;
  bool one_line = true;
  for (const Value& field : adt.fields()) {
    fields.push_back(FormatValue(field, options));
    length += fields.back().size() + 2;
    one_line &= fields.back().find('\n') == std::string::npos;
  }
  if (one_line && length <= static_cast<size_t>(options.line_width)) {
    return absl::StrCat(head, "(", absl::StrJoin(fields, ", "), ")");
  }
  std::string out = head + "(\n";
  for (size_t i = 0; i < fields.size(); ++i) {
    absl::StrAppend(&out, "  ", absl::StrReplaceAll(fields[i], {{"\n", "\n  "}}),
                    i + 1 < fields.size() ? ",\n" : "\n");
  }
  return out + ")";
}

std::string FormatClosure(const ClosureObj& closure, const PrintOptions& options) {
  if (closure.func_index() < options.functions.size()) {
    return absl::StrFormat("closure<@%s>", options.functions[closure.func_index()].name);
  }
  return absl::StrFormat("closure<#%d>", closure.func_index());
}

}  // namespace

std::string TensorTypeString(const NDArrayObj& array) {
  return absl::StrFormat("tensor<%s>%s", DTypeName(array.dtype()), ShapeToString(array.shape()));
}

std::string FormatTensorData(const NDArrayObj& array, const PrintOptions& options) {
  if (array.num_elements() == 0) return "[]";
  return ArrayPrinter(array, options).Print();
}

std::string FormatElement(const NDArrayObj& array, int64_t index) {
  if (IsFloatDType(array.dtype())) return Repr(ElementAsDouble(array, index), array.dtype());
  if (array.dtype() == DType::kBool) return ElementAsInt(array, index) != 0 ? "True" : "False";
  if (array.dtype() == DType::kString) return StringElementRepr(array, index);
  return IntElementText(array, index);
}

std::string FormatFloat(double value) { return Repr(value, DType::kF64); }

std::string FormatValue(const Value& value, const PrintOptions& options) {
  switch (value.kind()) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kInt: return absl::StrCat(value.int_value());
    case Value::Kind::kFloat: return FormatFloat(value.float_value());
    case Value::Kind::kBool: return value.bool_value() ? "true" : "false";
    case Value::Kind::kObject: break;
  }
  if (const NDArrayObj* t = value.As<NDArrayObj>()) {
    return absl::StrCat(TensorTypeString(*t), "\n", FormatTensorData(*t, options));
  }
  if (const ADTObj* adt = value.As<ADTObj>()) return FormatAdt(*adt, options);
  if (const ClosureObj* closure = value.As<ClosureObj>()) return FormatClosure(*closure, options);
  if (const ShapeTupleObj* shape = value.As<ShapeTupleObj>()) {
    return absl::StrCat("shape", ShapeToString(shape->dims()));
  }
  if (const StringObj* s = value.As<StringObj>()) {
    return absl::StrCat("\"", absl::CHexEscape(s->value()), "\"");
  }
  return absl::StrFormat("<%s>", value.TypeName());
}

}  // namespace dynvm::tools
