// The neural-network families' shared attribute parsing, checks and slice walks
// (kernels/nn/common.h).
#include "kernels/nn/common.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/scratch.h"

namespace dynvm::kernels::nn {
namespace {

// Floor and ceiling of a / b for b > 0 and any sign of a.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// Slices per tile on the strided path of ForEachAxisRow: 16 floats are one 64-byte
// cache line of each input row.
constexpr int64_t kAxisTile = 16;

}  // namespace

absl::StatusOr<std::vector<int64_t>> GetSpatialAttr(const Attrs& attrs, std::string_view name,
                                                    int rank, int64_t fallback, int64_t min) {
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> values, GetIntsAttr(attrs, name, {fallback}));
  if (values.size() == 1) values.assign(rank, values[0]);
  if (static_cast<int>(values.size()) != rank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute '%s' needs 1 or %d values, got %d", name, rank, values.size()));
  }
  for (int64_t v : values) {
    if (v < min || v >= kMaxWindowAttr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute '%s' values must be in [%d, %d), got [%s]", name, min,
                          kMaxWindowAttr, absl::StrJoin(values, ", ")));
    }
  }
  return values;
}

absl::StatusOr<std::vector<int64_t>> GetPaddingAttr(const Attrs& attrs, std::string_view name,
                                                    int rank) {
  DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> values, GetIntsAttr(attrs, name, {0}));
  const int count = static_cast<int>(values.size());
  if (count != 1 && count != rank && count != 2 * rank) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute '%s' needs 1, %d or %d values, got %d", name, rank, 2 * rank, count));
  }
  for (int64_t v : values) {
    if (v < 0 || v >= kMaxWindowAttr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute '%s' values must be in [0, %d), got [%s]", name,
                          kMaxWindowAttr, absl::StrJoin(values, ", ")));
    }
  }
  if (count == 2 * rank) return values;
  std::vector<int64_t> pads(2 * rank);
  for (int i = 0; i < rank; ++i) pads[i] = pads[rank + i] = values[count == 1 ? 0 : i];
  return pads;
}

absl::Status CheckLayoutAttr(const Attrs& attrs, std::string_view name, std::string_view expected,
                             bool allow_empty) {
  DYNVM_ASSIGN_OR_RETURN(const std::string layout, GetStringAttr(attrs, name, expected));
  if (layout == expected || (allow_empty && layout.empty())) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("unsupported %s '%s': expected '%s'", name, layout, expected));
}

absl::StatusOr<float> GetEpsilonAttr(const Attrs& attrs, double fallback) {
  DYNVM_ASSIGN_OR_RETURN(const double epsilon, GetFloatAttr(attrs, "epsilon", fallback));
  if (!(epsilon >= 0.0) || !std::isfinite(epsilon)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'epsilon' must be finite and non-negative, got %g", epsilon));
  }
  return static_cast<float>(epsilon);
}

absl::Status CheckF32(std::string_view op, std::string_view what, const NDArrayObj& t) {
  if (t.dtype() == DType::kF32) return absl::OkStatus();
  return internal::UnsupportedDType(op, what, t.dtype(), "f32");
}

absl::Status CheckInputCount(std::string_view op, int num_inputs,
                             std::initializer_list<int> allowed, std::string_view signature) {
  if (std::find(allowed.begin(), allowed.end(), num_inputs) != allowed.end()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat("%s takes %s inputs (%s), got %d", op,
                                                    absl::StrJoin(allowed, " or "), signature,
                                                    num_inputs));
}

absl::Status CheckShape(std::string_view op, std::string_view what, const NDArrayObj& t,
                        absl::Span<const int64_t> expected) {
  if (absl::MakeConstSpan(t.shape()) == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s has shape %s, expected %s", op, what,
                                                    ShapeToString(t.shape()),
                                                    ShapeToString(expected)));
}

absl::Status CheckF32Outputs(std::string_view op, const KernelCall& call,
                             std::initializer_list<absl::Span<const int64_t>> shapes) {
  int index = 0;
  for (absl::Span<const int64_t> shape : shapes) {
    const NDArrayObj& out = *call.outputs()[index];
    DYNVM_RETURN_IF_ERROR(CheckF32(op, "output", out));
    DYNVM_RETURN_IF_ERROR(internal::CheckOutputShape(op, out, shape, index));
    ++index;
  }
  return absl::OkStatus();
}

int64_t Product(absl::Span<const int64_t> shape, int begin, int end) {
  int64_t product = 1;
  for (int i = begin; i < end; ++i) product *= shape[i];
  return product;
}

void ForEachAxisRow(const float* x, float* y, int64_t outer, int64_t n, int64_t inner,
                    ThreadPool& pool, absl::FunctionRef<void(const float*, float*)> row_fn) {
  if (outer == 0 || n == 0 || inner == 0) return;
  if (inner == 1) {
    pool.ParallelFor(outer, internal::GrainForBytes(8 * n), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) row_fn(x + r * n, y + r * n);
    });
    return;
  }
  const int64_t tiles = (inner + kAxisTile - 1) / kAxisTile;
  pool.ParallelFor(outer * tiles, internal::GrainForBytes(8 * n * kAxisTile),
                   [&](int64_t begin, int64_t end) {
                     float* tile = ThreadScratch<float>(ScratchSlot::kTask, kAxisTile * n);
                     for (int64_t t = begin; t < end; ++t) {
                       const int64_t offset = t / tiles * n * inner + t % tiles * kAxisTile;
                       const int64_t width = std::min(kAxisTile, inner - t % tiles * kAxisTile);
                       const float* src = x + offset;
                       for (int64_t j = 0; j < n; ++j) {
                         for (int64_t c = 0; c < width; ++c) tile[c * n + j] = src[j * inner + c];
                       }
                       for (int64_t c = 0; c < width; ++c) row_fn(tile + c * n, tile + c * n);
                       float* dst = y + offset;
                       for (int64_t j = 0; j < n; ++j) {
                         for (int64_t c = 0; c < width; ++c) dst[j * inner + c] = tile[c * n + j];
                       }
                     }
                   });
}

absl::StatusOr<int64_t> WindowOutputSize(std::string_view op, std::string_view axis_name,
                                         int64_t in, const WindowAxis& w, bool ceil_mode) {
  // In 128 bits: `in` may be any extent of an empty tensor.
  const __int128 padded = static_cast<__int128>(in) + w.pad_before + w.pad_after;
  const __int128 span = static_cast<__int128>(w.dilation) * (w.kernel - 1) + 1;
  if (padded < span) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the window spans %d %s positions (kernel %d, dilation %d) but the padded input "
        "has %d",
        op, static_cast<int64_t>(span), axis_name, w.kernel, w.dilation,
        static_cast<int64_t>(padded)));
  }
  const __int128 out = (padded - span + (ceil_mode ? w.stride - 1 : 0)) / w.stride + 1;
  if (out > std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: output %s too large", op, axis_name));
  }
  return static_cast<int64_t>(out);
}

void ValidOutputs(const WindowAxis& w, int64_t k, int64_t in, int64_t out, int64_t* lo,
                  int64_t* hi) {
  const int64_t offset = k * w.dilation - w.pad_before;  // input position of output 0
  *lo = std::clamp<int64_t>(CeilDiv(-offset, w.stride), 0, out);
  *hi = std::clamp<int64_t>(FloorDiv(in - 1 - offset, w.stride) + 1, *lo, out);
}

void ValidTaps(const WindowAxis& w, int64_t o, int64_t in, int64_t* lo, int64_t* hi) {
  const int64_t start = o * w.stride - w.pad_before;  // input position of tap 0
  *lo = std::clamp<int64_t>(CeilDiv(-start, w.dilation), 0, w.kernel);
  *hi = std::clamp<int64_t>(FloorDiv(in - 1 - start, w.dilation) + 1, *lo, w.kernel);
}

}  // namespace dynvm::kernels::nn
