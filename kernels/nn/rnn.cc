// The recurrent kernels, f32: PyTorch's LSTMCell and GRUCell as one step, and whole
// layers (one direction) as one call, for the ONNX importer's LSTM, GRU and RNN.
//
//   nn.lstm_cell(x [b, in], h [b, hid], c [b, hid], w_ih [4 hid, in], w_hh [4 hid, hid],
//                [b_ih [4 hid], b_hh [4 hid]]) -> h' [b, hid], c' [b, hid]
//     gates i, f, g, o = x w_ihᵀ + b_ih + h w_hhᵀ + b_hh   (PyTorch's order)
//     c' = σ(f) c + σ(i) tanh(g),  h' = σ(o) tanh(c')
//   nn.gru_cell(x, h, w_ih [3 hid, in], w_hh [3 hid, hid], [b_ih, b_hh]) -> h' [b, hid]
//     r = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr),  z likewise
//     n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn)),  h' = (1 - z) n + z h
//   nn.lstm(x [seq, b, in], h0, c0, w_ih, w_hh [, b_ih, b_hh [, p [3 hid] [, seq_lens [b]]]])
//       -> y [seq, b, hid], h_n, c_n
//   nn.gru(x [seq, b, in], h0, w_ih, w_hh [, b_ih, b_hh [, seq_lens [b]]]) -> y, h_n
//   nn.rnn(x [seq, b, in], h0, w_ih [hid, in], w_hh [hid, hid] [, b_ih, b_hh [hid]
//          [, seq_lens [b]]]) -> y, h_n
//     the simple (Elman) cell h' = f(x w_ihᵀ + b_ih + h w_hhᵀ + b_hh), f = tanh by default
//     the cell over t = 0 .. seq-1 (seq-1 .. 0 with reverse=1), y[t] its h' at step t;
//     with ONNX's sequence_lens (i32 or i64), row r runs only the steps t < seq_lens[r]
//       (from seq_lens[r]-1 down when reversed), y[t, r] = 0 for the others, and its
//       h_n, c_n are its state after its last step run (the initial state for length 0);
//     with ONNX's variants: the LSTM's peepholes p = [p_i | p_o | p_f] (ONNX's order)
//       i = σ(gates_i + p_i c),  f = σ(gates_f + p_f c),  o = σ(gates_o + p_o c')
//     and the GRU's linear_before_reset=0 (the attribute's default, 1, is PyTorch's)
//       n = tanh(x W_inᵀ + b_in + (r h) W_hnᵀ + b_hn)
//     and ONNX's activations (kernels/nn/rnn_activation.h): the layers' attributes
//       activation_f (σ of the LSTM's and GRU's gates i, f, o, r, z; the RNN's f),
//       activation_g (the tanh of g and n), activation_h (the LSTM's tanh of c'), with
//       activation_alpha, activation_beta, and clip, which bounds every gate
//       pre-activation to [-clip, clip] before its function (not c' before h's: ONNX
//       Runtime's reading)
//
// The gate pre-activations come from GemmF32 and the nonlinearities from one vectorised
// pass per batch row (the lstm_gates / gru_gates microkernels, and for the variants
// lstm_peephole_gates and gru_reset + gru_prereset_gates). A cell and a layer share
// their step (LstmStep, GruStep); a layer computes the input part x w_ihᵀ + b_ih of every
// step first, as one GEMM over seq * b rows (as cuDNN and ONNX Runtime do), so that only
// the hidden product, which depends on the previous step, runs per step.
//
// Why two GEMMs and not one on [x | h] against [w_ih | w_hh]: the weights arrive as two
// tensors (PyTorch's layout), and one GEMM would need their concatenation, a copy of
// every weight on every step (the runtime does no load-time repacking). Two GEMMs cost
// the same arithmetic, and for the LSTM the second accumulates into the first's output
// through the residual epilogue (which may alias the output), each adding its own bias
// through the bias epilogue, so no extra pass is made. The GRU's candidate gate needs
// the hidden part apart (r multiplies only h W_hnᵀ + b_hn), so its two GEMMs write two
// buffers that the gate pass reads together. With linear_before_reset=0, r must be known
// before the n block's hidden product: the step splits h w_hhᵀ into the r, z blocks
// (2 hid rows of w_hh), a pass that writes r h, then (r h) W_hnᵀ into the n block, and
// the gate pass; the same arithmetic, in two GEMMs and two passes.
//
// Other activations than the defaults, or a clip, take a generic gate pass per row
// (LstmGeneric, GruGeneric): the same GEMMs, then a vectorised pass per function over
// the gate blocks (a few scalar functions aside), so the default path is untouched. The
// RNN's single gate always takes that pass: tanh is one vectorised map.
//
// seq_lens keeps the batched GEMMs over every row (a row past its length computes
// gates nobody reads): the gate pass skips those rows, so their state stays. Rows then
// lag one another, so the state no longer lives in y (a skipped row's y is 0) but in
// h_n and c_n from the first step on, each step's h' copied into y[t] after it.
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/gemm/gemm.h"
#include "kernels/internal/checks.h"
#include "kernels/microkernels.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/rnn_activation.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

// What distinguishes the four kernels' signatures.
struct RnnKind {
  std::string_view op;
  int gates;                   // 4 (LSTM), 3 (GRU) or 1 (RNN)
  bool has_cell_state;         // LSTM: the c input and output
  bool sequence;               // a layer: x [seq, batch, in], outputs y then the states
  bool peephole;               // takes p [3 hid] after both biases (nn.lstm)
  int seq_lens_at;             // a layer's seq_lens [batch] (i32/i64): its input index, last
  const char* const* names;    // the inputs, for messages
  std::string_view signature;  // for arity errors
};

constexpr const char* kLstmCellNames[] = {"x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh"};
constexpr const char* kGruCellNames[] = {"x", "h", "w_ih", "w_hh", "b_ih", "b_hh"};
constexpr const char* kLstmNames[] = {"x",    "h0",   "c0", "w_ih",    "w_hh",
                                      "b_ih", "b_hh", "p",  "seq_lens"};
constexpr const char* kGruNames[] = {"x", "h0", "w_ih", "w_hh", "b_ih", "b_hh", "seq_lens"};

constexpr RnnKind kLstmCell{"nn.lstm_cell", 4, true, false, false, -1, kLstmCellNames,
                            "x, h, c, w_ih, w_hh and optionally b_ih, b_hh"};
constexpr RnnKind kGruCell{"nn.gru_cell", 3, false, false, false, -1, kGruCellNames,
                           "x, h, w_ih, w_hh and optionally b_ih, b_hh"};
constexpr RnnKind kLstm{"nn.lstm", 4, true, true, true, 8, kLstmNames,
                        "x, h0, c0, w_ih, w_hh and optionally b_ih, b_hh, then p, then seq_lens"};
constexpr RnnKind kGru{"nn.gru", 3, false, true, false, 6, kGruNames,
                       "x, h0, w_ih, w_hh and optionally b_ih, b_hh, then seq_lens"};
constexpr RnnKind kRnn{"nn.rnn", 1, false, true, false, 6, kGruNames,
                       "x, h0, w_ih, w_hh and optionally b_ih, b_hh, then seq_lens"};

struct RnnDims {
  int64_t seq;  // 1 for a cell
  int64_t batch, input, hidden;
  bool has_bias;
  bool has_peephole;
  bool has_seq_lens;
};

absl::StatusOr<RnnDims> CheckRnnInputs(const RnnKind& kind, absl::Span<NDArrayObj* const> inputs) {
  const int state_inputs = kind.has_cell_state ? 3 : 2;  // x, h[, c]
  const int count = static_cast<int>(inputs.size());
  const int n = state_inputs + 2;  // without the optional inputs
  // The layers take seq_lens after all the others: nn.lstm's p, nn.gru's biases.
  const std::string_view sig = kind.signature;
  const absl::Status arity =
      kind.peephole   ? nn::CheckInputCount(kind.op, count, {n, n + 2, n + 3, n + 4}, sig)
      : kind.sequence ? nn::CheckInputCount(kind.op, count, {n, n + 2, n + 3}, sig)
                      : nn::CheckInputCount(kind.op, count, {n, n + 2}, sig);
  DYNVM_RETURN_IF_ERROR(arity);
  const bool has_seq_lens = kind.sequence && count == kind.seq_lens_at + 1;
  for (int i = 0; i < count; ++i) {
    DYNVM_RETURN_IF_ERROR(has_seq_lens && i == kind.seq_lens_at
                              ? internal::CheckIndexDType(kind.op, kind.names[i], *inputs[i])
                              : nn::CheckF32(kind.op, kind.names[i], *inputs[i]));
  }
  const Shape& x = inputs[0]->shape();
  const Shape& h = inputs[1]->shape();
  const size_t x_rank = kind.sequence ? 3 : 2;
  if (x.size() != x_rank || h.size() != 2 || h[0] != x[x_rank - 2]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: x %s and %s %s must be %s and [batch, hidden_size]", kind.op, ShapeToString(x),
        kind.names[1], ShapeToString(h),
        kind.sequence ? "[seq, batch, input_size]" : "[batch, input_size]"));
  }
  const RnnDims dims{kind.sequence ? x[0] : 1, h[0], x[x_rank - 1], h[1],
                     count >= state_inputs + 4, kind.peephole && count >= state_inputs + 5,
                     has_seq_lens};
  const int64_t state_shape[] = {dims.batch, dims.hidden};
  const int64_t w_ih_shape[] = {kind.gates * dims.hidden, dims.input};
  const int64_t w_hh_shape[] = {kind.gates * dims.hidden, dims.hidden};
  const int64_t bias_shape[] = {kind.gates * dims.hidden};
  const int64_t peephole_shape[] = {3 * dims.hidden};
  const int64_t seq_lens_shape[] = {dims.batch};
  // By position after the states: w_ih, w_hh, b_ih, b_hh, p.
  const absl::Span<const int64_t> expected[] = {state_shape, w_ih_shape,  w_hh_shape,
                                                bias_shape,  bias_shape, peephole_shape};
  for (int i = 2; i < count; ++i) {
    const int which = i < state_inputs ? 0 : i - state_inputs + 1;
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(kind.op, kind.names[i], *inputs[i],
                                         has_seq_lens && i == kind.seq_lens_at ? seq_lens_shape
                                                                               : expected[which]));
  }
  return dims;
}

// Row `r`'s length in seq_lens (i32 or i64, checked).
int64_t SeqLen(const NDArrayObj& seq_lens, int64_t r) {
  return seq_lens.dtype() == DType::kI32 ? seq_lens.data_as<int32_t>()[r]
                                         : seq_lens.data_as<int64_t>()[r];
}

// InvalidArgument unless every length of `seq_lens` (if any) is within [0, seq]: values,
// so the kernel checks them, not the shape function.
absl::Status CheckSeqLens(const RnnKind& kind, const RnnDims& d, const NDArrayObj* seq_lens) {
  for (int64_t r = 0; seq_lens != nullptr && r < d.batch; ++r) {
    const int64_t len = SeqLen(*seq_lens, r);
    if (len < 0 || len > d.seq) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: seq_lens[%d] is %d, out of range [0, %d] (seq)", kind.op, r, len, d.seq));
    }
  }
  return absl::OkStatus();
}

// The batch rows a step runs: with a layer's seq_lens at step `t`, those with
// t < seq_lens[r]; every row without (`seq_lens` null, as for the cells).
struct StepRows {
  const NDArrayObj* seq_lens = nullptr;
  int64_t t = 0;
  bool Runs(int64_t r) const { return seq_lens == nullptr || t < SeqLen(*seq_lens, r); }
};

// The outputs: y [seq, batch, hid] for a layer, then the states, each [batch, hid].
template <const RnnKind& kKind>
absl::Status RnnShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const RnnDims d, CheckRnnInputs(kKind, call.input_span()));
  int i = 0;
  if (kKind.sequence) call.output_shapes[i++] = {d.seq, d.batch, d.hidden};
  for (; i < call.num_outputs; ++i) call.output_shapes[i] = {d.batch, d.hidden};
  return absl::OkStatus();
}

// A layer's attributes.
struct RnnState {
  bool reverse;              // steps from the last to the first
  bool linear_before_reset;  // GRU: r multiplies h W_hnᵀ + b_hn (1) or h (0)
  nn::RnnActivations act;    // the functions and clip
};

// The cells' defaults: PyTorch's functions, no clip.
constexpr nn::RnnActivations kCellActivations{.clip = std::numeric_limits<float>::infinity(),
                                              .defaults = true};

// nn.lstm (kKind.gates 4), nn.gru (3) and nn.rnn (1); linear_before_reset is the GRU's.
template <const RnnKind& kKind>
absl::StatusOr<std::shared_ptr<const void>> BindLayer(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(
      kKind.gates == 4 ? CheckKnownAttrs(attrs, {"reverse", "activation_f", "activation_g",
                                                 "activation_h", "activation_alpha",
                                                 "activation_beta", "clip"})
      : kKind.gates == 3
          ? CheckKnownAttrs(attrs, {"reverse", "linear_before_reset", "activation_f",
                                    "activation_g", "activation_alpha", "activation_beta", "clip"})
          : CheckKnownAttrs(attrs, {"reverse", "activation_f", "activation_alpha",
                                    "activation_beta", "clip"}));
  DYNVM_ASSIGN_OR_RETURN(const bool reverse, GetBoolAttr(attrs, "reverse", false));
  DYNVM_ASSIGN_OR_RETURN(const bool linear_before_reset,
                         GetBoolAttr(attrs, "linear_before_reset", true));
  DYNVM_ASSIGN_OR_RETURN(const nn::RnnActivations act, nn::GetRnnActivations(attrs, kKind.gates));
  return std::make_shared<const RnnState>(RnnState{reverse, linear_before_reset, act});
}

// The weights of a call (checked), biases and peepholes null when absent.
struct RnnWeights {
  const float *w_ih, *w_hh, *b_ih, *b_hh, *p;
};

RnnWeights GetWeights(const RnnKind& kind, const RnnDims& d, NDArrayObj* const* in) {
  const int w = kind.has_cell_state ? 3 : 2;
  return {in[w]->data_as<float>(), in[w + 1]->data_as<float>(),
          d.has_bias ? in[w + 2]->data_as<float>() : nullptr,
          d.has_bias ? in[w + 3]->data_as<float>() : nullptr,
          d.has_peephole ? in[w + 4]->data_as<float>() : nullptr};
}

// out = a · wᵀ + bias for `rows` rows of `k` values into `n` values of rows `ldc` apart
// (a gate block); with `accumulate`, out's values are added (the residual epilogue, in
// place).
void GateGemm(int64_t rows, int64_t k, int64_t n, const float* a, const float* w,
              const float* bias, bool accumulate, float* out, int64_t ldc, ThreadPool& pool) {
  GemmArgs g{.m = rows, .n = n, .k = k, .a = a, .lda = k, .b = w, .ldb = k, .trans_b = true,
             .c = out, .ldc = ldc, .bias = bias};
  if (accumulate) {
    g.residual = out;
    g.ldr = ldc;
  }
  GemmF32(g, pool);
}

// Calls `row(r)` for every batch row r that `rows` runs, in parallel: a gate pass.
template <typename F>
void ForEachBatchRow(const RnnDims& d, const StepRows& rows, ThreadPool& pool, const F& row) {
  pool.ParallelFor(d.batch, internal::GrainForBytes(32 * d.hidden),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       if (rows.Runs(r)) row(r);
                     }
                   });
}

// One LSTM row with other activations than the defaults or a clip: as the lstm_gates
// microkernels, with `gates` [i | f | g | o] (4n) overwritten by the activated gates.
// `c_out` may be `c`; `h_out` may not be `c_out`.
void LstmGeneric(const nn::RnnActivations& act, int64_t n, float* gates, const float* c,
                 const float* p, float* h_out, float* c_out) {
  float *i = gates, *f = gates + n, *g = gates + 2 * n, *o = gates + 3 * n;
  for (int64_t j = 0; p != nullptr && j < n; ++j) {
    i[j] += p[j] * c[j];
    f[j] += p[2 * n + j] * c[j];
  }
  nn::ClipRnnGates(act.clip, 3 * n, gates);
  nn::ApplyRnnActivation(act.slot[0], 2 * n, i, i);  // i and f
  nn::ApplyRnnActivation(act.slot[1], n, g, g);
  for (int64_t j = 0; j < n; ++j) c_out[j] = f[j] * c[j] + i[j] * g[j];
  for (int64_t j = 0; p != nullptr && j < n; ++j) o[j] += p[n + j] * c_out[j];
  nn::ClipRnnGates(act.clip, n, o);
  nn::ApplyRnnActivation(act.slot[0], n, o, o);
  nn::ApplyRnnActivation(act.slot[2], n, c_out, h_out);
  for (int64_t j = 0; j < n; ++j) h_out[j] *= o[j];
}

// One LSTM step over the batch: `gates` [batch, 4 hid] holds x · w_ihᵀ + b_ih on entry;
// h · w_hhᵀ + b_hh is added to it, then the gate pass (with the peepholes w.p, if any,
// and the activations `act`) writes h_out and c_out, in the rows that `rows` runs (the
// others are left as they are). h_out may be h and c_out may be c.
void LstmStep(const RnnDims& d, const RnnWeights& w, const nn::RnnActivations& act,
              float* gates, const float* h, const float* c, float* h_out, float* c_out,
              const StepRows& rows, ThreadPool& pool) {
  const int64_t hid = d.hidden;
  GateGemm(d.batch, hid, 4 * hid, h, w.w_hh, w.b_hh, /*accumulate=*/true, gates, 4 * hid, pool);
  const Microkernels& uk = GetMicrokernels();
  ForEachBatchRow(d, rows, pool, [&](int64_t r) {
    const int64_t s = r * hid;
    if (!act.defaults) {
      LstmGeneric(act, hid, gates + 4 * s, c + s, w.p, h_out + s, c_out + s);
    } else if (w.p == nullptr) {
      uk.nn.lstm_gates(hid, gates + 4 * s, c + s, h_out + s, c_out + s);
    } else {
      uk.nn.lstm_peephole_gates(hid, gates + 4 * s, c + s, w.p, h_out + s, c_out + s);
    }
  });
}

// The generic GRU row's first pass, for linear_before_reset=0: as gru_reset, gh's r
// block overwritten by r = f(clip(gi_r + gh_r)).
void GruResetGeneric(const nn::RnnActivations& act, int64_t n, const float* gi, float* gh,
                     const float* h, float* rh_out) {
  GetMicrokernels().nn.vadd(n, gi, gh, gh);
  nn::ClipRnnGates(act.clip, n, gh);
  nn::ApplyRnnActivation(act.slot[0], n, gh, gh);
  for (int64_t j = 0; j < n; ++j) rh_out[j] = gh[j] * h[j];
}

// One GRU row with other activations than the defaults or a clip: as gru_gates (with
// kReset, r computed here) or gru_prereset_gates (without: gh's n block holds
// (r h) W_hnᵀ + b_hn), `gh` (3n) overwritten by the activated gates.
template <bool kReset>
void GruGeneric(const nn::RnnActivations& act, int64_t n, const float* gi, float* gh,
                const float* h, float* h_out) {
  const int64_t first = kReset ? 0 : n;  // the r and z blocks, or z alone
  float *z = gh + n, *m = gh + 2 * n;
  GetMicrokernels().nn.vadd(2 * n - first, gi + first, gh + first, gh + first);
  nn::ClipRnnGates(act.clip, 2 * n - first, gh + first);
  nn::ApplyRnnActivation(act.slot[0], 2 * n - first, gh + first, gh + first);
  for (int64_t j = 0; j < n; ++j) m[j] = gi[2 * n + j] + (kReset ? gh[j] * m[j] : m[j]);
  nn::ClipRnnGates(act.clip, n, m);
  nn::ApplyRnnActivation(act.slot[1], n, m, m);
  for (int64_t j = 0; j < n; ++j) h_out[j] = (1.0f - z[j]) * m[j] + z[j] * h[j];
}

// One GRU step over the batch: `gi` [batch, 3 hid] holds x · w_ihᵀ + b_ih; `gh` (same
// size, scratch) receives the hidden part, then the gate pass (with the activations
// `act`) writes h_out (which may be h) in the rows that `rows` runs. With
// `linear_before_reset`, gh = h · w_hhᵀ + b_hh in one GEMM; without, gh's r and z blocks
// come first, then `rh` (scratch, [batch, hid]) = r h (every row, so that the GEMM after
// it reads no stale scratch), then gh's n block = rh · W_hnᵀ + b_hn.
void GruStep(const RnnDims& d, const RnnWeights& w, bool linear_before_reset,
             const nn::RnnActivations& act, const float* gi, float* gh, float* rh,
             const float* h, float* h_out, const StepRows& rows, ThreadPool& pool) {
  const int64_t hid = d.hidden;
  const Microkernels& uk = GetMicrokernels();
  if (linear_before_reset) {
    GateGemm(d.batch, hid, 3 * hid, h, w.w_hh, w.b_hh, /*accumulate=*/false, gh, 3 * hid, pool);
    ForEachBatchRow(d, rows, pool, [&](int64_t r) {
      const int64_t s = r * hid;
      if (act.defaults) {
        uk.nn.gru_gates(hid, gi + 3 * s, gh + 3 * s, h + s, h_out + s);
      } else {
        GruGeneric<true>(act, hid, gi + 3 * s, gh + 3 * s, h + s, h_out + s);
      }
    });
    return;
  }
  GateGemm(d.batch, hid, 2 * hid, h, w.w_hh, w.b_hh, /*accumulate=*/false, gh, 3 * hid, pool);
  ForEachBatchRow(d, /*rows=*/{}, pool, [&](int64_t r) {
    const int64_t s = r * hid;
    if (act.defaults) {
      uk.nn.gru_reset(hid, gi + 3 * s, gh + 3 * s, h + s, rh + s);
    } else {
      GruResetGeneric(act, hid, gi + 3 * s, gh + 3 * s, h + s, rh + s);
    }
  });
  GateGemm(d.batch, hid, hid, rh, w.w_hh + 2 * hid * hid,
           w.b_hh != nullptr ? w.b_hh + 2 * hid : nullptr, /*accumulate=*/false, gh + 2 * hid,
           3 * hid, pool);
  ForEachBatchRow(d, rows, pool, [&](int64_t r) {
    const int64_t s = r * hid;
    if (act.defaults) {
      uk.nn.gru_prereset_gates(hid, gi + 3 * s, gh + 3 * s, h + s, h_out + s);
    } else {
      GruGeneric<false>(act, hid, gi + 3 * s, gh + 3 * s, h + s, h_out + s);
    }
  });
}

// One RNN step over the batch: `gates` [batch, hid] holds x · w_ihᵀ + b_ih on entry;
// h · w_hhᵀ + b_hh is added to it, then h_out = f(clip(gates)) in the rows that `rows`
// runs. h_out may be h.
void RnnStep(const RnnDims& d, const RnnWeights& w, const nn::RnnActivations& act,
             float* gates, const float* h, float* h_out, const StepRows& rows,
             ThreadPool& pool) {
  const int64_t hid = d.hidden;
  GateGemm(d.batch, hid, hid, h, w.w_hh, w.b_hh, /*accumulate=*/true, gates, hid, pool);
  ForEachBatchRow(d, rows, pool, [&](int64_t r) {
    nn::ClipRnnGates(act.clip, hid, gates + r * hid);
    nn::ApplyRnnActivation(act.slot[0], hid, gates + r * hid, h_out + r * hid);
  });
}

absl::Status LstmCellKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const RnnDims d, CheckRnnInputs(kLstmCell, call.inputs()));
  const int64_t state_shape[] = {d.batch, d.hidden};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kLstmCell.op, call, {state_shape, state_shape}));
  if (d.batch * d.hidden == 0) return absl::OkStatus();
  NDArrayObj* const* in = call.args;
  const RnnWeights w = GetWeights(kLstmCell, d, in);
  float* gates = ThreadScratch<float>(ScratchSlot::kCall, d.batch * 4 * d.hidden);
  GateGemm(d.batch, d.input, 4 * d.hidden, in[0]->data_as<float>(), w.w_ih, w.b_ih,
           /*accumulate=*/false, gates, 4 * d.hidden, *call.pool);
  LstmStep(d, w, kCellActivations, gates, in[1]->data_as<float>(), in[2]->data_as<float>(),
           call.outputs()[0]->data_as<float>(), call.outputs()[1]->data_as<float>(),
           /*rows=*/{}, *call.pool);
  return absl::OkStatus();
}

absl::Status GruCellKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const RnnDims d, CheckRnnInputs(kGruCell, call.inputs()));
  const int64_t state_shape[] = {d.batch, d.hidden};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kGruCell.op, call, {state_shape}));
  if (d.batch * d.hidden == 0) return absl::OkStatus();
  NDArrayObj* const* in = call.args;
  const RnnWeights w = GetWeights(kGruCell, d, in);
  const int64_t block = d.batch * 3 * d.hidden;
  float* gi = ThreadScratch<float>(ScratchSlot::kCall, 2 * block);
  GateGemm(d.batch, d.input, 3 * d.hidden, in[0]->data_as<float>(), w.w_ih, w.b_ih,
           /*accumulate=*/false, gi, 3 * d.hidden, *call.pool);
  GruStep(d, w, /*linear_before_reset=*/true, kCellActivations, gi, gi + block, /*rh=*/nullptr,
          in[1]->data_as<float>(), call.outputs()[0]->data_as<float>(), /*rows=*/{}, *call.pool);
  return absl::OkStatus();
}

// `n` floats from `src` to `dst` (which may be the same array: a state updated in place).
void CopyState(const float* src, float* dst, int64_t n) {
  if (src != dst && n > 0) std::memcpy(dst, src, n * sizeof(float));
}

// With seq_lens, y[t]'s rows after step t: the new state `h` of the rows that ran, zeros
// for those past their length.
void WriteStepOutput(const RnnDims& d, const StepRows& rows, const float* h, float* y_t) {
  const int64_t hid = d.hidden;
  for (int64_t r = 0; r < d.batch; ++r) {
    if (rows.Runs(r)) {
      std::memcpy(y_t + r * hid, h + r * hid, hid * sizeof(float));
    } else {
      std::memset(y_t + r * hid, 0, hid * sizeof(float));
    }
  }
}

// The layers. Their first GEMM writes the input part of every step's gates into one
// buffer of the kCall slot ([seq, batch, gates * hid] floats, reused from call to call);
// step t then reads its rows. y[t] is step t's h' and the next step's h, read in place;
// the LSTM's cell state lives in c_n from the first step on. So h_n may be h0 and c_n
// may be c0. seq = 0 copies the initial states. With seq_lens, the state lives in h_n
// (and c_n) from the start, and y[t] receives a copy (WriteStepOutput).
absl::Status LstmKernel(const KernelCall& call) {
  const RnnState& attrs = *static_cast<const RnnState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const RnnDims d, CheckRnnInputs(kLstm, call.inputs()));
  const int64_t y_shape[] = {d.seq, d.batch, d.hidden};
  const int64_t state_shape[] = {d.batch, d.hidden};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kLstm.op, call, {y_shape, state_shape, state_shape}));
  NDArrayObj* const* in = call.args;
  const NDArrayObj* seq_lens = d.has_seq_lens ? in[kLstm.seq_lens_at] : nullptr;
  DYNVM_RETURN_IF_ERROR(CheckSeqLens(kLstm, d, seq_lens));
  if (d.batch * d.hidden == 0) return absl::OkStatus();
  const int64_t state = d.batch * d.hidden, block = 4 * state;
  float* y = call.outputs()[0]->data_as<float>();
  float* h_n = call.outputs()[1]->data_as<float>();
  float* c_n = call.outputs()[2]->data_as<float>();
  const float* h = in[1]->data_as<float>();
  const float* c = in[2]->data_as<float>();
  if (seq_lens != nullptr) {
    CopyState(h, h_n, state);
    CopyState(c, c_n, state);
    h = h_n;
    c = c_n;
  }
  if (d.seq > 0) {
    const RnnWeights w = GetWeights(kLstm, d, in);
    float* gates = ThreadScratch<float>(ScratchSlot::kCall, d.seq * block);
    GateGemm(d.seq * d.batch, d.input, 4 * d.hidden, in[0]->data_as<float>(), w.w_ih, w.b_ih,
             /*accumulate=*/false, gates, 4 * d.hidden, *call.pool);
    for (int64_t s = 0; s < d.seq; ++s) {
      const int64_t t = attrs.reverse ? d.seq - 1 - s : s;
      const StepRows rows{seq_lens, t};
      float* h_out = seq_lens != nullptr ? h_n : y + t * state;
      LstmStep(d, w, attrs.act, gates + t * block, h, c, h_out, c_n, rows, *call.pool);
      if (seq_lens != nullptr) WriteStepOutput(d, rows, h_n, y + t * state);
      h = h_out;
      c = c_n;
    }
  }
  CopyState(h, h_n, state);
  CopyState(c, c_n, state);
  return absl::OkStatus();
}

// A layer whose only state is h (nn.gru, nn.rnn): the checks, then, when there are
// steps, `prepare(d, w)` (every step's input GEMM) and for each step in order (reversed
// when attrs.reverse) `step(d, w, t, rows, h, h_out)`, h_out the step's slice of y, or
// h_n itself when seq_lens masks rows; h_n ends as the last h.
template <typename Prepare, typename Step>
absl::Status HiddenStateLayer(const RnnKind& kind, const KernelCall& call, Prepare prepare, Step step) {
  const RnnState& attrs = *static_cast<const RnnState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const RnnDims d, CheckRnnInputs(kind, call.inputs()));
  const int64_t y_shape[] = {d.seq, d.batch, d.hidden};
  const int64_t state_shape[] = {d.batch, d.hidden};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kind.op, call, {y_shape, state_shape}));
  NDArrayObj* const* in = call.args;
  const NDArrayObj* seq_lens = d.has_seq_lens ? in[kind.seq_lens_at] : nullptr;
  DYNVM_RETURN_IF_ERROR(CheckSeqLens(kind, d, seq_lens));
  if (d.batch * d.hidden == 0) return absl::OkStatus();
  const int64_t state = d.batch * d.hidden;
  float* y = call.outputs()[0]->data_as<float>();
  float* h_n = call.outputs()[1]->data_as<float>();
  const float* h = in[1]->data_as<float>();
  if (seq_lens != nullptr) {
    CopyState(h, h_n, state);
    h = h_n;
  }
  if (d.seq > 0) {
    const RnnWeights w = GetWeights(kind, d, in);
    prepare(d, w);
    for (int64_t s = 0; s < d.seq; ++s) {
      const int64_t t = attrs.reverse ? d.seq - 1 - s : s;
      const StepRows rows{seq_lens, t};
      float* h_out = seq_lens != nullptr ? h_n : y + t * state;
      step(d, w, t, rows, h, h_out);
      if (seq_lens != nullptr) WriteStepOutput(d, rows, h_n, y + t * state);
      h = h_out;
    }
  }
  CopyState(h, h_n, state);
  return absl::OkStatus();
}

absl::Status GruKernel(const KernelCall& call) {
  const RnnState& attrs = *static_cast<const RnnState*>(call.state);
  float *gi = nullptr, *gh = nullptr, *rh = nullptr;
  const auto prepare = [&](const RnnDims& d, const RnnWeights& w) {
    // Every step's input part, then one step's hidden part (and r h, if needed).
    const int64_t state = d.batch * d.hidden, block = 3 * state;
    gi = ThreadScratch<float>(ScratchSlot::kCall, (d.seq + 1) * block + (attrs.linear_before_reset ? 0 : state));
    gh = gi + d.seq * block;
    rh = attrs.linear_before_reset ? nullptr : gh + block;
    GateGemm(d.seq * d.batch, d.input, 3 * d.hidden, call.args[0]->data_as<float>(), w.w_ih, w.b_ih,
             /*accumulate=*/false, gi, 3 * d.hidden, *call.pool);
  };
  const auto step = [&](const RnnDims& d, const RnnWeights& w, int64_t t, const StepRows& rows, const float* h,
                        float* h_out) {
    GruStep(d, w, attrs.linear_before_reset, attrs.act, gi + t * 3 * d.batch * d.hidden, gh, rh, h, h_out, rows,
            *call.pool);
  };
  return HiddenStateLayer(kGru, call, prepare, step);
}

absl::Status RnnKernel(const KernelCall& call) {
  const RnnState& attrs = *static_cast<const RnnState*>(call.state);
  float* gates = nullptr;
  const auto prepare = [&](const RnnDims& d, const RnnWeights& w) {
    gates = ThreadScratch<float>(ScratchSlot::kCall, d.seq * d.batch * d.hidden);
    GateGemm(d.seq * d.batch, d.input, d.hidden, call.args[0]->data_as<float>(), w.w_ih, w.b_ih,
             /*accumulate=*/false, gates, d.hidden, *call.pool);
  };
  const auto step = [&](const RnnDims& d, const RnnWeights& w, int64_t t, const StepRows& rows, const float* h,
                        float* h_out) {
    RnnStep(d, w, attrs.act, gates + t * d.batch * d.hidden, h, h_out, rows, *call.pool);
  };
  return HiddenStateLayer(kRnn, call, prepare, step);
}

}  // namespace

absl::Status RegisterRnnKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {std::string(kLstmCell.op), kVariadic, 2, LstmCellKernel, nullptr, RnnShapeFn<kLstmCell>},
      {std::string(kGruCell.op), kVariadic, 1, GruCellKernel, nullptr, RnnShapeFn<kGruCell>},
      {std::string(kLstm.op), kVariadic, 3, LstmKernel, BindLayer<kLstm>, RnnShapeFn<kLstm>},
      {std::string(kGru.op), kVariadic, 2, GruKernel, BindLayer<kGru>, RnnShapeFn<kGru>},
      {std::string(kRnn.op), kVariadic, 2, RnnKernel, BindLayer<kRnn>, RnnShapeFn<kRnn>},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
