// The converters of ONNX's text operators: StringNormalizer (opset 10) to
// text.string_normalizer and TfIdfVectorizer (opset 9) to text.tfidf_vectorizer, whose
// kernels (kernels/data_movement/text.cc) behave as ONNX Runtime's. Lists of strings
// (stopwords, pool_strings) become string attributes in the encoding of
// kernels/data_movement/text.h.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "kernels/data_movement/text.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// Whether case mapping in `locale` is ASCII's, the only one the kernel does: no locale
// (the default), C/POSIX, or an English one (en, en_US, en-GB, en_US.UTF-8...).
bool IsAsciiCaseLocale(std::string_view locale) {
  if (locale.empty() || locale == "C" || locale == "POSIX") return true;
  return locale == "en" || locale.starts_with("en_") || locale.starts_with("en-") || locale.starts_with("en.");
}

absl::StatusOr<Values> ConvertStringNormalizer(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const std::string locale, ctx.String("locale", ""));
  if (!IsAsciiCaseLocale(locale)) {
    return ctx.Unimplemented(absl::StrFormat(
        "locale '%s': only English and C locales (ASCII case mapping) are supported", locale));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string action, ctx.String("case_change_action", "NONE"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t case_sensitive, ctx.Int("is_case_sensitive", 0));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<std::string> stopwords,
                         ctx.Strings("stopwords", std::vector<std::string>{}));
  return One(ctx.Call("text.string_normalizer", {std::move(x)},
                      {{"case_change_action", action},
                       {"is_case_sensitive", case_sensitive},
                       {"stopwords", kernels::EncodeStringList(stopwords)}}));
}

// Only the pool given is passed: the kernel takes strings or integers by which it has.
absl::StatusOr<Values> ConvertTfIdfVectorizer(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
  kernels::Attrs attrs;
  DYNVM_ASSIGN_OR_RETURN(attrs["mode"], ctx.String("mode"));
  for (const char* name : {"min_gram_length", "max_gram_length", "max_skip_count"}) {
    DYNVM_ASSIGN_OR_RETURN(attrs[name], ctx.Int(name));
  }
  for (const char* name : {"ngram_counts", "ngram_indexes"}) {
    DYNVM_ASSIGN_OR_RETURN(attrs[name], ctx.Ints(name));
  }
  if (ctx.HasAttr("pool_int64s")) {
    DYNVM_ASSIGN_OR_RETURN(attrs["pool_int64s"], ctx.Ints("pool_int64s"));
  }
  if (ctx.HasAttr("pool_strings")) {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<std::string> pool, ctx.Strings("pool_strings"));
    attrs["pool_strings"] = kernels::EncodeStringList(pool);
  }
  if (ctx.HasAttr("weights")) {
    DYNVM_ASSIGN_OR_RETURN(attrs["weights"], ctx.Floats("weights"));
  }
  return One(ctx.Call("text.tfidf_vectorizer", {std::move(x)}, std::move(attrs)));
}

}  // namespace

void AddTextConverters(ConverterTable& table) {
  table.insert({
      {"StringNormalizer",
       {ConvertStringNormalizer, {"case_change_action", "is_case_sensitive", "locale", "stopwords"}}},
      {"TfIdfVectorizer",
       {ConvertTfIdfVectorizer,
        {"max_gram_length", "max_skip_count", "min_gram_length", "mode", "ngram_counts", "ngram_indexes",
         "pool_int64s", "pool_strings", "weights"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
