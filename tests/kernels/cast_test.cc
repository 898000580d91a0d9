// Tests of the `cast` kernel (kernels/elementwise/unary.cc, rules in kernels/elementwise/convert.h)
// between every pair of runtime dtypes, against a reference written here in long double
// (which holds every value of every dtype exactly, i64 included):
//
//   to a floating type: the value rounded once to nearest even (f16 and bf16 by explicit
//     scaling and nearbyintl, overflowing to infinity); NaN stays NaN
//   floating -> integer: truncated toward zero, saturated at the range, NaN -> 0
//   integer -> integer: wrapped modulo 2^bits
//   -> bool: value != 0
//
// All results are exact: the comparison is equality (NaN with NaN). f16 and bf16 sources
// are tested with all 65536 bit patterns. Casts to and from strings are tested on the
// texts and errors string_convert.h states.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "objects/string_tensor.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using ::dynvm::kernels::testing::ElementExact;
using ::dynvm::kernels::testing::RunKernel;

using LD = long double;

constexpr DType kAll[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI8,
                          DType::kI16, DType::kI32, DType::kI64, DType::kU8,   DType::kU16,
                          DType::kU32, DType::kU64, DType::kBool};

bool IsFloating(DType d) {
  return d == DType::kF32 || d == DType::kF64 || d == DType::kF16 || d == DType::kBF16;
}

// The range of an integer dtype (bool excluded).
std::pair<LD, LD> IntRange(DType d) {
  switch (d) {
    case DType::kI8:
      return {-128.0L, 127.0L};
    case DType::kI16:
      return {-32768.0L, 32767.0L};
    case DType::kI32:
      return {-2147483648.0L, 2147483647.0L};
    case DType::kI64:
      return {-9223372036854775808.0L, 9223372036854775807.0L};
    case DType::kU16:
      return {0.0L, 65535.0L};
    case DType::kU32:
      return {0.0L, 4294967295.0L};
    case DType::kU64:
      return {0.0L, 18446744073709551615.0L};
    default:
      return {0.0L, 255.0L};  // u8
  }
}

// `v` rounded to nearest even with `p` significand bits, smallest normal exponent
// `emin` and largest finite value `max`.
LD RoundToFormat(LD v, int p, int emin, LD max) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  const int e = std::max(static_cast<int>(std::ilogb(v)), emin);
  const LD r = std::ldexp(std::nearbyint(std::ldexp(std::fabs(v), p - 1 - e)), e - (p - 1));
  return std::copysign(r > max ? std::numeric_limits<LD>::infinity() : r, v);
}

// What cast(v) from `from` to `to` must give, as a long double.
LD Expected(LD v, DType from, DType to) {
  if (to == DType::kBool) return v != 0 ? 1 : 0;
  if (!IsFloating(to)) {
    const auto [lo, hi] = IntRange(to);
    if (IsFloating(from)) {
      if (std::isnan(v)) return 0;
      return std::min(hi, std::max(lo, std::trunc(v)));
    }
    // Modulo 2^bits in 128-bit integers: v - lo may need 65 bits (u64 to i8).
    const auto span = static_cast<__int128>(hi) - static_cast<__int128>(lo) + 1;
    __int128 w = (static_cast<__int128>(v) - static_cast<__int128>(lo)) % span;
    if (w < 0) w += span;
    return static_cast<LD>(w + static_cast<__int128>(lo));
  }
  switch (to) {
    case DType::kF32:
      return static_cast<float>(v);
    case DType::kF64:
      return static_cast<double>(v);
    case DType::kF16:
      return RoundToFormat(v, 11, -14, 65504.0L);
    default:
      return RoundToFormat(v, 8, -126, std::ldexp(255.0L, 120));  // bf16
  }
}

// A tensor of `dtype` holding `values` (each representable in it) exactly.
NDArray MakeTensor(DType dtype, const std::vector<LD>& values) {
  NDArray t =
      *NDArrayObj::Empty({static_cast<int64_t>(values.size())}, dtype, MakeNaiveAllocator());
  for (size_t i = 0; i < values.size(); ++i) {
    const LD v = values[i];
    switch (dtype) {
      case DType::kF32:
        t->data_as<float>()[i] = static_cast<float>(v);
        break;
      case DType::kF64:
        t->data_as<double>()[i] = static_cast<double>(v);
        break;
      case DType::kI8:
        t->data_as<int8_t>()[i] = static_cast<int8_t>(v);
        break;
      case DType::kI16:
        t->data_as<int16_t>()[i] = static_cast<int16_t>(v);
        break;
      case DType::kI32:
        t->data_as<int32_t>()[i] = static_cast<int32_t>(v);
        break;
      case DType::kI64:
        t->data_as<int64_t>()[i] = static_cast<int64_t>(v);
        break;
      case DType::kU8:
        t->data_as<uint8_t>()[i] = static_cast<uint8_t>(v);
        break;
      case DType::kU16:
        t->data_as<uint16_t>()[i] = static_cast<uint16_t>(v);
        break;
      case DType::kU32:
        t->data_as<uint32_t>()[i] = static_cast<uint32_t>(v);
        break;
      case DType::kU64:
        t->data_as<uint64_t>()[i] = static_cast<uint64_t>(v);
        break;
      case DType::kBool:
        t->data_as<uint8_t>()[i] = v != 0;
        break;
      default:
        t->data_as<uint16_t>()[i] = static_cast<uint16_t>(v);
        break;  // raw f16/bf16 bits
    }
  }
  return t;
}

// Source values for `dtype`: edge values of every destination (halfway points,
// saturation bounds, wrap-arounds, double-rounding traps), then random ones. For f16 and
// bf16, every bit pattern.
std::vector<LD> SourceValues(DType dtype, std::mt19937& rng) {
  std::vector<LD> v;
  if (dtype == DType::kF16 || dtype == DType::kBF16) {
    for (int bits = 0; bits < 65536; ++bits) v.push_back(bits);
    return v;
  }
  const LD k2_24 = std::ldexp(1.0L, 24);
  const LD kEdges[] = {
      0,
      1,
      -1,
      0.5L,
      1.5L,
      2.5L,
      -2.5L,
      -0.7L,
      127,
      128,
      -128,
      -129,
      255,
      255.9L,
      256,
      300,
      -300,
      32767,
      32768,
      -32769,
      65504,
      65519,
      65520,
      65535,
      65536,
      2147483647,
      2147483648.0L,
      -2147483649.0L,
      3e9L,
      -3e9L,
      1e10L,
      k2_24 + 1,
      k2_24 + 3,
      std::ldexp(1.0L, 25) + std::ldexp(1.0L, 17) + 1,    // rounds twice through f32 to bf16
      1 + std::ldexp(1.0L, -11) + std::ldexp(1.0L, -40),  // rounds twice through f32 to f16
      std::ldexp(1.0L, 53) + 1,
      9223372036854775807.0L,
      -9223372036854775808.0L,
      9223372036854775808.0L,
      4294967295.0L,
      4294967296.0L,
      18446744073709551615.0L,
      std::ldexp(1.0L, 64) - std::ldexp(1.0L, 39) - 1,  // rounds twice through f64 to f32
      std::ldexp(1.0L, 63) - std::ldexp(1.0L, 10),
      1e-8L,
      6e-8L,
      3e-5L,
      6.1e-5L,
      1e-40L,
      1e-300L,
      1e300L,
      3.5e38L,
      std::numeric_limits<LD>::infinity(),
      -std::numeric_limits<LD>::infinity(),
      std::numeric_limits<LD>::quiet_NaN()};
  std::uniform_real_distribution<double> wide(-70000, 70000), narrow(-3, 3);
  std::vector<LD> candidates(std::begin(kEdges), std::end(kEdges));
  for (int i = 0; i < 2000; ++i) {
    candidates.push_back(wide(rng));
    candidates.push_back(narrow(rng));
    candidates.push_back(std::trunc(wide(rng)));
    candidates.push_back(static_cast<int64_t>(rng()) << (rng() % 32));
  }
  for (LD c : candidates) {
    if (dtype == DType::kF32) {
      if (std::isnan(c) || static_cast<LD>(static_cast<float>(c)) == c) v.push_back(c);
    } else if (dtype == DType::kF64) {
      if (std::isnan(c) || static_cast<LD>(static_cast<double>(c)) == c) v.push_back(c);
    } else if (dtype == DType::kBool) {
      if (c == 0 || c == 1) v.push_back(c);
    } else {
      const auto [lo, hi] = IntRange(dtype);
      if (c == std::trunc(c) && c >= lo && c <= hi) v.push_back(c);
    }
  }
  if (dtype == DType::kF32) {  // random bit patterns
    for (int i = 0; i < 20000; ++i) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  }
  return v;
}

TEST(CastTest, EveryPairOfDTypes) {
  std::mt19937 rng(17);
  for (DType from : kAll) {
    const std::vector<LD> values = SourceValues(from, rng);
    const NDArray x = MakeTensor(from, values);
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + std::string(DTypeName(to)));
      absl::StatusOr<std::vector<NDArray>> y =
          RunKernel("cast", {{"dtype", std::string(DTypeName(to))}}, {x}, {to});
      ASSERT_TRUE(y.ok()) << y.status();
      const NDArrayObj& out = *(*y)[0];
      ASSERT_EQ(out.shape(), x->shape());
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        const LD v = ElementExact(*x, i);
        const LD want = Expected(v, from, to);
        const LD got = ElementExact(out, i);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got)) << "value " << static_cast<double>(v) << " -> " << got;
        } else {
          ASSERT_EQ(got, want) << "value " << static_cast<double>(v) << " (element " << i << ")";
          if (want == 0 && IsFloating(to)) {
            ASSERT_EQ(std::signbit(got), std::signbit(want));
          }
        }
      }
    }
  }
}

TEST(CastTest, LongNames) {
  NDArray x = MakeTensor(DType::kF32, {1.5L, -2.5L});
  absl::StatusOr<std::vector<NDArray>> y =
      RunKernel("cast", {{"dtype", std::string("int64")}}, {x}, {DType::kI64});
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ((*y)[0]->data_as<int64_t>()[0], 1);
  EXPECT_EQ((*y)[0]->data_as<int64_t>()[1], -2);
}

TEST(CastTest, EmptyAndScalar) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{0, 3}, std::vector<int64_t>{}}) {
    NDArray x = *NDArrayObj::Empty(shape, DType::kF64, MakeNaiveAllocator());
    if (x->num_elements() == 1) x->data_as<double>()[0] = -7.9;
    absl::StatusOr<std::vector<NDArray>> y =
        RunKernel("cast", {{"dtype", std::string("i8")}}, {x}, {DType::kI8});
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ((*y)[0]->shape(), x->shape());
    if (x->num_elements() == 1) {
      EXPECT_EQ((*y)[0]->data_as<int8_t>()[0], -7);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Casts with string tensors (kernels/elementwise/string_convert.h).

std::vector<std::string> Strings(const NDArrayObj& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(StringElement(t, i).value_or("?"));
  return out;
}

absl::StatusOr<NDArray> CastTo(const NDArray& x, DType to) {
  DYNVM_ASSIGN_OR_RETURN(std::vector<NDArray> y,
                         RunKernel("cast", {{"dtype", std::string(DTypeName(to))}}, {x}, {to}));
  return y[0];
}

TEST(CastStringTest, NumbersToText) {
  // The shortest text that reads back to the same value, as numpy's str() of float32.
  const NDArray f = MakeTensor(DType::kF32, {0.9767611L, 0.039187793L, 1e-5L, 1e20L, -0.0L, 3L});
  f->data_as<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  absl::StatusOr<NDArray> s = CastTo(f, DType::kString);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Strings(**s), (std::vector<std::string>{"0.9767611", "0.039187793", "1e-05", "1e+20",
                                                    "-0", "nan"}));
  const NDArray i = MakeTensor(DType::kI64, {-9223372036854775808.0L, 42});
  EXPECT_EQ(Strings(**CastTo(i, DType::kString)),
            (std::vector<std::string>{"-9223372036854775808", "42"}));
  const NDArray u = MakeTensor(DType::kU64, {18446744073709551615.0L});
  EXPECT_EQ(Strings(**CastTo(u, DType::kString)), (std::vector<std::string>{"18446744073709551615"}));
  const NDArray b = MakeTensor(DType::kBool, {1, 0});
  EXPECT_EQ(Strings(**CastTo(b, DType::kString)), (std::vector<std::string>{"True", "False"}));
}

TEST(CastStringTest, TextToNumbers) {
  const std::vector<std::string> text = {"0.47892547", "NaN", "INF", "+INF", "-inf", "-0", "1e-45",
                                         "-1e-50"};
  const NDArray s = *MakeStringTensor({8}, text, MakeNaiveAllocator());
  absl::StatusOr<NDArray> f = CastTo(s, DType::kF32);
  ASSERT_TRUE(f.ok()) << f.status();
  const float* p = (*f)->data_as<float>();
  EXPECT_EQ(p[0], 0.47892547f);  // read as a float directly: rounded once
  EXPECT_TRUE(std::isnan(p[1]));
  EXPECT_EQ(p[2], std::numeric_limits<float>::infinity());
  EXPECT_EQ(p[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(p[4], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(p[5] == 0 && std::signbit(p[5]));
  EXPECT_EQ(p[6], std::numeric_limits<float>::denorm_min());
  EXPECT_TRUE(p[7] == 0 && std::signbit(p[7]));  // below f32's range: rounds to zero

  const std::vector<std::string> tiny = {"1e-400", "-0"};
  absl::StatusOr<NDArray> f64 = CastTo(*MakeStringTensor({2}, tiny, MakeNaiveAllocator()), DType::kF64);
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_EQ((*f64)->data_as<double>()[0], 0.0);  // below f64's range: rounds to zero
  absl::StatusOr<NDArray> u8 = CastTo(*MakeStringTensor({2}, tiny, MakeNaiveAllocator()), DType::kU8);
  EXPECT_FALSE(u8.ok());  // "1e-400" is no integer
  const std::vector<std::string> zero = {"-0"};
  absl::StatusOr<NDArray> u32 = CastTo(*MakeStringTensor({1}, zero, MakeNaiveAllocator()), DType::kU32);
  ASSERT_TRUE(u32.ok()) << u32.status();
  EXPECT_EQ((*u32)->data_as<uint32_t>()[0], 0u);

  const std::vector<std::string> ints = {"-128", "+127", "0"};
  absl::StatusOr<NDArray> i8 = CastTo(*MakeStringTensor({3}, ints, MakeNaiveAllocator()), DType::kI8);
  ASSERT_TRUE(i8.ok()) << i8.status();
  EXPECT_EQ((*i8)->data_as<int8_t>()[0], -128);
  EXPECT_EQ((*i8)->data_as<int8_t>()[1], 127);
  const std::vector<std::string> bools = {"True", "false", "1"};
  absl::StatusOr<NDArray> b = CastTo(*MakeStringTensor({3}, bools, MakeNaiveAllocator()), DType::kBool);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(std::vector<uint8_t>((*b)->data_as<uint8_t>(), (*b)->data_as<uint8_t>() + 3),
            (std::vector<uint8_t>{1, 0, 1}));
}

TEST(CastStringTest, TextThatIsNotTheNumberIsAnError) {
  const struct {
    const char* text;
    DType to;
    const char* message;
  } kCases[] = {
      {"1.5", DType::kI32, "'1.5' is not an integer (i32)"},
      {"128", DType::kI8, "'128' is out of the range of i8"},
      {"-1", DType::kU8, "'-1' is out of the range of u8"},
      {"1e99999", DType::kF32, "'1e99999' is out of the range of f32"},
      {"-1e99999", DType::kF64, "'-1e99999' is out of the range of f64"},
      {"nan(1)", DType::kF32, "'nan(1)' is not a number"},
      {"70000", DType::kF16, "'70000' is out of the range of f16"},
      {"+-1", DType::kI32, "'+-1' is not an integer (i32)"},
      {" 1", DType::kF32, "' 1' is not a number"},
      {"1e39", DType::kF32, "'1e39' is out of the range of f32"},
      {"", DType::kF64, "'' is not a number"},
      {"yes", DType::kBool, "'yes' is not a bool"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.text);
    const std::vector<std::string> text = {"0", c.text};
    absl::StatusOr<NDArray> y = CastTo(*MakeStringTensor({2}, text, MakeNaiveAllocator()), c.to);
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(y.status().message()), ::testing::HasSubstr("element 1: "));
    EXPECT_THAT(std::string(y.status().message()), ::testing::HasSubstr(c.message));
  }
}

TEST(CastStringTest, StringToStringCopiesIntoTheOutputsStorage) {
  const std::vector<std::string> text = {"a", "bc"};
  NDArray x = *MakeStringTensor({2}, text, MakeNaiveAllocator());
  absl::StatusOr<NDArray> y = CastTo(x, DType::kString);
  ASSERT_TRUE(y.ok()) << y.status();
  x = NDArray();
  EXPECT_EQ(Strings(**y), text);
}

TEST(CastStringTest, OtherKernelsRefuseStrings) {
  const std::vector<std::string> text = {"1", "2"};
  const NDArray s = *MakeStringTensor({2}, text, MakeNaiveAllocator());
  absl::StatusOr<std::vector<NDArray>> y = RunKernel("add", {}, {s, s});
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(y.status().message()),
              ::testing::HasSubstr("kernel 'add' does not take string tensors (only kernels made "
                                   "for them, such as cast, do): argument 0 is one"));
}

}  // namespace
}  // namespace dynvm::kernels
