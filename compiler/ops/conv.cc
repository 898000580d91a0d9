// Relations of the convolution family (kernels/nn/conv.cc, pool.cc, resize.cc), NCHW
// (NCW). Attributes are read by the kernels' own parsers (kernels/nn/common.h), so both
// accept the same spellings; the window arithmetic is redone over symbolic dims:
//   out = (in + pad_before + pad_after - dilation * (kernel - 1) - 1
//          [+ stride - 1 with ceil_mode]) / stride + 1
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"
#include "kernels/nn/common.h"

namespace dynvm::compiler::internal {
namespace {

constexpr DType kF32[] = {DType::kF32};

// Windows along the `rank` spatial axes, from the attributes.
struct Windows {
  std::vector<int64_t> kernel, strides, dilation, padding;  // padding: befores, then afters
};

absl::StatusOr<Windows> WindowAttrs(const OpCall& call, int rank, std::string_view kernel_attr) {
  Windows w;
  const auto wrap = [&](auto result) -> decltype(result) {
    if (!result.ok()) return OpError(call, result.status().message());
    return result;
  };
  if (!kernel_attr.empty()) {
    DYNVM_ASSIGN_OR_RETURN(w.kernel, wrap(kernels::nn::GetSpatialAttr(call.attrs, kernel_attr, rank, 1, 1)));
  }
  DYNVM_ASSIGN_OR_RETURN(w.strides, wrap(kernels::nn::GetSpatialAttr(call.attrs, "strides", rank, 1, 1)));
  DYNVM_ASSIGN_OR_RETURN(w.dilation, wrap(kernels::nn::GetSpatialAttr(call.attrs, "dilation", rank, 1, 1)));
  DYNVM_ASSIGN_OR_RETURN(w.padding, wrap(kernels::nn::GetPaddingAttr(call.attrs, "padding", rank)));
  return w;
}

absl::StatusOr<Dim> WindowOutput(const OpCall& call, const Dim& in, const Dim& kernel, int64_t stride,
                                 int64_t dilation, int64_t before, int64_t after, bool ceil_mode) {
  const Dim span = in + before + after - (kernel - 1) * dilation - 1;
  if (span.is_const() && span.const_value() < 0) {
    return OpError(call, absl::StrFormat("the window (kernel %s, dilation %d) does not fit the padded "
                                         "input of extent %s", kernel.ToString(), dilation,
                                         (in + before + after).ToString()));
  }
  return FloorDiv(span + (ceil_mode ? stride - 1 : 0), stride) + 1;
}

absl::Status CheckLayout(const OpCall& call, std::string_view name, std::string_view expected,
                         bool allow_empty = false) {
  const absl::Status s = kernels::nn::CheckLayoutAttr(call.attrs, name, expected, allow_empty);
  return s.ok() ? s : OpError(call, s.message());
}

// data [N, C, spatial...], weight [O, C / groups, kernel...] [, bias [O]].
template <int kRank>
absl::StatusOr<Type> ConvRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "data_layout", kRank == 1 ? "NCW" : "NCHW"));
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "kernel_layout", kRank == 1 ? "OIW" : "OIHW"));
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "out_layout", kRank == 1 ? "NCW" : "NCHW", true));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type w, TensorArg(call, 1, "weight", kF32));
  if (x.rank() != kRank + 2 || w.rank() != kRank + 2) {
    return OpError(call, absl::StrFormat("data %s and weight %s must have rank %d", ShapeText(x.shape()),
                                         ShapeText(w.shape()), kRank + 2));
  }
  DYNVM_ASSIGN_OR_RETURN(const Windows win, WindowAttrs(call, kRank, ""));
  DYNVM_ASSIGN_OR_RETURN(const int64_t groups, IntAttr(call, "groups", 1));
  DYNVM_ASSIGN_OR_RETURN(const int64_t channels, IntAttr(call, "channels", 0));
  if (groups < 1 || channels < 0) return OpError(call, "attributes 'groups' and 'channels' must be positive");
  const Dim& out_channels = w.shape()[0];
  if (!MayEqual(w.shape()[1] * groups, x.shape()[1]) ||
      (out_channels.is_const() && out_channels.const_value() % groups != 0)) {
    return OpError(call, absl::StrFormat("weight %s does not fit data %s with groups %d",
                                         ShapeText(w.shape()), ShapeText(x.shape()), groups));
  }
  std::vector<int64_t> kernel_size;
  if (HasAttr(call, "kernel_size")) {
    absl::StatusOr<std::vector<int64_t>> k = kernels::nn::GetSpatialAttr(call.attrs, "kernel_size", kRank, 1, 1);
    if (!k.ok()) return OpError(call, k.status().message());
    kernel_size = *k;
  }
  for (int i = 0; i < kRank; ++i) {
    const Dim& k = w.shape()[2 + i];
    if ((k.is_const() && k.const_value() == 0) || (!kernel_size.empty() && !MayEqual(k, kernel_size[i]))) {
      return OpError(call, absl::StrFormat("weight %s has an empty kernel or contradicts kernel_size",
                                           ShapeText(w.shape())));
    }
  }
  if (channels != 0 && !MayEqual(out_channels, channels)) {
    return OpError(call, absl::StrFormat("weight %s contradicts attribute channels=%d", ShapeText(w.shape()), channels));
  }
  if (call.args.size() == 3) {
    DYNVM_ASSIGN_OR_RETURN(const Type bias, TensorArg(call, 2, "bias", kF32));
    if (bias.rank() != 1 || !MayEqual(bias.shape()[0], out_channels)) {
      return OpError(call, absl::StrFormat("bias has shape %s, expected [%s]", ShapeText(bias.shape()),
                                           out_channels.ToString()));
    }
  }
  std::vector<Dim> out = {x.shape()[0], out_channels};
  for (int i = 0; i < kRank; ++i) {
    DYNVM_ASSIGN_OR_RETURN(Dim d, WindowOutput(call, x.shape()[2 + i], w.shape()[2 + i], win.strides[i],
                                               win.dilation[i], win.padding[i], win.padding[kRank + i],
                                               /*ceil_mode=*/false));
    out.push_back(std::move(d));
  }
  return Type::Tensor(DType::kF32, std::move(out));
}

// nn.max_pool2d (f32, f64, i8, u8, i32 or i64; with `with_indices`, the tuple of the
// maxima and their i64 indices) and nn.avg_pool2d (f32).
template <bool kMax>
absl::StatusOr<Type> PoolRel(const OpCall& call) {
  static constexpr DType kMaxDTypes[] = {DType::kF32, DType::kF64, DType::kI8, DType::kU8, DType::kI32, DType::kI64};
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "layout", "NCHW"));
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "out_layout", "NCHW", true));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kMax ? absl::Span<const DType>(kMaxDTypes) : kF32));
  if (x.rank() != 4) return OpError(call, absl::StrFormat("data %s must have rank 4 (NCHW)", ShapeText(x.shape())));
  DYNVM_ASSIGN_OR_RETURN(const Windows win, WindowAttrs(call, 2, "pool_size"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t ceil_mode, IntAttr(call, "ceil_mode", 0));
  std::vector<Dim> out = {x.shape()[0], x.shape()[1]};
  for (int i = 0; i < 2; ++i) {
    DYNVM_ASSIGN_OR_RETURN(Dim d, WindowOutput(call, x.shape()[2 + i], win.kernel[i], win.strides[i],
                                               win.dilation[i], win.padding[i], win.padding[2 + i],
                                               ceil_mode != 0));
    out.push_back(std::move(d));
  }
  const Type values = Type::Tensor(x.dtype(), out);
  if (kMax) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t with_indices, IntAttr(call, "with_indices", 0));
    if (with_indices != 0) return Type::Tuple({values, Type::Tensor(DType::kI64, std::move(out))});
  }
  return values;
}

absl::StatusOr<Type> GlobalPoolRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "layout", "NCHW"));
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "out_layout", "NCHW", true));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  if (x.rank() != 4) return OpError(call, absl::StrFormat("data %s must have rank 4 (NCHW)", ShapeText(x.shape())));
  return Type::Tensor(DType::kF32, {x.shape()[0], x.shape()[1], 1, 1});
}

// The roi of image.resize2d and dyn.image.resize2d, their optional last argument `i`:
// f32 [8], ONNX's starts and ends along N, C, H, W, which tf_crop_and_resize needs.
absl::Status CheckResizeRoi(const OpCall& call, int i) {
  if (static_cast<int>(call.args.size()) <= i) {
    DYNVM_ASSIGN_OR_RETURN(const std::string mode,
                           kernels::GetStringAttr(call.attrs, "coordinate_transformation_mode", ""));
    if (mode != "tf_crop_and_resize") return absl::OkStatus();
    return OpError(call, "coordinate_transformation_mode 'tf_crop_and_resize' needs the roi, a last argument");
  }
  DYNVM_ASSIGN_OR_RETURN(const Type roi, TensorArg(call, i, "roi", kF32));
  if (roi.rank() != 1 || !MayEqual(roi.shape()[0], Dim(8))) {
    return OpError(call, absl::StrFormat("the roi must hold 8 values (starts and ends along N, C, H, W), got %s",
                                         roi.ToString()));
  }
  return absl::OkStatus();
}

// image.resize2d(data[, roi]).
absl::StatusOr<Type> ResizeRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "layout", "NCHW"));
  DYNVM_RETURN_IF_ERROR(CheckResizeRoi(call, 1));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  if (x.rank() != 4) return OpError(call, absl::StrFormat("data %s must have rank 4 (NCHW)", ShapeText(x.shape())));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> size, IntsAttr(call, "size", {}));
  if (size.size() != 2 || size[0] < 0 || size[1] < 0) {
    return OpError(call, absl::StrFormat("attribute 'size' must be [height, width], got %s",
                                         ShapeText({size.begin(), size.end()})));
  }
  // An output with elements needs an input image with some.
  const Dim area = x.shape()[2] * x.shape()[3], planes = x.shape()[0] * x.shape()[1];
  if (area.is_const() && area.const_value() == 0 && size[0] * size[1] > 0 &&
      !(planes.is_const() && planes.const_value() == 0)) {
    return OpError(call, absl::StrFormat("cannot resize the empty image %s to [%d, %d]",
                                         ShapeText(x.shape()), size[0], size[1]));
  }
  return Type::Tensor(DType::kF32, {x.shape()[0], x.shape()[1], size[0], size[1]});
}

// dyn.image.resize2d(data, target[, roi]): the target ONNX's sizes (i64 [4]) or scales
// (f32 [4]), read at run time; N and C stay, H and W are `?`.
absl::StatusOr<Type> DynResizeRel(const OpCall& call) {
  static constexpr DType kTarget[] = {DType::kI64, DType::kF32};
  DYNVM_RETURN_IF_ERROR(CheckLayout(call, "layout", "NCHW"));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  if (x.rank() != 4) return OpError(call, absl::StrFormat("data %s must have rank 4 (NCHW)", ShapeText(x.shape())));
  DYNVM_ASSIGN_OR_RETURN(const Type target, TensorArg(call, 1, "target", kTarget));
  if (target.rank() != 1 || (target.shape()[0].is_const() && target.shape()[0] != Dim(4))) {
    return OpError(call, absl::StrFormat("the target must hold 4 values (N, C, H, W), got %s", target.ToString()));
  }
  DYNVM_RETURN_IF_ERROR(CheckResizeRoi(call, 2));
  return Type::Tensor(DType::kF32, {x.shape()[0], x.shape()[1], Dim::Any(), Dim::Any()});
}

constexpr OpDef kOps[] = {
    {"nn.conv2d", 2, 3, ConvRel<2>},
    {"nn.conv1d", 2, 3, ConvRel<1>},
    {"nn.max_pool2d", 1, 1, PoolRel<true>},
    {"nn.avg_pool2d", 1, 1, PoolRel<false>},
    {"nn.global_avg_pool2d", 1, 1, GlobalPoolRel},
    {"image.resize2d", 1, 2, ResizeRel},
    {"dyn.image.resize2d", 2, 3, DynResizeRel},
};

}  // namespace

absl::Span<const OpDef> ConvOps() { return kOps; }

}  // namespace dynvm::compiler::internal
