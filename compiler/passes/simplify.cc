// Algebraic simplification (see compiler/passes/passes.h): the named rules and the
// rewriter that applies them until nothing changes.
#include "compiler/passes/simplify.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/ir/rewrite.h"

namespace dynvm::compiler {
namespace {

bool IsOp(const Expr& e, std::string_view name) {
  return e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp) && e.callee().name() == name;
}

const std::vector<int64_t>* IntsAttr(const Expr& call, const char* name) {
  const auto it = call.attrs().find(name);
  if (it == call.attrs().end()) return nullptr;
  return std::get_if<std::vector<int64_t>>(&it->second);
}

bool IsStatic(const Type& t) {
  return t.is_tensor() && std::all_of(t.shape().begin(), t.shape().end(), [](const Dim& d) { return d.is_const(); });
}

bool SameType(const Expr& a, const Expr& b) {
  return a.checked_type() && b.checked_type() && *a.checked_type() == *b.checked_type();
}

// Whether the scalar constant `e` equals `value` (any numeric dtype).
bool IsScalar(const Expr& e, double value) {
  if (!e.is(ExprKind::kConstant) || e.value()->ndim() != 0) return false;
  const NDArray& v = e.value();
  switch (v->dtype()) {
    case DType::kF32: return *v->data_as<float>() == value;
    case DType::kF64: return *v->data_as<double>() == value;
    case DType::kI32: return *v->data_as<int32_t>() == value;
    case DType::kI64: return *v->data_as<int64_t>() == value;
    default: return false;
  }
}

// The value of the f32 scalar constant `e`, if it is one.
std::optional<float> F32Scalar(const Expr& e) {
  if (!e.is(ExprKind::kConstant) || e.value()->ndim() != 0 || e.value()->dtype() != DType::kF32) {
    return std::nullopt;
  }
  return *e.value()->data_as<float>();
}

// The operands of a binary call of a commutative op as (one that satisfies `pred`,
// the other), whichever order they come in.
template <typename Pred>
std::optional<std::pair<Expr, Expr>> SplitOperands(const Expr& call, Pred pred) {
  if (call.args().size() != 2) return std::nullopt;
  if (pred(call.args()[0])) return std::make_pair(call.args()[0], call.args()[1]);
  if (pred(call.args()[1])) return std::make_pair(call.args()[1], call.args()[0]);
  return std::nullopt;
}

// mean(x, axis=[-1] or [rank - 1], keepdims=1), and no other attribute (exclude=1
// would reduce every other axis).
bool IsLastAxisMean(const Expr& e) {
  if (!IsOp(e, "mean") || e.args().size() != 1 || !e.args()[0].checked_type()) return false;
  for (const auto& [name, value] : e.attrs()) {
    if (name != "axis" && name != "keepdims") return false;
  }
  const std::vector<int64_t>* axes = IntsAttr(e, "axis");
  const auto keep = e.attrs().find("keepdims");
  const int64_t rank = e.args()[0].checked_type()->rank();
  return axes != nullptr && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == rank - 1) &&
         keep != e.attrs().end() && std::holds_alternative<int64_t>(keep->second) &&
         std::get<int64_t>(keep->second) == 1;
}

// [layer-norm]: LayerNorm over the last axis as ONNX exporters spell it,
//   d = x - mean(x); y = d / sqrt(mean(d^2) + eps) * gamma + beta
// (d^2 as power(d, 2) or d * d; adds and multiplies in either order), becomes
// nn.layer_norm(x, gamma, beta, axis=-1, epsilon=eps) for f32 x and 1-D gamma, beta.
std::optional<Expr> LayerNorm(const Expr& e) {
  if (!IsOp(e, "add")) return std::nullopt;
  auto is_scaled = [](const Expr& a) { return IsOp(a, "multiply"); };
  const auto scaled_beta = SplitOperands(e, is_scaled);
  if (!scaled_beta) return std::nullopt;
  const auto& [scaled, beta] = *scaled_beta;
  const auto normalized_gamma = SplitOperands(scaled, [](const Expr& a) { return IsOp(a, "divide"); });
  if (!normalized_gamma) return std::nullopt;
  const auto& [normalized, gamma] = *normalized_gamma;
  const Expr& d = normalized.args()[0];
  const Expr& stddev = normalized.args()[1];
  if (!IsOp(d, "subtract") || !IsOp(stddev, "sqrt")) return std::nullopt;
  const Expr& x = d.args()[0];
  const Expr& mean = d.args()[1];
  if (!IsLastAxisMean(mean) || mean.args()[0].identity() != x.identity()) return std::nullopt;
  const Expr& shifted = stddev.args()[0];
  if (!IsOp(shifted, "add")) return std::nullopt;
  const auto var_eps = SplitOperands(shifted, IsLastAxisMean);
  if (!var_eps) return std::nullopt;
  const auto& [variance, eps_expr] = *var_eps;
  const std::optional<float> eps = F32Scalar(eps_expr);
  const Expr& square = variance.args()[0];
  const bool squares_d =
      (IsOp(square, "power") && square.args()[0].identity() == d.identity() &&
       F32Scalar(square.args()[1]) == 2.0f) ||
      (IsOp(square, "multiply") && square.args()[0].identity() == d.identity() &&
       square.args()[1].identity() == d.identity());
  if (!eps || *eps < 0 || !squares_d) return std::nullopt;
  const std::optional<Type>& xt = x.checked_type();
  if (!xt || !xt->is_tensor() || xt->dtype() != DType::kF32 || xt->rank() < 1) return std::nullopt;
  for (const Expr& p : {gamma, beta}) {
    const std::optional<Type>& pt = p.checked_type();
    if (!pt || !pt->is_tensor() || pt->dtype() != DType::kF32 || pt->rank() != 1 ||
        pt->shape()[0] != xt->shape().back()) {
      return std::nullopt;
    }
  }
  return Expr::Call(Expr::Op("nn.layer_norm"), {x, gamma, beta},
                    {{"axis", int64_t{-1}}, {"epsilon", static_cast<double>(*eps)}}, e.source());
}

// Whether `e` is an f32 scalar constant within a relative 1e-6 of `value`.
bool IsNear(const Expr& e, double value) {
  const std::optional<float> v = F32Scalar(e);
  return v && std::abs(*v - value) <= 1e-6 * std::abs(value);
}

// erf(x / sqrt(2)) or erf(x * (1 / sqrt(2))): the x, if `e` is one.
std::optional<Expr> ErfOfScaled(const Expr& e) {
  if (!IsOp(e, "erf")) return std::nullopt;
  const Expr& scaled = e.args()[0];
  if (IsOp(scaled, "divide") && IsNear(scaled.args()[1], std::sqrt(2.0))) return scaled.args()[0];
  if (IsOp(scaled, "multiply")) {
    const auto x_c = SplitOperands(scaled, [](const Expr& a) { return !IsNear(a, std::sqrt(0.5)); });
    if (x_c && IsNear(x_c->second, std::sqrt(0.5))) return x_c->first;
  }
  return std::nullopt;
}

// [bias-add]: nn.bias_add(x, b, axis) is add(x, b) when the axis is x's last, else
// add(x, reshape(b, newshape=[-1, 1, ...])) with one 1 per axis after it: operators
// fusion knows (a dense layer's bias joins its epilogue).
std::optional<Expr> BiasAdd(const Expr& e) {
  if (!IsOp(e, "nn.bias_add") || e.args().size() != 2) return std::nullopt;
  const std::optional<Type>& data = e.args()[0].checked_type();
  const std::optional<Type>& bias = e.args()[1].checked_type();
  if (!data || !bias || !data->is_tensor() || !bias->is_tensor() || bias->rank() != 1) return std::nullopt;
  int64_t axis = 1;
  if (const auto it = e.attrs().find("axis"); it != e.attrs().end()) {
    const auto* value = std::get_if<int64_t>(&it->second);
    if (value == nullptr) return std::nullopt;
    axis = *value;
  }
  const int64_t rank = data->rank();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  Expr b = e.args()[1];
  if (axis != rank - 1) {
    std::vector<int64_t> newshape = {-1};
    std::vector<Dim> shape = {bias->shape()[0]};
    for (int64_t i = axis + 1; i < rank; ++i) {
      newshape.push_back(1);
      shape.push_back(Dim(1));
    }
    b = Expr::Call(Expr::Op("reshape"), {b}, {{"newshape", newshape}}, e.source())
            .WithType(Type::Tensor(bias->dtype(), std::move(shape)));
  }
  return Expr::Call(Expr::Op("add"), {e.args()[0], b}, {}, e.source());
}

// [gelu]: x * (erf(x / sqrt(2)) + 1) * 0.5, with 0.5 applied to x or to the product and
// the commutative operands in either order, becomes gelu(x) (erf form). Fusion can then
// put it in a dense layer's epilogue.
std::optional<Expr> Gelu(const Expr& e) {
  if (!IsOp(e, "multiply")) return std::nullopt;
  const auto half_rest = SplitOperands(e, [](const Expr& a) { return IsNear(a, 0.5); });
  // The factors of x * (1 + erf(..)) once 0.5 is taken out, wherever it was.
  std::optional<std::pair<Expr, Expr>> factors;
  if (half_rest && IsOp(half_rest->second, "multiply")) {
    factors = std::make_pair(half_rest->second.args()[0], half_rest->second.args()[1]);
  } else if (!half_rest) {
    // (x * 0.5) * (1 + erf(..)), either order.
    const auto half_x = SplitOperands(e, [](const Expr& a) {
      return IsOp(a, "multiply") && SplitOperands(a, [](const Expr& b) { return IsNear(b, 0.5); });
    });
    if (!half_x) return std::nullopt;
    const auto x = SplitOperands(half_x->first, [](const Expr& b) { return IsNear(b, 0.5); });
    factors = std::make_pair(x->second, half_x->second);
  }
  if (!factors) return std::nullopt;
  for (const auto& [x, one_plus] : {*factors, std::make_pair(factors->second, factors->first)}) {
    if (!IsOp(one_plus, "add")) continue;
    const auto one_erf = SplitOperands(one_plus, [](const Expr& a) { return IsNear(a, 1.0); });
    if (!one_erf) continue;
    const std::optional<Expr> erf_x = ErfOfScaled(one_erf->second);
    if (!erf_x || erf_x->identity() != x.identity()) continue;
    const std::optional<Type>& t = x.checked_type();
    if (!t || !t->is_tensor() || t->dtype() != DType::kF32) return std::nullopt;
    return Expr::Call(Expr::Op("gelu"), {x}, {}, e.source());
  }
  return std::nullopt;
}

bool IsF32Rank4(const Expr& e) {
  const std::optional<Type>& t = e.checked_type();
  return t && t->is_tensor() && t->dtype() == DType::kF32 && t->rank() == 4;
}

// `kt` [b, h, d, s] as k [b, h, s, d]: its last two axes swapped, composed with the
// transpose that made it if there is one (BERT's K is transpose(K4, [0, 2, 3, 1])).
Expr SwapLastTwo(const Expr& kt, const std::string& source) {
  const std::vector<int64_t>* p = IsOp(kt, "transpose") ? IntsAttr(kt, "axes") : nullptr;
  if (p != nullptr && p->size() == 4) {
    return Expr::Call(Expr::Op("transpose"), {kt.args()[0]},
                      {{"axes", std::vector<int64_t>{(*p)[0], (*p)[1], (*p)[3], (*p)[2]}}}, kt.source());
  }
  return Expr::Call(Expr::Op("transpose"), {kt}, {{"axes", std::vector<int64_t>{0, 1, 3, 2}}}, source);
}

// [attention]: matmul(softmax(matmul(q, kᵀ) * scale [+ mask], axis=-1), v) for rank-4
// f32 q, kᵀ and v (the scale as a multiply or a divide by a constant, the mask added
// either side) becomes nn.attention(q, k, v[, mask], scale), which never writes the
// scores to memory.
std::optional<Expr> Attention(const Expr& e) {
  if (!IsOp(e, "matmul") || e.args().size() != 2) return std::nullopt;
  const Expr& probs = e.args()[0];
  const Expr& v = e.args()[1];
  if (!IsOp(probs, "nn.softmax") || !IsF32Rank4(probs) || !IsF32Rank4(v)) return std::nullopt;
  const auto axis = probs.attrs().find("axis");
  if (axis == probs.attrs().end() || !std::holds_alternative<int64_t>(axis->second) ||
      (std::get<int64_t>(axis->second) != -1 && std::get<int64_t>(axis->second) != 3) ||
      probs.attrs().size() != 1) {
    return std::nullopt;
  }
  Expr logits = probs.args()[0];
  std::optional<Expr> mask;
  auto is_scaled = [](const Expr& a) {
    return (IsOp(a, "divide") && F32Scalar(a.args()[1])) ||
           (IsOp(a, "multiply") && (F32Scalar(a.args()[0]) || F32Scalar(a.args()[1])));
  };
  if (IsOp(logits, "add")) {
    const auto scaled_mask = SplitOperands(logits, is_scaled);
    if (!scaled_mask) return std::nullopt;
    mask = scaled_mask->second;
    logits = scaled_mask->first;
  }
  double scale = 1;
  Expr scores = logits;
  if (IsOp(logits, "divide") && F32Scalar(logits.args()[1])) {
    scale = 1.0 / static_cast<double>(*F32Scalar(logits.args()[1]));
    scores = logits.args()[0];
  } else if (IsOp(logits, "multiply")) {
    const auto c_scores = SplitOperands(logits, [](const Expr& a) { return F32Scalar(a).has_value(); });
    if (!c_scores) return std::nullopt;
    scale = *F32Scalar(c_scores->first);
    scores = c_scores->second;
  }
  if (!IsOp(scores, "matmul") || !std::isfinite(scale) || scale == 0) return std::nullopt;
  const Expr& q = scores.args()[0];
  const Expr& kt = scores.args()[1];
  if (!IsF32Rank4(q) || !IsF32Rank4(kt)) return std::nullopt;
  if (mask) {
    const std::optional<Type>& mt = mask->checked_type();
    if (!mt || !mt->is_tensor() || mt->dtype() != DType::kF32 || mt->rank() > 4) return std::nullopt;
  }
  std::vector<Expr> args = {q, SwapLastTwo(kt, e.source()), v};
  if (mask) args.push_back(*mask);
  return Expr::Call(Expr::Op("nn.attention"), std::move(args), {{"scale", scale}}, e.source());
}

// Whether `e` is transpose(x, axes=[0, 2, 1, 3]): [B, S, H, D] to [B, H, S, D].
bool SwapsAxes12(const Expr& e) {
  const std::vector<int64_t>* axes = IsOp(e, "transpose") ? IntsAttr(e, "axes") : nullptr;
  return axes != nullptr && *axes == std::vector<int64_t>{0, 2, 1, 3};
}

// [attention-layout]: nn.attention (layout BHSD) whose q, k and v are each
// transpose(x, [0, 2, 1, 3]) becomes transpose(nn.attention(x_q, x_k, x_v[, mask],
// layout="BSHD"), [0, 2, 1, 3]), which reads the heads in place: three transposes
// fewer, and the one left cancels with the transpose back to [B, S, H, D] that follows
// attention in BERT-style models ([transpose-chain]). Transposes that other users share
// stay for them: at worst (all three shared, no transpose back) one transpose more.
std::optional<Expr> AttentionLayout(const Expr& e) {
  if (!IsOp(e, "nn.attention") || e.args().size() < 3) return std::nullopt;
  const auto layout = e.attrs().find("layout");
  if (layout != e.attrs().end() && layout->second != kernels::AttrValue(std::string("BHSD"))) {
    return std::nullopt;
  }
  std::vector<Expr> args = e.args();
  for (int i = 0; i < 3; ++i) {
    if (!SwapsAxes12(args[i])) return std::nullopt;
    args[i] = args[i].args()[0];
  }
  kernels::Attrs attrs = e.attrs();
  attrs["layout"] = std::string("BSHD");
  return Expr::Call(Expr::Op("transpose"),
                    {Expr::Call(e.callee(), std::move(args), std::move(attrs), e.source())},
                    {{"axes", std::vector<int64_t>{0, 2, 1, 3}}}, e.source());
}

Expr Simplify(const Expr& e) {
  if (!e.is(ExprKind::kCall) || !e.callee().is(ExprKind::kOp)) return e;
  if (std::optional<Expr> attention = Attention(e)) {
    return AttentionLayout(*attention).value_or(*attention);
  }
  if (std::optional<Expr> attention = AttentionLayout(e)) return *attention;
  if (std::optional<Expr> layer_norm = LayerNorm(e)) return *layer_norm;
  if (std::optional<Expr> gelu = Gelu(e)) return *gelu;
  if (IsOp(e, "reshape")) {
    const Expr& x = e.args()[0];
    // [reshape-identity]
    if (e.checked_type() && IsStatic(*e.checked_type()) && SameType(e, x)) return x;
    // [reshape-chain]
    const std::vector<int64_t>* codes = IntsAttr(e, "newshape");
    if (IsOp(x, "reshape") && codes != nullptr &&
        std::all_of(codes->begin(), codes->end(), [](int64_t c) { return c > 0 || c == -1; })) {
      return Expr::Call(e.callee(), {x.args()[0]}, e.attrs(), e.source());
    }
    return e;
  }
  if (IsOp(e, "transpose") && IsOp(e.args()[0], "transpose")) {
    // [transpose-chain]: z[i] = y[q[i]] = x[p[q[i]]].
    const Expr& inner = e.args()[0];
    const std::vector<int64_t>* p = IntsAttr(inner, "axes");
    const std::vector<int64_t>* q = IntsAttr(e, "axes");
    if (p == nullptr || q == nullptr || p->size() != q->size() || p->empty()) return e;
    const int64_t rank = static_cast<int64_t>(p->size());
    std::vector<int64_t> composed;
    for (int64_t qi : *q) {
      const int64_t a = qi < 0 ? qi + rank : qi;
      if (a < 0 || a >= rank) return e;
      const int64_t pa = (*p)[a];
      composed.push_back(pa < 0 ? pa + rank : pa);
    }
    bool identity = true;
    for (int64_t i = 0; i < rank; ++i) identity &= composed[i] == i;
    if (identity) return inner.args()[0];
    kernels::Attrs attrs = e.attrs();
    attrs["axes"] = composed;
    return Expr::Call(e.callee(), {inner.args()[0]}, std::move(attrs), e.source());
  }
  if (std::optional<Expr> add = BiasAdd(e)) return *add;
  // [arith-identity]
  const bool zero_right = IsOp(e, "add") || IsOp(e, "subtract");
  const bool one_right = IsOp(e, "multiply") || IsOp(e, "divide");
  if ((zero_right || one_right) && e.args().size() == 2) {
    const double neutral = zero_right ? 0.0 : 1.0;
    if (IsScalar(e.args()[1], neutral) && SameType(e, e.args()[0])) return e.args()[0];
    const bool commutes = IsOp(e, "add") || IsOp(e, "multiply");
    if (commutes && IsScalar(e.args()[0], neutral) && SameType(e, e.args()[1])) return e.args()[1];
  }
  return e;
}

}  // namespace

absl::StatusOr<Expr> SimplifyAlgebra(const Expr& expr) {
  return RewriteBottomUp(expr, [](const Expr& e) -> absl::StatusOr<Expr> { return Simplify(e); });
}

absl::StatusOr<Module> SimplifyAlgebra(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return SimplifyAlgebra(fn); });
}

}  // namespace dynvm::compiler
