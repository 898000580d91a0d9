// Tests of the elementwise unary kernels (kernels/elementwise/unary.cc) and their microkernels
// (kernels/elementwise/ukernels.h) against references written here: the same function
// evaluated in double (long double for casts), then compared in units of the f32 ulp
// of the reference (ulp(r) = 2^(floor(log2 |r|) - 23), at least 2^-149).
//
// Tolerances, per microkernel table:
//   neg, abs, sqrt, floor, ceil, round, sign, relu, leaky_relu, clip, isnan,
//   logical_not, cast                                        exact (bit for bit)
//   reciprocal, rsqrt                                        1 and 2 ulp (one and two roundings)
//   exp, log, tanh, sigmoid                                  4 ulp
//   erf                                                      8 ulp (the AVX2 rational function
//                                                            rounds to within 5 near |erf| = 1)
//   gelu (both forms)                                        4 ulp + |x| 2^-22 (the formula
//                                                            0.5 x (1 + erf(x / sqrt 2)), as
//                                                            kernels::ApplyActivation computes
//                                                            it, cancels for x << 0: an error of
//                                                            a few ulp in erf near -1 becomes
//                                                            |x| 2^-24 times that)
//   sin, cos                                                 4 ulp + |x| 2^-34 (the reduction by
//                                                            pi/4 in f32 pieces leaves an absolute
//                                                            error growing with |x|)
// The largest error seen for each op and table is printed.
#include "kernels/elementwise/unary.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/elementwise/ukernels.h"
#include "kernels/kernel.h"
#include "kernels/microkernels.h"
#include "objects/allocator.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using ::dynvm::kernels::elementwise::VUnaryOp;
using ::dynvm::kernels::elementwise::VUnaryParams;
using ::dynvm::kernels::testing::ElementAsDouble;
using ::dynvm::kernels::testing::EveryMicrokernelTable;
using ::dynvm::kernels::testing::MicrokernelTableName;
using ::dynvm::kernels::testing::RandomTensor;
using ::dynvm::kernels::testing::RunKernel;
using ::dynvm::kernels::testing::TensorOf;
using ::testing::HasSubstr;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ---------------------------------------------------------------------------------------
// References.

double Reference(VUnaryOp op, float xf, const VUnaryParams& p) {
  const double x = xf;
  switch (op) {
    case VUnaryOp::kNeg:
      return -x;
    case VUnaryOp::kAbs:
      return std::fabs(x);
    case VUnaryOp::kExp:
      return std::exp(x);
    case VUnaryOp::kLog:
      return std::log(x);
    case VUnaryOp::kSqrt:
      return std::sqrt(x);
    case VUnaryOp::kRsqrt:
      return 1.0 / std::sqrt(x);
    case VUnaryOp::kReciprocal:
      return 1.0 / x;
    case VUnaryOp::kTanh:
      return std::tanh(x);
    case VUnaryOp::kSigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case VUnaryOp::kRelu:
      return x > 0 ? x : 0.0;
    case VUnaryOp::kLeakyRelu:
      return x > 0 ? x : static_cast<double>(p.alpha) * x;
    case VUnaryOp::kGeluErf:
      return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    case VUnaryOp::kGeluTanh:  // x (1 + tanh u) / 2 == x / (1 + e^-2u), without cancellation
      return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case VUnaryOp::kErf:
      return std::erf(x);
    case VUnaryOp::kSin:
      return std::sin(x);
    case VUnaryOp::kCos:
      return std::cos(x);
    case VUnaryOp::kFloor:
      return std::floor(x);
    case VUnaryOp::kCeil:
      return std::ceil(x);
    case VUnaryOp::kRound:  // ties to even; infinities and NaN are their own
      return std::isfinite(x) ? std::copysign(x - std::remainder(x, 1.0), x) : x;
    case VUnaryOp::kSign:
      return std::isnan(x) ? x : (x > 0) - (x < 0);
    case VUnaryOp::kClip:
      return std::isnan(x) ? x : std::min<double>(std::max<double>(x, p.min), p.max);
  }
  return 0;
}

// One ulp of the finite f32 `r`: 2^-149 (the smallest subnormal) at 0 and below 2^-126.
double UlpOf(float r) {
  if (r == 0) return 0x1p-149;
  int e;
  std::frexp(r, &e);
  return std::ldexp(1.0, std::max(e - 24, -149));
}

// How far `got` is from `ref` in ulps of the f32 nearest `ref`; 0 when both are the same
// infinity or both NaN, infinite when only one is.
double UlpError(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
  const float r = static_cast<float>(ref);
  if (std::isinf(r) || std::isinf(got)) return got == r ? 0 : INFINITY;
  return std::fabs(got - ref) / UlpOf(r);
}

struct Tolerance {
  double ulps;
  double abs_per_x;  // extra absolute error allowed per unit of min(|x|, x_cap)
  double x_cap;      // beyond it the allowance stops growing
};

Tolerance ToleranceOf(VUnaryOp op) {
  switch (op) {
    case VUnaryOp::kReciprocal:
      return {1, 0, 0};
    case VUnaryOp::kRsqrt:
      return {2, 0, 0};
    case VUnaryOp::kExp:
    case VUnaryOp::kLog:
    case VUnaryOp::kTanh:
    case VUnaryOp::kSigmoid:
      return {4, 0, 0};
    case VUnaryOp::kErf:
      return {8, 0, 0};
    case VUnaryOp::kGeluErf:
    case VUnaryOp::kGeluTanh:
      // 0.5x(1 + erf) cancels for x << 0; past |x| = 8, gelu is 0 or x in f32.
      return {4, 0x1p-22, 8};
    case VUnaryOp::kSin:
    case VUnaryOp::kCos:
      // The reduction by pi/4 in three f32 pieces loses ~|x| 2^-34; past 8192 the
      // standard library computes it.
      return {4, 0x1p-34, 8192};
    default:
      return {0, 0, 0};  // exact
  }
}

// Whether `got` = op(x) is within the tolerance of the reference `ref`: NaN for NaN,
// equal to the rounded reference for exact ops and infinite results, else within the
// allowed ulps (plus the absolute allowance, expressed in ulps of the reference).
bool Within(VUnaryOp op, float x, float got, double ref) {
  const Tolerance tol = ToleranceOf(op);
  const float r = static_cast<float>(ref);
  if (std::isnan(r) || std::isnan(got)) return std::isnan(r) && std::isnan(got);
  if (got == r) return true;
  if (tol.ulps == 0 || std::isinf(r) || std::isinf(got)) return false;
  const double slack =
      tol.abs_per_x * std::min<double>(std::fabs(x), tol.x_cap) / UlpOf(r);
  return UlpError(got, ref) <= tol.ulps + slack;
}

const char* const kOpNames[] = {"neg",  "abs",  "exp",   "log",   "sqrt",  "rsqrt", "rcp",
                                "tanh", "sigm", "relu",  "lrelu", "gelu",  "gelut", "erf",
                                "sin",  "cos",  "floor", "ceil",  "round", "sign",  "clip"};

// Inputs that exercise `op`: random values over its interesting range, random bit
// patterns, and the special values.
std::vector<float> InputsFor(VUnaryOp op, std::mt19937& rng) {
  double lo = -20, hi = 20;
  switch (op) {
    case VUnaryOp::kExp:
      lo = -110, hi = 90;
      break;
    case VUnaryOp::kSin:
    case VUnaryOp::kCos:
      lo = -8192, hi = 8192;
      break;
    case VUnaryOp::kGeluErf:
    case VUnaryOp::kGeluTanh:
      lo = -15, hi = 10;
      break;
    default:
      break;
  }
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<float> v;
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<float>(dist(rng)));
  std::uniform_real_distribution<double> near(-3, 3);
  for (int i = 0; i < 5000; ++i) v.push_back(static_cast<float>(near(rng)));
  for (int i = 0; i < 5000; ++i) {  // any finite or infinite float
    const uint32_t bits = static_cast<uint32_t>(rng());
    float f;
    std::memcpy(&f, &bits, 4);
    if (!std::isnan(f)) v.push_back(f);
  }
  for (float s : {0.0f,
                  -0.0f,
                  1.0f,
                  -1.0f,
                  0.5f,
                  -0.5f,
                  1.5f,
                  2.5f,
                  -2.5f,
                  0.625f,
                  -0.625f,
                  0.99999994f,
                  1.0000001f,
                  1e-45f,
                  -1e-45f,
                  1e-40f,
                  1.17549435e-38f,
                  88.72f,
                  88.73f,
                  -87.0f,
                  -103.9f,
                  -104.5f,
                  3.92f,
                  10.5f,
                  -10.5f,
                  8192.0f,
                  8193.0f,
                  1e6f,
                  -1e30f,
                  3.4028235e38f,
                  kInf,
                  -kInf,
                  kNaN}) {
    v.push_back(s);
  }
  return v;
}

class MicrokernelTest : public ::testing::TestWithParam<const Microkernels*> {};

INSTANTIATE_TEST_SUITE_P(Isa, MicrokernelTest, ::testing::ValuesIn(EveryMicrokernelTable()),
                         MicrokernelTableName);

TEST_P(MicrokernelTest, EveryOpWithinTolerance) {
  const elementwise::ElementwiseUkernels& uk = GetParam()->elementwise;
  const VUnaryParams params{.alpha = 0.1f, .min = -1.5f, .max = 2.25f};
  std::mt19937 rng(11);
  for (int o = 0; o < elementwise::kNumVUnaryOps; ++o) {
    const auto op = static_cast<VUnaryOp>(o);
    SCOPED_TRACE(kOpNames[o]);
    const std::vector<float> x = InputsFor(op, rng);
    std::vector<float> y(x.size());
    uk.vunary[o](static_cast<int64_t>(x.size()), x.data(), y.data(), &params);
    const bool exact = ToleranceOf(op).ulps == 0;
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = Reference(op, x[i], params);
      const double err = UlpError(y[i], ref);
      const float r = static_cast<float>(ref);
      ASSERT_TRUE(Within(op, x[i], y[i], ref))
          << "x = " << x[i] << " (bits " << std::hex << std::bit_cast<uint32_t>(x[i]) << std::dec
          << "): got " << y[i] << ", want " << ref << ", " << err << " ulp";
      if (exact && !std::isnan(r)) {
        ASSERT_EQ(std::signbit(y[i]), std::signbit(r)) << "x = " << x[i];
      }
      if (std::isfinite(err) && std::fabs(r) >= 1e-3 && std::fabs(x[i]) < 1e4) {
        worst = std::max(worst, err);
      }
    }
    std::printf("[ %-6s ] %-6s max error %.2f ulp where |x| < 1e4 and |result| >= 1e-3\n",
                std::string(IsaName(GetParam()->isa)).c_str(), kOpNames[o], worst);
  }
}

TEST_P(MicrokernelTest, TailsAndInPlace) {
  const elementwise::ElementwiseUkernels& uk = GetParam()->elementwise;
  const VUnaryParams params{.alpha = 0.1f, .min = -1.5f, .max = 2.25f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-4, 4);
  for (int o = 0; o < elementwise::kNumVUnaryOps; ++o) {
    SCOPED_TRACE(kOpNames[o]);
    for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 17, 100}) {
      // Guard elements around the output catch writes past the end.
      std::vector<float> x(n), y(n + 2, 42.0f);
      for (float& v : x) v = dist(rng);
      uk.vunary[o](n, x.data(), y.data() + 1, &params);
      EXPECT_EQ(y[0], 42.0f);
      EXPECT_EQ(y[n + 1], 42.0f);
      std::vector<float> z = x;
      uk.vunary[o](n, z.data(), z.data(), &params);  // in place
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(std::bit_cast<uint32_t>(z[i]), std::bit_cast<uint32_t>(y[i + 1])) << i;
      }
      // A tail computes what a full vector does: element 0 of n = 17 comes from a full
      // vector, the same element alone from a one-lane tail.
      if (n == 17) {
        std::vector<float> one(1);
        uk.vunary[o](1, x.data(), one.data(), &params);
        EXPECT_EQ(std::bit_cast<uint32_t>(one[0]), std::bit_cast<uint32_t>(y[1]));
      }
    }
  }
}

// Every vector level computes the tanh-form gelu as x sigmoid(2u), so unlike
// 0.5 x (1 + tanh u) (the scalar table's form, which cancels) it keeps its relative
// accuracy for x << 0: u = c (x + 0.044715 x^3) carries its f32 rounding into e^(2u),
// amplified by |2u| (up to ~200 at x = -13), and nothing cancels.
TEST(VectorGeluTest, TanhFormRelativeAccuracyBelowZero) {
  std::vector<float> x;
  for (float v = -13.0f; v < 0.0f; v += 0.001f) x.push_back(v);
  int levels = 0;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const Microkernels* table = MicrokernelsFor(isa);
    if (table == nullptr) continue;
    ++levels;
    std::vector<float> y(x.size());
    table->elementwise.vunary[static_cast<int>(VUnaryOp::kGeluTanh)](
        static_cast<int64_t>(x.size()), x.data(), y.data(), nullptr);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      worst = std::max(worst, UlpError(y[i], Reference(VUnaryOp::kGeluTanh, x[i], {})));
    }
    EXPECT_LE(worst, 512) << IsaName(isa);
    std::printf("[ %-6s ] gelu (tanh) relative error for x in [-13, 0): %.2f ulp\n",
                std::string(IsaName(isa)).c_str(), worst);
  }
  if (levels == 0) GTEST_SKIP() << "no vector level (AVX2+FMA) on this CPU";
}

// The reduction microkernels against plain loops in long double: sums within
// n 2^-52 sum|x| (double accumulation, any order), max and min exact, NaN propagating
// from any position, for lengths around every vector width.
TEST_P(MicrokernelTest, Reductions) {
  const elementwise::ElementwiseUkernels& uk = GetParam()->elementwise;
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> dist(-10, 10);
  for (int64_t n = 0; n <= 70; ++n) {
    for (int nan_at = -1; nan_at < n; nan_at += (n < 20 ? 1 : 7)) {
      std::vector<float> x(n);
      for (float& v : x) v = dist(rng);
      if (nan_at >= 0) x[nan_at] = kNaN;
      long double sum = 0, sumsq = 0, abs = 0;
      float max = -kInf, min = kInf;
      for (float v : x) {
        sum += v, sumsq += static_cast<long double>(v) * v, abs += std::fabs(v) + v * v;
        max = std::max(max, v), min = std::min(min, v);
      }
      const long double tol = (n + 1) * 0x1p-52L * abs;
      if (nan_at < 0) {
        EXPECT_LE(std::fabs(uk.rsum(n, x.data()) - sum), tol) << n;
        EXPECT_LE(std::fabs(uk.rsumsq(n, x.data()) - sumsq), tol) << n;
        EXPECT_EQ(uk.rmax(n, x.data()), max) << n;
        EXPECT_EQ(uk.rmin(n, x.data()), min) << n;
      } else {
        EXPECT_TRUE(std::isnan(uk.rmax(n, x.data()))) << n << " " << nan_at;
        EXPECT_TRUE(std::isnan(uk.rmin(n, x.data()))) << n << " " << nan_at;
      }
      // Columns: two rows folded into accumulators that start at the first row.
      std::vector<double> acc(x.begin(), x.end()), accsq(n, 1.0);
      std::vector<float> amax(x.begin(), x.end()), amin(x.begin(), x.end());
      std::vector<float> y(n);
      for (float& v : y) v = dist(rng);
      if (n > 0 && nan_at < 0) y[n - 1] = kNaN;  // NaN on the x side of one column
      uk.vaccsum(n, y.data(), acc.data());
      uk.vaccsumsq(n, y.data(), accsq.data());
      uk.vaccmax(n, y.data(), amax.data());
      uk.vaccmin(n, y.data(), amin.data());
      for (int64_t j = 0; j < n; ++j) {
        const bool nan = std::isnan(x[j]) || std::isnan(y[j]);
        if (nan) {
          EXPECT_TRUE(std::isnan(acc[j]) && std::isnan(amax[j]) && std::isnan(amin[j])) << j;
          continue;
        }
        EXPECT_EQ(acc[j], static_cast<double>(x[j]) + y[j]) << j;
        EXPECT_EQ(accsq[j], 1.0 + static_cast<double>(y[j]) * y[j]) << j;
        EXPECT_EQ(amax[j], std::max(x[j], y[j])) << j;
        EXPECT_EQ(amin[j], std::min(x[j], y[j])) << j;
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The kernels, through RunKernel (shape function, allocation, call).

struct MapCase {
  const char* name;
  VUnaryOp op;
  Attrs attrs;
  VUnaryParams params;
};

std::vector<MapCase> MapCases() {
  return {
      {"negative", VUnaryOp::kNeg, {}, {}},
      {"abs", VUnaryOp::kAbs, {}, {}},
      {"exp", VUnaryOp::kExp, {}, {}},
      {"log", VUnaryOp::kLog, {}, {}},
      {"sqrt", VUnaryOp::kSqrt, {}, {}},
      {"rsqrt", VUnaryOp::kRsqrt, {}, {}},
      {"reciprocal", VUnaryOp::kReciprocal, {}, {}},
      {"tanh", VUnaryOp::kTanh, {}, {}},
      {"sigmoid", VUnaryOp::kSigmoid, {}, {}},
      {"nn.relu", VUnaryOp::kRelu, {}, {}},
      {"nn.leaky_relu", VUnaryOp::kLeakyRelu, {}, {.alpha = 0.25f}},  // Relay's default
      {"nn.leaky_relu", VUnaryOp::kLeakyRelu, {{"alpha", 0.01}}, {.alpha = 0.01f}},
      {"gelu", VUnaryOp::kGeluErf, {}, {}},
      {"gelu", VUnaryOp::kGeluErf, {{"approximate", std::string("none")}}, {}},
      {"gelu", VUnaryOp::kGeluTanh, {{"approximate", std::string("tanh")}}, {}},
      {"erf", VUnaryOp::kErf, {}, {}},
      {"sin", VUnaryOp::kSin, {}, {}},
      {"cos", VUnaryOp::kCos, {}, {}},
      {"floor", VUnaryOp::kFloor, {}, {}},
      {"ceil", VUnaryOp::kCeil, {}, {}},
      {"round", VUnaryOp::kRound, {}, {}},
      {"sign", VUnaryOp::kSign, {}, {}},
      {"clip", VUnaryOp::kClip, {{"a_min", -0.5}, {"a_max", int64_t{1}}}, {.min = -0.5f, .max = 1}},
  };
}

// Seeded random shapes, with extents of 0 and 1 and rank 0 among them, and one large
// enough to be split over the pool.
std::vector<std::vector<int64_t>> RandomShapes(std::mt19937& rng) {
  std::vector<std::vector<int64_t>> shapes = {{}, {0}, {1}, {3, 0, 2}, {1, 1}, {513, 1031}};
  for (int i = 0; i < 8; ++i) {
    std::vector<int64_t> s(rng() % 4);
    for (int64_t& d : s) d = rng() % 5 == 0 ? 1 : 1 + rng() % 37;
    shapes.push_back(s);
  }
  return shapes;
}

TEST(UnaryKernelTest, MapsMatchTheReference) {
  std::mt19937 rng(3);
  for (const MapCase& c : MapCases()) {
    SCOPED_TRACE(c.name);
    for (const std::vector<int64_t>& shape : RandomShapes(rng)) {
      NDArray x = RandomTensor(shape, DType::kF32, rng, -6.0, 6.0);
      absl::StatusOr<std::vector<NDArray>> y = RunKernel(c.name, c.attrs, {x});
      ASSERT_TRUE(y.ok()) << y.status();
      const NDArray& out = (*y)[0];
      ASSERT_EQ(out->shape(), x->shape());
      ASSERT_EQ(out->dtype(), DType::kF32);
      for (int64_t i = 0; i < x->num_elements(); ++i) {
        const float xi = x->data_as<float>()[i];
        const float got = out->data_as<float>()[i];
        ASSERT_TRUE(Within(c.op, xi, got, Reference(c.op, xi, c.params)))
            << "x = " << xi << ", got " << got;
      }
    }
  }
}

template <typename T>
void CheckIntegerMaps(DType dtype) {
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T kMax = std::numeric_limits<T>::max();
  NDArray x = *NDArrayObj::Empty({6}, dtype, MakeNaiveAllocator());
  const T inputs[] = {kMin, kMax, -7, 0, 1, -1};
  std::copy(inputs, inputs + 6, x->data_as<T>());
  auto run = [&](const char* op) { return (*RunKernel(op, {}, {x}))[0]; };
  auto values = [](const NDArray& t) {
    return std::vector<T>(t->template data_as<T>(), t->template data_as<T>() + t->num_elements());
  };
  // -MIN and |MIN| wrap to MIN.
  EXPECT_EQ(values(run("negative")), (std::vector<T>{kMin, -kMax, 7, 0, -1, 1}));
  EXPECT_EQ(values(run("abs")), (std::vector<T>{kMin, kMax, 7, 0, 1, 1}));
  EXPECT_EQ(values(run("sign")), (std::vector<T>{-1, 1, -1, 0, 1, -1}));
}

TEST(UnaryKernelTest, IntegerNegativeAbsSign) {
  CheckIntegerMaps<int32_t>(DType::kI32);
  CheckIntegerMaps<int64_t>(DType::kI64);
}

// The libm maps and the f64 forms of exp, log and sqrt run the C library's function on
// each element: equal to it exactly, in both dtypes, on 2 threads and in many chunks
// (NaN outside a function's domain, as the C library gives).
template <typename T>
void CheckLibmMaps() {
  const std::vector<std::pair<const char*, T (*)(T)>> ops = {
      {"sinh", [](T x) { return std::sinh(x); }},   {"cosh", [](T x) { return std::cosh(x); }},
      {"asin", [](T x) { return std::asin(x); }},   {"acos", [](T x) { return std::acos(x); }},
      {"atan", [](T x) { return std::atan(x); }},   {"asinh", [](T x) { return std::asinh(x); }},
      {"acosh", [](T x) { return std::acosh(x); }}, {"atanh", [](T x) { return std::atanh(x); }},
  };
  std::vector<T> values(100003);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<T>(-4.0 + 8.0 * i / values.size());
  values[0] = std::numeric_limits<T>::quiet_NaN();
  values[1] = std::numeric_limits<T>::infinity();
  const NDArray x = TensorOf<T>({static_cast<int64_t>(values.size())}, values);
  auto check = [&](const char* op, T (*ref)(T)) {
    SCOPED_TRACE(op);
    absl::StatusOr<std::vector<NDArray>> y = RunKernel(op, {}, {x});
    ASSERT_TRUE(y.ok()) << y.status();
    ASSERT_EQ((*y)[0]->dtype(), x->dtype());
    for (size_t i = 0; i < values.size(); ++i) {
      const T want = ref(values[i]), got = (*y)[0]->data_as<T>()[i];
      ASSERT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << "x = " << values[i];
    }
  };
  for (const auto& [op, ref] : ops) check(op, ref);
  if constexpr (std::is_same_v<T, double>) {
    check("exp", [](double v) { return std::exp(v); });
    check("log", [](double v) { return std::log(v); });
    check("sqrt", [](double v) { return std::sqrt(v); });
  }
}

TEST(UnaryKernelTest, LibmMapsAndF64) {
  CheckLibmMaps<float>();
  CheckLibmMaps<double>();
}

TEST(UnaryKernelTest, IsNanAndLogicalNot) {
  NDArray x = TensorOf<float>({5}, {1.0f, kNaN, -kInf, 0.0f, -kNaN});
  absl::StatusOr<std::vector<NDArray>> y = RunKernel("isnan", {}, {x}, {DType::kBool});
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<double> got;
  for (int64_t i = 0; i < 5; ++i) got.push_back(ElementAsDouble(*(*y)[0], i));
  EXPECT_EQ(got, (std::vector<double>{0, 1, 0, 0, 1}));

  std::mt19937 rng(1);
  NDArray b = RandomTensor({3, 0, 4}, DType::kBool, rng);
  ASSERT_TRUE(RunKernel("logical_not", {}, {b}).ok());
  b = RandomTensor({7, 9}, DType::kBool, rng);
  absl::StatusOr<std::vector<NDArray>> n = RunKernel("logical_not", {}, {b});
  ASSERT_TRUE(n.ok()) << n.status();
  for (int64_t i = 0; i < b->num_elements(); ++i) {
    EXPECT_EQ(ElementAsDouble(*(*n)[0], i), ElementAsDouble(*b, i) != 0 ? 0 : 1);
  }
}

// ---------------------------------------------------------------------------------------
// Errors.

void ExpectInvalid(const absl::Status& status, std::string_view substr) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(substr)));
}

TEST(UnaryErrorTest, UnsupportedDTypes) {
  std::mt19937 rng(1);
  NDArray i32 = RandomTensor({3}, DType::kI32, rng);
  NDArray f16 = RandomTensor({3}, DType::kF16, rng);
  NDArray f32 = RandomTensor({3}, DType::kF32, rng);
  ExpectInvalid(RunKernel("exp", {}, {i32}).status(),
                "unsupported dtype i32 for exp input: expected f32 or f64");
  ExpectInvalid(RunKernel("tanh", {}, {i32}).status(),
                "unsupported dtype i32 for tanh input: expected f32");
  ExpectInvalid(RunKernel("atanh", {}, {f16}).status(),
                "unsupported dtype f16 for atanh input: expected f32 or f64");
  ExpectInvalid(RunKernel("abs", {}, {f16}).status(),
                "unsupported dtype f16 for abs input: expected f32, i32 or i64");
  ExpectInvalid(RunKernel("isnan", {}, {i32}, {DType::kBool}).status(),
                "unsupported dtype i32 for isnan input: expected f32");
  ExpectInvalid(RunKernel("logical_not", {}, {f32}, {DType::kBool}).status(),
                "unsupported dtype f32 for logical_not input: expected bool");
}

TEST(UnaryErrorTest, WrongOutputs) {
  std::mt19937 rng(1);
  NDArray x = RandomTensor({2, 3}, DType::kF32, rng);
  ExpectInvalid(RunKernel("tanh", {}, {x}, {DType::kF64}).status(),
                "tanh: output 0 has dtype f64, expected f32");
  ExpectInvalid(RunKernel("isnan", {}, {x}, {DType::kF32}).status(),
                "isnan: output 0 has dtype f32, expected bool");
  ExpectInvalid(RunKernel("cast", {{"dtype", std::string("i32")}}, {x}, {DType::kI64}).status(),
                "cast: output 0 has dtype i64, expected i32");
  // A wrong shape can only come from a caller that skips the shape function.
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind("exp", {}, 1, 1);
  ASSERT_TRUE(k.ok());
  NDArray y = RandomTensor({3, 2}, DType::kF32, rng);
  NDArrayObj* args[] = {x.get(), y.get()};
  ExpectInvalid(k->Call(args, ThreadPool::Default()),
                "exp: output 0 has shape [3, 2], expected [2, 3]");
}

TEST(UnaryErrorTest, Attributes) {
  std::mt19937 rng(1);
  NDArray x = RandomTensor({2}, DType::kF32, rng);
  ExpectInvalid(RunKernel("exp", {{"alpha", 1.0}}, {x}).status(),
                "kernel 'exp': unknown attribute 'alpha'");
  ExpectInvalid(RunKernel("gelu", {{"approximate", std::string("fast")}}, {x}).status(),
                "attribute 'approximate' must be \"none\" or \"tanh\", got \"fast\"");
  ExpectInvalid(RunKernel("nn.leaky_relu", {{"alpha", std::string("x")}}, {x}).status(),
                "attribute 'alpha' must be a float");
  ExpectInvalid(RunKernel("clip", {{"a_min", 0.0}}, {x}).status(),
                "missing float attribute 'a_max'");
  ExpectInvalid(RunKernel("clip", {{"a_min", 2.0}, {"a_max", 1.0}}, {x}).status(),
                "attribute a_min 2 must not exceed a_max 1");
  ExpectInvalid(RunKernel("clip", {{"a_min", NAN}, {"a_max", 1.0}}, {x}).status(),
                "must not exceed a_max");
  ExpectInvalid(RunKernel("cast", {}, {x}).status(), "missing string attribute 'dtype'");
  ExpectInvalid(RunKernel("cast", {{"dtype", std::string("f8")}}, {x}).status(),
                "kernel 'cast': attribute 'dtype':");
  ExpectInvalid(
      RunKernel("cast", {{"dtype", std::string("f32")}, {"axis", int64_t{0}}}, {x}).status(),
      "unknown attribute 'axis'");
}

TEST(UnaryErrorTest, Arity) {
  ExpectInvalid(DefaultRegistry().Bind("exp", {}, 2, 1).status(),
                "kernel 'exp' takes 1 inputs and 1 outputs, not 2 and 1");
  ExpectInvalid(DefaultRegistry().Bind("cast", {{"dtype", std::string("f32")}}, 1, 2).status(),
                "kernel 'cast' takes 1 inputs and 1 outputs, not 1 and 2");
}

}  // namespace
}  // namespace dynvm::kernels
