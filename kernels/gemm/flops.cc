// The FLOP counts of the matrix products and convolutions (kernels/gemm/flops.h).
#include "kernels/gemm/flops.h"

#include <cstdint>

namespace dynvm::kernels {
namespace {

double Elements(const NDArrayObj& t) { return static_cast<double>(t.num_elements()); }

// The first input and the output of a call whose operands are tensors of rank >= 1.
bool Operands(NDArrayObj* const* args, int num_inputs, int min_inputs) {
  return num_inputs >= min_inputs && args[0]->ndim() > 0 && args[num_inputs]->ndim() > 0;
}

}  // namespace

std::optional<double> DenseFlops(const void*, NDArrayObj* const* args, int num_inputs) {
  if (!Operands(args, num_inputs, 2)) return std::nullopt;
  return 2 * Elements(*args[num_inputs]) * static_cast<double>(args[0]->shape().back());
}

std::optional<double> MatmulFlops(const void*, NDArrayObj* const* args, int num_inputs) {
  if (!Operands(args, num_inputs, 2)) return std::nullopt;
  const NDArrayObj& a = *args[0];
  const NDArrayObj& out = *args[num_inputs];
  const double outputs = Elements(out);
  if (outputs == 0) return 0.0;
  // A 1-D operand is a vector of the K products: a [K], or b [K] (then out is a without
  // its last axis, so out's dims say nothing of M).
  if (a.ndim() == 1 || out.ndim() < 2) return 2 * outputs * static_cast<double>(a.shape().back());
  if (args[1]->ndim() == 1) return 2 * outputs * static_cast<double>(args[1]->shape().front());
  const double m = static_cast<double>(out.shape()[out.ndim() - 2]);
  const double a_matrix = static_cast<double>(a.shape()[a.ndim() - 1] * a.shape()[a.ndim() - 2]);
  return 2 * outputs * a_matrix / m;
}

std::optional<double> GemmFlops(const void*, NDArrayObj* const* args, int num_inputs) {
  if (!Operands(args, num_inputs, 2)) return std::nullopt;
  const double m = static_cast<double>(args[num_inputs]->shape().front());
  return m == 0 ? 0 : 2 * Elements(*args[num_inputs]) * Elements(*args[0]) / m;
}

std::optional<double> ConvFlops(const void*, NDArrayObj* const* args, int num_inputs) {
  if (!Operands(args, num_inputs, 2) || args[1]->ndim() == 0) return std::nullopt;
  // Each output element sums in_channels / groups * kernel extents products.
  const double out_channels = static_cast<double>(args[1]->shape().front());
  return out_channels == 0 ? 0 : 2 * Elements(*args[num_inputs]) * Elements(*args[1]) / out_channels;
}

}  // namespace dynvm::kernels
