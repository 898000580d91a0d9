// The scalar reference microkernels of kernels/elementwise/ukernels.h: the plainest loops
// over the standard library's math, one element at a time. They define what the
// vectorised versions compute, and run on CPUs without AVX2.
#include <cmath>
#include <cstdint>

#include "kernels/elementwise/ukernels.h"
#include "kernels/gemm/gemm.h"

namespace dynvm::kernels::elementwise {
namespace {

// Accurate at both ends: e^-|x| never overflows, and for x < 0 the result is
// e^x / (1 + e^x) rather than 1 - something close to 1.
float Sigmoid(float x) {
  const float e = std::exp(-std::fabs(x));
  const float s = 1.0f / (1.0f + e);
  return x >= 0.0f ? s : e * s;
}

float Sign(float x) {
  if (x > 0.0f) return 1.0f;
  if (x < 0.0f) return -1.0f;
  return x == 0.0f ? 0.0f : x;
}

// One loop per operation; `Op` maps an element and the parameters to the result.
template <auto Op>
void Map(int64_t n, const float* x, float* y, const VUnaryParams* params) {
  for (int64_t i = 0; i < n; ++i) y[i] = Op(x[i], params);
}

// NaN wins: once `acc` is NaN no comparison replaces it.
template <bool kMax>
float Extreme(float acc, float x) {
  return ((kMax ? x > acc : x < acc) || x != x) ? x : acc;
}

template <bool kSquare>
double RowSum(int64_t n, const float* x) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += kSquare ? static_cast<double>(x[i]) * x[i] : x[i];
  return sum;
}

template <bool kMax>
float RowExtreme(int64_t n, const float* x) {
  float acc = kMax ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < n; ++i) acc = Extreme<kMax>(acc, x[i]);
  return acc;
}

template <bool kSquare>
void AccumulateSum(int64_t n, const float* x, double* acc) {
  for (int64_t j = 0; j < n; ++j) acc[j] += kSquare ? static_cast<double>(x[j]) * x[j] : x[j];
}

template <bool kMax>
void AccumulateExtreme(int64_t n, const float* x, float* acc) {
  for (int64_t j = 0; j < n; ++j) acc[j] = Extreme<kMax>(acc[j], x[j]);
}

constexpr ElementwiseUkernels kScalar = {
    .vunary =
        {
            Map<([](float x, const VUnaryParams*) { return -x; })>,
            Map<([](float x, const VUnaryParams*) { return std::fabs(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::exp(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::log(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::sqrt(x); })>,
            Map<([](float x, const VUnaryParams*) { return 1.0f / std::sqrt(x); })>,
            Map<([](float x, const VUnaryParams*) { return 1.0f / x; })>,
            Map<([](float x, const VUnaryParams*) { return std::tanh(x); })>,
            Map<([](float x, const VUnaryParams*) { return Sigmoid(x); })>,
            Map<([](float x, const VUnaryParams*) {
              return ApplyActivation(Activation::kRelu, x);
            })>,
            Map<([](float x, const VUnaryParams* p) { return x > 0.0f ? x : p->alpha * x; })>,
            Map<([](float x, const VUnaryParams*) {
              return ApplyActivation(Activation::kGeluErf, x);
            })>,
            Map<([](float x, const VUnaryParams*) {
              return ApplyActivation(Activation::kGeluTanh, x);
            })>,
            Map<([](float x, const VUnaryParams*) { return std::erf(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::sin(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::cos(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::floor(x); })>,
            Map<([](float x, const VUnaryParams*) { return std::ceil(x); })>,
            // nearbyint rounds in the current mode, which is to nearest-even unless the
            // embedder changed it.
            Map<([](float x, const VUnaryParams*) { return std::nearbyint(x); })>,
            Map<([](float x, const VUnaryParams*) { return Sign(x); })>,
            Map<([](float x, const VUnaryParams* p) {
              return x < p->min ? p->min : (x > p->max ? p->max : x);
            })>,
        },
    .rsum = RowSum<false>,
    .rsumsq = RowSum<true>,
    .rmax = RowExtreme<true>,
    .rmin = RowExtreme<false>,
    .vaccsum = AccumulateSum<false>,
    .vaccsumsq = AccumulateSum<true>,
    .vaccmax = AccumulateExtreme<true>,
    .vaccmin = AccumulateExtreme<false>,
};

}  // namespace

const ElementwiseUkernels& ElementwiseUkernelsScalar() { return kScalar; }

}  // namespace dynvm::kernels::elementwise
