// The packed entry of an encoder: from @main over [batch, seq] token inputs with an
// attention mask (BERT as ONNX exporters write it), @main_packed over the tokens of all
// sequences packed one after another, without padding:
//
//   @main(%input_ids: [batch, seq], %attention_mask: [batch, seq], %token_type_ids: [batch, seq])
//   @main_packed(%input_ids: [tokens], %token_type_ids: [tokens], %offsets: [sequences + 1])
//
// Sequence s is tokens [offsets[s], offsets[s + 1]); the attention mask is gone (every
// packed token is real). Every token-wise operation (embedding lookups, dense layers,
// layer norm, GELU, residual adds, reshapes of the heads) runs over the packed rows,
// nn.attention becomes nn.varlen_attention (each sequence attends to itself, no mask,
// no padded scores), position ids restart per sequence (sequence_positions), and a
// pooler's read of each sequence's first token reads its packed row (sequence_rows).
// Results over [batch, seq, ...] come back packed ([tokens, ...]), those over [batch,
// ...] per sequence ([sequences, ...]).
//
// The function is derived only when every value that depends on the inputs has one of
// these forms; otherwise the module is returned unchanged and the outcome says which
// operator of @main has no packed form and why. The attention mask must reach
// nn.attention only, through operators that give every key the same additive value
// when the mask is all ones (checked by folding the mask's computation at ones).
#ifndef DYNVM_COMPILER_PASSES_PACK_TOKENS_H_
#define DYNVM_COMPILER_PASSES_PACK_TOKENS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler {

inline constexpr std::string_view kPackedEntryName = "main_packed";

// What DerivePackedEntry did: derived @main_packed, or why not.
struct PackedEntryOutcome {
  bool derived = false;
  std::string detail;  // derived: the attention layers packed; otherwise the reason
};

// The module with @main_packed added (typed), or unchanged when @main has no packed
// form. Errors only for a module that is not typed.
absl::StatusOr<Module> DerivePackedEntry(const Module& module, PackedEntryOutcome* outcome = nullptr);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_PASSES_PACK_TOKENS_H_
