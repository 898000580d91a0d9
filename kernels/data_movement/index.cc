// Indexing kernels: take, gather (ONNX GatherElements), scatter_elements and one_hot.
// Data of every dtype moves by element size; indices are i32 or i64.
//
// Index values are untrusted: take's "fast" mode, gather and scatter_elements check
// every index against the axis before touching memory (one pass, min/max first), so
// an out-of-range index is an InvalidArgument, never an out-of-bounds access.
#include "kernels/data_movement/index.h"

#include <algorithm>
#include <concepts>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"

namespace dynvm::kernels {
namespace {

using internal::CheckOutput;
using internal::Dims;
using internal::SingleShapeFn;

// Calls `fn(Idx{})` with Idx the index type of `indices` (i32 or i64; checked before).
template <typename Fn>
void DispatchIndex(const NDArrayObj& indices, Fn&& fn) {
  if (indices.dtype() == DType::kI64) {
    fn(int64_t{});
  } else {
    fn(int32_t{});
  }
}

// OK if each of the `n` indices lies in [-extent, extent) (negative ones count from
// the end), else InvalidArgument naming the first that does not.
template <typename Idx>
absl::Status CheckIndexRange(std::string_view op, const Idx* idx, int64_t n, int64_t extent,
                             int axis) {
  Idx lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, idx[i]);
    hi = std::max(hi, idx[i]);
  }
  if (n == 0 || (lo >= -extent && hi < extent)) return absl::OkStatus();
  for (int64_t i = 0;; ++i) {
    if (idx[i] < -extent || idx[i] >= extent) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: index %d (at %d) out of range for axis %d of extent %d", op, idx[i],
                          i, axis, extent));
    }
  }
}

// ---------------------------------------------------------------------------------------
// take

enum class TakeMode { kClip, kWrap, kFast };

struct TakeState {
  std::optional<int64_t> axis;  // absent: index the flattened data
  int64_t batch_dims;
  TakeMode mode;
};

absl::StatusOr<std::shared_ptr<const void>> BindTake(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "batch_dims", "mode"}));
  auto state = std::make_shared<TakeState>();
  if (attrs.contains("axis")) {
    DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis"));
  }
  DYNVM_ASSIGN_OR_RETURN(state->batch_dims, GetIntAttr(attrs, "batch_dims", 0));
  if (!state->axis && state->batch_dims != 0) {
    return absl::InvalidArgumentError("attribute 'batch_dims' needs an 'axis'");
  }
  DYNVM_ASSIGN_OR_RETURN(std::string mode, GetStringAttr(attrs, "mode", "clip"));
  if (mode == "clip") {
    state->mode = TakeMode::kClip;
  } else if (mode == "wrap") {
    state->mode = TakeMode::kWrap;
  } else if (mode == "fast") {
    state->mode = TakeMode::kFast;
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'mode' is '%s': expected 'clip', 'wrap' or 'fast'", mode));
  }
  return std::shared_ptr<const void>(std::move(state));
}

// take's iteration space: data as [batch, outer, extent, inner], indices as
// [batch, count], the output as [batch, outer, count, inner].
struct TakeGeometry {
  Shape out;
  int axis = 0;
  int64_t batch = 1, outer = 1, extent = 1, inner = 1, count = 1;
};

absl::StatusOr<TakeGeometry> PlanTake(const TakeState& s, const NDArrayObj& data,
                                      const NDArrayObj& indices) {
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType("take", "indices", indices));
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  TakeGeometry g;
  g.count = indices.num_elements();
  if (!s.axis) {
    g.extent = data.num_elements();
    g.out = is;
  } else {
    DYNVM_ASSIGN_OR_RETURN(g.axis, internal::NormalizeAxis("take", *s.axis, data.ndim()));
    const int64_t bd = s.batch_dims < 0 ? s.batch_dims + indices.ndim() : s.batch_dims;
    if (bd < 0 || bd > g.axis || bd > indices.ndim() ||
        !std::equal(ds.begin(), ds.begin() + bd, is.begin(), is.begin() + bd)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("take: batch_dims %d does not fit data %s, indices %s and axis %d",
                          s.batch_dims, ShapeToString(ds), ShapeToString(is), g.axis));
    }
    g.out.assign(ds.begin(), ds.begin() + g.axis);
    g.out.insert(g.out.end(), is.begin() + bd, is.end());
    g.out.insert(g.out.end(), ds.begin() + g.axis + 1, ds.end());
    const absl::Span<const int64_t> dims = ds;
    g.batch = internal::ProductOf(dims.first(bd));
    g.outer = internal::ProductOf(dims.subspan(bd, g.axis - bd));
    g.inner = internal::ProductOf(dims.subspan(g.axis + 1));
    g.extent = ds[g.axis];
    g.count = g.batch == 0 ? 0 : indices.num_elements() / g.batch;
  }
  if (g.extent == 0 && indices.num_elements() > 0) {
    return absl::InvalidArgumentError(absl::StrFormat("take: %d indices into axis %d of extent 0",
                                                      indices.num_elements(), g.axis));
  }
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape("take", g.out));
  return g;
}

absl::StatusOr<Shape> TakeShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(TakeGeometry g,
                         PlanTake(*static_cast<const TakeState*>(state), *inputs[0], *inputs[1]));
  return g.out;
}

template <typename Idx>
int64_t NormalizeIndex(TakeMode mode, Idx i, int64_t extent) {
  const int64_t v = i;
  switch (mode) {
    case TakeMode::kClip: return std::clamp<int64_t>(v, 0, extent - 1);
    case TakeMode::kWrap: return (v % extent + extent) % extent;
    case TakeMode::kFast: return v < 0 ? v + extent : v;
  }
  return 0;
}

// Copies the output's rows of `kBytes` (0: `row_bytes`, known only at run time), with
// a constant-size memcpy for short rows (a gather of single elements when inner == 1)
// and a plain memcpy for long ones (an embedding lookup copies whole table rows).
template <size_t kBytes, typename Idx>
void TakeRows(const TakeGeometry& g, TakeMode mode, const char* data, const Idx* idx, char* out,
              size_t row_bytes, ThreadPool& pool) {
  const size_t bytes = kBytes != 0 ? kBytes : row_bytes;
  const int64_t rows = g.batch * g.outer * g.count;
  pool.ParallelFor(rows, internal::GrainForBytes(2 * bytes), [&](int64_t begin, int64_t end) {
    // Row r is (b, o, n) of [batch, outer, count]; advanced as counters, not divided.
    int64_t n = begin % g.count, bo = begin / g.count;
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = bo / g.outer;
      const int64_t a = NormalizeIndex(mode, idx[b * g.count + n], g.extent);
      const int64_t row = static_cast<int64_t>(bytes);
      std::memcpy(out + r * row, data + (bo * g.extent + a) * row, bytes);
      if (++n == g.count) {
        n = 0;
        ++bo;
      }
    }
  });
}

absl::Status TakeKernel(const KernelCall& call) {
  const auto& s = *static_cast<const TakeState*>(call.state);
  const NDArrayObj& data = *call.args[0];
  const NDArrayObj& indices = *call.args[1];
  const NDArrayObj& out = *call.args[2];
  DYNVM_ASSIGN_OR_RETURN(TakeGeometry g, PlanTake(s, data, indices));
  DYNVM_RETURN_IF_ERROR(CheckOutput("take", out, data.dtype(), g.out));
  if (out.num_elements() == 0) return absl::OkStatus();
  absl::Status status;
  DispatchIndex(indices, [&](auto tag) {
    using Idx = decltype(tag);
    const Idx* idx = indices.data_as<Idx>();
    if (s.mode == TakeMode::kFast) {
      status = CheckIndexRange("take", idx, indices.num_elements(), g.extent, g.axis);
      if (!status.ok()) return;
    }
    const size_t row_bytes = static_cast<size_t>(g.inner) * DTypeSize(data.dtype());
    const char* src = static_cast<const char*>(data.data());
    char* dst = static_cast<char*>(out.data());
    switch (row_bytes) {
      case 1: return TakeRows<1>(g, s.mode, src, idx, dst, row_bytes, *call.pool);
      case 2: return TakeRows<2>(g, s.mode, src, idx, dst, row_bytes, *call.pool);
      case 4: return TakeRows<4>(g, s.mode, src, idx, dst, row_bytes, *call.pool);
      case 8: return TakeRows<8>(g, s.mode, src, idx, dst, row_bytes, *call.pool);
      default: return TakeRows<0>(g, s.mode, src, idx, dst, row_bytes, *call.pool);
    }
  });
  return status;
}

// ---------------------------------------------------------------------------------------
// gather, scatter_elements

struct AxisState {
  int64_t axis;
};

// The walk shared by gather and scatter_elements: rows of the indices (all axes but
// the last) paired with the data offset of the same coordinates on the other axes
// (the axis contributes index * axis_stride instead).
struct ElementsWalk {
  Dims outer, index_strides, data_strides;
  int64_t len = 0;          // the last axis's extent in the indices
  int64_t len_step = 1;     // the data stride of that axis (0 when it is the indexed axis)
  int64_t axis_stride = 0;  // the data stride of the indexed axis
  int64_t extent = 0;       // the data's extent along it
  int axis = 0;
};

// Checks indices against data (same rank, no larger than the data off the axis) and,
// for scatter_elements, updates against indices; plans the walk.
absl::StatusOr<ElementsWalk> PlanElements(std::string_view op, int64_t axis_attr,
                                          const NDArrayObj& data, const NDArrayObj& indices,
                                          const NDArrayObj* updates) {
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType(op, "indices", indices));
  ElementsWalk w;
  DYNVM_ASSIGN_OR_RETURN(w.axis, internal::NormalizeAxis(op, axis_attr, data.ndim()));
  const Shape& ds = data.shape();
  const Shape& is = indices.shape();
  bool fits = is.size() == ds.size();
  for (size_t d = 0; fits && d < ds.size(); ++d) {
    fits = static_cast<int>(d) == w.axis || is[d] <= ds[d];
  }
  if (!fits) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: indices %s do not fit data %s (same rank, no larger off axis %d)", op,
                        ShapeToString(is), ShapeToString(ds), w.axis));
  }
  if (updates != nullptr && (updates->shape() != is || updates->dtype() != data.dtype())) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: updates %s %s must have the indices' shape %s and the data's dtype %s",
                        op, DTypeName(updates->dtype()), ShapeToString(updates->shape()),
                        ShapeToString(is), DTypeName(data.dtype())));
  }
  const size_t last = ds.size() - 1;
  const Dims data_strides = internal::ContiguousStrides(ds);
  const Dims index_strides = internal::ContiguousStrides(is);
  for (size_t d = 0; d < last; ++d) {
    w.outer.push_back(is[d]);
    w.index_strides.push_back(index_strides[d]);
    w.data_strides.push_back(static_cast<int>(d) == w.axis ? 0 : data_strides[d]);
  }
  w.len = is[last];
  w.len_step = static_cast<int>(last) == w.axis ? 0 : 1;
  w.axis_stride = data_strides[w.axis];
  w.extent = ds[w.axis];
  return w;
}

absl::StatusOr<std::shared_ptr<const void>> BindGather(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis"}));
  DYNVM_ASSIGN_OR_RETURN(int64_t axis, GetIntAttr(attrs, "axis", 0));
  return std::shared_ptr<const void>(std::make_shared<AxisState>(AxisState{axis}));
}

absl::StatusOr<Shape> GatherShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_RETURN_IF_ERROR(PlanElements("gather", static_cast<const AxisState*>(state)->axis,
                                     *inputs[0], *inputs[1], nullptr)
                            .status());
  return inputs[1]->shape();
}

template <typename T, typename Idx>
void GatherRows(const ElementsWalk& w, const T* data, const Idx* idx, T* out, ThreadPool& pool) {
  const int64_t rows = internal::ProductOf(w.outer);
  pool.ParallelFor(rows, internal::GrainForBytes(3 * w.len * sizeof(T)), [&](int64_t b, int64_t e) {
    internal::Odometer od(w.outer, w.index_strides, w.data_strides);
    od.Seek(b);
    for (int64_t r = b; r < e; ++r, od.Next()) {
      const Idx* irow = idx + od.offset0();
      T* orow = out + od.offset0();
      const T* drow = data + od.offset1();
      for (int64_t j = 0; j < w.len; ++j) {
        const int64_t a = irow[j] < 0 ? irow[j] + w.extent : irow[j];
        orow[j] = drow[j * w.len_step + a * w.axis_stride];
      }
    }
  });
}

absl::Status GatherKernel(const KernelCall& call) {
  const NDArrayObj& data = *call.args[0];
  const NDArrayObj& indices = *call.args[1];
  const NDArrayObj& out = *call.args[2];
  DYNVM_ASSIGN_OR_RETURN(
      ElementsWalk w, PlanElements("gather", static_cast<const AxisState*>(call.state)->axis, data,
                                   indices, nullptr));
  DYNVM_RETURN_IF_ERROR(CheckOutput("gather", out, data.dtype(), indices.shape()));
  absl::Status status;
  DispatchIndex(indices, [&](auto itag) {
    using Idx = decltype(itag);
    status =
        CheckIndexRange("gather", indices.data_as<Idx>(), indices.num_elements(), w.extent, w.axis);
    if (!status.ok() || out.num_elements() == 0) return;
    internal::DispatchElementSize(DTypeSize(data.dtype()), [&](auto tag) {
      using T = decltype(tag);
      GatherRows(w, data.data_as<T>(), indices.data_as<Idx>(), out.data_as<T>(), *call.pool);
    });
  });
  return status;
}

enum class Reduction { kUpdate, kAdd, kMul, kMin, kMax };

struct ScatterState {
  int64_t axis;
  Reduction reduction;
};

absl::StatusOr<std::shared_ptr<const void>> BindScatterElements(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "reduction"}));
  auto state = std::make_shared<ScatterState>();
  DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis", 0));
  DYNVM_ASSIGN_OR_RETURN(std::string reduction, GetStringAttr(attrs, "reduction", "update"));
  const std::pair<const char*, Reduction> kNames[] = {{"update", Reduction::kUpdate},
                                                      {"add", Reduction::kAdd},
                                                      {"mul", Reduction::kMul},
                                                      {"min", Reduction::kMin},
                                                      {"max", Reduction::kMax}};
  const auto* it = std::find_if(std::begin(kNames), std::end(kNames),
                                [&](const auto& n) { return reduction == n.first; });
  if (it == std::end(kNames)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'reduction' is '%s': expected 'update', 'add', 'mul', 'min' or 'max'",
        reduction));
  }
  state->reduction = it->second;
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<Shape> ScatterElementsShape(const void* state,
                                           absl::Span<NDArrayObj* const> inputs) {
  DYNVM_RETURN_IF_ERROR(PlanElements("scatter_elements",
                                     static_cast<const ScatterState*>(state)->axis, *inputs[0],
                                     *inputs[1], inputs[2])
                            .status());
  return inputs[0]->shape();
}

// The type integer arithmetic is done in so that it wraps (two's complement) rather
// than overflows.
template <typename T>
struct WrapType {
  using type = T;
};
template <std::integral T>
struct WrapType<T> {
  using type = std::make_unsigned_t<T>;
};

// Applies the reduction. Only kUpdate is used for element-size carriers (uint8_t...).
template <typename T>
T Combine(Reduction r, T a, T b) {
  using U = typename WrapType<T>::type;
  switch (r) {
    case Reduction::kUpdate: return b;
    case Reduction::kAdd: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case Reduction::kMul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case Reduction::kMin: return std::min(a, b);
    case Reduction::kMax: return std::max(a, b);
  }
  return b;
}

// out[..., idx, ...] = Combine(out[...], update) in row-major order of the updates, so
// duplicate indices resolve deterministically (the last update wins). Rows of the
// indices write disjoint outputs only when the indexed axis is the last, so only then
// are they spread over the pool.
template <typename T, typename Idx>
void ScatterRows(const ElementsWalk& w, Reduction r, const Idx* idx, const T* upd, T* out,
                 ThreadPool& pool) {
  const int64_t rows = internal::ProductOf(w.outer);
  auto run = [&](int64_t b, int64_t e) {
    internal::Odometer od(w.outer, w.index_strides, w.data_strides);
    od.Seek(b);
    for (int64_t row = b; row < e; ++row, od.Next()) {
      const Idx* irow = idx + od.offset0();
      const T* urow = upd + od.offset0();
      T* orow = out + od.offset1();
      for (int64_t j = 0; j < w.len; ++j) {
        const int64_t a = irow[j] < 0 ? irow[j] + w.extent : irow[j];
        T& o = orow[j * w.len_step + a * w.axis_stride];
        o = Combine(r, o, urow[j]);
      }
    }
  };
  if (w.len_step == 0) {
    pool.ParallelFor(rows, internal::GrainForBytes(3 * w.len * sizeof(T)), run);
  } else {
    run(0, rows);
  }
}

absl::Status ScatterElementsKernel(const KernelCall& call) {
  const auto& s = *static_cast<const ScatterState*>(call.state);
  const NDArrayObj& data = *call.args[0];
  const NDArrayObj& indices = *call.args[1];
  const NDArrayObj& updates = *call.args[2];
  const NDArrayObj& out = *call.args[3];
  DYNVM_ASSIGN_OR_RETURN(ElementsWalk w,
                         PlanElements("scatter_elements", s.axis, data, indices, &updates));
  DYNVM_RETURN_IF_ERROR(CheckOutput("scatter_elements", out, data.dtype(), data.shape()));
  const DType dt = data.dtype();
  if (s.reduction != Reduction::kUpdate && dt != DType::kF32 && dt != DType::kF64 &&
      dt != DType::kI32 && dt != DType::kI64) {
    return internal::UnsupportedDType("scatter_elements", "data with a reduction", dt,
                                      "f32, f64, i32 or i64");
  }
  absl::Status status;
  DispatchIndex(indices, [&](auto itag) {
    using Idx = decltype(itag);
    const Idx* idx = indices.data_as<Idx>();
    status = CheckIndexRange("scatter_elements", idx, indices.num_elements(), w.extent, w.axis);
    if (!status.ok()) return;
    internal::ParallelCopy(out.data(), data.data(), data.nbytes(), *call.pool);
    if (indices.num_elements() == 0) return;
    auto scatter = [&](auto tag) {
      using T = decltype(tag);
      ScatterRows(w, s.reduction, idx, updates.data_as<T>(), out.data_as<T>(), *call.pool);
    };
    switch (s.reduction == Reduction::kUpdate ? DType::kU8 : dt) {
      case DType::kF32: return scatter(float{});
      case DType::kF64: return scatter(double{});
      case DType::kI32: return scatter(int32_t{});
      case DType::kI64: return scatter(int64_t{});
      default: return internal::DispatchElementSize(DTypeSize(dt), scatter);
    }
  });
  return status;
}

// ---------------------------------------------------------------------------------------
// one_hot

struct OneHotState {
  int64_t depth;
  int64_t axis;
  DType dtype;
};

absl::StatusOr<std::shared_ptr<const void>> BindOneHot(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"depth", "axis", "dtype"}));
  auto state = std::make_shared<OneHotState>();
  DYNVM_ASSIGN_OR_RETURN(state->depth, GetIntAttr(attrs, "depth"));
  if (state->depth < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'depth' is %d: expected >= 0", state->depth));
  }
  DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis", -1));
  DYNVM_ASSIGN_OR_RETURN(state->dtype, internal::GetDTypeAttr(attrs, "dtype", DType::kF32));
  return std::shared_ptr<const void>(std::move(state));
}

// The output shape; `axis` receives the normalised axis.
absl::StatusOr<Shape> PlanOneHot(const OneHotState& s, absl::Span<NDArrayObj* const> inputs,
                                 int* axis) {
  const NDArrayObj& indices = *inputs[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType("one_hot", "indices", indices));
  for (int i = 1; i <= 2; ++i) {
    const char* what = i == 1 ? "on_value" : "off_value";
    DYNVM_RETURN_IF_ERROR(internal::CheckScalar("one_hot", what, *inputs[i]));
    DYNVM_RETURN_IF_ERROR(internal::CheckDType("one_hot", what, *inputs[i], s.dtype));
  }
  DYNVM_ASSIGN_OR_RETURN(*axis, internal::NormalizeAxis("one_hot", s.axis, indices.ndim() + 1));
  Shape out = indices.shape();
  out.insert(out.begin() + *axis, s.depth);
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape("one_hot", out));
  return out;
}

absl::StatusOr<Shape> OneHotShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  int axis;
  return PlanOneHot(*static_cast<const OneHotState*>(state), inputs, &axis);
}

// Indices outside [0, depth) (negative ones included, as in Relay) give a row of
// off_value.
template <typename T, typename Idx>
void SetOnes(const Idx* idx, int64_t outer, int64_t depth, int64_t inner, T on, T* out,
             ThreadPool& pool) {
  pool.ParallelFor(outer, internal::GrainForBytes(inner * 16), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const Idx k = idx[o * inner + i];
        if (k >= 0 && k < depth) out[(o * depth + k) * inner + i] = on;
      }
    }
  });
}

absl::Status OneHotKernel(const KernelCall& call) {
  const auto& s = *static_cast<const OneHotState*>(call.state);
  int axis;
  DYNVM_ASSIGN_OR_RETURN(Shape shape, PlanOneHot(s, call.inputs(), &axis));
  const NDArrayObj& indices = *call.args[0];
  const NDArrayObj& out = *call.args[3];
  DYNVM_RETURN_IF_ERROR(CheckOutput("one_hot", out, s.dtype, shape));
  if (out.num_elements() == 0) return absl::OkStatus();
  const size_t elem = DTypeSize(s.dtype);
  internal::FillElements(out.data(), out.num_elements(), call.args[2]->data(), elem, *call.pool);
  const int64_t outer = internal::ProductOf(absl::MakeConstSpan(shape).first(axis));
  const int64_t inner = outer == 0 ? 0 : indices.num_elements() / outer;
  DispatchIndex(indices, [&](auto itag) {
    using Idx = decltype(itag);
    internal::DispatchElementSize(elem, [&](auto tag) {
      using T = decltype(tag);
      SetOnes(indices.data_as<Idx>(), outer, s.depth, inner, *call.args[1]->data_as<T>(),
              out.data_as<T>(), *call.pool);
    });
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterIndexKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {"take", 2, 1, TakeKernel, BindTake, SingleShapeFn<TakeShape>},
      {"gather", 2, 1, GatherKernel, BindGather, SingleShapeFn<GatherShape>},
      {"scatter_elements", 3, 1, ScatterElementsKernel, BindScatterElements,
       SingleShapeFn<ScatterElementsShape>},
      {"one_hot", 3, 1, OneHotKernel, BindOneHot, SingleShapeFn<OneHotShape>},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
