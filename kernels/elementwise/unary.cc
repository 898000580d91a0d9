// Elementwise unary kernels. One input x and one output y of x's shape:
//
//   f32 maps     negative, abs, exp, log, sqrt, rsqrt, reciprocal, tanh, sigmoid,
//                nn.relu, nn.leaky_relu (alpha), gelu (approximate), erf, sin, cos,
//                floor, ceil, round, sign, clip (a_min, a_max) — y = op(x), f32; negative,
//                abs and sign also i32 and i64 (wrapping: -MIN == MIN, |MIN| == MIN);
//                exp, log and sqrt also f64 (the C library's, element by element)
//   libm maps    sinh, cosh, asin, acos, atan, asinh, acosh, atanh — f32 and f64, the C
//                library's functions element by element (NaN outside their domains)
//   predicates   isnan (f32 -> bool), logical_not (bool -> bool)
//   cast         any dtype -> the dtype attribute (rules in kernels/elementwise/convert.h)
//
// The f32 maps run the microkernels of kernels/elementwise/ukernels.h, chosen once for
// the CPU, over chunks of the tensor split across the pool.
#include "kernels/elementwise/unary.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/elementwise/convert.h"
#include "kernels/elementwise/dtypes.h"
#include "kernels/elementwise/string_convert.h"
#include "kernels/elementwise/ukernels.h"
#include "kernels/internal/checks.h"
#include "kernels/microkernels.h"
#include "objects/string_tensor.h"

namespace dynvm::kernels {
namespace {

using elementwise::DTypeSet;
using elementwise::VUnaryOp;
using elementwise::VUnaryParams;

// Splits [0, n) over the pool in chunks of about 64 KiB of traffic (the elements of
// input and output together take `bytes_per_element`).
template <typename Fn>
void ParallelChunks(ThreadPool& pool, int64_t n, int64_t bytes_per_element, Fn&& fn) {
  pool.ParallelFor(n, internal::GrainForBytes(bytes_per_element), fn);
}

// The checks every kernel here shares: x's dtype is in `in`, y has dtype `out_dtype` and
// x's shape.
absl::Status CheckUnary(std::string_view op, const NDArrayObj& x, DTypeSet in, const NDArrayObj& y,
                        DType out_dtype) {
  DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(op, "input", x, in));
  return internal::CheckOutput(op, y, out_dtype, x.shape());
}

// ---------------------------------------------------------------------------------------
// f32 maps.

struct MapSpec {
  const char* name;
  VUnaryOp op;
  bool integers;  // also takes i32 and i64
  double (*f64)(double) = nullptr;  // where it also takes f64: the C library's function
};

constexpr MapSpec kMapSpecs[] = {
    {"negative", VUnaryOp::kNeg, true},
    {"abs", VUnaryOp::kAbs, true},
    {"exp", VUnaryOp::kExp, false, [](double x) { return std::exp(x); }},
    {"log", VUnaryOp::kLog, false, [](double x) { return std::log(x); }},
    {"sqrt", VUnaryOp::kSqrt, false, [](double x) { return std::sqrt(x); }},
    {"rsqrt", VUnaryOp::kRsqrt, false},
    {"reciprocal", VUnaryOp::kReciprocal, false},
    {"tanh", VUnaryOp::kTanh, false},
    {"sigmoid", VUnaryOp::kSigmoid, false},
    {"nn.relu", VUnaryOp::kRelu, false},
    {"nn.leaky_relu", VUnaryOp::kLeakyRelu, false},
    {"gelu", VUnaryOp::kGeluErf, false},
    {"erf", VUnaryOp::kErf, false},
    {"sin", VUnaryOp::kSin, false},
    {"cos", VUnaryOp::kCos, false},
    {"floor", VUnaryOp::kFloor, false},
    {"ceil", VUnaryOp::kCeil, false},
    {"round", VUnaryOp::kRound, false},
    {"sign", VUnaryOp::kSign, true},
    {"clip", VUnaryOp::kClip, false},
};

struct MapState {
  const MapSpec* spec;
  VUnaryOp op;  // the spec's, or gelu's tanh form
  VUnaryParams params;
};

absl::StatusOr<MapState> ParseMapAttrs(const MapSpec& spec, const Attrs& attrs) {
  MapState state{&spec, spec.op, {}};
  switch (spec.op) {
    case VUnaryOp::kLeakyRelu: {
      DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"alpha"}));
      DYNVM_ASSIGN_OR_RETURN(const double alpha, GetFloatAttr(attrs, "alpha", 0.25));  // Relay's
      state.params.alpha = static_cast<float>(alpha);
      return state;
    }
    case VUnaryOp::kGeluErf: {
      DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"approximate"}));
      DYNVM_ASSIGN_OR_RETURN(const std::string form, GetStringAttr(attrs, "approximate", "none"));
      if (form != "none" && form != "tanh") {
        return absl::InvalidArgumentError(absl::StrFormat(
            "attribute 'approximate' must be \"none\" or \"tanh\", got \"%s\"", form));
      }
      if (form == "tanh") state.op = VUnaryOp::kGeluTanh;
      return state;
    }
    case VUnaryOp::kClip: {
      DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"a_min", "a_max"}));
      DYNVM_ASSIGN_OR_RETURN(const double lo, GetFloatAttr(attrs, "a_min"));
      DYNVM_ASSIGN_OR_RETURN(const double hi, GetFloatAttr(attrs, "a_max"));
      if (!(lo <= hi)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("attribute a_min %g must not exceed a_max %g", lo, hi));
      }
      state.params.min = static_cast<float>(lo);
      state.params.max = static_cast<float>(hi);
      return state;
    }
    default:
      DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {}));
      return state;
  }
}

template <size_t kIndex>
absl::StatusOr<std::shared_ptr<const void>> BindMap(const Attrs& attrs) {
  DYNVM_ASSIGN_OR_RETURN(MapState state, ParseMapAttrs(kMapSpecs[kIndex], attrs));
  return std::shared_ptr<const void>(std::make_shared<MapState>(state));
}

DTypeSet MapDTypes(const MapSpec& spec) {
  const DTypeSet floats = spec.f64 != nullptr ? elementwise::kF32 | elementwise::kF64 : elementwise::kF32;
  return spec.integers ? floats | elementwise::kI32 | elementwise::kI64 : floats;
}

// y = f(x) for T, split over the pool.
template <typename T, typename F>
void LibmMap(ThreadPool& pool, const NDArrayObj& x, const NDArrayObj& y, F f) {
  const T* px = x.data_as<T>();
  T* py = y.data_as<T>();
  ParallelChunks(pool, x.num_elements(), 2 * sizeof(T), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) py[i] = f(px[i]);
  });
}

absl::Status MapShapeFn(const ShapeCall& call) {
  const MapSpec& spec = *static_cast<const MapState*>(call.state)->spec;
  DYNVM_RETURN_IF_ERROR(
      elementwise::CheckDTypeIn(spec.name, "input", *call.inputs[0], MapDTypes(spec)));
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

// The integer forms of negative, abs and sign; negation wraps.
template <typename T>
void IntegerMap(VUnaryOp op, int64_t n, const T* x, T* y) {
  using U = std::make_unsigned_t<T>;
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  };
  auto neg = [](T v) { return static_cast<T>(U{0} - static_cast<U>(v)); };
  switch (op) {
    case VUnaryOp::kNeg:
      return map(neg);
    case VUnaryOp::kAbs:
      return map([&](T v) { return v < 0 ? neg(v) : v; });
    default:
      return map([](T v) { return static_cast<T>((v > 0) - (v < 0)); });
  }
}

absl::Status MapKernel(const KernelCall& call) {
  const auto& state = *static_cast<const MapState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.args[1];
  DYNVM_RETURN_IF_ERROR(CheckUnary(state.spec->name, x, MapDTypes(*state.spec), y, x.dtype()));
  const int64_t n = x.num_elements();
  if (x.dtype() == DType::kF32) {
    const elementwise::VUnaryUkernel uk =
        GetMicrokernels().elementwise.vunary[static_cast<int>(state.op)];
    const float* px = x.data_as<float>();
    float* py = y.data_as<float>();
    ParallelChunks(*call.pool, n, 8, [&](int64_t begin, int64_t end) {
      uk(end - begin, px + begin, py + begin, &state.params);
    });
    return absl::OkStatus();
  }
  if (x.dtype() == DType::kF64) {
    LibmMap<double>(*call.pool, x, y, state.spec->f64);
    return absl::OkStatus();
  }
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_as<T>();
    T* py = y.data_as<T>();
    ParallelChunks(*call.pool, n, 2 * sizeof(T), [&](int64_t begin, int64_t end) {
      IntegerMap<T>(state.op, end - begin, px + begin, py + begin);
    });
  };
  x.dtype() == DType::kI32 ? run(int32_t{}) : run(int64_t{});
  return absl::OkStatus();
}

template <size_t... kIndex>
absl::Status RegisterMaps(KernelRegistry& registry, std::index_sequence<kIndex...>) {
  constexpr BindFn kBinds[] = {BindMap<kIndex>...};
  for (size_t i = 0; i < sizeof...(kIndex); ++i) {
    DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = kMapSpecs[i].name,
                                                      .num_inputs = 1,
                                                      .num_outputs = 1,
                                                      .fn = MapKernel,
                                                      .bind = kBinds[i],
                                                      .shape_fn = MapShapeFn}));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// libm maps: the hyperbolic and inverse trigonometric functions, which models seldom
// run over many elements: the C library's functions element by element, f32 computed in
// f32 and f64 in f64, split over the pool. No attributes.

struct LibmSpec {
  const char* name;
  float (*f32)(float);
  double (*f64)(double);
};

#define DYNVM_LIBM(fn) \
  {#fn, [](float x) { return std::fn(x); }, [](double x) { return std::fn(x); }}
constexpr LibmSpec kLibmSpecs[] = {DYNVM_LIBM(sinh), DYNVM_LIBM(cosh), DYNVM_LIBM(asin),
                                   DYNVM_LIBM(acos), DYNVM_LIBM(atan), DYNVM_LIBM(asinh),
                                   DYNVM_LIBM(acosh), DYNVM_LIBM(atanh)};
#undef DYNVM_LIBM

constexpr DTypeSet kLibmDTypes = elementwise::kF32 | elementwise::kF64;

template <size_t kIndex>
absl::Status LibmShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(
      elementwise::CheckDTypeIn(kLibmSpecs[kIndex].name, "input", *call.inputs[0], kLibmDTypes));
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

template <size_t kIndex>
absl::Status LibmKernel(const KernelCall& call) {
  const LibmSpec& spec = kLibmSpecs[kIndex];
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.args[1];
  DYNVM_RETURN_IF_ERROR(CheckUnary(spec.name, x, kLibmDTypes, y, x.dtype()));
  if (x.dtype() == DType::kF32) {
    LibmMap<float>(*call.pool, x, y, spec.f32);
  } else {
    LibmMap<double>(*call.pool, x, y, spec.f64);
  }
  return absl::OkStatus();
}

template <size_t... kIndex>
absl::Status RegisterLibmMaps(KernelRegistry& registry, std::index_sequence<kIndex...>) {
  const KernelDef defs[] = {KernelDef{.name = kLibmSpecs[kIndex].name,
                                      .num_inputs = 1,
                                      .num_outputs = 1,
                                      .fn = LibmKernel<kIndex>,
                                      .shape_fn = LibmShapeFn<kIndex>}...};
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Predicates: f32 -> bool and bool -> bool, no attributes.

template <const char* kName, DTypeSet kIn>
absl::Status PredicateShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(kName, "input", *call.inputs[0], kIn));
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

// y = Pred(x) for x of storage type `T`, y bool.
template <const char* kName, typename T, auto Pred>
absl::Status PredicateKernel(const KernelCall& call) {
  constexpr DTypeSet kIn = elementwise::Bit(elementwise::DTypeOf<T>());
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.args[1];
  DYNVM_RETURN_IF_ERROR(CheckUnary(kName, x, kIn, y, DType::kBool));
  const T* px = x.data_as<T>();
  uint8_t* py = y.data_as<uint8_t>();
  ParallelChunks(*call.pool, x.num_elements(), sizeof(T) + 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) py[i] = Pred(px[i]) ? 1 : 0;
  });
  return absl::OkStatus();
}

constexpr char kIsNan[] = "isnan";
constexpr char kLogicalNot[] = "logical_not";

// ---------------------------------------------------------------------------------------
// cast.

struct CastState {
  DType dtype;
};

absl::StatusOr<std::shared_ptr<const void>> BindCast(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"dtype"}));
  DYNVM_ASSIGN_OR_RETURN(const std::string name, GetStringAttr(attrs, "dtype"));
  absl::StatusOr<DType> dtype = ParseDType(name);
  if (!dtype.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'dtype': %s", dtype.status().message()));
  }
  return std::shared_ptr<const void>(std::make_shared<CastState>(CastState{*dtype}));
}

absl::Status CastShapeFn(const ShapeCall& call) {
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

// cast with a string tensor on either side (string_convert.h), serially: each text
// element is its own allocation, and strings are rare.
absl::Status CastStrings(const NDArrayObj& x, const NDArrayObj& y) {
  const int64_t n = x.num_elements();
  if (x.dtype() == DType::kString && y.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      DYNVM_ASSIGN_OR_RETURN(const std::string_view text, StringElement(x, i));
      SetStringElement(y, i, text);
    }
    return absl::OkStatus();
  }
  if (x.dtype() == DType::kString) {
    return elementwise::VisitDType(y.dtype(), [&](auto tag) -> absl::Status {
      using D = decltype(tag);
      D* py = y.data_as<D>();
      for (int64_t i = 0; i < n; ++i) {
        DYNVM_ASSIGN_OR_RETURN(const std::string_view text, StringElement(x, i));
        absl::StatusOr<D> v = elementwise::ElementFromText<D>(text);
        if (!v.ok()) {
          return absl::InvalidArgumentError(
              absl::StrFormat("cast: element %d: %s", i, v.status().message()));
        }
        py[i] = *v;
      }
      return absl::OkStatus();
    });
  }
  elementwise::VisitDType(x.dtype(), [&](auto tag) {
    using S = decltype(tag);
    const S* px = x.data_as<S>();
    for (int64_t i = 0; i < n; ++i) SetStringElement(y, i, elementwise::ElementToText(px[i]));
  });
  return absl::OkStatus();
}

absl::Status CastKernel(const KernelCall& call) {
  const DType to = static_cast<const CastState*>(call.state)->dtype;
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.args[1];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput("cast", y, to, x.shape()));
  if (x.dtype() == DType::kString || to == DType::kString) return CastStrings(x, y);
  const int64_t n = x.num_elements();
  elementwise::VisitDType(x.dtype(), [&](auto src_tag) {
    elementwise::VisitDType(to, [&](auto dst_tag) {
      using S = decltype(src_tag);
      using D = decltype(dst_tag);
      const S* px = x.data_as<S>();
      D* py = y.data_as<D>();
      ParallelChunks(*call.pool, n, sizeof(S) + sizeof(D), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) py[i] = elementwise::Convert<D>(px[i]);
      });
    });
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterUnaryKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(RegisterMaps(registry, std::make_index_sequence<std::size(kMapSpecs)>()));
  DYNVM_RETURN_IF_ERROR(
      RegisterLibmMaps(registry, std::make_index_sequence<std::size(kLibmSpecs)>()));
  const KernelDef defs[] = {
      {.name = kIsNan,
       .num_inputs = 1,
       .num_outputs = 1,
       .fn = PredicateKernel<kIsNan, float, [](float v) { return v != v; }>,
       .shape_fn = PredicateShapeFn<kIsNan, elementwise::kF32>},
      {.name = kLogicalNot,
       .num_inputs = 1,
       .num_outputs = 1,
       .fn = PredicateKernel<kLogicalNot, elementwise::Bool,
                             [](elementwise::Bool v) { return v.value == 0; }>,
       .shape_fn = PredicateShapeFn<kLogicalNot, elementwise::kBool>},
      {.name = "cast",
       .num_inputs = 1,
       .num_outputs = 1,
       .fn = CastKernel,
       .bind = BindCast,
       .shape_fn = CastShapeFn,
       .takes_strings = true},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
