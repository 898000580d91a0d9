// Tests of objects/element_codec.h: every dtype's elements written and read back, and
// the f16 and bf16 conversions on every bit pattern and at their edges (NaN, infinity,
// ties to even, subnormals, overflow).
#include "objects/element_codec.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"

namespace dynvm {
namespace {

using ::testing::HasSubstr;

NDArray Tensor(DType dtype, int64_t n) {
  return *NDArrayObj::Empty({n}, dtype, MakeNaiveAllocator());
}

TEST(HalfTest, EveryF16AndBF16ValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    const double h = HalfBitsToFloat(b);
    if (std::isnan(h)) {
      EXPECT_TRUE(std::isnan(HalfBitsToFloat(DoubleToHalfBits(h)))) << bits;
    } else {
      EXPECT_EQ(DoubleToHalfBits(h), b) << bits;
    }
    const double bf = BFloat16BitsToFloat(b);
    if (std::isnan(bf)) {
      EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(DoubleToBFloat16Bits(bf)))) << bits;
    } else {
      EXPECT_EQ(DoubleToBFloat16Bits(bf), b) << bits;
    }
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(HalfBitsToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfBitsToFloat(0x7bff), 65504.0f);              // the largest half
  EXPECT_EQ(HalfBitsToFloat(0x0001), std::ldexp(1.0f, -24));  // the smallest subnormal
  EXPECT_EQ(HalfBitsToFloat(0x03ff), std::ldexp(1023.0f, -24));  // the largest subnormal
  EXPECT_EQ(HalfBitsToFloat(0xfc00), -INFINITY);
  EXPECT_EQ(BFloat16BitsToFloat(0x3f80), 1.0f);
  EXPECT_EQ(BFloat16BitsToFloat(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(DoubleToHalfBits(0.1), 0x2e66);
  EXPECT_EQ(DoubleToHalfBits(-0.0), 0x8000);
  EXPECT_EQ(DoubleToBFloat16Bits(0.1), 0x3dcd);
}

TEST(HalfTest, NanStaysNanAndInfinityStays) {
  EXPECT_EQ(DoubleToHalfBits(NAN) & 0x7fff, 0x7e00);       // quiet NaN
  EXPECT_EQ(DoubleToHalfBits(-NAN) & 0x8000, 0x8000);      // with its sign
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::signaling_NaN()) & 0x7fc0, 0x7fc0);
  EXPECT_EQ(DoubleToHalfBits(INFINITY), 0x7c00);
  EXPECT_EQ(DoubleToHalfBits(-INFINITY), 0xfc00);
  EXPECT_EQ(DoubleToBFloat16Bits(INFINITY), 0x7f80);
}

TEST(HalfTest, OverflowGoesToInfinity) {
  EXPECT_EQ(DoubleToHalfBits(65519.0), 0x7bff);  // below halfway to 65536
  EXPECT_EQ(DoubleToHalfBits(65520.0), 0x7c00);  // halfway: even is infinity
  EXPECT_EQ(DoubleToHalfBits(1e10), 0x7c00);
  EXPECT_EQ(DoubleToHalfBits(1e300), 0x7c00);    // beyond f32: still one rounding
  EXPECT_EQ(DoubleToBFloat16Bits(1e39), 0x7f80);
  EXPECT_EQ(DoubleToBFloat16Bits(-1e300), 0xff80);
}

TEST(HalfTest, TiesRoundToEven) {
  // Halfway between the smallest subnormal and zero: even is zero.
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.0, -25) * 3), 0x0002);    // 1.5 ulp -> 2
  EXPECT_EQ(DoubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // 1 + half an ulp
  EXPECT_EQ(DoubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(DoubleToHalfBits(2049.0), 0x6800);  // between 2048 and 2050: even is 2048
  EXPECT_EQ(DoubleToBFloat16Bits(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(DoubleToBFloat16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);
  // Just below the subnormal/normal boundary rounds up into the normals.
  EXPECT_EQ(DoubleToHalfBits(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)), 0x0400);
  // A double a hair above a tie rounds up: rounding happens once, not via f32.
  EXPECT_EQ(DoubleToHalfBits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
}

TEST(ElementTest, FloatDTypesRoundTrip) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    EXPECT_TRUE(IsFloatDType(dtype));
    EXPECT_FALSE(IsIntegerDType(dtype));
    NDArray t = Tensor(dtype, 4);
    const double values[] = {1.5, -2.0, 0.0, INFINITY};
    for (int i = 0; i < 4; ++i) SetFloatElement(*t, i, values[i]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(ElementAsDouble(*t, i), values[i]);
  }
  NDArray f16 = Tensor(DType::kF16, 1);
  SetFloatElement(*f16, 0, 0.1);
  EXPECT_EQ(f16->data_as<uint16_t>()[0], 0x2e66);
  EXPECT_EQ(ElementAsDouble(*f16, 0), 0.0999755859375);
}

// f32 rounds to nearest like IEEE 754: up to half an ulp above the largest float rounds
// down to it, from there on a finite double becomes infinity.
TEST(ElementTest, F32PastItsRangeRoundsToInfinity) {
  NDArray t = Tensor(DType::kF32, 1);
  const double kMaxFloat = std::numeric_limits<float>::max();
  const struct {
    double in;
    double out;
  } cases[] = {{kMaxFloat, kMaxFloat},
               {-3.4028235e38, -kMaxFloat},
               {0x1.fffffefffffffp127, kMaxFloat},
               {0x1.ffffffp127, INFINITY},
               {-1e300, -INFINITY},
               {1e300, INFINITY}};
  for (const auto& c : cases) {
    SetFloatElement(*t, 0, c.in);
    EXPECT_EQ(ElementAsDouble(*t, 0), c.out) << c.in;
  }
}

TEST(ElementTest, IntegerDTypesRoundTripAndCheckTheirRange) {
  struct Case {
    DType dtype;
    int64_t min;
    uint64_t max;
    const char* range;
  };
  const Case cases[] = {
      {DType::kI8, -128, 127, "[-128, 127]"},
      {DType::kI16, -32768, 32767, "[-32768, 32767]"},
      {DType::kI32, INT32_MIN, INT32_MAX, "[-2147483648, 2147483647]"},
      {DType::kI64, INT64_MIN, INT64_MAX, "[-9223372036854775808, 9223372036854775807]"},
      {DType::kU8, 0, 255, "[0, 255]"},
      {DType::kU16, 0, 65535, "[0, 65535]"},
      {DType::kU32, 0, UINT32_MAX, "[0, 4294967295]"},
      {DType::kU64, 0, UINT64_MAX, "[0, 18446744073709551615]"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(DTypeName(c.dtype));
    EXPECT_TRUE(IsIntegerDType(c.dtype));
    EXPECT_EQ(IntegerRangeText(c.dtype), c.range);
    NDArray t = Tensor(c.dtype, 3);
    ASSERT_TRUE(SetIntegerElement(*t, 0, c.min).ok());
    ASSERT_TRUE(SetUnsignedElement(*t, 1, c.max).ok());
    ASSERT_TRUE(SetIntegerElement(*t, 2, 7).ok());
    EXPECT_EQ(ElementAsInt(*t, 0), c.min);
    EXPECT_EQ(IntElementText(*t, 1), std::to_string(c.max));
    EXPECT_EQ(ElementAsDouble(*t, 2), 7.0);
    if (c.max < UINT64_MAX) {
      EXPECT_THAT(SetUnsignedElement(*t, 2, c.max + 1).message(),
                  HasSubstr(std::string("out of range ") + c.range));
    }
    if (c.min > INT64_MIN) {
      EXPECT_THAT(SetIntegerElement(*t, 2, c.min - 1).message(),
                  HasSubstr(std::string("out of range ") + c.range));
    }
    EXPECT_EQ(ElementAsInt(*t, 2), 7);  // a refused value leaves the element
  }
}

TEST(ElementTest, BoolReadsAnyNonzeroByteAsTrue) {
  NDArray t = Tensor(DType::kBool, 3);
  SetBoolElement(*t, 0, true);
  SetBoolElement(*t, 1, false);
  t->data_as<uint8_t>()[2] = 7;
  EXPECT_EQ(ElementAsInt(*t, 0), 1);
  EXPECT_EQ(ElementAsInt(*t, 1), 0);
  EXPECT_EQ(ElementAsInt(*t, 2), 1);
  EXPECT_EQ(ElementAsDouble(*t, 2), 1.0);
  EXPECT_FALSE(IsFloatDType(DType::kBool));
  EXPECT_FALSE(IsIntegerDType(DType::kBool));
  EXPECT_FALSE(IsIntegerDType(DType::kString));
}

}  // namespace
}  // namespace dynvm
