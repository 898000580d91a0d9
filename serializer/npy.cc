// numpy's .npy format (numpy/lib/format.py, "NEP 1"): a 6-byte magic "\x93NUMPY", a
// version (1.0, 2.0 or 3.0), a little-endian header length (2 bytes in 1.0, 4 after),
// and a Python dict literal such as
//
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// padded with spaces and a newline so that the data starts 64-byte aligned. The data
// follows in C order. We parse the dict with a small recursive-descent reader (keys in
// any order, trailing commas, 1-tuples, Python 2 `3L` ints) rather than anything like
// eval, and write headers byte-for-byte as numpy 1.24 does.
#include "serializer/npy.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "objects/string_tensor.h"
#include "serializer/internal/file_io.h"

namespace dynvm::serializer {
namespace {

static_assert(std::endian::native == std::endian::little,
              "'<' and '=' descrs are read as native");

constexpr std::string_view kNpyMagic = "\x93NUMPY";
// numpy's ARRAY_ALIGN: data starts at a multiple of this.
constexpr size_t kNpyAlign = 64;
// numpy's GROWTH_AXIS_MAX_DIGITS: spare header space so the first axis can grow.
constexpr size_t kGrowthDigits = 21;
// The widest string element read ('S' bytes or 'U' code points): a header may not make
// a few bytes of file ask for gigabytes of text.
constexpr size_t kMaxNpyStringWidth = size_t{1} << 20;
// The most padded string data SerializeNpy writes for one tensor.
constexpr size_t kMaxNpyStringData = size_t{1} << 30;

// What the header dict says.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

absl::Status HeaderError(std::string_view what, std::string_view text) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "malformed .npy header: %s in \"%s\"", what,
      absl::CHexEscape(absl::string_view(text.data(), text.size()))));
}

// A reader of the one Python literal numpy writes: a dict of str keys whose values are
// a str, a bool, or a tuple of non-negative ints.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  absl::StatusOr<NpyHeader> Parse() {
    NpyHeader header;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    if (!Consume('{')) return Error("expected '{'");
    while (!Consume('}')) {
      DYNVM_ASSIGN_OR_RETURN(std::string key, ParseString());
      if (!Consume(':')) return Error("expected ':' after a key");
      if (key == "descr") {
        if (seen_descr) return Error("duplicate key 'descr'");
        seen_descr = true;
        if (Peek() == '[') {
          return absl::InvalidArgumentError(
              "unsupported .npy dtype: structured arrays (a list descr) are not supported");
        }
        DYNVM_ASSIGN_OR_RETURN(header.descr, ParseString());
      } else if (key == "fortran_order") {
        if (seen_order) return Error("duplicate key 'fortran_order'");
        seen_order = true;
        DYNVM_ASSIGN_OR_RETURN(header.fortran_order, ParseBool());
      } else if (key == "shape") {
        if (seen_shape) return Error("duplicate key 'shape'");
        seen_shape = true;
        DYNVM_ASSIGN_OR_RETURN(header.shape, ParseShape());
      } else {
        return Error(absl::StrFormat("unexpected key '%s'", key));
      }
      if (!Consume(',') && Peek() != '}') return Error("expected ',' or '}'");
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("text after the closing '}'");
    if (!seen_descr || !seen_order || !seen_shape) {
      return Error("the keys 'descr', 'fortran_order' and 'shape' are required");
    }
    return header;
  }

 private:
  absl::Status Error(std::string_view what) const { return HeaderError(what, text_); }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  // The next non-space character, or 0 at the end.
  char Peek() {
    SkipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  // Consumes `word` if the text continues with it.
  bool ConsumeWord(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // A '...' or "..." literal without escapes (numpy's keys and descrs have none).
  absl::StatusOr<std::string> ParseString() {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Error("expected a quoted string");
    const size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return Error("unterminated string");
    std::string_view body = text_.substr(pos_ + 1, end - pos_ - 1);
    if (body.find('\\') != std::string_view::npos) return Error("escapes in a string");
    pos_ = end + 1;
    return std::string(body);
  }

  absl::StatusOr<bool> ParseBool() {
    if (ConsumeWord("True")) return true;
    if (ConsumeWord("False")) return false;
    return Error("'fortran_order' must be True or False");
  }

  // A decimal int with an optional Python 2 'L' suffix; no sign (shapes are >= 0).
  absl::StatusOr<int64_t> ParseDim() {
    if (Peek() == '-') return Error("negative dimension in 'shape'");
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[pos_] - '0', &value)) {
        return Error("dimension in 'shape' overflows int64");
      }
      ++pos_;
    }
    if (pos_ == start) return Error("expected an integer in 'shape'");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    return value;
  }

  // "()", "(3,)", "(2, 3)", "(2, 3,)"; also "(3)", which Python reads as an int but
  // which means the same shape.
  absl::StatusOr<std::vector<int64_t>> ParseShape() {
    std::vector<int64_t> shape;
    if (!Consume('(')) return Error("'shape' must be a tuple");
    while (!Consume(')')) {
      if (shape.size() >= static_cast<size_t>(kMaxRank)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            ".npy array rank above the maximum %d", kMaxRank));
      }
      DYNVM_ASSIGN_OR_RETURN(int64_t dim, ParseDim());
      shape.push_back(dim);
      if (!Consume(',') && Peek() != ')') return Error("expected ',' or ')' in 'shape'");
    }
    return shape;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// How an .npy descr maps to a DType.
struct NpyDType {
  DType dtype;
  bool swap;  // big-endian data: reverse the bytes of each element
  // Strings: numpy's fixed-width 'S' (bytes) or 'U' (UTF-32 code points) elements, of
  // `width` bytes or code points each.
  char text_kind = 0;
  size_t width = 0;
};

absl::StatusOr<NpyDType> ParseDescr(std::string_view descr) {
  std::string_view type = descr;
  char order = '=';
  if (!type.empty() && (type[0] == '<' || type[0] == '>' || type[0] == '|' || type[0] == '=')) {
    order = type[0];
    type.remove_prefix(1);
  }
  if (!type.empty() && (type[0] == 'S' || type[0] == 'U')) {
    size_t width = 0;
    const std::string_view digits = type.substr(1);
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), width);
    if (ec == std::errc() && ptr == digits.data() + digits.size() && width > 0 &&
        width <= kMaxNpyStringWidth) {
      return NpyDType{DType::kString, order == '>', type[0], width};
    }
  }
  static constexpr std::pair<std::string_view, DType> kTypes[] = {
      {"f2", DType::kF16}, {"f4", DType::kF32}, {"f8", DType::kF64}, {"i1", DType::kI8},
      {"i2", DType::kI16}, {"i4", DType::kI32}, {"i8", DType::kI64}, {"u1", DType::kU8},
      {"u2", DType::kU16}, {"u4", DType::kU32}, {"u8", DType::kU64}, {"b1", DType::kBool},
      {"?", DType::kBool},
  };
  for (const auto& [name, dtype] : kTypes) {
    if (type == name) return NpyDType{dtype, order == '>' && DTypeSize(dtype) > 1};
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unsupported .npy dtype '%s': supported are <f2 <f4 <f8 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 |b1 "
      "(any byte order) and strings |S<n> <U<n> (n from 1 to 2^20)",
      absl::CHexEscape(absl::string_view(descr.data(), descr.size()))));
}

// Little-endian integer of `n` bytes at `p`.
uint32_t LoadLittleEndian(const uint8_t* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

// Copies `count` elements of `elem` bytes from `src` to `dst`, reversing each element's
// bytes when `swap`, and normalising bools to 0/1 (kernels rely on it; numpy accepts
// any non-zero byte as true).
void CopyElements(const uint8_t* src, uint8_t* dst, size_t count, size_t elem, bool swap,
                  bool is_bool) {
  if (is_bool) {
    for (size_t i = 0; i < count; ++i) dst[i] = src[i] != 0 ? 1 : 0;
  } else if (!swap) {
    std::memcpy(dst, src, count * elem);
  } else {
    for (size_t i = 0; i < count; ++i) {
      std::reverse_copy(src + i * elem, src + (i + 1) * elem, dst + i * elem);
    }
  }
}

// Appends the UTF-8 encoding of code point `c`; false for a surrogate or c > 0x10FFFF.
bool AppendUtf8(uint32_t c, std::string& out) {
  if (c >= 0xd800 && c <= 0xdfff) return false;
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else if (c <= 0x10ffff) {
    out.push_back(static_cast<char>(0xf0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
  } else {
    return false;
  }
  return true;
}

// The code points of `s`, or nothing if it is not valid UTF-8 (overlong forms,
// surrogates and values past U+10FFFF included).
std::optional<std::u32string> DecodeUtf8(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto lead = static_cast<uint8_t>(s[i]);
    const size_t n = lead < 0x80           ? 1
                     : (lead >> 5) == 6    ? 2
                     : (lead >> 4) == 14   ? 3
                     : (lead >> 3) == 30   ? 4
                                           : 0;
    if (n == 0 || i + n > s.size()) return std::nullopt;
    uint32_t c = n == 1 ? lead : lead & (0x7f >> n);
    for (size_t k = 1; k < n; ++k) {
      const auto cont = static_cast<uint8_t>(s[i + k]);
      if ((cont >> 6) != 2) return std::nullopt;
      c = (c << 6) | (cont & 0x3f);
    }
    constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < kSmallest[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return std::nullopt;
    out.push_back(c);
    i += n;
  }
  return out;
}

// Reads `count` numpy string elements of `type` at `src` into the string tensor
// `array`. numpy drops trailing NULs of each element, and so does this.
absl::Status ReadStrings(const uint8_t* src, int64_t count, const NpyDType& type,
                         const NDArrayObj& array) {
  const size_t elem = type.text_kind == 'U' ? 4 * type.width : type.width;
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t* p = src + static_cast<size_t>(i) * elem;
    std::string text;
    if (type.text_kind == 'S') {
      text.assign(reinterpret_cast<const char*>(p), type.width);
    } else {
      for (size_t k = 0; k < type.width; ++k) {
        uint8_t b[4];
        std::memcpy(b, p + 4 * k, 4);
        if (type.swap) std::reverse(b, b + 4);
        if (!AppendUtf8(LoadLittleEndian(b, 4), text)) {
          return absl::InvalidArgumentError(absl::StrFormat(
              ".npy string element %d holds 0x%x, which is not a Unicode scalar value", i,
              LoadLittleEndian(b, 4)));
        }
      }
    }
    text.erase(text.find_last_not_of('\0') + 1);
    SetStringElement(array, i, text);
  }
  return absl::OkStatus();
}

// How SerializeNpy writes a string tensor: as '<U' (UTF-32) when every element is
// valid UTF-8, else as '|S' bytes, `width` the longest element (at least 1, as numpy).
struct NpyStrings {
  std::string descr;
  std::vector<uint8_t> data;
};

absl::StatusOr<NpyStrings> EncodeStrings(const NDArrayObj& array) {
  const auto count = static_cast<size_t>(array.num_elements());
  std::vector<std::string_view> texts(count);
  std::vector<std::u32string> code_points(count);
  bool utf8 = true;
  size_t width = 1;
  for (size_t i = 0; i < count; ++i) {
    DYNVM_ASSIGN_OR_RETURN(texts[i], StringElement(array, static_cast<int64_t>(i)));
    if (utf8) {
      std::optional<std::u32string> decoded = DecodeUtf8(texts[i]);
      utf8 = decoded.has_value();
      if (utf8) code_points[i] = *std::move(decoded);
    }
  }
  for (size_t i = 0; i < count; ++i) {
    width = std::max(width, utf8 ? code_points[i].size() : texts[i].size());
  }
  // Every element is padded to the longest: bounded as the reader bounds it.
  const size_t unit = utf8 ? 4 : 1;
  size_t nbytes = 0;
  if (width > kMaxNpyStringWidth || __builtin_mul_overflow(count, width * unit, &nbytes) ||
      nbytes > kMaxNpyStringData) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "a string tensor of %d elements, the longest %d %s, makes .npy data of %d x %d bytes: "
        "at most %d %s per element and %d bytes in all",
        count, width, utf8 ? "code points" : "bytes", count, width * unit, kMaxNpyStringWidth,
        utf8 ? "code points" : "bytes", kMaxNpyStringData));
  }
  NpyStrings out{absl::StrFormat("%s%d", utf8 ? "<U" : "|S", width), {}};
  out.data.assign(nbytes, 0);
  for (size_t i = 0; i < count; ++i) {
    uint8_t* p = out.data.data() + i * width * (utf8 ? 4 : 1);
    if (!utf8) {
      if (!texts[i].empty()) std::memcpy(p, texts[i].data(), texts[i].size());  // "" may be null
      continue;
    }
    for (size_t k = 0; k < code_points[i].size(); ++k) {
      for (int b = 0; b < 4; ++b) p[4 * k + b] = static_cast<uint8_t>(code_points[i][k] >> (8 * b));
    }
  }
  return out;
}

// The descr SerializeNpy writes for `dtype` (strings aside). bf16 has no numpy descr; it
// is widened to '<f4' (exact: every bfloat16 value is a float32).
std::string_view DescrOf(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "<f4";
    case DType::kF64: return "<f8";
    case DType::kF16: return "<f2";
    case DType::kBF16: return "<f4";
    case DType::kI8: return "|i1";
    case DType::kI16: return "<i2";
    case DType::kI32: return "<i4";
    case DType::kI64: return "<i8";
    case DType::kU8: return "|u1";
    case DType::kU16: return "<u2";
    case DType::kU32: return "<u4";
    case DType::kU64: return "<u8";
    case DType::kBool: return "|b1";
    case DType::kString: break;  // EncodeStrings
  }
  return "<f4";
}

// Python's repr of a tuple of ints: "()", "(3,)", "(2, 3)".
std::string ShapeRepr(absl::Span<const int64_t> shape) {
  if (shape.size() == 1) return absl::StrFormat("(%d,)", shape[0]);
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

// The magic, version, length and padded dict numpy 1.24 writes for `array`, whose
// elements are of numpy type `descr`.
std::string EncodeHeader(const NDArrayObj& array, std::string_view descr) {
  std::string dict = absl::StrFormat("{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                                     descr, ShapeRepr(array.shape()));
  if (!array.shape().empty()) {
    const size_t digits = absl::StrCat(array.shape()[0]).size();
    dict.append(kGrowthDigits - std::min(digits, kGrowthDigits), ' ');
  }
  // Version 1.0 has a 2-byte length; 2.0 a 4-byte one, for headers that need it.
  for (size_t length_bytes : {2, 4}) {
    const size_t prefix = kNpyMagic.size() + 2 + length_bytes;
    const size_t unpadded = dict.size() + 1;  // + the final '\n'
    const size_t pad = kNpyAlign - (prefix + unpadded) % kNpyAlign;
    const size_t header_len = unpadded + pad;
    if (length_bytes == 2 && header_len > 0xffff) continue;
    std::string out(kNpyMagic);
    out.push_back(static_cast<char>(length_bytes == 2 ? 1 : 2));
    out.push_back(0);
    for (size_t i = 0; i < length_bytes; ++i) {
      out.push_back(static_cast<char>(header_len >> (8 * i)));
    }
    out += dict;
    out.append(pad, ' ');
    out.push_back('\n');
    return out;
  }
  return {};  // unreachable: a 4-byte length holds any header
}

// The data bytes SerializeNpy writes: the array's own, or bf16 widened to f32 in
// `scratch`.
absl::Span<const uint8_t> EncodeData(const NDArrayObj& array, std::vector<uint8_t>& scratch) {
  if (array.dtype() != DType::kBF16) {
    return {static_cast<const uint8_t*>(array.data()), array.nbytes()};
  }
  const auto count = static_cast<size_t>(array.num_elements());
  scratch.resize(count * sizeof(float));
  const auto* src = array.data_as<const uint16_t>();
  for (size_t i = 0; i < count; ++i) {
    const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(scratch.data() + i * sizeof(float), &bits, sizeof(bits));
  }
  return scratch;
}

}  // namespace

absl::StatusOr<NDArray> ParseNpy(absl::Span<const uint8_t> bytes,
                                 const std::shared_ptr<Allocator>& allocator) {
  if (bytes.size() < kNpyMagic.size() + 2 ||
      std::memcmp(bytes.data(), kNpyMagic.data(), kNpyMagic.size()) != 0) {
    return absl::InvalidArgumentError("not a .npy file: it does not start with \"\\x93NUMPY\"");
  }
  const uint8_t major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unsupported .npy version %d.%d: expected 1.0, 2.0 or 3.0", major, minor));
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t prefix = kNpyMagic.size() + 2 + length_bytes;
  if (bytes.size() < prefix) {
    return absl::InvalidArgumentError(
        absl::StrFormat("truncated .npy header: the file has %d bytes", bytes.size()));
  }
  const size_t header_len = LoadLittleEndian(bytes.data() + prefix - length_bytes, length_bytes);
  if (header_len > bytes.size() - prefix) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "truncated .npy header: it declares %d bytes, the file has %d after the prefix",
        header_len, bytes.size() - prefix));
  }
  std::string_view text(reinterpret_cast<const char*>(bytes.data()) + prefix, header_len);
  DYNVM_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(text).Parse());
  DYNVM_ASSIGN_OR_RETURN(NpyDType type, ParseDescr(header.descr));
  // For rank <= 1 Fortran and C order are the same bytes.
  if (header.fortran_order && header.shape.size() > 1) {
    return absl::InvalidArgumentError(
        "fortran-order .npy is not supported: save with np.ascontiguousarray");
  }
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(header.shape));
  const size_t elem = type.text_kind == 'U'   ? 4 * type.width
                      : type.text_kind == 'S' ? type.width
                                              : DTypeSize(type.dtype);
  size_t nbytes;
  const size_t available = bytes.size() - prefix - header_len;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), elem, &nbytes) || nbytes > available) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "truncated .npy data: %s %s needs %d bytes, the file has %d",
        DTypeName(type.dtype), ShapeToString(header.shape), static_cast<uint64_t>(count) * elem,
        available));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray array, NDArrayObj::Empty(header.shape, type.dtype, allocator));
  if (type.text_kind != 0) {
    DYNVM_RETURN_IF_ERROR(ReadStrings(bytes.data() + prefix + header_len, count, type, *array));
  } else if (nbytes > 0) {
    CopyElements(bytes.data() + prefix + header_len, static_cast<uint8_t*>(array->data()),
                 static_cast<size_t>(count), elem, type.swap, type.dtype == DType::kBool);
  }
  return array;
}

absl::StatusOr<NDArray> ReadNpyFile(const std::string& path,
                                    const std::shared_ptr<Allocator>& allocator) {
  DYNVM_ASSIGN_OR_RETURN(internal::MappedFile file, internal::MapFile(path));
  absl::StatusOr<NDArray> array = ParseNpy(file.bytes, allocator);
  if (!array.ok()) {
    return absl::Status(array.status().code(),
                        absl::StrFormat("%s: %s", path, array.status().message()));
  }
  return array;
}

namespace {

// The header and data bytes of `array` in .npy; `scratch` holds data made for it.
absl::StatusOr<std::pair<std::string, absl::Span<const uint8_t>>> Encode(
    const NDArrayObj& array, std::vector<uint8_t>& scratch) {
  if (array.dtype() == DType::kString) {
    DYNVM_ASSIGN_OR_RETURN(NpyStrings strings, EncodeStrings(array));
    scratch = std::move(strings.data);
    return std::make_pair(EncodeHeader(array, strings.descr), absl::Span<const uint8_t>(scratch));
  }
  return std::make_pair(EncodeHeader(array, DescrOf(array.dtype())), EncodeData(array, scratch));
}

}  // namespace

absl::StatusOr<std::string> SerializeNpy(const NDArray& array) {
  std::vector<uint8_t> scratch;
  DYNVM_ASSIGN_OR_RETURN(auto encoded, Encode(*array, scratch));
  std::string out = std::move(encoded.first);
  out.append(reinterpret_cast<const char*>(encoded.second.data()), encoded.second.size());
  return out;
}

absl::Status WriteNpyFile(const std::string& path, const NDArray& array) {
  std::vector<uint8_t> scratch;
  DYNVM_ASSIGN_OR_RETURN(const auto encoded, Encode(*array, scratch));
  const auto& [header, data] = encoded;
  const absl::Span<const uint8_t> pieces[] = {
      {reinterpret_cast<const uint8_t*>(header.data()), header.size()}, data};
  return internal::WriteFile(path, pieces);
}

}  // namespace dynvm::serializer
