// Sorting kernels: topk (and dyn.topk, k an input read at run time), argsort and unique, on f32, f64, i32 and i64 data with i32 or
// i64 index outputs; unique takes string tensors too (ordered by their bytes).
//
// One order serves all three: ascending puts NaN after every number (as numpy does),
// descending before; equal values (NaNs equal one another) keep their index order,
// so results are stable and deterministic. Rows along the sorted axis are copied into
// a scratch buffer of (value, index) pairs — one per task, not per row — sorted there
// (partially, for topk) and written out; rows are spread over the pool.
#include "kernels/data_movement/sort.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstring>
#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"
#include "objects/string_tensor.h"

namespace dynvm::kernels {
namespace {

using internal::CheckOutput;

// Calls `fn(T{})` with T the C++ type of a sortable dtype, or returns InvalidArgument.
template <typename Fn>
absl::Status DispatchSortable(std::string_view op, DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32: fn(float{}); return absl::OkStatus();
    case DType::kF64: fn(double{}); return absl::OkStatus();
    case DType::kI32: fn(int32_t{}); return absl::OkStatus();
    case DType::kI64: fn(int64_t{}); return absl::OkStatus();
    default: return internal::UnsupportedDType(op, "data", dtype, "f32, f64, i32 or i64");
  }
}

// `a` strictly before `b` in ascending order, NaN after every number.
template <typename T>
bool Less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

template <typename T>
struct Keyed {
  T value;
  int64_t index;
};

// The strict total order of the sort: by value in the requested direction, then by
// index.
template <typename T>
bool Before(const Keyed<T>& a, const Keyed<T>& b, bool ascending) {
  if (ascending ? Less(a.value, b.value) : Less(b.value, a.value)) return true;
  if (ascending ? Less(b.value, a.value) : Less(a.value, b.value)) return false;
  return a.index < b.index;
}

void StoreIndex(void* data, bool is_i64, int64_t i, int64_t v) {
  if (is_i64) {
    static_cast<int64_t*>(data)[i] = v;
  } else {
    static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v);
  }
}

// ---------------------------------------------------------------------------------------
// topk, argsort

enum class RetType { kBoth, kValues, kIndices };

struct SortState {
  int64_t axis;
  int64_t k;  // topk: < 1 means the whole axis; argsort: 0
  bool ascending;
  DType index_dtype;
  RetType ret = RetType::kIndices;
  bool topk;
  bool k_input = false;  // dyn.topk: k is the second input
};

absl::StatusOr<std::shared_ptr<const void>> BindSort(const Attrs& attrs, bool topk) {
  DYNVM_RETURN_IF_ERROR(
      topk ? CheckKnownAttrs(attrs, {"k", "axis", "ret_type", "is_ascend", "dtype"})
           : CheckKnownAttrs(attrs, {"axis", "is_ascend", "dtype"}));
  auto state = std::make_shared<SortState>();
  state->topk = topk;
  DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis", -1));
  DYNVM_ASSIGN_OR_RETURN(state->k, GetIntAttr(attrs, "k", topk ? 1 : 0));
  DYNVM_ASSIGN_OR_RETURN(int64_t ascend, GetIntAttr(attrs, "is_ascend", topk ? 0 : 1));
  state->ascending = ascend != 0;
  DYNVM_ASSIGN_OR_RETURN(state->index_dtype, internal::GetDTypeAttr(attrs, "dtype", DType::kI32));
  if (state->index_dtype != DType::kI32 && state->index_dtype != DType::kI64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'dtype' is %s: expected i32 or i64", DTypeName(state->index_dtype)));
  }
  DYNVM_ASSIGN_OR_RETURN(std::string ret, GetStringAttr(attrs, "ret_type", "both"));
  if (!topk) {
    state->ret = RetType::kIndices;
  } else if (ret == "both") {
    state->ret = RetType::kBoth;
  } else if (ret == "values") {
    state->ret = RetType::kValues;
  } else if (ret == "indices") {
    state->ret = RetType::kIndices;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'ret_type' is '%s': expected 'both', 'values' or 'indices'", ret));
  }
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<std::shared_ptr<const void>> BindTopK(const Attrs& attrs) {
  return BindSort(attrs, /*topk=*/true);
}
absl::StatusOr<std::shared_ptr<const void>> BindArgsort(const Attrs& attrs) {
  return BindSort(attrs, /*topk=*/false);
}
absl::StatusOr<std::shared_ptr<const void>> BindDynTopK(const Attrs& attrs) {
  if (attrs.contains("k")) {
    return absl::InvalidArgumentError("dyn.topk takes k as its second input, not an attribute");
  }
  DYNVM_ASSIGN_OR_RETURN(std::shared_ptr<const void> bound, BindSort(attrs, /*topk=*/true));
  auto state = std::make_shared<SortState>(*static_cast<const SortState*>(bound.get()));
  state->k_input = true;
  return std::shared_ptr<const void>(std::move(state));
}

// The call's state: the bound one, or for dyn.topk, k read from the second input (one
// i32 or i64 element, at least 1).
absl::StatusOr<SortState> CallSortState(const void* bound, absl::Span<NDArrayObj* const> inputs) {
  SortState s = *static_cast<const SortState*>(bound);
  if (!s.k_input) return s;
  DYNVM_ASSIGN_OR_RETURN(const internal::Dims k, internal::ReadIntVector("dyn.topk", "k", *inputs[1]));
  if (k.size() != 1 || k[0] < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dyn.topk: k must be one value of at least 1, got [%s]", absl::StrJoin(k, ", ")));
  }
  s.k = k[0];
  return s;
}

// A sort's geometry: data as [outer, extent, inner], sorted along the middle axis,
// `k` results kept per row.
struct SortPlan {
  Shape out;
  int axis;
  int64_t outer = 1, extent = 0, inner = 1, k = 0;
};

absl::StatusOr<SortPlan> PlanSort(const SortState& s, const NDArrayObj& data, int num_outputs) {
  const char* op = s.topk ? "topk" : "argsort";
  SortPlan p;
  DYNVM_ASSIGN_OR_RETURN(p.axis, internal::NormalizeAxis(op, s.axis, data.ndim()));
  p.extent = data.shape()[p.axis];
  const absl::Span<const int64_t> dims = data.shape();
  p.outer = internal::ProductOf(dims.first(p.axis));
  p.inner = internal::ProductOf(dims.subspan(p.axis + 1));
  p.k = s.k < 1 ? p.extent : s.k;
  if (p.k > p.extent) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: k %d exceeds extent %d of axis %d", op, p.k, p.extent, p.axis));
  }
  DYNVM_RETURN_IF_ERROR(
      internal::CheckArity(op, "outputs", num_outputs, s.ret == RetType::kBoth ? 2 : 1));
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexCapacity(op, "indices", s.index_dtype, p.extent));
  p.out = data.shape();
  p.out[p.axis] = p.k;
  return p;
}

absl::Status SortShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const SortState s, CallSortState(call.state, call.input_span()));
  DYNVM_ASSIGN_OR_RETURN(SortPlan p, PlanSort(s, *call.inputs[0], call.num_outputs));
  for (int i = 0; i < call.num_outputs; ++i) call.output_shapes[i] = p.out;
  return absl::OkStatus();
}

// Sorts each row and writes its first k values (if `values`) and indices (if
// `indices`, i64 or i32 per `indices_i64`).
template <typename T>
void SortRows(const SortPlan& p, bool ascending, const T* data, T* values, void* indices,
              bool indices_i64, ThreadPool& pool) {
  const int64_t rows = p.outer * p.inner;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.extent));
  pool.ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    std::vector<Keyed<T>> row(static_cast<size_t>(p.extent));
    auto before = [&](const Keyed<T>& a, const Keyed<T>& b) { return Before(a, b, ascending); };
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / p.inner, i = r % p.inner;
      const T* src = data + o * p.extent * p.inner + i;
      for (int64_t j = 0; j < p.extent; ++j) row[j] = {src[j * p.inner], j};
      if (p.k == p.extent) {
        std::sort(row.begin(), row.end(), before);
      } else {
        std::partial_sort(row.begin(), row.begin() + p.k, row.end(), before);
      }
      const int64_t base = o * p.k * p.inner + i;
      for (int64_t j = 0; j < p.k; ++j) {
        if (values != nullptr) values[base + j * p.inner] = row[j].value;
        if (indices != nullptr) StoreIndex(indices, indices_i64, base + j * p.inner, row[j].index);
      }
    }
  });
}

absl::Status SortKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const SortState s, CallSortState(call.state, call.inputs()));
  const char* op = s.topk ? "topk" : "argsort";
  const NDArrayObj& data = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(SortPlan p, PlanSort(s, data, call.num_outputs));
  const NDArrayObj* values = s.ret == RetType::kIndices ? nullptr : call.outputs()[0];
  const NDArrayObj* indices = s.ret == RetType::kValues ? nullptr : call.outputs().back();
  if (values != nullptr) DYNVM_RETURN_IF_ERROR(CheckOutput(op, *values, data.dtype(), p.out, 0));
  if (indices != nullptr) {
    DYNVM_RETURN_IF_ERROR(CheckOutput(op, *indices, s.index_dtype, p.out, call.num_outputs - 1));
  }
  return DispatchSortable(op, data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if (p.k == 0 || p.outer * p.inner == 0) return;
    SortRows<T>(p, s.ascending, data.data_as<T>(), values ? values->data_as<T>() : nullptr,
                indices ? indices->data() : nullptr, s.index_dtype == DType::kI64, *call.pool);
  });
}

// ---------------------------------------------------------------------------------------
// unique

struct UniqueState {
  bool sorted;
  std::optional<int64_t> axis;  // absent: the elements of the flattened data
};

absl::StatusOr<std::shared_ptr<const void>> BindUnique(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"sorted", "axis"}));
  DYNVM_ASSIGN_OR_RETURN(int64_t sorted, GetIntAttr(attrs, "sorted", 1));
  auto state = std::make_shared<UniqueState>(UniqueState{sorted != 0, std::nullopt});
  if (attrs.contains("axis")) {
    DYNVM_ASSIGN_OR_RETURN(state->axis, GetIntAttr(attrs, "axis"));
  }
  return std::shared_ptr<const void>(std::move(state));
}

// The distinct slices of `data` along an axis (an element of 1-D data is a slice of
// one), each as the index of its first occurrence and its count, in ascending order or
// (unless `sorted`) in order of first occurrence; and for each slice the position of
// its value among them. Slices compare as numpy's unique(axis) compares them: as the
// sequences of their elements, outer axes first.
struct UniqueGroups {
  std::vector<int64_t> first, count, inverse;
};

// Data viewed as [outer, n, inner], slices along the middle axis.
template <typename T>
UniqueGroups GroupUnique(const T* data, int64_t outer, int64_t n, int64_t inner, bool sorted) {
  // -1, 0 or 1 as slice a sorts before, with or after slice b.
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o) {
      const T* x = data + (o * n + a) * inner;
      const T* y = data + (o * n + b) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (Less(x[i], y[i])) return -1;
        if (Less(y[i], x[i])) return 1;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const int c = compare(a, b);
    return c != 0 ? c < 0 : a < b;  // ties by index: a group's first is its lowest
  });
  UniqueGroups g;
  g.inverse.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      g.first.push_back(order[i]);
      g.count.push_back(0);
    }
    ++g.count.back();
    g.inverse[order[i]] = static_cast<int64_t>(g.first.size()) - 1;
  }
  if (!sorted) {  // renumber the groups by first occurrence
    const size_t u = g.first.size();
    std::vector<int64_t> by_first(u), rank(u);
    for (size_t j = 0; j < u; ++j) by_first[j] = static_cast<int64_t>(j);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
    UniqueGroups r{std::vector<int64_t>(u), std::vector<int64_t>(u), std::move(g.inverse)};
    for (size_t j = 0; j < u; ++j) {
      rank[by_first[j]] = static_cast<int64_t>(j);
      r.first[j] = g.first[by_first[j]];
      r.count[j] = g.count[by_first[j]];
    }
    for (int64_t& v : r.inverse) v = rank[v];
    return r;
  }
  return g;
}

// Where the slices lie: data as [outer, n, inner].
struct UniqueView {
  int axis;
  int64_t outer, n, inner;
};

absl::StatusOr<UniqueView> ViewUnique(const UniqueState& s, const NDArrayObj& data) {
  if (!s.axis) return UniqueView{0, 1, data.num_elements(), 1};
  const int rank = data.ndim();
  if (*s.axis < -rank || *s.axis >= rank) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unique: axis %d out of range for data of shape %s", *s.axis, ShapeToString(data.shape())));
  }
  const int axis = static_cast<int>(*s.axis < 0 ? *s.axis + rank : *s.axis);
  UniqueView v{axis, 1, data.shape()[axis], 1};
  for (int i = 0; i < axis; ++i) v.outer *= data.shape()[i];
  for (int i = axis + 1; i < rank; ++i) v.inner *= data.shape()[i];
  return v;
}

absl::StatusOr<UniqueGroups> PlanUnique(const UniqueState& s, const NDArrayObj& data, int num_outputs) {
  DYNVM_ASSIGN_OR_RETURN(const UniqueView v, ViewUnique(s, data));
  if (num_outputs < 1 || num_outputs > 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unique: expected 1 to 4 outputs (values, indices, inverse, counts), got %d", num_outputs));
  }
  UniqueGroups g;
  if (v.outer * v.inner == 0) {  // empty slices are all equal
    g.inverse.assign(v.n, 0);
    if (v.n > 0) g = {{0}, {v.n}, std::move(g.inverse)};
    return g;
  }
  if (data.dtype() == DType::kString) {  // compared as views of their bytes
    std::vector<std::string_view> text(static_cast<size_t>(data.num_elements()));
    for (int64_t i = 0; i < data.num_elements(); ++i) {
      DYNVM_ASSIGN_OR_RETURN(text[i], StringElement(data, i));
    }
    return GroupUnique(text.data(), v.outer, v.n, v.inner, s.sorted);
  }
  const absl::Status sortable = DispatchSortable("unique", data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    g = GroupUnique(data.data_as<T>(), v.outer, v.n, v.inner, s.sorted);
  });
  if (!sortable.ok()) {
    return internal::UnsupportedDType("unique", "data", data.dtype(), "f32, f64, i32, i64 or string");
  }
  return g;
}

// Output i's shape: the values are data with the axis's extent the unique count (or
// [unique count] without an axis); the inverse indices (output 2) [n], one per slice
// (element without an axis); the others
// [unique count].
Shape UniqueOutputShape(const UniqueState& s, const NDArrayObj& data, const UniqueGroups& g, int i) {
  const int64_t u = static_cast<int64_t>(g.first.size());
  if (i == 0 && s.axis) {
    Shape shape(data.shape().begin(), data.shape().end());
    shape[*s.axis < 0 ? *s.axis + data.ndim() : *s.axis] = u;
    return shape;
  }
  return Shape{i == 2 ? static_cast<int64_t>(g.inverse.size()) : u};
}

absl::Status UniqueShapeFn(const ShapeCall& call) {
  const auto& s = *static_cast<const UniqueState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(UniqueGroups g, PlanUnique(s, *call.inputs[0], call.num_outputs));
  for (int i = 0; i < call.num_outputs; ++i) call.output_shapes[i] = UniqueOutputShape(s, *call.inputs[0], g, i);
  return absl::OkStatus();
}

absl::Status UniqueKernel(const KernelCall& call) {
  const auto& s = *static_cast<const UniqueState*>(call.state);
  const NDArrayObj& data = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(UniqueGroups g, PlanUnique(s, data, call.num_outputs));
  DYNVM_ASSIGN_OR_RETURN(const UniqueView v, ViewUnique(s, data));
  const NDArrayObj& values = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(CheckOutput("unique", values, data.dtype(), UniqueOutputShape(s, data, g, 0)));
  for (int i = 1; i < call.num_outputs; ++i) {
    const NDArrayObj& out = *call.outputs()[i];
    DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType("unique", "index output", out));
    DYNVM_RETURN_IF_ERROR(internal::CheckOutputShape("unique", out, UniqueOutputShape(s, data, g, i), i));
    DYNVM_RETURN_IF_ERROR(internal::CheckIndexCapacity("unique", "index output", out.dtype(), v.n));
  }
  // Each distinct slice copied from its first occurrence: [outer, u, inner]. Strings are
  // set one by one, so that the output's storage keeps its own copies.
  const int64_t u = static_cast<int64_t>(g.first.size());
  if (data.dtype() == DType::kString) {
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < u; ++j) {
        for (int64_t i = 0; i < v.inner; ++i) {
          DYNVM_ASSIGN_OR_RETURN(const std::string_view text,
                                 StringElement(data, (o * v.n + g.first[j]) * v.inner + i));
          SetStringElement(values, (o * u + j) * v.inner + i, text);
        }
      }
    }
  } else {
    const size_t row = DTypeSize(data.dtype()) * static_cast<size_t>(v.inner);
    for (int64_t o = 0; o < v.outer; ++o) {
      for (int64_t j = 0; j < u; ++j) {
        std::memcpy(static_cast<char*>(values.data()) + (o * u + j) * row,
                    static_cast<const char*>(data.data()) + (o * v.n + g.first[j]) * row, row);
      }
    }
  }
  const std::vector<int64_t>* sources[] = {&g.first, &g.inverse, &g.count};
  for (int i = 1; i < call.num_outputs; ++i) {
    const NDArrayObj& out = *call.outputs()[i];
    const std::vector<int64_t>& src = *sources[i - 1];
    for (size_t j = 0; j < src.size(); ++j) {
      StoreIndex(out.data(), out.dtype() == DType::kI64, static_cast<int64_t>(j), src[j]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterSortKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {"topk", 1, kVariadic, SortKernel, BindTopK, SortShapeFn},
      {"dyn.topk", 2, kVariadic, SortKernel, BindDynTopK, SortShapeFn},
      {"argsort", 1, 1, SortKernel, BindArgsort, SortShapeFn},
      {.name = "unique",
       .num_inputs = 1,
       .num_outputs = kVariadic,
       .fn = UniqueKernel,
       .bind = BindUnique,
       .shape_fn = UniqueShapeFn,
       .takes_strings = true},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
