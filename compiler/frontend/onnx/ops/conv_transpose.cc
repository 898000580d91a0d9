// The converter of ONNX's ConvTranspose (1-D, 2-D and 3-D), as the convolution it is the
// gradient of: the input with stride - 1 zeros inserted between its elements along each
// spatial axis, padded by dilation * (kernel - 1) less the ONNX pads (cropped where that
// is negative, output_padding added at the end), convolved at stride 1 with the kernel
// flipped spatially and its channel axes swapped per group. The kernel's flip and swap
// fold at compile time when it is a constant, as a model's weights are.
//
// Pads follow ONNX: explicit `pads`, or from `output_shape` / `auto_pad` (SAME_UPPER puts
// the odd unit of padding at the end, SAME_LOWER and output_shape at the beginning), with
// the full output extent stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1;
// an output_shape above it gets negative pads, which extend the output. Explicit pads
// within the kernel's reach work over extents known only at run time.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// The ints attribute `name` with `count` entries, or `fallback` of `count` entries.
absl::StatusOr<std::vector<int64_t>> SpatialInts(const NodeContext& ctx, const char* name, size_t count,
                                                 int64_t fallback) {
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> v, ctx.Ints(name, std::vector<int64_t>(count, fallback)));
  if (v.size() != count) {
    return ctx.Invalid(absl::StrFormat("attribute '%s' has %d values for %d spatial axes", name, v.size(), count));
  }
  return v;
}

// `x` sliced to [begin, end) along `axis`.
absl::StatusOr<OnnxValue> SliceAxis(const NodeContext& ctx, const OnnxValue& x, int64_t axis, int64_t begin,
                                    int64_t end) {
  return ctx.Call("strided_slice", {x}, {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                                         {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{axis}}});
}

absl::StatusOr<Values> ConvertConvTranspose(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue weight, ctx.Input(1));
  const int rank = x.type.rank();
  if (rank < 3 || rank > 5) return ctx.Unimplemented("ConvTranspose other than 1-D, 2-D and 3-D");
  if (weight.type.rank() != rank) return ctx.Invalid("W's rank differs from X's");
  const size_t spatial = static_cast<size_t>(rank - 2);
  std::vector<int64_t> w_extents;
  for (const Dim& d : weight.type.shape()) {
    if (!d.is_const()) return ctx.Unimplemented("a kernel whose shape is known only at run time");
    w_extents.push_back(d.const_value());
  }
  std::vector<int64_t> kernel(w_extents.begin() + 2, w_extents.end());
  DYNVM_ASSIGN_OR_RETURN(kernel, ctx.Ints("kernel_shape", kernel));
  if (kernel != std::vector<int64_t>(w_extents.begin() + 2, w_extents.end())) {
    return ctx.Invalid("kernel_shape differs from W's spatial extents");
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, SpatialInts(ctx, "strides", spatial, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> dilations, SpatialInts(ctx, "dilations", spatial, 1));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> output_padding, SpatialInts(ctx, "output_padding", spatial, 0));
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> pads, SpatialInts(ctx, "pads", 2 * spatial, 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t group, ctx.Int("group", 1));
  DYNVM_ASSIGN_OR_RETURN(const std::string auto_pad, ctx.String("auto_pad", "NOTSET"));
  const int64_t in_channels = w_extents[0];
  if (group < 1 || in_channels % group != 0) {
    return ctx.Invalid(absl::StrFormat("group %d does not divide W's %d input channels", group, in_channels));
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || output_padding[i] < 0) {
      return ctx.Invalid("strides and dilations must be positive, output_padding non-negative");
    }
  }

  // The input's spatial extents, where the pads or the zero insertion need them.
  std::vector<int64_t> in(spatial, -1);
  for (size_t i = 0; i < spatial; ++i) {
    if (x.type.shape()[2 + i].is_const()) in[i] = x.type.shape()[2 + i].const_value();
  }
  const bool derived = ctx.HasAttr("output_shape") || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    return ctx.Invalid(absl::StrFormat("auto_pad '%s'", auto_pad));
  }
  if (auto_pad == "VALID") std::fill(pads.begin(), pads.end(), 0);
  if (derived) {
    std::vector<int64_t> out(spatial);
    if (ctx.HasAttr("output_shape")) {
      DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> given, ctx.Ints("output_shape"));
      if (given.size() == spatial + 2) given.erase(given.begin(), given.begin() + 2);
      if (given.size() != spatial) return ctx.Invalid("output_shape does not match the spatial rank");
      out = given;
    }
    for (size_t i = 0; i < spatial; ++i) {
      if (in[i] < 0) return ctx.Unimplemented("output_shape or auto_pad SAME over an extent known only at run time");
      if (!ctx.HasAttr("output_shape")) out[i] = in[i] * strides[i];
      const int64_t full = strides[i] * (in[i] - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1;
      // Negative when the output is larger than the full extent: the pads then extend it.
      // Halved by floor division, as ONNX's reference does.
      const int64_t total = full - out[i];
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      const bool upper = auto_pad == "SAME_UPPER";
      pads[i] = upper ? half : total - half;
      pads[spatial + i] = upper ? total - half : half;
    }
  }

  // The input with stride - 1 zeros between its elements along each spatial axis: an
  // axis of extent s after it, padded with s - 1 zeros and merged into it (the merged
  // shape computed when the model runs, so any extents do), then the trailing s - 1
  // zeros dropped.
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t s = strides[i];
    if (s == 1) continue;
    const int64_t axis = static_cast<int64_t>(2 + i);
    std::vector<Dim> dims = x.type.shape();  // the other axes keep theirs
    dims[axis] = in[i] >= 0 ? Dim((in[i] - 1) * s + 1) : Dim::Any();
    std::vector<int64_t> factors(rank, 1);
    factors[axis] = s;
    DYNVM_ASSIGN_OR_RETURN(OnnxValue shape, ctx.Call("shape_of", {x}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue merged, ctx.Call("multiply", {shape, NodeContext::ConstantI64(factors)}));
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("expand_dims", {x}, {{"axis", axis + 1}, {"num_newaxis", int64_t{1}}}));
    std::vector<int64_t> width(2 * (rank + 1), 0);
    width[2 * (axis + 1) + 1] = s - 1;
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("nn.pad", {x}, {{"pad_width", width}}));
    DYNVM_ASSIGN_OR_RETURN(x, ctx.Call("dyn.reshape", {x, merged}));
    DYNVM_ASSIGN_OR_RETURN(x, SliceAxis(ctx, x, axis, 0, -(s - 1)));
    x = ctx.Narrow(x, Type::Tensor(x.type.dtype(), std::move(dims)));
  }

  // The stride-1 convolution's pads; a negative one crops the input instead.
  std::vector<int64_t> conv_pads(2 * spatial);
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t reach = (kernel[i] - 1) * dilations[i];
    int64_t begin = reach - pads[i], end = reach - pads[spatial + i] + output_padding[i];
    const int64_t axis = static_cast<int64_t>(2 + i);
    if (begin < 0 || end < 0) {
      const Dim& extent = x.type.shape()[axis];
      if (!extent.is_const()) return ctx.Unimplemented("pads beyond the kernel's reach over an extent known only at run time");
      DYNVM_ASSIGN_OR_RETURN(x, SliceAxis(ctx, x, axis, begin < 0 ? -begin : 0,
                                          extent.const_value() + (end < 0 ? end : 0)));
      begin = std::max<int64_t>(begin, 0);
      end = std::max<int64_t>(end, 0);
    }
    conv_pads[i] = begin;
    conv_pads[spatial + i] = end;
  }

  // The kernel flipped along its spatial axes, [Cin, Cout/g, k...] -> [Cout, Cin/g, k...].
  std::vector<int64_t> begin, end, steps, axes;
  for (size_t i = 0; i < spatial; ++i) {
    begin.push_back(kernel[i] - 1);
    end.push_back(-kernel[i] - 1);
    steps.push_back(-1);
    axes.push_back(static_cast<int64_t>(2 + i));
  }
  DYNVM_ASSIGN_OR_RETURN(weight, ctx.Call("strided_slice", {weight}, {{"begin", begin}, {"end", end},
                                                                      {"strides", steps}, {"axes", axes}}));
  std::vector<int64_t> grouped = {group, in_channels / group, w_extents[1]}, swap = {0, 2, 1};
  std::vector<int64_t> regrouped = {group * w_extents[1], in_channels / group};
  for (size_t i = 0; i < spatial; ++i) {
    grouped.push_back(kernel[i]);
    regrouped.push_back(kernel[i]);
    swap.push_back(static_cast<int64_t>(3 + i));
  }
  DYNVM_ASSIGN_OR_RETURN(weight, ctx.Call("reshape", {weight}, {{"newshape", grouped}}));
  DYNVM_ASSIGN_OR_RETURN(weight, ctx.Call("transpose", {weight}, {{"axes", swap}}));
  DYNVM_ASSIGN_OR_RETURN(weight, ctx.Call("reshape", {weight}, {{"newshape", regrouped}}));

  const Window window{kernel, std::vector<int64_t>(spatial, 1), dilations, conv_pads};
  return One(Convolve(ctx, x, weight, ctx.OptionalInput(2), window, group));
}

}  // namespace

void AddConvTransposeConverters(ConverterTable& table) {
  table.insert({{"ConvTranspose",
                 {ConvertConvTranspose,
                  {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads",
                   "strides"}}}});
}

}  // namespace dynvm::compiler::onnx_frontend::ops
