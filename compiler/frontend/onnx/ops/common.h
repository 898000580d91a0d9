// What the ONNX operator converters (compiler/frontend/onnx/ops/*.cc, one file per
// family) share, and how each family adds its converters to the table of converters.h.
#ifndef DYNVM_COMPILER_FRONTEND_ONNX_OPS_COMMON_H_
#define DYNVM_COMPILER_FRONTEND_ONNX_OPS_COMMON_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/onnx/converters.h"
#include "compiler/ir/module.h"
#include "kernels/kernel.h"

namespace dynvm::compiler::onnx_frontend::ops {

using Values = std::vector<OnnxValue>;
using ConverterTable = absl::flat_hash_map<std::string_view, ConverterDef>;

// One value, or the error.
absl::StatusOr<Values> One(absl::StatusOr<OnnxValue> v);

// An operator name as a template argument, so that one converter serves a family.
template <size_t N>
struct OpName {
  constexpr OpName(const char (&s)[N]) { std::copy_n(s, N, name); }  // NOLINT
  char name[N];
  constexpr std::string_view view() const { return {name, N - 1}; }
};

// `axis` in [-rank, rank) made non-negative; InvalidArgument naming the node otherwise.
absl::StatusOr<int> NormalizeAxis(const NodeContext& ctx, int64_t axis, int rank);

// Relay's `axis` attribute of several axes.
kernels::Attrs AxesAttr(const std::vector<int64_t>& axes);

// A rank-1 i64 value with known elements as an operand: the constant when every element
// is one, else the value's own run-time expression.
OnnxValue ShapeOperand(const OnnxValue& v);

// A tensor type of `t`'s dtype and rank whose extents are all `?`: what a loop-carried
// value may become from one iteration to the next, and a sequence's element type.
Type AnyExtents(const Type& t);

// The axes of Squeeze/Unsqueeze/Reduce*: an attribute before opset `input_since`, an
// optional input (number `input_index`, which must be known at compile time) from then
// on; nothing when absent.
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(NodeContext& ctx, int64_t input_since,
                                                          int input_index = 1);

// The extent of `x` at `axis` (non-negative) as a 0-d i64 value: a constant where the
// type knows it, else read from shape_of(x) at run time (its `elements` hold the
// symbolic extent).
absl::StatusOr<OnnxValue> ExtentOf(const NodeContext& ctx, const OnnxValue& x, int axis);

// [0, 1, ..., n - 1] as i64 for a 0-d i64 `n` whose value is `extent` (Dim::Any() when
// unknown); the result is typed [extent].
absl::StatusOr<OnnxValue> Iota(const NodeContext& ctx, const OnnxValue& n, const Dim& extent);

// The attributes of a window over the spatial axes of a tensor (rank 2 + spatial):
// kernel extents, strides, dilations and pads ([begins..., ends...], ONNX's order, which
// is Relay's [top, left, bottom, right] in 2-D).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;
};

// The convolution of `x` [N, C, spatial...] (1-D, 2-D or 3-D) by `weight` (plus `bias`)
// over window `w` in `group` groups: nn.conv1d or nn.conv2d, or, in 3-D, 2-D ones per
// depth tap (nn.cc).
absl::StatusOr<OnnxValue> Convolve(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& weight,
                                   const std::optional<OnnxValue>& bias, const Window& w, int64_t group);

// ONNX's Conv of `x` [N, C, L], [N, C, H, W] or [N, C, D, H, W] by `weight` (plus `bias`) with the node's
// kernel_shape, strides, dilations, pads, auto_pad and group attributes (nn.cc).
absl::StatusOr<OnnxValue> Convolution(const NodeContext& ctx, const OnnxValue& x, const OnnxValue& weight,
                                      const std::optional<OnnxValue>& bias);

// `x` as `dtype`: x itself when it has that dtype, else a cast.
absl::StatusOr<OnnxValue> CastTo(const NodeContext& ctx, const OnnxValue& x, DType dtype);

// Each family's converters, added to `table` under their ONNX operator names.
void AddElementwiseConverters(ConverterTable& table);
void AddShapeConverters(ConverterTable& table);
void AddDataMovementConverters(ConverterTable& table);
void AddNnConverters(ConverterTable& table);
void AddLossConverters(ConverterTable& table);
void AddEinsumConverters(ConverterTable& table);
void AddConvTransposeConverters(ConverterTable& table);
void AddResizeConverters(ConverterTable& table);
void AddControlFlowConverters(ConverterTable& table);
void AddRecurrentConverters(ConverterTable& table);
void AddSequenceConverters(ConverterTable& table);
void AddOptionalConverters(ConverterTable& table);
void AddQuantizeConverters(ConverterTable& table);
void AddSignalConverters(ConverterTable& table);
void AddIndexingConverters(ConverterTable& table);
void AddTrainingConverters(ConverterTable& table);
void AddDetectionConverters(ConverterTable& table);
void AddTextConverters(ConverterTable& table);

// Whether `op_type` is one of the sequence operators, whose converters call the
// functions of the sequence prelude.
bool IsSequenceOperator(std::string_view op_type);

// The List ADT and the functions the sequence converters call (@seq_length, @seq_at,
// @seq_insert, @seq_erase), as a module to merge into one whose graph uses sequences.
absl::StatusOr<Module> SequencePrelude();

// The type of a sequence of `element`s: the prelude's List[element] with every extent of
// `element` made `?` (a sequence's elements share a dtype and rank, not their extents).
Type SequenceOf(const Type& element);

// Whether `op_type` is one of the optional operators, whose converters call the
// functions of the optional prelude.
bool IsOptionalOperator(std::string_view op_type);

// The Optional ADT and the functions the optional converters call (@opt_has, @opt_get).
absl::StatusOr<Module> OptionalPrelude();

// The type of an optional holding a `held`.
Type OptionalOf(const Type& held);

}  // namespace dynvm::compiler::onnx_frontend::ops

#endif  // DYNVM_COMPILER_FRONTEND_ONNX_OPS_COMMON_H_
