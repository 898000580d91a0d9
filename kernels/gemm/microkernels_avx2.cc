// The AVX2+FMA implementation of GEMM's building blocks: the 6x16 micro-kernel with its
// fused, vectorised epilogue, and A and B packing (transposes through 8x8 register
// blocks).
//
// Compiled with -mavx2 -mfma; called only through GemmUkernelsAvx2(), which
// GetMicrokernels (kernels/microkernels.h) hands out only on CPUs with both features.
// Nothing inline from other headers is called here but the AVX2 vector math of
// kernels/internal/vmath_avx2.h (see gemm_internal.h).
//
// The micro-kernel keeps a 6x16 tile of C in 12 ymm registers; each k step loads two
// vectors of the packed B panel, broadcasts six elements of A and issues 12 FMAs, which
// covers the 4-cycle FMA latency on both FMA pipes of Zen 3 / Skylake.
#include <immintrin.h>

#include <cstdint>

#include "kernels/gemm/gemm_internal.h"
#include "kernels/internal/vmath_avx2.h"

namespace dynvm::kernels::internal {
namespace {

constexpr int kMr = 6;
constexpr int kNr = 16;
static_assert(kNr == kGemmPanelWidth, "packed B (GemmPackB) is read by every table");

using vmath::HorizontalSum;
using vmath::LaneMask;

// The activations of kernels/gemm/gemm.h, with ApplyActivation's semantics.
template <Activation kAct>
__m256 Activate(__m256 x) {
  if constexpr (kAct == Activation::kRelu) {
    return _mm256_max_ps(x, _mm256_setzero_ps());
  } else if constexpr (kAct == Activation::kGeluErf) {
    return vmath::GeluErf(x);
  } else if constexpr (kAct == Activation::kGeluTanh) {
    return vmath::GeluTanh(x);
  } else {
    return x;
  }
}

// A load or store of one vector of a row: the whole vector when kFull, else the lanes
// `mask` selects (masked lanes load as zeros and are not touched in memory).
template <bool kFull>
__m256 LoadCols(const float* p, __m256i mask) {
  if constexpr (kFull) return _mm256_loadu_ps(p);
  return _mm256_maskload_ps(p, mask);
}
template <bool kFull>
void StoreCols(float* p, __m256i mask, __m256 v) {
  if constexpr (kFull) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, mask, v);
  }
}

// The epilogue on one vector of sums: act(alpha x + bias) + residual, where `bias` and
// `residual` point at the vector's columns or are null.
template <Activation kAct, bool kFull>
__m256 Epilogue(__m256 x, __m256 alpha, const float* bias, const float* residual,
                __m256i mask) {
  x = _mm256_mul_ps(x, alpha);
  if (bias != nullptr) x = _mm256_add_ps(x, LoadCols<kFull>(bias, mask));
  x = Activate<kAct>(x);
  if (residual != nullptr) x = _mm256_add_ps(x, LoadCols<kFull>(residual, mask));
  return x;
}

// Writes the accumulated tile `acc` to C, adding C's partial sum and applying the
// epilogue as the tile asks.
template <Activation kAct, bool kFull>
void StoreTile(const GemmTile& t, __m256 (&acc)[kMr][2]) {
  const __m256i mask[2] = {LaneMask(t.nr), LaneMask(t.nr - 8)};
  const int vectors = kFull || t.nr > 8 ? 2 : 1;
  const __m256 alpha = _mm256_set1_ps(t.alpha);
  for (int r = 0; r < kMr && r < t.mr; ++r) {
    float* c = t.c + r * t.ldc;
    for (int v = 0; v < vectors; ++v) {
      __m256 x = acc[r][v];
      if (t.accumulate) x = _mm256_add_ps(x, LoadCols<kFull>(c + 8 * v, mask[v]));
      if (t.last) {
        x = Epilogue<kAct, kFull>(x, alpha, t.bias ? t.bias + 8 * v : nullptr,
                                  t.residual ? t.residual + r * t.ldr + 8 * v : nullptr,
                                  mask[v]);
      }
      StoreCols<kFull>(c + 8 * v, mask[v], x);
    }
  }
}

// The micro-kernel: 12 accumulators, and per k step two loads of B, six broadcasts of
// A and 12 FMAs (and, with kPrefetch, a prefetch of the line t.prefetch has reached).
template <Activation kAct, bool kPrefetch>
void Tile6x16(const GemmTile& t) {
  // C's rows are far apart (often a multiple of 4 KiB, so they share an L1 set) and
  // were last touched a whole block ago: fetch them while the k loop runs.
  for (int r = 0; r < t.mr; ++r) {
    _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc + kNr - 1), _MM_HINT_T0);
  }
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float* a = t.a;
  const float* b = t.b;
  uintptr_t prefetch = t.prefetch;
  const int64_t kc = t.kc;
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kNr, prefetch += kNr * sizeof(float)) {
    if constexpr (kPrefetch) _mm_prefetch(reinterpret_cast<const char*>(prefetch), _MM_HINT_T0);
    const __m256 b0 = _mm256_loadu_ps(b);
    const __m256 b1 = _mm256_loadu_ps(b + 8);
    __m256 va = _mm256_broadcast_ss(a);
    c00 = _mm256_fmadd_ps(va, b0, c00);
    c01 = _mm256_fmadd_ps(va, b1, c01);
    va = _mm256_broadcast_ss(a + 1);
    c10 = _mm256_fmadd_ps(va, b0, c10);
    c11 = _mm256_fmadd_ps(va, b1, c11);
    va = _mm256_broadcast_ss(a + 2);
    c20 = _mm256_fmadd_ps(va, b0, c20);
    c21 = _mm256_fmadd_ps(va, b1, c21);
    va = _mm256_broadcast_ss(a + 3);
    c30 = _mm256_fmadd_ps(va, b0, c30);
    c31 = _mm256_fmadd_ps(va, b1, c31);
    va = _mm256_broadcast_ss(a + 4);
    c40 = _mm256_fmadd_ps(va, b0, c40);
    c41 = _mm256_fmadd_ps(va, b1, c41);
    va = _mm256_broadcast_ss(a + 5);
    c50 = _mm256_fmadd_ps(va, b0, c50);
    c51 = _mm256_fmadd_ps(va, b1, c51);
  }
  __m256 acc[kMr][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                        {c30, c31}, {c40, c41}, {c50, c51}};
  if (t.nr == kNr) {
    StoreTile<kAct, true>(t, acc);
  } else {
    StoreTile<kAct, false>(t, acc);
  }
}

template <Activation kAct>
void f32_gemm_6x16__avx2_fma(const GemmTile& t) {
  if (t.prefetch != 0) {
    Tile6x16<kAct, true>(t);
  } else {
    Tile6x16<kAct, false>(t);
  }
}

// Transposes the 8x8 block held in r (row i in r[i]) in place.
void Transpose8x8(__m256 (&r)[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

// One A panel from `rows` (<= 6) rows of A, lda apart: dst[p * 6 + r] = a[r * lda + p].
// Eight k steps at a time through an 8x8 transpose (rows 6 and 7 are zeros); each
// 6-float group is stored as 4 + 2 so that nothing past the panel is written.
void PackAPanelRows(int64_t rows, int64_t kc, const float* a, int64_t lda, float* dst) {
  int64_t p = 0;
  for (; p + 8 <= kc; p += 8, dst += 8 * kMr) {
    __m256 r[8];
    for (int i = 0; i < 8; ++i) {
      r[i] = i < rows ? _mm256_loadu_ps(a + i * lda + p) : _mm256_setzero_ps();
    }
    Transpose8x8(r);
    for (int q = 0; q < 8; ++q) {
      _mm_storeu_ps(dst + q * kMr, _mm256_castps256_ps128(r[q]));
      _mm_storel_pi(reinterpret_cast<__m64*>(dst + q * kMr + 4), _mm256_extractf128_ps(r[q], 1));
    }
  }
  for (; p < kc; ++p, dst += kMr) {
    for (int i = 0; i < kMr; ++i) dst[i] = i < rows ? a[i * lda + p] : 0.0f;
  }
}

void PackA6(bool trans, int64_t mc, int64_t kc, const float* a, int64_t lda, float* dst) {
  for (int64_t i = 0; i < mc; i += kMr, dst += kc * kMr) {
    const int64_t rows = mc - i < kMr ? mc - i : kMr;
    if (!trans) {
      PackAPanelRows(rows, kc, a + i * lda, lda, dst);
      continue;
    }
    // op(A) rows are A's columns: the panel's six values of each k step are contiguous.
    const float* src = a + i;
    for (int64_t p = 0; p < kc; ++p, src += lda) {
      float* d = dst + p * kMr;
      if (rows == kMr) {
        _mm_storeu_ps(d, _mm_loadu_ps(src));
        d[4] = src[4];
        d[5] = src[5];
      } else {
        for (int r = 0; r < kMr; ++r) d[r] = r < rows ? src[r] : 0.0f;
      }
    }
  }
}

// B row-major (b[p * ldb + j]): eight rows at a time, panel after panel, so that
// reads run along eight rows and each panel is written sequentially. (Row by row would
// scatter the writes kc * 64 bytes apart, a multiple of 4 KiB that maps every write to
// one L1 set; panel by panel would read 64 bytes from each of kc rows.)
void PackBRows(int64_t kc, int64_t nc, const float* b, int64_t ldb, float* dst) {
  const int64_t full = nc / kNr, rest = nc % kNr;
  const __m256i mask[2] = {LaneMask(rest), LaneMask(rest - 8)};
  for (int64_t p0 = 0; p0 < kc; p0 += 8) {
    const int64_t rows = kc - p0 < 8 ? kc - p0 : 8;
    const float* src = b + p0 * ldb;
    float* d = dst + p0 * kNr;
    for (int64_t q = 0; q < full; ++q, src += kNr, d += kc * kNr) {
      for (int64_t p = 0; p < rows; ++p) {
        // The next eight rows' line of this panel: B comes from L3, eight rows are eight
        // streams 3-12 KiB apart, and the hardware prefetcher alone left the copy
        // waiting on L3 (with the prefetch, GEMMs ran faster in 31 of 40 interleaved
        // runs, by 2-16% in medians at BERT shapes). The address may lie past the end
        // of B: a prefetch does not fault, and it is computed as an integer, not as an
        // out-of-bounds pointer.
        _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(src) +
                                                   (p + 8) * ldb * sizeof(float)),
                     _MM_HINT_T0);
        _mm256_storeu_ps(d + p * kNr, _mm256_loadu_ps(src + p * ldb));
        _mm256_storeu_ps(d + p * kNr + 8, _mm256_loadu_ps(src + p * ldb + 8));
      }
    }
    if (rest > 0) {  // masked lanes load as zeros
      for (int64_t p = 0; p < rows; ++p) {
        _mm256_storeu_ps(d + p * kNr, _mm256_maskload_ps(src + p * ldb, mask[0]));
        _mm256_storeu_ps(d + p * kNr + 8, _mm256_maskload_ps(src + p * ldb + 8, mask[1]));
      }
    }
  }
}

// B transposed (b[j * ldb + p], nn.dense's weight layout): each panel is the transpose
// of 16 rows of b, taken as two 8x8 blocks per eight k steps so that whole 64-byte
// lines of the panel are written in order.
void PackBCols(int64_t kc, int64_t nc, const float* b, int64_t ldb, float* dst) {
  for (int64_t j = 0; j < nc; j += kNr, b += kNr * ldb, dst += kc * kNr) {
    const int64_t rows = nc - j < kNr ? nc - j : kNr;
    int64_t p = 0;
    for (; p + 8 <= kc; p += 8) {
      __m256 lo[8], hi[8];
      for (int i = 0; i < 8; ++i) {
        lo[i] = i < rows ? _mm256_loadu_ps(b + i * ldb + p) : _mm256_setzero_ps();
        hi[i] = i + 8 < rows ? _mm256_loadu_ps(b + (i + 8) * ldb + p) : _mm256_setzero_ps();
      }
      Transpose8x8(lo);
      Transpose8x8(hi);
      for (int q = 0; q < 8; ++q) {
        _mm256_storeu_ps(dst + (p + q) * kNr, lo[q]);
        _mm256_storeu_ps(dst + (p + q) * kNr + 8, hi[q]);
      }
    }
    for (; p < kc; ++p) {
      for (int i = 0; i < kNr; ++i) dst[p * kNr + i] = i < rows ? b[i * ldb + p] : 0.0f;
    }
  }
}

void PackB16(bool trans, int64_t kc, int64_t nc, const float* b, int64_t ldb, float* dst) {
  if (trans) {
    PackBCols(kc, nc, b, ldb, dst);
  } else {
    PackBRows(kc, nc, b, ldb, dst);
  }
}

// ---------------------------------------------------------------------------------------
// Products of a few rows, B read in place

// kRows rows of A times 8 * kVecs columns of row-major B (`cols` of them when not
// kFull) over k steps, added to sums when `accumulate`: each k step broadcasts A and
// loads a row segment of B. kRows * kVecs = 8 accumulators cover the FMA latency.
template <int kRows, int kVecs, bool kFull>
void RowsTimesB(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                int64_t cols, bool accumulate, float* sums, int64_t ld) {
  __m256i mask[kVecs];
  #pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) mask[v] = LaneMask(cols - 8 * v);
  __m256 acc[kRows][kVecs];
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      acc[r][v] = accumulate ? LoadCols<kFull>(sums + r * ld + 8 * v, mask[v]) : _mm256_setzero_ps();
    }
  }
  for (int64_t p = 0; p < k; ++p, b += ldb) {
    __m256 bv[kVecs];
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) bv[v] = LoadCols<kFull>(b + 8 * v, mask[v]);
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + r * lda + p);
      #pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm256_fmadd_ps(ar, bv[v], acc[r][v]);
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      StoreCols<kFull>(sums + r * ld + 8 * v, mask[v], acc[r][v]);
    }
  }
}

// B row-major: k in chunks of 16 rows, each swept across all nc columns, so that B is
// read along its rows (16 sequential streams) rather than down a narrow column strip,
// whose every step would land on a new page; the partial sums wait in `sums` (L1).
template <int kRows, int kVecs>
void RowsTimesBAll(int64_t nc, int64_t k, const float* a, int64_t lda, const float* b,
                   int64_t ldb, float* sums, int64_t ld) {
  constexpr int64_t kChunk = 16, kBlock = 8 * kVecs;
  const int64_t chunks = k > 0 ? (k + kChunk - 1) / kChunk : 1;
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t p = chunk * kChunk, kc = k - p < kChunk ? k - p : kChunk;
    const float* bp = b + p * ldb;
    int64_t j = 0;
    for (; j + kBlock <= nc; j += kBlock) {
      RowsTimesB<kRows, kVecs, true>(kc, a + p, lda, bp + j, ldb, kBlock, chunk > 0, sums + j, ld);
    }
    for (; j < nc; j += 8) {
      RowsTimesB<kRows, 1, false>(kc, a + p, lda, bp + j, ldb, nc - j, chunk > 0, sums + j, ld);
    }
  }
}


// kRows rows of A dotted with kCols rows of B (B transposed: nn.dense's weights), eight
// k steps per vector; kRows * kCols = 8 accumulators, summed across lanes at the end.
template <int kRows, int kCols>
void RowsDotB(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* sums,
              int64_t ld) {
  __m256 acc[kRows][kCols];
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  int64_t p = 0;
  for (; p + 8 <= k; p += 8) {
    __m256 bv[kCols];
    #pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) bv[c] = _mm256_loadu_ps(b + c * ldb + p);
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_loadu_ps(a + r * lda + p);
      #pragma GCC unroll 8
      for (int c = 0; c < kCols; ++c) acc[r][c] = _mm256_fmadd_ps(av, bv[c], acc[r][c]);
    }
  }
  if (p < k) {  // masked lanes load as zeros
    const __m256i mask = LaneMask(k - p);
    __m256 bv[kCols];
    #pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) bv[c] = _mm256_maskload_ps(b + c * ldb + p, mask);
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 av = _mm256_maskload_ps(a + r * lda + p, mask);
      #pragma GCC unroll 8
      for (int c = 0; c < kCols; ++c) acc[r][c] = _mm256_fmadd_ps(av, bv[c], acc[r][c]);
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) sums[r * ld + c] = HorizontalSum(acc[r][c]);
  }
}

template <int kRows, int kCols>
void RowsDotBAll(int64_t nc, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float* sums, int64_t ld) {
  int64_t j = 0;
  for (; j + kCols <= nc; j += kCols) RowsDotB<kRows, kCols>(k, a, lda, b + j * ldb, ldb, sums + j, ld);
  for (; j < nc; ++j) RowsDotB<kRows, 1>(k, a, lda, b + j * ldb, ldb, sums + j, ld);
}

template <int kRows>
void SmallMRows(int64_t nc, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                bool trans_b, float* sums, int64_t ld) {
  constexpr int kWide = kRows == 3 ? 2 : 8 / kRows;  // 8 accumulators (6 for 3 rows)
  if (trans_b) {
    RowsDotBAll<kRows, kWide>(nc, k, a, lda, b, ldb, sums, ld);
  } else {
    RowsTimesBAll<kRows, kWide>(nc, k, a, lda, b, ldb, sums, ld);
  }
}

void f32_gemm_small_m__avx2_fma(int64_t rows, int64_t nc, int64_t k, const float* a, int64_t lda,
                                const float* b, int64_t ldb, bool trans_b, float* sums,
                                int64_t ld) {
  switch (rows) {
    case 1: return SmallMRows<1>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
    case 2: return SmallMRows<2>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
    case 3: return SmallMRows<3>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
    default: return SmallMRows<4>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
  }
}

// kRows rows of A times kPanels panels of a packed B (GemmPackB's layout: each a k x 16
// row-major block, the next k * 16 floats on), all 16 columns of each, over k steps;
// kRows * kPanels * 2 = 8 accumulators (6 for 3 rows). With fewer, kSplit interleaved k
// steps keep their own sums, added at the end, so that the FMAs of one panel do not wait
// for each other's results (their latency) at every step.
template <int kRows, int kPanels, int kSplit = 1>
void RowsTimesPanels(int64_t k, const float* a, int64_t lda, const float* b, float* sums,
                     int64_t ld) {
  __m256 acc[kSplit][kRows][kPanels][2];
  #pragma GCC unroll 8
  for (int s = 0; s < kSplit; ++s) {
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      #pragma GCC unroll 8
      for (int q = 0; q < kPanels; ++q) acc[s][r][q][0] = acc[s][r][q][1] = _mm256_setzero_ps();
    }
  }
  auto step = [&](int s, int64_t p) {
    __m256 bv[kPanels][2];
    #pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      bv[q][0] = _mm256_loadu_ps(b + (q * k + p) * kNr);
      bv[q][1] = _mm256_loadu_ps(b + (q * k + p) * kNr + 8);
    }
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m256 ar = _mm256_broadcast_ss(a + r * lda + p);
      #pragma GCC unroll 8
      for (int q = 0; q < kPanels; ++q) {
        acc[s][r][q][0] = _mm256_fmadd_ps(ar, bv[q][0], acc[s][r][q][0]);
        acc[s][r][q][1] = _mm256_fmadd_ps(ar, bv[q][1], acc[s][r][q][1]);
      }
    }
  };
  int64_t p = 0;
  for (; p + kSplit <= k; p += kSplit) {
    #pragma GCC unroll 8
    for (int s = 0; s < kSplit; ++s) step(s, p + s);
  }
  for (; p < k; ++p) step(0, p);
  #pragma GCC unroll 8
  for (int s = 1; s < kSplit; ++s) {
    #pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      #pragma GCC unroll 8
      for (int q = 0; q < kPanels; ++q) {
        acc[0][r][q][0] = _mm256_add_ps(acc[0][r][q][0], acc[s][r][q][0]);
        acc[0][r][q][1] = _mm256_add_ps(acc[0][r][q][1], acc[s][r][q][1]);
      }
    }
  }
  #pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    #pragma GCC unroll 8
    for (int q = 0; q < kPanels; ++q) {
      _mm256_storeu_ps(sums + r * ld + q * kNr, acc[0][r][q][0]);
      _mm256_storeu_ps(sums + r * ld + q * kNr + 8, acc[0][r][q][1]);
    }
  }
}

// The `left` (1 to kMax) panels after the groups of kWide: one call over all of them,
// k split so that about 8 sums are in flight.
template <int kRows, int kMax>
void RowsTimesLeftPanels(int64_t left, int64_t k, const float* a, int64_t lda, const float* b,
                         float* sums, int64_t ld) {
  if constexpr (kMax > 1) {
    if (left < kMax) return RowsTimesLeftPanels<kRows, kMax - 1>(left, k, a, lda, b, sums, ld);
  }
  constexpr int kSplit = 4 / (kRows * kMax) > 1 ? 4 / (kRows * kMax) : 1;
  RowsTimesPanels<kRows, kMax, kSplit>(k, a, lda, b, sums, ld);
}

template <int kRows>
void RowsTimesAllPanels(int64_t panels, int64_t k, const float* a, int64_t lda, const float* b,
                        float* sums, int64_t ld) {
  constexpr int kWide = kRows >= 3 ? 1 : 4 / kRows;
  int64_t q = 0;
  for (; q + kWide <= panels; q += kWide) {
    RowsTimesPanels<kRows, kWide>(k, a, lda, b + q * k * kNr, sums + q * kNr, ld);
  }
  if constexpr (kWide > 1) {
    if (q < panels) {
      RowsTimesLeftPanels<kRows, kWide - 1>(panels - q, k, a, lda, b + q * k * kNr, sums + q * kNr, ld);
    }
  }
}

void f32_gemm_small_m_packed__avx2_fma(int64_t rows, int64_t panels, int64_t k, const float* a,
                                       int64_t lda, const float* b, float* sums, int64_t ld) {
  switch (rows) {
    case 1: return RowsTimesAllPanels<1>(panels, k, a, lda, b, sums, ld);
    case 2: return RowsTimesAllPanels<2>(panels, k, a, lda, b, sums, ld);
    case 3: return RowsTimesAllPanels<3>(panels, k, a, lda, b, sums, ld);
    default: return RowsTimesAllPanels<4>(panels, k, a, lda, b, sums, ld);
  }
}

template <Activation kAct>
void EpilogueRow(int64_t n, const float* sums, float alpha, const float* bias,
                 const float* residual, float* c) {
  const __m256 va = _mm256_set1_ps(alpha);
  const __m256i all = LaneMask(8);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 x = Epilogue<kAct, true>(_mm256_loadu_ps(sums + j), va, bias ? bias + j : nullptr,
                                          residual ? residual + j : nullptr, all);
    _mm256_storeu_ps(c + j, x);
  }
  if (j < n) {
    const __m256i mask = LaneMask(n - j);
    const __m256 x =
        Epilogue<kAct, false>(_mm256_maskload_ps(sums + j, mask), va, bias ? bias + j : nullptr,
                              residual ? residual + j : nullptr, mask);
    _mm256_maskstore_ps(c + j, mask, x);
  }
}

void EpilogueAvx2(Activation activation, int64_t n, const float* sums, float alpha,
                  const float* bias, const float* residual, float* c) {
  switch (activation) {
    case Activation::kNone: return EpilogueRow<Activation::kNone>(n, sums, alpha, bias, residual, c);
    case Activation::kRelu: return EpilogueRow<Activation::kRelu>(n, sums, alpha, bias, residual, c);
    case Activation::kGeluErf:
      return EpilogueRow<Activation::kGeluErf>(n, sums, alpha, bias, residual, c);
    case Activation::kGeluTanh:
      return EpilogueRow<Activation::kGeluTanh>(n, sums, alpha, bias, residual, c);
  }
}

}  // namespace

const GemmUkernels& GemmUkernelsAvx2() {
  static constexpr GemmUkernels kKernels = {
      .mr = kMr,
      .nr = kNr,
      // A 16-wide B panel of 384 rows is 24 KiB of a 32 KiB L1, next to the 9 KiB A
      // panel streaming past it; against 256 rows (16 KiB) it halves the k blocks of
      // BERT's k = 768, each a load and store of C, and measured 1-7% faster (15 of 20
      // interleaved runs on a 2-core Zen 3 EPYC guest).
      .kc = 384,
      .micro_kernel = {f32_gemm_6x16__avx2_fma<Activation::kNone>,
                       f32_gemm_6x16__avx2_fma<Activation::kRelu>,
                       f32_gemm_6x16__avx2_fma<Activation::kGeluErf>,
                       f32_gemm_6x16__avx2_fma<Activation::kGeluTanh>},
      .pack_a = PackA6,
      .pack_b = PackB16,
      .small_m = f32_gemm_small_m__avx2_fma,
      .small_m_packed = f32_gemm_small_m_packed__avx2_fma,
      .epilogue = EpilogueAvx2,
  };
  return kKernels;
}

}  // namespace dynvm::kernels::internal
