// Which requests of a function can run as one batch, and how: concatenating their
// inputs along axis 0, padding variable-length axes, and cutting the outputs back.
//
// [RULE batch] Batching needs every parameter to be a tensor whose axis 0 is the same
// symbol (the batch dim, `batch` in `input_ids: i64[batch, seq]`) which occurs nowhere
// else in the parameters, and every output to be a tensor with that symbol on axis 0
// and nowhere else. Requests then share a batch when all their other axes agree;
// their rows are concatenated in arrival order and each request gets its rows of
// every output back.
//
// [RULE pad] A pad rule `INPUT:AXIS:VALUE` lets axis AXIS of INPUT differ between the
// requests of a batch: it is padded with VALUE up to the longest. The axis must be a
// named symbol other than the batch dim, and every parameter axis with that symbol
// needs a rule too (padding one of them alone would break the signature). Output axes
// with a padded symbol are cut back to each request's own extent; an output axis that
// is `?` cannot be cut, so a plan with pad rules refuses such outputs. Padding is
// exact only when the model ignores padded positions (BERT with an attention mask
// padded with 0).
//
// [RULE empty] A request with a zero-element input (zero rows, or a zero extent on any
// axis) never shares a batch: it runs alone. Its shape may claim any extent on its
// other axes (`[0, 2^62]` holds no element), which padding would make real.
//
// [RULE budget] A request joins a batch only if the batch's merged inputs, padding
// included, then hold at most twice the elements of its members' own inputs (summed
// over every input): one long request cannot pad many short ones to its length. Merge
// checks the same bound, overflow-safe, before it allocates anything.
//
//   BatchPlan plan = *BatchPlan::Create(function, {*ParsePadRule("input_ids:1:0"), ...});
//   if (plan.Compatible(a, b)) ...
//   std::vector<Value> merged = *plan.Merge({&a, &b}, allocator);
//   std::vector<std::vector<Value>> parts = *plan.Split(outputs, {&a, &b}, allocator);
#ifndef DYNVM_TOOLS_SERVE_BATCH_PLAN_H_
#define DYNVM_TOOLS_SERVE_BATCH_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/value.h"
#include "vm/executable.h"

namespace dynvm::tools::serve {

// One --pad flag: pad axis `axis` of input `input` with `value` (text, read in the
// input's dtype).
struct PadRule {
  std::string input;
  int axis = 0;
  std::string value;
};

// Parses "INPUT:AXIS:VALUE" (the input name may itself contain ':'; the last two
// fields are the axis and the value). InvalidArgument on a bad form.
absl::StatusOr<PadRule> ParsePadRule(std::string_view text);

class BatchPlan {
 public:
  // The plan for `function` with `pads`. When RULE batch does not hold, the plan is
  // disabled (every request runs alone) and reason() says why; pad rules given then
  // are an error, as are rules that break RULE pad or whose value does not fit the
  // input's dtype (InvalidArgument).
  static absl::StatusOr<BatchPlan> Create(const vm::Function& function,
                                          absl::Span<const PadRule> pads);

  bool enabled() const { return enabled_; }
  // Why batching is off, or a summary of what it does when on.
  const std::string& description() const { return description_; }

  // The extent of axis 0 of `args` (arguments checked against the signature).
  int64_t Rows(absl::Span<const Value> args) const;
  // Whether `a` and `b` (checked arguments) may share a batch: batching is on, neither
  // has a zero-element input (RULE empty), and their unpadded axes agree.
  bool Compatible(absl::Span<const Value> a, absl::Span<const Value> b) const;
  // RULE budget: whether `candidate` may join `batch` (non-empty, each pairwise
  // Compatible with `candidate`).
  bool WithinPaddingBudget(absl::Span<const std::vector<Value>* const> batch,
                           absl::Span<const Value> candidate) const;

  // The arguments of one run over all of `requests` (pairwise Compatible): each input
  // concatenated along axis 0 and padded on padded axes to the longest. Tensors from
  // `allocator`. ResourceExhausted, before allocating, when the merged inputs' bytes
  // overflow or exceed twice the requests' own (RULE budget).
  absl::StatusOr<std::vector<Value>> Merge(absl::Span<const std::vector<Value>* const> requests,
                                           const std::shared_ptr<Allocator>& allocator) const;
  // Each request's outputs out of `outputs`, the flattened result of running Merge's
  // arguments: its rows along axis 0 and, on axes of a padded symbol, its own extent.
  // InvalidArgument if an output is not a tensor with the batch's rows on axis 0.
  absl::StatusOr<std::vector<std::vector<Value>>> Split(
      absl::Span<const Value> outputs, absl::Span<const std::vector<Value>* const> requests,
      const std::shared_ptr<Allocator>& allocator) const;

 private:
  BatchPlan() = default;

  // The extent of symbol `padded_[k]` in the request `args`.
  int64_t PaddedExtent(absl::Span<const Value> args, size_t k) const;
  // The shape of parameter `i` merged over `requests`.
  Shape MergedShape(absl::Span<const std::vector<Value>* const> requests, size_t i) const;
  // The elements (or, with `bytes`, the bytes) of the merged inputs of `requests` and
  // of the requests' own inputs; false when a count overflows int64.
  bool CountMerged(absl::Span<const std::vector<Value>* const> requests, bool bytes, int64_t& merged,
                   int64_t& own) const;

  bool enabled_ = false;
  std::string description_;
  const vm::Function* function_ = nullptr;  // outlives the plan (the executable's)
  // Per parameter: the one-element tensor padding it, or null when it is not padded.
  std::vector<NDArray> pad_elements_;
  // Per parameter and axis: the index into padded_ of the axis's symbol, or -1.
  std::vector<std::vector<int>> padded_axes_;
  // The padded symbols, and for each one parameter and axis where a request's extent
  // of it can be read.
  std::vector<std::string> padded_;
  std::vector<std::pair<size_t, size_t>> padded_source_;
  // Per flattened output: per axis the index into padded_, or -1.
  std::vector<std::vector<int>> output_padded_axes_;
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_BATCH_PLAN_H_
