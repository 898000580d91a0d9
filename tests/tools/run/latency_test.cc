// Tests of tools/run/latency.h: quantiles and the benchmark summary line.
#include "tools/run/latency.h"

#include "gtest/gtest.h"

namespace dynvm::tools {
namespace {

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
