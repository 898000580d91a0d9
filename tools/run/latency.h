// The summary line of vm_run --benchmark (and of other tools that time invocations).
//
//   LatencyLine({1.0, 2.0, 4.0})
//   // "latency_ms median=2.000 p10=1.200 p90=3.600 min=1.000 runs=3"
#ifndef DYNVM_TOOLS_RUN_LATENCY_H_
#define DYNVM_TOOLS_RUN_LATENCY_H_

#include <string>

#include "absl/types/span.h"

namespace dynvm::tools {

// The `q`-th quantile (0 <= q <= 1) of `sorted` (ascending, non-empty), interpolating
// linearly between neighbours as numpy.percentile does by default.
double Quantile(absl::Span<const double> sorted, double q);

// "latency_ms median=<x> p10=<x> p90=<x> min=<x> runs=<n>" for the latencies
// `milliseconds` (any order, non-empty), with three decimals.
std::string LatencyLine(absl::Span<const double> milliseconds);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_RUN_LATENCY_H_
