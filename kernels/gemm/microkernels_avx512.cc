// The AVX-512 implementation of GEMM's building blocks: the 12x32 micro-kernel with its
// fused epilogue, A and B packing through 16x16 register transposes, and the few-rows
// products, all on 16-lane zmm vectors with mask registers for the tails.
//
// Compiled with -mavx512f -mavx512dq -mavx512bw -mavx512vl (and AVX2, FMA); called only
// through GemmUkernelsAvx512(), which GetMicrokernels (kernels/microkernels.h) hands out
// only on CPUs with all of them. Nothing inline from other headers is called here but the
// AVX-512 vector math of kernels/internal/vmath_avx512.h (see gemm_internal.h).
//
// B stays packed in 16-column panels (kGemmPanelWidth, one zmm per k step), the layout of
// every table, so weights packed ahead serve every level; the micro-kernel reads two
// panels side by side. Its 12x32 tile of C lives in 24 zmm registers; each k step loads
// two vectors of B and broadcasts twelve elements of A into 24 FMAs. Measured against
// 8x32 and 14x32 on a Zen 4 EPYC: all three reach the one-thread FMA peak alone
// (BM_GemmMicroKernel), and in GEMMs at BERT's shapes none won consistently (within
// +-10% of each other over 3 interleaved rounds), so 12x32 stays: it reloads B less
// often than 8x32, and 14x32 uses every register.
#include <immintrin.h>

#include <cstdint>

#include "kernels/gemm/gemm_internal.h"
#include "kernels/internal/vmath_avx512.h"

namespace dynvm::kernels::internal {
namespace {

constexpr int kMr = 12;
constexpr int kPanels = 2;                    // 16-column panels per tile
constexpr int kNr = kPanels * kGemmPanelWidth;
constexpr int kLanes = 16;
static_assert(kMr == 12, "f32_gemm_12x32__avx512f picks 12, 8 or 4 rows");
static_assert(kGemmPanelWidth == kLanes, "a packed B panel's k step is one zmm vector");

using vmath512::HorizontalSum;
using vmath512::LaneMask;  // lanes [0, count) of a zmm vector, clamped to [0, 16]

// The activations of kernels/gemm/gemm.h, with ApplyActivation's semantics.
template <Activation kAct>
__m512 Activate(__m512 x) {
  if constexpr (kAct == Activation::kRelu) {
    return _mm512_max_ps(x, _mm512_setzero_ps());
  } else if constexpr (kAct == Activation::kGeluErf) {
    return vmath512::GeluErf(x);
  } else if constexpr (kAct == Activation::kGeluTanh) {
    return vmath512::GeluTanh(x);
  } else {
    return x;
  }
}

// The epilogue on one vector of sums: act(alpha x + bias) + residual, where `bias` and
// `residual` point at the vector's columns or are null; lanes outside `mask` are not
// read.
template <Activation kAct>
__m512 Epilogue(__m512 x, __m512 alpha, const float* bias, const float* residual,
                __mmask16 mask) {
  x = _mm512_mul_ps(x, alpha);
  if (bias != nullptr) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask, bias));
  x = Activate<kAct>(x);
  if (residual != nullptr) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask, residual));
  return x;
}

// Writes the accumulated tile to C, adding C's partial sum and applying the epilogue as
// the tile asks: its first t.mr <= kRows rows, of which the first kVectors vectors hold
// columns below t.nr.
template <Activation kAct, int kRows, int kVectors>
void StoreTile(const GemmTile& t, const __m512 (&acc)[kMr][kPanels]) {
  __mmask16 mask[kVectors];
  for (int v = 0; v < kVectors; ++v) mask[v] = LaneMask(t.nr - kLanes * v);
  const __m512 alpha = _mm512_set1_ps(t.alpha);
  for (int r = 0; r < kRows && r < t.mr; ++r) {
    float* c = t.c + r * t.ldc;
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      __m512 x = acc[r][v];
      if (t.accumulate) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mask[v], c + kLanes * v));
      if (t.last) {
        x = Epilogue<kAct>(x, alpha, t.bias ? t.bias + kLanes * v : nullptr,
                           t.residual ? t.residual + r * t.ldr + kLanes * v : nullptr, mask[v]);
      }
      _mm512_mask_storeu_ps(c + kLanes * v, mask[v], x);
    }
  }
}

// The micro-kernel over the first kRows rows of the A panel (the tile's rows rounded up
// to a multiple of 4: the padding rows of a short tile are zeros, and computing them
// would waste up to two thirds of a 16-row product's FMAs) and the first kVectors
// panels of B (kVectors < kPanels when the tile's columns end within the first panel,
// whose neighbour may not exist): kRows * kVectors accumulators; per k step kVectors
// loads of B, kRows broadcasts of A, kRows * kVectors FMAs (and, with kPrefetch, a
// prefetch of each panel's line t.prefetch has reached).
template <Activation kAct, int kRows, int kVectors, bool kPrefetch>
void Tile(const GemmTile& t) {
  // C's rows are far apart (often a multiple of 4 KiB, so they share an L1 set) and
  // were last touched a whole block ago: fetch them while the k loop runs.
  for (int r = 0; r < t.mr; ++r) {
    for (int v = 0; v < kVectors; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(t.c + r * t.ldc + kLanes * v), _MM_HINT_T0);
    }
  }
  __m512 acc[kMr][kPanels];
#pragma GCC unroll 12
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const float* a = t.a;
  const float* b = t.b;
  const int64_t b_stride = t.b_stride;
  uintptr_t prefetch = t.prefetch;
  const int64_t kc = t.kc;
#pragma GCC unroll 2
  for (int64_t p = 0; p < kc; ++p, a += kMr, b += kLanes, prefetch += kLanes * sizeof(float)) {
    __m512 bv[kPanels];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      if constexpr (kPrefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(prefetch + v * b_stride * sizeof(float)),
                     _MM_HINT_T0);
      }
      bv[v] = _mm512_loadu_ps(b + v * b_stride);
    }
#pragma GCC unroll 12
    for (int r = 0; r < kRows; ++r) {
      const __m512 va = _mm512_set1_ps(a[r]);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_fmadd_ps(va, bv[v], acc[r][v]);
    }
  }
  StoreTile<kAct, kRows, kVectors>(t, acc);
}

template <Activation kAct, int kRows>
void TileRows(const GemmTile& t) {
  const bool one = t.nr <= kLanes;
  if (t.prefetch != 0) {
    return one ? Tile<kAct, kRows, 1, true>(t) : Tile<kAct, kRows, kPanels, true>(t);
  }
  return one ? Tile<kAct, kRows, 1, false>(t) : Tile<kAct, kRows, kPanels, false>(t);
}

template <Activation kAct>
void f32_gemm_12x32__avx512f(const GemmTile& t) {
  if (t.mr > 8) return TileRows<kAct, 12>(t);
  if (t.mr > 4) return TileRows<kAct, 8>(t);
  return TileRows<kAct, 4>(t);
}

// Transposes the 16x16 block held in r (row i in r[i]) in place.
void Transpose16x16(__m512 (&r)[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // pairs of rows interleaved by element
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {  // groups of four rows by element
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  // Now r[4 g + e] holds, in 128-bit lane l, elements 4 l + e' of rows 4 g .. 4 g + 3
  // (e' = e spread over the lanes): exchange 128-bit lanes between the groups.
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
    r[i + 4] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0x88);
    r[i + 12] = _mm512_shuffle_f32x4(t[i + 4], t[i + 12], 0xdd);
  }
}

// Packs `rows` (<= 16) rows of x, ldx apart, over `count` columns, as their transpose:
// dst[p * width + i] = x[i * ldx + p] for i < width (lanes past `rows` zeros). Sixteen
// columns at a time through a 16x16 transpose; only `width` floats of each k step are
// written.
void PackTransposed(int64_t rows, int64_t count, const float* x, int64_t ldx, int width,
                    float* dst) {
  const __mmask16 out = LaneMask(width);
  int64_t p = 0;
  for (; p < count; p += kLanes) {
    const int64_t cols = count - p < kLanes ? count - p : kLanes;
    const __mmask16 in = LaneMask(cols);
    __m512 r[16];
    for (int i = 0; i < 16; ++i) {
      r[i] = i < rows ? _mm512_maskz_loadu_ps(in, x + i * ldx + p) : _mm512_setzero_ps();
    }
    Transpose16x16(r);
    for (int q = 0; q < cols; ++q) _mm512_mask_storeu_ps(dst + (p + q) * width, out, r[q]);
  }
}

void PackA12(bool trans, int64_t mc, int64_t kc, const float* a, int64_t lda, float* dst) {
  for (int64_t i = 0; i < mc; i += kMr, dst += kc * kMr) {
    const int64_t rows = mc - i < kMr ? mc - i : kMr;
    if (!trans) {
      PackTransposed(rows, kc, a + i * lda, lda, kMr, dst);
      continue;
    }
    // op(A) rows are A's columns: the panel's values of each k step are contiguous.
    const __mmask16 in = LaneMask(rows), out = LaneMask(kMr);
    const float* src = a + i;
    for (int64_t p = 0; p < kc; ++p, src += lda) {
      _mm512_mask_storeu_ps(dst + p * kMr, out, _mm512_maskz_loadu_ps(in, src));
    }
  }
}

// B row-major (b[p * ldb + j]): eight rows at a time, panel after panel, so that reads
// run along eight rows and each panel is written sequentially (see the AVX2 table's
// PackBRows for why, and for the prefetch of the next eight rows).
void PackBRows(int64_t kc, int64_t nc, const float* b, int64_t ldb, float* dst) {
  for (int64_t p0 = 0; p0 < kc; p0 += 8) {
    const int64_t rows = kc - p0 < 8 ? kc - p0 : 8;
    const float* src = b + p0 * ldb;
    float* d = dst + p0 * kLanes;
    for (int64_t j = 0; j < nc; j += kLanes, src += kLanes, d += kc * kLanes) {
      const __mmask16 in = LaneMask(nc - j);  // masked lanes load as zeros
      for (int64_t p = 0; p < rows; ++p) {
        _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(src) +
                                                   (p + 8) * ldb * sizeof(float)),
                     _MM_HINT_T0);
        _mm512_storeu_ps(d + p * kLanes, _mm512_maskz_loadu_ps(in, src + p * ldb));
      }
    }
  }
}

void PackB16(bool trans, int64_t kc, int64_t nc, const float* b, int64_t ldb, float* dst) {
  if (!trans) return PackBRows(kc, nc, b, ldb, dst);
  // B transposed (b[j * ldb + p], nn.dense's weight layout): each panel is the
  // transpose of 16 rows of b.
  for (int64_t j = 0; j < nc; j += kLanes, b += kLanes * ldb, dst += kc * kLanes) {
    PackTransposed(nc - j < kLanes ? nc - j : kLanes, kc, b, ldb, kLanes, dst);
  }
}

// ---------------------------------------------------------------------------------------
// Products of a few rows, B read in place or packed ahead

// kRows rows of A times 16 * kVecs columns of row-major B (`cols` of them) over k steps,
// added to sums when `accumulate`: each k step broadcasts A and loads a row segment of
// B. kRows * kVecs = 8 accumulators cover the FMA latency.
template <int kRows, int kVecs>
void RowsTimesB(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                int64_t cols, bool accumulate, float* sums, int64_t ld) {
  __mmask16 mask[kVecs];
#pragma GCC unroll 8
  for (int v = 0; v < kVecs; ++v) mask[v] = LaneMask(cols - kLanes * v);
  __m512 acc[kRows][kVecs];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      acc[r][v] = accumulate ? _mm512_maskz_loadu_ps(mask[v], sums + r * ld + kLanes * v)
                             : _mm512_setzero_ps();
    }
  }
  for (int64_t p = 0; p < k; ++p, b += ldb) {
    __m512 bv[kVecs];
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) bv[v] = _mm512_maskz_loadu_ps(mask[v], b + kLanes * v);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 8
      for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_fmadd_ps(ar, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int v = 0; v < kVecs; ++v) {
      _mm512_mask_storeu_ps(sums + r * ld + kLanes * v, mask[v], acc[r][v]);
    }
  }
}

// B row-major: k in chunks of 16 rows, each swept across all nc columns, so that B is
// read along its rows (16 sequential streams) rather than down a narrow column strip;
// the partial sums wait in `sums` (L1).
template <int kRows, int kVecs>
void RowsTimesBAll(int64_t nc, int64_t k, const float* a, int64_t lda, const float* b,
                   int64_t ldb, float* sums, int64_t ld) {
  constexpr int64_t kChunk = 16, kBlock = kLanes * kVecs;
  const int64_t chunks = k > 0 ? (k + kChunk - 1) / kChunk : 1;
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t p = chunk * kChunk, kc = k - p < kChunk ? k - p : kChunk;
    const float* bp = b + p * ldb;
    int64_t j = 0;
    for (; j + kBlock <= nc; j += kBlock) {
      RowsTimesB<kRows, kVecs>(kc, a + p, lda, bp + j, ldb, kBlock, chunk > 0, sums + j, ld);
    }
    for (; j < nc; j += kLanes) {
      RowsTimesB<kRows, 1>(kc, a + p, lda, bp + j, ldb, nc - j, chunk > 0, sums + j, ld);
    }
  }
}

// kRows rows of A dotted with kCols rows of B (B transposed: nn.dense's weights), 16 k
// steps per vector; kRows * kCols = 8 accumulators, summed across lanes at the end.
template <int kRows, int kCols>
void RowsDotB(int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float* sums,
              int64_t ld) {
  __m512 acc[kRows][kCols];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; p += kLanes) {
    const __mmask16 mask = LaneMask(k - p);  // masked lanes load as zeros
    __m512 bv[kCols];
#pragma GCC unroll 8
    for (int c = 0; c < kCols; ++c) bv[c] = _mm512_maskz_loadu_ps(mask, b + c * ldb + p);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 av = _mm512_maskz_loadu_ps(mask, a + r * lda + p);
#pragma GCC unroll 8
      for (int c = 0; c < kCols; ++c) acc[r][c] = _mm512_fmadd_ps(av, bv[c], acc[r][c]);
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

void f32_gemm_small_m__avx512f(int64_t rows, int64_t nc, int64_t k, const float* a,
                               int64_t lda, const float* b, int64_t ldb, bool trans_b,
                               float* sums, int64_t ld) {
  switch (rows) {
    case 1: return SmallMRows<1>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
    case 2: return SmallMRows<2>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
    case 3: return SmallMRows<3>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
    default: return SmallMRows<4>(nc, k, a, lda, b, ldb, trans_b, sums, ld);
  }
}

// kRows rows of A times kCount panels of a packed B (GemmPackB's layout: each a k x 16
// row-major block, the next k * 16 floats on), one vector per panel and k step. With
// fewer than 8 accumulators' worth of rows and panels, kSplit interleaved k steps keep
// their own sums, added at the end: one chain of dependent FMAs per panel would wait
// the FMA's latency at every step (a single panel at k = 300: ~1200 cycles instead of
// the ~300 that reading it takes).
template <int kRows, int kCount, int kSplit = 1>
void RowsTimesPanels(int64_t k, const float* a, int64_t lda, const float* b, float* sums,
                     int64_t ld) {
  __m512 acc[kSplit][kRows][kCount];
#pragma GCC unroll 8
  for (int s = 0; s < kSplit; ++s) {
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
      for (int q = 0; q < kCount; ++q) acc[s][r][q] = _mm512_setzero_ps();
    }
  }
  auto step = [&](int s, int64_t p) {
    __m512 bv[kCount];
#pragma GCC unroll 8
    for (int q = 0; q < kCount; ++q) bv[q] = _mm512_loadu_ps(b + (q * k + p) * kLanes);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512 ar = _mm512_set1_ps(a[r * lda + p]);
#pragma GCC unroll 8
      for (int q = 0; q < kCount; ++q) acc[s][r][q] = _mm512_fmadd_ps(ar, bv[q], acc[s][r][q]);
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
      for (int q = 0; q < kCount; ++q) acc[0][r][q] = _mm512_add_ps(acc[0][r][q], acc[s][r][q]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 8
    for (int q = 0; q < kCount; ++q) _mm512_storeu_ps(sums + r * ld + q * kLanes, acc[0][r][q]);
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
  constexpr int kSplit = 8 / (kRows * kMax) > 1 ? 8 / (kRows * kMax) : 1;
  RowsTimesPanels<kRows, kMax, kSplit>(k, a, lda, b, sums, ld);
}

template <int kRows>
void RowsTimesAllPanels(int64_t panels, int64_t k, const float* a, int64_t lda, const float* b,
                        float* sums, int64_t ld) {
  constexpr int kWide = kRows == 3 ? 2 : 8 / kRows;
  int64_t q = 0;
  for (; q + kWide <= panels; q += kWide) {
    RowsTimesPanels<kRows, kWide>(k, a, lda, b + q * k * kLanes, sums + q * kLanes, ld);
  }
  if (q < panels) {
    RowsTimesLeftPanels<kRows, kWide - 1>(panels - q, k, a, lda, b + q * k * kLanes, sums + q * kLanes, ld);
  }
}

void f32_gemm_small_m_packed__avx512f(int64_t rows, int64_t panels, int64_t k, const float* a,
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
  const __m512 va = _mm512_set1_ps(alpha);
  for (int64_t j = 0; j < n; j += kLanes) {
    const __mmask16 mask = LaneMask(n - j);
    const __m512 x = Epilogue<kAct>(_mm512_maskz_loadu_ps(mask, sums + j), va,
                                    bias ? bias + j : nullptr, residual ? residual + j : nullptr,
                                    mask);
    _mm512_mask_storeu_ps(c + j, mask, x);
  }
}

void EpilogueAvx512(Activation activation, int64_t n, const float* sums, float alpha,
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

const GemmUkernels& GemmUkernelsAvx512() {
  static constexpr GemmUkernels kKernels = {
      .mr = kMr,
      .nr = kNr,
      // Two 16-wide B panels of 256 rows are 32 KiB; at 384 rows (48 KiB) they spill
      // from a 32 KiB L1, and kc = 256 measured 4-24% faster at BERT's shapes (2
      // threads, 3 interleaved rounds on a Zen 4 EPYC guest; docs/kernels.md).
      .kc = 256,
      .micro_kernel = {f32_gemm_12x32__avx512f<Activation::kNone>,
                       f32_gemm_12x32__avx512f<Activation::kRelu>,
                       f32_gemm_12x32__avx512f<Activation::kGeluErf>,
                       f32_gemm_12x32__avx512f<Activation::kGeluTanh>},
      .pack_a = PackA12,
      .pack_b = PackB16,
      .small_m = f32_gemm_small_m__avx512f,
      .small_m_packed = f32_gemm_small_m_packed__avx512f,
      .epilogue = EpilogueAvx512,
  };
  return kKernels;
}

}  // namespace dynvm::kernels::internal
