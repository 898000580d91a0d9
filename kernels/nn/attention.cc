// nn.attention: fused multi-head scaled dot-product attention, f32.
//
//   out[b, h] = softmax(q[b, h] · k[b, h]ᵀ · scale + mask[b, h]) · v[b, h]
//
// q is [batch, heads, seq_q, head_dim], k [batch, heads, seq_k, head_dim], v [batch,
// heads, seq_k, value_dim] (value_dim is usually head_dim), and the optional additive
// mask broadcasts to [batch, heads, seq_q, seq_k] (a padding mask is [batch, 1, 1,
// seq_k], a causal one [seq_q, seq_k]). The attribute `scale` defaults to
// 1 / sqrt(head_dim). The output is [batch, heads, seq_q, value_dim].
//
// With the attribute layout = "BSHD" (default "BHSD"), q, k, v and the output have
// their sequence axis before the heads — [batch, seq, heads, dim], as a projection
// writes them before the usual transpose — and the GEMMs read and write each head in
// place with a row stride of heads * dim, so that no transpose is needed either side.
// The mask keeps its [batch, heads, seq_q, seq_k] meaning.
//
// Each head's kᵀ and v are first packed (GemmPackB) into the panels GemmF32 reads,
// once for all its queries. Then each (batch, head) is cut into blocks of query rows
// small enough that the block's score matrix (rows x seq_k) stays in cache between the
// two products: GemmF32 writes
// the scaled scores, the mask is added and each row softmaxed in place, and GemmF32
// multiplies the probabilities by v straight into the output. The full seq_q x seq_k
// matrix never exists. Blocks of all heads run in parallel on the pool; each task's
// GEMMs then run on its thread.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/deadline.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/gemm/gemm.h"
#include "kernels/microkernels.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kOp = "nn.attention";

// Floats in a block of scores: 128 KiB, well inside L2 beside k and v of one head.
constexpr int64_t kScoreBlockFloats = 32 * 1024;

struct AttentionState {
  bool has_scale;
  float scale;
  bool seq_major;  // layout "BSHD"
};

absl::StatusOr<std::shared_ptr<const void>> BindAttention(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"scale", "layout"}));
  DYNVM_ASSIGN_OR_RETURN(const std::string layout, GetStringAttr(attrs, "layout", "BHSD"));
  if (layout != "BHSD" && layout != "BSHD") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'layout' must be \"BHSD\" or \"BSHD\", got \"%s\"", layout));
  }
  AttentionState state{attrs.contains("scale"), 0.0f, layout == "BSHD"};
  if (state.has_scale) {
    DYNVM_ASSIGN_OR_RETURN(const double scale, GetFloatAttr(attrs, "scale"));
    if (!std::isfinite(scale)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("attribute 'scale' must be finite, got %g", scale));
    }
    state.scale = static_cast<float>(scale);
  }
  return std::make_shared<const AttentionState>(state);
}

// The extents of a call, after checking its inputs.
struct AttentionDims {
  int64_t batch, heads, seq_q, seq_k, head_dim, value_dim;
  bool seq_major;
  Shape full_mask() const { return {batch, heads, seq_q, seq_k}; }
  // A tensor of the layout with `seq` and `dim` as its last-but-one extents.
  Shape Of(int64_t seq, int64_t dim) const {
    return seq_major ? Shape{batch, seq, heads, dim} : Shape{batch, heads, seq, dim};
  }
  Shape output() const { return Of(seq_q, value_dim); }
};

absl::StatusOr<AttentionDims> CheckAttentionInputs(absl::Span<NDArrayObj* const> inputs,
                                                   bool seq_major) {
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(kOp, static_cast<int>(inputs.size()), {3, 4},
                                            "q, k, v and an optional mask"));
  const char* const names[] = {"q", "k", "v", "mask"};
  for (size_t i = 0; i < inputs.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(kOp, names[i], *inputs[i]));
  }
  for (int i = 0; i < 3; ++i) {
    if (inputs[i]->ndim() != 4) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s must have rank 4 [batch, %s, dim], got shape %s", kOp, names[i],
          seq_major ? "seq, heads" : "heads, seq", ShapeToString(inputs[i]->shape())));
    }
  }
  const Shape& q = inputs[0]->shape();
  const Shape& k = inputs[1]->shape();
  const Shape& v = inputs[2]->shape();
  const int seq_axis = seq_major ? 1 : 2, heads_axis = seq_major ? 2 : 1;
  const AttentionDims dims{q[0], q[heads_axis], q[seq_axis], k[seq_axis], q[3], v[3], seq_major};
  if (k != dims.Of(dims.seq_k, dims.head_dim) || v != dims.Of(dims.seq_k, dims.value_dim)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: q %s, k %s and v %s do not fit: expected k %s and v %s, with any seq_k and "
        "value_dim",
        kOp, ShapeToString(q), ShapeToString(k), ShapeToString(v),
        seq_major ? absl::StrFormat("[%d, seq_k, %d, %d]", dims.batch, dims.heads, dims.head_dim)
                  : absl::StrFormat("[%d, %d, seq_k, %d]", dims.batch, dims.heads, dims.head_dim),
        seq_major ? absl::StrFormat("[%d, seq_k, %d, value_dim]", dims.batch, dims.heads)
                  : absl::StrFormat("[%d, %d, seq_k, value_dim]", dims.batch, dims.heads)));
  }
  if (inputs.size() == 4) {
    const Shape full = dims.full_mask();
    const absl::StatusOr<Shape> broadcast = BroadcastShapes(inputs[3]->shape(), full);
    if (!broadcast.ok() || *broadcast != full) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: mask shape %s does not broadcast to the scores' shape %s", kOp,
                          ShapeToString(inputs[3]->shape()), ShapeToString(full)));
    }
  }
  return dims;
}

absl::Status AttentionShapeFn(const ShapeCall& call) {
  const auto& state = *static_cast<const AttentionState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const AttentionDims dims,
                         CheckAttentionInputs(call.input_span(), state.seq_major));
  call.output_shapes[0] = dims.output();
  return absl::OkStatus();
}

// q times kᵀ, then the probabilities times v: 2 seq_q seq_k (head_dim + value_dim) per
// (batch, head).
std::optional<double> AttentionFlops(const void* state, NDArrayObj* const* args,
                                     int num_inputs) {
  const auto& s = *static_cast<const AttentionState*>(state);
  const absl::StatusOr<AttentionDims> d =
      CheckAttentionInputs({args, static_cast<size_t>(num_inputs)}, s.seq_major);
  if (!d.ok()) return std::nullopt;
  return 2.0 * static_cast<double>(d->batch) * static_cast<double>(d->heads) *
         static_cast<double>(d->seq_q) * static_cast<double>(d->seq_k) *
         static_cast<double>(d->head_dim + d->value_dim);
}

// Adds the mask's rows for query rows [q0, q0 + rows) of head `bh` to `scores` and
// softmaxes each row in place.
struct MaskedSoftmax {
  const float* mask;   // null: no mask
  Shape mask_strides;  // over [batch, heads, seq_q, seq_k], 0 on broadcast axes
  int64_t heads, seq_k;

  void Run(const Microkernels& uk, int64_t bh, int64_t q0, int64_t rows,
           float* scores) const {
    for (int64_t i = 0; i < rows; ++i) {
      float* row = scores + i * seq_k;
      if (mask != nullptr) {
        const float* m = mask + bh / heads * mask_strides[0] + bh % heads * mask_strides[1] +
                         (q0 + i) * mask_strides[2];
        if (mask_strides[3] == 1) {
          uk.nn.vadd(seq_k, row, m, row);
        } else {
          uk.nn.vaddc(seq_k, row, m[0], row);
        }
      }
      nn::SoftmaxRow(uk, seq_k, row, row);
    }
  }
};

absl::Status AttentionKernel(const KernelCall& call) {
  const AttentionState& state = *static_cast<const AttentionState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const AttentionDims d, CheckAttentionInputs(call.inputs(), state.seq_major));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kOp, call, {d.output()}));
  // A non-empty output bounds batch, heads and seq_q by its size, and seq_k by v's.
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  float* out = call.outputs()[0]->data_as<float>();
  if (d.seq_k == 0) {  // no keys: each output is an empty weighted sum (k, v are empty)
    std::fill_n(out, call.outputs()[0]->num_elements(), 0.0f);
    return absl::OkStatus();
  }
  const float scale = state.has_scale  ? state.scale
                      : d.head_dim > 0 ? 1.0f / std::sqrt(static_cast<float>(d.head_dim))
                                       : 1.0f;
  MaskedSoftmax softmax{nullptr, {}, d.heads, d.seq_k};
  if (call.num_inputs == 4) {
    softmax.mask = call.args[3]->data_as<float>();
    softmax.mask_strides = BroadcastStrides(call.args[3]->shape(), d.full_mask());
  }
  const float* q = call.args[0]->data_as<float>();
  const float* k = call.args[1]->data_as<float>();
  const float* v = call.args[2]->data_as<float>();
  // Where row i of head (b, h) of a tensor with rows of `dim` starts, and rows' stride.
  const int64_t heads = d.heads;
  auto row = [&](int64_t bh, int64_t seq, int64_t i, int64_t dim) {
    return d.seq_major ? ((bh / heads * seq + i) * heads + bh % heads) * dim
                       : (bh * seq + i) * dim;
  };
  const int64_t row_stride = d.seq_major ? heads : 1;
  ThreadPool& pool = *call.pool;
  // Every head's kᵀ and v packed once into the panels the GEMMs read (GemmPackB), for
  // all its blocks of queries, rather than by each block's GEMMs.
  const int64_t kt_size = GemmPackedBSize(d.head_dim, d.seq_k);
  const int64_t v_size = GemmPackedBSize(d.seq_k, d.value_dim);
  const int64_t bh_count = d.batch * d.heads;
  float* packed = ThreadScratch<float>(ScratchSlot::kCall, bh_count * (kt_size + v_size));
  pool.ParallelFor(bh_count, /*grain=*/1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      float* head = packed + bh * (kt_size + v_size);
      GemmPackB(d.head_dim, d.seq_k, k + row(bh, d.seq_k, 0, d.head_dim),
                row_stride * d.head_dim, /*trans_b=*/true, head);
      GemmPackB(d.seq_k, d.value_dim, v + row(bh, d.seq_k, 0, d.value_dim),
                row_stride * d.value_dim, /*trans_b=*/false, head + kt_size);
    }
  });
  const int64_t block = std::clamp<int64_t>(kScoreBlockFloats / std::max<int64_t>(d.seq_k, 1), 1,
                                            std::max<int64_t>(d.seq_q, 1));
  const int64_t blocks = (d.seq_q + block - 1) / block;
  const Microkernels& uk = GetMicrokernels();
  pool.ParallelFor(bh_count * blocks, /*grain=*/1, [&](int64_t begin, int64_t end) {
    float* scores = ThreadScratch<float>(ScratchSlot::kTask, block * d.seq_k);
    for (int64_t t = begin; t < end && !KernelDeadlinePassed(); ++t) {  // a stopped run leaves the rest
      const int64_t bh = t / blocks, q0 = t % blocks * block;
      const int64_t rows = std::min(block, d.seq_q - q0);
      GemmF32({.m = rows,
               .n = d.seq_k,
               .k = d.head_dim,
               .a = q + row(bh, d.seq_q, q0, d.head_dim),
               .lda = row_stride * d.head_dim,
               .b = packed + bh * (kt_size + v_size),
               .b_packed = true,
               .c = scores,
               .ldc = d.seq_k,
               .alpha = scale},
              pool);
      softmax.Run(uk, bh, q0, rows, scores);
      GemmF32({.m = rows,
               .n = d.value_dim,
               .k = d.seq_k,
               .a = scores,
               .lda = d.seq_k,
               .b = packed + bh * (kt_size + v_size) + kt_size,
               .b_packed = true,
               .c = out + row(bh, d.seq_q, q0, d.value_dim),
               .ldc = row_stride * d.value_dim},
              pool);
    }
  });
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterAttentionKernels(KernelRegistry& registry) {
  return registry.Register(KernelDef{.name = std::string(kOp),
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = AttentionKernel,
                                     .bind = BindAttention,
                                     .shape_fn = AttentionShapeFn,
                                     .flops = AttentionFlops});
}

}  // namespace dynvm::kernels
