// Packed sequences (kernels/nn/packed_sequences.h) and the kernels that index them:
//
//   sequence_positions(offsets [n + 1], tokens [T, ...]) -> [T] i64
//
// each row's position within its sequence (0, 1, ... from each offset on): the
// position ids of a packed encoder, which restart per sequence. `tokens` gives T (only
// its shape is read), so the output's shape is known without reading the offsets.
//
//   sequence_rows(offsets [n + 1], row=r) -> [n] i64
//
// the packed row of each sequence's row r (offsets[s] + r): a pooler's first token is
// row 0. A sequence with r rows or fewer is an error naming it, never a row of the next.
#include "kernels/nn/packed_sequences.h"

#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "kernels/nn/common.h"
#include "kernels/nn/nn.h"

namespace dynvm::kernels {
namespace nn {

absl::Status CheckOffsetsTensor(std::string_view op, const NDArrayObj& offsets) {
  DYNVM_RETURN_IF_ERROR(internal::CheckIndexDType(op, "offsets", offsets));
  if (offsets.ndim() != 1 || offsets.shape()[0] < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: offsets must have rank 1 [sequences + 1], got shape %s", op,
        ShapeToString(offsets.shape())));
  }
  return absl::OkStatus();
}

int64_t OffsetAt(const NDArrayObj& offsets, int64_t i) {
  return offsets.dtype() == DType::kI32 ? offsets.data_as<int32_t>()[i]
                                        : offsets.data_as<int64_t>()[i];
}

absl::Status CheckOffsetValues(std::string_view op, const NDArrayObj& offsets, int64_t rows) {
  if (OffsetAt(offsets, 0) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: offsets[0] is %d, expected 0", op, OffsetAt(offsets, 0)));
  }
  const int64_t sequences = offsets.shape()[0] - 1;
  for (int64_t s = 0; s < sequences; ++s) {
    const int64_t begin = OffsetAt(offsets, s), end = OffsetAt(offsets, s + 1);
    if (end < begin || end > rows) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: offsets[%d] is %d after %d: expected offsets rising to %d (the tokens)", op,
          s + 1, end, begin, rows));
    }
  }
  if (OffsetAt(offsets, sequences) != rows) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the last offset is %d, expected %d (the tokens)", op, OffsetAt(offsets, sequences),
        rows));
  }
  return absl::OkStatus();
}

}  // namespace nn

namespace {

constexpr std::string_view kPositionsOp = "sequence_positions";

absl::StatusOr<int64_t> CheckPositionsInputs(absl::Span<NDArrayObj* const> inputs) {
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetsTensor(kPositionsOp, *inputs[0]));
  if (inputs[1]->ndim() < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: tokens must have rank 1 or more [tokens, ...], got a scalar", kPositionsOp));
  }
  return inputs[1]->shape()[0];
}

absl::Status PositionsShapeFn(const ShapeCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t tokens, CheckPositionsInputs(call.input_span()));
  call.output_shapes[0] = {tokens};
  return absl::OkStatus();
}

absl::Status PositionsKernel(const KernelCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t tokens, CheckPositionsInputs(call.inputs()));
  const NDArrayObj& offsets = *call.args[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetValues(kPositionsOp, offsets, tokens));
  NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kPositionsOp, out, DType::kI64, {tokens}));
  int64_t* positions = out.data_as<int64_t>();
  for (int64_t s = 0; s + 1 < offsets.shape()[0]; ++s) {
    const int64_t begin = nn::OffsetAt(offsets, s), end = nn::OffsetAt(offsets, s + 1);
    for (int64_t t = begin; t < end; ++t) positions[t] = t - begin;
  }
  return absl::OkStatus();
}

constexpr std::string_view kRowsOp = "sequence_rows";

absl::StatusOr<std::shared_ptr<const void>> BindSequenceRows(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"row"}));
  DYNVM_ASSIGN_OR_RETURN(const int64_t row, GetIntAttr(attrs, "row", 0));
  if (row < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("attribute 'row' is %d: expected 0 or more", row));
  }
  return std::make_shared<const int64_t>(row);
}

absl::Status SequenceRowsShapeFn(const ShapeCall& call) {
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetsTensor(kRowsOp, *call.inputs[0]));
  call.output_shapes[0] = {call.inputs[0]->shape()[0] - 1};
  return absl::OkStatus();
}

absl::Status SequenceRowsKernel(const KernelCall& call) {
  const int64_t row = *static_cast<const int64_t*>(call.state);
  const NDArrayObj& offsets = *call.args[0];
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetsTensor(kRowsOp, offsets));
  const int64_t sequences = offsets.shape()[0] - 1;
  DYNVM_RETURN_IF_ERROR(nn::CheckOffsetValues(kRowsOp, offsets, nn::OffsetAt(offsets, sequences)));
  NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kRowsOp, out, DType::kI64, {sequences}));
  int64_t* rows = out.data_as<int64_t>();
  for (int64_t s = 0; s < sequences; ++s) {
    const int64_t begin = nn::OffsetAt(offsets, s), length = nn::OffsetAt(offsets, s + 1) - begin;
    if (row >= length) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: sequence %d has %d rows, but row %d of each is read", kRowsOp, s, length, row));
    }
    rows[s] = begin + row;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RegisterPackedSequenceKernels(KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(registry.Register(KernelDef{.name = std::string(kPositionsOp),
                                                    .num_inputs = 2,
                                                    .num_outputs = 1,
                                                    .fn = PositionsKernel,
                                                    .shape_fn = PositionsShapeFn}));
  return registry.Register(KernelDef{.name = std::string(kRowsOp),
                                     .num_inputs = 1,
                                     .num_outputs = 1,
                                     .fn = SequenceRowsKernel,
                                     .bind = BindSequenceRows,
                                     .shape_fn = SequenceRowsShapeFn});
}

}  // namespace dynvm::kernels
