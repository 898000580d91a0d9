// nn.lstm_cell and nn.gru_cell: one step of PyTorch's LSTMCell and GRUCell, f32.
//
//   nn.lstm_cell(x [b, in], h [b, hid], c [b, hid], w_ih [4 hid, in], w_hh [4 hid, hid],
//                [b_ih [4 hid], b_hh [4 hid]]) -> h' [b, hid], c' [b, hid]
//     gates i, f, g, o = x w_ihᵀ + b_ih + h w_hhᵀ + b_hh   (PyTorch's order)
//     c' = σ(f) c + σ(i) tanh(g),  h' = σ(o) tanh(c')
//   nn.gru_cell(x, h, w_ih [3 hid, in], w_hh [3 hid, hid], [b_ih, b_hh]) -> h' [b, hid]
//     r = σ(x W_irᵀ + b_ir + h W_hrᵀ + b_hr),  z likewise
//     n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn)),  h' = (1 - z) n + z h
//
// The gate pre-activations come from GemmF32 and the nonlinearities from one vectorised
// pass per batch row (the lstm_gates / gru_gates microkernels).
//
// Why two GEMMs and not one on [x | h] against [w_ih | w_hh]: the weights arrive as two
// tensors (PyTorch's layout), and one GEMM would need their concatenation, a copy of
// every weight on every step (the runtime does no load-time repacking). Two GEMMs cost
// the same arithmetic, and for the LSTM the second accumulates into the first's output
// through the residual epilogue (which may alias the output), each adding its own bias
// through the bias epilogue, so no extra pass is made. The GRU's candidate gate needs
// the hidden part apart (r multiplies only h W_hnᵀ + b_hn), so its two GEMMs write two
// buffers that the gate pass reads together.
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/gemm.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/scratch.h"
#include "kernels/nn/ukernels.h"

namespace dynvm::kernels {
namespace {

// What distinguishes the two cells' signatures.
struct CellKind {
  std::string_view op;
  int gates;                   // 4 (LSTM) or 3 (GRU)
  bool has_cell_state;         // LSTM: the c input and output
  std::string_view signature;  // for arity errors
};

constexpr CellKind kLstm{"nn.lstm_cell", 4, true, "x, h, c, w_ih, w_hh and optionally b_ih, b_hh"};
constexpr CellKind kGru{"nn.gru_cell", 3, false, "x, h, w_ih, w_hh and optionally b_ih, b_hh"};

struct CellDims {
  int64_t batch, input, hidden;
  bool has_bias;
};

absl::StatusOr<CellDims> CheckCellInputs(const CellKind& kind,
                                         absl::Span<NDArrayObj* const> inputs) {
  const int state_inputs = kind.has_cell_state ? 3 : 2;  // x, h[, c]
  const int count = static_cast<int>(inputs.size());
  DYNVM_RETURN_IF_ERROR(
      nn::CheckInputCount(kind.op, count, {state_inputs + 2, state_inputs + 4}, kind.signature));
  const char* const lstm_names[] = {"x", "h", "c", "w_ih", "w_hh", "b_ih", "b_hh"};
  const char* const gru_names[] = {"x", "h", "w_ih", "w_hh", "b_ih", "b_hh"};
  const char* const* names = kind.has_cell_state ? lstm_names : gru_names;
  for (int i = 0; i < count; ++i)
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(kind.op, names[i], *inputs[i]));
  const Shape& x = inputs[0]->shape();
  const Shape& h = inputs[1]->shape();
  if (x.size() != 2 || h.size() != 2 || h[0] != x[0]) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: x %s and h %s must be [batch, input_size] and [batch, hidden_size]",
                        kind.op, ShapeToString(x), ShapeToString(h)));
  }
  const CellDims dims{x[0], x[1], h[1], count == state_inputs + 4};
  const int64_t state_shape[] = {dims.batch, dims.hidden};
  const int64_t w_ih_shape[] = {kind.gates * dims.hidden, dims.input};
  const int64_t w_hh_shape[] = {kind.gates * dims.hidden, dims.hidden};
  const int64_t bias_shape[] = {kind.gates * dims.hidden};
  if (kind.has_cell_state) {
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(kind.op, "c", *inputs[2], state_shape));
  }
  DYNVM_RETURN_IF_ERROR(nn::CheckShape(kind.op, "w_ih", *inputs[state_inputs], w_ih_shape));
  DYNVM_RETURN_IF_ERROR(nn::CheckShape(kind.op, "w_hh", *inputs[state_inputs + 1], w_hh_shape));
  if (dims.has_bias) {
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(kind.op, "b_ih", *inputs[state_inputs + 2], bias_shape));
    DYNVM_RETURN_IF_ERROR(nn::CheckShape(kind.op, "b_hh", *inputs[state_inputs + 3], bias_shape));
  }
  return dims;
}

template <const CellKind& kKind>
absl::Status CellShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const CellDims dims, CheckCellInputs(kKind, call.input_span()));
  for (int i = 0; i < call.num_outputs; ++i) call.output_shapes[i] = {dims.batch, dims.hidden};
  return absl::OkStatus();
}

// The GEMM out = in · wᵀ + bias (+ residual) of one gate block.
GemmArgs GateGemm(const CellDims& d, int gates, const NDArrayObj& in, const NDArrayObj& w,
                  const NDArrayObj* bias, float* out) {
  return {.m = d.batch,
          .n = gates * d.hidden,
          .k = in.shape()[1],
          .a = in.data_as<float>(),
          .lda = in.shape()[1],
          .b = w.data_as<float>(),
          .ldb = in.shape()[1],
          .trans_b = true,
          .c = out,
          .ldc = gates * d.hidden,
          .bias = bias != nullptr ? bias->data_as<float>() : nullptr};
}

absl::Status LstmCellKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const CellDims d, CheckCellInputs(kLstm, call.inputs()));
  const int64_t state_shape[] = {d.batch, d.hidden};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kLstm.op, call, {state_shape, state_shape}));
  if (d.batch * d.hidden == 0) return absl::OkStatus();
  NDArrayObj* const* in = call.args;
  float* gates = nn::ThreadScratch<float>(nn::ScratchSlot::kCall, d.batch * 4 * d.hidden);
  GemmF32(GateGemm(d, 4, *in[0], *in[3], d.has_bias ? in[5] : nullptr, gates), *call.pool);
  GemmArgs hidden = GateGemm(d, 4, *in[1], *in[4], d.has_bias ? in[6] : nullptr, gates);
  hidden.residual = gates;
  hidden.ldr = 4 * d.hidden;
  GemmF32(hidden, *call.pool);

  const nn::NnMicrokernels& uk = nn::GetNnMicrokernels();
  const float* c = in[2]->data_as<float>();
  float* h_out = call.outputs()[0]->data_as<float>();
  float* c_out = call.outputs()[1]->data_as<float>();
  call.pool->ParallelFor(d.batch, internal::GrainForBytes(32 * d.hidden),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t r = begin; r < end; ++r) {
                             uk.lstm_gates(d.hidden, gates + r * 4 * d.hidden, c + r * d.hidden,
                                           h_out + r * d.hidden, c_out + r * d.hidden);
                           }
                         });
  return absl::OkStatus();
}

absl::Status GruCellKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const CellDims d, CheckCellInputs(kGru, call.inputs()));
  const int64_t state_shape[] = {d.batch, d.hidden};
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kGru.op, call, {state_shape}));
  if (d.batch * d.hidden == 0) return absl::OkStatus();
  NDArrayObj* const* in = call.args;
  const int64_t row = 3 * d.hidden;
  float* gi = nn::ThreadScratch<float>(nn::ScratchSlot::kCall, 2 * d.batch * row);
  float* gh = gi + d.batch * row;
  GemmF32(GateGemm(d, 3, *in[0], *in[2], d.has_bias ? in[4] : nullptr, gi), *call.pool);
  GemmF32(GateGemm(d, 3, *in[1], *in[3], d.has_bias ? in[5] : nullptr, gh), *call.pool);

  const nn::NnMicrokernels& uk = nn::GetNnMicrokernels();
  const float* h = in[1]->data_as<float>();
  float* h_out = call.outputs()[0]->data_as<float>();
  call.pool->ParallelFor(d.batch, internal::GrainForBytes(32 * d.hidden),
                         [&](int64_t begin, int64_t end) {
                           for (int64_t r = begin; r < end; ++r) {
                             uk.gru_gates(d.hidden, gi + r * row, gh + r * row, h + r * d.hidden,
                                          h_out + r * d.hidden);
                           }
                         });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterRnnKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kLstm.op),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 2,
                                                    .fn = LstmCellKernel,
                                                    .bind = nullptr,
                                                    .shape_fn = CellShapeFn<kLstm>}));
  return registry.Register(KernelDef{.name = std::string(kGru.op),
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = GruCellKernel,
                                     .bind = nullptr,
                                     .shape_fn = CellShapeFn<kGru>});
}

}  // namespace dynvm::kernels
