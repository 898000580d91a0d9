// Relations of the neural-network operators (kernels/nn/, kernels/gemm/matmul.cc): softmax,
// the normalisations, the matrix products, attention, the recurrent cells and layers, and
// grid sampling.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"
#include "kernels/nn/rnn_activation.h"

namespace dynvm::compiler::internal {
namespace {

constexpr DType kF32[] = {DType::kF32};

absl::StatusOr<Type> SoftmaxRel(const OpCall& call) {
  // With a `prologue`, the data is that program of the arguments (fusion's).
  const bool prologue = call.attrs.contains("prologue");
  if (!prologue && call.args.size() != 1) {
    return OpError(call, absl::StrFormat("takes 1 argument without a prologue, got %d", call.args.size()));
  }
  DYNVM_ASSIGN_OR_RETURN(const Type x,
                         prologue ? FusedProgramRel(call, call.args.size()) : TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", -1));
  DYNVM_RETURN_IF_ERROR(NormalizeAxis(call, axis, x.rank()).status());
  return x;
}

// data, gamma [n], beta [n] with n = data.shape[axis]; with a `prologue`, the data is that
// program of the arguments before gamma and beta (fusion's).
absl::StatusOr<Type> LayerNormRel(const OpCall& call) {
  const bool prologue = call.attrs.contains("prologue");
  if (!prologue && call.args.size() != 3) {
    return OpError(call, absl::StrFormat("takes 3 arguments without a prologue, got %d", call.args.size()));
  }
  const int params = static_cast<int>(call.args.size()) - 2;  // gamma's position
  DYNVM_ASSIGN_OR_RETURN(const Type x,
                         prologue ? FusedProgramRel(call, params) : TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, x.rank()));
  for (int i : {params, params + 1}) {
    const bool gamma = i == params;
    DYNVM_ASSIGN_OR_RETURN(const Type p, TensorArg(call, i, gamma ? "gamma" : "beta", kF32));
    if (p.rank() != 1 || !MayEqual(p.shape()[0], x.shape()[a])) {
      return OpError(call, absl::StrFormat("%s has shape %s, expected [%s]", gamma ? "gamma" : "beta",
                                           ShapeText(p.shape()), x.shape()[a].ToString()));
    }
  }
  return x;
}

// x [..., k] with n output features, once the optional bias (argument 2) is checked.
absl::StatusOr<Type> DenseOutput(const OpCall& call, const Type& x, const Dim& n) {
  if (call.args.size() == 3) {
    DYNVM_ASSIGN_OR_RETURN(const Type bias, TensorArg(call, 2, "bias", kF32));
    if (bias.rank() != 1 || !MayEqual(bias.shape()[0], n)) {
      return OpError(call, absl::StrFormat("bias has shape %s, expected [%s]", ShapeText(bias.shape()), n.ToString()));
    }
  }
  std::vector<Dim> shape = x.shape();
  shape.back() = n;
  return Type::Tensor(DType::kF32, std::move(shape));
}

// x [..., k], weight [n, k] [, bias [n]] -> [..., n].
absl::StatusOr<Type> DenseRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type w, TensorArg(call, 1, "weight", kF32));
  if (x.rank() < 1) return OpError(call, "data has rank 0, expected at least 1");
  if (w.rank() != 2) {
    return OpError(call, absl::StrFormat("weight has shape %s, expected [units, k]", ShapeText(w.shape())));
  }
  if (!MayEqual(x.shape().back(), w.shape()[1])) {
    return OpError(call, absl::StrFormat("inner dimensions differ: %s and %s give k = %s and %s",
                                         ShapeText(x.shape()), ShapeText(w.shape()),
                                         x.shape().back().ToString(), w.shape()[1].ToString()));
  }
  Dim n = w.shape()[0];
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, IntAttr(call, "units", -1));
  if (units >= 0) {
    if (!MayEqual(n, units)) {
      return OpError(call, absl::StrFormat("attribute units is %d but the weight gives %s", units, n.ToString()));
    }
    n = units;
  }
  return DenseOutput(call, x, n);
}

// A product with broadcast batch dims: a [..., m, k] (or [..., k, m] transposed), b
// [..., k, n] (or [..., n, k]) -> [batch..., m, n]. With kPromote (numpy's matmul), a
// 1-D operand is a row (a) or a column (b) and its axis is dropped from the result.
template <bool kPromote, bool kTransposeB>
absl::StatusOr<Type> MatmulRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type a, TensorArg(call, 0, "a", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type b, TensorArg(call, 1, "b", kF32));
  const int min_rank = kPromote ? 1 : 2;
  if (a.rank() < min_rank || b.rank() < min_rank) {
    return OpError(call, absl::StrFormat("operands have shapes %s and %s, expected rank %d or more",
                                         ShapeText(a.shape()), ShapeText(b.shape()), min_rank));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t ta, IntAttr(call, "transpose_a", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t tb, IntAttr(call, "transpose_b", kTransposeB ? 1 : 0));
  // (rows, cols) of an operand as the product sees it.
  const auto view = [&](const Type& t, bool transpose, bool row) -> absl::StatusOr<std::pair<Dim, Dim>> {
    const auto& s = t.shape();
    if (t.rank() == 1) {
      if (transpose) return OpError(call, absl::StrFormat("cannot transpose the 1-D %s", row ? "a" : "b"));
      return row ? std::pair<Dim, Dim>{1, s[0]} : std::pair<Dim, Dim>{s[0], 1};
    }
    const Dim& r = s[s.size() - 2];
    const Dim& c = s[s.size() - 1];
    return transpose ? std::pair{c, r} : std::pair{r, c};
  };
  DYNVM_ASSIGN_OR_RETURN(const auto va, view(a, ta != 0, true));
  DYNVM_ASSIGN_OR_RETURN(const auto vb, view(b, tb != 0, false));
  if (!MayEqual(va.second, vb.first)) {
    return OpError(call, absl::StrFormat("inner dimensions differ: %s and %s give k = %s and %s",
                                         ShapeText(a.shape()), ShapeText(b.shape()),
                                         va.second.ToString(), vb.first.ToString()));
  }
  Dim n = vb.second;
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, IntAttr(call, "units", -1));
  if (units >= 0) {
    if (!MayEqual(n, units)) {
      return OpError(call, absl::StrFormat("attribute units is %d but the weight gives %s", units, n.ToString()));
    }
    n = units;
  }
  const auto batch_of = [](const Type& t) {
    return std::vector<Dim>(t.shape().begin(), t.shape().end() - std::min(t.rank(), 2));
  };
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape, BroadcastShapes(call, batch_of(a), batch_of(b)));
  if (a.rank() > 1) shape.push_back(va.first);
  if (b.rank() > 1) shape.push_back(n);
  return Type::Tensor(DType::kF32, std::move(shape));
}

// a, b [, bias [n]] [, residual [m, n]] (residual=1: the last input) -> [m, n].
absl::StatusOr<Type> GemmRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t has_residual, IntAttr(call, "residual", 0));
  const size_t count = call.args.size();
  if (count < 2 + static_cast<size_t>(has_residual != 0) || count > 3 + static_cast<size_t>(has_residual != 0)) {
    return OpError(call, has_residual ? "takes a, b[, bias], residual (residual=1)" : "takes a, b[, bias] (residual=0)");
  }
  DYNVM_ASSIGN_OR_RETURN(const Type a, TensorArg(call, 0, "a", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type b, TensorArg(call, 1, "b", kF32));
  if (a.rank() != 2 || b.rank() != 2) {
    return OpError(call, absl::StrFormat("a and b must be matrices, got shapes %s and %s",
                                         ShapeText(a.shape()), ShapeText(b.shape())));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t ta, IntAttr(call, "trans_a", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t tb, IntAttr(call, "trans_b", 0));
  const Dim m = a.shape()[ta ? 1 : 0], ka = a.shape()[ta ? 0 : 1];
  const Dim kb = b.shape()[tb ? 1 : 0], n = b.shape()[tb ? 0 : 1];
  if (!MayEqual(ka, kb)) {
    return OpError(call, absl::StrFormat("inner dimensions differ: k = %s and %s", ka.ToString(), kb.ToString()));
  }
  const bool has_bias = count == 3 + static_cast<size_t>(has_residual != 0);
  if (has_bias) {
    DYNVM_ASSIGN_OR_RETURN(const Type bias, TensorArg(call, 2, "bias", kF32));
    if (bias.rank() != 1 || !MayEqual(bias.shape()[0], n)) {
      return OpError(call, absl::StrFormat("bias has shape %s, expected [%s]", ShapeText(bias.shape()), n.ToString()));
    }
  }
  if (has_residual) {
    DYNVM_ASSIGN_OR_RETURN(const Type r, TensorArg(call, static_cast<int>(count) - 1, "residual", kF32));
    if (r.rank() != 2 || !MayEqual(r.shape()[0], m) || !MayEqual(r.shape()[1], n)) {
      return OpError(call, absl::StrFormat("residual has shape %s, expected [%s, %s]", ShapeText(r.shape()),
                                           m.ToString(), n.ToString()));
    }
  }
  return Type::Tensor(DType::kF32, {m, n});
}

// data, gamma, beta, moving_mean, moving_var [c] with c = data.shape[axis].
absl::StatusOr<Type> BatchNormRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", 1));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, x.rank()));
  static constexpr const char* kNames[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (int i = 1; i <= 4; ++i) {
    DYNVM_ASSIGN_OR_RETURN(const Type p, TensorArg(call, i, kNames[i - 1], kF32));
    if (p.rank() != 1 || !MayEqual(p.shape()[0], x.shape()[a])) {
      return OpError(call, absl::StrFormat("%s has shape %s, expected [%s]", kNames[i - 1],
                                           ShapeText(p.shape()), x.shape()[a].ToString()));
    }
  }
  return x;
}

// The packed layout of a dense weight (kernels/gemm/gemm.h): [ceil(n / 16), k, 16].
constexpr int64_t kPanel = 16;

absl::StatusOr<Type> LayoutTransformRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type w, TensorArg(call, 0, "data", kF32));
  absl::StatusOr<std::string> src = kernels::GetStringAttr(call.attrs, "src_layout");
  absl::StatusOr<std::string> dst = kernels::GetStringAttr(call.attrs, "dst_layout");
  if (!src.ok() || !dst.ok() || *src != "NC" || *dst != "NC16n") {
    return OpError(call, "only src_layout=\"NC\" dst_layout=\"NC16n\" (packing a dense weight) is supported");
  }
  if (w.rank() != 2) {
    return OpError(call, absl::StrFormat("data has shape %s, expected [N, C] for layout NC", ShapeText(w.shape())));
  }
  return Type::Tensor(DType::kF32, {FloorDiv(w.shape()[0] + (kPanel - 1), kPanel), w.shape()[1], kPanel});
}

// nn.dense on a packed weight; units = n (default: every column of the panels).
absl::StatusOr<Type> DensePackRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type w, TensorArg(call, 1, "weight", kF32));
  if (x.rank() < 1) return OpError(call, "data has rank 0, expected at least 1");
  if (w.rank() != 3 || w.shape()[2] != Dim(kPanel)) {
    return OpError(call, absl::StrFormat("weight has shape %s, expected [ceil(units / 16), k, 16] (layout NC16n)",
                                         ShapeText(w.shape())));
  }
  if (!MayEqual(x.shape().back(), w.shape()[1])) {
    return OpError(call, absl::StrFormat("inner dimensions differ: k = %s and %s", x.shape().back().ToString(),
                                         w.shape()[1].ToString()));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, IntAttr(call, "units", -1));
  Dim n = w.shape()[0] * kPanel;
  if (units >= 0) {
    if (!MayEqual(FloorDiv(Dim(units) + (kPanel - 1), kPanel), w.shape()[0])) {
      return OpError(call, absl::StrFormat("attribute units is %d but the packed weight %s holds %s panels",
                                           units, ShapeText(w.shape()), w.shape()[0].ToString()));
    }
    n = units;
  }
  return DenseOutput(call, x, n);
}

// out = softmax(q · kᵀ · scale + mask) · v: q [B, H, Sq, D], k [B, H, Sk, D],
// v [B, H, Sk, Dv], mask broadcasting to [B, H, Sq, Sk] -> [B, H, Sq, Dv]; with the
// attribute layout = "BSHD", q, k, v and the result have S before H ([B, Sq, H, D]...),
// the mask as before.
absl::StatusOr<Type> AttentionRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const std::string layout,
                         kernels::GetStringAttr(call.attrs, "layout", "BHSD"));
  if (layout != "BHSD" && layout != "BSHD") {
    return OpError(call, absl::StrFormat("layout must be \"BHSD\" or \"BSHD\", got \"%s\"",
                                         layout));
  }
  const int seq = layout == "BSHD" ? 1 : 2, heads = 3 - seq;
  DYNVM_ASSIGN_OR_RETURN(const Type q, TensorArg(call, 0, "q", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type k, TensorArg(call, 1, "k", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type v, TensorArg(call, 2, "v", kF32));
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) {
    return OpError(call, absl::StrFormat("q %s, k %s and v %s must have rank 4 [%s]",
                                         ShapeText(q.shape()), ShapeText(k.shape()),
                                         ShapeText(v.shape()), seq == 1 ? "B, S, H, D" : "B, H, S, D"));
  }
  const auto& qs = q.shape();
  const auto& ks = k.shape();
  const auto& vs = v.shape();
  for (int i : {0, heads}) {
    if (!MayEqual(qs[i], ks[i]) || !MayEqual(qs[i], vs[i])) {
      return OpError(call, absl::StrFormat("q %s, k %s and v %s disagree on batch or heads",
                                           ShapeText(qs), ShapeText(ks), ShapeText(vs)));
    }
  }
  if (!MayEqual(qs[3], ks[3]) || !MayEqual(ks[seq], vs[seq])) {
    return OpError(call, absl::StrFormat("q %s, k %s and v %s: expected q and k to share D, k and v Sk",
                                         ShapeText(qs), ShapeText(ks), ShapeText(vs)));
  }
  if (call.args.size() == 4) {
    DYNVM_ASSIGN_OR_RETURN(const Type mask, TensorArg(call, 3, "mask", kF32));
    const std::vector<Dim> scores = {qs[0], qs[heads], qs[seq], ks[seq]};
    DYNVM_ASSIGN_OR_RETURN(const std::vector<Dim> b, BroadcastShapes(call, mask.shape(), scores));
    if (b.size() != 4 || !std::equal(b.begin(), b.end(), scores.begin(),
                                     [](const Dim& x, const Dim& y) { return MayEqual(x, y); })) {
      return OpError(call, absl::StrFormat("mask %s does not broadcast to the scores %s",
                                           ShapeText(mask.shape()), ShapeText(scores)));
    }
  }
  std::vector<Dim> out = qs;
  out[3] = vs[3];
  return Type::Tensor(DType::kF32, std::move(out));
}

// Sequences packed without padding: q [T, H, D], k [T, H, D], v [T, H, Dv], offsets
// [n + 1] (i32 or i64; their values, rising from 0 to T, the kernel checks) -> [T, H, Dv].
absl::StatusOr<Type> VarlenAttentionRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type q, TensorArg(call, 0, "q", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type k, TensorArg(call, 1, "k", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type v, TensorArg(call, 2, "v", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type offsets, TensorArg(call, 3, "offsets", kIndex));
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3) {
    return OpError(call, absl::StrFormat("q %s, k %s and v %s must have rank 3 [T, H, D]",
                                         ShapeText(q.shape()), ShapeText(k.shape()),
                                         ShapeText(v.shape())));
  }
  const auto& qs = q.shape();
  const auto& ks = k.shape();
  const auto& vs = v.shape();
  if (!MayEqual(qs[0], ks[0]) || !MayEqual(qs[1], ks[1]) || !MayEqual(qs[2], ks[2]) ||
      !MayEqual(qs[0], vs[0]) || !MayEqual(qs[1], vs[1])) {
    return OpError(call, absl::StrFormat("q %s, k %s and v %s: expected k of q's shape and v [T, H, Dv]",
                                         ShapeText(qs), ShapeText(ks), ShapeText(vs)));
  }
  if (offsets.rank() != 1) {
    return OpError(call, absl::StrFormat("offsets %s must have rank 1 [sequences + 1]",
                                         ShapeText(offsets.shape())));
  }
  return Type::Tensor(DType::kF32, {qs[0], qs[1], vs[2]});
}

// sequence_positions(offsets [n + 1] (i32 or i64), tokens [T, ...]) -> [T] i64: each
// row's position within its packed sequence.
absl::StatusOr<Type> SequencePositionsRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type offsets, TensorArg(call, 0, "offsets", kIndex));
  DYNVM_ASSIGN_OR_RETURN(const Type tokens, TensorArg(call, 1, "tokens"));
  if (offsets.rank() != 1 || tokens.rank() < 1) {
    return OpError(call, absl::StrFormat("offsets %s must have rank 1 and tokens %s rank 1 or more",
                                         ShapeText(offsets.shape()), ShapeText(tokens.shape())));
  }
  return Type::Tensor(DType::kI64, {tokens.shape()[0]});
}

// sequence_rows(offsets [n + 1] (i32 or i64), row=r) -> [n] i64: each sequence's row r.
absl::StatusOr<Type> SequenceRowsRel(const OpCall& call) {
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  DYNVM_ASSIGN_OR_RETURN(const Type offsets, TensorArg(call, 0, "offsets", kIndex));
  if (offsets.rank() != 1) {
    return OpError(call, absl::StrFormat("offsets %s must have rank 1", ShapeText(offsets.shape())));
  }
  return Type::Tensor(DType::kI64, {offsets.shape()[0] - 1});
}

// PyTorch's cells: x [b, in], h [b, hid] (and c [b, hid]), w_ih [gates * hid, in],
// w_hh [gates * hid, hid] [, b_ih, b_hh [gates * hid]] -> h' (and c'); and the layers
// nn.lstm / nn.gru (kSequence): x [seq, b, in], h0 (and c0) as h (and c) -> (y [seq, b,
// hid], h_n (and c_n)), with the attribute reverse (0 or 1) and ONNX's activations and
// clip (kernels/nn/rnn_activation.h); nn.lstm also takes the peepholes p [3 hid] after
// both biases, nn.gru the attribute linear_before_reset (0 or 1); nn.rnn (kGates 1) is
// nn.gru's signature with one gate; the layers take ONNX's seq_lens [b] (int32 or int64)
// last, after all the others (for the LSTM, p). b and hid are the most informative of the
// extents that must equal them (hid: h's dim 1 and w_hh's).
template <int kGates, bool kSequence>
absl::StatusOr<Type> RnnRel(const OpCall& call) {
  constexpr bool kLstm = kGates == 4;
  constexpr bool kPeephole = kLstm && kSequence;
  static constexpr DType kIndex[] = {DType::kI32, DType::kI64};
  const int state_count = kLstm ? 2 : 1;
  const size_t weights = 1 + state_count;
  const size_t count = call.args.size();
  // The position of seq_lens, the last of all the inputs.
  const size_t seq_lens_at = kSequence ? weights + (kPeephole ? 5 : 4) : 0;
  const bool has_seq_lens = kSequence && count == seq_lens_at + 1;
  if (count != weights + 2 && count != weights + 4 && !(kPeephole && count == weights + 5) && !has_seq_lens) {
    return OpError(call, kPeephole   ? absl::StrFormat("takes %d, %d, %d or %d inputs, got %d", weights + 2,
                                                       weights + 4, weights + 5, weights + 6, count)
                         : kSequence ? absl::StrFormat("takes %d, %d or %d inputs, got %d", weights + 2,
                                                       weights + 4, weights + 5, count)
                                     : absl::StrFormat("takes %d or %d inputs, got %d", weights + 2, weights + 4,
                                                       count));
  }
  if (kSequence) {  // what the kernel's Bind accepts
    absl::Status known =
        kLstm ? kernels::CheckKnownAttrs(call.attrs, {"reverse", "activation_f", "activation_g", "activation_h",
                                                      "activation_alpha", "activation_beta", "clip"})
        : kGates == 3 ? kernels::CheckKnownAttrs(call.attrs, {"reverse", "linear_before_reset", "activation_f",
                                                              "activation_g", "activation_alpha", "activation_beta",
                                                              "clip"})
                      : kernels::CheckKnownAttrs(call.attrs, {"reverse", "activation_f", "activation_alpha",
                                                              "activation_beta", "clip"});
    if (!known.ok()) return OpError(call, known.message());
    for (const char* name : {"reverse", "linear_before_reset"}) {
      absl::StatusOr<bool> flag = kernels::GetBoolAttr(call.attrs, name, false);
      if (!flag.ok()) return OpError(call, flag.status().message());
    }
    absl::StatusOr<kernels::nn::RnnActivations> act = kernels::nn::GetRnnActivations(call.attrs, kGates);
    if (!act.ok()) return OpError(call, act.status().message());
  }
  std::vector<Type> t;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const bool lens = has_seq_lens && i == seq_lens_at;
    DYNVM_ASSIGN_OR_RETURN(Type ti, lens ? TensorArg(call, static_cast<int>(i), "seq_lens", kIndex)
                                         : TensorArg(call, static_cast<int>(i), absl::StrFormat("input %d", i), kF32));
    t.push_back(std::move(ti));
  }
  const Type& x = t[0];
  const Type& h = t[1];
  const int x_rank = kSequence ? 3 : 2;
  if (x.rank() != x_rank || h.rank() != 2) {
    return OpError(call, absl::StrFormat("x %s and h %s must be %s and [batch, hidden_size]", ShapeText(x.shape()),
                                         ShapeText(h.shape()),
                                         kSequence ? "[seq, batch, input_size]" : "[batch, input_size]"));
  }
  // hid as w_hh [gates hid, hid] also gives it, should h's be unknown.
  const Type& w_hh = t[weights + 1];
  const Dim b = x.shape()[x_rank - 2], in = x.shape()[x_rank - 1],
            hid = w_hh.rank() == 2 ? Unify(h.shape()[1], w_hh.shape()[1]) : h.shape()[1];
  const std::vector<std::vector<Dim>> expected = [&] {
    std::vector<std::vector<Dim>> e = {x.shape(), {b, hid}};
    if (kLstm) e.push_back({b, hid});
    e.push_back({hid * kGates, in});
    e.push_back({hid * kGates, hid});
    e.push_back({hid * kGates});
    e.push_back({hid * kGates});
    if (kPeephole) e.push_back({hid * 3});  // p, the LSTM's peepholes
    if (kSequence) e.push_back({b});        // seq_lens
    return e;
  }();
  for (size_t i = 0; i < t.size(); ++i) {
    const auto& s = t[i].shape();
    if (s.size() != expected[i].size() ||
        !std::equal(s.begin(), s.end(), expected[i].begin(), [](const Dim& x, const Dim& y) { return MayEqual(x, y); })) {
      return OpError(call, absl::StrFormat("input %d has shape %s, expected %s", i, ShapeText(s),
                                           ShapeText(expected[i])));
    }
  }
  Dim batch = Unify(b, h.shape()[0]), hidden = hid;
  if (kLstm) {
    batch = Unify(batch, t[2].shape()[0]);
    hidden = Unify(hidden, t[2].shape()[1]);
  }
  if (has_seq_lens) batch = Unify(batch, t[seq_lens_at].shape()[0]);
  const Type state = Type::Tensor(DType::kF32, {batch, hidden});
  std::vector<Type> outputs;
  if (kSequence) outputs.push_back(Type::Tensor(DType::kF32, {x.shape()[0], batch, hidden}));
  for (int i = 0; i < state_count; ++i) outputs.push_back(state);
  if (outputs.size() == 1) return state;
  return Type::Tuple(std::move(outputs));
}

// data [N, C, H, W], grid [N, Ho, Wo, 2] -> [N, C, Ho, Wo], N the more informative of the
// two; an output with elements needs an image with some.
absl::StatusOr<Type> GridSampleRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type grid, TensorArg(call, 1, "grid", kF32));
  if (x.rank() != 4 || grid.rank() != 4 || !MayEqual(grid.shape()[3], Dim(2)) ||
      !MayEqual(x.shape()[0], grid.shape()[0])) {
    return OpError(call, absl::StrFormat("expected data [N, C, H, W] and grid [N, Ho, Wo, 2], got data %s and grid %s",
                                         ShapeText(x.shape()), ShapeText(grid.shape())));
  }
  std::vector<Dim> out = {Unify(x.shape()[0], grid.shape()[0]), x.shape()[1], grid.shape()[1], grid.shape()[2]};
  const Dim area = x.shape()[2] * x.shape()[3], count = out[0] * out[1] * out[2] * out[3];
  if (area.is_const() && area.const_value() == 0 && count.is_const() && count.const_value() != 0) {
    return OpError(call, absl::StrFormat("cannot sample the empty image %s", ShapeText(x.shape())));
  }
  return Type::Tensor(DType::kF32, std::move(out));
}

constexpr OpDef kOps[] = {
    {"nn.softmax", 1, -1, SoftmaxRel},
    {"nn.log_softmax", 1, -1, SoftmaxRel},
    {"nn.layer_norm", 3, -1, LayerNormRel},
    {"nn.dense", 2, 3, DenseRel},
    {"nn.batch_matmul", 2, 2, MatmulRel<false, true>},
    {"nn.matmul", 2, 2, MatmulRel<true, false>},
    {"matmul", 2, 2, MatmulRel<true, false>},
    {"gemm", 2, 4, GemmRel},
    {"nn.batch_norm", 5, 5, BatchNormRel},
    {"layout_transform", 1, 1, LayoutTransformRel},
    {"nn.contrib_dense_pack", 2, 3, DensePackRel},
    {"nn.attention", 3, 4, AttentionRel},
    {"nn.varlen_attention", 4, 4, VarlenAttentionRel},
    {"sequence_positions", 2, 2, SequencePositionsRel},
    {"sequence_rows", 1, 1, SequenceRowsRel},
    {"nn.lstm_cell", 5, 7, RnnRel<4, false>},
    {"nn.gru_cell", 4, 6, RnnRel<3, false>},
    {"nn.lstm", 5, 9, RnnRel<4, true>},
    {"nn.gru", 4, 7, RnnRel<3, true>},
    {"nn.grid_sample", 2, 2, GridSampleRel},
    {"nn.rnn", 4, 7, RnnRel<1, true>},
};

}  // namespace

absl::Span<const OpDef> NnOps() { return kOps; }

}  // namespace dynvm::compiler::internal
