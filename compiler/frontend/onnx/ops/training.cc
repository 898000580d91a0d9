// Converters of ONNX's training operators (domain ai.onnx.preview.training, version 1):
// the optimizers Adagrad, Adam and Momentum, one update step of n tensors at a time, as
// elementwise compositions of ONNX's reference formulas. Their inputs are the learning
// rate R (a float scalar), the step count T (an int64 scalar), then n tensors of each
// kind in turn (the X's, the G's, then each state of the optimizer); their outputs the n
// new X's, then the n new values of each state. The scalars' arithmetic is done in X's
// dtype.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// The inputs of one optimizer node: R and T in X's dtype, and `kinds` groups of n
// tensors (n from the input count), each group one kind: X, G, then the states.
struct Step {
  OnnxValue r, t;
  std::vector<std::vector<OnnxValue>> groups;  // [kind][i]
  DType dtype;
};

absl::StatusOr<Step> ReadStep(const NodeContext& ctx, int kinds) {
  const int tensors = ctx.num_inputs() - 2;
  if (tensors < kinds || tensors % kinds != 0) {
    return ctx.Invalid(absl::StrFormat("%d inputs after R and T, expected a multiple of %d", tensors, kinds));
  }
  const int n = tensors / kinds;
  if (ctx.num_outputs() != (kinds - 1) * n) {
    return ctx.Invalid(absl::StrFormat("%d outputs for %d tensors, expected %d", ctx.num_outputs(), n,
                                       (kinds - 1) * n));
  }
  Step step;
  step.groups.resize(kinds);
  for (int k = 0; k < kinds; ++k) {
    for (int i = 0; i < n; ++i) {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(2 + k * n + i));
      step.groups[k].push_back(std::move(v));
    }
  }
  step.dtype = step.groups[0][0].type.dtype();
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue r, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue t, ctx.Input(1));
  if (r.type.rank() != 0 || t.type.rank() != 0 || t.type.dtype() != DType::kI64) {
    return ctx.Invalid(absl::StrFormat("R must be a float scalar and T an int64 scalar, got %s and %s",
                                       r.type.ToString(), t.type.ToString()));
  }
  DYNVM_ASSIGN_OR_RETURN(step.r, CastTo(ctx, r, step.dtype));
  DYNVM_ASSIGN_OR_RETURN(step.t, CastTo(ctx, t, step.dtype));
  return step;
}

// A small calculator over one dtype, so that the formulas read as formulas.
struct Calc {
  const NodeContext& ctx;
  DType dtype;
  absl::StatusOr<OnnxValue> C(double v) const { return NodeContext::ConstantScalarOf(dtype, v); }
  absl::StatusOr<OnnxValue> Op(std::string_view op, const OnnxValue& a, const OnnxValue& b) const {
    return ctx.Call(op, {a, b});
  }
};

// norm_coefficient · x + g.
absl::StatusOr<OnnxValue> Regularized(const Calc& c, double norm, const OnnxValue& x, const OnnxValue& g) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue k, c.C(norm));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue kx, c.Op("multiply", k, x));
  return c.Op("add", kx, g);
}

// Adagrad: r' = R / (1 + T · decay_factor); g' = norm · x + g; h' = h + g'²;
// x' = x - r' · g' / (√h' + epsilon). Outputs X_new..., H_new....
absl::StatusOr<Values> ConvertAdagrad(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const Step s, ReadStep(ctx, 3));
  DYNVM_ASSIGN_OR_RETURN(const double decay, ctx.Float("decay_factor", 0.0));
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 0.0));
  DYNVM_ASSIGN_OR_RETURN(const double norm, ctx.Float("norm_coefficient", 0.0));
  const Calc c{ctx, s.dtype};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue decay_c, c.C(decay));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue one, c.C(1.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue eps, c.C(epsilon));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue td, c.Op("multiply", s.t, decay_c));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue denom, c.Op("add", one, td));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue rate, c.Op("divide", s.r, denom));
  Values xs, hs;
  for (size_t i = 0; i < s.groups[0].size(); ++i) {
    const OnnxValue &x = s.groups[0][i], &g = s.groups[1][i], &h = s.groups[2][i];
    DYNVM_ASSIGN_OR_RETURN(OnnxValue gr, Regularized(c, norm, x, g));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue g2, c.Op("multiply", gr, gr));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue h_new, c.Op("add", h, g2));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue root, ctx.Call("sqrt", {h_new}));
    DYNVM_ASSIGN_OR_RETURN(root, c.Op("add", root, eps));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue update, c.Op("multiply", rate, gr));
    DYNVM_ASSIGN_OR_RETURN(update, c.Op("divide", update, root));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue x_new, c.Op("subtract", x, update));
    xs.push_back(std::move(x_new));
    hs.push_back(std::move(h_new));
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// Adam: g' = norm · x + g; v' = α v + (1 - α) g'; h' = β h + (1 - β) g'²;
// r' = R · √(1 - β^T) / (1 - α^T) when T > 0, else R; x' = (1 - norm_post) ·
// (x - r' · v' / (√h' + epsilon)). Outputs X_new..., V_new..., H_new....
absl::StatusOr<Values> ConvertAdam(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const Step s, ReadStep(ctx, 4));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, ctx.Float("alpha", 0.9));
  DYNVM_ASSIGN_OR_RETURN(const double beta, ctx.Float("beta", 0.999));
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, ctx.Float("epsilon", 0.0));
  DYNVM_ASSIGN_OR_RETURN(const double norm, ctx.Float("norm_coefficient", 0.0));
  DYNVM_ASSIGN_OR_RETURN(const double norm_post, ctx.Float("norm_coefficient_post", 0.0));
  const Calc c{ctx, s.dtype};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, c.C(alpha));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue not_a, c.C(1.0 - alpha));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, c.C(beta));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue not_b, c.C(1.0 - beta));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue one, c.C(1.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c.C(0.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue eps, c.C(epsilon));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue keep, c.C(1.0 - norm_post));
  // The bias-corrected rate.
  DYNVM_ASSIGN_OR_RETURN(OnnxValue bt, c.Op("power", b, s.t));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue at, c.Op("power", a, s.t));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue num, c.Op("subtract", one, bt));
  DYNVM_ASSIGN_OR_RETURN(num, ctx.Call("sqrt", {num}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue den, c.Op("subtract", one, at));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue corrected, c.Op("multiply", s.r, num));
  DYNVM_ASSIGN_OR_RETURN(corrected, c.Op("divide", corrected, den));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue started, c.Op("greater", s.t, zero));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue rate, ctx.Call("where", {started, corrected, s.r}));
  Values xs, vs, hs;
  for (size_t i = 0; i < s.groups[0].size(); ++i) {
    const OnnxValue &x = s.groups[0][i], &g = s.groups[1][i], &v = s.groups[2][i], &h = s.groups[3][i];
    DYNVM_ASSIGN_OR_RETURN(OnnxValue gr, Regularized(c, norm, x, g));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue av, c.Op("multiply", a, v));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue ag, c.Op("multiply", not_a, gr));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v_new, c.Op("add", av, ag));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue g2, c.Op("multiply", gr, gr));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue bh, c.Op("multiply", b, h));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue bg, c.Op("multiply", not_b, g2));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue h_new, c.Op("add", bh, bg));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue root, ctx.Call("sqrt", {h_new}));
    DYNVM_ASSIGN_OR_RETURN(root, c.Op("add", root, eps));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue update, c.Op("divide", v_new, root));
    DYNVM_ASSIGN_OR_RETURN(update, c.Op("multiply", rate, update));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue x_new, c.Op("subtract", x, update));
    DYNVM_ASSIGN_OR_RETURN(x_new, c.Op("multiply", keep, x_new));
    xs.push_back(std::move(x_new));
    vs.push_back(std::move(v_new));
    hs.push_back(std::move(h_new));
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

// Momentum: g' = norm · x + g; β' = β when T > 0, else 1; v' = α v + β' g';
// x' = x - R · v' (mode "standard") or x - R · (g' + α v') ("nesterov"). Outputs
// X_new..., V_new....
absl::StatusOr<Values> ConvertMomentum(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const Step s, ReadStep(ctx, 3));
  DYNVM_ASSIGN_OR_RETURN(const double alpha, ctx.Float("alpha"));
  DYNVM_ASSIGN_OR_RETURN(const double beta, ctx.Float("beta"));
  DYNVM_ASSIGN_OR_RETURN(const double norm, ctx.Float("norm_coefficient"));
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, ctx.String("mode"));
  if (mode != "standard" && mode != "nesterov") {
    return ctx.Invalid(absl::StrFormat("mode must be \"standard\" or \"nesterov\", got \"%s\"", mode));
  }
  const Calc c{ctx, s.dtype};
  DYNVM_ASSIGN_OR_RETURN(OnnxValue a, c.C(alpha));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue b, c.C(beta));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue one, c.C(1.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, c.C(0.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue started, c.Op("greater", s.t, zero));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue b_adjusted, ctx.Call("where", {started, b, one}));
  Values xs, vs;
  for (size_t i = 0; i < s.groups[0].size(); ++i) {
    const OnnxValue &x = s.groups[0][i], &g = s.groups[1][i], &v = s.groups[2][i];
    DYNVM_ASSIGN_OR_RETURN(OnnxValue gr, Regularized(c, norm, x, g));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue av, c.Op("multiply", a, v));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue bg, c.Op("multiply", b_adjusted, gr));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v_new, c.Op("add", av, bg));
    OnnxValue direction = v_new;
    if (mode == "nesterov") {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue av_new, c.Op("multiply", a, v_new));
      DYNVM_ASSIGN_OR_RETURN(direction, c.Op("add", gr, av_new));
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue update, c.Op("multiply", s.r, direction));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue x_new, c.Op("subtract", x, update));
    xs.push_back(std::move(x_new));
    vs.push_back(std::move(v_new));
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

}  // namespace

void AddTrainingConverters(ConverterTable& table) {
  table.insert({
      {"ai.onnx.preview.training:Adagrad", {ConvertAdagrad, {"decay_factor", "epsilon", "norm_coefficient"}}},
      {"ai.onnx.preview.training:Adam",
       {ConvertAdam, {"alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post"}}},
      {"ai.onnx.preview.training:Momentum", {ConvertMomentum, {"alpha", "beta", "mode", "norm_coefficient"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
