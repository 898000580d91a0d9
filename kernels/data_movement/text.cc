// The text kernels: text.string_normalizer (ONNX StringNormalizer) and
// text.tfidf_vectorizer (ONNX TfIdfVectorizer). Both behave as ONNX Runtime's CPU
// kernels do, whose outputs are ONNX's conformance data. Their lists of strings arrive
// as string attributes in the encoding of text.h.
//
// text.string_normalizer(X [C] or [1, C] string) -> Y [C'] or [1, C'] string
//   Drops the elements of X that are `stopwords` (byte for byte with is_case_sensitive,
//   else ignoring ASCII case), then maps the others to lower or upper case
//   (case_change_action LOWER, UPPER or NONE). Case mapping is ASCII only: other bytes,
//   such as the UTF-8 of non-ASCII letters, stay as they are. C' is the number kept, or 1
//   when none is: Y then holds one "" (ONNX's rule). C' depends on the values, so the
//   shape function finds the stopwords too.
//
// text.tfidf_vectorizer(X [C] or [B, C] (i32, i64; string with pool_strings))
//     -> Y [M] or [B, M] f32, M = max(ngram_indexes) + 1
//   The pool (pool_int64s or pool_strings) holds the 1-grams, then the 2-grams... from
//   the offsets ngram_counts; its n-gram i counts at coordinate ngram_indexes[i]. Only the
//   n-grams of min_gram_length to max_gram_length items are looked for. In each row,
//   for each skip distance d from 1 to max_skip_count + 1 and each start, the items
//   start, start + d, start + 2d... are n-grams of growing size, each counted if the
//   pool has it; unigrams count at distance 1 only. Mode TF gives the counts, IDF
//   weights[m] where a count is positive (else 0), TFIDF count * weights[m]; without
//   weights, every weight is 1. As in ONNX Runtime, weights are taken by output
//   coordinate m, not by n-gram.
//
// The pool is a trie, so that a start's walk stops at the first item no pooled n-gram
// continues with. Rows run in parallel.
#include "kernels/data_movement/text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/internal/checks.h"
#include "objects/string_tensor.h"

namespace dynvm::kernels {
namespace {

constexpr std::string_view kNormalizer = "text.string_normalizer";
constexpr std::string_view kTfIdf = "text.tfidf_vectorizer";

absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// The strings of the string-list attribute `name` of `op` (text.h's encoding); none when
// it is absent.
absl::StatusOr<std::vector<std::string>> GetStringListAttr(const Attrs& attrs, std::string_view op,
                                                           std::string_view name) {
  DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, name, ""));
  std::vector<std::string> strings;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t colon = std::min(rest.find(':'), rest.size());
    uint64_t length = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + colon, length);
    if (colon == 0 || colon == rest.size() || ec != std::errc() || end != rest.data() + colon ||
        length > rest.size() - colon - 1) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: attribute '%s' is not a list of strings (length:bytes...): bad entry at byte %d", op, name,
          text.size() - rest.size()));
    }
    strings.emplace_back(rest.substr(colon + 1, length));
    rest.remove_prefix(colon + 1 + length);
  }
  return strings;
}

// ---------------------------------------------------------------------------------------
// text.string_normalizer

enum class CaseChange { kNone, kLower, kUpper };

struct NormalizerState {
  CaseChange case_change = CaseChange::kNone;
  bool case_sensitive = false;
  // ASCII-lowercased unless case_sensitive.
  absl::flat_hash_set<std::string> stopwords;

  bool IsStopword(std::string_view s) const {
    if (stopwords.empty()) return false;
    if (case_sensitive) return stopwords.contains(AbslView(s));
    return stopwords.contains(absl::AsciiStrToLower(AbslView(s)));
  }
};

absl::StatusOr<std::shared_ptr<const void>> BindNormalizer(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"case_change_action", "is_case_sensitive", "stopwords"}));
  auto s = std::make_shared<NormalizerState>();
  DYNVM_ASSIGN_OR_RETURN(const std::string action, GetStringAttr(attrs, "case_change_action", "NONE"));
  if (action == "LOWER") {
    s->case_change = CaseChange::kLower;
  } else if (action == "UPPER") {
    s->case_change = CaseChange::kUpper;
  } else if (action != "NONE") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: case_change_action '%s': expected LOWER, UPPER or NONE", kNormalizer, action));
  }
  DYNVM_ASSIGN_OR_RETURN(s->case_sensitive, GetBoolAttr(attrs, "is_case_sensitive", false));
  DYNVM_ASSIGN_OR_RETURN(std::vector<std::string> words, GetStringListAttr(attrs, kNormalizer, "stopwords"));
  for (std::string& word : words) {
    if (!s->case_sensitive) absl::AsciiStrToLower(&word);
    s->stopwords.insert(std::move(word));
  }
  return std::shared_ptr<const void>(std::move(s));
}

// The elements of `x` that are not stopwords, in order; InvalidArgument unless `x` is a
// string tensor [C] or [1, C].
absl::StatusOr<std::vector<std::string_view>> KeptElements(const NormalizerState& s, const NDArrayObj& x) {
  DYNVM_RETURN_IF_ERROR(internal::CheckDType(kNormalizer, "X", x, DType::kString));
  if (x.ndim() != 1 && !(x.ndim() == 2 && x.shape()[0] == 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: X %s must be [C] or [1, C]", kNormalizer, ShapeToString(x.shape())));
  }
  std::vector<std::string_view> kept;
  for (int64_t i = 0; i < x.num_elements(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(const std::string_view e, StringElement(x, i));
    if (!s.IsStopword(e)) kept.push_back(e);
  }
  return kept;
}

// X's shape with the last extent the number kept, at least 1.
Shape NormalizerShapeOf(const NDArrayObj& x, size_t kept) {
  Shape shape = x.shape();
  shape.back() = std::max<int64_t>(static_cast<int64_t>(kept), 1);
  return shape;
}

absl::Status NormalizerShapeFn(const ShapeCall& call) {
  const auto& s = *static_cast<const NormalizerState*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const std::vector<std::string_view> kept, KeptElements(s, *call.inputs[0]));
  call.output_shapes[0] = NormalizerShapeOf(*call.inputs[0], kept.size());
  return absl::OkStatus();
}

absl::Status NormalizerKernel(const KernelCall& call) {
  const auto& s = *static_cast<const NormalizerState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.args[1];
  DYNVM_ASSIGN_OR_RETURN(const std::vector<std::string_view> kept, KeptElements(s, x));
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kNormalizer, y, DType::kString, NormalizerShapeOf(x, kept.size())));
  if (kept.empty()) SetStringElement(y, 0, "");
  std::string mapped;
  for (size_t i = 0; i < kept.size(); ++i) {
    mapped.assign(kept[i]);
    if (s.case_change == CaseChange::kLower) absl::AsciiStrToLower(&mapped);
    if (s.case_change == CaseChange::kUpper) absl::AsciiStrToUpper(&mapped);
    SetStringElement(y, static_cast<int64_t>(i), mapped);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// text.tfidf_vectorizer

// The n-grams of a pool as a trie over their items: a node's children by the next item,
// and on the node an n-gram ends at, its number in the pool.
template <typename K>
class NgramTrie {
 public:
  static constexpr int64_t kRoot = 0;

  // The child of `node` for `item`, or -1.
  template <typename Item>
  int64_t Child(int64_t node, const Item& item) const {
    const auto& children = nodes_[node].children;
    const auto it = children.find(item);
    return it == children.end() ? -1 : it->second;
  }
  // 1 + the pool number of the n-gram that ends at `node`; 0 if none does.
  int64_t Id(int64_t node) const { return nodes_[node].id; }
  // Adds the n-gram `items` under `id` (>= 1); false if the trie already has it.
  bool Add(absl::Span<const K> items, int64_t id) {
    int64_t node = kRoot;
    for (const K& item : items) {
      const int64_t next = static_cast<int64_t>(nodes_.size());
      const auto [it, inserted] = nodes_[node].children.try_emplace(item, next);
      node = it->second;
      if (inserted) nodes_.emplace_back();
    }
    if (nodes_[node].id != 0) return false;
    nodes_[node].id = id;
    return true;
  }

 private:
  struct Node {
    absl::flat_hash_map<K, int64_t> children;
    int64_t id = 0;
  };
  std::vector<Node> nodes_ = std::vector<Node>(1);
};

enum class Weighting { kTf, kIdf, kTfIdf };

struct TfIdfState {
  Weighting weighting = Weighting::kTf;
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  std::vector<int64_t> ngram_indexes;  // the output coordinate of each pool n-gram
  std::vector<float> weights;          // by output coordinate; empty: all 1
  int64_t output_size = 0;             // 1 + max(ngram_indexes)
  bool strings = false;                // the pool, and X, are strings
  NgramTrie<int64_t> int_pool;
  NgramTrie<std::string> string_pool;
};

// Loads into `trie` the n-grams of `pool` whose size is in [min_gram, max_gram], numbered
// as ONNX Runtime numbers them: in pool order from 1, the n-grams of other sizes taking
// numbers too. The n-grams of size n are items [ngram_counts[n - 1], ngram_counts[n]).
template <typename K>
absl::Status LoadPool(const std::vector<K>& pool, const std::vector<int64_t>& ngram_counts, TfIdfState& s,
                      NgramTrie<K>& trie) {
  const int64_t items = static_cast<int64_t>(pool.size());
  const int64_t levels = static_cast<int64_t>(ngram_counts.size());
  const auto level_end = [&](int64_t n) { return n < levels ? ngram_counts[n] : items; };
  int64_t total = 0;
  for (int64_t n = 1; n <= levels; ++n) {
    const int64_t begin = ngram_counts[n - 1], end = level_end(n);
    if (begin < 0 || end < begin || end > items) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: ngram_counts [%s] do not split the pool of %d items: the %d-grams would be items [%d, %d)", kTfIdf,
          absl::StrJoin(ngram_counts, ", "), items, n, begin, end));
    }
    if ((end - begin) % n != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the pool's %d-grams are %d items (from item %d), not a whole number of %d-grams", kTfIdf, n,
          end - begin, begin, n));
    }
    total += (end - begin) / n;
  }
  if (total > static_cast<int64_t>(s.ngram_indexes.size())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the pool has %d n-grams but ngram_indexes only %d coordinates", kTfIdf, total,
        s.ngram_indexes.size()));
  }
  int64_t id = 1;
  for (int64_t n = 1; n <= levels; ++n) {
    const int64_t begin = ngram_counts[n - 1], ngrams = (level_end(n) - begin) / n;
    if (n < s.min_gram || n > s.max_gram) {
      id += ngrams;
      continue;
    }
    for (int64_t g = 0; g < ngrams; ++g, ++id) {
      if (!trie.Add(absl::MakeConstSpan(pool).subspan(begin + g * n, n), id)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s: the pool has the %d-gram at item %d twice", kTfIdf, n, begin + g * n));
      }
    }
  }
  return absl::OkStatus();
}

// The weights, which must be one per n-gram (ONNX) and cover every output coordinate
// (they are read by coordinate); none when absent or empty.
absl::Status BindWeights(const Attrs& attrs, TfIdfState& s) {
  const auto it = attrs.find("weights");
  if (it == attrs.end()) return absl::OkStatus();
  std::vector<double> weights;
  if (const auto* floats = std::get_if<std::vector<double>>(&it->second)) {
    weights = *floats;
  } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&it->second)) {
    weights.assign(ints->begin(), ints->end());
  } else {
    return absl::InvalidArgumentError(absl::StrFormat("%s: attribute 'weights' must be a list of floats", kTfIdf));
  }
  if (weights.empty()) return absl::OkStatus();
  if (weights.size() != s.ngram_indexes.size() || static_cast<int64_t>(weights.size()) < s.output_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d weights for %d ngram_indexes up to coordinate %d: expected one per n-gram, and one for every "
        "output coordinate (they apply by coordinate)",
        kTfIdf, weights.size(), s.ngram_indexes.size(), s.output_size - 1));
  }
  s.weights.assign(weights.begin(), weights.end());
  return absl::OkStatus();
}

absl::Status BindPool(const Attrs& attrs, TfIdfState& s) {
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> ngram_counts, GetIntsAttr(attrs, "ngram_counts"));
  const bool has_ints = attrs.contains("pool_int64s");
  s.strings = attrs.contains("pool_strings");
  if (has_ints == s.strings) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: expected exactly one of pool_int64s and pool_strings", kTfIdf));
  }
  if (s.strings) {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<std::string> pool, GetStringListAttr(attrs, kTfIdf, "pool_strings"));
    return LoadPool(pool, ngram_counts, s, s.string_pool);
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> pool, GetIntsAttr(attrs, "pool_int64s"));
  return LoadPool(pool, ngram_counts, s, s.int_pool);
}

absl::StatusOr<std::shared_ptr<const void>> BindTfIdf(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"mode", "min_gram_length", "max_gram_length", "max_skip_count",
                                                "ngram_counts", "ngram_indexes", "pool_int64s", "pool_strings",
                                                "weights"}));
  auto s = std::make_shared<TfIdfState>();
  DYNVM_ASSIGN_OR_RETURN(const std::string mode, GetStringAttr(attrs, "mode"));
  if (mode == "TF") {
    s->weighting = Weighting::kTf;
  } else if (mode == "IDF") {
    s->weighting = Weighting::kIdf;
  } else if (mode == "TFIDF") {
    s->weighting = Weighting::kTfIdf;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat("%s: mode '%s': expected TF, IDF or TFIDF", kTfIdf, mode));
  }
  DYNVM_ASSIGN_OR_RETURN(s->min_gram, GetIntAttr(attrs, "min_gram_length"));
  DYNVM_ASSIGN_OR_RETURN(s->max_gram, GetIntAttr(attrs, "max_gram_length"));
  DYNVM_ASSIGN_OR_RETURN(s->max_skip, GetIntAttr(attrs, "max_skip_count"));
  if (s->min_gram < 1 || s->max_gram < s->min_gram || s->max_skip < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: min_gram_length %d, max_gram_length %d, max_skip_count %d: expected 1 <= min_gram_length <= "
        "max_gram_length and max_skip_count >= 0",
        kTfIdf, s->min_gram, s->max_gram, s->max_skip));
  }
  DYNVM_ASSIGN_OR_RETURN(s->ngram_indexes, GetIntsAttr(attrs, "ngram_indexes"));
  if (s->ngram_indexes.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: ngram_indexes is empty", kTfIdf));
  }
  for (size_t i = 0; i < s->ngram_indexes.size(); ++i) {
    const int64_t m = s->ngram_indexes[i];
    if (m < 0 || m == std::numeric_limits<int64_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: ngram_indexes[%d] is %d: expected an output coordinate >= 0", kTfIdf, i, m));
    }
    s->output_size = std::max(s->output_size, m + 1);
  }
  DYNVM_RETURN_IF_ERROR(BindWeights(attrs, *s));
  DYNVM_RETURN_IF_ERROR(BindPool(attrs, *s));
  return std::shared_ptr<const void>(std::move(s));
}

absl::StatusOr<Shape> TfIdfShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  const auto& s = *static_cast<const TfIdfState*>(state);
  const NDArrayObj& x = *inputs[0];
  if (s.strings) {
    DYNVM_RETURN_IF_ERROR(internal::CheckDType(kTfIdf, "X", x, DType::kString));
  } else if (x.dtype() != DType::kI32 && x.dtype() != DType::kI64) {
    return internal::UnsupportedDType(kTfIdf, "X", x.dtype(), "int32 or int64 (the pool holds integers)");
  }
  if (x.ndim() != 1 && x.ndim() != 2) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: X %s must be [C] or [B, C]", kTfIdf, ShapeToString(x.shape())));
  }
  Shape shape = x.ndim() == 1 ? Shape{s.output_size} : Shape{x.shape()[0], s.output_size};
  DYNVM_RETURN_IF_ERROR(internal::ValidateShape(kTfIdf, shape));
  return shape;
}

// Adds to `counts` (by output coordinate) the pool's n-grams among the `c` items of `x`,
// ONNX Runtime's walk step for step.
template <typename K, typename T>
void CountNgrams(const TfIdfState& s, const NgramTrie<K>& pool, const T* x, int64_t c, int64_t* counts) {
  int64_t first_size = s.min_gram;  // the smallest n-gram counted at this distance
  // A distance of C or more reaches no second item.
  const int64_t max_distance = std::min(s.max_skip, std::max<int64_t>(c - 1, 0)) + 1;
  for (int64_t distance = 1; distance <= max_distance; ++distance) {
    for (int64_t start = 0; start < c; ++start) {
      // No n-gram of first_size items fits from here (start + distance * (first_size - 1)
      // >= C), nor from a later start.
      if (first_size > 1 && distance > (c - 1 - start) / (first_size - 1)) break;
      int64_t node = NgramTrie<K>::kRoot;
      for (int64_t n = 1, item = start; n <= s.max_gram && item < c; ++n, item += distance) {
        node = pool.Child(node, x[item]);
        if (node < 0) break;
        const int64_t id = pool.Id(node);
        if (n >= first_size && id != 0) ++counts[s.ngram_indexes[id - 1]];
      }
    }
    // Unigrams count once: the distance does not change them.
    if (first_size == 1 && ++first_size > s.max_gram) break;
  }
}

// One output row from its n-gram counts.
void Weigh(const TfIdfState& s, const int64_t* counts, float* y) {
  for (int64_t m = 0; m < s.output_size; ++m) {
    const float w = s.weights.empty() ? 1.0f : s.weights[m];
    switch (s.weighting) {
      case Weighting::kTf: y[m] = static_cast<float>(counts[m]); break;
      case Weighting::kIdf: y[m] = counts[m] > 0 ? w : 0.0f; break;
      case Weighting::kTfIdf: y[m] = static_cast<float>(counts[m]) * w; break;
    }
  }
}

// The `rows` rows of `c` items of `x` into the rows of `y`, in parallel.
template <typename K, typename T>
void VectorizeRows(const TfIdfState& s, const NgramTrie<K>& pool, const T* x, int64_t rows, int64_t c, float* y,
                   ThreadPool& threads) {
  const int64_t row_bytes = c * static_cast<int64_t>(sizeof(T)) + s.output_size * 12;
  threads.ParallelFor(rows, internal::GrainForBytes(row_bytes), [&](int64_t begin, int64_t end) {
    std::vector<int64_t> counts(s.output_size);
    for (int64_t r = begin; r < end; ++r) {
      std::fill(counts.begin(), counts.end(), 0);
      CountNgrams(s, pool, x + r * c, c, counts.data());
      Weigh(s, counts.data(), y + r * s.output_size);
    }
  });
}

absl::Status TfIdfKernel(const KernelCall& call) {
  const auto& s = *static_cast<const TfIdfState*>(call.state);
  const NDArrayObj& x = *call.args[0];
  const NDArrayObj& y = *call.args[1];
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, TfIdfShape(call.state, {call.args, 1}));
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kTfIdf, y, DType::kF32, shape));
  const int64_t rows = x.ndim() == 1 ? 1 : x.shape()[0];
  const int64_t c = x.shape().back();
  float* out = y.data_as<float>();
  if (s.strings) {
    std::vector<absl::string_view> items(static_cast<size_t>(x.num_elements()));
    for (int64_t i = 0; i < x.num_elements(); ++i) {
      DYNVM_ASSIGN_OR_RETURN(const std::string_view e, StringElement(x, i));
      items[i] = AbslView(e);
    }
    VectorizeRows(s, s.string_pool, items.data(), rows, c, out, *call.pool);
  } else if (x.dtype() == DType::kI32) {
    VectorizeRows(s, s.int_pool, x.data_as<int32_t>(), rows, c, out, *call.pool);
  } else {
    VectorizeRows(s, s.int_pool, x.data_as<int64_t>(), rows, c, out, *call.pool);
  }
  return absl::OkStatus();
}

}  // namespace

std::string EncodeStringList(absl::Span<const std::string> strings) {
  std::string text;
  for (const std::string& s : strings) absl::StrAppend(&text, s.size(), ":", s);
  return text;
}

absl::Status RegisterTextKernels(KernelRegistry& registry) {
  const KernelDef defs[] = {
      {.name = std::string(kNormalizer),
       .num_inputs = 1,
       .num_outputs = 1,
       .fn = NormalizerKernel,
       .bind = BindNormalizer,
       .shape_fn = NormalizerShapeFn,
       .takes_strings = true},
      {.name = std::string(kTfIdf),
       .num_inputs = 1,
       .num_outputs = 1,
       .fn = TfIdfKernel,
       .bind = BindTfIdf,
       .shape_fn = internal::SingleShapeFn<TfIdfShape>,
       .takes_strings = true},
  };
  for (const KernelDef& def : defs) DYNVM_RETURN_IF_ERROR(registry.Register(def));
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
