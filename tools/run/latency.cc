// Percentiles of invocation times, and their summary line (tools/run/latency.h).
#include "tools/run/latency.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_format.h"

namespace dynvm::tools {

double Quantile(absl::Span<const double> sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + (sorted[above] - sorted[below]) * fraction;
}

std::string LatencyLine(absl::Span<const double> milliseconds) {
  std::vector<double> sorted(milliseconds.begin(), milliseconds.end());
  std::sort(sorted.begin(), sorted.end());
  return absl::StrFormat("latency_ms median=%.3f p10=%.3f p90=%.3f min=%.3f runs=%d",
                         Quantile(sorted, 0.5), Quantile(sorted, 0.1), Quantile(sorted, 0.9),
                         sorted.front(), sorted.size());
}

}  // namespace dynvm::tools
