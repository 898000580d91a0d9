// Converters of ONNX's recurrent layers, LSTM, GRU and RNN, to the kernels nn.lstm,
// nn.gru and nn.rnn, one call per direction.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "kernels/nn/rnn_activation.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// `w`'s `blocks` equal row blocks along axis 0 reordered: block i of the result is
// block order[i] of `w` (ONNX's gate order to PyTorch's, which the kernels use).
absl::StatusOr<OnnxValue> ReorderGates(const NodeContext& ctx, const OnnxValue& w,
                                       const std::vector<int>& order) {
  const int blocks = static_cast<int>(order.size());
  DYNVM_ASSIGN_OR_RETURN(OnnxValue parts, ctx.Call("split", {w}, {{"indices_or_sections", int64_t{blocks}},
                                                                  {"axis", int64_t{0}}}));
  std::vector<OnnxValue> reordered;
  for (const int i : order) reordered.push_back(NodeContext::Field(parts, i));
  return ctx.Call("concatenate", std::move(reordered), {{"axis", int64_t{0}}});
}

// Direction `d` of a [directions, ...] tensor.
absl::StatusOr<OnnxValue> Direction(const NodeContext& ctx, const OnnxValue& t, int64_t d) {
  return ctx.Call("take", {t, NodeContext::ConstantI64({d}, /*scalar=*/true)}, {{"axis", int64_t{0}}});
}

// The attributes of direction `d`'s call (of `directions`) for ONNX's activations
// (`kSlots` per direction, the first direction's first; none: the defaults) and their
// alpha and beta values, which the functions that take one consume in that order: the
// direction's functions (activation_f, _g, _h) and the values they consume
// (kernels/nn/rnn_activation.h).
template <int kSlots>
absl::Status AddActivationAttrs(const NodeContext& ctx, int64_t directions, int64_t d, kernels::Attrs& attrs) {
  DYNVM_ASSIGN_OR_RETURN(const std::vector<std::string> names,
                         ctx.Strings("activations", std::vector<std::string>{}));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<double> alphas, ctx.Floats("activation_alpha", std::vector<double>{}));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<double> betas, ctx.Floats("activation_beta", std::vector<double>{}));
  if (names.empty()) return absl::OkStatus();
  if (names.size() != static_cast<size_t>(kSlots * directions)) {
    return ctx.Invalid(absl::StrFormat("activations has %d names, expected %d (%d per direction)", names.size(),
                                       kSlots * directions, kSlots));
  }
  static constexpr const char* kAttrs[] = {"activation_f", "activation_g", "activation_h"};
  size_t alpha = 0, beta = 0;  // the values consumed so far
  std::vector<double> own_alphas, own_betas;
  for (int64_t i = 0; i < kSlots * (d + 1); ++i) {
    const absl::StatusOr<kernels::nn::RnnActivationKind> parsed = kernels::nn::ParseRnnActivation(names[i]);
    if (!parsed.ok()) return ctx.Invalid(std::string(parsed.status().message()));
    const kernels::nn::RnnActivationKind kind = *parsed;
    const bool own = i >= kSlots * d;
    if (own) attrs[kAttrs[i - kSlots * d]] = names[i];
    if (kernels::nn::RnnActivationTakesAlpha(kind) && alpha < alphas.size()) {
      if (own) own_alphas.push_back(alphas[alpha]);
      ++alpha;
    }
    if (kernels::nn::RnnActivationTakesBeta(kind) && beta < betas.size()) {
      if (own) own_betas.push_back(betas[beta]);
      ++beta;
    }
  }
  if (!own_alphas.empty()) attrs["activation_alpha"] = std::move(own_alphas);
  if (!own_betas.empty()) attrs["activation_beta"] = std::move(own_betas);
  return absl::OkStatus();
}

// ONNX LSTM (gates i, o, f, c), GRU (z, r, h) and RNN (kGates 4, 3, 1) as nn.lstm / nn.gru
// (PyTorch's i, f, g, o and r, z, n) / nn.rnn, one call per direction: activations,
// clip, LSTM peepholes, GRU's linear_before_reset and sequence_lens as the kernels take
// them; layout 1 (batch first) by transposes around the time-major kernels.
template <int kGates>
absl::StatusOr<Values> ConvertRecurrent(NodeContext& ctx) {
  constexpr bool kLstm = kGates == 4;
  constexpr int kSlots = kLstm ? 3 : kGates == 3 ? 2 : 1;  // activations per direction
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue w, ctx.Input(1));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue r, ctx.Input(2));
  DYNVM_ASSIGN_OR_RETURN(const int64_t hidden, ctx.Int("hidden_size"));
  DYNVM_ASSIGN_OR_RETURN(const std::string direction, ctx.String("direction", "forward"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t layout, ctx.Int("layout", 0));
  kernels::Attrs attrs;
  if (ctx.HasAttr("clip")) {
    DYNVM_ASSIGN_OR_RETURN(const double clip, ctx.Float("clip"));
    attrs["clip"] = clip;  // the kernel rejects clip <= 0
  }
  if constexpr (kLstm) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t input_forget, ctx.Int("input_forget", 0));
    if (input_forget != 0) return ctx.Unimplemented("input_forget = 1");
  } else if constexpr (kGates == 3) {
    DYNVM_ASSIGN_OR_RETURN(const int64_t before_reset, ctx.Int("linear_before_reset", 0));
    if (before_reset == 0) attrs["linear_before_reset"] = int64_t{0};  // the kernel's default is 1
  }
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.Invalid(absl::StrFormat("direction '%s'", direction));
  }
  if (layout != 0 && layout != 1) return ctx.Invalid(absl::StrFormat("layout %d", layout));
  if (x.type.rank() != 3) return ctx.Invalid("X must have rank 3");
  const auto transpose = [&](const OnnxValue& v, std::vector<int64_t> perm) {
    return ctx.Call("transpose", {v}, {{"axes", std::move(perm)}});
  };
  if (layout == 1) {  // [batch, seq, in] to [seq, batch, in]
    DYNVM_ASSIGN_OR_RETURN(x, transpose(x, {1, 0, 2}));
  }
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  const std::vector<int> order = kLstm         ? std::vector<int>{0, 2, 3, 1}
                                 : kGates == 3 ? std::vector<int>{1, 0, 2}
                                               : std::vector<int>{0};
  const Dim batch = x.type.shape()[1];
  std::optional<OnnxValue> bias = ctx.OptionalInput(3);
  const std::optional<OnnxValue> seq_lens = ctx.OptionalInput(4);
  std::optional<OnnxValue> peepholes = kLstm ? ctx.OptionalInput(7) : std::nullopt;
  // The kernels take peepholes after both biases and seq_lens after all of them: the
  // missing ones before a given one are zeros (which change nothing).
  const auto zeros = [&](int64_t per_direction) -> absl::StatusOr<OnnxValue> {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(DType::kF32, 0.0));
    return ctx.Call("full", {zero}, {{"shape", std::vector<int64_t>{directions, per_direction * hidden}},
                                     {"dtype", std::string("float32")}});
  };
  if ((peepholes || seq_lens) && !bias) {
    DYNVM_ASSIGN_OR_RETURN(bias, zeros(2 * kGates));
  }
  if (kLstm && seq_lens && !peepholes) {
    DYNVM_ASSIGN_OR_RETURN(peepholes, zeros(3));
  }

  const auto reorder = [&](const OnnxValue& v) -> absl::StatusOr<OnnxValue> {
    if (kGates == 1) return v;  // one gate, nothing to reorder
    return ReorderGates(ctx, v, order);
  };
  std::vector<OnnxValue> ys, hs, cs;
  for (int64_t d = 0; d < directions; ++d) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue wd, Direction(ctx, w, d));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue rd, Direction(ctx, r, d));
    DYNVM_ASSIGN_OR_RETURN(wd, reorder(wd));
    DYNVM_ASSIGN_OR_RETURN(rd, reorder(rd));
    // The initial states: given ([directions, batch, hidden], or [batch, directions,
    // hidden] with layout 1), or zeros of [batch, hidden].
    std::vector<OnnxValue> states;
    for (const int input : kLstm ? std::vector<int>{5, 6} : std::vector<int>{5}) {
      if (std::optional<OnnxValue> s = ctx.OptionalInput(input)) {
        OnnxValue given = *s;
        if (layout == 1) {
          DYNVM_ASSIGN_OR_RETURN(given, transpose(given, {1, 0, 2}));
        }
        DYNVM_ASSIGN_OR_RETURN(OnnxValue sd, Direction(ctx, given, d));
        states.push_back(std::move(sd));
        continue;
      }
      DYNVM_ASSIGN_OR_RETURN(OnnxValue dims, ctx.Call("shape_of", {x}, {{"start", int64_t{1}}, {"end", int64_t{2}}}));
      DYNVM_ASSIGN_OR_RETURN(dims, ctx.Call("concatenate", {dims, NodeContext::ConstantI64({hidden})},
                                            {{"axis", int64_t{0}}}));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue zeros, ctx.Call("dyn.zeros", {dims}, {{"dtype", std::string("float32")}}));
      states.push_back(ctx.Narrow(zeros, Type::Tensor(DType::kF32, {batch, hidden})));
    }
    std::vector<OnnxValue> args = {x};
    args.insert(args.end(), states.begin(), states.end());
    args.push_back(wd);
    args.push_back(rd);
    if (bias) {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue bd, Direction(ctx, *bias, d));
      DYNVM_ASSIGN_OR_RETURN(OnnxValue halves, ctx.Call("split", {bd}, {{"indices_or_sections", int64_t{2}},
                                                                       {"axis", int64_t{0}}}));
      for (int half = 0; half < 2; ++half) {
        DYNVM_ASSIGN_OR_RETURN(OnnxValue b, reorder(NodeContext::Field(halves, half)));
        args.push_back(std::move(b));
      }
    }
    if (peepholes) {  // ONNX's order (i, o, f), as the kernel takes it
      DYNVM_ASSIGN_OR_RETURN(OnnxValue pd, Direction(ctx, *peepholes, d));
      args.push_back(std::move(pd));
    }
    if (seq_lens) args.push_back(*seq_lens);
    kernels::Attrs call_attrs = attrs;
    call_attrs["reverse"] = int64_t{direction == "reverse" || d == 1};
    DYNVM_RETURN_IF_ERROR(AddActivationAttrs<kSlots>(ctx, directions, d, call_attrs));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue out, ctx.Call(kLstm ? "nn.lstm" : kGates == 3 ? "nn.gru" : "nn.rnn",
                                                   std::move(args), std::move(call_attrs)));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue y, ctx.Call("expand_dims", {NodeContext::Field(out, 0)},
                                                 {{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue h, ctx.Call("expand_dims", {NodeContext::Field(out, 1)},
                                                 {{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
    ys.push_back(std::move(y));
    hs.push_back(std::move(h));
    if constexpr (kLstm) {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue c, ctx.Call("expand_dims", {NodeContext::Field(out, 2)},
                                                   {{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
      cs.push_back(std::move(c));
    }
  }
  // Directions joined: Y [seq, directions, batch, hidden] and the states [directions,
  // batch, hidden]; with layout 1, [batch, seq, directions, hidden] and [batch,
  // directions, hidden].
  const auto join = [&](std::vector<OnnxValue> parts, int64_t axis,
                        std::vector<int64_t> batch_first) -> absl::StatusOr<OnnxValue> {
    OnnxValue joined = parts[0];
    if (parts.size() > 1) {
      DYNVM_ASSIGN_OR_RETURN(joined, ctx.Call("concatenate", std::move(parts), {{"axis", axis}}));
    }
    if (layout == 1) return transpose(joined, std::move(batch_first));
    return joined;
  };
  Values out;
  DYNVM_ASSIGN_OR_RETURN(OnnxValue y, join(std::move(ys), 1, {2, 0, 1, 3}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue h, join(std::move(hs), 0, {1, 0, 2}));
  out.push_back(std::move(y));
  out.push_back(std::move(h));
  if constexpr (kLstm) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue c, join(std::move(cs), 0, {1, 0, 2}));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

void AddRecurrentConverters(ConverterTable& table) {
  table.insert({
      {"LSTM", {ConvertRecurrent<4>, {"hidden_size", "direction", "layout", "clip", "activations",
                                      "activation_alpha", "activation_beta", "input_forget"}}},
      {"GRU", {ConvertRecurrent<3>, {"hidden_size", "direction", "layout", "clip", "activations",
                                     "activation_alpha", "activation_beta", "linear_before_reset"}}},
      {"RNN", {ConvertRecurrent<1>, {"hidden_size", "direction", "layout", "clip", "activations",
                                     "activation_alpha", "activation_beta"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
