// Reading an infer request's JSON without building a tree of its tensors' data.
//
// A JSON tree costs ~36 times the text it holds (nlohmann::json: a 16-byte node and
// allocations per element), and the data of the inputs is nearly all of a request. So
// the request is parsed as events (nlohmann's SAX interface): everything but
// `inputs[i].data` becomes a tree as usual — small: names, datatypes, shapes,
// parameters — and each input's data is kept as a compact list of tokens (its arrays'
// starts and ends and its scalars, 9 bytes each, strings in one shared buffer), which
// inference_protocol.cc checks against the shape and stores into the tensor. A body of
// N bytes then takes at most ~6 N while parsed (a token per element of at least two
// characters, `1,`), plus the tensor.
//
//   DYNVM_ASSIGN_OR_RETURN(InferJson parsed, ReadInferJson(text));
//   parsed.root["inputs"][0]["data"]  // null: the data is parsed.data[0]
#ifndef DYNVM_TOOLS_SERVE_INFER_JSON_H_
#define DYNVM_TOOLS_SERVE_INFER_JSON_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace dynvm::tools::serve {

// One input's `data` as the tokens of its JSON, in document order.
class DataTokens {
 public:
  enum class Kind : uint8_t { kBegin, kEnd, kNull, kBool, kInt, kUnsigned, kFloat, kString, kObject };

  size_t size() const { return kinds_.size(); }
  Kind kind(size_t i) const { return kinds_[i]; }
  bool boolean(size_t i) const { return values_[i] != 0; }
  int64_t integer(size_t i) const { return static_cast<int64_t>(values_[i]); }
  uint64_t unsigned_integer(size_t i) const { return values_[i]; }
  double floating(size_t i) const;
  std::string_view string(size_t i) const;
  // Token i (a scalar or an object) as a JSON value, for messages; an object is {}.
  nlohmann::json AsJson(size_t i) const;
  // The token after the value starting at i (past its matching end for an array).
  size_t Skip(size_t i) const;

  void Add(Kind kind, uint64_t value = 0) {
    kinds_.push_back(kind);
    values_.push_back(value);
  }
  void AddFloat(double value);
  void AddString(std::string_view value);

 private:
  std::vector<Kind> kinds_;
  std::vector<uint64_t> values_;  // bools, integers, float bits, offsets into strings_
  std::string strings_;           // each string as its 8-byte length, then its bytes
};

struct InferJson {
  // The request, each `inputs[i].data` replaced by null.
  nlohmann::json root;
  // Per position in `inputs`, that input's data, if it has any.
  std::vector<std::optional<DataTokens>> data;
};

// `text` parsed. InvalidArgument for malformed JSON ("malformed JSON at byte 12: ...")
// or a number past double's range ("malformed JSON: number overflow parsing '1e400'").
absl::StatusOr<InferJson> ReadInferJson(std::string_view text);

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_INFER_JSON_H_
