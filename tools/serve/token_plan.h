// How requests of an encoder run together without padding: on the function's packed
// entry (`F_packed` beside `F`, as vm_compile derives `main_packed` from `main`,
// docs/compiler.md), the tokens of all their sequences one after another.
//
// [RULE packed] The plan is on when the executable has `F_packed` and its signature fits
// `F`'s: every parameter of `F` is [batch, seq] (one batch and one seq symbol);
// every parameter of `F_packed` but the last is one of `F`'s by name and dtype, over
// [tokens]; its last is the offsets [sequences + 1]; the parameters of `F` it lacks are
// attention masks. Each output of `F` is [batch, seq, ...] (the packed one [tokens,
// ...]) or [batch, ...] (the packed one [sequences, ...]).
//
// [RULE real] A request can be packed when all its tokens are real: every attention
// mask all ones, and at least one token. Its `batch` rows are `batch` sequences of
// `seq` tokens. Other requests run as before (padded batching or alone).
//
// A batch's outputs are cut back per request: its rows of token outputs reshaped to
// [batch, seq, ...], its sequences' rows of the others to [batch, ...] — the values the
// request's own run of `F` gives, to float rounding (the packed entry's tests).
//
//   TokenPlan plan = TokenPlan::Create(*exe, function_index);
//   if (plan.Tokens(args) > 0) ...                     // packable, and its tokens
//   std::vector<Value> packed = *plan.Merge({&a, &b}, allocator);
//   Value out = *vm.Invoke(plan.packed_index(), packed);
//   std::vector<std::vector<Value>> parts = *plan.Split(FlattenValue(out), {&a, &b}, allocator);
#ifndef DYNVM_TOOLS_SERVE_TOKEN_PLAN_H_
#define DYNVM_TOOLS_SERVE_TOKEN_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/value.h"
#include "vm/executable.h"

namespace dynvm::tools::serve {

class TokenPlan {
 public:
  // The plan for function `function_index` of `executable`: off (description() says
  // why) unless RULE packed holds.
  static TokenPlan Create(const vm::Executable& executable, uint32_t function_index);

  bool enabled() const { return enabled_; }
  // Why the plan is off, or what it packs.
  const std::string& description() const { return description_; }
  // The packed entry's index in the executable.
  uint32_t packed_index() const { return packed_index_; }

  // The real tokens of a request (arguments checked against F's signature): batch x
  // seq when RULE real holds, else 0.
  int64_t Tokens(absl::Span<const Value> args) const;

  // The packed entry's arguments for `requests` (each with Tokens() > 0), tensors from
  // `allocator`.
  absl::StatusOr<std::vector<Value>> Merge(absl::Span<const std::vector<Value>* const> requests,
                                           const std::shared_ptr<Allocator>& allocator) const;
  // Each request's outputs out of `outputs`, the flattened result of the packed entry
  // on Merge's arguments. InvalidArgument if an output does not have the rows Merge
  // implies.
  absl::StatusOr<std::vector<std::vector<Value>>> Split(
      absl::Span<const Value> outputs, absl::Span<const std::vector<Value>* const> requests,
      const std::shared_ptr<Allocator>& allocator) const;

 private:
  TokenPlan() = default;

  bool enabled_ = false;
  std::string description_;
  uint32_t packed_index_ = 0;
  // Per parameter of the packed entry but the offsets: the index of F's parameter.
  std::vector<size_t> packed_sources_;
  // F's parameters the packed entry lacks: the attention masks.
  std::vector<size_t> masks_;
  // Per flattened output: true when its rows are tokens, false when sequences.
  std::vector<bool> token_outputs_;
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_TOKEN_PLAN_H_
