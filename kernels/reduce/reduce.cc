// Reductions over any set of axes, and cumsum.
//
//   sum, prod, max, min     f32, f64, i32, i64 -> the input's dtype
//   mean, l2_norm           f32, f64 -> the input's dtype (l2_norm = sqrt(sum(x^2)))
//   argmax, argmin          f32, f64, i32, i64 -> i64: the position of the extreme value,
//                           flat (row-major) over the reduced axes; the first on ties,
//                           the last with select_last_index=1
//   cumsum                  f32, f64, i32, i64: running sums along one axis
//
// Reduction attributes (Relay's): `axis`, an int or a list of ints counted from the end
// when negative, absent for all axes (an empty list reduces none); `keepdims` (0/1)
// keeps reduced axes as extent 1; `exclude` (0/1) reduces the axes NOT listed. cumsum
// takes `axis` (absent: over the flattened input, giving a 1-D output; dyn.cumsum takes
// it as a second input instead, one i32/i64 element read at run time), `exclusive`
// (0/1: each output excludes its own element) and `reverse` (0/1: sums from the end).
//
// Semantics: float sum, mean, prod, l2_norm and cumsum accumulate in double, so an f32 result
// is within one f32 rounding of the exact value unless the terms cancel; integer sums
// and products wrap. max, min, argmax and argmin treat NaN as the extreme (NaN
// propagates; argmax returns the first NaN). Reducing zero elements gives sum 0, prod 1,
// l2_norm 0 and mean NaN; max, min, argmax and argmin have no identity and fail.
//
// Fused prologue and epilogue (f32 sum, mean, max, min, prod and l2_norm; not argmax,
// argmin or cumsum): the optional string attribute `prologue` is a fused_elementwise
// program (kernels/elementwise/fused_elementwise.h); the kernel then takes the program's inputs
// (exactly num_inputs() of them, f32, broadcasting together) and reduces
// program(inputs), of their broadcast shape, as it would reduce a materialised input.
// `epilogue` is a program reading only i0 (and literals), applied to each reduced value
// before it is written (variance + eps -> rsqrt for RMS norm). The prologue's result is
// evaluated run by run into a per-thread buffer (whole reduced rows when the innermost
// axis is reduced, blocks of at most kColumnBlock columns when it is kept) and folded
// from there by the same functions as a materialised input, so it never reaches memory
// and the results are bit for bit those of fused_elementwise, the plain reduction, then
// fused_elementwise. The epilogue runs fused_elementwise's evaluator over the output, in
// place. The kernels register as variadic; without a prologue the shape function and
// the kernel require one input, with Bind's message.
//
// Execution: the axes are merged into alternating runs of reduced and kept axes. When
// the innermost is reduced, each output reduces contiguous rows (eight accumulator lanes
// in the loop, so it vectorises); when it is kept, each output row accumulates whole
// input rows into a block of column accumulators. Outputs are split over the pool, and
// a few long rows are split into parts combined in a fixed order (results do not depend
// on the thread count).
#include "kernels/reduce/reduce.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"
#include "kernels/elementwise/dtypes.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/elementwise/ukernels.h"
#include "kernels/microkernels.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

using elementwise::DTypeSet;
using elementwise::ElementwiseUkernels;
using internal::Odometer;

constexpr DTypeSet kFloat = elementwise::kF32 | elementwise::kF64;
constexpr DTypeSet kNumeric = kFloat | elementwise::kI32 | elementwise::kI64;

// ---------------------------------------------------------------------------------------
// Attributes.

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL2Norm, kArgMax, kArgMin };

struct ReduceSpec {
  const char* name;
  ReduceKind kind;
  DTypeSet dtypes;
  const char* dyn_name;  // the form whose axes are a second input, or null
};

constexpr ReduceSpec kReduceSpecs[] = {
    {"sum", ReduceKind::kSum, kNumeric, "dyn.sum"},
    {"mean", ReduceKind::kMean, kFloat, "dyn.mean"},
    {"max", ReduceKind::kMax, kNumeric, "dyn.max"},
    {"min", ReduceKind::kMin, kNumeric, "dyn.min"},
    {"prod", ReduceKind::kProd, kNumeric, "dyn.prod"},
    {"l2_norm", ReduceKind::kL2Norm, kFloat, "dyn.l2_norm"},
    {"argmax", ReduceKind::kArgMax, kNumeric, nullptr},
    {"argmin", ReduceKind::kArgMin, kNumeric, nullptr},
};

bool IsArg(ReduceKind kind) { return kind == ReduceKind::kArgMax || kind == ReduceKind::kArgMin; }
bool HasIdentity(ReduceKind kind) {
  return kind != ReduceKind::kMax && kind != ReduceKind::kMin && !IsArg(kind);
}

struct ReduceState {
  const ReduceSpec* spec;
  std::optional<std::vector<int64_t>> axes;  // absent: all
  bool keepdims;
  bool exclude;
  bool select_last;
  std::optional<FusedProgram> prologue;  // f32 value reductions only
  std::optional<FusedProgram> epilogue;  // reads i0 only
  // The dyn. forms: the axes are the second input, read per call; an empty list reduces
  // every axis, or none with noop_with_empty_axes (ONNX's ReduceX from opset 13/18).
  bool axes_input = false;
  bool noop_with_empty_axes = false;
};

// The optional int or int-list attribute `axis`.
absl::StatusOr<std::optional<std::vector<int64_t>>> GetAxisAttr(const Attrs& attrs) {
  auto it = attrs.find("axis");
  if (it == attrs.end()) return std::nullopt;
  if (const auto* one = std::get_if<int64_t>(&it->second)) return std::vector<int64_t>{*one};
  if (const auto* list = std::get_if<std::vector<int64_t>>(&it->second)) return *list;
  return absl::InvalidArgumentError("attribute 'axis' must be an int or an int list");
}

absl::StatusOr<ReduceState> ParseReduceAttrs(const ReduceSpec& spec, const Attrs& attrs,
                                             const BindContext& context) {
  if (IsArg(spec.kind)) {
    DYNVM_RETURN_IF_ERROR(
        CheckKnownAttrs(attrs, {"axis", "keepdims", "exclude", "select_last_index"}));
  } else {
    DYNVM_RETURN_IF_ERROR(
        CheckKnownAttrs(attrs, {"axis", "keepdims", "exclude", "prologue", "epilogue"}));
  }
  ReduceState state{&spec, std::nullopt, false, false, false, std::nullopt, std::nullopt};
  if (attrs.contains("prologue")) {
    DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, "prologue"));
    DYNVM_ASSIGN_OR_RETURN(state.prologue, FusedProgram::Parse(text, "prologue", context));
  }
  if (attrs.contains("epilogue")) {
    DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, "epilogue"));
    DYNVM_ASSIGN_OR_RETURN(state.epilogue, FusedProgram::Parse(text, "epilogue", context));
    if (state.epilogue->num_inputs() != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "attribute 'epilogue' must read exactly one input, i0 (the reduced value), "
          "reads %d",
          state.epilogue->num_inputs()));
    }
  }
  DYNVM_ASSIGN_OR_RETURN(state.axes, GetAxisAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(state.keepdims, GetBoolAttr(attrs, "keepdims", false));
  DYNVM_ASSIGN_OR_RETURN(state.exclude, GetBoolAttr(attrs, "exclude", false));
  DYNVM_ASSIGN_OR_RETURN(state.select_last, GetBoolAttr(attrs, "select_last_index", false));
  return state;
}

template <size_t kIndex>
absl::StatusOr<std::shared_ptr<const void>> BindReduce(const Attrs& attrs,
                                                       const BindContext& context) {
  DYNVM_ASSIGN_OR_RETURN(ReduceState state,
                         ParseReduceAttrs(kReduceSpecs[kIndex], attrs, context));
  return std::shared_ptr<const void>(std::make_shared<ReduceState>(std::move(state)));
}

template <size_t kIndex>
absl::StatusOr<std::shared_ptr<const void>> BindDynReduce(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"keepdims", "noop_with_empty_axes"}));
  ReduceState state{&kReduceSpecs[kIndex], std::nullopt, false, false, false, std::nullopt, std::nullopt};
  state.axes_input = true;
  DYNVM_ASSIGN_OR_RETURN(state.keepdims, GetBoolAttr(attrs, "keepdims", false));
  DYNVM_ASSIGN_OR_RETURN(state.noop_with_empty_axes, GetBoolAttr(attrs, "noop_with_empty_axes", false));
  return std::shared_ptr<const void>(std::make_shared<ReduceState>(std::move(state)));
}

// A dyn. form's axes (the second input: i32 or i64, rank 1) into `state`.
absl::Status ReadAxesInput(const NDArrayObj& axes, ReduceState& state) {
  const std::string op = state.spec->dyn_name;
  DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(op, "axes", axes, elementwise::kI32 | elementwise::kI64));
  if (axes.ndim() != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the axes must be a list (rank 1), got shape %s", op, ShapeToString(axes.shape())));
  }
  std::vector<int64_t> list(axes.num_elements());
  for (int64_t i = 0; i < axes.num_elements(); ++i) {
    list[i] = axes.dtype() == DType::kI32 ? axes.data_as<int32_t>()[i] : axes.data_as<int64_t>()[i];
  }
  // Empty: every axis (absent), or none.
  if (!list.empty() || state.noop_with_empty_axes) state.axes = std::move(list);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Axes of one call.

// What a call reduces: per input axis whether it is reduced, the output shape, and the
// number of elements each output combines.
struct Reduction {
  bool reduced[kMaxRank];
  Shape out_shape;
  int64_t count;
};

// Resolves the axes of a reduction of an input of `shape`.
absl::StatusOr<Reduction> Resolve(const ReduceState& state, absl::Span<const int64_t> shape) {
  const char* op = state.spec->name;
  const int rank = static_cast<int>(shape.size());
  Reduction r;
  std::fill(r.reduced, r.reduced + kMaxRank, !state.axes.has_value());
  if (state.axes.has_value()) {
    for (int64_t axis : *state.axes) {
      DYNVM_ASSIGN_OR_RETURN(const int a, internal::NormalizeAxis(op, axis, rank));
      if (r.reduced[a]) {
        return absl::InvalidArgumentError(absl::StrFormat("%s: axis %d repeated", op, axis));
      }
      r.reduced[a] = true;
    }
  }
  if (state.exclude) {
    for (int d = 0; d < rank; ++d) r.reduced[d] = !r.reduced[d];
  }
  r.count = 1;
  for (int d = 0; d < rank; ++d) {
    if (r.reduced[d]) {
      r.count *= shape[d];
      if (state.keepdims) r.out_shape.push_back(1);
    } else {
      r.out_shape.push_back(shape[d]);
    }
  }
  if (r.count == 0 && !HasIdentity(state.spec->kind)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot reduce zero elements (input shape %s): the operation has no identity", op,
        ShapeToString(shape)));
  }
  return r;
}

// The checks the shape function and the kernel share: the input (or the prologue's
// inputs, whose broadcast becomes `shape`), its dtype, and the axes.
absl::StatusOr<Reduction> CheckInputs(const ReduceState& bound,
                                      absl::Span<NDArrayObj* const> inputs, Shape& shape,
                                      DType& dtype) {
  if (bound.axes_input) {
    if (inputs.size() != 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel '%s' takes 2 inputs (data, axes), not %d", bound.spec->dyn_name, inputs.size()));
    }
    ReduceState state = bound;
    DYNVM_RETURN_IF_ERROR(ReadAxesInput(*inputs[1], state));
    DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(state.spec->dyn_name, "input", *inputs[0], state.spec->dtypes));
    shape = inputs[0]->shape();
    dtype = inputs[0]->dtype();
    return Resolve(state, shape);
  }
  const ReduceState& state = bound;
  const char* op = state.spec->name;
  if (state.prologue.has_value()) {
    DYNVM_ASSIGN_OR_RETURN(shape, state.prologue->InferShape(op, inputs));
    dtype = DType::kF32;
  } else {
    const int count = static_cast<int>(inputs.size());
    if (count != 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "kernel '%s' takes 1 inputs and 1 outputs, not %d and 1%s", op, count,
          count > 1 ? ": more inputs need the attribute 'prologue'" : ""));
    }
    DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(op, "input", *inputs[0], state.spec->dtypes));
    if (state.epilogue.has_value()) {
      DYNVM_RETURN_IF_ERROR(
          elementwise::CheckDTypeIn(op, "input (with an epilogue)", *inputs[0], elementwise::kF32));
    }
    shape = inputs[0]->shape();
    dtype = inputs[0]->dtype();
  }
  return Resolve(state, shape);
}

absl::Status ReduceShapeFn(const ShapeCall& call) {
  Shape shape;
  DType dtype;
  DYNVM_ASSIGN_OR_RETURN(const Reduction r,
                         CheckInputs(*static_cast<const ReduceState*>(call.state),
                                     call.input_span(), shape, dtype));
  call.output_shapes[0] = r.out_shape;
  return absl::OkStatus();
}

// The iteration space with axes of extent 1 dropped and neighbouring axes of the same
// kind merged, outermost first; never empty (a lone element is one reduced axis of 1).
struct Plan {
  int rank = 0;
  int64_t extent[kMaxRank];
  int64_t stride[kMaxRank];
  bool reduced[kMaxRank];

  bool inner_reduced() const { return reduced[rank - 1]; }
  int64_t inner() const { return extent[rank - 1]; }
  // The extents and strides of the axes other than the innermost that are (not)
  // reduced, for an Odometer.
  void Axes(bool of_reduced, bool with_inner, internal::Dims& extents,
            internal::Dims& strides) const {
    for (int d = 0; d < rank - (with_inner ? 0 : 1); ++d) {
      if (reduced[d] != of_reduced) continue;
      extents.push_back(extent[d]);
      strides.push_back(stride[d]);
    }
  }
};

Plan MakePlan(absl::Span<const int64_t> shape, const bool* reduced) {
  Plan p;
  int64_t stride = 1;
  // Collected innermost first, then reversed.
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; stride *= shape[d], --d) {
    if (shape[d] == 1) continue;
    if (p.rank > 0 && p.reduced[p.rank - 1] == reduced[d]) {
      p.extent[p.rank - 1] *= shape[d];
      continue;
    }
    p.extent[p.rank] = shape[d];
    p.stride[p.rank] = stride;
    p.reduced[p.rank] = reduced[d];
    ++p.rank;
  }
  if (p.rank == 0) {
    p.extent[0] = 1;
    p.stride[0] = 1;
    p.reduced[0] = true;
    p.rank = 1;
  }
  std::reverse(p.extent, p.extent + p.rank);
  std::reverse(p.stride, p.stride + p.rank);
  std::reverse(p.reduced, p.reduced + p.rank);
  return p;
}

// ---------------------------------------------------------------------------------------
// Value reductions: an accumulator type, its identity, one step, the merge of two
// partial accumulators, and the final value from the accumulator and the count.

template <typename T>
using WideSum = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
struct SumOp {
  using Acc = WideSum<T>;  // unsigned for integers: the sum wraps
  static constexpr Acc kIdentity = 0;
  static Acc Step(Acc a, T x) { return a + static_cast<Acc>(x); }
  static Acc Merge(Acc a, Acc b) { return a + b; }
  static T Finish(Acc a, int64_t) { return static_cast<T>(a); }
};
template <typename T>
struct MeanOp : SumOp<T> {
  static T Finish(double a, int64_t n) {
    return n == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(a / n);
  }
};
template <typename T>
struct L2NormOp : SumOp<T> {
  static double Step(double a, T x) { return a + static_cast<double>(x) * x; }
  static T Finish(double a, int64_t) { return static_cast<T>(std::sqrt(a)); }
};
template <typename T>
struct ProdOp {
  using Acc = WideSum<T>;
  static constexpr Acc kIdentity = 1;
  static Acc Step(Acc a, T x) { return a * static_cast<Acc>(x); }
  static Acc Merge(Acc a, Acc b) { return a * b; }
  static T Finish(Acc a, int64_t) { return static_cast<T>(a); }
};
// NaN wins: once an accumulator is NaN no comparison replaces it.
template <typename T, bool kMax>
struct ExtremeOp {
  using Acc = T;
  static constexpr T kIdentity =
      kMax ? (std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                          : std::numeric_limits<T>::lowest())
           : (std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                          : std::numeric_limits<T>::max());
  static T Step(T a, T x) { return ((kMax ? x > a : x < a) || x != x) ? x : a; }
  static T Merge(T a, T b) { return Step(a, b); }
  static T Finish(T a, int64_t) { return a; }
};

// The f32 microkernels (kernels/elementwise/ukernels.h) of the operations that have
// them: a row fold returning a partial accumulator, and a column accumulation.
template <typename Op>
inline constexpr auto kRowUkernel = nullptr;
template <typename Op>
inline constexpr auto kColumnUkernel = nullptr;
template <>
inline constexpr auto kRowUkernel<SumOp<float>> = &ElementwiseUkernels::rsum;
template <>
inline constexpr auto kRowUkernel<MeanOp<float>> = &ElementwiseUkernels::rsum;
template <>
inline constexpr auto kRowUkernel<L2NormOp<float>> = &ElementwiseUkernels::rsumsq;
template <>
inline constexpr auto kRowUkernel<ExtremeOp<float, true>> = &ElementwiseUkernels::rmax;
template <>
inline constexpr auto kRowUkernel<ExtremeOp<float, false>> = &ElementwiseUkernels::rmin;
template <>
inline constexpr auto kColumnUkernel<SumOp<float>> = &ElementwiseUkernels::vaccsum;
template <>
inline constexpr auto kColumnUkernel<MeanOp<float>> = &ElementwiseUkernels::vaccsum;
template <>
inline constexpr auto kColumnUkernel<L2NormOp<float>> = &ElementwiseUkernels::vaccsumsq;
template <>
inline constexpr auto kColumnUkernel<ExtremeOp<float, true>> = &ElementwiseUkernels::vaccmax;
template <>
inline constexpr auto kColumnUkernel<ExtremeOp<float, false>> = &ElementwiseUkernels::vaccmin;

constexpr int kLanes = 8;

// Folds x[0, n) into `acc`: with the operation's microkernel where it has one, else
// with eight independent lanes, which keep the loop free of a serial dependency so that
// it vectorises and hides the add latency.
template <typename Op, typename T>
typename Op::Acc ReduceRun(const T* x, int64_t n, typename Op::Acc acc) {
  using Acc = typename Op::Acc;
  if constexpr (kRowUkernel<Op> != nullptr) {
    return Op::Merge(acc, (GetMicrokernels().elementwise.*kRowUkernel<Op>)(n, x));
  } else {
    Acc lanes[kLanes];
    std::fill(lanes, lanes + kLanes, Op::kIdentity);
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] = Op::Step(lanes[l], x[i + l]);
    }
    for (; i < n; ++i) acc = Op::Step(acc, x[i]);
    for (int l = 0; l < kLanes; ++l) acc = Op::Merge(acc, lanes[l]);
    return acc;
  }
}

// ---------------------------------------------------------------------------------------
// Where the value reductions read their input: a materialised tensor, or a prologue's
// result evaluated run by run. Each task makes a Reader and asks it for runs [offset,
// offset + n) of the flat input; a run stays valid until the next request. Both feed the
// same folds, so a prologue's result reduces exactly as its materialised tensor would.

template <typename T>
class TensorSource {
 public:
  using Elem = T;
  explicit TensorSource(const T* x) : x_(x) {}
  // Bytes a task streams per input element, for its grain.
  int64_t cost() const { return sizeof(T); }

  class Reader {
   public:
    Reader(const TensorSource& src, int64_t /*ahead_limit=*/) : x_(src.x_) {}
    const T* Get(int64_t offset, int64_t /*n=*/) const { return x_ + offset; }

   private:
    const T* x_;
  };

 private:
  const T* x_;
};

// Floats a prologue reader evaluates at once when a task's runs follow each other in the
// flat input: 8 KiB, which stays in L1 until the fold reads it.
constexpr int64_t kPrologueChunk = 2048;

// The calling thread's buffer for prologue runs: at least `n` floats.
float* PrologueBuffer(int64_t n) {
  thread_local ScratchBuffer buffer;
  return buffer.As<float>(static_cast<size_t>(n));
}

class ProgramSource {
 public:
  using Elem = float;
  ProgramSource(const FusedProgram& program, const FusedRangeEvaluator& eval)
      : eval_(&eval),
        cost_(sizeof(float) * (2 + program.num_inputs() + program.num_statements())) {}
  int64_t cost() const { return cost_; }

  // A task's reader. Runs are evaluated into the thread's buffer; with `ahead_limit` >
  // 0, the task's later runs follow the first contiguously up to that flat offset, and
  // the reader evaluates up to kPrologueChunk floats of whole runs at once.
  class Reader {
   public:
    Reader(const ProgramSource& src, int64_t ahead_limit)
        : eval_(src.eval_), limit_(ahead_limit) {}
    const float* Get(int64_t offset, int64_t n) {
      if (offset >= begin_ && offset + n <= end_) return data_ + (offset - begin_);
      int64_t length = n;
      if (n > 0 && offset + n < limit_) {
        length = std::min(limit_ - offset, std::max(n, kPrologueChunk / n * n));
      }
      data_ = PrologueBuffer(length);
      eval_->EvaluateRange(offset, length, data_);
      begin_ = offset;
      end_ = offset + length;
      return data_;
    }

   private:
    const FusedRangeEvaluator* eval_;
    int64_t limit_;
    float* data_ = nullptr;
    int64_t begin_ = 0, end_ = 0;
  };

 private:
  const FusedRangeEvaluator* eval_;
  int64_t cost_;
};

// Innermost axis reduced: each output folds its rows (one per index of the outer
// reduced axes) with ReduceRun.
template <typename Op, typename Src>
void ReduceRows(const Plan& plan, const Src& src, typename Src::Elem* y, int64_t num_out,
                int64_t count, ThreadPool& pool) {
  using Reader = typename Src::Reader;
  internal::Dims out_ext, out_str, red_ext, red_str;
  plan.Axes(/*of_reduced=*/false, /*with_inner=*/false, out_ext, out_str);
  plan.Axes(/*of_reduced=*/true, /*with_inner=*/false, red_ext, red_str);
  const int64_t row = plan.inner();
  const int64_t rows = count / row;
  // A few long single rows: split each into parts, folded in order afterwards.
  constexpr int64_t kPartLength = 32768;
  constexpr int64_t kMaxPartials = 64;
  if (rows == 1 && num_out * 2 <= kMaxPartials && row >= 2 * kPartLength) {
    const int64_t parts = std::min(kMaxPartials / num_out, row / kPartLength);
    typename Op::Acc partial[kMaxPartials];
    pool.ParallelFor(num_out * parts, 1, [&](int64_t begin, int64_t end) {
      Odometer out(out_ext, out_str, out_str);
      Reader reader(src, /*ahead_limit=*/0);
      for (int64_t w = begin; w < end; ++w) {
        out.Seek(w / parts);
        const int64_t p = w % parts;
        const int64_t lo = row * p / parts;
        const int64_t hi = row * (p + 1) / parts;
        partial[w] =
            ReduceRun<Op>(reader.Get(out.offset0() + lo, hi - lo), hi - lo, Op::kIdentity);
      }
    });
    for (int64_t o = 0; o < num_out; ++o) {
      typename Op::Acc acc = Op::kIdentity;
      for (int64_t p = 0; p < parts; ++p) acc = Op::Merge(acc, partial[o * parts + p]);
      y[o] = Op::Finish(acc, count);
    }
    return;
  }
  // [kept, reduced] or [reduced]: output o reads the single run [o * row, (o + 1) * row).
  const bool consecutive = plan.rank <= 2;
  pool.ParallelFor(num_out, internal::GrainForBytes(count * src.cost()),
                   [&](int64_t begin, int64_t end) {
                     Odometer out(out_ext, out_str, out_str);
                     Odometer red(red_ext, red_str, red_str);
                     Reader reader(src, consecutive ? end * row : 0);
                     out.Seek(begin);
                     for (int64_t o = begin; o < end; ++o, out.Next()) {
                       typename Op::Acc acc = Op::kIdentity;
                       red.Seek(0);
                       for (int64_t r = 0; r < rows; ++r, red.Next()) {
                         acc = ReduceRun<Op>(reader.Get(out.offset0() + red.offset0(), row),
                                             row, acc);
                       }
                       y[o] = Op::Finish(acc, count);
                     }
                   });
}

// Column blocks: the most accumulators a task keeps, and how a row of `cols` outputs
// is cut so that at least `min_tasks` tasks exist when `rows` is small.
constexpr int64_t kColumnBlock = 256;

int64_t ColumnBlock(int64_t rows, int64_t cols, int64_t min_tasks) {
  const int64_t blocks = std::max<int64_t>(1, (min_tasks + rows - 1) / rows);
  const int64_t block = (cols + blocks - 1) / blocks;
  return std::clamp<int64_t>((block + kLanes - 1) / kLanes * kLanes, 2 * kLanes, kColumnBlock);
}

// Calls fn(row, c0, c1, base, red) for each block [c0, c1) of each output row when the
// innermost axis is kept: `base` is the row's input offset and `red` walks the reduced
// axes. Tasks are split over `pool`.
template <typename Fn>
void ForEachColumnBlock(const Plan& plan, int64_t num_out, int64_t count, int64_t elem_size,
                        ThreadPool& pool, Fn&& fn) {
  internal::Dims out_ext, out_str, red_ext, red_str;
  plan.Axes(/*of_reduced=*/false, /*with_inner=*/false, out_ext, out_str);
  plan.Axes(/*of_reduced=*/true, /*with_inner=*/true, red_ext, red_str);
  const int64_t cols = plan.inner();
  const int64_t rows = num_out / cols;
  const int64_t block = ColumnBlock(rows, cols, 4 * pool.num_threads());
  const int64_t blocks = (cols + block - 1) / block;
  pool.ParallelFor(rows * blocks, internal::GrainForBytes(count * block * elem_size),
                   [&](int64_t begin, int64_t end) {
                     Odometer out(out_ext, out_str, out_str);
                     Odometer red(red_ext, red_str, red_str);
                     for (int64_t w = begin; w < end; ++w) {
                       out.Seek(w / blocks);
                       red.Seek(0);
                       const int64_t c0 = (w % blocks) * block;
                       fn(w / blocks, c0, std::min(cols, c0 + block), out.offset0(), red);
                     }
                   });
}

// Innermost axis kept: each block of outputs accumulates `count` input rows.
template <typename Op, typename Src>
void ReduceColumns(const Plan& plan, const Src& src, typename Src::Elem* y, int64_t num_out,
                   int64_t count, ThreadPool& pool) {
  using T = typename Src::Elem;
  const int64_t cols = plan.inner();
  ForEachColumnBlock(plan, num_out, count, src.cost(), pool,
                     [&](int64_t row, int64_t c0, int64_t c1, int64_t base, Odometer& red) {
                       typename Src::Reader reader(src, /*ahead_limit=*/0);
                       typename Op::Acc acc[kColumnBlock];
                       const int64_t n = c1 - c0;
                       std::fill(acc, acc + n, Op::kIdentity);
                       for (int64_t r = 0; r < count; ++r, red.Next()) {
                         const T* p = reader.Get(base + red.offset0() + c0, n);
                         if constexpr (kColumnUkernel<Op> != nullptr) {
                           (GetMicrokernels().elementwise.*kColumnUkernel<Op>)(n, p, acc);
                         } else {
                           for (int64_t j = 0; j < n; ++j) acc[j] = Op::Step(acc[j], p[j]);
                         }
                       }
                       T* out = y + row * cols + c0;
                       for (int64_t j = 0; j < n; ++j) out[j] = Op::Finish(acc[j], count);
                     });
}

template <typename Op, typename Src>
void ReduceValues(const Plan& plan, const Src& src, typename Src::Elem* y, int64_t num_out,
                  int64_t count, ThreadPool& pool) {
  if (count == 0) {  // nothing to fold: the identity's final value everywhere
    std::fill(y, y + num_out, Op::Finish(Op::kIdentity, 0));
  } else if (plan.inner_reduced()) {
    ReduceRows<Op>(plan, src, y, num_out, count, pool);
  } else {
    ReduceColumns<Op>(plan, src, y, num_out, count, pool);
  }
}

// ---------------------------------------------------------------------------------------
// argmax and argmin.

// Whether `candidate`, at a later position than `best`, replaces it. NaN is the
// extreme: the first NaN wins, or the last with `last`.
template <bool kMax, typename T>
bool Replaces(T candidate, T best, bool last) {
  if (best != best) return last && candidate != candidate;
  if (candidate != candidate) return true;
  if (candidate == best) return last;
  return kMax ? candidate > best : candidate < best;
}

// The position in x[0, n) (n >= 1) of its extreme value (ExtremeOp's, NaN included):
// the first occurrence, or the last with `last`. Two passes: the vectorised fold finds
// the value, a scan finds where it is.
template <bool kMax, typename T>
int64_t ArgRun(const T* x, int64_t n, bool last) {
  using Op = ExtremeOp<T, kMax>;
  const T v = ReduceRun<Op>(x, n, Op::kIdentity);
  auto is_v = [&](T e) { return v != v ? e != e : e == v; };
  if (last) {
    for (int64_t i = n; i-- > 0;) {
      if (is_v(x[i])) return i;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (is_v(x[i])) return i;
  }
  return 0;  // unreachable: v is one of the elements
}

template <bool kMax, typename T>
void ArgRows(const Plan& plan, const T* x, int64_t* y, int64_t num_out, int64_t count, bool last,
             ThreadPool& pool) {
  internal::Dims out_ext, out_str, red_ext, red_str;
  plan.Axes(/*of_reduced=*/false, /*with_inner=*/false, out_ext, out_str);
  plan.Axes(/*of_reduced=*/true, /*with_inner=*/false, red_ext, red_str);
  const int64_t row = plan.inner();
  pool.ParallelFor(num_out, internal::GrainForBytes(count * sizeof(T)),
                   [&](int64_t begin, int64_t end) {
                     Odometer out(out_ext, out_str, out_str);
                     Odometer red(red_ext, red_str, red_str);
                     out.Seek(begin);
                     for (int64_t o = begin; o < end; ++o, out.Next()) {
                       red.Seek(0);
                       T best{};
                       int64_t best_index = 0;
                       for (int64_t r = 0; r * row < count; ++r, red.Next()) {
                         const T* p = x + out.offset0() + red.offset0();
                         const int64_t j = ArgRun<kMax>(p, row, last);
                         if (r == 0 || Replaces<kMax>(p[j], best, last)) {
                           best = p[j];
                           best_index = r * row + j;
                         }
                       }
                       y[o] = best_index;
                     }
                   });
}

template <bool kMax, typename T>
void ArgColumns(const Plan& plan, const T* x, int64_t* y, int64_t num_out, int64_t count, bool last,
                ThreadPool& pool) {
  const int64_t cols = plan.inner();
  ForEachColumnBlock(plan, num_out, count, sizeof(T), pool,
                     [&](int64_t row, int64_t c0, int64_t c1, int64_t base, Odometer& red) {
                       T best[kColumnBlock];
                       int64_t* index = y + row * cols + c0;
                       const int64_t n = c1 - c0;
                       std::copy(x + base + red.offset0() + c0, x + base + red.offset0() + c1,
                                 best);
                       std::fill(index, index + n, 0);
                       red.Next();
                       for (int64_t r = 1; r < count; ++r, red.Next()) {
                         const T* p = x + base + red.offset0() + c0;
                         for (int64_t j = 0; j < n; ++j) {
                           if (Replaces<kMax>(p[j], best[j], last)) {
                             best[j] = p[j];
                             index[j] = r;
                           }
                         }
                       }
                     });
}

// ---------------------------------------------------------------------------------------
// The reduction kernel.

// The value reduction `kind` (not argmax or argmin) of `src` into `y`.
template <typename Src>
void RunValueReduce(ReduceKind kind, const Plan& plan, const Src& src, typename Src::Elem* y,
                    int64_t num_out, int64_t count, ThreadPool& pool) {
  using T = typename Src::Elem;
  switch (kind) {
    case ReduceKind::kSum:
      return ReduceValues<SumOp<T>>(plan, src, y, num_out, count, pool);
    case ReduceKind::kProd:
      return ReduceValues<ProdOp<T>>(plan, src, y, num_out, count, pool);
    case ReduceKind::kMax:
      return ReduceValues<ExtremeOp<T, true>>(plan, src, y, num_out, count, pool);
    case ReduceKind::kMin:
      return ReduceValues<ExtremeOp<T, false>>(plan, src, y, num_out, count, pool);
    case ReduceKind::kMean:
    case ReduceKind::kL2Norm:
      if constexpr (std::is_floating_point_v<T>) {
        return kind == ReduceKind::kMean
                   ? ReduceValues<MeanOp<T>>(plan, src, y, num_out, count, pool)
                   : ReduceValues<L2NormOp<T>>(plan, src, y, num_out, count, pool);
      }
      return;
    case ReduceKind::kArgMax:
    case ReduceKind::kArgMin:
      return;  // RunReduce
  }
}

template <typename T>
void RunReduce(const ReduceState& state, const Plan& plan, const T* x, void* y, int64_t num_out,
               int64_t count, ThreadPool& pool) {
  auto* index = static_cast<int64_t*>(y);
  const bool last = state.select_last;
  switch (state.spec->kind) {
    case ReduceKind::kArgMax:
      return plan.inner_reduced() ? ArgRows<true>(plan, x, index, num_out, count, last, pool)
                                  : ArgColumns<true>(plan, x, index, num_out, count, last, pool);
    case ReduceKind::kArgMin:
      return plan.inner_reduced() ? ArgRows<false>(plan, x, index, num_out, count, last, pool)
                                  : ArgColumns<false>(plan, x, index, num_out, count, last, pool);
    default:
      return RunValueReduce(state.spec->kind, plan, TensorSource<T>(x), static_cast<T*>(y),
                            num_out, count, pool);
  }
}

absl::Status ReduceKernel(const KernelCall& call) {
  const auto& state = *static_cast<const ReduceState*>(call.state);
  Shape shape;
  DType dtype;
  DYNVM_ASSIGN_OR_RETURN(const Reduction r, CheckInputs(state, call.inputs(), shape, dtype));
  NDArrayObj& y = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(
      state.spec->name, y, IsArg(state.spec->kind) ? DType::kI64 : dtype, r.out_shape));
  const int64_t num_out = y.num_elements();
  if (num_out == 0) return absl::OkStatus();
  const Plan plan = MakePlan(shape, r.reduced);
  if (state.prologue.has_value() && r.count > 0) {
    state.prologue->Prepare(call.inputs(), shape, [&](const FusedRangeEvaluator& eval) {
      RunValueReduce(state.spec->kind, plan, ProgramSource(*state.prologue, eval),
                     y.data_as<float>(), num_out, r.count, *call.pool);
    });
  } else if (state.prologue.has_value()) {  // nothing to evaluate: only the identity
    RunValueReduce(state.spec->kind, plan, TensorSource<float>(nullptr), y.data_as<float>(),
                   num_out, r.count, *call.pool);
  } else {
    const NDArrayObj& x = *call.args[0];
    switch (dtype) {
      case DType::kF32:
        RunReduce(state, plan, x.data_as<float>(), y.data(), num_out, r.count, *call.pool);
        break;
      case DType::kF64:
        RunReduce(state, plan, x.data_as<double>(), y.data(), num_out, r.count, *call.pool);
        break;
      case DType::kI32:
        RunReduce(state, plan, x.data_as<int32_t>(), y.data(), num_out, r.count, *call.pool);
        break;
      default:
        RunReduce(state, plan, x.data_as<int64_t>(), y.data(), num_out, r.count, *call.pool);
        break;
    }
  }
  if (state.epilogue.has_value()) {
    // fused_elementwise's own evaluation, in place over the output.
    NDArrayObj* const value[] = {&y};
    state.epilogue->Evaluate(value, y.shape(), y.data_as<float>(), *call.pool);
  }
  return absl::OkStatus();
}

template <size_t... kIndex>
absl::Status RegisterReductions(KernelRegistry& registry, std::index_sequence<kIndex...>) {
  constexpr BindInContextFn kBinds[] = {BindReduce<kIndex>...};
  for (size_t i = 0; i < sizeof...(kIndex); ++i) {
    // sum, mean, max, min, prod and l2_norm are variadic for a prologue's inputs;
    // without one, CheckInputs requires exactly one (with Bind's message).
    const int num_inputs = IsArg(kReduceSpecs[i].kind) ? 1 : kVariadic;
    DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = kReduceSpecs[i].name,
                                                      .num_inputs = num_inputs,
                                                      .num_outputs = 1,
                                                      .fn = ReduceKernel,
                                                      .shape_fn = ReduceShapeFn,
                                                      .bind_in_context = kBinds[i]}));
  }
  constexpr BindFn kDynBinds[] = {BindDynReduce<kIndex>...};
  for (size_t i = 0; i < sizeof...(kIndex); ++i) {
    if (kReduceSpecs[i].dyn_name == nullptr) continue;
    DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = kReduceSpecs[i].dyn_name,
                                                      .num_inputs = 2,
                                                      .num_outputs = 1,
                                                      .fn = ReduceKernel,
                                                      .bind = kDynBinds[i],
                                                      .shape_fn = ReduceShapeFn}));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// cumsum.

struct CumsumState {
  std::optional<int64_t> axis;  // absent: the flattened input
  bool exclusive;
  bool reverse;
  bool axis_input = false;  // dyn.cumsum: the axis is the second input
};

absl::StatusOr<std::shared_ptr<const void>> BindCumsum(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis", "exclusive", "reverse"}));
  CumsumState state{std::nullopt, false, false};
  if (attrs.contains("axis")) {
    DYNVM_ASSIGN_OR_RETURN(state.axis, GetIntAttr(attrs, "axis"));
  }
  DYNVM_ASSIGN_OR_RETURN(state.exclusive, GetBoolAttr(attrs, "exclusive", false));
  DYNVM_ASSIGN_OR_RETURN(state.reverse, GetBoolAttr(attrs, "reverse", false));
  return std::shared_ptr<const void>(std::make_shared<CumsumState>(state));
}

absl::StatusOr<std::shared_ptr<const void>> BindDynCumsum(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"exclusive", "reverse"}));
  CumsumState state{std::nullopt, false, false, /*axis_input=*/true};
  DYNVM_ASSIGN_OR_RETURN(state.exclusive, GetBoolAttr(attrs, "exclusive", false));
  DYNVM_ASSIGN_OR_RETURN(state.reverse, GetBoolAttr(attrs, "reverse", false));
  return std::shared_ptr<const void>(std::make_shared<CumsumState>(state));
}

// The input seen as [outer, length, inner] with the sums running along `length`.
struct CumsumShape {
  Shape out_shape;
  int64_t outer, length, inner;
};

absl::StatusOr<CumsumShape> ResolveCumsum(const CumsumState& state, const NDArrayObj& x) {
  DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn("cumsum", "input", x, kNumeric));
  if (!state.axis.has_value()) return CumsumShape{{x.num_elements()}, 1, x.num_elements(), 1};
  DYNVM_ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis("cumsum", *state.axis, x.ndim()));
  CumsumShape s{x.shape(), 1, x.shape()[axis], 1};
  for (int d = 0; d < axis; ++d) s.outer *= x.shape()[d];
  for (int d = axis + 1; d < x.ndim(); ++d) s.inner *= x.shape()[d];
  return s;
}

// The call's state: the bound one, or for dyn.cumsum, the axis read from the second
// input (one i32 or i64 element).
absl::StatusOr<CumsumState> CallCumsumState(const CumsumState& bound,
                                            absl::Span<NDArrayObj* const> inputs) {
  if (!bound.axis_input) return bound;
  const NDArrayObj& axis = *inputs[1];
  DYNVM_RETURN_IF_ERROR(
      elementwise::CheckDTypeIn("dyn.cumsum", "axis", axis, elementwise::kI32 | elementwise::kI64));
  if (axis.num_elements() != 1 || axis.ndim() > 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dyn.cumsum: the axis must hold one element, got shape %s", ShapeToString(axis.shape())));
  }
  CumsumState state = bound;
  state.axis = axis.dtype() == DType::kI32 ? axis.data_as<int32_t>()[0] : axis.data_as<int64_t>()[0];
  return state;
}

absl::Status CumsumShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(
      const CumsumState state,
      CallCumsumState(*static_cast<const CumsumState*>(call.state), call.input_span()));
  DYNVM_ASSIGN_OR_RETURN(const CumsumShape s, ResolveCumsum(state, *call.inputs[0]));
  call.output_shapes[0] = s.out_shape;
  return absl::OkStatus();
}

// Running sums down columns [c0, c0 + n) of slab `slab` ([length, inner]): a vectorised
// row update per step (for inner == 1, one serial scan). `y` may be `x`.
template <typename T>
void CumsumBlock(const CumsumState& state, const CumsumShape& s, const T* x, T* y, int64_t slab,
                 int64_t c0, int64_t n) {
  using Acc = WideSum<T>;
  Acc acc[kColumnBlock];
  std::fill(acc, acc + n, Acc{0});
  for (int64_t step = 0; step < s.length; ++step) {
    const int64_t i = state.reverse ? s.length - 1 - step : step;
    const int64_t at = (slab * s.length + i) * s.inner + c0;
    const T* in = x + at;
    T* out = y + at;
    if (state.exclusive) {
      for (int64_t j = 0; j < n; ++j) {
        const Acc v = static_cast<Acc>(in[j]);  // read before `out` overwrites it
        out[j] = static_cast<T>(acc[j]);
        acc[j] += v;
      }
    } else {
      for (int64_t j = 0; j < n; ++j) {
        acc[j] += static_cast<Acc>(in[j]);
        out[j] = static_cast<T>(acc[j]);
      }
    }
  }
}

// Every slab's columns, in blocks of up to kColumnBlock, split over the pool.
template <typename T>
void Cumsum(const CumsumState& state, const CumsumShape& s, const T* x, T* y, ThreadPool& pool) {
  const int64_t block = std::min(kColumnBlock, s.inner);
  const int64_t blocks = (s.inner + block - 1) / block;
  pool.ParallelFor(s.outer * blocks, internal::GrainForBytes(2 * s.length * block * sizeof(T)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t w = begin; w < end; ++w) {
                       const int64_t c0 = (w % blocks) * block;
                       CumsumBlock(state, s, x, y, w / blocks, c0,
                                   std::min(s.inner, c0 + block) - c0);
                     }
                   });
}

absl::Status CumsumKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(
      const CumsumState state,
      CallCumsumState(*static_cast<const CumsumState*>(call.state), call.inputs()));
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.outputs()[0];
  DYNVM_ASSIGN_OR_RETURN(const CumsumShape s, ResolveCumsum(state, x));
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput("cumsum", y, x.dtype(), s.out_shape));
  if (x.num_elements() == 0) return absl::OkStatus();
  switch (x.dtype()) {
    case DType::kF32:
      Cumsum(state, s, x.data_as<float>(), y.data_as<float>(), *call.pool);
      break;
    case DType::kF64:
      Cumsum(state, s, x.data_as<double>(), y.data_as<double>(), *call.pool);
      break;
    case DType::kI32:
      Cumsum(state, s, x.data_as<int32_t>(), y.data_as<int32_t>(), *call.pool);
      break;
    default:
      Cumsum(state, s, x.data_as<int64_t>(), y.data_as<int64_t>(), *call.pool);
      break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterReduceKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(
      RegisterReductions(registry, std::make_index_sequence<std::size(kReduceSpecs)>()));
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = "cumsum",
                                                    .num_inputs = 1,
                                                    .num_outputs = 1,
                                                    .fn = CumsumKernel,
                                                    .bind = BindCumsum,
                                                    .shape_fn = CumsumShapeFn}));
  return registry.Register(KernelDef{.name = "dyn.cumsum",
                                     .num_inputs = 2,
                                     .num_outputs = 1,
                                     .fn = CumsumKernel,
                                     .bind = BindDynCumsum,
                                     .shape_fn = CumsumShapeFn});
}

}  // namespace dynvm::kernels
