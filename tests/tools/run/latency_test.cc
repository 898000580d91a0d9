// Tests of tools/run/elements.h and tools/run/latency.h: half-precision conversions
// (every bit pattern, rounding at the edges) and the benchmark summary line.
#include "tools/run/elements.h"

#include <cmath>

#include "gtest/gtest.h"
#include "tools/run/latency.h"

namespace dynvm::tools {
namespace {

TEST(HalfTest, EveryF16AndBF16ValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint16_t b = static_cast<uint16_t>(bits);
    const double h = F16ToDouble(b);
    if (std::isnan(h)) {
      EXPECT_TRUE(std::isnan(F16ToDouble(DoubleToF16(h))));
    } else {
      EXPECT_EQ(DoubleToF16(h), b) << bits;
    }
    const double bf = BF16ToDouble(b);
    if (std::isnan(bf)) {
      EXPECT_TRUE(std::isnan(BF16ToDouble(DoubleToBF16(bf))));
    } else {
      EXPECT_EQ(DoubleToBF16(bf), b) << bits;
    }
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(F16ToDouble(0x3c00), 1.0);
  EXPECT_EQ(F16ToDouble(0x7bff), 65504.0);
  EXPECT_EQ(F16ToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(F16ToDouble(0xfc00), -INFINITY);
  EXPECT_EQ(BF16ToDouble(0x3f80), 1.0);
  EXPECT_EQ(BF16ToDouble(0x0001), std::ldexp(1.0, -133));
  EXPECT_EQ(DoubleToF16(-0.0), 0x8000);
  EXPECT_EQ(DoubleToF16(1e10), 0x7c00);
  EXPECT_EQ(DoubleToBF16(1e39), 0x7f80);
}

TEST(HalfTest, TiesRoundToEven) {
  // Halfway between the smallest subnormal and zero: even is zero.
  EXPECT_EQ(DoubleToF16(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(DoubleToF16(std::ldexp(1.0, -25) * 3), 0x0002);    // 1.5 ulp -> 2
  EXPECT_EQ(DoubleToF16(1.0 + std::ldexp(1.0, -11)), 0x3c00);  // 1 + half an ulp
  EXPECT_EQ(DoubleToF16(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(DoubleToBF16(1.0 + std::ldexp(1.0, -8)), 0x3f80);
  EXPECT_EQ(DoubleToBF16(1.0 + 3 * std::ldexp(1.0, -8)), 0x3f82);
  // Just below the subnormal/normal boundary rounds up into the normals.
  EXPECT_EQ(DoubleToF16(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)), 0x0400);
}

TEST(LatencyTest, InterpolatesLikeNumpyPercentile) {
  const double sorted[] = {1, 2, 4};
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.5), 2);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.1), 1.2);
  EXPECT_DOUBLE_EQ(Quantile(sorted, 0.9), 3.6);
  const double one[] = {7};
  EXPECT_DOUBLE_EQ(Quantile(one, 0.9), 7);
}

TEST(LatencyTest, SummaryLine) {
  EXPECT_EQ(LatencyLine({4.0, 1.0, 2.0}),
            "latency_ms median=2.000 p10=1.200 p90=3.600 min=1.000 runs=3");
  EXPECT_EQ(LatencyLine({0.0123}), "latency_ms median=0.012 p10=0.012 p90=0.012 min=0.012 runs=1");
}

}  // namespace
}  // namespace dynvm::tools
