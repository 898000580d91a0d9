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
// nn.varlen_attention: the same over sequences of different lengths packed one after
// another, without padding and without a mask: each sequence attends to itself.
//
//   nn.varlen_attention(q [tokens, heads, head_dim], k [tokens, heads, head_dim],
//                       v [tokens, heads, value_dim], offsets [n + 1]) -> [tokens, heads, value_dim]
//
// Sequence s is rows [offsets[s], offsets[s + 1]) of every tensor; offsets (i32 or i64)
// rise from 0 to tokens (a sequence may be empty). Heads are read in place, as BSHD.
//
// Both run one plan over the (sequence, head) pairs of the call. Each pair's kᵀ and v
// are first packed (GemmPackB) into the panels GemmF32 reads, once for all its queries.
// Then each pair is cut into blocks of query rows small enough that the block's score
// matrix (rows x seq_k) stays in cache between the two products: GemmF32 writes the
// scaled scores, the mask is added and each row softmaxed in place, and GemmF32
// multiplies the probabilities by v straight into the output. The full seq_q x seq_k
// matrix never exists. Blocks of all pairs run in parallel on the pool; each task's
// GEMMs then run on its thread.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/deadline.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/gemm/gemm.h"
#include "kernels/microkernels.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/packed_sequences.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kOp = "nn.attention";

// Floats in a block of scores: 128 KiB, well inside L2 beside k and v of one head.
constexpr int64_t kScoreBlockFloats = 32 * 1024;

constexpr std::string_view kVarlenOp = "nn.varlen_attention";

struct AttentionState {
  std::optional<float> scale;  // absent: 1 / sqrt(head_dim)
  bool seq_major = false;      // layout "BSHD"
};

absl::StatusOr<std::optional<float>> GetScaleAttr(const Attrs& attrs) {
  if (!attrs.contains("scale")) return std::nullopt;
  DYNVM_ASSIGN_OR_RETURN(const double scale, GetFloatAttr(attrs, "scale"));
  if (!std::isfinite(scale)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute 'scale' must be finite, got %g", scale));
  }
  return static_cast<float>(scale);
}

absl::StatusOr<std::shared_ptr<const void>> BindAttention(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"scale", "layout"}));
  DYNVM_ASSIGN_OR_RETURN(const std::string layout, GetStringAttr(attrs, "layout", "BHSD"));
  if (layout != "BHSD" && layout != "BSHD") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute 'layout' must be \"BHSD\" or \"BSHD\", got \"%s\"", layout));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::optional<float> scale, GetScaleAttr(attrs));
  return std::make_shared<const AttentionState>(AttentionState{scale, layout == "BSHD"});
}

absl::StatusOr<std::shared_ptr<const void>> BindVarlenAttention(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"scale"}));
  DYNVM_ASSIGN_OR_RETURN(const std::optional<float> scale, GetScaleAttr(attrs));
  return std::make_shared<const AttentionState>(AttentionState{scale, true});
}

float ScaleFor(const AttentionState& state, int64_t head_dim) {
  if (state.scale) return *state.scale;
  return head_dim > 0 ? 1.0f / std::sqrt(static_cast<float>(head_dim)) : 1.0f;
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

// Adds the mask's rows for query rows [q0, q0 + rows) of head `bh` to `scores` (rows
// of seq_k) and softmaxes each row in place.
struct MaskedSoftmax {
  const float* mask = nullptr;  // null: no mask
  Shape mask_strides;           // over [batch, heads, seq_q, seq_k], 0 on broadcast axes
  int64_t heads = 1;

  void Run(const Microkernels& uk, int64_t bh, int64_t q0, int64_t rows, int64_t seq_k,
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

// One (sequence, head) pair of a call: where row 0 of its q, k, v and output start
// (element offsets), its lengths, and its index `bh` among the mask's [batch, heads].
struct HeadPair {
  int64_t q, k, v, out;
  int64_t seq_q, seq_k;
  int64_t bh;
};

// What the pairs of a call share: the tensors, their row strides (floats from a row to
// the next: dim, or heads * dim when heads are read in place) and the softmax.
struct HeadsCall {
  const float* q;
  const float* k;
  const float* v;
  float* out;
  int64_t qk_stride, v_stride;  // the output's rows are v's
  int64_t head_dim, value_dim;
  float scale;
  MaskedSoftmax softmax;
};

// A pair as RunHeadPairs plans it: where its packed kᵀ and v go, and its blocks of
// query rows (the units of parallel work), numbered on from the previous pair's.
struct PairPlan {
  HeadPair pair;
  int64_t packed_at;
  int64_t first_block, block;  // the first block's number; rows per block
};

// Runs the `count` pairs `pair_at(0)`, `pair_at(1)`... of a call. Allocates nothing
// once its thread's scratch has grown to the call's size.
void RunHeadPairs(const HeadsCall& c, int64_t count, absl::FunctionRef<HeadPair(int64_t)> pair_at,
                  ThreadPool& pool) {
  thread_local ScratchBuffer plan_scratch;
  PairPlan* plans = plan_scratch.As<PairPlan>(count + 1);
  int64_t packed_size = 0, blocks = 0, max_scores = 1;
  for (int64_t i = 0; i < count; ++i) {
    const HeadPair p = pair_at(i);
    const int64_t block = std::clamp<int64_t>(kScoreBlockFloats / std::max<int64_t>(p.seq_k, 1), 1,
                                              std::max<int64_t>(p.seq_q, 1));
    plans[i] = {p, packed_size, blocks, block};
    if (p.seq_k > 0) {
      packed_size += GemmPackedBSize(c.head_dim, p.seq_k) + GemmPackedBSize(p.seq_k, c.value_dim);
    }
    blocks += (p.seq_q + block - 1) / block;
    max_scores = std::max(max_scores, block * p.seq_k);
  }
  plans[count].first_block = blocks;  // the end, for the search below
  // Every pair's kᵀ and v packed once into the panels the GEMMs read (GemmPackB), for
  // all its blocks of queries, rather than by each block's GEMMs.
  float* packed = ThreadScratch<float>(ScratchSlot::kCall, packed_size);
  pool.ParallelFor(count, /*grain=*/1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const HeadPair& p = plans[i].pair;
      if (p.seq_k == 0) continue;
      float* kt = packed + plans[i].packed_at;
      GemmPackB(c.head_dim, p.seq_k, c.k + p.k, c.qk_stride, /*trans_b=*/true, kt);
      GemmPackB(p.seq_k, c.value_dim, c.v + p.v, c.v_stride, /*trans_b=*/false,
                kt + GemmPackedBSize(c.head_dim, p.seq_k));
    }
  });
  const Microkernels& uk = GetMicrokernels();
  pool.ParallelFor(blocks, /*grain=*/1, [&](int64_t begin, int64_t end) {
    float* scores = ThreadScratch<float>(ScratchSlot::kTask, max_scores);
    // The pair of block `begin`: the last whose first block is at most it.
    const PairPlan* plan =
        std::upper_bound(plans, plans + count, begin,
                         [](int64_t t, const PairPlan& p) { return t < p.first_block; }) - 1;
    for (int64_t t = begin; t < end && !KernelDeadlinePassed(); ++t) {  // a stopped run leaves the rest
      while (t >= plan[1].first_block) ++plan;
      const HeadPair& p = plan->pair;
      const int64_t q0 = (t - plan->first_block) * plan->block;
      const int64_t rows = std::min(plan->block, p.seq_q - q0);
      float* out = c.out + p.out + q0 * c.v_stride;
      if (p.seq_k == 0) {  // no keys: each output is an empty weighted sum
        for (int64_t i = 0; i < rows; ++i) std::fill_n(out + i * c.v_stride, c.value_dim, 0.0f);
        continue;
      }
      const float* kt = packed + plan->packed_at;
      GemmF32({.m = rows,
               .n = p.seq_k,
               .k = c.head_dim,
               .a = c.q + p.q + q0 * c.qk_stride,
               .lda = c.qk_stride,
               .b = kt,
               .b_packed = true,
               .c = scores,
               .ldc = p.seq_k,
               .alpha = c.scale},
              pool);
      c.softmax.Run(uk, p.bh, q0, rows, p.seq_k, scores);
      GemmF32({.m = rows,
               .n = c.value_dim,
               .k = p.seq_k,
               .a = scores,
               .lda = p.seq_k,
               .b = kt + GemmPackedBSize(c.head_dim, p.seq_k),
               .b_packed = true,
               .c = out,
               .ldc = c.v_stride},
              pool);
    }
  });
}

absl::Status AttentionKernel(const KernelCall& call) {
  const AttentionState& state = *static_cast<const AttentionState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const AttentionDims d, CheckAttentionInputs(call.inputs(), state.seq_major));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kOp, call, {d.output()}));
  // A non-empty output bounds batch, heads and seq_q by its size, and seq_k by v's.
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  HeadsCall c{.q = call.args[0]->data_as<float>(),
              .k = call.args[1]->data_as<float>(),
              .v = call.args[2]->data_as<float>(),
              .out = call.outputs()[0]->data_as<float>(),
              .qk_stride = (d.seq_major ? d.heads : 1) * d.head_dim,
              .v_stride = (d.seq_major ? d.heads : 1) * d.value_dim,
              .head_dim = d.head_dim,
              .value_dim = d.value_dim,
              .scale = ScaleFor(state, d.head_dim),
              .softmax = {.mask = nullptr, .mask_strides = {}, .heads = d.heads}};
  if (call.num_inputs == 4) {
    c.softmax.mask = call.args[3]->data_as<float>();
    c.softmax.mask_strides = BroadcastStrides(call.args[3]->shape(), d.full_mask());
  }
  // Where row 0 of head (b, h) of a tensor with rows of `dim` starts.
  auto row0 = [&](int64_t bh, int64_t seq, int64_t dim) {
    return d.seq_major ? (bh / d.heads * seq * d.heads + bh % d.heads) * dim : bh * seq * dim;
  };
  RunHeadPairs(c, d.batch * d.heads, [&](int64_t bh) {
    return HeadPair{row0(bh, d.seq_q, d.head_dim), row0(bh, d.seq_k, d.head_dim),
                    row0(bh, d.seq_k, d.value_dim), row0(bh, d.seq_q, d.value_dim),
                    d.seq_q, d.seq_k, bh};
  }, *call.pool);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// nn.varlen_attention

struct VarlenDims {
  int64_t tokens, heads, head_dim, value_dim, sequences;
  Shape output() const { return {tokens, heads, value_dim}; }
};

absl::StatusOr<VarlenDims> CheckVarlenInputs(absl::Span<NDArrayObj* const> inputs) {
  DYNVM_RETURN_IF_ERROR(nn::CheckInputCount(kVarlenOp, static_cast<int>(inputs.size()), {4},
                                            "q, k, v and offsets"));
  const char* const names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    DYNVM_RETURN_IF_ERROR(nn::CheckF32(kVarlenOp, names[i], *inputs[i]));
    if (inputs[i]->ndim() != 3) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s must have rank 3 [tokens, heads, dim], got shape %s", kVarlenOp, names[i],
          ShapeToString(inputs[i]->shape())));
    }
  }
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetsTensor(kVarlenOp, *inputs[3]));
  const Shape& q = inputs[0]->shape();
  const Shape& k = inputs[1]->shape();
  const Shape& v = inputs[2]->shape();
  if (k != q || v[0] != q[0] || v[1] != q[1]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: q %s, k %s and v %s do not fit: expected k %s and v [%d, %d, value_dim]", kVarlenOp,
        ShapeToString(q), ShapeToString(k), ShapeToString(v), ShapeToString(q), q[0], q[1]));
  }
  return VarlenDims{q[0], q[1], q[2], v[2], inputs[3]->shape()[0] - 1};
}

absl::Status VarlenAttentionShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const VarlenDims d, CheckVarlenInputs(call.input_span()));
  call.output_shapes[0] = d.output();
  return absl::OkStatus();
}

// 2 len² heads (head_dim + value_dim) per sequence.
std::optional<double> VarlenAttentionFlops(const void*, NDArrayObj* const* args, int num_inputs) {
  const absl::StatusOr<VarlenDims> d = CheckVarlenInputs({args, static_cast<size_t>(num_inputs)});
  if (!d.ok() || !nn::CheckOffsetValues(kVarlenOp, *args[3], d->tokens).ok()) return std::nullopt;
  double flops = 0;
  for (int64_t s = 0; s < d->sequences; ++s) {
    const double len = static_cast<double>(nn::OffsetAt(*args[3], s + 1) - nn::OffsetAt(*args[3], s));
    flops += 2.0 * len * len * static_cast<double>(d->heads) *
             static_cast<double>(d->head_dim + d->value_dim);
  }
  return flops;
}

absl::Status VarlenAttentionKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const VarlenDims d, CheckVarlenInputs(call.inputs()));
  DYNVM_RETURN_IF_ERROR(nn::CheckF32Outputs(kVarlenOp, call, {d.output()}));
  const NDArrayObj& offsets = *call.args[3];
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetValues(kVarlenOp, offsets, d.tokens));
  if (call.outputs()[0]->num_elements() == 0) return absl::OkStatus();
  const HeadsCall c{.q = call.args[0]->data_as<float>(),
                    .k = call.args[1]->data_as<float>(),
                    .v = call.args[2]->data_as<float>(),
                    .out = call.outputs()[0]->data_as<float>(),
                    .qk_stride = d.heads * d.head_dim,
                    .v_stride = d.heads * d.value_dim,
                    .head_dim = d.head_dim,
                    .value_dim = d.value_dim,
                    .scale = ScaleFor(*static_cast<const AttentionState*>(call.state), d.head_dim),
                    .softmax = {}};
  // Pair s * heads + h: head h of sequence s (an empty sequence's pairs do nothing).
  RunHeadPairs(c, d.sequences * d.heads, [&](int64_t i) {
    const int64_t begin = nn::OffsetAt(offsets, i / d.heads), h = i % d.heads;
    const int64_t len = nn::OffsetAt(offsets, i / d.heads + 1) - begin;
    const int64_t qk = (begin * d.heads + h) * d.head_dim, v = (begin * d.heads + h) * d.value_dim;
    return HeadPair{qk, qk, v, v, len, len, 0};
  }, *call.pool);
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterAttentionKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kOp),
                                                    .num_inputs = kVariadic,
                                                    .num_outputs = 1,
                                                    .fn = AttentionKernel,
                                                    .bind = BindAttention,
                                                    .shape_fn = AttentionShapeFn,
                                                    .flops = AttentionFlops}));
  return registry.Register(KernelDef{.name = std::string(kVarlenOp),
                                     .num_inputs = 4,
                                     .num_outputs = 1,
                                     .fn = VarlenAttentionKernel,
                                     .bind = BindVarlenAttention,
                                     .shape_fn = VarlenAttentionShapeFn,
                                     .flops = VarlenAttentionFlops});
}

}  // namespace dynvm::kernels
