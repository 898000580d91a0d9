// Kernels that make tensors from scalars: arange, full, zeros, ones, and the dyn.*
// forms whose shape comes from a 1-D i32/i64 input tensor. full, zeros and ones fill
// any dtype (by element size); arange counts in f32, f64, i32 or i64.
// random_uniform_like draws a tensor of its input's shape.
//
// Their output shapes come from attribute or input VALUES (arange's length from
// start, stop and step), so the shape functions read inputs.
#include "kernels/data_movement/creation.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"

namespace dynvm::kernels {
namespace {

using internal::CheckOutput;
using internal::SingleShapeFn;

// ---------------------------------------------------------------------------------------
// arange

struct ArangeState {
  std::optional<DType> dtype;  // absent: the inputs' dtype
};

absl::StatusOr<std::shared_ptr<const void>> BindArange(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"dtype"}));
  auto state = std::make_shared<ArangeState>();
  if (attrs.contains("dtype")) {
    DYNVM_ASSIGN_OR_RETURN(state->dtype, internal::GetDTypeAttr(attrs, "dtype", DType::kF32));
  }
  return std::shared_ptr<const void>(std::move(state));
}

// Where an arange starts and steps, and how long it is.
struct ArangeRange {
  DType dtype;
  double start = 0, step = 0;     // float dtypes
  int64_t istart = 0, istep = 0;  // integer dtypes
  int64_t length = 0;
};

// The length is ceil((stop - start) / step), at least 0: exact for integers (in 128
// bits, so no extreme bounds overflow), in double for floats as numpy and Relay do.
absl::StatusOr<ArangeRange> PlanArange(const ArangeState& s, absl::Span<NDArrayObj* const> in) {
  ArangeRange r;
  r.dtype = in[0]->dtype();
  const char* const names[] = {"start", "stop", "step"};
  for (int i = 0; i < 3; ++i) {
    DYNVM_RETURN_IF_ERROR(internal::CheckScalar("arange", names[i], *in[i]));
    DYNVM_RETURN_IF_ERROR(
        internal::CheckDType("arange", names[i], *in[i], s.dtype.value_or(r.dtype)));
  }
  constexpr int64_t kMaxLength = int64_t{1} << 48;  // far past any allocation
  auto too_long = [] { return absl::InvalidArgumentError("arange: too many elements"); };
  if (r.dtype == DType::kI32 || r.dtype == DType::kI64) {
    const bool wide = r.dtype == DType::kI64;
    r.istart = internal::LoadIndex(in[0]->data(), wide, 0);
    const __int128 stop = internal::LoadIndex(in[1]->data(), wide, 0);
    r.istep = internal::LoadIndex(in[2]->data(), wide, 0);
    if (r.istep == 0) return absl::InvalidArgumentError("arange: step is 0");
    const __int128 diff = stop - r.istart;
    __int128 len = 0;
    if (diff > 0 && r.istep > 0) len = (diff + r.istep - 1) / r.istep;
    if (diff < 0 && r.istep < 0) len = (diff + r.istep + 1) / r.istep;
    if (len > kMaxLength) return too_long();
    r.length = static_cast<int64_t>(len);
    return r;
  }
  if (r.dtype != DType::kF32 && r.dtype != DType::kF64) {
    return internal::UnsupportedDType("arange", "start", r.dtype, "f32, f64, i32 or i64");
  }
  r.start = internal::LoadAsDouble(*in[0], 0);
  const double stop = internal::LoadAsDouble(*in[1], 0);
  r.step = internal::LoadAsDouble(*in[2], 0);
  if (!std::isfinite(r.start) || !std::isfinite(stop) || !std::isfinite(r.step)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "arange: start %g, stop %g and step %g must be finite", r.start, stop, r.step));
  }
  if (r.step == 0) return absl::InvalidArgumentError("arange: step is 0");
  const double len = std::ceil((stop - r.start) / r.step);
  if (len > static_cast<double>(kMaxLength)) return too_long();
  r.length = len > 0 ? static_cast<int64_t>(len) : 0;
  return r;
}

absl::StatusOr<Shape> ArangeShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  DYNVM_ASSIGN_OR_RETURN(ArangeRange r,
                         PlanArange(*static_cast<const ArangeState*>(state), inputs));
  return Shape{r.length};
}

// out[i] = start + i * step: floats computed in double, then rounded to the dtype;
// integers in wrapping unsigned arithmetic (exact, since every value lies between start
// and stop).
template <typename T>
void FillArange(const ArangeRange& r, T* out, ThreadPool& pool) {
  pool.ParallelFor(r.length, internal::GrainForBytes(sizeof(T)), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        out[i] = static_cast<T>(r.start + static_cast<double>(i) * r.step);
      } else {
        out[i] = static_cast<T>(static_cast<uint64_t>(r.istart) +
                                static_cast<uint64_t>(i) * static_cast<uint64_t>(r.istep));
      }
    }
  });
}

absl::Status ArangeKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(ArangeRange r,
                         PlanArange(*static_cast<const ArangeState*>(call.state), call.inputs()));
  const NDArrayObj& out = *call.args[3];
  DYNVM_RETURN_IF_ERROR(CheckOutput("arange", out, r.dtype, {r.length}));
  switch (r.dtype) {
    case DType::kF32: FillArange(r, out.data_as<float>(), *call.pool); break;
    case DType::kF64: FillArange(r, out.data_as<double>(), *call.pool); break;
    case DType::kI32: FillArange(r, out.data_as<int32_t>(), *call.pool); break;
    default: FillArange(r, out.data_as<int64_t>(), *call.pool); break;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// full, zeros, ones and their dyn.* forms

// What a fill kernel's value is: an input (full) or a constant (zeros, ones).
enum FillValue { kFromInput = -1, kZero = 0, kOne = 1 };

struct FillState {
  Shape shape;                 // unless the shape is an input
  std::optional<DType> dtype;  // absent: the fill value's dtype (full only)
};

// Binds the attributes: `shape` unless `kDynamic` (the shape is the last input), and
// `dtype` (default f32 for zeros and ones, the fill value's dtype for full).
template <bool kDynamic, FillValue kValue>
absl::StatusOr<std::shared_ptr<const void>> BindFill(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(kDynamic ? CheckKnownAttrs(attrs, {"dtype"})
                                 : CheckKnownAttrs(attrs, {"shape", "dtype"}));
  auto state = std::make_shared<FillState>();
  if constexpr (!kDynamic) {
    DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> shape, GetIntsAttr(attrs, "shape"));
    state->shape.assign(shape.begin(), shape.end());
    DYNVM_RETURN_IF_ERROR(internal::ValidateShape("attribute 'shape'", state->shape));
  }
  if (kValue != kFromInput || attrs.contains("dtype")) {
    DYNVM_ASSIGN_OR_RETURN(state->dtype, internal::GetDTypeAttr(attrs, "dtype", DType::kF32));
  }
  return std::shared_ptr<const void>(std::move(state));
}

template <const char* kName, bool kDynamic, FillValue kValue>
absl::StatusOr<Shape> FillShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  if constexpr (kValue == kFromInput) {
    DYNVM_RETURN_IF_ERROR(internal::CheckScalar(kName, "fill value", *inputs[0]));
  }
  if constexpr (kDynamic) return internal::ReadShapeTensor(kName, *inputs.back());
  return static_cast<const FillState*>(state)->shape;
}

template <const char* kName, bool kDynamic, FillValue kValue>
absl::Status FillKernel(const KernelCall& call) {
  const auto& s = *static_cast<const FillState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(Shape shape,
                         (FillShape<kName, kDynamic, kValue>(call.state, call.inputs())));
  const NDArrayObj& out = *call.outputs()[0];
  const DType dtype = s.dtype ? *s.dtype : call.args[0]->dtype();  // full: the fill value's
  DYNVM_RETURN_IF_ERROR(CheckOutput(kName, out, dtype, shape));
  // The value as one element of the output's dtype: a fill value of that dtype is
  // copied bit for bit, one of another dtype converted through double.
  uint64_t value = 0;
  if (kValue == kFromInput && call.args[0]->dtype() == dtype) {
    std::memcpy(&value, call.args[0]->data(), DTypeSize(dtype));
  } else {
    const double v = kValue == kFromInput ? internal::LoadAsDouble(*call.args[0], 0)
                                          : static_cast<double>(kValue);
    internal::StoreFromDouble(v, dtype, &value);
  }
  internal::FillElements(out.data(), out.num_elements(), &value, DTypeSize(dtype), *call.pool);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// random_uniform_like

struct RandomState {
  uint32_t seed;
  double low, high;
  DType dtype;
};

// Attributes: `seed` (required, in [0, 2^32)), `low` (default 0), `high` (default 1),
// `dtype` (f32 or f64, default f32).
absl::StatusOr<std::shared_ptr<const void>> BindRandomUniform(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"seed", "low", "high", "dtype"}));
  DYNVM_ASSIGN_OR_RETURN(const int64_t seed, GetIntAttr(attrs, "seed"));
  if (seed < 0 || seed > int64_t{0xffffffff}) {
    return absl::InvalidArgumentError(
        absl::StrFormat("random_uniform_like: seed %d is outside [0, 2^32)", seed));
  }
  auto state = std::make_shared<RandomState>();
  state->seed = static_cast<uint32_t>(seed);
  DYNVM_ASSIGN_OR_RETURN(state->low, GetFloatAttr(attrs, "low", 0.0));
  DYNVM_ASSIGN_OR_RETURN(state->high, GetFloatAttr(attrs, "high", 1.0));
  if (!std::isfinite(state->low) || !std::isfinite(state->high) || state->low > state->high) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "random_uniform_like: low %g and high %g must be finite with low <= high", state->low, state->high));
  }
  DYNVM_ASSIGN_OR_RETURN(state->dtype, internal::GetDTypeAttr(attrs, "dtype", DType::kF32));
  if (state->dtype != DType::kF32 && state->dtype != DType::kF64) {
    return internal::UnsupportedDType("random_uniform_like", "attribute 'dtype'", state->dtype, "f32 or f64");
  }
  return std::shared_ptr<const void>(std::move(state));
}

absl::StatusOr<Shape> RandomUniformShape(const void*, absl::Span<NDArrayObj* const> inputs) {
  return Shape(inputs[0]->shape().begin(), inputs[0]->shape().end());
}

// The draws of numpy's legacy generator, so that a seeded model reproduces
// numpy.random.seed(seed); numpy.random.uniform(low, high, shape): MT19937 initialised
// by init_genrand(seed) (std::mt19937's seeding), each draw a 53-bit double
// ((a >> 5) * 2^26 + (b >> 6)) / 2^53 from two outputs, scaled to [low, high). The
// stream restarts from the seed at every call: the kernel is a function of its
// attributes and its input's shape, in element order, on one thread.
absl::Status RandomUniformKernel(const KernelCall& call) {
  const auto& s = *static_cast<const RandomState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& out = *call.args[1];
  DYNVM_RETURN_IF_ERROR(CheckOutput("random_uniform_like", out, s.dtype, Shape(x.shape().begin(), x.shape().end())));
  std::mt19937 engine(s.seed);
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    const uint32_t a = engine() >> 5, b = engine() >> 6;
    const double unit = (a * 67108864.0 + b) / 9007199254740992.0;
    const double v = s.low + (s.high - s.low) * unit;
    if (s.dtype == DType::kF64) {
      out.data_as<double>()[i] = v;
    } else {
      out.data_as<float>()[i] = static_cast<float>(v);
    }
  }
  return absl::OkStatus();
}

constexpr char kFull[] = "full";
constexpr char kZeros[] = "zeros";
constexpr char kOnes[] = "ones";
constexpr char kDynFull[] = "dyn.full";
constexpr char kDynZeros[] = "dyn.zeros";
constexpr char kDynOnes[] = "dyn.ones";

// The KernelDef of one fill kernel.
template <const char* kName, bool kDynamic, FillValue kValue>
KernelDef FillDef() {
  const int inputs = (kValue == kFromInput ? 1 : 0) + (kDynamic ? 1 : 0);
  return KernelDef{kName,
                   inputs,
                   1,
                   FillKernel<kName, kDynamic, kValue>,
                   BindFill<kDynamic, kValue>,
                   SingleShapeFn<FillShape<kName, kDynamic, kValue>>};
}

}  // namespace

absl::Status RegisterCreationKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {"arange", 3, 1, ArangeKernel, BindArange, SingleShapeFn<ArangeShape>},
      FillDef<kFull, false, kFromInput>(),
      FillDef<kZeros, false, kZero>(),
      FillDef<kOnes, false, kOne>(),
      FillDef<kDynFull, true, kFromInput>(),
      FillDef<kDynZeros, true, kZero>(),
      FillDef<kDynOnes, true, kOne>(),
      {"random_uniform_like", 1, 1, RandomUniformKernel, BindRandomUniform, SingleShapeFn<RandomUniformShape>},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
