// Relations of the text operators (kernels/data_movement/text.cc):
// text.string_normalizer, whose length only the values tell when there are stopwords,
// and text.tfidf_vectorizer. Attributes are checked by binding the kernel
// (CheckKernelAttrs).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"
#include "kernels/kernel.h"

namespace dynvm::compiler::internal {
namespace {

// X [C] or [1, C] string -> [C'] or [1, C']: C' is max(C, 1) without stopwords (an
// empty X gives one ""), else only the values tell.
absl::StatusOr<Type> StringNormalizerRel(const OpCall& call) {
  static constexpr DType kString[] = {DType::kString};
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "X", kString));
  if (x.rank() != 1 && !(x.rank() == 2 && MayEqual(x.shape()[0], 1))) {
    return OpError(call, absl::StrFormat("X %s must be [C] or [1, C]", ShapeText(x.shape())));
  }
  const bool stopwords = !kernels::GetStringAttr(call.attrs, "stopwords", "").value_or("").empty();
  std::vector<Dim> shape = x.shape();
  if (x.rank() == 2) shape[0] = 1;
  shape.back() = stopwords ? Dim::Any() : Max(shape.back(), 1);
  return Type::Tensor(DType::kString, std::move(shape));
}

// X [C] or [B, C] (i32 or i64; string with pool_strings) -> [M] or [B, M] f32,
// M = max(ngram_indexes) + 1.
absl::StatusOr<Type> TfIdfVectorizerRel(const OpCall& call) {
  static constexpr DType kInts[] = {DType::kI32, DType::kI64};
  static constexpr DType kString[] = {DType::kString};
  DYNVM_RETURN_IF_ERROR(CheckKernelAttrs(call));
  const bool strings = HasAttr(call, "pool_strings");
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "X", strings ? absl::Span<const DType>(kString) : kInts));
  if (x.rank() != 1 && x.rank() != 2) {
    return OpError(call, absl::StrFormat("X %s must be [C] or [B, C]", ShapeText(x.shape())));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> indexes, IntsAttr(call, "ngram_indexes", {}));
  const Dim m = *std::max_element(indexes.begin(), indexes.end()) + 1;  // binding ensured one
  if (x.rank() == 1) return Type::Tensor(DType::kF32, {m});
  return Type::Tensor(DType::kF32, {x.shape()[0], m});
}

constexpr OpDef kOps[] = {
    {"text.string_normalizer", 1, 1, StringNormalizerRel},
    {"text.tfidf_vectorizer", 1, 1, TfIdfVectorizerRel},
};

}  // namespace

absl::Span<const OpDef> TextOps() { return kOps; }

}  // namespace dynvm::compiler::internal
