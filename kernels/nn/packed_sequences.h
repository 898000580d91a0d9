// Sequences packed one after another without padding, as a packed-token encoder runs
// them: a tensor's rows [offsets[s], offsets[s + 1]) are sequence s, and offsets
// [n + 1] (i32 or i64) rise from 0 to the rows. The checks every kernel taking such
// offsets shares (nn.varlen_attention, sequence_positions).
#ifndef DYNVM_KERNELS_NN_PACKED_SEQUENCES_H_
#define DYNVM_KERNELS_NN_PACKED_SEQUENCES_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::nn {

// InvalidArgument "`op`: offsets ..." unless `offsets` is an i32 or i64 tensor of rank 1
// with at least one element (its values are checked by CheckOffsetValues).
absl::Status CheckOffsetsTensor(std::string_view op, const NDArrayObj& offsets);

// offsets[i] of a tensor CheckOffsetsTensor accepted.
int64_t OffsetAt(const NDArrayObj& offsets, int64_t i);

// InvalidArgument naming the first offset that breaks the rule unless the offsets rise
// from 0 to `rows` (equal neighbours, empty sequences, allowed).
absl::Status CheckOffsetValues(std::string_view op, const NDArrayObj& offsets, int64_t rows);

}  // namespace dynvm::kernels::nn

#endif  // DYNVM_KERNELS_NN_PACKED_SEQUENCES_H_
