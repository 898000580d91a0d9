// Sorting kernels: topk (and dyn.topk, k an input read at run time), argsort and unique, on f32, f64, i32 and i64 data with i32 or
// i64 index outputs.
//
// One order serves all three: ascending puts NaN after every number (as numpy does),
// descending before; equal values (NaNs equal one another) keep their index order,
// so results are stable and deterministic. Rows along the sorted axis are copied into
// a scratch buffer of (value, index) pairs — one per task, not per row — sorted there
// (partially, for topk) and written out; rows are spread over the pool.
#include "kernels/data_movement/sort.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"

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
};

absl::StatusOr<std::shared_ptr<const void>> BindUnique(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"sorted"}));
  DYNVM_ASSIGN_OR_RETURN(int64_t sorted, GetIntAttr(attrs, "sorted", 1));
  return std::shared_ptr<const void>(std::make_shared<UniqueState>(UniqueState{sorted != 0}));
}

// The distinct values of `data`, each as the index of its first occurrence and its
// count, in ascending order or (unless `sorted`) in order of first occurrence; and for
// each element the position of its value among them.
struct UniqueGroups {
  std::vector<int64_t> first, count, inverse;
};

template <typename T>
UniqueGroups GroupUnique(const T* data, int64_t n, bool sorted) {
  std::vector<Keyed<T>> keyed(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keyed[i] = {data[i], i};
  std::sort(keyed.begin(), keyed.end(),
            [](const Keyed<T>& a, const Keyed<T>& b) { return Before(a, b, true); });
  UniqueGroups g;
  g.inverse.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    // Sorted, so a value differs from its predecessor iff the predecessor is less.
    if (i == 0 || Less(keyed[i - 1].value, keyed[i].value)) {
      g.first.push_back(keyed[i].index);  // the lowest index of its group: ties sort by index
      g.count.push_back(0);
    }
    ++g.count.back();
    g.inverse[keyed[i].index] = static_cast<int64_t>(g.first.size()) - 1;
  }
  if (!sorted) {  // renumber the groups by first occurrence
    const size_t u = g.first.size();
    std::vector<int64_t> order(u), rank(u);
    for (size_t j = 0; j < u; ++j) order[j] = static_cast<int64_t>(j);
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return g.first[a] < g.first[b]; });
    UniqueGroups r{std::vector<int64_t>(u), std::vector<int64_t>(u), std::move(g.inverse)};
    for (size_t j = 0; j < u; ++j) {
      rank[order[j]] = static_cast<int64_t>(j);
      r.first[j] = g.first[order[j]];
      r.count[j] = g.count[order[j]];
    }
    for (int64_t& v : r.inverse) v = rank[v];
    return r;
  }
  return g;
}

absl::StatusOr<UniqueGroups> PlanUnique(const UniqueState& s, const NDArrayObj& data,
                                        int num_outputs) {
  if (data.ndim() != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unique: data must be 1-D, got shape %s", ShapeToString(data.shape())));
  }
  if (num_outputs < 1 || num_outputs > 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unique: expected 1 to 4 outputs (values, indices, inverse, counts), got %d", num_outputs));
  }
  UniqueGroups g;
  DYNVM_RETURN_IF_ERROR(DispatchSortable("unique", data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    g = GroupUnique(data.data_as<T>(), data.num_elements(), s.sorted);
  }));
  return g;
}

// Output i's shape: [unique count] but for the inverse indices (output 2), [n].
Shape UniqueOutputShape(const UniqueGroups& g, int i) {
  return Shape{static_cast<int64_t>(i == 2 ? g.inverse.size() : g.first.size())};
}

absl::Status UniqueShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(UniqueGroups g, PlanUnique(*static_cast<const UniqueState*>(call.state),
                                                    *call.inputs[0], call.num_outputs));
  for (int i = 0; i < call.num_outputs; ++i) call.output_shapes[i] = UniqueOutputShape(g, i);
  return absl::OkStatus();
}

absl::Status UniqueKernel(const KernelCall& call) {
  const NDArrayObj& data = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(UniqueGroups g, PlanUnique(*static_cast<const UniqueState*>(call.state),
                                                    data, call.num_outputs));
  const NDArrayObj& values = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(CheckOutput("unique", values, data.dtype(), UniqueOutputShape(g, 0)));
  for (int i = 1; i < call.num_outputs; ++i) {
    const NDArrayObj& out = *call.outputs()[i];
    DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType("unique", "index output", out));
    DYNVM_RETURN_IF_ERROR(internal::CheckOutputShape("unique", out, UniqueOutputShape(g, i), i));
    DYNVM_RETURN_IF_ERROR(
        internal::CheckIndexCapacity("unique", "index output", out.dtype(), data.num_elements()));
  }
  const size_t elem = DTypeSize(data.dtype());
  for (size_t j = 0; j < g.first.size(); ++j) {
    std::memcpy(static_cast<char*>(values.data()) + j * elem,
                static_cast<const char*>(data.data()) + g.first[j] * elem, elem);
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
      {"unique", 1, kVariadic, UniqueKernel, BindUnique, UniqueShapeFn},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
