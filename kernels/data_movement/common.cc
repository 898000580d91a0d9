// The data-movement families' shared helpers (kernels/data_movement/common.h): the
// strided N-d copy, size-dispatched copies, and reading index and shape tensors.
#include "kernels/data_movement/common.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/elementwise/convert.h"
#include "kernels/elementwise/dtypes.h"

namespace dynvm::kernels::internal {
namespace {

// A copy's iteration space after merging: outermost axis first, no axis of extent 1.
struct CopyPlan {
  Dims shape, dst, src;
};

// Drops unit axes and merges an axis into the one outside it wherever both operands
// step through the pair as through one axis, so that contiguous copies become one
// long row and broadcasts one long fill.
CopyPlan Simplify(absl::Span<const int64_t> shape, absl::Span<const int64_t> dst,
                  absl::Span<const int64_t> src) {
  CopyPlan p;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!p.shape.empty() && p.dst.back() == dst[i] * shape[i] &&
        p.src.back() == src[i] * shape[i]) {
      p.shape.back() *= shape[i];
      p.dst.back() = dst[i];
      p.src.back() = src[i];
      continue;
    }
    p.shape.push_back(shape[i]);
    p.dst.push_back(dst[i]);
    p.src.push_back(src[i]);
  }
  return p;
}

// One row of a copy: n elements with the given strides.
template <typename T>
void CopyRow(T* d, int64_t sd, const T* s, int64_t ss, int64_t n) {
  if (sd == 1 && ss == 1) {
    std::memcpy(d, s, static_cast<size_t>(n) * sizeof(T));
  } else if (sd == 1 && ss == 0) {
    std::fill_n(d, n, *s);
  } else if (sd == 1) {
    for (int64_t j = 0; j < n; ++j) d[j] = s[j * ss];
  } else {
    for (int64_t j = 0; j < n; ++j) d[j * sd] = s[j * ss];
  }
}

// The side of the square blocks a 2-D transpose moves through registers: the K source
// lines a block reads are often a power of two apart (the same L1 set), so K stays
// within the cache's associativity; 8 bytes x 4 and smaller elements x 8 measured best.
template <typename T>
constexpr int64_t kBlock = sizeof(T) == 8 ? 4 : 8;

// d[a * ldd + b] = s[a + b * lds] for a, b < kBlock<T>.
template <typename T>
void TransposeBlock(T* d, int64_t ldd, const T* s, int64_t lds) {
  constexpr int64_t k = kBlock<T>;
  T block[k][k];
  for (int64_t b = 0; b < k; ++b) {
    for (int64_t a = 0; a < k; ++a) block[a][b] = s[a + b * lds];
  }
  for (int64_t a = 0; a < k; ++a) {
    for (int64_t b = 0; b < k; ++b) d[a * ldd + b] = block[a][b];
  }
}

// d[a * ldd + b] = s[a + b * lds] for a < rows (at most kBlock<T>), b < cols: a strip
// of a 2-D transpose, in whole blocks where it can.
template <typename T>
void TransposeStrip(T* d, int64_t ldd, const T* s, int64_t lds, int64_t rows, int64_t cols) {
  int64_t b0 = 0;
  if (rows == kBlock<T>) {
    for (; b0 + kBlock<T> <= cols; b0 += kBlock<T>) TransposeBlock(d + b0, ldd, s + b0 * lds, lds);
  }
  for (int64_t a = 0; a < rows; ++a) {
    for (int64_t b = b0; b < cols; ++b) d[a * ldd + b] = s[a + b * lds];
  }
}

// Work items of a strided copy split long runs: so many elements of the innermost axis
// (64 KiB of f32) at most, so that one long row — a fill, or a copy merged into one run
// — still spreads over the pool.
constexpr int64_t kMaxRun = 16384;

// The copy as 2-D transposes: axis `k` is contiguous in the source, the innermost axis
// contiguous in the destination. Work items are strips of kBlock<T> rows of `k` by at
// most kMaxRun columns, for each index of the other axes.
template <typename T>
void CopyTransposed(const CopyPlan& p, size_t k, T* dst, const T* src, ThreadPool& pool) {
  const size_t inner = p.shape.size() - 1;
  Dims extents, dst_strides, src_strides;
  for (size_t i = 0; i < inner; ++i) {
    if (i == k) continue;
    extents.push_back(p.shape[i]);
    dst_strides.push_back(p.dst[i]);
    src_strides.push_back(p.src[i]);
  }
  const int64_t rows = p.shape[k], cols = p.shape[inner];
  const int64_t ldd = p.dst[k], lds = p.src[inner];
  constexpr int64_t kRows = kBlock<T>;
  const int64_t strips = (rows + kRows - 1) / kRows, pieces = (cols + kMaxRun - 1) / kMaxRun;
  const int64_t per_outer = strips * pieces;
  const int64_t item_bytes = 2 * kRows * std::min(cols, kMaxRun) * static_cast<int64_t>(sizeof(T));
  auto run = [&](int64_t begin, int64_t end) {
    Odometer od(extents, dst_strides, src_strides);
    int64_t o = begin / per_outer;
    od.Seek(o);
    for (int64_t w = begin; w < end; ++w) {
      for (; o < w / per_outer; ++o) od.Next();
      const int64_t a0 = (w % per_outer) / pieces * kRows;
      const int64_t b0 = (w % pieces) * kMaxRun;
      TransposeStrip(dst + od.offset0() + a0 * ldd + b0, ldd, src + od.offset1() + a0 + b0 * lds,
                     lds, std::min(kRows, rows - a0), std::min(kMaxRun, cols - b0));
    }
  };
  pool.ParallelFor(ProductOf(extents) * per_outer, GrainForBytes(item_bytes), run);
}

template <typename T>
void CopyPlanned(const CopyPlan& p, T* dst, const T* src, ThreadPool& pool) {
  const size_t n = p.shape.size();
  if (n == 0) {
    *dst = *src;
    return;
  }
  const size_t inner = n - 1;
  if (p.dst[inner] == 1 && p.src[inner] != 1 && p.src[inner] != 0) {
    for (size_t k = inner; k-- > 0;) {
      if (p.src[k] == 1) return CopyTransposed(p, k, dst, src, pool);
    }
  }
  const absl::Span<const int64_t> extents = absl::MakeConstSpan(p.shape).first(inner);
  const absl::Span<const int64_t> dst_strides = absl::MakeConstSpan(p.dst).first(inner);
  const absl::Span<const int64_t> src_strides = absl::MakeConstSpan(p.src).first(inner);
  const int64_t len = p.shape[inner], sd = p.dst[inner], ss = p.src[inner];
  const int64_t pieces = (len + kMaxRun - 1) / kMaxRun;
  const int64_t item_bytes = 2 * std::min(len, kMaxRun) * static_cast<int64_t>(sizeof(T));
  auto run = [&](int64_t begin, int64_t end) {
    Odometer od(extents, dst_strides, src_strides);
    int64_t r = begin / pieces;
    od.Seek(r);
    for (int64_t w = begin; w < end; ++w) {
      for (; r < w / pieces; ++r) od.Next();
      const int64_t j0 = (w % pieces) * kMaxRun;
      CopyRow(dst + od.offset0() + j0 * sd, sd, src + od.offset1() + j0 * ss, ss,
              std::min(kMaxRun, len - j0));
    }
  };
  pool.ParallelFor(ProductOf(extents) * pieces, GrainForBytes(item_bytes), run);
}

}  // namespace

Dims ContiguousStrides(absl::Span<const int64_t> shape) {
  Dims strides(shape.size());
  uint64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(shape[i]);
  }
  return strides;
}

int64_t ProductOf(absl::Span<const int64_t> extents) {
  if (std::find(extents.begin(), extents.end(), 0) != extents.end()) return 0;
  int64_t product = 1;
  for (int64_t e : extents) product *= e;
  return product;
}

void CopyStrided(size_t elem_size, absl::Span<const int64_t> shape, void* dst,
                 absl::Span<const int64_t> dst_strides, const void* src,
                 absl::Span<const int64_t> src_strides, ThreadPool& pool) {
  for (int64_t e : shape) {
    if (e == 0) return;
  }
  const CopyPlan plan = Simplify(shape, dst_strides, src_strides);
  DispatchElementSize(elem_size, [&](auto tag) {
    using T = decltype(tag);
    CopyPlanned(plan, static_cast<T*>(dst), static_cast<const T*>(src), pool);
  });
}

void ParallelCopy(void* dst, const void* src, size_t nbytes, ThreadPool& pool) {
  if (nbytes == 0 || dst == src) return;
  constexpr int64_t kChunk = int64_t{1} << 18;
  const int64_t chunks = (static_cast<int64_t>(nbytes) + kChunk - 1) / kChunk;
  pool.ParallelFor(chunks, /*grain=*/4, [&](int64_t begin, int64_t end) {
    const size_t from = static_cast<size_t>(begin * kChunk);
    const size_t to = std::min(nbytes, static_cast<size_t>(end * kChunk));
    std::memcpy(static_cast<char*>(dst) + from, static_cast<const char*>(src) + from, to - from);
  });
}

void FillElements(void* dst, int64_t count, const void* value, size_t elem_size, ThreadPool& pool) {
  DispatchElementSize(elem_size, [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, value, sizeof(T));
    T* d = static_cast<T*>(dst);
    pool.ParallelFor(count, GrainForBytes(sizeof(T)),
                     [&](int64_t begin, int64_t end) { std::fill(d + begin, d + end, v); });
  });
}

Odometer::Odometer(absl::Span<const int64_t> extents, absl::Span<const int64_t> strides0,
                   absl::Span<const int64_t> strides1)
    : extents_(extents.begin(), extents.end()),
      strides0_(strides0.begin(), strides0.end()),
      strides1_(strides1.begin(), strides1.end()),
      index_(extents.size(), 0) {}

void Odometer::Seek(int64_t linear) {
  offset0_ = offset1_ = 0;
  for (size_t i = extents_.size(); i-- > 0;) {
    index_[i] = linear % extents_[i];
    linear /= extents_[i];
    offset0_ += index_[i] * strides0_[i];
    offset1_ += index_[i] * strides1_[i];
  }
}

void Odometer::Next() {
  for (size_t i = extents_.size(); i-- > 0;) {
    offset0_ += strides0_[i];
    offset1_ += strides1_[i];
    if (++index_[i] < extents_[i]) return;
    offset0_ -= strides0_[i] * extents_[i];
    offset1_ -= strides1_[i] * extents_[i];
    index_[i] = 0;
  }
}

absl::StatusOr<Dims> ReadIntVector(std::string_view op, std::string_view what,
                                   const NDArrayObj& t) {
  DYNVM_RETURN_IF_ERROR(CheckIndexDType(op, what, t));
  if (t.ndim() != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s must be 1-D, got shape %s", op, what, ShapeToString(t.shape())));
  }
  Dims values(static_cast<size_t>(t.num_elements()));
  const bool is_i64 = t.dtype() == DType::kI64;
  for (int64_t i = 0; i < t.num_elements(); ++i) values[i] = LoadIndex(t.data(), is_i64, i);
  return values;
}

absl::StatusOr<Shape> ReadShapeTensor(std::string_view op, const NDArrayObj& t) {
  DYNVM_ASSIGN_OR_RETURN(Dims values, ReadIntVector(op, "shape", t));
  Shape shape(values.begin(), values.end());
  DYNVM_RETURN_IF_ERROR(ValidateShape(op, shape));
  return shape;
}

double LoadAsDouble(const NDArrayObj& t, int64_t i) {
  return elementwise::VisitDType(t.dtype(), [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(elementwise::Widen(static_cast<const T*>(t.data())[i]));
  });
}

void StoreFromDouble(double value, DType dtype, void* out) {
  elementwise::VisitDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    *static_cast<T*>(out) = elementwise::Convert<T>(value);
  });
}

}  // namespace dynvm::kernels::internal
