// nn.conv2d (data NCHW, weight OIHW) and nn.conv1d (NCW, OIW), f32, with Relay's
// attributes: strides, padding (1, rank or 2 * rank values), dilation, groups, and the
// optional channels, kernel_size, layouts and out_dtype, which are checked. An optional
// third input is a bias of [out_channels] (Relay adds it with a separate bias_add; here it
// is fused).
//
// Three paths:
//  - depthwise (one input channel per group, groups > 1): a direct loop per output
//    plane, output rows accumulated from whole input rows, contiguous when the stride
//    is 1;
//  - 1x1, stride 1, no padding: the input of a group already is the GEMM's right
//    operand, [in_channels, pixels];
//  - otherwise im2col: for a tile of output pixels, the [in_channels * kh * kw, tile]
//    matrix of input patches (the classic layout: each row is the input image shifted
//    by one tap, so rows are filled by contiguous copies), multiplied by the group's
//    weights [out_channels, in_channels * kh * kw] with GemmF32.
// In NCHW the output channels are the GEMM's rows, so the bias is per row, which the
// GEMM's per-column bias cannot express: the output tile is filled with the bias and
// GemmF32's residual epilogue (which may alias its output) accumulates the product
// onto it. Tiles of about 512 KiB of patches (weights repacked per tile stay cheap) of
// all images and groups run in parallel on the pool.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/deadline.h"
#include "kernels/gemm/flops.h"
#include "kernels/gemm/gemm.h"
#include "kernels/internal/checks.h"
#include "kernels/microkernels.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

using nn::WindowAxis;

// Floats in the patch matrix of one tile: 512 KiB. GemmF32 repacks the weights for every
// tile, so tiles much smaller lose speed (measured: 16K floats run the ResNet 3x3 layer at
// half the rate of 128K); much larger ones leave too few tiles to share between threads.
constexpr int64_t kPatchTileFloats = 128 * 1024;

struct ConvState {
  int rank = 2;  // spatial axes: 1 (conv1d) or 2 (conv2d)
  // Height then width; for conv1d the height axis is the identity window. The kernel
  // extents come from the weight at each call.
  WindowAxis axes[2];
  int64_t groups = 1;
  int64_t channels = 0;              // 0: not given
  std::vector<int64_t> kernel_size;  // empty: not given
};

std::string_view OpName(int rank) { return rank == 1 ? "nn.conv1d" : "nn.conv2d"; }

template <int kRank>
absl::StatusOr<std::shared_ptr<const void>> BindConv(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(
      CheckKnownAttrs(attrs, {"strides", "padding", "dilation", "groups", "channels", "kernel_size",
                              "data_layout", "kernel_layout", "out_layout", "out_dtype"}));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "data_layout", kRank == 1 ? "NCW" : "NCHW"));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "kernel_layout", kRank == 1 ? "OIW" : "OIHW"));
  DYNVM_RETURN_IF_ERROR(nn::CheckLayoutAttr(attrs, "out_layout", kRank == 1 ? "NCW" : "NCHW",
                                            /*allow_empty=*/true));
  DYNVM_ASSIGN_OR_RETURN(const std::string out_dtype, GetStringAttr(attrs, "out_dtype", ""));
  if (!out_dtype.empty() && out_dtype != "float32" && out_dtype != "f32") {
    return absl::InvalidArgumentError(
        absl::StrFormat("unsupported out_dtype '%s': expected float32", out_dtype));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> strides,
                         nn::GetSpatialAttr(attrs, "strides", kRank, 1, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> dilation,
                         nn::GetSpatialAttr(attrs, "dilation", kRank, 1, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> padding,
                         nn::GetPaddingAttr(attrs, "padding", kRank));
  ConvState state;
  state.rank = kRank;
  for (int i = 0; i < kRank; ++i) {
    state.axes[2 - kRank + i] = {.stride = strides[i],
                                 .dilation = dilation[i],
                                 .pad_before = padding[i],
                                 .pad_after = padding[kRank + i]};
  }
  DYNVM_ASSIGN_OR_RETURN(state.groups, GetIntAttr(attrs, "groups", 1));
  DYNVM_ASSIGN_OR_RETURN(state.channels, GetIntAttr(attrs, "channels", 0));
  if (state.groups < 1 || state.groups >= nn::kMaxWindowAttr || state.channels < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attributes 'groups' %d and 'channels' %d must be positive and non-negative", state.groups,
        state.channels));
  }
  if (attrs.contains("kernel_size")) {
    DYNVM_ASSIGN_OR_RETURN(state.kernel_size,
                           nn::GetSpatialAttr(attrs, "kernel_size", kRank, 1, 1));
  }
  return std::make_shared<const ConvState>(std::move(state));
}

// The extents of a call, after checking its inputs.
struct ConvGeometry {
  int rank = 2;
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  WindowAxis h, w;

  int64_t group_in() const { return in_channels / groups; }
  int64_t group_out() const { return out_channels / groups; }
  int64_t pixels() const { return out_h * out_w; }
  // The reduction length of the GEMM: one patch.
  int64_t patch() const { return group_in() * h.kernel * w.kernel; }
  Shape output() const {
    return rank == 1 ? Shape{batch, out_channels, out_w} : Shape{batch, out_channels, out_h, out_w};
  }
};

absl::Status CheckConvWeight(const ConvState& s, const Shape& data, const Shape& weight) {
  const std::string_view op = OpName(s.rank);
  const int64_t channels = data[1], out_channels = weight[0];
  if (weight[1] * s.groups != channels || out_channels % s.groups != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: weight %s does not fit data %s with groups %d: expected [k * %d, %d, ...]", op,
        ShapeToString(weight), ShapeToString(data), s.groups, s.groups, channels / s.groups));
  }
  const Shape kernel(weight.begin() + 2, weight.end());
  if (std::find(kernel.begin(), kernel.end(), 0) != kernel.end()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: weight %s has an empty kernel", op, ShapeToString(weight)));
  }
  if ((s.channels != 0 && s.channels != out_channels) ||
      (!s.kernel_size.empty() && absl::MakeConstSpan(s.kernel_size) != kernel)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: weight %s contradicts attributes channels=%d kernel_size=[%s]", op,
                        ShapeToString(weight), s.channels, absl::StrJoin(s.kernel_size, ", ")));
  }
  return absl::OkStatus();
}

absl::StatusOr<ConvGeometry> CheckConvInputs(const ConvState& s,
                                             absl::Span<NDArrayObj* const> inputs) {
  const std::string_view op = OpName(s.rank);
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(op, static_cast<int>(inputs.size()), {2, 3},
                                            "data, weight and an optional bias"));
  const char* const names[] = {"data", "weight", "bias"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, names[i], *inputs[i]));
  }
  for (int i = 0; i < 2; ++i) {
    if (inputs[i]->ndim() != s.rank + 2) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s must have rank %d (%s), got shape %s", op, names[i], s.rank + 2,
                          i == 0 ? (s.rank == 1 ? "NCW" : "NCHW") : (s.rank == 1 ? "OIW" : "OIHW"),
                          ShapeToString(inputs[i]->shape())));
    }
  }
  const Shape& data = inputs[0]->shape();
  const Shape& weight = inputs[1]->shape();
  DYNVM_RETURN_IF_ERROR(CheckConvWeight(s, data, weight));
  if (inputs.size() == 3) {
    const int64_t bias_shape[] = {weight[0]};
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(op, "bias", *inputs[2], bias_shape));
  }
  ConvGeometry g{.rank = s.rank,
                 .batch = data[0],
                 .in_channels = data[1],
                 .out_channels = weight[0],
                 .groups = s.groups,
                 .in_h = s.rank == 1 ? 1 : data[2],
                 .in_w = data.back(),
                 .h = s.axes[0],
                 .w = s.axes[1]};
  g.h.kernel = s.rank == 1 ? 1 : weight[2];
  g.w.kernel = weight.back();
  DYNVM_ASSIGN_OR_RETURN(g.out_h, nn::WindowOutputSize(op, "height", g.in_h, g.h));
  DYNVM_ASSIGN_OR_RETURN(g.out_w, nn::WindowOutputSize(op, "width", g.in_w, g.w));
  return g;
}

absl::Status ConvShapeFn(const ShapeCall& call) {
  const auto& state = *static_cast<const ConvState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const ConvGeometry g, CheckConvInputs(state, call.input_span()));
  call.output_shapes[0] = g.output();
  return absl::OkStatus();
}

// One output plane of a depthwise convolution: `in` is the input channel's plane, `w`
// the channel's kh x kw taps.
void DepthwisePlane(const ConvGeometry& g, const Microkernels& uk, const float* in,
                    const float* w, float bias, float* out) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    float* row = out + oh * g.out_w;
    std::fill(row, row + g.out_w, bias);
    int64_t kh_lo, kh_hi;
    nn::ValidTaps(g.h, oh, g.in_h, &kh_lo, &kh_hi);
    for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
      const int64_t ih = oh * g.h.stride - g.h.pad_before + kh * g.h.dilation;
      for (int64_t kw = 0; kw < g.w.kernel; ++kw) {
        int64_t lo, hi;
        nn::ValidOutputs(g.w, kw, g.in_w, g.out_w, &lo, &hi);
        if (lo == hi) continue;
        const float* src = in + ih * g.in_w + lo * g.w.stride - g.w.pad_before + kw * g.w.dilation;
        const float tap = w[kh * g.w.kernel + kw];
        if (g.w.stride == 1) {
          uk.nn.vmulcacc(hi - lo, src, tap, row + lo);
        } else {
          for (int64_t i = 0; i < hi - lo; ++i) row[lo + i] += src[i * g.w.stride] * tap;
        }
      }
    }
  }
}

void Depthwise(const ConvGeometry& g, const float* in, const float* weight, const float* bias,
               float* out, ThreadPool& pool) {
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.pixels();
  const int64_t taps = g.h.kernel * g.w.kernel;
  const Microkernels& uk = GetMicrokernels();
  pool.ParallelFor(
      g.batch * g.out_channels, internal::GrainForBytes(sizeof(float) * out_plane * taps),
      [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end && !KernelDeadlinePassed(); ++p) {  // a stopped run leaves the rest
          const int64_t n = p / g.out_channels, o = p % g.out_channels;
          const int64_t c = o / g.group_out();  // the group's one input channel
          DepthwisePlane(g, uk, in + (n * g.in_channels + c) * in_plane, weight + o * taps,
                         bias != nullptr ? bias[o] : 0.0f, out + p * out_plane);
        }
      });
}

// Fills the patch matrix `col` ([patch, count], row stride `count`) for output pixels
// [p0, p0 + count) of one group's input `in` ([group_in, in_h, in_w]).
void Im2colTile(const ConvGeometry& g, const float* in, int64_t p0, int64_t count, float* col) {
  for (int64_t c = 0; c < g.group_in(); ++c) {
    const float* plane = in + c * g.in_h * g.in_w;
    for (int64_t kh = 0; kh < g.h.kernel; ++kh) {
      for (int64_t kw = 0; kw < g.w.kernel; ++kw) {
        float* dst = col + ((c * g.h.kernel + kh) * g.w.kernel + kw) * count;
        int64_t ow_lo, ow_hi;
        nn::ValidOutputs(g.w, kw, g.in_w, g.out_w, &ow_lo, &ow_hi);
        // One segment per output row the tile touches.
        for (int64_t p = p0; p < p0 + count;) {
          const int64_t oh = p / g.out_w, ow0 = p % g.out_w;
          const int64_t ow1 = std::min(g.out_w, ow0 + (p0 + count - p));
          float* d = dst + (p - p0);  // output pixel (oh, ow0)
          const int64_t ih = oh * g.h.stride - g.h.pad_before + kh * g.h.dilation;
          // Valid taps read [lo, hi); the rest of the segment is padding.
          const int64_t lo = ih < 0 || ih >= g.in_h ? ow1 : std::clamp(ow_lo, ow0, ow1);
          const int64_t hi = std::clamp(ow_hi, lo, ow1);
          std::fill(d, d + (lo - ow0), 0.0f);
          if (lo < hi) {
            const float* s =
                plane + ih * g.in_w + lo * g.w.stride - g.w.pad_before + kw * g.w.dilation;
            float* v = d + (lo - ow0);
            if (g.w.stride == 1) {
              std::memcpy(v, s, (hi - lo) * sizeof(float));
            } else {
              for (int64_t i = 0; i < hi - lo; ++i) v[i] = s[i * g.w.stride];
            }
          }
          std::fill(d + (hi - ow0), d + (ow1 - ow0), 0.0f);
          p += ow1 - ow0;
        }
      }
    }
  }
}

void Im2colGemm(const ConvGeometry& g, const float* in, const float* weight, const float* bias,
                float* out, ThreadPool& pool) {
  const int64_t pixels = g.pixels(), patch = g.patch(), group_out = g.group_out();
  const bool pointwise = g.h.kernel == 1 && g.w.kernel == 1 && g.h.stride == 1 && g.w.stride == 1 &&
                         g.h.pad_before == 0 && g.h.pad_after == 0 && g.w.pad_before == 0 &&
                         g.w.pad_after == 0;
  const int64_t tile = std::min(
      pixels, std::max<int64_t>(16, kPatchTileFloats / std::max<int64_t>(patch, 1) / 16 * 16));
  const int64_t tiles = (pixels + tile - 1) / tile;
  pool.ParallelFor(g.batch * g.groups * tiles, /*grain=*/1, [&](int64_t begin, int64_t end) {
    float* col =
        pointwise ? nullptr : ThreadScratch<float>(ScratchSlot::kTask, patch * tile);
    for (int64_t t = begin; t < end && !KernelDeadlinePassed(); ++t) {  // a stopped run leaves the rest
      const int64_t n = t / (g.groups * tiles), group = t / tiles % g.groups;
      const int64_t p0 = t % tiles * tile, count = std::min(tile, pixels - p0);
      const float* in_group = in + (n * g.in_channels + group * g.group_in()) * g.in_h * g.in_w;
      float* c = out + (n * g.out_channels + group * group_out) * pixels + p0;
      GemmArgs args{.m = group_out,
                    .n = count,
                    .k = patch,
                    .a = weight + group * group_out * patch,
                    .lda = patch,
                    .b = in_group + p0,
                    .ldb = pixels,
                    .c = c,
                    .ldc = pixels};
      if (!pointwise) {
        Im2colTile(g, in_group, p0, count, col);
        args.b = col;
        args.ldb = count;
      }
      if (bias != nullptr) {
        for (int64_t i = 0; i < group_out; ++i) {
          std::fill(c + i * pixels, c + i * pixels + count, bias[group * group_out + i]);
        }
        args.residual = c;
        args.ldr = pixels;
      }
      GemmF32(args, pool);
    }
  });
}

absl::Status ConvKernel(const KernelCall& call) {
  const auto& state = *static_cast<const ConvState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const ConvGeometry g, CheckConvInputs(state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(OpName(state.rank), call, {g.output()}));
  // From here every output extent is at least 1, so the output's products fit, and so do
  // the weight's (it has out_channels >= 1 filters of `patch` elements).
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const float* in = call.args[0]->data_as<float>();
  const float* weight = call.args[1]->data_as<float>();
  const float* bias = call.num_inputs == 3 ? call.args[2]->data_as<float>() : nullptr;
  float* out = call.outputs()[0]->data_as<float>();
  if (g.group_in() == 1 && g.groups > 1) {
    Depthwise(g, in, weight, bias, out, *call.pool);
  } else {
    Im2colGemm(g, in, weight, bias, out, *call.pool);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterConvKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(OpName(1)),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 1,
                                                    .fn = ConvKernel,
                                                    .bind = BindConv<1>,
                                                    .shape_fn = ConvShapeFn,
                                                    .flops = ConvFlops}));
  return registry.Register(KernelDef{.name = std::string(OpName(2)),
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = ConvKernel,
                                     .bind = BindConv<2>,
                                     .shape_fn = ConvShapeFn,
                                     .flops = ConvFlops});
}

}  // namespace dynvm::kernels
