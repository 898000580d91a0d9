// ONNX's recurrent activations: their names, constants and defaults, and the row pass.
#include "kernels/nn/rnn_activation.h"

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/microkernels.h"

namespace dynvm::kernels::nn {
namespace {

using elementwise::VUnaryOp;
using elementwise::VUnaryParams;

// ONNX's names, in RnnActivationKind's order.
constexpr std::string_view kNames[] = {"Relu",       "Tanh",        "Sigmoid", "Affine",
                                       "LeakyRelu",  "ThresholdedRelu", "ScaledTanh",
                                       "HardSigmoid", "Elu",        "Softsign", "Softplus"};

// The defaults of alpha and beta (ONNX's operators of the same names; ScaledTanh, which
// has none there, gets the identity scales).
struct Defaults {
  float alpha, beta;
};

Defaults DefaultsOf(RnnActivationKind kind) {
  switch (kind) {
    case RnnActivationKind::kAffine:
      return {1.0f, 0.0f};
    case RnnActivationKind::kLeakyRelu:
      return {0.01f, 0.0f};
    case RnnActivationKind::kThresholdedRelu:
    case RnnActivationKind::kElu:
      return {1.0f, 0.0f};
    case RnnActivationKind::kScaledTanh:
      return {1.0f, 1.0f};
    case RnnActivationKind::kHardSigmoid:
      return {0.2f, 0.5f};
    default:
      return {0.0f, 0.0f};
  }
}

// A float list attribute (ints accepted, as GetFloatAttr does), empty when absent.
absl::StatusOr<std::vector<double>> GetFloatsAttr(const Attrs& attrs, std::string_view name) {
  const auto it = attrs.find(name);
  if (it == attrs.end()) return std::vector<double>();
  if (const auto* floats = std::get_if<std::vector<double>>(&it->second)) return *floats;
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&it->second)) {
    return std::vector<double>(ints->begin(), ints->end());
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("attribute '%s' must be a list of floats", name));
}

void Unary(VUnaryOp op, int64_t n, const float* x, float* y, const VUnaryParams& params = {}) {
  GetMicrokernels().elementwise.vunary[static_cast<int>(op)](n, x, y, &params);
}

}  // namespace

absl::StatusOr<RnnActivationKind> ParseRnnActivation(std::string_view name) {
  for (size_t i = 0; i < std::size(kNames); ++i) {
    // absl's string_view, which may not be std's here
    if (absl::EqualsIgnoreCase(absl::string_view(name.data(), name.size()),
                               absl::string_view(kNames[i].data(), kNames[i].size()))) {
      return static_cast<RnnActivationKind>(i);
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown activation '%s': expected Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
      "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus",
      name));
}

bool RnnActivationTakesAlpha(RnnActivationKind kind) {
  switch (kind) {
    case RnnActivationKind::kAffine:
    case RnnActivationKind::kLeakyRelu:
    case RnnActivationKind::kThresholdedRelu:
    case RnnActivationKind::kScaledTanh:
    case RnnActivationKind::kHardSigmoid:
    case RnnActivationKind::kElu:
      return true;
    default:
      return false;
  }
}

bool RnnActivationTakesBeta(RnnActivationKind kind) {
  return kind == RnnActivationKind::kAffine || kind == RnnActivationKind::kScaledTanh ||
         kind == RnnActivationKind::kHardSigmoid;
}

absl::StatusOr<RnnActivations> GetRnnActivations(const Attrs& attrs, int gates) {
  using K = RnnActivationKind;
  constexpr std::string_view kSlots[] = {"activation_f", "activation_g", "activation_h"};
  const int count = gates == 4 ? 3 : gates == 3 ? 2 : 1;
  const K defaults[3] = {gates == 1 ? K::kTanh : K::kSigmoid, K::kTanh, K::kTanh};
  DYNVM_ASSIGN_OR_RETURN(const std::vector<double> alphas,
                         GetFloatsAttr(attrs, "activation_alpha"));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<double> betas, GetFloatsAttr(attrs, "activation_beta"));
  DYNVM_ASSIGN_OR_RETURN(const double clip,
                         GetFloatAttr(attrs, "clip", std::numeric_limits<double>::infinity()));
  if (!(clip > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'clip' must be > 0, got %g", clip));
  }
  RnnActivations act{.clip = static_cast<float>(clip), .defaults = std::isinf(clip)};
  size_t next_alpha = 0, next_beta = 0;
  for (int i = 0; i < count; ++i) {
    DYNVM_ASSIGN_OR_RETURN(const std::string name,
                           GetStringAttr(attrs, kSlots[i], kNames[static_cast<int>(defaults[i])]));
    DYNVM_ASSIGN_OR_RETURN(const K kind, ParseRnnActivation(name));
    const Defaults d = DefaultsOf(kind);
    RnnActivation& slot = act.slot[i];
    slot = {kind, d.alpha, d.beta};
    if (RnnActivationTakesAlpha(kind) && next_alpha < alphas.size()) {
      slot.alpha = static_cast<float>(alphas[next_alpha++]);
    }
    if (RnnActivationTakesBeta(kind) && next_beta < betas.size()) {
      slot.beta = static_cast<float>(betas[next_beta++]);
    }
    act.defaults = act.defaults && kind == defaults[i];
  }
  if (next_alpha < alphas.size() || next_beta < betas.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "activation_alpha has %d and activation_beta %d values, the activations take %d and %d",
        alphas.size(), betas.size(), next_alpha, next_beta));
  }
  return act;
}

void ApplyRnnActivation(const RnnActivation& act, int64_t n, const float* x, float* y) {
  const NnUkernels& uk = GetMicrokernels().nn;
  const float alpha = act.alpha, beta = act.beta;
  switch (act.kind) {
    case RnnActivationKind::kRelu:
      return Unary(VUnaryOp::kRelu, n, x, y);
    case RnnActivationKind::kTanh:
      return Unary(VUnaryOp::kTanh, n, x, y);
    case RnnActivationKind::kSigmoid:
      return Unary(VUnaryOp::kSigmoid, n, x, y);
    case RnnActivationKind::kAffine:
      return uk.vmuladdc(n, x, alpha, beta, y);
    case RnnActivationKind::kLeakyRelu:
      return Unary(VUnaryOp::kLeakyRelu, n, x, y, {.alpha = alpha});
    case RnnActivationKind::kScaledTanh:
      uk.vmulc(n, x, beta, y);
      Unary(VUnaryOp::kTanh, n, y, y);
      return uk.vmulc(n, y, alpha, y);
    case RnnActivationKind::kHardSigmoid:
      uk.vmuladdc(n, x, alpha, beta, y);
      return Unary(VUnaryOp::kClip, n, y, y, {.min = 0.0f, .max = 1.0f});
    case RnnActivationKind::kThresholdedRelu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] >= alpha ? x[i] : 0.0f;
      return;
    case RnnActivationKind::kElu:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] >= 0 ? x[i] : alpha * std::expm1(x[i]);
      return;
    case RnnActivationKind::kSoftsign:
      for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1 + std::fabs(x[i]));
      return;
    case RnnActivationKind::kSoftplus:  // as max(x, 0) + ln(1 + e^-|x|), which cannot overflow
      for (int64_t i = 0; i < n; ++i) {
        y[i] = std::fmax(x[i], 0.0f) + std::log1p(std::exp(-std::fabs(x[i])));
      }
      return;
  }
}

void ClipRnnGates(float clip, int64_t n, float* x) {
  if (std::isinf(clip)) return;
  Unary(VUnaryOp::kClip, n, x, x, {.min = -clip, .max = clip});
}

}  // namespace dynvm::kernels::nn
