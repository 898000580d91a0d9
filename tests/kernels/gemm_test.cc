// Tests of GemmF32 (kernels/gemm/gemm.h) against GemmF32Reference, through every
// micro-kernel table this CPU can run (kernels/gemm/gemm_internal.h): random and edge
// shapes (0, 1, primes, partial tiles, several k/m/n cache blocks), all transpose
// combinations, every epilogue, leading dimensions past the row lengths, a residual
// that aliases C, B packed ahead (GemmPackB) or not, and 1 to 3 threads.
//
// Tolerance. The reference sums in double; a float sum of k products differs from the
// exact value by at most k * u * S (u = 2^-24, S = sum_p |a_ip| |b_pj|, the sum of the
// magnitudes). We allow (k + 4) * 2u * |alpha| * S for the product (twice the bound),
// times 1.2 for the activations (|gelu'| <= 1.13, relu and none <= 1), plus 2e-6 *
// (1 + |expected|) for the vectorised activation's own error and the final roundings
// of the bias and residual additions.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/cpu_features.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/microkernels.h"
#include "kernels/scratch.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using testing::EveryMicrokernelTable;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
// Written into C's padding: the GEMM must leave it alone.
constexpr float kSentinel = 12345.0f;

enum class Residual { kNone, kSeparate, kAliasesC };

struct Case {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f;
  bool bias = false;
  Activation activation = Activation::kNone;
  Residual residual = Residual::kNone;
  int64_t pad = 0;  // extra elements per row of every operand
  bool packed_b = false;  // B packed ahead by the table's pack_b (GemmPackB's layout)

  std::string ToString() const {
    return absl::StrFormat("m=%d n=%d k=%d trans_a=%d trans_b=%d alpha=%g bias=%d act=%d "
                           "residual=%d pad=%d packed_b=%d",
                           m, n, k, trans_a, trans_b, alpha, bias, static_cast<int>(activation),
                           static_cast<int>(residual), pad, packed_b);
  }
};

// The tables to test: every one the CPU can execute.
std::vector<const Microkernels*> Tables() { return EveryMicrokernelTable(); }

// A rows x cols matrix with `ld` elements per row: values in [-1, 1), NaN padding (so
// that reading it would show in the result).
std::vector<float> RandomMatrix(int64_t rows, int64_t cols, int64_t ld, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(rows * ld), kNaN);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) v[i * ld + j] = dist(rng);
  }
  return v;
}

// Runs `cs` with `table` (GemmF32 itself when null) on `pool` and compares with the
// reference.
void Check(const Microkernels* table, const Case& cs, ThreadPool& pool, std::mt19937& rng) {
  SCOPED_TRACE(absl::StrFormat("%s threads=%d %s", table ? IsaName(table->isa) : std::string_view("GemmF32"),
                               pool.num_threads(), cs.ToString()));
  const int64_t m = cs.m, n = cs.n, k = cs.k;
  const int64_t lda = (cs.trans_a ? m : k) + cs.pad, ldb = (cs.trans_b ? k : n) + cs.pad;
  const int64_t ldc = n + cs.pad;
  const std::vector<float> a = RandomMatrix(cs.trans_a ? k : m, cs.trans_a ? m : k, lda, rng);
  const std::vector<float> b = RandomMatrix(cs.trans_b ? n : k, cs.trans_b ? k : n, ldb, rng);
  const std::vector<float> bias = RandomMatrix(1, n, n, rng);
  const int64_t ldr = cs.residual == Residual::kSeparate ? n + 2 * cs.pad + 1 : ldc;
  const std::vector<float> residual = RandomMatrix(m, n, ldr, rng);

  GemmArgs args{.m = m, .n = n, .k = k, .a = a.data(), .lda = lda, .trans_a = cs.trans_a,
                .b = b.data(), .ldb = ldb, .trans_b = cs.trans_b, .ldc = ldc,
                .alpha = cs.alpha, .bias = cs.bias ? bias.data() : nullptr,
                .activation = cs.activation};
  std::vector<float> expected(static_cast<size_t>(m * ldc), kSentinel);
  args.c = expected.data();
  if (cs.residual != Residual::kNone) {
    args.residual = residual.data();
    args.ldr = ldr;
  }
  GemmF32Reference(args);

  // C starts as NaN (sentinels in the padding), or as the residual when it aliases C.
  std::vector<float> c(static_cast<size_t>(m * ldc), kSentinel);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      c[i * ldc + j] = cs.residual == Residual::kAliasesC ? residual[i * ldr + j] : kNaN;
    }
  }
  args.c = c.data();
  if (cs.residual == Residual::kAliasesC) args.residual = c.data();
  ScratchBuffer packed;
  if (cs.packed_b) {
    // One float past a 64-byte boundary: packed B needs no alignment.
    float* panels = packed.As<float>(GemmPackedBSize(k, n) + 1) + 1;
    if (table != nullptr) {
      if (k > 0 && n > 0) table->gemm.pack_b(cs.trans_b, k, n, b.data(), ldb, panels);
    } else {
      GemmPackB(k, n, b.data(), ldb, cs.trans_b, panels);
    }
    args.b = panels;
    args.b_packed = true;
    // The reference reads the packed layout too, summing in the same order.
    std::vector<float> from_packed(static_cast<size_t>(m * ldc), kSentinel);
    GemmArgs reference = args;
    reference.c = from_packed.data();
    reference.residual = cs.residual == Residual::kNone ? nullptr : residual.data();
    GemmF32Reference(reference);
    EXPECT_EQ(from_packed, expected) << "GemmF32Reference on packed B";
  }
  if (table != nullptr) {
    internal::GemmF32With(table->gemm, args, pool);
  } else {
    GemmF32(args, pool);
  }

  int failures = 0;
  for (int64_t i = 0; i < m && failures < 5; ++i) {
    for (int64_t j = 0; j < ldc && failures < 5; ++j) {
      const float got = c[i * ldc + j], want = expected[i * ldc + j];
      if (j >= n) {
        EXPECT_EQ(got, kSentinel) << "padding overwritten at " << i << ", " << j;
        failures += got != kSentinel;
        continue;
      }
      double magnitude = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const float x = cs.trans_a ? a[p * lda + i] : a[i * lda + p];
        const float y = cs.trans_b ? b[j * ldb + p] : b[p * ldb + j];
        magnitude += std::fabs(static_cast<double>(x) * y);
      }
      const double tol = 1.2 * (k + 4) * 2.0 * std::ldexp(1.0, -24) * std::fabs(cs.alpha) *
                             magnitude +
                         2e-6 * (1.0 + std::fabs(want));
      const bool ok = std::fabs(static_cast<double>(got) - want) <= tol;
      EXPECT_TRUE(ok) << "at " << i << ", " << j << ": got " << got << ", want " << want
                      << ", tolerance " << tol;
      failures += !ok;
    }
  }
}

TEST(GemmTest, EveryTransposeAndEpilogue) {
  std::mt19937 rng(1);
  ThreadPool pool(2);
  const Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGeluErf,
                                     Activation::kGeluTanh};
  for (const Microkernels* table : Tables()) {
    for (int trans = 0; trans < 4; ++trans) {
      for (float alpha : {1.0f, -0.75f}) {
        for (bool bias : {false, true}) {
          for (Activation act : kActivations) {
            for (Residual res : {Residual::kNone, Residual::kSeparate, Residual::kAliasesC}) {
              // k = 500 spans two k blocks (of at most the table's kc, 256 or 384;
              // four with B packed ahead, which 13 rows read as a stream in blocks of
              // at most 128); 13 and 19 x 37 leave partial tiles in both directions
              // (1 and 7 rows past 12: the AVX-512 tile's 4- and 8-row forms); 3 rows
              // take the path for a few rows (B read in place).
              for (int64_t m : {3, 13, 19}) {
                for (bool packed_b : {false, true}) {
                  Check(table,
                        Case{.m = m, .n = 37, .k = 500, .trans_a = (trans & 1) != 0,
                             .trans_b = (trans & 2) != 0, .alpha = alpha, .bias = bias,
                             .activation = act, .residual = res, .pad = 3,
                             .packed_b = packed_b},
                        pool, rng);
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(GemmTest, RandomShapes) {
  std::mt19937 rng(2);
  ThreadPool one(1), two(2), three(3);
  ThreadPool* pools[] = {&one, &two, &three};
  const int64_t kDims[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 16, 17, 23, 31, 32, 33, 47, 64, 97};
  std::uniform_int_distribution<int> dim(0, std::size(kDims) - 1), coin(0, 1), act(0, 3);
  for (int iter = 0; iter < 300; ++iter) {
    Case cs{.m = kDims[dim(rng)], .n = kDims[dim(rng)], .k = kDims[dim(rng)],
            .trans_a = coin(rng) == 1, .trans_b = coin(rng) == 1,
            .alpha = coin(rng) ? 1.0f : 0.5f, .bias = coin(rng) == 1,
            .activation = static_cast<Activation>(act(rng)),
            .residual = static_cast<Residual>(act(rng) % 3), .pad = coin(rng) * 5,
            .packed_b = coin(rng) == 1};
    for (const Microkernels* table : Tables()) Check(table, cs, *pools[iter % 3], rng);
    Check(nullptr, cs, *pools[iter % 3], rng);
  }
}

// Shapes past every cache block (k > kc, m > mc, n > nc) and big enough to be split
// into tasks over both rows and columns; B packed ahead both read in cache blocks (a
// packed A past the stream threshold, 64K floats) and as a stream.
TEST(GemmTest, LargeShapesOnThreads) {
  std::mt19937 rng(3);
  ThreadPool one(1), two(2), three(3);
  const Case kCases[] = {
      {.m = 203, .n = 1100, .k = 77},
      {.m = 150, .n = 200, .k = 530, .trans_b = true, .bias = true,
       .activation = Activation::kGeluErf, .residual = Residual::kAliasesC},
      {.m = 400, .n = 16, .k = 257, .trans_a = true, .residual = Residual::kSeparate, .pad = 1},
      {.m = 1, .n = 700, .k = 900, .trans_b = true, .bias = true},
      {.m = 97, .n = 65, .k = 1030, .trans_a = true, .trans_b = true, .alpha = 2.0f,
       .activation = Activation::kGeluTanh, .residual = Residual::kAliasesC, .pad = 7},
      {.m = 150, .n = 1100, .k = 530, .bias = true, .residual = Residual::kAliasesC,
       .packed_b = true},
      {.m = 70, .n = 1100, .k = 400, .trans_b = true, .bias = true, .packed_b = true},
      {.m = 5, .n = 1100, .k = 300, .residual = Residual::kSeparate, .packed_b = true},
      // Few rows against B packed ahead, split over threads by B's bytes: whole groups
      // of panels and the few left (k split into interleaved sums, an odd k).
      {.m = 1, .n = 450, .k = 301, .bias = true, .packed_b = true},
      {.m = 2, .n = 600, .k = 150, .activation = Activation::kRelu, .packed_b = true},
      {.m = 3, .n = 150, .k = 300, .residual = Residual::kSeparate, .packed_b = true},
      // B packed ahead and read as a stream (84 x 780 is the largest packed A that
      // is): two column panels, too few for the tasks, which split the rows into bands
      // too, over seven k blocks, into C that the residual aliases.
      {.m = 84, .n = 32, .k = 780, .trans_a = true, .bias = true,
       .activation = Activation::kRelu, .residual = Residual::kAliasesC, .packed_b = true},
  };
  for (const Case& cs : kCases) {
    for (ThreadPool* pool : {&one, &two, &three}) {
      for (const Microkernels* table : Tables()) Check(table, cs, *pool, rng);
    }
  }
}

TEST(GemmTest, KZeroAppliesTheEpilogueToZeros) {
  std::mt19937 rng(4);
  ThreadPool pool(2);
  for (const Microkernels* table : Tables()) {
    Check(table, Case{.m = 9, .n = 20, .k = 0, .bias = true, .activation = Activation::kGeluErf,
                      .residual = Residual::kAliasesC},
          pool, rng);
  }
}

// GemmPackB's layout, the one every table's pack_b writes: panel q holds columns
// [16 q, 16 q + 16) of op(B) row by row, zeros past n. A packed weight is read by
// whichever table the loading CPU selects.
TEST(GemmTest, PackedBLayoutIsTheSameForEveryTable) {
  std::mt19937 rng(6);
  for (const auto& [k, n] : {std::pair<int64_t, int64_t>{1, 1}, {9, 16}, {37, 45}, {500, 33}}) {
    for (bool trans : {false, true}) {
      const int64_t ldb = (trans ? k : n) + 2;
      const std::vector<float> b = RandomMatrix(trans ? n : k, trans ? k : n, ldb, rng);
      ASSERT_EQ(GemmPackedBSize(k, n), (n + 15) / 16 * 16 * k);
      for (const Microkernels* table : Tables()) {
        ScratchBuffer buffer;
        float* packed = buffer.As<float>(GemmPackedBSize(k, n) + 1) + 1;  // unaligned
        table->gemm.pack_b(trans, k, n, b.data(), ldb, packed);
        for (int64_t p = 0; p < k; ++p) {
          for (int64_t j = 0; j < (n + 15) / 16 * 16; ++j) {
            const float want = j >= n ? 0.0f : trans ? b[j * ldb + p] : b[p * ldb + j];
            ASSERT_EQ(packed[(j / 16 * k + p) * 16 + j % 16], want)
                << IsaName(table->isa) << " k=" << k << " n=" << n << " trans=" << trans << " at "
                << p << ", " << j;
          }
        }
      }
    }
  }
}

// The vectorised epilogues' activations on extreme and random inputs, one per column
// of a k = 1 product (so that every lane position and partial tile is exercised): they
// agree with the activations' formulas in double within 2e-6 absolute plus 1e-6
// relative. (Not with ApplyActivation: the scalar table and GemmF32Reference use it.)
double ActivationInDouble(Activation act, double x) {
  switch (act) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0 ? x : 0;
    case Activation::kGeluErf: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

TEST(GemmTest, EpilogueActivationsMatchTheirFormulas) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  ThreadPool pool(1);
  for (const Microkernels* table : Tables()) {
    for (int a = 0; a < 4; ++a) {
      const Activation act = static_cast<Activation>(a);
      for (int64_t n : {1, 7, 9, 31, 1000}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (float& v : x) v = dist(rng);
        const float kSpecial[] = {0.0f, -0.0f, 1e-30f, -1e4f, 1e4f, -3.5f, 88.0f, -88.0f, -5.0f};
        for (size_t i = 0; i < std::size(kSpecial) && i < x.size(); ++i) x[i] = kSpecial[i];
        // One row (the path for a few rows) and nine (micro-kernel tiles), all ones.
        for (int64_t m : {1, 9}) {
          const std::vector<float> ones(static_cast<size_t>(m), 1.0f);
          std::vector<float> y(static_cast<size_t>(m * n), kNaN);
          internal::GemmF32With(table->gemm,
                                {.m = m, .n = n, .k = 1, .a = ones.data(), .lda = 1,
                                 .b = x.data(), .ldb = n, .c = y.data(), .ldc = n,
                                 .activation = act},
                                pool);
          for (int64_t i = 0; i < m * n; ++i) {
            const double want = ActivationInDouble(act, x[i % n]);
            EXPECT_NEAR(y[i], want, 2e-6 + 1e-6 * std::fabs(want))
                << IsaName(table->isa) << " m=" << m << " act=" << a << " x=" << x[i % n];
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace dynvm::kernels
