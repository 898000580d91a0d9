// GemmF32: cache blocking, packing and threading around a table of micro-kernels.
//
// A call first packs all of op(A) into MR-row panels, k block by k block (in parallel
// when it is large): packed panels are read contiguously by the micro-kernel, with no
// L1 set conflicts between rows whose stride is a multiple of 4 KiB, and the transpose
// of A is absorbed here. Then the pool's threads claim tasks in turn, each a range of
// column panels in one band of rows, ranges that shrink as the work runs out (guided
// scheduling); a task computes its block of C in the loop order of GotoBLAS/BLIS:
//
//   for jc in task columns, step nc
//     for pc in 0..k, step kc
//       pack op(B)[pc:pc+kc, jc:jc+nc] into 16-wide panels   (L2; reused by all rows;
//                                                             skipped when B came packed)
//       for ic in task rows, step mc                         (A block mc x kc, L2)
//         for jr in columns, step NR                         (B panels kc x NR, L1)
//           for ir in rows, step MR
//             micro-kernel: C[ir, jr] (+)= A[ir, pc:] B[pc:, jr]; epilogue on the last pc
//
// Tasks split the columns first, so that B, the larger operand of a typical layer, is
// packed once; rows are split into bands only when there are too few column panels to
// go round. A product with B packed ahead and few rows reads B in memory order instead
// (kStreamMaxA).
// Packing buffers are per thread and kept across calls, so a call allocates only while
// they grow. B is packed 16 columns wide (kGemmPanelWidth) for every table, a table whose
// tile is wider reading NR / 16 panels side by side; B packed ahead (GemmPackB, for
// weights) holds the same panels, only over all of k: the micro-kernel reads them in
// place.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "kernels/gemm/gemm.h"
#include "kernels/deadline.h"
#include "kernels/gemm/gemm_internal.h"
#include "kernels/microkernels.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace internal {
namespace {

// Block sizes in elements. kc, the k block, is the table's (GemmUkernels::kc: its B
// block of kc x NR floats must stay in L1). mc: an A block of 192 x 384 floats is
// 288 KiB, in a 512 KiB L2. nc: a B block of 384 x 1024 floats (1.5 MiB) lives in L2/L3
// and is reused by every A block.
constexpr int64_t kMcMax = 192;
constexpr int64_t kNcMax = 1024;
// Multiply-adds below which a task is not worth handing to another thread (~10 us).
constexpr int64_t kMinTaskWork = int64_t{1} << 19;
// Elements of A below which packing is not worth handing to another thread.
constexpr int64_t kMinPackWork = int64_t{1} << 14;
// Tasks per thread, which decides the bands of rows when column panels are too few for
// them: finer tasks balance better; the cost of a task is reading the packed A once
// more. 8 measured 1-9% faster than 4 at BERT's shapes on 2 threads (20 of 30
// interleaved runs), when they were a fixed grid.
constexpr int64_t kTasksPerThread = 8;
// A thread claims 1 / (kGuidedShare * threads) of the panels left in all bands, at
// least a task's worth (kMinTaskWork) and at most the rest of its band: against a fixed grid of 8 tasks per thread, 2-6% faster at
// BERT's packed shapes with 128 rows and neutral elsewhere (7 interleaved rounds);
// a share of 1 (larger pieces) lost 1-4% again.
constexpr int64_t kGuidedShare = 2;
// Packing an element of B costs about as much as this many multiply-adds.
constexpr int64_t kPackCost = 8;
// The largest packed copy of A, in floats (16 MiB).
constexpr int64_t kMaxPackedA = int64_t{1} << 22;
// Products with fewer rows than kSmallM read B in place instead of packing it, whose
// cost would not be amortised over enough rows; kSmallRows rows at a time, in column
// blocks of kSmallCols whose raw sums stay in L1 until the epilogue.
constexpr int64_t kSmallM = 8;
constexpr int64_t kSmallRows = 4;
constexpr int64_t kSmallCols = 256;  // a multiple of NR
// A product of so few rows reads each element of B for a multiply-add or four: its time
// is B's bytes, and a task is worth another thread from 64 KiB of B on. (Counted in
// multiply-adds, as kMinTaskWork, the Tree-LSTM's 270-720 KB matrix-vector products ran
// on one thread: with both changes of 2026-12-03, this and the split sums of the
// small-m micro-kernels, 11.2, 11.5 and 12.1 against 16.2, 14.4 and 14.9 us per node at
// 16, 64 and 256 leaves, medians of 5 interleaved runs of bench_treelstm on Zen 4.)
constexpr int64_t kMinFewRowsBytes = int64_t{1} << 16;

// A product with B packed ahead whose packed A has at most kStreamMaxA floats (256
// KiB, half an L2, so it stays there over all of k) is bound by reading B from memory:
// BERT's products at up to 84 tokens (18 for the k = 3072 one), whose 340 MB of weights
// come from DRAM once per inference.
// Its tasks read their panels in memory order, one contiguous stream, that the
// micro-kernel prefetches kStreamPrefetchBytes ahead; and in short k blocks, since a
// block's B is read once per 6-row panel of A, and fetching stops while the panels
// after the first re-read it from L1: 128 against 384 measured 10-20% faster at 8 and
// 16 rows (BM_GemmWeightStream, 5 interleaved rounds), 64 slower again.
constexpr int64_t kStreamMaxA = int64_t{1} << 16;
constexpr int64_t kStreamKc = 128;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The element range [begin, end) of part `i` of `parts` near-equal parts of `units`
// units of `unit` elements, clipped to `total` elements.
void PartRange(int64_t i, int64_t parts, int64_t units, int64_t unit, int64_t total,
               int64_t& begin, int64_t& end) {
  begin = std::min(total, i * units / parts * unit);
  end = std::min(total, (i + 1) * units / parts * unit);
}

// Whether the residual shares memory with C, in which case its values must be copied
// before a partial sum overwrites them.
bool ResidualOverlapsC(const GemmArgs& g) {
  if (g.residual == nullptr) return false;
  const auto c = reinterpret_cast<uintptr_t>(g.c);
  const auto r = reinterpret_cast<uintptr_t>(g.residual);
  const auto c_end = reinterpret_cast<uintptr_t>(g.c + (g.m - 1) * g.ldc + g.n);
  const auto r_end = reinterpret_cast<uintptr_t>(g.residual + (g.m - 1) * g.ldr + g.n);
  return r < c_end && c < r_end;
}

// How the k range is cut: k_blocks blocks of near-equal size, at most kc_max each.
struct KBlocks {
  KBlocks(int64_t k, int64_t kc_limit)
      : count(std::max<int64_t>(1, CeilDiv(k, kc_limit))), kc_max(CeilDiv(k, count)), k(k) {}
  int64_t begin(int64_t block) const { return block * k / count; }
  int64_t size(int64_t block) const { return begin(block + 1) - begin(block); }
  int64_t count, kc_max, k;
};

// Packs all of op(A), block by block of k, panel rows [p0, p1) (in units of MR rows):
// block b's panels start at a_pack + begin(b) * m_pad, each kc x MR.
void PackA(const GemmUkernels& kern, const GemmArgs& g, const KBlocks& kb, int64_t m_pad,
           int64_t p0, int64_t p1, float* a_pack) {
  const int64_t i0 = p0 * kern.mr, rows = std::min(g.m, p1 * kern.mr) - i0;
  for (int64_t b = 0; b < kb.count; ++b) {
    const int64_t pc = kb.begin(b);
    const float* a = g.trans_a ? g.a + pc * g.lda + i0 : g.a + i0 * g.lda + pc;
    kern.pack_a(g.trans_a, rows, kb.size(b), a, g.lda, a_pack + pc * m_pad + i0 * kb.size(b));
  }
}

// Where op(B)[pc, j] is.
const float* BSource(const GemmArgs& g, int64_t pc, int64_t j) {
  return g.trans_b ? g.b + j * g.ldb + pc : g.b + pc * g.ldb + j;
}

// Where a task reads the residual of element (i, j): at
// data + (i - row0) * ld + (j - col0).
struct ResidualView {
  const float* data;
  int64_t ld, row0, col0;
  const float* At(int64_t i, int64_t j) const {
    return data != nullptr ? data + (i - row0) * ld + (j - col0) : nullptr;
  }
};

// The residual of C[m0:m1, n0:n1] as the task must read it: in place, or copied into
// `scratch` when it shares memory with C and partial sums of several k blocks will
// overwrite C before the epilogue reads it.
ResidualView TaskResidual(const GemmArgs& g, const KBlocks& kb, int64_t m0, int64_t m1,
                          int64_t n0, int64_t n1, ScratchBuffer& scratch) {
  if (kb.count == 1 || !ResidualOverlapsC(g)) return {g.residual, g.ldr, 0, 0};
  const int64_t ld = n1 - n0;
  float* copy = scratch.As<float>((m1 - m0) * ld);
  for (int64_t i = m0; i < m1; ++i) {
    std::memcpy(copy + (i - m0) * ld, g.residual + i * g.ldr + n0, ld * sizeof(float));
  }
  return {copy, ld, m0, n0};
}

// Runs the micro-kernel over C[m0:m1, jc:jc+nc] for one k block: `t` holds the block's
// k extent and flags, `a_block` its packed A panels, `b_block` its first packed B panel
// (16 columns, kGemmPanelWidth) with the next ones `b_stride` floats apart.
void ComputeBlock(const GemmUkernels& kern, const GemmArgs& g, GemmTile& t,
                  const float* a_block, const float* b_block, int64_t b_stride,
                  const ResidualView& residual, int64_t m0, int64_t m1, int64_t jc,
                  int64_t nc, int64_t prefetch_ahead = 0) {
  const int64_t mr = kern.mr, nr = kern.nr;
  const int64_t mc_max = kMcMax / mr * mr;
  const GemmMicroKernelFn micro_kernel = kern.micro_kernel[static_cast<int>(g.activation)];
  for (int64_t ic = m0; ic < m1; ic += mc_max) {
    const int64_t mc = std::min(mc_max, m1 - ic);
    for (int64_t jr = 0; jr < nc; jr += nr) {
      const int64_t j = jc + jr;
      t.nr = std::min(nr, nc - jr);
      t.b = b_block + jr / kGemmPanelWidth * b_stride;
      t.b_stride = b_stride;
      t.prefetch = prefetch_ahead > 0 ? reinterpret_cast<uintptr_t>(t.b) + prefetch_ahead : 0;
      t.bias = g.bias != nullptr ? g.bias + j : nullptr;
      for (int64_t i = ic; i < ic + mc; i += mr) {
        t.mr = std::min(mr, ic + mc - i);
        t.a = a_block + i * t.kc;
        t.c = g.c + i * g.ldc + j;
        t.residual = residual.At(i, j);
        micro_kernel(t);
      }
    }
  }
}

// Computes C[m0:m1, n0:n1] from the packed A.
void RunTask(const GemmUkernels& kern, const GemmArgs& g, const KBlocks& kb, bool stream,
             const float* a_pack,
             int64_t m_pad, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  thread_local ScratchBuffer b_scratch, residual_scratch;
  const int64_t nr = kern.nr;
  // A stream (B packed, few rows: see kStreamMaxA) goes panel by panel, each over all
  // of k: B in memory order, prefetched ahead.
  const int64_t nc_max = stream ? nr : std::min(kNcMax, CeilDiv(n1 - n0, nr) * nr);
  const int64_t prefetch_ahead = stream ? kStreamPrefetchBytes : 0;
  float* b_pack = g.b_packed ? nullptr : b_scratch.As<float>(kb.kc_max * nc_max);
  const ResidualView residual = TaskResidual(g, kb, m0, m1, n0, n1, residual_scratch);
  GemmTile t{};
  t.alpha = g.alpha;
  t.ldc = g.ldc;
  t.ldr = residual.ld;
  for (int64_t jc = n0; jc < n1; jc += nc_max) {
    const int64_t nc = std::min(nc_max, n1 - jc);
    for (int64_t b = 0; b < kb.count; ++b) {
      if (KernelDeadlinePassed()) return;  // the run is over: leave C unfinished
      const int64_t pc = kb.begin(b);
      t.kc = kb.size(b);
      t.accumulate = b > 0;
      t.last = b == kb.count - 1;
      if (g.b_packed) {  // panel jc / 16, from row pc
        ComputeBlock(kern, g, t, a_pack + pc * m_pad, g.b + jc * g.k + pc * kGemmPanelWidth,
                     g.k * kGemmPanelWidth, residual, m0, m1, jc, nc, prefetch_ahead);
      } else {
        kern.pack_b(g.trans_b, t.kc, nc, BSource(g, pc, jc), g.ldb, b_pack);
        ComputeBlock(kern, g, t, a_pack + pc * m_pad, b_pack, t.kc * kGemmPanelWidth, residual,
                     m0, m1, jc, nc);
      }
    }
  }
}

// GemmF32With for at most kMaxPackedA / k rows: packs A (in parallel when large), then
// runs the tasks.
void GemmRows(const GemmUkernels& kern, const GemmArgs& g, ThreadPool& pool) {
  thread_local ScratchBuffer a_scratch;
  const int64_t m_panels = CeilDiv(g.m, kern.mr), n_panels = CeilDiv(g.n, kern.nr);
  const int64_t m_pad = m_panels * kern.mr;
  const bool stream = g.b_packed && m_pad * g.k <= kStreamMaxA;
  const KBlocks kb(g.k, stream ? kStreamKc : kern.kc);
  float* a_pack = a_scratch.As<float>(m_pad * std::max<int64_t>(g.k, 1));
  // Packing streams A from memory: split it as soon as a chunk has ~16K elements.
  const int64_t pack_grain = CeilDiv(kMinPackWork, kern.mr * std::max<int64_t>(g.k, 1));
  pool.ParallelFor(m_panels, pack_grain, [&](int64_t begin, int64_t end) {
    PackA(kern, g, kb, m_pad, begin, end, a_pack);
  });

  // Work in multiply-adds, counting the packing of B, which does not shrink with m.
  const int64_t work = g.n * std::max<int64_t>(g.k, 1) * (m_pad + (g.b_packed ? 0 : kPackCost));
  const int64_t max_tasks =
      std::clamp<int64_t>(work / kMinTaskWork, 1, kTasksPerThread * pool.num_threads());
  const int64_t tasks_n = std::min(max_tasks, n_panels);
  const int64_t tasks_m = std::min(CeilDiv(max_tasks, tasks_n), m_panels);
  // Threads claim column panels of a band of rows, in pieces that shrink as the work
  // runs out (guided scheduling; a piece never spans two bands). One at a time, not in
  // the pool's chunks, so that a thread slowed down, by the host or by reading what the
  // other core packed, takes fewer; large first pieces read the packed A fewer times,
  // and the last ones, of one panel or kMinTaskWork, leave the threads finishing within
  // a small piece of each other.
  const int64_t band_panels = CeilDiv(m_panels, tasks_m);
  const int64_t min_piece = std::clamp<int64_t>(
      kMinTaskWork / (band_panels * kern.mr * std::max<int64_t>(g.k, 1) * kern.nr), 1, n_panels);
  const int64_t units = tasks_m * n_panels;
  const int64_t runners =
      std::min<int64_t>(CeilDiv(units, min_piece), pool.num_threads());
  std::atomic<int64_t> next{0};
  pool.ParallelFor(runners, /*grain=*/1, [&](int64_t, int64_t) {
    int64_t start = next.load(std::memory_order_relaxed);
    while (start < units && !KernelDeadlinePassed()) {
      const int64_t band = start / n_panels, panel = start % n_panels;
      const int64_t piece = std::min(
          std::max((units - start) / (kGuidedShare * runners), min_piece), n_panels - panel);
      if (!next.compare_exchange_weak(start, start + piece, std::memory_order_relaxed)) {
        continue;  // start now holds what another thread left
      }
      int64_t m0, m1;
      PartRange(band, tasks_m, m_panels, kern.mr, g.m, m0, m1);
      const int64_t n0 = panel * kern.nr, n1 = std::min(g.n, (panel + piece) * kern.nr);
      if (m0 < m1) RunTask(kern, g, kb, stream, a_pack, m_pad, m0, m1, n0, n1);
      start = next.load(std::memory_order_relaxed);
    }
  });
}

// GemmF32With for m < kSmallM: rows of A against B read in place, four rows at a time,
// in parallel over column blocks (whole panels of a packed B); then the epilogue on each
// block's sums.
void GemmFewRows(const GemmUkernels& kern, const GemmArgs& g, ThreadPool& pool) {
  // The kernels read A by rows: copy a transposed A (m x k floats at most) first.
  thread_local ScratchBuffer a_scratch;
  const float* a = g.a;
  int64_t lda = g.lda;
  if (g.trans_a) {
    float* rows = a_scratch.As<float>(g.m * g.k);
    for (int64_t p = 0; p < g.k; ++p) {
      for (int64_t i = 0; i < g.m; ++i) rows[i * g.k + p] = g.a[p * g.lda + i];
    }
    a = rows;
    lda = g.k;
  }
  const int64_t unit = g.b_packed ? kGemmPanelWidth : 1;  // columns per unit of parallel work
  const int64_t grain = CeilDiv(
      std::max<int64_t>(16, kMinFewRowsBytes / (int64_t{sizeof(float)} * std::max<int64_t>(g.k, 1))),
      unit);
  pool.ParallelFor(CeilDiv(g.n, unit), grain, [&](int64_t begin, int64_t end) {
    if (KernelDeadlinePassed()) return;  // the run is over: leave C unfinished
    thread_local ScratchBuffer sums_scratch;
    float* sums = sums_scratch.As<float>(kSmallRows * kSmallCols);
    const int64_t j_end = std::min(g.n, end * unit);
    for (int64_t j = begin * unit; j < j_end; j += kSmallCols) {
      const int64_t nc = std::min(kSmallCols, j_end - j);
      for (int64_t i = 0; i < g.m; i += kSmallRows) {
        const int64_t rows = std::min(kSmallRows, g.m - i);
        if (g.b_packed) {  // panels j / 16 onwards
          kern.small_m_packed(rows, CeilDiv(nc, kGemmPanelWidth), g.k, a + i * lda, lda, g.b + j * g.k,
                              sums, kSmallCols);
        } else {
          kern.small_m(rows, nc, g.k, a + i * lda, lda, BSource(g, 0, j), g.ldb, g.trans_b,
                       sums, kSmallCols);
        }
        for (int64_t r = i; r < i + rows; ++r) {
          kern.epilogue(g.activation, nc, sums + (r - i) * kSmallCols, g.alpha,
                        g.bias != nullptr ? g.bias + j : nullptr,
                        g.residual != nullptr ? g.residual + r * g.ldr + j : nullptr,
                        g.c + r * g.ldc + j);
        }
      }
    }
  });
}

}  // namespace

// k = 0: op(A) op(B) is all zeros and A and B may be empty (null); only the epilogue
// runs, so that no offset is ever applied to their pointers.
void GemmEmptyK(const GemmUkernels& kern, const GemmArgs& g) {
  thread_local ScratchBuffer zeros_scratch;
  float* zeros = zeros_scratch.As<float>(g.n);
  std::fill_n(zeros, g.n, 0.0f);
  for (int64_t r = 0; r < g.m; ++r) {
    kern.epilogue(g.activation, g.n, zeros, g.alpha, g.bias,
                  g.residual != nullptr ? g.residual + r * g.ldr : nullptr, g.c + r * g.ldc);
  }
}

void GemmF32With(const GemmUkernels& kern, const GemmArgs& g, ThreadPool& pool) {
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k == 0) {
    GemmEmptyK(kern, g);
    return;
  }
  if (g.m < kSmallM) {
    GemmFewRows(kern, g, pool);
    return;
  }
  // Bound the packed copy of A: a taller product is computed in bands of rows.
  const int64_t band = std::max<int64_t>(kern.mr, kMaxPackedA / std::max<int64_t>(g.k, 1) /
                                                      kern.mr * kern.mr);
  for (int64_t i = 0; i < g.m; i += band) {
    GemmArgs part = g;
    part.m = std::min(band, g.m - i);
    part.a = g.trans_a ? g.a + i : g.a + i * g.lda;
    part.c = g.c + i * g.ldc;
    if (g.residual != nullptr) part.residual = g.residual + i * g.ldr;
    GemmRows(kern, part, pool);
  }
}

}  // namespace internal

void GemmF32(const GemmArgs& args, ThreadPool& pool) {
  internal::GemmF32With(GetMicrokernels().gemm, args, pool);
}

int64_t GemmPackedBSize(int64_t k, int64_t n) {
  return internal::CeilDiv(n, kGemmPanelWidth) * kGemmPanelWidth * k;
}

void GemmPackB(int64_t k, int64_t n, const float* b, int64_t ldb, bool trans_b, float* dst) {
  if (k <= 0 || n <= 0) return;
  GetMicrokernels().gemm.pack_b(trans_b, k, n, b, ldb, dst);
}

}  // namespace dynvm::kernels
