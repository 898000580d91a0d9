// Converters of ONNX's signal operators (opset 17): HannWindow, HammingWindow and
// BlackmanWindow, DFT, STFT and MelWeightMatrix, composed from arange, the elementwise
// operators and nn.matmul. Every length (a window's size, dft_length, frame_step,
// frame_length, num_mel_bins) may arrive as a tensor at run time: the extents it decides
// are `?` then, and constants where the importer knows it.
//
// The windows are the cosine sums of ONNX's function bodies, in f32:
//
//   w[n] = a0 - a1 cos(2πn / N) + a2 cos(4πn / N)     (N = size, or size - 1 when symmetric)
//
// DFT is a product with twiddle tables built at run time. Along its axis, of extent N, with
// length L (dft_length, else N) and K = L bins (L / 2 + 1 when onesided),
//
//   C[n, k] = cos(2π ((n k) mod L) / L),  S[n, k] = sin(...)     (rows n >= L zero)
//   P = x · C,  Q = x · S                  (x: [..., c, N], c = 1 real or 2 complex)
//   re = P_re + s Q_im,  im = P_im - s Q_re          (s = 1, or -1 and C, S / L when inverse)
//
// so that truncating to L samples or zero-padding up to L needs no copy of the signal.
// The angle is reduced to a quadrant in integers first, so that a twiddle factor of 0 or
// ±1 is exact (a DFT's structural zeros stay zero); the tables and products are f32, and
// another float input is cast to f32 and back. STFT takes its frames with one take of a
// [frames, frame_length] index table, applies the window and runs that DFT along the frame
// axis. MelWeightMatrix computes its triangular filters in f64, as ONNX's reference does.
#include <cstdint>
#include <numbers>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "compiler/frontend/onnx/tensor_proto.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// A scalar constant of a float or integer `dtype` (ConstantScalarOf fails only for strings).
OnnxValue Scalar(DType dtype, double value) { return *NodeContext::ConstantScalarOf(dtype, value); }

OnnxValue I64(int64_t value) { return NodeContext::ConstantI64({value}, /*scalar=*/true); }

// A 1-D `v` [n] as the column [n, 1].
absl::StatusOr<OnnxValue> AsColumn(const NodeContext& ctx, const OnnxValue& v) {
  return ctx.Call("expand_dims", {v}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}});
}

// The value of a 0-d i64 `v` as a Dim: its constant or symbolic element, else `?`.
Dim ScalarDim(const OnnxValue& v) {
  return v.elements && v.elements->size() == 1 ? (*v.elements)[0] : Dim::Any();
}

// Input `i`, an int32 or int64 scalar, as a 0-d i64 that keeps its known value.
absl::StatusOr<OnnxValue> IntScalarInput(const NodeContext& ctx, int i, std::string_view what) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(i));
  if (v.type.rank() != 0 || (v.type.dtype() != DType::kI32 && v.type.dtype() != DType::kI64)) {
    return ctx.Invalid(absl::StrFormat("%s must be an int32 or int64 scalar, got %s", what, v.type.ToString()));
  }
  std::optional<std::vector<Dim>> elements = v.elements;
  DYNVM_ASSIGN_OR_RETURN(OnnxValue out, CastTo(ctx, v, DType::kI64));
  out.elements = std::move(elements);
  return out;
}

// Input `i`, a float scalar, as a 0-d f64.
absl::StatusOr<OnnxValue> FloatScalarInput(const NodeContext& ctx, int i, std::string_view what) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(i));
  const DType dtype = v.type.dtype();
  if (v.type.rank() != 0 || (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kF16 &&
                             dtype != DType::kBF16)) {
    return ctx.Invalid(absl::StrFormat("%s must be a float scalar, got %s", what, v.type.ToString()));
  }
  return CastTo(ctx, v, DType::kF64);
}

// The dtype attribute `output_datatype` (an ONNX TensorProto.DataType, FLOAT by default).
absl::StatusOr<DType> OutputDType(const NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t code, ctx.Int("output_datatype", onnx::TensorProto::FLOAT));
  absl::StatusOr<DType> dtype = DTypeFromOnnx(static_cast<int32_t>(code));
  if (!dtype.ok()) {
    const std::string message = absl::StrFormat("attribute 'output_datatype': %s", dtype.status().message());
    return absl::IsUnimplemented(dtype.status()) ? ctx.Unimplemented(message) : ctx.Invalid(message);
  }
  if (*dtype == DType::kString || *dtype == DType::kBool) {
    return ctx.Invalid(absl::StrFormat("attribute 'output_datatype' is %d: expected a numeric type", code));
  }
  return *dtype;
}

// Fails when the known value of the 0-d `v` (a length named `what`) is below `least`.
absl::Status CheckAtLeast(const NodeContext& ctx, const OnnxValue& v, int64_t least, std::string_view what) {
  const Dim d = ScalarDim(v);
  if (d.is_const() && d.const_value() < least) {
    return ctx.Invalid(absl::StrFormat("%s is %d: expected %d or more", what, d.const_value(), least));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Windows

// The coefficients of a cosine-sum window, as ONNX's function bodies give them.
struct CosineSum {
  double a0, a1, a2;
};
constexpr CosineSum kHann = {0.5, 0.5, 0.0};
constexpr CosineSum kHamming = {0.54347826087, 0.45652173913, 0.0};  // 25/46, 21/46
constexpr CosineSum kBlackman = {0.42, 0.5, 0.08};

template <const CosineSum& kWindow>
absl::StatusOr<Values> ConvertWindow(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue size, IntScalarInput(ctx, 0, "the size"));
  DYNVM_RETURN_IF_ERROR(CheckAtLeast(ctx, size, 1, "the size"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t periodic, ctx.Int("periodic", 1));
  if (periodic != 0 && periodic != 1) {
    return ctx.Invalid(absl::StrFormat("attribute 'periodic' is %d: expected 0 or 1", periodic));
  }
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, OutputDType(ctx));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue n, Iota(ctx, size, ScalarDim(size)));
  DYNVM_ASSIGN_OR_RETURN(n, CastTo(ctx, n, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue period, CastTo(ctx, size, DType::kF32));
  if (periodic == 0) {
    DYNVM_ASSIGN_OR_RETURN(period, ctx.Call("subtract", {period, Scalar(DType::kF32, 1)}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue step, ctx.Call("divide", {Scalar(DType::kF32, 2 * std::numbers::pi), period}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue angle, ctx.Call("multiply", {n, step}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue w, ctx.Call("cos", {angle}));
  DYNVM_ASSIGN_OR_RETURN(w, ctx.Call("multiply", {w, Scalar(DType::kF32, kWindow.a1)}));
  DYNVM_ASSIGN_OR_RETURN(w, ctx.Call("subtract", {Scalar(DType::kF32, kWindow.a0), w}));
  if (kWindow.a2 != 0) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue twice, ctx.Call("multiply", {angle, Scalar(DType::kF32, 2)}));
    DYNVM_ASSIGN_OR_RETURN(twice, ctx.Call("cos", {twice}));
    DYNVM_ASSIGN_OR_RETURN(twice, ctx.Call("multiply", {twice, Scalar(DType::kF32, kWindow.a2)}));
    DYNVM_ASSIGN_OR_RETURN(w, ctx.Call("add", {w, twice}));
  }
  return One(CastTo(ctx, w, dtype));
}

// ---------------------------------------------------------------------------------------
// DFT

// The twiddle tables C and S of the file comment, [N, K] f32, for the 0-d i64 values
// `n_extent` (N), `length` (L) and `bins` (K) with Dims `n_dim` and `k_dim`.
absl::StatusOr<std::pair<OnnxValue, OnnxValue>> Twiddles(const NodeContext& ctx, const OnnxValue& n_extent,
                                                         const Dim& n_dim, const OnnxValue& length,
                                                         const OnnxValue& bins, const Dim& k_dim, bool inverse) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue n, Iota(ctx, n_extent, n_dim));
  DYNVM_ASSIGN_OR_RETURN(n, AsColumn(ctx, n));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue k, Iota(ctx, bins, k_dim));
  // The angle 2π m / L, m = (n k) mod L, as quadrant q and φ = (π/2) r / L in [0, π/2).
  DYNVM_ASSIGN_OR_RETURN(OnnxValue m, ctx.Call("multiply", {n, k}));
  DYNVM_ASSIGN_OR_RETURN(m, ctx.Call("floor_mod", {m, length}));
  DYNVM_ASSIGN_OR_RETURN(m, ctx.Call("multiply", {m, I64(4)}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue q, ctx.Call("divide", {m, length}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue r, ctx.Call("multiply", {q, length}));
  DYNVM_ASSIGN_OR_RETURN(r, ctx.Call("subtract", {m, r}));
  DYNVM_ASSIGN_OR_RETURN(r, CastTo(ctx, r, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue step, CastTo(ctx, length, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(step, ctx.Call("divide", {Scalar(DType::kF32, std::numbers::pi / 2), step}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue phi, ctx.Call("multiply", {r, step}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue cos_phi, ctx.Call("cos", {phi}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue sin_phi, ctx.Call("sin", {phi}));
  // Quadrant q: (cos, sin) = (cos φ, sin φ), (-sin φ, cos φ), (-cos φ, -sin φ), (sin φ, -cos φ).
  DYNVM_ASSIGN_OR_RETURN(OnnxValue odd, ctx.Call("floor_mod", {q, I64(2)}));
  DYNVM_ASSIGN_OR_RETURN(odd, ctx.Call("equal", {odd, I64(1)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue c, ctx.Call("where", {odd, sin_phi, cos_phi}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue s, ctx.Call("where", {odd, cos_phi, sin_phi}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue negate_c, ctx.Call("equal", {q, I64(1)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue q2, ctx.Call("equal", {q, I64(2)}));
  DYNVM_ASSIGN_OR_RETURN(negate_c, ctx.Call("logical_or", {negate_c, q2}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue negate_s, ctx.Call("greater_equal", {q, I64(2)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue minus_c, ctx.Call("negative", {c}));
  DYNVM_ASSIGN_OR_RETURN(c, ctx.Call("where", {negate_c, minus_c, c}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue minus_s, ctx.Call("negative", {s}));
  DYNVM_ASSIGN_OR_RETURN(s, ctx.Call("where", {negate_s, minus_s, s}));
  // Samples past L contribute nothing (the signal truncated to L); the inverse's 1 / L.
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue kept, ctx.Call("less", {n, length}));
  OnnxValue zero = Scalar(DType::kF32, 0);
  if (inverse) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, CastTo(ctx, length, DType::kF32));
    DYNVM_ASSIGN_OR_RETURN(scale, ctx.Call("divide", {Scalar(DType::kF32, 1), scale}));
    DYNVM_ASSIGN_OR_RETURN(c, ctx.Call("multiply", {c, scale}));
    DYNVM_ASSIGN_OR_RETURN(s, ctx.Call("multiply", {s, scale}));
  }
  DYNVM_ASSIGN_OR_RETURN(c, ctx.Call("where", {kept, c, zero}));
  DYNVM_ASSIGN_OR_RETURN(s, ctx.Call("where", {kept, s, zero}));
  return std::pair{std::move(c), std::move(s)};
}

// A constant f32 [2, `parts`] matrix with rows `re` and `im` (of `parts` elements each).
OnnxValue Matrix2(int64_t parts, const std::vector<float>& re, const std::vector<float>& im) {
  NDArray t = *NDArrayObj::Empty({2, parts}, DType::kF32, MakeNaiveAllocator());
  for (int64_t i = 0; i < parts; ++i) {
    t->data_as<float>()[i] = re[i];
    t->data_as<float>()[parts + i] = im[i];
  }
  return NodeContext::Constant(std::move(t));
}

// The DFT of `x` [..., c] (c = 1 real, 2 complex) along `axis` (not the last) with the
// 0-d i64 `length` (L), as the file comment says: [..., K at axis, ..., 2].
absl::StatusOr<OnnxValue> Dft(const NodeContext& ctx, OnnxValue x, int axis, const OnnxValue& length,
                              bool onesided, bool inverse) {
  const int rank = x.type.rank();
  const Dim& parts_dim = x.type.shape()[rank - 1];
  if (!parts_dim.is_const() || (parts_dim.const_value() != 1 && parts_dim.const_value() != 2)) {
    return ctx.Invalid(absl::StrFormat("the last axis of the signal %s must be 1 (real) or 2 (complex)",
                                       x.type.ToString()));
  }
  const int64_t parts = parts_dim.const_value();
  if (onesided && parts == 2) return ctx.Invalid("onesided output needs a real signal ([..., 1]), got a complex one");
  const DType dtype = x.type.dtype();
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kF16 && dtype != DType::kBF16) {
    return ctx.Invalid(absl::StrFormat("the signal must be float, got %s", DTypeName(dtype)));
  }
  DYNVM_ASSIGN_OR_RETURN(x, CastTo(ctx, x, DType::kF32));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue n_extent, ExtentOf(ctx, x, axis));
  const Dim l_dim = ScalarDim(length);
  OnnxValue bins = length;
  Dim k_dim = l_dim;
  if (onesided) {
    DYNVM_ASSIGN_OR_RETURN(bins, ctx.Call("divide", {length, I64(2)}));
    DYNVM_ASSIGN_OR_RETURN(bins, ctx.Call("add", {bins, I64(1)}));
    k_dim = l_dim.is_const() ? Dim(l_dim.const_value() / 2 + 1) : Dim::Any();
  }
  DYNVM_ASSIGN_OR_RETURN(const auto tables,
                         Twiddles(ctx, n_extent, x.type.shape()[axis], length, bins, k_dim, inverse));

  // x as [..., c, N], its other axes in order; P and Q are [..., c, K].
  std::vector<int64_t> to_rows;
  for (int i = 0; i < rank; ++i) {
    if (i != axis) to_rows.push_back(i);
  }
  to_rows.push_back(axis);
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue rows, ctx.Call("transpose", {x}, {{"axes", to_rows}}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue p, ctx.Call("nn.matmul", {rows, tables.first}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue q, ctx.Call("nn.matmul", {rows, tables.second}));
  // [re; im] = A · P + B · Q over the component axis.
  const float s = inverse ? -1.0f : 1.0f;
  const OnnxValue a = parts == 2 ? Matrix2(2, {1, 0}, {0, 1}) : Matrix2(1, {1}, {0});
  const OnnxValue b = parts == 2 ? Matrix2(2, {0, s}, {-s, 0}) : Matrix2(1, {0}, {-s});
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue ap, ctx.Call("nn.matmul", {a, p}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue bq, ctx.Call("nn.matmul", {b, q}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("add", {ap, bq}));
  // [..., 2, K] back to [..., K at axis, ..., 2].
  std::vector<int64_t> back;
  for (int i = 0; i < rank; ++i) {
    back.push_back(i == axis ? rank - 1 : i == rank - 1 ? rank - 2 : i < axis ? i : i - 1);
  }
  DYNVM_ASSIGN_OR_RETURN(y, ctx.Call("transpose", {y}, {{"axes", back}}));
  return CastTo(ctx, y, dtype);
}

absl::StatusOr<Values> ConvertDft(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue x, ctx.Input(0));
  const int rank = x.type.rank();
  if (rank < 2) {
    return ctx.Invalid(absl::StrFormat("the input must be [batch, signal..., 1 or 2], got %s", x.type.ToString()));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", 1));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, rank));
  if (axis == rank - 1) {
    return ctx.Invalid(absl::StrFormat("axis %d is the real/imaginary axis: expected a signal axis in [0, %d)",
                                       axis_attr, rank - 1));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t onesided, ctx.Int("onesided", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t inverse, ctx.Int("inverse", 0));
  if ((onesided != 0 && onesided != 1) || (inverse != 0 && inverse != 1)) {
    return ctx.Invalid(absl::StrFormat("attributes 'onesided' (%d) and 'inverse' (%d) must be 0 or 1",
                                       onesided, inverse));
  }
  // (ONNX's shape inference has refused both at once, and an axis out of range.)
  OnnxValue length;
  if (ctx.OptionalInput(1)) {
    DYNVM_ASSIGN_OR_RETURN(length, IntScalarInput(ctx, 1, "dft_length"));
    DYNVM_RETURN_IF_ERROR(CheckAtLeast(ctx, length, 1, "dft_length"));
  } else {
    DYNVM_ASSIGN_OR_RETURN(length, ExtentOf(ctx, x, axis));
  }
  return One(Dft(ctx, x, axis, length, onesided != 0, inverse != 0));
}

// ---------------------------------------------------------------------------------------
// STFT

// The frames of `signal` [batch, T, c]: [batch, F, frame_length, c] with frame f starting
// at f * step and F = floor((T - frame_length) / step) + 1.
absl::StatusOr<OnnxValue> Frames(const NodeContext& ctx, const OnnxValue& signal, const OnnxValue& step,
                                 const OnnxValue& frame_length, const Dim& frame_dim) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue total, ExtentOf(ctx, signal, 1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue span, ctx.Call("subtract", {total, frame_length}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue rest, ctx.Call("floor_mod", {span, step}));
  DYNVM_ASSIGN_OR_RETURN(span, ctx.Call("subtract", {span, rest}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue count, ctx.Call("divide", {span, step}));
  DYNVM_ASSIGN_OR_RETURN(count, ctx.Call("add", {count, I64(1)}));
  Dim count_dim = Dim::Any();
  const Dim t = signal.type.shape()[1], s = ScalarDim(step);
  if (t.is_const() && s.is_const() && frame_dim.is_const()) {
    const int64_t span_value = t.const_value() - frame_dim.const_value();
    if (span_value < 0) {
      return ctx.Invalid(absl::StrFormat("the signal has %d samples, fewer than a frame of %d",
                                         t.const_value(), frame_dim.const_value()));
    }
    count_dim = span_value / s.const_value() + 1;
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue starts, Iota(ctx, count, count_dim));
  DYNVM_ASSIGN_OR_RETURN(starts, ctx.Call("multiply", {starts, step}));
  DYNVM_ASSIGN_OR_RETURN(starts, AsColumn(ctx, starts));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue offsets, Iota(ctx, frame_length, frame_dim));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue index, ctx.Call("add", {starts, offsets}));
  return ctx.Call("take", {signal, index}, {{"axis", int64_t{1}}, {"mode", std::string("fast")}});
}

absl::StatusOr<Values> ConvertStft(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue signal, ctx.Input(0));
  if (signal.type.rank() != 3) {
    return ctx.Invalid(absl::StrFormat("the signal must be [batch, length, 1 or 2], got %s", signal.type.ToString()));
  }
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue step, IntScalarInput(ctx, 1, "frame_step"));
  DYNVM_RETURN_IF_ERROR(CheckAtLeast(ctx, step, 1, "frame_step"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t onesided, ctx.Int("onesided", 1));
  if (onesided != 0 && onesided != 1) {
    return ctx.Invalid(absl::StrFormat("attribute 'onesided' is %d: expected 0 or 1", onesided));
  }
  const std::optional<OnnxValue> window = ctx.OptionalInput(2);
  if (window && (window->type.rank() != 1 || window->type.dtype() != signal.type.dtype())) {
    return ctx.Invalid(absl::StrFormat("the window must be 1-D of the signal's dtype %s, got %s",
                                       DTypeName(signal.type.dtype()), window->type.ToString()));
  }
  OnnxValue frame_length;
  Dim frame_dim = Dim::Any();
  if (ctx.OptionalInput(3)) {
    DYNVM_ASSIGN_OR_RETURN(frame_length, IntScalarInput(ctx, 3, "frame_length"));
    DYNVM_RETURN_IF_ERROR(CheckAtLeast(ctx, frame_length, 1, "frame_length"));
    // (ONNX's shape inference has refused a window of another known length.)
    frame_dim = ScalarDim(frame_length);
  } else if (window) {
    DYNVM_ASSIGN_OR_RETURN(frame_length, ExtentOf(ctx, *window, 0));
    frame_dim = window->type.shape()[0];
  } else {
    return ctx.Invalid("either a window or a frame_length is required");
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue frames, Frames(ctx, signal, step, frame_length, frame_dim));
  if (window) {
    DYNVM_ASSIGN_OR_RETURN(const OnnxValue column, AsColumn(ctx, *window));
    DYNVM_ASSIGN_OR_RETURN(frames, ctx.Call("multiply", {frames, column}));
  }
  return One(Dft(ctx, frames, /*axis=*/2, frame_length, onesided != 0, /*inverse=*/false));
}

// ---------------------------------------------------------------------------------------
// MelWeightMatrix

// floor(x) of an f64 `x` as i64, exactly (the f32-only floor would round first).
absl::StatusOr<OnnxValue> FloorToI64(const NodeContext& ctx, const OnnxValue& x) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue truncated, CastTo(ctx, x, DType::kI64));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue back, CastTo(ctx, truncated, DType::kF64));
  DYNVM_ASSIGN_OR_RETURN(back, ctx.Call("greater", {back, x}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue below, ctx.Call("subtract", {truncated, I64(1)}));
  return ctx.Call("where", {back, below, truncated});
}

// mel(f) = 2595 log10(1 + f / 700) of an f64 `hertz`.
absl::StatusOr<OnnxValue> Mel(const NodeContext& ctx, const OnnxValue& hertz) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue m, ctx.Call("divide", {hertz, Scalar(DType::kF64, 700)}));
  DYNVM_ASSIGN_OR_RETURN(m, ctx.Call("add", {m, Scalar(DType::kF64, 1)}));
  DYNVM_ASSIGN_OR_RETURN(m, ctx.Call("log", {m}));
  return ctx.Call("multiply", {m, Scalar(DType::kF64, 2595 / std::numbers::ln10)});
}

// The spectrogram bin of each of the num_mel_bins + 2 band edges, equally spaced in mel
// from lower_edge_hertz by (upper - lower) / (num_mel_bins + 2) as ONNX's reference
// spaces them: floor((dft_length + 1) hz / sample_rate), [num_mel_bins + 2] i64.
absl::StatusOr<OnnxValue> EdgeBins(const NodeContext& ctx, const OnnxValue& bands, const OnnxValue& dft_length) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue rate, IntScalarInput(ctx, 2, "sample_rate"));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue lower, FloatScalarInput(ctx, 3, "lower_edge_hertz"));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue upper, FloatScalarInput(ctx, 4, "upper_edge_hertz"));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue count, ctx.Call("add", {bands, I64(2)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue edges, Iota(ctx, count, ScalarDim(bands) + 2));
  DYNVM_ASSIGN_OR_RETURN(edges, CastTo(ctx, edges, DType::kF64));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue low, Mel(ctx, lower));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue step, Mel(ctx, upper));
  DYNVM_ASSIGN_OR_RETURN(step, ctx.Call("subtract", {step, low}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue count_f, CastTo(ctx, count, DType::kF64));
  DYNVM_ASSIGN_OR_RETURN(step, ctx.Call("divide", {step, count_f}));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("multiply", {edges, step}));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("add", {edges, low}));
  // hz = 700 (10^(mel / 2595) - 1)
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("divide", {edges, Scalar(DType::kF64, 2595)}));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("power", {Scalar(DType::kF64, 10), edges}));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("subtract", {edges, Scalar(DType::kF64, 1)}));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("multiply", {edges, Scalar(DType::kF64, 700)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue scale, ctx.Call("add", {dft_length, I64(1)}));
  DYNVM_ASSIGN_OR_RETURN(scale, CastTo(ctx, scale, DType::kF64));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("multiply", {edges, scale}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue rate_f, CastTo(ctx, rate, DType::kF64));
  DYNVM_ASSIGN_OR_RETURN(edges, ctx.Call("divide", {edges, rate_f}));
  return FloorToI64(ctx, edges);
}

// (a - b) / (c - d) of i64 operands, in f64.
absl::StatusOr<OnnxValue> Ratio(const NodeContext& ctx, const OnnxValue& a, const OnnxValue& b,
                                const OnnxValue& c, const OnnxValue& d) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue num, ctx.Call("subtract", {a, b}));
  DYNVM_ASSIGN_OR_RETURN(num, CastTo(ctx, num, DType::kF64));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue den, ctx.Call("subtract", {c, d}));
  DYNVM_ASSIGN_OR_RETURN(den, CastTo(ctx, den, DType::kF64));
  return ctx.Call("divide", {num, den});
}

// Band i has edges (l, c, h) = bins i, i + 1, i + 2; bin j of it weighs (h - j) / (h - c)
// on [c, h), else (j - l) / (c - l) on [l, c] (1 at j = c = l), else 0 — the reference's
// loops, the falling edge written last.
absl::StatusOr<Values> ConvertMelWeightMatrix(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue bands, IntScalarInput(ctx, 0, "num_mel_bins"));
  DYNVM_RETURN_IF_ERROR(CheckAtLeast(ctx, bands, 1, "num_mel_bins"));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue dft_length, IntScalarInput(ctx, 1, "dft_length"));
  DYNVM_RETURN_IF_ERROR(CheckAtLeast(ctx, dft_length, 1, "dft_length"));
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, OutputDType(ctx));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue edges, EdgeBins(ctx, bands, dft_length));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue band, Iota(ctx, bands, ScalarDim(bands)));
  std::vector<OnnxValue> lch;
  for (int64_t shift = 0; shift < 3; ++shift) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue at, ctx.Call("add", {band, I64(shift)}));
    DYNVM_ASSIGN_OR_RETURN(at, ctx.Call("take", {edges, at}, {{"axis", int64_t{0}}, {"mode", std::string("fast")}}));
    lch.push_back(std::move(at));
  }
  const OnnxValue &l = lch[0], &c = lch[1], &h = lch[2];
  const Dim l_dim = ScalarDim(dft_length);
  DYNVM_ASSIGN_OR_RETURN(OnnxValue bins, ctx.Call("divide", {dft_length, I64(2)}));
  DYNVM_ASSIGN_OR_RETURN(bins, ctx.Call("add", {bins, I64(1)}));
  const Dim bins_dim = l_dim.is_const() ? Dim(l_dim.const_value() / 2 + 1) : Dim::Any();
  DYNVM_ASSIGN_OR_RETURN(OnnxValue j, Iota(ctx, bins, bins_dim));
  DYNVM_ASSIGN_OR_RETURN(j, AsColumn(ctx, j));

  DYNVM_ASSIGN_OR_RETURN(OnnxValue rising, Ratio(ctx, j, l, c, l));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue flat, ctx.Call("equal", {c, l}));
  DYNVM_ASSIGN_OR_RETURN(rising, ctx.Call("where", {flat, Scalar(DType::kF64, 1), rising}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue falling, Ratio(ctx, h, j, h, c));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue on_rise, ctx.Call("less_equal", {l, j}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue to_c, ctx.Call("less_equal", {j, c}));
  DYNVM_ASSIGN_OR_RETURN(on_rise, ctx.Call("logical_and", {on_rise, to_c}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue on_fall, ctx.Call("less_equal", {c, j}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue to_h, ctx.Call("less", {j, h}));
  DYNVM_ASSIGN_OR_RETURN(on_fall, ctx.Call("logical_and", {on_fall, to_h}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue w, ctx.Call("where", {on_rise, rising, Scalar(DType::kF64, 0)}));
  DYNVM_ASSIGN_OR_RETURN(w, ctx.Call("where", {on_fall, falling, w}));
  return One(CastTo(ctx, w, dtype));
}

}  // namespace

void AddSignalConverters(ConverterTable& table) {
  table.insert({
      {"HannWindow", {ConvertWindow<kHann>, {"output_datatype", "periodic"}}},
      {"HammingWindow", {ConvertWindow<kHamming>, {"output_datatype", "periodic"}}},
      {"BlackmanWindow", {ConvertWindow<kBlackman>, {"output_datatype", "periodic"}}},
      {"DFT", {ConvertDft, {"axis", "inverse", "onesided"}}},
      {"STFT", {ConvertStft, {"onesided"}}},
      {"MelWeightMatrix", {ConvertMelWeightMatrix, {"output_datatype"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
