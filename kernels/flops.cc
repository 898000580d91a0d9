#include "kernels/flops.h"

#include <cstdint>

namespace dynvm::kernels {
namespace {

double Elements(const NDArrayObj& t) { return static_cast<double>(t.num_elements()); }

}  // namespace

std::optional<double> KernelFlops(std::string_view kernel, NDArrayObj* const* args, int num_inputs) {
  if (num_inputs < 2) return std::nullopt;
  const NDArrayObj& a = *args[0];
  const NDArrayObj& b = *args[1];
  const NDArrayObj& out = *args[num_inputs];
  if (a.ndim() == 0 || out.ndim() == 0) return std::nullopt;
  const double outputs = Elements(out);
  if (outputs == 0) return 0.0;
  // Each output element is a dot product of length K: 2K operations.
  if (kernel == "nn.dense" || kernel == "nn.contrib_dense_pack") {
    return 2 * outputs * static_cast<double>(a.shape().back());  // a is [..., K]
  }
  if (kernel == "matmul" || kernel == "nn.batch_matmul") {
    // a's last two dims are [M, K] or, transposed, [K, M] (a vector is [K]), whatever
    // batch dims it broadcasts; out's second to last is M.
    if (a.ndim() == 1 || out.ndim() < 2) return 2 * outputs * static_cast<double>(a.shape().back());
    const double m = static_cast<double>(out.shape()[out.ndim() - 2]);
    const double a_matrix = static_cast<double>(a.shape()[a.ndim() - 1] * a.shape()[a.ndim() - 2]);
    return 2 * outputs * a_matrix / m;
  }
  if (kernel == "gemm") {  // A is [M, K] or, transposed, [K, M]; out is [M, N]
    const double m = static_cast<double>(out.shape().front());
    return m == 0 ? 0 : 2 * outputs * Elements(a) / m;
  }
  if (kernel == "nn.conv1d" || kernel == "nn.conv2d") {
    // The weight is [out_channels, in_channels / groups, kernel extents...]: each output
    // element sums in_channels / groups * kernel extents products.
    const double out_channels = b.ndim() > 0 ? static_cast<double>(b.shape().front()) : 0;
    return out_channels == 0 ? 0 : 2 * outputs * Elements(b) / out_channels;
  }
  if (kernel == "nn.attention" && num_inputs >= 3 && a.ndim() == 4 && b.ndim() == 4 &&
      args[2]->ndim() == 4) {
    // q [batch, heads, seq_q, d] times kᵀ, then the probabilities times v [.., seq_k, dv]:
    // 2 * seq_q * seq_k * (d + dv) per (batch, head).
    const NDArrayObj& v = *args[2];
    const double seq_k = static_cast<double>(b.shape()[2]);
    const double dv = static_cast<double>(v.shape().back());
    const double d = static_cast<double>(a.shape().back());
    return 2 * (Elements(a) / d) * seq_k * (d + dv);
  }
  return std::nullopt;
}

}  // namespace dynvm::kernels
