// The portable implementation of GEMM's building blocks: plain C++ that the compiler
// vectorises for the baseline ISA (SSE2 on x86-64). It runs on any CPU, and it is the
// scalar reference the AVX2 micro-kernel is tested against through the same driver.
#include <cstdint>

#include "kernels/gemm/gemm_internal.h"

namespace dynvm::kernels::internal {
namespace {

constexpr int kMr = 4;
constexpr int kNr = 16;  // kGemmPanelWidth, the packed layout of constant B
static_assert(kNr == kGemmPanelWidth, "packed B (GemmPackB) is read by every table");

template <Activation kAct>
void f32_gemm_4x16__scalar(const GemmTile& t) {
  float acc[kMr][kNr] = {};
  const float* a = t.a;
  const float* b = t.b;
  for (int64_t p = 0; p < t.kc; ++p, a += kMr, b += kNr) {
    for (int r = 0; r < kMr; ++r) {
      for (int j = 0; j < kNr; ++j) acc[r][j] += a[r] * b[j];
    }
  }
  for (int r = 0; r < t.mr; ++r) {
    float* c = t.c + r * t.ldc;
    for (int j = 0; j < t.nr; ++j) {
      float x = acc[r][j];
      if (t.accumulate) x += c[j];
      if (t.last) {
        x *= t.alpha;
        if (t.bias != nullptr) x += t.bias[j];
        x = ApplyActivation(kAct, x);
        if (t.residual != nullptr) x += t.residual[r * t.ldr + j];
      }
      c[j] = x;
    }
  }
}

// Packs `outer` panels of `width` from op(X)[0:extent, 0:kc]: dst[panel][p][r] =
// x(panel * width + r, p), zero past `extent`. x(i, p) is x[i * ld + p], or x[p * ld + i]
// when `trans`. Shared by A (width MR) and B (width NR, with the opposite sense of trans).
void PackPanels(bool trans, int64_t extent, int64_t kc, const float* x, int64_t ld, int width,
                float* dst) {
  for (int64_t i0 = 0; i0 < extent; i0 += width) {
    for (int64_t p = 0; p < kc; ++p, dst += width) {
      for (int r = 0; r < width; ++r) {
        const int64_t i = i0 + r;
        dst[r] = i >= extent ? 0.0f : trans ? x[p * ld + i] : x[i * ld + p];
      }
    }
  }
}

void PackA(bool trans, int64_t mc, int64_t kc, const float* a, int64_t lda, float* dst) {
  PackPanels(trans, mc, kc, a, lda, kMr, dst);
}

// B's panels hold columns of op(B): b[p * ldb + j] is x(j, p) with x transposed.
void PackB(bool trans, int64_t kc, int64_t nc, const float* b, int64_t ldb, float* dst) {
  PackPanels(!trans, nc, kc, b, ldb, kNr, dst);
}

void f32_gemm_small_m__scalar(int64_t rows, int64_t nc, int64_t k, const float* a, int64_t lda,
                              const float* b, int64_t ldb, bool trans_b, float* sums,
                              int64_t ld) {
  for (int64_t i = 0; i < rows; ++i) {
    float* s = sums + i * ld;
    for (int64_t j = 0; j < nc; ++j) s[j] = 0.0f;
    for (int64_t p = 0; p < k; ++p) {
      const float x = a[i * lda + p];
      if (trans_b) {
        for (int64_t j = 0; j < nc; ++j) s[j] += x * b[j * ldb + p];
      } else {
        for (int64_t j = 0; j < nc; ++j) s[j] += x * b[p * ldb + j];
      }
    }
  }
}

void f32_gemm_small_m_packed__scalar(int64_t rows, int64_t panels, int64_t k, const float* a,
                                     int64_t lda, const float* b, float* sums, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t q = 0; q < panels; ++q) {
      float acc[kNr] = {};
      const float* panel = b + q * k * kNr;
      for (int64_t p = 0; p < k; ++p) {
        for (int j = 0; j < kNr; ++j) acc[j] += a[i * lda + p] * panel[p * kNr + j];
      }
      for (int j = 0; j < kNr; ++j) sums[i * ld + q * kNr + j] = acc[j];
    }
  }
}

void EpilogueScalar(Activation activation, int64_t n, const float* sums, float alpha,
                    const float* bias, const float* residual, float* c) {
  for (int64_t j = 0; j < n; ++j) {
    float x = alpha * sums[j];
    if (bias != nullptr) x += bias[j];
    x = ApplyActivation(activation, x);
    if (residual != nullptr) x += residual[j];
    c[j] = x;
  }
}

}  // namespace

const GemmUkernels& GemmUkernelsScalar() {
  static constexpr GemmUkernels kKernels = {
      .mr = kMr,
      .nr = kNr,
      .kc = 384,  // as the AVX2 table's
      .micro_kernel = {f32_gemm_4x16__scalar<Activation::kNone>,
                       f32_gemm_4x16__scalar<Activation::kRelu>,
                       f32_gemm_4x16__scalar<Activation::kGeluErf>,
                       f32_gemm_4x16__scalar<Activation::kGeluTanh>},
      .pack_a = PackA,
      .pack_b = PackB,
      .small_m = f32_gemm_small_m__scalar,
      .small_m_packed = f32_gemm_small_m_packed__scalar,
      .epilogue = EpilogueScalar,
  };
  return kKernels;
}

}  // namespace dynvm::kernels::internal
