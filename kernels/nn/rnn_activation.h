// ONNX's activation functions of the recurrent layers, as the kernels nn.lstm, nn.gru and
// nn.rnn (kernels/nn/rnn.cc) take them: each activation slot a string attribute
// (activation_f, activation_g, activation_h: ONNX's names), their constants in the float
// lists activation_alpha and activation_beta (consumed in slot order by the functions that
// take one, as ONNX and ONNX Runtime consume them; a function left without its value gets
// its ONNX default), and the float clip, which bounds every gate's pre-activation to
// [-clip, clip]. Shared by the kernels' Bind, the relations (compiler/ops/nn.cc), which
// accept what Bind accepts, and the ONNX importer, which splits ONNX's lists between the
// directions.
//
//   DYNVM_ASSIGN_OR_RETURN(const RnnActivations act, GetRnnActivations(attrs, /*gates=*/4));
//   if (!act.defaults) ApplyRnnActivation(act.slot[0], n, gates, gates);  // f in place
#ifndef DYNVM_KERNELS_NN_RNN_ACTIVATION_H_
#define DYNVM_KERNELS_NN_RNN_ACTIVATION_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "kernels/kernel.h"

namespace dynvm::kernels::nn {

// The functions ONNX lists for LSTM, GRU and RNN, each with its meaning for one element.
enum class RnnActivationKind : uint8_t {
  kRelu,             // max(0, x)
  kTanh,             // tanh(x)
  kSigmoid,          // 1 / (1 + e^-x)
  kAffine,           // alpha x + beta (defaults 1, 0)
  kLeakyRelu,        // x >= 0 ? x : alpha x (default 0.01)
  kThresholdedRelu,  // x >= alpha ? x : 0 (default 1)
  kScaledTanh,       // alpha tanh(beta x) (defaults 1, 1)
  kHardSigmoid,      // min(max(alpha x + beta, 0), 1) (defaults 0.2, 0.5)
  kElu,              // x >= 0 ? x : alpha (e^x - 1) (default 1)
  kSoftsign,         // x / (1 + |x|)
  kSoftplus,         // ln(1 + e^x)
};

// One activation slot: a function and its constants (ignored by those that take none).
struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// The function named `name`, ONNX's spelling in any case (ONNX Runtime's reading), or
// InvalidArgument naming it and the known ones.
absl::StatusOr<RnnActivationKind> ParseRnnActivation(std::string_view name);

// Whether `kind` takes a value of activation_alpha, and one of activation_beta.
bool RnnActivationTakesAlpha(RnnActivationKind kind);
bool RnnActivationTakesBeta(RnnActivationKind kind);

// A layer's activations and clip.
struct RnnActivations {
  // f, g, h: the LSTM's gates, cell input and cell output functions (defaults Sigmoid,
  // Tanh, Tanh); the GRU's f, g (Sigmoid, Tanh); the RNN's f (Tanh). The others unused.
  RnnActivation slot[3] = {};
  float clip;     // the bound of the pre-activations; +inf without clip
  bool defaults;  // the layer's default functions and no clip (the vectorised gate passes)
};

// The activations of the layer with `gates` gates (4: nn.lstm, 3: nn.gru, 1: nn.rnn)
// from `attrs`: its slots' activation_* names, activation_alpha, activation_beta and clip.
// InvalidArgument for an unknown name, more alpha or beta values than the functions take,
// or a clip that is not > 0. Other attributes are the caller's to check.
absl::StatusOr<RnnActivations> GetRnnActivations(const Attrs& attrs, int gates);

// y[i] = act(x[i]) for i < n; `y` may be `x`. Vectorised for Relu, Tanh, Sigmoid, Affine,
// LeakyRelu, ScaledTanh and HardSigmoid, scalar for the others.
void ApplyRnnActivation(const RnnActivation& act, int64_t n, const float* x, float* y);

// x[i] = min(max(x[i], -clip), clip) for i < n, nothing when `clip` is +inf.
void ClipRnnGates(float clip, int64_t n, float* x);

}  // namespace dynvm::kernels::nn

#endif  // DYNVM_KERNELS_NN_RNN_ACTIVATION_H_
