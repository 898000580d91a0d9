// Elementwise binary kernels with numpy broadcasting, and `where`:
//
//   arithmetic   add, subtract, multiply, divide, maximum, minimum, mod, floor_mod
//                (f32, f64, f16, bf16, u8-u64, i8-i64) and power (f32, f64, i32, i64):
//                a op b, of the inputs' dtype; f16 and bf16 computed in f32 and rounded
//                to nearest even once
//   comparisons  equal, not_equal, less, less_equal, greater, greater_equal: inputs of
//                any one dtype (f16 and bf16 compare as their f32 values), bool output
//   logical      logical_and, logical_or, logical_xor: bool inputs and output
//   shifts       left_shift, right_shift: integers (u8-u64, i8-i64), a << b and a >> b
//   where        where(cond, x, y): cond bool, x and y of any one dtype, output theirs
//   bias_add     nn.bias_add(data, bias, axis=1) (Relay's): data + bias, bias a vector
//                of data's extent on `axis` (negative counts from the end), added
//                along it; add's dtypes, output data's shape
//
// The output shape is the broadcast of the inputs'. Integer arithmetic never traps:
// add, subtract and multiply wrap (two's complement), x / 0 == x % 0 == 0 and
// MIN / -1 == MIN (u8 divides plainly); 8- and 16-bit values are computed wide and
// narrowed, never overflowing C++'s int. Integer power squares with wrapping
// multiplication; a negative exponent gives the truncated real result: 1 for a == 1,
// +/-1 for a == -1 (by parity), else 0; 0 ** 0 == 1. mod truncates like C's fmod (the
// result has the sign of a); floor_mod floors like Python's % (the sign of b). Float
// maximum and minimum propagate NaN, as numpy's maximum does.
//
// Every kernel here runs on one broadcasting driver (kernels/elementwise/broadcast.h): the output
// is split into contiguous runs over the pool, and each run is a loop in which every
// operand either advances or repeats one value — known at compile time, so the loop
// vectorises.
#include "kernels/elementwise/binary.h"

#include <array>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/data_movement/common.h"
#include "kernels/elementwise/binary_ops.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/elementwise/convert.h"
#include "kernels/elementwise/dtypes.h"

namespace dynvm::kernels {
namespace {

using elementwise::Contains;
using elementwise::DTypeSet;
using elementwise::Widen;

// ---------------------------------------------------------------------------------------
// Runs: the innermost loops.

// One operand of a run: contiguous (kStride 1) or a single repeated value (kStride 0),
// read before the loop so that the loop body has no loads to hoist.
template <int64_t kStride, typename T>
class Run {
 public:
  explicit Run(const T* p) : p_(p) {
    if constexpr (kStride == 0) v_ = *p;
  }
  T operator[](int64_t j) const {
    if constexpr (kStride == 0) {
      return v_;
    } else {
      return p_[j];
    }
  }

 private:
  const T* p_;
  T v_{};
};

// Calls fn(std::integral_constant<int64_t, stride>) for an innermost stride of 0 or 1.
template <typename Fn>
void WithStride(int64_t stride, Fn&& fn) {
  if (stride != 0) {
    fn(std::integral_constant<int64_t, 1>{});
  } else {
    fn(std::integral_constant<int64_t, 0>{});
  }
}

// ParallelForEachBroadcastRun with chunks of about 64 KiB of traffic.
template <size_t N, typename Fn>
void ForEachRun(const BroadcastLoop<N>& loop, int64_t bytes_per_element, ThreadPool& pool,
                Fn&& fn) {
  ParallelForEachBroadcastRun(loop, pool, internal::GrainForBytes(bytes_per_element), fn);
}

// A result of the arithmetic type stored as `Out`: f16 and bf16 rounded to nearest
// even (elementwise::Convert), every other type as it is.
template <typename Out, typename V>
Out Narrow(V v) {
  if constexpr (std::is_same_v<Out, elementwise::Half> || std::is_same_v<Out, elementwise::BFloat16>) {
    return elementwise::Convert<Out>(v);
  } else {
    return static_cast<Out>(v);
  }
}

// c = Op(a, b) elementwise over `loop`.
template <typename Op, typename T, typename Out>
void BinaryLoop(const BroadcastLoop<2>& loop, const T* a, const T* b, Out* c, ThreadPool& pool) {
  const std::array<int64_t, 2> inner = loop.inner_strides();
  ForEachRun(loop, 2 * sizeof(T) + sizeof(Out), pool,
             [&](const std::array<int64_t, 2>& in, int64_t out, int64_t n) {
               WithStride(inner[0], [&](auto sa) {
                 WithStride(inner[1], [&](auto sb) {
                   const Run<decltype(sa)::value, T> x(a + in[0]);
                   const Run<decltype(sb)::value, T> y(b + in[1]);
                   Out* z = c + out;
                   for (int64_t j = 0; j < n; ++j) {
                     z[j] = Narrow<Out>(Op::Apply(Widen(x[j]), Widen(y[j])));
                   }
                 });
               });
             });
}

// ---------------------------------------------------------------------------------------
// Operations: the arithmetic ones are kernels/elementwise/binary_ops.h's, shared with
// fused_elementwise; comparisons and logical operations are here.

using elementwise::Add;
using elementwise::Divide;
using elementwise::FloorMod;
using elementwise::Maximum;
using elementwise::Minimum;
using elementwise::Mod;
using elementwise::Multiply;
using elementwise::OpTraits;
using elementwise::Power;
using elementwise::Subtract;

template <typename Cmp, const char* kOpName>
struct Comparison : OpTraits<elementwise::kAllDTypes, /*kBoolOut=*/true> {
  static constexpr const char* kName = kOpName;
  template <typename T>
  static bool Apply(T a, T b) {
    return Cmp()(a, b);
  }
};
constexpr char kEqual[] = "equal";
constexpr char kNotEqual[] = "not_equal";
constexpr char kLess[] = "less";
constexpr char kLessEqual[] = "less_equal";
constexpr char kGreater[] = "greater";
constexpr char kGreaterEqual[] = "greater_equal";

// On bool inputs, which Widen maps to 0 or 1.
template <typename Bits, const char* kOpName>
struct Logical : OpTraits<elementwise::kBool, /*kBoolOut=*/true> {
  static constexpr const char* kName = kOpName;
  template <typename T>
  static T Apply(T a, T b) {
    return Bits()(a, b);
  }
};
constexpr char kLogicalAnd[] = "logical_and";
constexpr char kLogicalOr[] = "logical_or";
constexpr char kLogicalXor[] = "logical_xor";

// Bit shifts of integers, a << b and a >> b (arithmetic for a signed a), as ONNX's
// BitShift: a shift by b outside [0, bits of T) gives 0, or -1 for a negative a shifted
// right, so that no shift is undefined; a left shift wraps.
constexpr elementwise::DTypeSet kIntegers =
    elementwise::Bit(DType::kU8) | elementwise::Bit(DType::kU16) | elementwise::Bit(DType::kU32) |
    elementwise::Bit(DType::kU64) | elementwise::Bit(DType::kI8) | elementwise::Bit(DType::kI16) |
    elementwise::kI32 | elementwise::kI64;

template <bool kLeft, const char* kOpName>
struct Shift : OpTraits<kIntegers> {
  static constexpr const char* kName = kOpName;
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      constexpr int kBits = 8 * sizeof(T);
      const bool in_range = b >= 0 && static_cast<uint64_t>(b) < static_cast<uint64_t>(kBits);
      using U = std::make_unsigned_t<T>;
      if constexpr (kLeft) {
        return in_range ? static_cast<T>(static_cast<U>(static_cast<U>(a) << b)) : T{0};
      } else if constexpr (std::is_signed_v<T>) {
        return in_range ? static_cast<T>(a >> b) : (a < 0 ? T{-1} : T{0});
      } else {
        return in_range ? static_cast<T>(a >> b) : T{0};
      }
    } else {
      return a;  // not instantiated: the dtypes are integers
    }
  }
};
constexpr char kLeftShift[] = "left_shift";
constexpr char kRightShift[] = "right_shift";

// ---------------------------------------------------------------------------------------
// Wrappers and shape functions.

// The broadcast of `shapes`. The error is BroadcastShapes' alone, without the operator's
// name: the VM's message names the kernel already.
absl::StatusOr<Shape> BroadcastAll(std::initializer_list<absl::Span<const int64_t>> shapes) {
  Shape out;
  for (absl::Span<const int64_t> shape : shapes) {
    DYNVM_ASSIGN_OR_RETURN(out, BroadcastShapes(out, shape));
  }
  return out;
}

// Checks the inputs of binary op `Op` and returns the output shape.
template <typename Op>
absl::StatusOr<Shape> BinaryShape(const NDArrayObj& a, const NDArrayObj& b) {
  if (a.dtype() != b.dtype()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: input dtypes differ: %s and %s",
                                                      Op::kName, DTypeName(a.dtype()),
                                                      DTypeName(b.dtype())));
  }
  DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(Op::kName, "input", a, Op::kDTypes));
  return BroadcastAll({a.shape(), b.shape()});
}

template <typename Op>
absl::Status BinaryShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(call.output_shapes[0], BinaryShape<Op>(*call.inputs[0], *call.inputs[1]));
  return absl::OkStatus();
}

template <typename Op>
absl::Status BinaryKernel(const KernelCall& call) {
  const NDArrayObj& a = *call.args[0];
  const NDArrayObj& b = *call.args[1];
  const NDArrayObj& c = *call.args[2];
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, BinaryShape<Op>(a, b));
  DYNVM_RETURN_IF_ERROR(
      internal::CheckOutput(Op::kName, c, Op::kBoolOutput ? DType::kBool : a.dtype(), shape));
  if (c.num_elements() == 0) return absl::OkStatus();
  const BroadcastLoop<2> loop = MakeBroadcastLoop<2>({a.shape(), b.shape()}, shape);
  elementwise::VisitDType(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Contains<T>(Op::kDTypes)) {
      using Out = std::conditional_t<Op::kBoolOutput, uint8_t, T>;
      BinaryLoop<Op>(loop, a.data_as<T>(), b.data_as<T>(), c.data_as<Out>(), *call.pool);
    }
  });
  return absl::OkStatus();
}

absl::StatusOr<Shape> WhereShape(const NDArrayObj& cond, const NDArrayObj& x, const NDArrayObj& y) {
  DYNVM_RETURN_IF_ERROR(internal::CheckDType("where", "condition", cond, DType::kBool));
  if (x.dtype() != y.dtype()) {
    return absl::InvalidArgumentError(absl::StrFormat("where: x and y dtypes differ: %s and %s",
                                                      DTypeName(x.dtype()), DTypeName(y.dtype())));
  }
  return BroadcastAll({cond.shape(), x.shape(), y.shape()});
}

absl::Status WhereShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(call.output_shapes[0],
                         WhereShape(*call.inputs[0], *call.inputs[1], *call.inputs[2]));
  return absl::OkStatus();
}

// out = cond ? x : y, moving elements as unsigned integers of their size.
template <typename U>
void WhereLoop(const BroadcastLoop<3>& loop, const uint8_t* cond, const U* x, const U* y, U* out,
               ThreadPool& pool) {
  const std::array<int64_t, 3> inner = loop.inner_strides();
  ForEachRun(loop, 1 + 3 * sizeof(U), pool,
             [&](const std::array<int64_t, 3>& in, int64_t o, int64_t n) {
               WithStride(inner[0], [&](auto sc) {
                 WithStride(inner[1], [&](auto sx) {
                   WithStride(inner[2], [&](auto sy) {
                     const Run<decltype(sc)::value, uint8_t> c(cond + in[0]);
                     const Run<decltype(sx)::value, U> a(x + in[1]);
                     const Run<decltype(sy)::value, U> b(y + in[2]);
                     U* z = out + o;
                     for (int64_t j = 0; j < n; ++j) z[j] = c[j] != 0 ? a[j] : b[j];
                   });
                 });
               });
             });
}

absl::Status WhereKernel(const KernelCall& call) {
  const NDArrayObj& cond = *call.args[0];
  const NDArrayObj& x = *call.args[1];
  const NDArrayObj& y = *call.args[2];
  const NDArrayObj& out = *call.args[3];
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, WhereShape(cond, x, y));
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput("where", out, x.dtype(), shape));
  if (out.num_elements() == 0) return absl::OkStatus();
  const BroadcastLoop<3> loop = MakeBroadcastLoop<3>({cond.shape(), x.shape(), y.shape()}, shape);
  internal::DispatchElementSize(DTypeSize(x.dtype()), [&](auto tag) {
    using U = decltype(tag);
    WhereLoop<U>(loop, cond.data_as<uint8_t>(), x.data_as<U>(), y.data_as<U>(), out.data_as<U>(),
                 *call.pool);
  });
  return absl::OkStatus();
}

struct BiasAddState {
  int64_t axis;
};

absl::StatusOr<std::shared_ptr<const void>> BindBiasAdd(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"axis"}));
  BiasAddState state;
  DYNVM_ASSIGN_OR_RETURN(state.axis, GetIntAttr(attrs, "axis", 1));
  return std::make_shared<const BiasAddState>(state);
}

// The shape bias broadcasts as: data's rank, bias's extent at the axis, 1 elsewhere.
absl::StatusOr<Shape> BiasShape(const BiasAddState& state, const NDArrayObj& data, const NDArrayObj& bias) {
  constexpr char kName[] = "nn.bias_add";
  if (data.dtype() != bias.dtype()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: data is %s but bias is %s, expected one dtype", kName,
                                                      DTypeName(data.dtype()), DTypeName(bias.dtype())));
  }
  DYNVM_RETURN_IF_ERROR(elementwise::CheckDTypeIn(kName, "data", data, Add::kDTypes));
  DYNVM_ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(kName, state.axis, data.ndim()));
  if (bias.ndim() != 1 || bias.shape()[0] != data.shape()[axis]) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: bias has shape %s, expected [%d] (data %s, axis %d)",
                                                      kName, ShapeToString(bias.shape()), data.shape()[axis],
                                                      ShapeToString(data.shape()), state.axis));
  }
  Shape shape(data.ndim(), 1);
  shape[axis] = bias.shape()[0];
  return shape;
}

absl::Status BiasAddShapeFn(const ShapeCall& call) {
  const auto& state = *static_cast<const BiasAddState*>(call.state);
  DYNVM_RETURN_IF_ERROR(BiasShape(state, *call.inputs[0], *call.inputs[1]).status());
  call.output_shapes[0] = call.inputs[0]->shape();
  return absl::OkStatus();
}

absl::Status BiasAddKernel(const KernelCall& call) {
  const auto& state = *static_cast<const BiasAddState*>(call.state);
  const NDArrayObj& data = *call.args[0];
  const NDArrayObj& bias = *call.args[1];
  const NDArrayObj& out = *call.args[2];
  DYNVM_ASSIGN_OR_RETURN(const Shape bias_shape, BiasShape(state, data, bias));
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput("nn.bias_add", out, data.dtype(), data.shape()));
  if (out.num_elements() == 0) return absl::OkStatus();
  const BroadcastLoop<2> loop = MakeBroadcastLoop<2>({data.shape(), bias_shape}, data.shape());
  elementwise::VisitDType(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (Contains<T>(Add::kDTypes)) {
      BinaryLoop<Add>(loop, data.data_as<T>(), bias.data_as<T>(), out.data_as<T>(), *call.pool);
    }
  });
  return absl::OkStatus();
}

template <typename Op>
KernelDef BinaryDef() {
  return KernelDef{.name = Op::kName,
                   .num_inputs = 2,
                   .num_outputs = 1,
                   .fn = BinaryKernel<Op>,
                   .bind = nullptr,
                   .shape_fn = BinaryShapeFn<Op>};
}

}  // namespace

absl::Status RegisterBinaryKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      BinaryDef<Add>(),
      BinaryDef<Subtract>(),
      BinaryDef<Multiply>(),
      BinaryDef<Divide>(),
      BinaryDef<Maximum>(),
      BinaryDef<Minimum>(),
      BinaryDef<Power>(),
      BinaryDef<Mod>(),
      BinaryDef<FloorMod>(),
      BinaryDef<Comparison<std::equal_to<>, kEqual>>(),
      BinaryDef<Comparison<std::not_equal_to<>, kNotEqual>>(),
      BinaryDef<Comparison<std::less<>, kLess>>(),
      BinaryDef<Comparison<std::less_equal<>, kLessEqual>>(),
      BinaryDef<Comparison<std::greater<>, kGreater>>(),
      BinaryDef<Comparison<std::greater_equal<>, kGreaterEqual>>(),
      BinaryDef<Logical<std::bit_and<>, kLogicalAnd>>(),
      BinaryDef<Logical<std::bit_or<>, kLogicalOr>>(),
      BinaryDef<Logical<std::bit_xor<>, kLogicalXor>>(),
      BinaryDef<Shift<true, kLeftShift>>(),
      BinaryDef<Shift<false, kRightShift>>(),
      KernelDef{.name = "nn.bias_add",
                .num_inputs = 2,
                .num_outputs = 1,
                .fn = BiasAddKernel,
                .bind = BindBiasAdd,
                .shape_fn = BiasAddShapeFn},
      KernelDef{.name = "where",
                .num_inputs = 3,
                .num_outputs = 1,
                .fn = WhereKernel,
                .bind = nullptr,
                .shape_fn = WhereShapeFn},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
