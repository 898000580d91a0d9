// The matrix-multiply kernels, f32, all on GemmF32 (kernels/gemm/gemm.h):
//
//   nn.dense         y[..., n] = act(x[..., k] · W[n, k]ᵀ + bias[n])   (Relay's layout)
//   nn.matmul        numpy's matmul: batch dims broadcast, 1-D operands promoted
//   matmul           the same kernel under ONNX's name
//   nn.batch_matmul  Relay's: batch dims broadcast, transpose_b defaults to true
//   gemm             C = act(alpha op(A) op(B) + bias) + residual, GemmF32's whole epilogue
//   layout_transform          W[n, k] -> packed [ceil(n / 16), k, 16] (NC -> NC16n only)
//   nn.contrib_dense_pack     nn.dense with the weight packed so (GemmPackB's layout)
//
// A dense weight packed once by layout_transform, when the compiler folds it into a
// constant, spares every product the packing of B.
//
// nn.dense folds the leading axes of x into the rows of one GEMM. The batched kernels
// fold the batch into the rows too when B is shared by every batch (a layer's weight);
// otherwise they run one GEMM per batch, in parallel over the batch when each GEMM is too
// small to fill the pool by itself (attention-sized products).
#include "kernels/gemm/matmul.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/gemm/flops.h"
#include "kernels/gemm/gemm.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"

namespace dynvm::kernels {
namespace {

// A product of at most this many multiply-adds (~40 us on one core) leaves threads
// idle: batches of such products run in parallel over the batch instead.
constexpr int64_t kSmallGemmWork = int64_t{1} << 22;

// ---------------------------------------------------------------------------------------
// Attributes

// The `activation` attribute: "none" (default), "relu", "gelu" (erf) or "gelu_tanh".
absl::StatusOr<Activation> GetActivationAttr(const Attrs& attrs) {
  static constexpr std::pair<std::string_view, Activation> kNames[] = {
      {"none", Activation::kNone},
      {"relu", Activation::kRelu},
      {"gelu", Activation::kGeluErf},
      {"gelu_tanh", Activation::kGeluTanh}};
  DYNVM_ASSIGN_OR_RETURN(const std::string name, GetStringAttr(attrs, "activation", "none"));
  for (const auto& [known, activation] : kNames) {
    if (std::string_view(name) == known) return activation;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "attribute 'activation' must be none, relu, gelu or gelu_tanh, got '%s'", name));
}

// Relay's `out_dtype`: absent, empty (the input's) or f32; the kernels compute only f32.
absl::Status CheckOutDTypeAttr(const Attrs& attrs) {
  DYNVM_ASSIGN_OR_RETURN(const std::string name, GetStringAttr(attrs, "out_dtype", ""));
  if (name.empty()) return absl::OkStatus();
  DYNVM_ASSIGN_OR_RETURN(const DType dtype, ParseDType(name));
  if (dtype == DType::kF32) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("attribute 'out_dtype' must be f32, got '%s'", name));
}

// Relay's `units`: the number of output features, checked against the weight when
// given (-1: absent).
absl::StatusOr<int64_t> GetUnitsAttr(const Attrs& attrs) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, GetIntAttr(attrs, "units", -1));
  if (units < -1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'units' must be non-negative, got %d", units));
  }
  return units;
}

absl::Status CheckUnits(std::string_view op, int64_t units, int64_t n) {
  if (units < 0 || units == n) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: attribute units is %d but the weight gives %d", op, units, n));
}

absl::Status CheckRank(std::string_view op, std::string_view what, const NDArrayObj& t,
                       int min_rank) {
  if (t.ndim() >= min_rank) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s has rank %d, expected at least %d",
                                                    op, what, t.ndim(), min_rank));
}

absl::Status CheckInner(std::string_view op, const NDArrayObj& a, const NDArrayObj& b,
                        int64_t ka, int64_t kb) {
  if (ka == kb) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: inner dimensions differ: %s and %s give k = %d and %d", op,
                      ShapeToString(a.shape()), ShapeToString(b.shape()), ka, kb));
}

// ---------------------------------------------------------------------------------------
// nn.dense

constexpr std::string_view kDense = "nn.dense";

struct DenseState {
  Activation activation;
  int64_t units;
};

absl::StatusOr<std::shared_ptr<const void>> BindDense(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"activation", "units", "out_dtype"}));
  DYNVM_RETURN_IF_ERROR(CheckOutDTypeAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(const Activation activation, GetActivationAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, GetUnitsAttr(attrs));
  return std::make_shared<const DenseState>(DenseState{activation, units});
}

// The output of x [..., k] times a weight of n features, once the optional bias (input
// 2) is checked against n.
absl::StatusOr<Shape> DenseOutputShape(std::string_view op, absl::Span<NDArrayObj* const> in,
                                       int64_t n) {
  if (in.size() == 3) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(op, "bias", *in[2]));
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(op, "bias", *in[2], {n}));
  }
  Shape out = in[0]->shape();
  out.back() = n;
  return out;
}

// nn.dense (weight [n, k]) or nn.contrib_dense_pack (weight `packed` by GemmPackB), once
// the shape function gave `out_shape`.
absl::Status RunDense(std::string_view op, const KernelCall& call, const Shape& out_shape,
                      bool packed) {
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(op, call, {out_shape}));
  const auto& s = *static_cast<const DenseState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  const int64_t k = x.shape().back(), n = out_shape.back();
  const int64_t m = nn::Product(x.shape(), 0, x.ndim() - 1);
  GemmF32({.m = m, .n = n, .k = k, .a = x.data_as<float>(), .lda = k,
           .b = call.args[1]->data_as<float>(), .ldb = k, .trans_b = true, .b_packed = packed,
           .c = call.outputs()[0]->data_as<float>(), .ldc = n,
           .bias = call.num_inputs == 3 ? call.args[2]->data_as<float>() : nullptr,
           .activation = s.activation},
          *call.pool);
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferDense(const void* state, absl::Span<NDArrayObj* const> in) {
  DYNVM_RETURN_IF_ERROR(
      nn::CheckInputCount(kDense, static_cast<int>(in.size()), {2, 3}, "data, weight[, bias]"));
  const NDArrayObj& x = *in[0];
  const NDArrayObj& w = *in[1];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kDense, "data", x));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kDense, "weight", w));
  DYNVM_RETURN_IF_ERROR(CheckRank(kDense, "data", x, 1));
  if (w.ndim() != 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: weight has shape %s, expected [units, k]", kDense,
                        ShapeToString(w.shape())));
  }
  DYNVM_RETURN_IF_ERROR(CheckInner(kDense, x, w, x.shape().back(), w.shape()[1]));
  const int64_t n = w.shape()[0];
  DYNVM_RETURN_IF_ERROR(CheckUnits(kDense, static_cast<const DenseState*>(state)->units, n));
  return DenseOutputShape(kDense, in, n);
}

absl::Status DenseKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, InferDense(call.state, call.inputs()));
  return RunDense(kDense, call, out_shape, /*packed=*/false);
}

// ---------------------------------------------------------------------------------------
// layout_transform, nn.contrib_dense_pack

constexpr std::string_view kLayoutTransform = "layout_transform";
constexpr std::string_view kDensePack = "nn.contrib_dense_pack";
// TVM's name for a dense weight [N, C] cut into panels of 16 rows, [N/16, C, 16]: here
// GemmPackB's layout of Wᵀ, N padded with zero rows to a multiple of 16.
constexpr std::string_view kPackedLayout = "NC16n";
static_assert(kGemmPanelWidth == 16, "kPackedLayout names the panel width");

absl::StatusOr<std::shared_ptr<const void>> BindLayoutTransform(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"src_layout", "dst_layout"}));
  DYNVM_ASSIGN_OR_RETURN(const std::string src, GetStringAttr(attrs, "src_layout"));
  DYNVM_ASSIGN_OR_RETURN(const std::string dst, GetStringAttr(attrs, "dst_layout"));
  if (src != "NC" || dst != kPackedLayout) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: only src_layout=\"NC\" dst_layout=\"%s\" (packing a dense weight) is "
        "supported, got src_layout=\"%s\" dst_layout=\"%s\"",
        kLayoutTransform, kPackedLayout, src, dst));
  }
  return std::shared_ptr<const void>();
}

absl::StatusOr<Shape> InferLayoutTransform(const void*, absl::Span<NDArrayObj* const> in) {
  const NDArrayObj& w = *in[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kLayoutTransform, "data", w));
  if (w.ndim() != 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: data has shape %s, expected [N, C] for layout NC",
                        kLayoutTransform, ShapeToString(w.shape())));
  }
  const int64_t n = w.shape()[0], k = w.shape()[1];
  return Shape{(n + kGemmPanelWidth - 1) / kGemmPanelWidth, k, kGemmPanelWidth};
}

absl::Status LayoutTransformKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, InferLayoutTransform(nullptr, call.inputs()));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kLayoutTransform, call, {out_shape}));
  const NDArrayObj& w = *call.args[0];
  const int64_t n = w.shape()[0], k = w.shape()[1];
  GemmPackB(k, n, w.data_as<float>(), k, /*trans_b=*/true, call.outputs()[0]->data_as<float>());
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const void>> BindDensePack(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(
      CheckKnownAttrs(attrs, {"activation", "units", "out_dtype", "weight_layout"}));
  DYNVM_RETURN_IF_ERROR(CheckOutDTypeAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(const std::string layout,
                         GetStringAttr(attrs, "weight_layout", std::string(kPackedLayout)));
  if (layout != kPackedLayout) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: attribute 'weight_layout' must be \"%s\", got \"%s\"",
                        kDensePack, kPackedLayout, layout));
  }
  DYNVM_ASSIGN_OR_RETURN(const Activation activation, GetActivationAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, GetUnitsAttr(attrs));
  return std::make_shared<const DenseState>(DenseState{activation, units});
}

// The output features of a packed weight [panels, k, 16]: `units` when given (the rows
// of the weight before padding), else all panels' columns.
absl::StatusOr<int64_t> PackedUnits(int64_t units, const NDArrayObj& w) {
  const int64_t panels = w.shape()[0];
  if (units < 0) return panels * kGemmPanelWidth;
  if ((units + kGemmPanelWidth - 1) / kGemmPanelWidth == panels) return units;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: attribute units is %d but the packed weight %s holds %d to %d", kDensePack, units,
      ShapeToString(w.shape()), std::max<int64_t>(0, (panels - 1) * kGemmPanelWidth + 1),
      panels * kGemmPanelWidth));
}

absl::StatusOr<Shape> InferDensePack(const void* state, absl::Span<NDArrayObj* const> in) {
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(kDensePack, static_cast<int>(in.size()), {2, 3},
                                            "data, packed weight[, bias]"));
  const NDArrayObj& x = *in[0];
  const NDArrayObj& w = *in[1];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kDensePack, "data", x));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kDensePack, "weight", w));
  DYNVM_RETURN_IF_ERROR(CheckRank(kDensePack, "data", x, 1));
  if (w.ndim() != 3 || w.shape()[2] != kGemmPanelWidth) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: weight has shape %s, expected [ceil(units / 16), k, 16] (layout %s)", kDensePack,
        ShapeToString(w.shape()), kPackedLayout));
  }
  DYNVM_RETURN_IF_ERROR(CheckInner(kDensePack, x, w, x.shape().back(), w.shape()[1]));
  DYNVM_ASSIGN_OR_RETURN(const int64_t n,
                         PackedUnits(static_cast<const DenseState*>(state)->units, w));
  return DenseOutputShape(kDensePack, in, n);
}

absl::Status DensePackKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, InferDensePack(call.state, call.inputs()));
  return RunDense(kDensePack, call, out_shape, /*packed=*/true);
}

// ---------------------------------------------------------------------------------------
// nn.matmul, matmul, nn.batch_matmul

struct MatmulState {
  std::string_view op;
  bool promote_1d;  // numpy: a 1-D operand is a row (a) or a column (b) vector
  bool transpose_a, transpose_b;
  int64_t units;
};

// A batched product resolved from the operands' shapes: out[batch..., m, n] (without
// the axes of promoted 1-D operands) = op(a[batch_a..., :, :]) · op(b[batch_b..., :, :]).
struct MatmulPlan {
  int64_t m = 0, n = 0, k = 0;
  Shape batch = {};                      // the broadcast batch shape
  Shape a_strides = {}, b_strides = {};  // per batch axis, in elements (0 where broadcast)
  int64_t a_batches = 0, b_batches = 0;  // the batches each operand holds
  Shape out = {};
};

template <std::string_view const& kOp, bool kPromote, bool kTransposeB>
absl::StatusOr<std::shared_ptr<const void>> BindMatmul(const Attrs& attrs) {
  if constexpr (kPromote) {
    DYNVM_RETURN_IF_ERROR(
        CheckKnownAttrs(attrs, {"transpose_a", "transpose_b", "units", "out_dtype"}));
  } else {
    DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"transpose_a", "transpose_b", "out_dtype"}));
  }
  DYNVM_RETURN_IF_ERROR(CheckOutDTypeAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(const bool ta, GetBoolAttr(attrs, "transpose_a", false));
  DYNVM_ASSIGN_OR_RETURN(const bool tb, GetBoolAttr(attrs, "transpose_b", kTransposeB));
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, GetUnitsAttr(attrs));
  return std::make_shared<const MatmulState>(MatmulState{kOp, kPromote, ta, tb, units});
}

// The matrix shape [rows, cols] of `t` as its op sees it, and whether it was promoted
// from 1-D (`row`: promoted as a row vector [1, k], else as a column [k, 1]).
struct MatrixView {
  int64_t rows, cols;
  bool promoted;
};

absl::StatusOr<MatrixView> ViewMatrix(const MatmulState& s, std::string_view what,
                                      const NDArrayObj& t, bool transpose, bool row) {
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(s.op, what, t));
  DYNVM_RETURN_IF_ERROR(CheckRank(s.op, what, t, s.promote_1d ? 1 : 2));
  if (t.ndim() == 1) {
    if (transpose) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: cannot transpose the 1-D %s", s.op, what));
    }
    const int64_t k = t.shape()[0];
    return row ? MatrixView{1, k, true} : MatrixView{k, 1, true};
  }
  const int64_t r = t.shape()[t.ndim() - 2], c = t.shape()[t.ndim() - 1];
  return transpose ? MatrixView{c, r, false} : MatrixView{r, c, false};
}

absl::StatusOr<MatmulPlan> PlanMatmul(const MatmulState& s, const NDArrayObj& a,
                                      const NDArrayObj& b) {
  DYNVM_ASSIGN_OR_RETURN(const MatrixView va, ViewMatrix(s, "a", a, s.transpose_a, true));
  DYNVM_ASSIGN_OR_RETURN(const MatrixView vb, ViewMatrix(s, "b", b, s.transpose_b, false));
  DYNVM_RETURN_IF_ERROR(CheckInner(s.op, a, b, va.cols, vb.rows));
  DYNVM_RETURN_IF_ERROR(CheckUnits(s.op, s.units, vb.cols));
  const auto batch_of = [](const NDArrayObj& t) {
    return absl::MakeConstSpan(t.shape()).first(std::max(t.ndim() - 2, 0));
  };
  MatmulPlan plan{.m = va.rows, .n = vb.cols, .k = va.cols};
  absl::StatusOr<Shape> batch = BroadcastShapes(batch_of(a), batch_of(b));
  if (!batch.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: batch dimensions of %s and %s do not broadcast", s.op,
                        ShapeToString(a.shape()), ShapeToString(b.shape())));
  }
  plan.batch = *std::move(batch);
  plan.a_strides = BroadcastStrides(batch_of(a), plan.batch);
  plan.b_strides = BroadcastStrides(batch_of(b), plan.batch);
  for (int64_t& stride : plan.a_strides) stride *= plan.m * plan.k;
  for (int64_t& stride : plan.b_strides) stride *= plan.k * plan.n;
  plan.a_batches = nn::Product(batch_of(a), 0, static_cast<int>(batch_of(a).size()));
  plan.b_batches = nn::Product(batch_of(b), 0, static_cast<int>(batch_of(b).size()));
  plan.out = plan.batch;
  if (!va.promoted) plan.out.push_back(plan.m);
  if (!vb.promoted) plan.out.push_back(plan.n);
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape(s.op, plan.out));
  return plan;
}

absl::StatusOr<Shape> InferMatmul(const void* state, absl::Span<NDArrayObj* const> in) {
  DYNVM_ASSIGN_OR_RETURN(const MatmulPlan plan,
                         PlanMatmul(*static_cast<const MatmulState*>(state), *in[0], *in[1]));
  return plan.out;
}

// The element offsets of batch `index` (row-major over plan.batch) in a and b.
void BatchOffsets(const MatmulPlan& plan, int64_t index, int64_t& a_offset, int64_t& b_offset) {
  a_offset = b_offset = 0;
  for (size_t axis = plan.batch.size(); axis-- > 0;) {
    const int64_t i = index % plan.batch[axis];
    index /= plan.batch[axis];
    a_offset += i * plan.a_strides[axis];
    b_offset += i * plan.b_strides[axis];
  }
}

absl::Status MatmulKernel(const KernelCall& call) {
  const auto& s = *static_cast<const MatmulState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const MatmulPlan plan, PlanMatmul(s, *call.args[0], *call.args[1]));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(s.op, call, {plan.out}));
  const int64_t m = plan.m, n = plan.n, k = plan.k;
  const int64_t batches = nn::Product(plan.batch, 0, static_cast<int>(plan.batch.size()));
  const float* a = call.args[0]->data_as<float>();
  const float* b = call.args[1]->data_as<float>();
  float* c = call.outputs()[0]->data_as<float>();
  GemmArgs g{.m = m, .n = n, .k = k, .lda = s.transpose_a ? m : k, .trans_a = s.transpose_a,
             .ldb = s.transpose_b ? k : n, .trans_b = s.transpose_b, .ldc = n};
  if (plan.b_batches == 1 && plan.a_batches == batches && !s.transpose_a) {
    // One shared B (a weight): the batches of A are consecutive rows of one product.
    g.m = batches * m;
    g.a = a;
    g.b = b;
    g.c = c;
    GemmF32(g, *call.pool);
    return absl::OkStatus();
  }
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t a_offset, b_offset;
      BatchOffsets(plan, i, a_offset, b_offset);
      GemmArgs part = g;
      part.a = a + a_offset;
      part.b = b + b_offset;
      part.c = c + i * m * n;
      GemmF32(part, *call.pool);  // inline when called from a task of the pool
    }
  };
  const int64_t work = std::max<int64_t>(1, m * n * std::max<int64_t>(k, 1));
  if (work < kSmallGemmWork) {
    call.pool->ParallelFor(batches, std::max<int64_t>(1, kSmallGemmWork / work), run);
  } else {
    run(0, batches);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// gemm

constexpr std::string_view kGemm = "gemm";

struct GemmState {
  bool trans_a, trans_b;
  float alpha;
  Activation activation;
  bool residual;
};

absl::StatusOr<std::shared_ptr<const void>> BindGemm(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(
      CheckKnownAttrs(attrs, {"trans_a", "trans_b", "alpha", "activation", "residual"}));
  DYNVM_ASSIGN_OR_RETURN(const bool trans_a, GetBoolAttr(attrs, "trans_a", false));
  DYNVM_ASSIGN_OR_RETURN(const bool trans_b, GetBoolAttr(attrs, "trans_b", false));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, GetFloatAttr(attrs, "alpha", 1.0));
  if (!(std::fabs(alpha) <= std::numeric_limits<float>::max())) {  // NaN fails too
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'alpha' must be a finite f32, got %g", alpha));
  }
  DYNVM_ASSIGN_OR_RETURN(const Activation activation, GetActivationAttr(attrs));
  DYNVM_ASSIGN_OR_RETURN(const bool residual, GetBoolAttr(attrs, "residual", false));
  return std::make_shared<const GemmState>(
      GemmState{trans_a, trans_b, static_cast<float>(alpha), activation, residual});
}

// Which of gemm's optional inputs a call has.
struct GemmInputs {
  const NDArrayObj* bias = nullptr;
  const NDArrayObj* residual = nullptr;
};

absl::StatusOr<GemmInputs> GemmOptionalInputs(const GemmState& s,
                                              absl::Span<NDArrayObj* const> in) {
  const int count = static_cast<int>(in.size());
  if (s.residual) {
    DYNVM_RETURN_IF_ERROR(
        nn::CheckInputCount(kGemm, count, {3, 4}, "a, b[, bias], residual (residual=1)"));
    return GemmInputs{count == 4 ? in[2] : nullptr, in[count - 1]};
  }
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(kGemm, count, {2, 3}, "a, b[, bias] (residual=0)"));
  return GemmInputs{count == 3 ? in[2] : nullptr, nullptr};
}

absl::StatusOr<Shape> InferGemm(const void* state, absl::Span<NDArrayObj* const> in) {
  const auto& s = *static_cast<const GemmState*>(state);
  DYNVM_ASSIGN_OR_RETURN(const GemmInputs opt, GemmOptionalInputs(s, in));
  const NDArrayObj& a = *in[0];
  const NDArrayObj& b = *in[1];
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kGemm, "a", a));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32(kGemm, "b", b));
  if (a.ndim() != 2 || b.ndim() != 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a and b must be matrices, got shapes %s and %s", kGemm, ShapeToString(a.shape()),
        ShapeToString(b.shape())));
  }
  const int64_t m = a.shape()[s.trans_a ? 1 : 0], ka = a.shape()[s.trans_a ? 0 : 1];
  const int64_t kb = b.shape()[s.trans_b ? 1 : 0], n = b.shape()[s.trans_b ? 0 : 1];
  DYNVM_RETURN_IF_ERROR(CheckInner(kGemm, a, b, ka, kb));
  if (opt.bias != nullptr) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(kGemm, "bias", *opt.bias));
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(kGemm, "bias", *opt.bias, {n}));
  }
  if (opt.residual != nullptr) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(kGemm, "residual", *opt.residual));
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(kGemm, "residual", *opt.residual, {m, n}));
  }
  return Shape{m, n};
}

absl::Status GemmKernel(const KernelCall& call) {
  const auto& s = *static_cast<const GemmState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const Shape out_shape, InferGemm(call.state, call.inputs()));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kGemm, call, {out_shape}));
  DYNVM_ASSIGN_OR_RETURN(const GemmInputs opt, GemmOptionalInputs(s, call.inputs()));
  const NDArrayObj& a = *call.args[0];
  const NDArrayObj& b = *call.args[1];
  const int64_t m = out_shape[0], n = out_shape[1], k = a.shape()[s.trans_a ? 0 : 1];
  GemmF32({.m = m, .n = n, .k = k, .a = a.data_as<float>(), .lda = a.shape()[1],
           .trans_a = s.trans_a, .b = b.data_as<float>(), .ldb = b.shape()[1],
           .trans_b = s.trans_b, .c = call.outputs()[0]->data_as<float>(), .ldc = n,
           .alpha = s.alpha, .bias = opt.bias ? opt.bias->data_as<float>() : nullptr,
           .activation = s.activation,
           .residual = opt.residual ? opt.residual->data_as<float>() : nullptr, .ldr = n},
          *call.pool);
  return absl::OkStatus();
}

constexpr std::string_view kNnMatmul = "nn.matmul";
constexpr std::string_view kMatmul = "matmul";
constexpr std::string_view kBatchMatmul = "nn.batch_matmul";

}  // namespace

absl::Status RegisterMatmulKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {.name = std::string(kDense), .num_inputs = kVariadic, .fn = DenseKernel,
       .bind = BindDense, .shape_fn = internal::SingleShapeFn<InferDense>, .flops = DenseFlops},
      {.name = std::string(kNnMatmul), .num_inputs = 2, .fn = MatmulKernel,
       .bind = BindMatmul<kNnMatmul, true, false>,
       .shape_fn = internal::SingleShapeFn<InferMatmul>, .flops = MatmulFlops},
      {.name = std::string(kMatmul), .num_inputs = 2, .fn = MatmulKernel,
       .bind = BindMatmul<kMatmul, true, false>,
       .shape_fn = internal::SingleShapeFn<InferMatmul>, .flops = MatmulFlops},
      {.name = std::string(kBatchMatmul), .num_inputs = 2, .fn = MatmulKernel,
       .bind = BindMatmul<kBatchMatmul, false, true>,
       .shape_fn = internal::SingleShapeFn<InferMatmul>, .flops = MatmulFlops},
      {.name = std::string(kGemm), .num_inputs = kVariadic, .fn = GemmKernel, .bind = BindGemm,
       .shape_fn = internal::SingleShapeFn<InferGemm>, .flops = GemmFlops},
      {.name = std::string(kLayoutTransform), .num_inputs = 1, .fn = LayoutTransformKernel,
       .bind = BindLayoutTransform, .shape_fn = internal::SingleShapeFn<InferLayoutTransform>},
      {.name = std::string(kDensePack), .num_inputs = kVariadic, .fn = DensePackKernel,
       .bind = BindDensePack, .shape_fn = internal::SingleShapeFn<InferDensePack>,
       .flops = DenseFlops},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
