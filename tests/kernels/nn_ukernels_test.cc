// Tests of the neural-network microkernels (kernels/nn/ukernels.h), every table this CPU
// runs (the scalar reference and AVX2+FMA) against plain double-precision references, on
// every length from 0 to 70 and some longer ones, so that each main loop, remainder loop
// and masked tail is exercised, and in place.
//
// Tolerances, relative to the magnitude of what is summed (eps = 2^-23):
//  - max and elementwise add/multiply/max: exact up to one rounding (eps relative, or 2 eps
//    for x * a + b, which the scalar code rounds twice);
//  - sums: n eps times the sum of magnitudes (float accumulation in any order);
//  - exp: 4 eps relative (the AVX2 polynomial is within 2 ulp, libm within 1);
//  - sigmoid and tanh inside the gates: 2e-6 absolute (exp's error, a division, and
//    tanh's cancellation near 0 which is bounded in absolute terms).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/microkernels.h"
#include "kernels/nn/ukernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::nn {
namespace {

using ::dynvm::kernels::testing::EveryMicrokernelTable;
using ::dynvm::kernels::testing::MicrokernelTableName;
using ::dynvm::kernels::testing::RandomFloats;

constexpr double kEps = 1.0 / (1 << 23);

std::vector<int64_t> Lengths() {
  std::vector<int64_t> lengths;
  for (int64_t n = 0; n <= 70; ++n) lengths.push_back(n);
  for (int64_t n : {127, 128, 129, 383, 1000}) lengths.push_back(n);
  return lengths;
}

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

class NnUkernelsTest : public ::testing::TestWithParam<const Microkernels*> {
 protected:
  const NnUkernels& uk() const { return GetParam()->nn; }
  // The row max the nn kernels take from the elementwise part.
  float rmax(int64_t n, const float* x) const { return GetParam()->elementwise.rmax(n, x); }
};

// The row max and sum are the elementwise part's, tested with it (unary_test.cc).
TEST_P(NnUkernelsTest, SumOfSquaredDifferences) {
  std::mt19937 rng(1);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomFloats(rng, n, -3, 3);
    const float c = 0.25f;
    double sq = 0;
    for (float v : x) sq += (double{v} - c) * (double{v} - c);
    EXPECT_NEAR(uk().rsumsqdiff(n, x.data(), c), sq, (n + 2) * kEps * sq);
  }
}

TEST_P(NnUkernelsTest, ExpMinusMax) {
  std::mt19937 rng(2);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomFloats(rng, n, -20, 5);
    const float max = n == 0 ? 0.0f : rmax(n, x.data());
    std::vector<float> y(n, -1.0f);
    const float sum = uk().raddstoreexpminusmax(n, x.data(), max, y.data());
    double want_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      // The difference is rounded to float first, as the kernels compute it.
      const double e = std::exp(double{x[i] - max});
      want_sum += e;
      ASSERT_NEAR(y[i], e, 4 * kEps * e) << i;
    }
    EXPECT_NEAR(sum, want_sum, (n + 4) * kEps * want_sum);
    EXPECT_NEAR(uk().raddexpminusmax(n, x.data(), max), want_sum, (n + 4) * kEps * want_sum);
  }
}

TEST_P(NnUkernelsTest, ExpOverItsRange) {
  // Every float exponent down to where exp underflows, -inf (0) and NaN (NaN).
  std::vector<float> x;
  for (float v = -0.0f; v > -110.0f; v = v * 1.0625f - 1e-3f) x.push_back(v);
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  uk().raddstoreexpminusmax(static_cast<int64_t>(x.size()) - 1, x.data(), 0.0f, y.data());
  for (size_t i = 0; i + 1 < x.size(); ++i) {
    const double e = std::exp(double{x[i]});
    // Results below FLT_MIN may be flushed to 0.
    const double tol = e < std::numeric_limits<float>::min() ? e : 4 * kEps * e;
    ASSERT_NEAR(y[i], e, tol) << "exp(" << x[i] << ")";
  }
  uk().raddstoreexpminusmax(1, &x.back(), 0.0f, &y.back());
  EXPECT_TRUE(std::isnan(y.back()));
}

TEST_P(NnUkernelsTest, Elementwise) {
  std::mt19937 rng(3);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomFloats(rng, n, -3, 3), a = RandomFloats(rng, n, -3, 3),
                             b = RandomFloats(rng, n, -3, 3);
    std::vector<float> y(n);
    auto expect_all = [&](auto want, double rel) {
      for (int64_t i = 0; i < n; ++i) {
        const double w = want(i);
        ASSERT_NEAR(y[i], w, rel * (std::fabs(w) + 1e-30)) << i;
      }
    };
    uk().vmulc(n, x.data(), 1.5f, y.data());
    expect_all([&](int64_t i) { return x[i] * 1.5; }, kEps);
    uk().vaddc(n, x.data(), -0.75f, y.data());
    expect_all([&](int64_t i) { return x[i] - 0.75; }, kEps);
    uk().vadd(n, x.data(), a.data(), y.data());
    expect_all([&](int64_t i) { return double{x[i]} + a[i]; }, kEps);
    uk().vmuladdc(n, x.data(), 0.5f, 2.0f, y.data());
    expect_all([&](int64_t i) { return x[i] * 0.5 + 2.0; }, 2 * kEps);
    uk().vmuladd(n, x.data(), a.data(), b.data(), y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double w = double{x[i]} * a[i] + b[i];
      ASSERT_NEAR(y[i], w, 2 * kEps * (std::fabs(double{x[i]} * a[i]) + std::fabs(b[i]))) << i;
    }
    y = a;
    uk().vmaxacc(n, x.data(), y.data());
    expect_all([&](int64_t i) { return std::max(x[i], a[i]); }, 0.0);
    y = a;
    uk().vaddacc(n, x.data(), y.data());
    expect_all([&](int64_t i) { return double{x[i]} + a[i]; }, kEps);
    y = a;
    uk().vmulcacc(n, x.data(), 1.5f, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double w = a[i] + 1.5 * x[i];
      ASSERT_NEAR(y[i], w, 2 * kEps * (std::fabs(a[i]) + std::fabs(1.5 * x[i]))) << i;
    }
  }
}

TEST_P(NnUkernelsTest, Normalize) {
  std::mt19937 rng(4);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomFloats(rng, n, -3, 3), g = RandomFloats(rng, n, -2, 2),
                             b = RandomFloats(rng, n, -2, 2);
    for (int variant = 0; variant < 4; ++variant) {
      const float* gamma = variant & 1 ? g.data() : nullptr;
      const float* beta = variant & 2 ? b.data() : nullptr;
      std::vector<float> y(n);
      uk().vnormalize(n, x.data(), 0.5f, 1.25f, gamma, beta, y.data());
      for (int64_t i = 0; i < n; ++i) {
        const double scaled = (double{x[i]} - 0.5) * 1.25 * (gamma ? g[i] : 1.0);
        const double w = scaled + (beta ? b[i] : 0.0);
        ASSERT_NEAR(y[i], w, 4 * kEps * (std::fabs(scaled) + 2)) << i << " variant " << variant;
      }
    }
  }
}

TEST_P(NnUkernelsTest, LstmGates) {
  std::mt19937 rng(5);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(n);
    const std::vector<float> gates = RandomFloats(rng, 4 * n, -6, 6), c = RandomFloats(rng, n, -2, 2);
    std::vector<float> h_out(n), c_out(n);
    uk().lstm_gates(n, gates.data(), c.data(), h_out.data(), c_out.data());
    for (int64_t j = 0; j < n; ++j) {
      const double cell =
          Sigmoid(gates[n + j]) * c[j] + Sigmoid(gates[j]) * std::tanh(gates[2 * n + j]);
      ASSERT_NEAR(c_out[j], cell, 2e-6) << j;
      ASSERT_NEAR(h_out[j], Sigmoid(gates[3 * n + j]) * std::tanh(cell), 2e-6) << j;
    }
    // In place: c_out == c.
    std::vector<float> c_inout = c;
    uk().lstm_gates(n, gates.data(), c_inout.data(), h_out.data(), c_inout.data());
    EXPECT_EQ(c_inout, c_out);
  }
}

TEST_P(NnUkernelsTest, GruGates) {
  std::mt19937 rng(6);
  for (int64_t n : Lengths()) {
    SCOPED_TRACE(n);
    const std::vector<float> gi = RandomFloats(rng, 3 * n, -6, 6), gh = RandomFloats(rng, 3 * n, -6, 6),
                             h = RandomFloats(rng, n, -1, 1);
    std::vector<float> h_out(n);
    uk().gru_gates(n, gi.data(), gh.data(), h.data(), h_out.data());
    for (int64_t j = 0; j < n; ++j) {
      const double r = Sigmoid(double{gi[j]} + gh[j]);
      const double z = Sigmoid(double{gi[n + j]} + gh[n + j]);
      const double m = std::tanh(gi[2 * n + j] + r * gh[2 * n + j]);
      ASSERT_NEAR(h_out[j], (1 - z) * m + z * h[j], 2e-6) << j;
    }
    std::vector<float> h_inout = h;
    uk().gru_gates(n, gi.data(), gh.data(), h_inout.data(), h_inout.data());
    EXPECT_EQ(h_inout, h_out);
  }
}

TEST_P(NnUkernelsTest, GatesSaturateWithoutOverflow) {
  const float big = 1e30f;
  const float gates[4] = {big, -big, big, big};  // i = 1, f = 0, g = 1, o = 1
  const float c = 5.0f;
  float h_out, c_out;
  uk().lstm_gates(1, gates, &c, &h_out, &c_out);
  EXPECT_EQ(c_out, 1.0f);
  EXPECT_NEAR(h_out, std::tanh(1.0), 2e-6);
}

TEST_P(NnUkernelsTest, InPlaceElementwise) {
  std::mt19937 rng(7);
  for (int64_t n : {5, 8, 13, 40}) {
    std::vector<float> x = RandomFloats(rng, n, -2, 2);
    const std::vector<float> original = x;
    uk().vmulc(n, x.data(), 2.0f, x.data());
    for (int64_t i = 0; i < n; ++i) EXPECT_EQ(x[i], 2 * original[i]);
    x = original;
    const float max = rmax(n, x.data());
    const float sum = uk().raddstoreexpminusmax(n, x.data(), max, x.data());
    double want = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = std::exp(double{original[i]} - max);
      want += e;
      EXPECT_NEAR(x[i], e, 4e-7 * e) << i;  // the stored exps, within 2 ulp of exp
    }
    EXPECT_NEAR(sum, want, 1e-5 * want);
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, NnUkernelsTest, ::testing::ValuesIn(EveryMicrokernelTable()),
                         MicrokernelTableName);

}  // namespace
}  // namespace dynvm::kernels::nn
