// Elementwise binary kernels with numpy broadcasting: add, subtract, multiply, divide,
// maximum, minimum. Inputs a, b and output c share one dtype (f32, f64, i32, i64); the
// output shape must be the broadcast of the inputs'.
#include "kernels/binary.h"

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/broadcast.h"

namespace dynvm::kernels {
namespace {

struct AddOp { template <typename T> static T Apply(T a, T b) { return a + b; } };
struct SubOp { template <typename T> static T Apply(T a, T b) { return a - b; } };
struct MulOp { template <typename T> static T Apply(T a, T b) { return a * b; } };
struct MaxOp { template <typename T> static T Apply(T a, T b) { return std::max(a, b); } };
struct MinOp { template <typename T> static T Apply(T a, T b) { return std::min(a, b); } };

// Integer arithmetic wraps (two's complement) instead of overflowing, and integer
// division by zero yields 0, so no input makes the kernel undefined.
template <typename T>
T Wrap(auto f, T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
}
template <>
int32_t AddOp::Apply(int32_t a, int32_t b) { return Wrap<int32_t>([](auto x, auto y) { return x + y; }, a, b); }
template <>
int64_t AddOp::Apply(int64_t a, int64_t b) { return Wrap<int64_t>([](auto x, auto y) { return x + y; }, a, b); }
template <>
int32_t SubOp::Apply(int32_t a, int32_t b) { return Wrap<int32_t>([](auto x, auto y) { return x - y; }, a, b); }
template <>
int64_t SubOp::Apply(int64_t a, int64_t b) { return Wrap<int64_t>([](auto x, auto y) { return x - y; }, a, b); }
template <>
int32_t MulOp::Apply(int32_t a, int32_t b) { return Wrap<int32_t>([](auto x, auto y) { return x * y; }, a, b); }
template <>
int64_t MulOp::Apply(int64_t a, int64_t b) { return Wrap<int64_t>([](auto x, auto y) { return x * y; }, a, b); }

struct DivOp {
  template <typename T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0 || (b == -1 && a == std::numeric_limits<T>::min())) return b == 0 ? 0 : a;
    }
    return a / b;
  }
};

// c[i] = Op(a[i'], b[i'']) over the broadcast output, innermost axis in a tight loop.
template <typename Op, typename T>
void BroadcastLoop(const T* a, const T* b, T* c, absl::Span<const int64_t> out_shape,
                   absl::Span<const int64_t> sa, absl::Span<const int64_t> sb) {
  const size_t rank = out_shape.size();
  if (rank == 0) {
    c[0] = Op::Apply(a[0], b[0]);
    return;
  }
  const int64_t inner = out_shape[rank - 1];
  const int64_t ia = sa[rank - 1], ib = sb[rank - 1];
  int64_t outer = 1;
  for (size_t i = 0; i + 1 < rank; ++i) outer *= out_shape[i];
  Shape index(rank, 0);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i + 1 < rank; ++i) {
      oa += index[i] * sa[i];
      ob += index[i] * sb[i];
    }
    const T* pa = a + oa;
    const T* pb = b + ob;
    T* pc = c + o * inner;
    if (ia == 1 && ib == 1) {
      for (int64_t j = 0; j < inner; ++j) pc[j] = Op::Apply(pa[j], pb[j]);
    } else if (ia == 1 && ib == 0) {
      const T vb = pb[0];
      for (int64_t j = 0; j < inner; ++j) pc[j] = Op::Apply(pa[j], vb);
    } else if (ia == 0 && ib == 1) {
      const T va = pa[0];
      for (int64_t j = 0; j < inner; ++j) pc[j] = Op::Apply(va, pb[j]);
    } else {
      for (int64_t j = 0; j < inner; ++j) pc[j] = Op::Apply(pa[j * ia], pb[j * ib]);
    }
    for (size_t i = rank - 1; i-- > 0;) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
}

template <typename Op>
absl::Status BinaryKernel(const KernelCall& call) {
  const NDArrayObj& a = *call.args[0];
  const NDArrayObj& b = *call.args[1];
  const NDArrayObj& c = *call.args[2];
  if (a.dtype() != b.dtype() || a.dtype() != c.dtype()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dtypes differ: %s, %s -> %s", DTypeName(a.dtype()), DTypeName(b.dtype()),
        DTypeName(c.dtype())));
  }
  DYNVM_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(a.shape(), b.shape()));
  if (!std::equal(out_shape.begin(), out_shape.end(), c.shape().begin(), c.shape().end())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "output shape %s, expected %s (broadcast of %s and %s)", ShapeToString(c.shape()),
        ShapeToString(out_shape), ShapeToString(a.shape()), ShapeToString(b.shape())));
  }
  if (c.num_elements() == 0) return absl::OkStatus();
  const Shape sa = BroadcastStrides(a.shape(), out_shape);
  const Shape sb = BroadcastStrides(b.shape(), out_shape);
  switch (a.dtype()) {
    case DType::kF32:
      BroadcastLoop<Op>(a.data_as<float>(), b.data_as<float>(), c.data_as<float>(), out_shape, sa, sb);
      return absl::OkStatus();
    case DType::kF64:
      BroadcastLoop<Op>(a.data_as<double>(), b.data_as<double>(), c.data_as<double>(), out_shape, sa, sb);
      return absl::OkStatus();
    case DType::kI32:
      BroadcastLoop<Op>(a.data_as<int32_t>(), b.data_as<int32_t>(), c.data_as<int32_t>(), out_shape, sa, sb);
      return absl::OkStatus();
    case DType::kI64:
      BroadcastLoop<Op>(a.data_as<int64_t>(), b.data_as<int64_t>(), c.data_as<int64_t>(), out_shape, sa, sb);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrFormat(
          "unsupported dtype %s: expected f32, f64, i32 or i64", DTypeName(a.dtype())));
  }
}

absl::Status BroadcastShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(call.output_shapes[0],
                         BroadcastShapes(call.inputs[0]->shape(), call.inputs[1]->shape()));
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterBinaryKernels(KernelRegistry& registry) {
  const std::pair<const char*, KernelFn> kernels[] = {
      {"add", BinaryKernel<AddOp>},      {"subtract", BinaryKernel<SubOp>},
      {"multiply", BinaryKernel<MulOp>}, {"divide", BinaryKernel<DivOp>},
      {"maximum", BinaryKernel<MaxOp>},  {"minimum", BinaryKernel<MinOp>},
  };
  for (const auto& [name, fn] : kernels) {
    DYNVM_RETURN_IF_ERROR(registry.Register(
        KernelDef{.name = name, .num_inputs = 2, .num_outputs = 1, .fn = fn, .bind = nullptr,
                  .shape_fn = BroadcastShapeFn}));
  }
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
