// Tests of text.string_normalizer and text.tfidf_vectorizer
// (kernels/data_movement/text.cc): ONNX's conformance cases, then random inputs — empty
// rows and batches, and extents of 1, included — against plain references written here
// from the operators' definitions (the normalizer filters and maps each string; the
// vectorizer tries every pooled n-gram at every start and skip distance, where the kernel
// walks a trie), and the errors.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/data_movement/text.h"
#include "objects/string_tensor.h"
#include "tests/kernels/data_test_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {
namespace {

constexpr char kNormalizer[] = "text.string_normalizer";
constexpr char kTfIdf[] = "text.tfidf_vectorizer";

using Strings = std::vector<std::string>;

NDArray StringTensor(std::vector<int64_t> shape, const Strings& values) {
  return *MakeStringTensor(shape, values, MakeNaiveAllocator());
}

Strings ElementsOf(const NDArrayObj& t) {
  Strings out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(StringElement(t, i).value_or("<unreadable>"));
  return out;
}

// ---------------------------------------------------------------------------------------
// text.string_normalizer

struct Normalizer {
  std::string action = "NONE";
  bool case_sensitive = false;
  Strings stopwords = {};

  Attrs ToAttrs() const {
    return {{"case_change_action", action},
            {"is_case_sensitive", int64_t{case_sensitive}},
            {"stopwords", EncodeStringList(stopwords)}};
  }
};

absl::StatusOr<NDArray> Normalize(const Normalizer& n, const NDArray& x) {
  absl::StatusOr<std::vector<NDArray>> y = RunKernel(kNormalizer, n.ToAttrs(), {x}, {DType::kString});
  if (!y.ok()) return y.status();
  return (*y)[0];
}

// The plain reference: the elements that are no stopword, mapped; one "" when none is.
Strings ReferenceNormalize(const Normalizer& n, const Strings& x) {
  const auto lower = [](const std::string& s) { return absl::AsciiStrToLower(s); };
  Strings out;
  for (const std::string& e : x) {
    const bool stop = std::any_of(n.stopwords.begin(), n.stopwords.end(), [&](const std::string& w) {
      return n.case_sensitive ? w == e : lower(w) == lower(e);
    });
    if (stop) continue;
    out.push_back(n.action == "LOWER" ? lower(e) : n.action == "UPPER" ? absl::AsciiStrToUpper(e) : e);
  }
  if (out.empty()) out.emplace_back();
  return out;
}

TEST(StringNormalizerTest, OnnxCases) {
  const NDArray week = StringTensor({4}, {"monday", "tuesday", "wednesday", "thursday"});
  absl::StatusOr<NDArray> y = Normalize({.action = "UPPER", .case_sensitive = true, .stopwords = {"monday"}}, week);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeOf(*y), (std::vector<int64_t>{3}));
  EXPECT_EQ(ElementsOf(**y), (Strings{"TUESDAY", "WEDNESDAY", "THURSDAY"}));

  // Everything dropped: [1] holding "", [1, 1] for a [1, C] input.
  y = Normalize({.action = "UPPER", .case_sensitive = true, .stopwords = {"monday"}},
                StringTensor({2}, {"monday", "monday"}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeOf(*y), (std::vector<int64_t>{1}));
  EXPECT_EQ(ElementsOf(**y), (Strings{""}));
  y = Normalize({.stopwords = {"MONDAY"}}, StringTensor({1, 2}, {"Monday", "monday"}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeOf(*y), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(ElementsOf(**y), (Strings{""}));

  // Case-insensitive stopwords, two-dimensional.
  y = Normalize({.action = "UPPER", .stopwords = {"monday"}},
                StringTensor({1, 6}, {"Monday", "tuesday", "wednesday", "Monday", "tuesday", "wednesday"}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeOf(*y), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(ElementsOf(**y), (Strings{"TUESDAY", "WEDNESDAY", "TUESDAY", "WEDNESDAY"}));
}

TEST(StringNormalizerTest, AsciiCaseMappingKeepsOtherBytes) {
  absl::StatusOr<NDArray> y = Normalize({.action = "UPPER"}, StringTensor({2}, {"caf\xc3\xa9", "a:1"}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ElementsOf(**y), (Strings{"CAF\xc3\xa9", "A:1"}));
  // Stopwords of any bytes survive the attribute's encoding: ':' and digits, "" and NUL.
  y = Normalize({.case_sensitive = true, .stopwords = {"3:a", "", std::string("x\0y", 3)}},
                StringTensor({5}, {"3:a", "", "3:A", std::string("x\0y", 3), "x"}));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ElementsOf(**y), (Strings{"3:A", "x"}));
}

TEST(StringNormalizerTest, RandomAgainstReference) {
  std::mt19937 rng(7);
  const Strings words = {"Monday", "monday", "MONDAY", "tuesday", "", "a", "A", "x y"};
  const char* const actions[] = {"NONE", "LOWER", "UPPER"};
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t c = std::uniform_int_distribution<int64_t>(0, 6)(rng);
    const bool two_d = rng() % 2 == 0;
    Strings x;
    for (int64_t i = 0; i < c; ++i) x.push_back(words[rng() % words.size()]);
    Normalizer n{.action = actions[rng() % 3], .case_sensitive = rng() % 2 == 0};
    for (int64_t i = 0, k = rng() % 3; i < k; ++i) n.stopwords.push_back(words[rng() % words.size()]);
    SCOPED_TRACE(absl::StrCat("C=", c, " two_d=", two_d, " action=", n.action, " sensitive=", n.case_sensitive));
    const std::vector<int64_t> shape = two_d ? std::vector<int64_t>{1, c} : std::vector<int64_t>{c};
    absl::StatusOr<NDArray> y = Normalize(n, StringTensor(shape, x));
    ASSERT_TRUE(y.ok()) << y.status();
    const Strings want = ReferenceNormalize(n, x);
    const int64_t count = static_cast<int64_t>(want.size());
    EXPECT_EQ(ShapeOf(*y), two_d ? std::vector<int64_t>({1, count}) : std::vector<int64_t>({count}));
    EXPECT_EQ(ElementsOf(**y), want);
  }
}

TEST(StringNormalizerTest, Errors) {
  const NDArray x = StringTensor({2}, {"a", "b"});
  EXPECT_INVALID(Normalize({.action = "TITLE"}, x), "case_change_action 'TITLE': expected LOWER, UPPER or NONE");
  EXPECT_INVALID(Normalize({}, StringTensor({2, 1}, {"a", "b"})), "X [2, 1] must be [C] or [1, C]");
  EXPECT_INVALID(Normalize({}, StringTensor({}, {"a"})), "X [] must be [C] or [1, C]");
  EXPECT_INVALID(RunKernel(kNormalizer, {}, {TensorOf<float>({1}, {1.0f})}, {DType::kString}), "X has dtype");
  EXPECT_INVALID(RunKernel(kNormalizer, {{"stopwords", std::string("4:abc")}}, {x}, {DType::kString}),
                 "attribute 'stopwords' is not a list of strings");
  EXPECT_INVALID(RunKernel(kNormalizer, {{"locale", std::string("en_US")}}, {x}, {DType::kString}), "locale");
  // The output must be the string tensor the shape function gives.
  EXPECT_INVALID(CallKernel(kNormalizer, {{"stopwords", EncodeStringList(Strings{"a"})}}, {x},
                            {StringTensor({2}, {"", ""})}),
                 "output 0 has shape [2], expected [1]");
}

// ---------------------------------------------------------------------------------------
// text.tfidf_vectorizer

struct Vectorizer {
  std::string mode = "TF";
  int64_t min_gram = 1, max_gram = 2, max_skip = 0;
  std::vector<int64_t> ngram_counts = {};
  std::vector<int64_t> ngram_indexes = {};
  std::vector<int64_t> pool = {};  // items; with `strings`, each item i is the string "w<i>"
  bool strings = false;
  std::vector<double> weights = {};

  Attrs ToAttrs() const {
    Attrs attrs = {{"mode", mode},
                   {"min_gram_length", min_gram},
                   {"max_gram_length", max_gram},
                   {"max_skip_count", max_skip},
                   {"ngram_counts", ngram_counts},
                   {"ngram_indexes", ngram_indexes}};
    if (strings) {
      Strings words;
      for (int64_t v : pool) words.push_back(absl::StrCat("w", v));
      attrs["pool_strings"] = EncodeStringList(words);
    } else {
      attrs["pool_int64s"] = pool;
    }
    if (!weights.empty()) attrs["weights"] = weights;
    return attrs;
  }
};

// `values` of `shape` as `dtype`: i32, i64, or the strings "w<v>".
NDArray Items(const std::vector<int64_t>& shape, const std::vector<int64_t>& values, DType dtype) {
  if (dtype == DType::kString) {
    Strings words;
    for (int64_t v : values) words.push_back(absl::StrCat("w", v));
    return StringTensor(shape, words);
  }
  if (dtype == DType::kI32) return TensorOf<int32_t>(shape, {values.begin(), values.end()});
  return TensorOf<int64_t>(shape, values);
}

absl::StatusOr<NDArray> Vectorize(const Vectorizer& v, const NDArray& x) {
  absl::StatusOr<std::vector<NDArray>> y = RunKernel(kTfIdf, v.ToAttrs(), {x}, {DType::kF32});
  if (!y.ok()) return y.status();
  return (*y)[0];
}

// The plain reference: each pooled n-gram of a size in [min_gram, max_gram] is looked for
// at every start and skip distance d <= max_skip + 1 (unigrams at d = 1 only), and its
// count added at its coordinate; then weighed.
std::vector<float> ReferenceVectorize(const Vectorizer& v, const std::vector<int64_t>& x, int64_t rows,
                                      int64_t c) {
  const int64_t m = *std::max_element(v.ngram_indexes.begin(), v.ngram_indexes.end()) + 1;
  std::vector<float> y(rows * m);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> counts(m);
    int64_t id = 0;
    for (size_t level = 0; level < v.ngram_counts.size(); ++level) {
      const int64_t n = static_cast<int64_t>(level) + 1;
      const int64_t end = level + 1 < v.ngram_counts.size() ? v.ngram_counts[level + 1] : v.pool.size();
      for (int64_t g = v.ngram_counts[level]; g < end; g += n, ++id) {
        if (n < v.min_gram || n > v.max_gram) continue;
        for (int64_t d = 1; d <= (n == 1 ? 1 : v.max_skip + 1); ++d) {
          for (int64_t s = 0; s + d * (n - 1) < c; ++s) {
            bool match = true;
            for (int64_t k = 0; k < n; ++k) match = match && x[r * c + s + k * d] == v.pool[g + k];
            counts[v.ngram_indexes[id]] += match;
          }
        }
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      const float w = v.weights.empty() ? 1.0f : static_cast<float>(v.weights[i]);
      const float count = static_cast<float>(counts[i]);
      y[r * m + i] = v.mode == "TF" ? count : v.mode == "IDF" ? (counts[i] > 0 ? w : 0.0f) : count * w;
    }
  }
  return y;
}

std::vector<float> Floats(const NDArray& t) { return {t->data_as<float>(), t->data_as<float>() + t->num_elements()}; }

TEST(TfIdfVectorizerTest, OnnxCases) {
  // test_tfidfvectorizer_tf_uniandbigrams_skip5 and its batched form.
  Vectorizer v{.mode = "TF", .min_gram = 1, .max_gram = 2, .max_skip = 5, .ngram_counts = {0, 4},
               .ngram_indexes = {0, 1, 2, 3, 4, 5, 6}, .pool = {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}};
  const std::vector<int64_t> x = {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  absl::StatusOr<NDArray> y = Vectorize(v, Items({12}, x, DType::kI32));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeOf(*y), (std::vector<int64_t>{7}));
  EXPECT_EQ(Floats(*y), (std::vector<float>{0, 3, 1, 0, 1, 3, 1}));
  y = Vectorize(v, Items({2, 6}, x, DType::kI64));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(ShapeOf(*y), (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(Floats(*y), (std::vector<float>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
  // test_tfidfvectorizer_tf_onlybigrams_levelempty: no unigrams in the pool.
  v = {.mode = "TF", .min_gram = 2, .max_gram = 2, .max_skip = 0, .ngram_counts = {0, 0},
       .ngram_indexes = {0, 1, 2}, .pool = {5, 6, 7, 8, 6, 7}, .strings = true};
  y = Vectorize(v, Items({12}, x, DType::kString));
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(Floats(*y), (std::vector<float>{1, 1, 1}));
}

TEST(TfIdfVectorizerTest, WeightsApplyByCoordinate) {
  // Two n-grams at coordinates 1 and 0; the weights are read by coordinate.
  Vectorizer v{.mode = "TFIDF", .min_gram = 1, .max_gram = 1, .ngram_counts = {0}, .ngram_indexes = {1, 0},
               .pool = {7, 9}, .weights = {0.5, 4.0}};
  const NDArray x = Items({4}, {7, 7, 9, 1}, DType::kI64);
  EXPECT_EQ(Floats(*Vectorize(v, x)), (std::vector<float>{0.5f, 8.0f}));
  v.mode = "IDF";
  EXPECT_EQ(Floats(*Vectorize(v, x)), (std::vector<float>{0.5f, 4.0f}));
  v.weights.clear();
  EXPECT_EQ(Floats(*Vectorize(v, x)), (std::vector<float>{1.0f, 1.0f}));
}

TEST(TfIdfVectorizerTest, RandomAgainstReference) {
  std::mt19937 rng(11);
  const auto rand = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const DType dtypes[] = {DType::kI32, DType::kI64, DType::kString};
  const char* const modes[] = {"TF", "IDF", "TFIDF"};
  for (int iter = 0; iter < 400; ++iter) {
    Vectorizer v{.mode = modes[rand(0, 2)], .min_gram = rand(1, 3), .max_skip = rand(0, 4)};
    v.max_gram = rand(v.min_gram, 4);
    const DType dtype = dtypes[rand(0, 2)];
    v.strings = dtype == DType::kString;
    // Distinct n-grams of sizes 1 to 3 over the items 0..2.
    int64_t ngrams = 0;
    for (int64_t n = 1; n <= 3; ++n) {
      v.ngram_counts.push_back(static_cast<int64_t>(v.pool.size()));
      std::vector<int64_t> codes(27);
      for (int64_t i = 0; i < 27; ++i) codes[i] = i;
      std::shuffle(codes.begin(), codes.begin() + (n == 1 ? 3 : n == 2 ? 9 : 27), rng);
      for (int64_t g = 0, k = rand(0, n == 1 ? 3 : 4); g < k; ++g, ++ngrams) {
        for (int64_t j = 0, code = codes[g]; j < n; ++j, code /= 3) v.pool.push_back(code % 3);
      }
    }
    for (int64_t i = 0; i < ngrams + rand(0, 1); ++i) v.ngram_indexes.push_back(rand(0, ngrams + 1));
    if (v.ngram_indexes.empty()) v.ngram_indexes.push_back(0);
    const int64_t m = *std::max_element(v.ngram_indexes.begin(), v.ngram_indexes.end()) + 1;
    if (v.mode != "TF" && rand(0, 1) && m <= static_cast<int64_t>(v.ngram_indexes.size())) {
      for (size_t i = 0; i < v.ngram_indexes.size(); ++i) v.weights.push_back(0.25 * static_cast<double>(rand(1, 8)));
    }
    const bool batched = rand(0, 1) == 1;
    const int64_t rows = batched ? rand(0, 3) : 1;
    const int64_t c = rand(0, 1) ? rand(0, 1) : rand(2, 9);
    std::vector<int64_t> x(rows * c);
    for (int64_t& e : x) e = rand(0, 3);  // 3 is in no n-gram
    SCOPED_TRACE(absl::StrCat("iter ", iter, ": rows=", rows, " C=", c, " min=", v.min_gram, " max=", v.max_gram,
                              " skip=", v.max_skip, " mode=", v.mode));
    const std::vector<int64_t> shape = batched ? std::vector<int64_t>{rows, c} : std::vector<int64_t>{c};
    absl::StatusOr<NDArray> y = Vectorize(v, Items(shape, x, dtype));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_EQ(ShapeOf(*y), batched ? std::vector<int64_t>({rows, m}) : std::vector<int64_t>({m}));
    EXPECT_EQ(Floats(*y), ReferenceVectorize(v, x, rows, c));
  }
}

TEST(TfIdfVectorizerTest, Errors) {
  const Vectorizer ok{.ngram_counts = {0, 2}, .ngram_indexes = {0, 1, 2}, .pool = {1, 2, 1, 2}};
  const NDArray x = Items({3}, {1, 2, 1}, DType::kI64);
  ASSERT_TRUE(Vectorize(ok, x).ok());
  const auto with = [&ok](auto change) {
    Vectorizer v = ok;
    change(v);
    return v;
  };
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.mode = "BM25"; }), x), "mode 'BM25': expected TF, IDF or TFIDF");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.min_gram = 3; }), x), "expected 1 <= min_gram_length");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.min_gram = 0; }), x), "expected 1 <= min_gram_length");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.max_skip = -1; }), x), "max_skip_count >= 0");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.ngram_counts = {0, 5}; }), x),
                 "ngram_counts [0, 5] do not split the pool of 4 items");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.ngram_counts = {0, 1}; }), x),
                 "the pool's 2-grams are 3 items (from item 1), not a whole number of 2-grams");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.pool = {1, 1, 1, 2}; }), x),
                 "the pool has the 1-gram at item 1 twice");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.ngram_indexes = {0, 1}; }), x),
                 "the pool has 3 n-grams but ngram_indexes only 2 coordinates");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.ngram_indexes = {0, -1, 2}; }), x),
                 "ngram_indexes[1] is -1");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.ngram_indexes = {}; }), x), "ngram_indexes is empty");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.weights = {1, 2}; }), x), "2 weights for 3 ngram_indexes");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) {
                   v.ngram_indexes = {0, 1, 5};
                   v.weights = {1, 2, 3};
                 }), x),
                 "one for every output coordinate");
  Attrs both = ok.ToAttrs();
  both["pool_strings"] = EncodeStringList(Strings{"a"});
  EXPECT_INVALID(RunKernel(kTfIdf, both, {x}, {DType::kF32}), "exactly one of pool_int64s and pool_strings");
  Attrs neither = ok.ToAttrs();
  neither.erase("pool_int64s");
  EXPECT_INVALID(RunKernel(kTfIdf, neither, {x}, {DType::kF32}), "exactly one of pool_int64s and pool_strings");
  // X of the pool's kind, [C] or [B, C].
  EXPECT_INVALID(Vectorize(ok, Items({3}, {1, 2, 1}, DType::kString)), "unsupported dtype");
  EXPECT_INVALID(Vectorize(with([](Vectorizer& v) { v.strings = true; }), x), "X has dtype");
  EXPECT_INVALID(Vectorize(ok, TensorOf<float>({1}, {1.0f})), "unsupported dtype");
  EXPECT_INVALID(Vectorize(ok, Items({1, 1, 3}, {1, 2, 1}, DType::kI64)), "X [1, 1, 3] must be [C] or [B, C]");
  EXPECT_INVALID(Vectorize(ok, Items({}, {1}, DType::kI64)), "X [] must be [C] or [B, C]");
  EXPECT_INVALID(CallKernel(kTfIdf, ok.ToAttrs(), {x}, {EmptyTensor({2}, DType::kF32)}),
                 "output 0 has shape [2], expected [3]");
}

}  // namespace
}  // namespace dynvm::kernels::testing
