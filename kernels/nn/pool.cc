// nn.max_pool2d, nn.avg_pool2d and nn.global_avg_pool2d over NCHW data, f32 (max pooling
// also f64, i8, u8, i32 and i64, and with the indices of the maxima when `with_indices`),
// with the semantics of TVM's topi pooling (the Relay operators' implementation):
//
//  - output extent (in + pads - dilation * (pool - 1) - 1 [+ stride - 1 in ceil_mode])
//    / stride + 1: ceil_mode pads the end so that a partial last window still counts;
//  - max: padded positions hold the lowest finite float, so a window that touches
//    padding never yields less than it; NaN inputs are ignored like fmax does;
//  - avg with count_include_pad: the sum over the window divided by its taps inside
//    the explicitly padded input (the ceil_mode extension excluded); without: divided
//    by its taps inside the input. A window with no such tap yields 0.
//
// Each output row accumulates whole input rows: for every tap of the window the outputs
// it reaches form one range, contiguous in the input when the stride is 1, so the inner
// loop is a vectorised max or add over a row. Planes run in parallel. Max pooling of
// other dtypes, or with indices, visits each output's window taps in turn (scalar);
// an index is the maximum's position in the flattened data (ONNX's storage order 0),
// the first one among equal maxima.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/microkernels.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

using nn::WindowAxis;

constexpr std::string_view kMaxPool = "nn.max_pool2d";
constexpr std::string_view kAvgPool = "nn.avg_pool2d";
constexpr std::string_view kGlobalAvgPool = "nn.global_avg_pool2d";

struct PoolState {
  WindowAxis h, w;
  bool ceil_mode = false;
  bool count_include_pad = false;  // avg only
  bool with_indices = false;       // max only: a second, i64 output
};

template <bool kMax>
absl::StatusOr<std::shared_ptr<const void>> BindPool(const Attrs& attrs) {
  if constexpr (kMax) {
    DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"pool_size", "strides", "padding", "dilation",
                                                  "ceil_mode", "layout", "out_layout", "with_indices"}));
  } else {
    DYNVM_RETURN_IF_ERROR(
        CheckKnownAttrs(attrs, {"pool_size", "strides", "padding", "dilation", "ceil_mode",
                                "count_include_pad", "layout", "out_layout"}));
  }
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "layout", "NCHW"));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "out_layout", "NCHW", /*allow_empty=*/true));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> size,
                         nn::GetSpatialAttr(attrs, "pool_size", 2, 1, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                         nn::GetSpatialAttr(attrs, "strides", 2, 1, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> dilation,
                         nn::GetSpatialAttr(attrs, "dilation", 2, 1, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> padding,
                         nn::GetPaddingAttr(attrs, "padding", 2));
  PoolState state;
  state.h = {size[0], strides[0], dilation[0], padding[0], padding[2]};
  state.w = {size[1], strides[1], dilation[1], padding[1], padding[3]};
  DYNVM_ASSIGN_OR_RETURN(state.ceil_mode, GetBoolAttr(attrs, "ceil_mode", false));
  if constexpr (kMax) {
    DYNVM_ASSIGN_OR_RETURN(state.with_indices, GetBoolAttr(attrs, "with_indices", false));
  } else {
    DYNVM_ASSIGN_OR_RETURN(state.count_include_pad,
                           GetBoolAttr(attrs, "count_include_pad", false));
  }
  return std::make_shared<const PoolState>(state);
}

bool IsMaxPoolDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kI8 || dtype == DType::kU8 ||
         dtype == DType::kI32 || dtype == DType::kI64;
}

absl::Status CheckPoolData(std::string_view op, const NDArrayObj& x) {
  if (op == kMaxPool) {
    if (!IsMaxPoolDType(x.dtype())) {
      return internal::UnsupportedDType(op, "data", x.dtype(), "f32, f64, i8, u8, i32 or i64");
    }
  } else {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, "data", x));
  }
  if (x.ndim() != 4) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: data must have rank 4 (NCHW), got shape %s", op, ShapeToString(x.shape())));
  }
  return absl::OkStatus();
}

template <bool kMax>
absl::StatusOr<Shape> PoolOutputShape(const PoolState& s, const NDArrayObj& x) {
  const std::string_view op = kMax ? kMaxPool : kAvgPool;
  DYNVM_RETURN_IF_ERROR(CheckPoolData(op, x));
  DYNVM_ASSIGN_OR_RETURN(const int64_t out_h,
                         nn::WindowOutputSize(op, "height", x.shape()[2], s.h, s.ceil_mode));
  DYNVM_ASSIGN_OR_RETURN(const int64_t out_w,
                         nn::WindowOutputSize(op, "width", x.shape()[3], s.w, s.ceil_mode));
  return Shape{x.shape()[0], x.shape()[1], out_h, out_w};
}

// One output, or two for max pooling with indices.
absl::Status CheckPoolOutputCount(const PoolState& s, int num_outputs) {
  const int expected = s.with_indices ? 2 : 1;
  if (num_outputs != expected) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: expected %d outputs (with_indices %d), got %d", kMaxPool,
                                                      expected, s.with_indices, num_outputs));
  }
  return absl::OkStatus();
}

template <bool kMax>
absl::Status PoolShapeFn(const ShapeCall& call) {
  const auto& s = *static_cast<const PoolState*>(call.state);
  if constexpr (kMax) DYNVM_RETURN_IF_ERROR(CheckPoolOutputCount(s, call.num_outputs));
  DYNVM_ASSIGN_OR_RETURN(call.output_shapes[0], PoolOutputShape<kMax>(s, *call.inputs[0]));
  if (call.num_outputs == 2) call.output_shapes[1] = call.output_shapes[0];
  return absl::OkStatus();
}

// Max pooling one output at a time, for any dtype of IsMaxPoolDType, with the flattened
// index of each maximum when `indices` is not null. As on the vector path, float NaNs
// are skipped (a window of NaNs yields -inf, its index that of its first tap) and a float
// window touching padding yields at least the lowest finite value (padding's). A
// window with no tap inside the data has index -1.
template <typename T>
void MaxPoolTaps(const PoolState& s, const Shape& in_shape, const Shape& out_shape, const T* in, T* out,
                 int64_t* indices, ThreadPool& pool) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr T kInit = kFloat ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  const int64_t in_h = in_shape[2], in_w = in_shape[3], out_h = out_shape[2], out_w = out_shape[3];
  const int64_t planes = out_shape[0] * out_shape[1];
  const int64_t window = s.h.kernel * s.w.kernel;
  pool.ParallelFor(planes, internal::GrainForBytes(sizeof(T) * out_h * out_w * window), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const T* x = in + plane * in_h * in_w;
      for (int64_t oh = 0; oh < out_h; ++oh) {
        int64_t kh_lo, kh_hi;
        nn::ValidTaps(s.h, oh, in_h, &kh_lo, &kh_hi);
        for (int64_t ow = 0; ow < out_w; ++ow) {
          int64_t kw_lo, kw_hi;
          nn::ValidTaps(s.w, ow, in_w, &kw_lo, &kw_hi);
          T best = kInit;
          int64_t at = -1, first = -1;
          for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
            const int64_t h = oh * s.h.stride - s.h.pad_before + kh * s.h.dilation;
            for (int64_t kw = kw_lo; kw < kw_hi; ++kw) {
              const int64_t pos = h * in_w + ow * s.w.stride - s.w.pad_before + kw * s.w.dilation;
              if (first < 0) first = pos;
              if (x[pos] > best || (!kFloat && at < 0)) {
                best = x[pos];
                at = pos;
              }
            }
          }
          if (at < 0) at = first;
          if (kFloat && (kh_hi - kh_lo) * (kw_hi - kw_lo) < window) best = std::max(best, std::numeric_limits<T>::lowest());
          out[(plane * out_h + oh) * out_w + ow] = best;
          if (indices != nullptr) indices[(plane * out_h + oh) * out_w + ow] = at < 0 ? -1 : plane * in_h * in_w + at;
        }
      }
    }
  });
}

// Taps of output `o` inside [-pad_before, in + pad_after): the divisor with
// count_include_pad. The window starts inside that range, so only its end is clipped.
int64_t PaddedTaps(const WindowAxis& w, int64_t o, int64_t in) {
  const int64_t start = o * w.stride - w.pad_before;
  const int64_t last = in + w.pad_after - 1;
  return start > last ? 0 : std::min(w.kernel, (last - start) / w.dilation + 1);
}

// What every plane of a call shares: the geometry and per-column tables.
struct PoolPlan {
  WindowAxis h, w;
  int64_t in_h, in_w, out_h, out_w;
  bool count_include_pad;
  const int64_t* taps_w = nullptr;    // [out_w] taps of each output column inside the input
  const int64_t* padded_w = nullptr;  // [out_w] PaddedTaps of each output column
  const int64_t* ow_lo = nullptr;     // [kernel_w] ValidOutputs of each tap
  const int64_t* ow_hi = nullptr;
};

template <bool kMax>
void PoolPlane(const PoolPlan& p, const Microkernels& uk, const float* in, float* out) {
  constexpr float kInit = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  const int64_t window = p.h.kernel * p.w.kernel;
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    float* row = out + oh * p.out_w;
    std::fill(row, row + p.out_w, kInit);
    int64_t kh_lo, kh_hi;
    nn::ValidTaps(p.h, oh, p.in_h, &kh_lo, &kh_hi);
    for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
      const float* in_row = in + (oh * p.h.stride - p.h.pad_before + kh * p.h.dilation) * p.in_w;
      for (int64_t kw = 0; kw < p.w.kernel; ++kw) {
        const int64_t lo = p.ow_lo[kw], n = p.ow_hi[kw] - lo;
        if (n == 0) continue;
        const float* src = in_row + lo * p.w.stride - p.w.pad_before + kw * p.w.dilation;
        if (p.w.stride == 1) {
          kMax ? uk.nn.vmaxacc(n, src, row + lo) : uk.nn.vaddacc(n, src, row + lo);
        } else {
          for (int64_t i = 0; i < n; ++i) {
            const float v = src[i * p.w.stride];
            row[lo + i] = kMax ? (v > row[lo + i] ? v : row[lo + i]) : row[lo + i] + v;
          }
        }
      }
    }
    const int64_t taps_h = kh_hi - kh_lo;
    if constexpr (kMax) {
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        if (taps_h * p.taps_w[ow] < window) {
          row[ow] = std::max(row[ow], std::numeric_limits<float>::lowest());
        }
      }
    } else {
      const int64_t rows = p.count_include_pad ? PaddedTaps(p.h, oh, p.in_h) : taps_h;
      const int64_t* cols = p.count_include_pad ? p.padded_w : p.taps_w;
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        row[ow] /= static_cast<float>(std::max<int64_t>(1, rows * cols[ow]));
      }
    }
  }
}

absl::Status MaxPoolByTaps(const PoolState& s, const KernelCall& call, const Shape& out_shape) {
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kMaxPool, out, x.dtype(), out_shape));
  int64_t* indices = nullptr;
  if (call.num_outputs == 2) {
    DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kMaxPool, *call.outputs()[1], DType::kI64, out_shape));
    indices = call.outputs()[1]->data_as<int64_t>();
  }
  if (out.num_elements() == 0) return absl::OkStatus();
  const Shape in_shape(x.shape().begin(), x.shape().end());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    MaxPoolTaps<T>(s, in_shape, out_shape, x.data_as<T>(), out.data_as<T>(), indices, *call.pool);
  };
  switch (x.dtype()) {
    case DType::kF32: run(float{}); break;
    case DType::kF64: run(double{}); break;
    case DType::kI8: run(int8_t{}); break;
    case DType::kU8: run(uint8_t{}); break;
    case DType::kI32: run(int32_t{}); break;
    default: run(int64_t{}); break;  // kI64: CheckPoolData admitted no other
  }
  return absl::OkStatus();
}

template <bool kMax>
absl::Status PoolKernel(const KernelCall& call) {
  const PoolState& s = *static_cast<const PoolState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, PoolOutputShape<kMax>(s, x));
  if constexpr (kMax) {
    DYNVM_RETURN_IF_ERROR(CheckPoolOutputCount(s, call.num_outputs));
    if (s.with_indices || x.dtype() != DType::kF32) return MaxPoolByTaps(s, call, out_shape);
  }
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kMax ? kMaxPool : kAvgPool, call, {out_shape}));
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const int64_t planes = out_shape[0] * out_shape[1];
  PoolPlan p{s.h, s.w, x.shape()[2], x.shape()[3], out_shape[2], out_shape[3], s.count_include_pad};

  int64_t* tables = ThreadScratch<int64_t>(ScratchSlot::kCall, 2 * (p.out_w + p.w.kernel));
  int64_t* taps_w = tables;
  int64_t* padded_w = taps_w + p.out_w;
  int64_t* ow_lo = padded_w + p.out_w;
  int64_t* ow_hi = ow_lo + p.w.kernel;
  for (int64_t ow = 0; ow < p.out_w; ++ow) {
    int64_t lo, hi;
    nn::ValidTaps(p.w, ow, p.in_w, &lo, &hi);
    taps_w[ow] = hi - lo;
    padded_w[ow] = PaddedTaps(p.w, ow, p.in_w);
  }
  for (int64_t kw = 0; kw < p.w.kernel; ++kw) {
    nn::ValidOutputs(p.w, kw, p.in_w, p.out_w, &ow_lo[kw], &ow_hi[kw]);
  }
  p.taps_w = taps_w;
  p.padded_w = padded_w;
  p.ow_lo = ow_lo;
  p.ow_hi = ow_hi;

  const Microkernels& uk = GetMicrokernels();
  const float* in = x.data_as<float>();
  float* out = call.outputs()[0]->data_as<float>();
  const int64_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w;
  const int64_t plane_bytes = sizeof(float) * out_plane * p.h.kernel * p.w.kernel;
  call.pool->ParallelFor(planes, internal::GrainForBytes(plane_bytes),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t i = begin; i < end; ++i) {
                             PoolPlane<kMax>(p, uk, in + i * in_plane, out + i * out_plane);
                           }
                         });
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const void>> BindGlobalAvgPool(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"layout", "out_layout"}));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "layout", "NCHW"));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "out_layout", "NCHW", /*allow_empty=*/true));
  return std::shared_ptr<const void>();
}

absl::Status GlobalAvgPoolShapeFn(const ShapeCall& call) {
  const NDArrayObj& x = *call.inputs[0];
  DYNVM_RETURN_IF_ERROR(CheckPoolData(kGlobalAvgPool, x));
  call.output_shapes[0] = {x.shape()[0], x.shape()[1], 1, 1};
  return absl::OkStatus();
}

// The mean of each plane; an empty plane's mean is NaN (0 / 0), as in TVM.
absl::Status GlobalAvgPoolKernel(const KernelCall& call) {
  const NDArrayObj& x = *call.args[0];
  DYNVM_RETURN_IF_ERROR(CheckPoolData(kGlobalAvgPool, x));
  const Shape& s = x.shape();
  const int64_t out_shape[] = {s[0], s[1], 1, 1};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kGlobalAvgPool, call, {out_shape}));
  if (s[0] * s[1] == 0) return absl::OkStatus();  // then the plane's size fits in int64
  const Microkernels& uk = GetMicrokernels();
  const int64_t plane = s[2] * s[3];
  const float* in = x.data_as<float>();
  float* out = call.outputs()[0]->data_as<float>();
  call.pool->ParallelFor(s[0] * s[1], internal::GrainForBytes(sizeof(float) * plane),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t i = begin; i < end; ++i) {
                             const double sum = uk.elementwise.rsum(plane, in + i * plane);
                             out[i] = static_cast<float>(sum / static_cast<double>(plane));
                           }
                         });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterPoolKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kMaxPool),
                                                    .num_inputs = 1,
                                                    .num_outputs = kVariadic,
                                                    .fn = PoolKernel<true>,
                                                    .bind = BindPool<true>,
                                                    .shape_fn = PoolShapeFn<true>}));
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kAvgPool),
                                                    .num_inputs = 1,
                                                    .num_outputs = 1,
                                                    .fn = PoolKernel<false>,
                                                    .bind = BindPool<false>,
                                                    .shape_fn = PoolShapeFn<false>}));
  return registry.Register(KernelDef{.name = std::string(kGlobalAvgPool),
                                     .num_inputs = 1,
                                     .num_outputs = 1,
                                     .fn = GlobalAvgPoolKernel,
                                     .bind = BindGlobalAvgPool,
                                     .shape_fn = GlobalAvgPoolShapeFn});
}

}  // namespace dynvm::kernels
