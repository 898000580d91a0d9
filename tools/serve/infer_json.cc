// The request's JSON as events: a tree of all but the inputs' data, whose events become
// tokens (tools/serve/infer_json.h).
#include "tools/serve/infer_json.h"

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm::tools::serve {

using nlohmann::json;

double DataTokens::floating(size_t i) const {
  double value;
  std::memcpy(&value, &values_[i], sizeof(value));
  return value;
}

std::string_view DataTokens::string(size_t i) const {
  uint64_t length;
  std::memcpy(&length, strings_.data() + values_[i], sizeof(length));
  return std::string_view(strings_).substr(values_[i] + sizeof(length), length);
}

void DataTokens::AddFloat(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  Add(Kind::kFloat, bits);
}

void DataTokens::AddString(std::string_view value) {
  Add(Kind::kString, strings_.size());
  const uint64_t length = value.size();
  strings_.append(reinterpret_cast<const char*>(&length), sizeof(length));
  strings_.append(value);
}

json DataTokens::AsJson(size_t i) const {
  switch (kinds_[i]) {
    case Kind::kBool: return boolean(i);
    case Kind::kInt: return integer(i);
    case Kind::kUnsigned: return unsigned_integer(i);
    case Kind::kFloat: return floating(i);
    case Kind::kString: return std::string(string(i));
    case Kind::kObject: return json::object();
    default: return nullptr;
  }
}

size_t DataTokens::Skip(size_t i) const {
  if (kinds_[i] != Kind::kBegin) return i + 1;
  int depth = 0;
  for (; i < kinds_.size(); ++i) {
    if (kinds_[i] == Kind::kBegin) ++depth;
    if (kinds_[i] == Kind::kEnd && --depth == 0) return i + 1;
  }
  return i;
}

namespace {

using Kind = DataTokens::Kind;

// nlohmann's SAX interface: the tree builder gets every event but those of an
// inputs[i].data value, which go to that input's tokens.
class Reader {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  explicit Reader(InferJson& out) : out_(out), tree_(out.root, /*allow_exceptions_=*/false) {}

  bool null() {
    return Value([](DataTokens& d) { d.Add(Kind::kNull); }, [&] { return tree_.null(); });
  }
  bool boolean(bool value) {
    return Value([&](DataTokens& d) { d.Add(Kind::kBool, value); }, [&] { return tree_.boolean(value); });
  }
  bool number_integer(number_integer_t value) {
    return Value([&](DataTokens& d) { d.Add(Kind::kInt, static_cast<uint64_t>(value)); },
                 [&] { return tree_.number_integer(value); });
  }
  bool number_unsigned(number_unsigned_t value) {
    return Value([&](DataTokens& d) { d.Add(Kind::kUnsigned, value); }, [&] { return tree_.number_unsigned(value); });
  }
  bool number_float(number_float_t value, const string_t& text) {
    return Value([&](DataTokens& d) { d.AddFloat(value); }, [&] { return tree_.number_float(value, text); });
  }
  bool string(string_t& value) {
    return Value([&](DataTokens& d) { d.AddString(value); }, [&] { return tree_.string(value); });
  }
  bool binary(binary_t& value) { return Capturing() || tree_.binary(value); }  // not in JSON text

  bool start_object(std::size_t size) {
    if (Capturing() || AtData()) {
      if (!Capturing()) StartData();
      if (skip_++ == 0) data_->Add(Kind::kObject);  // an element that is an object: its content is not needed
      ++depth_;
      return true;
    }
    frames_.push_back({/*object=*/true, {}, 0});
    return tree_.start_object(size);
  }
  bool key(string_t& value) {
    if (Capturing()) return true;
    frames_.back().key = value;
    return tree_.key(value);
  }
  bool end_object() {
    if (Capturing()) {
      --skip_;
      return Close();
    }
    frames_.pop_back();
    return tree_.end_object() && ValueDone();
  }
  bool start_array(std::size_t size) {
    if (frames_.size() == 1 && frames_[0].object && frames_[0].key == "inputs") {
      out_.data.clear();  // a repeated "inputs" replaces the first, as in the tree
    }
    if (Capturing() || AtData()) {
      if (!Capturing()) StartData();
      if (skip_ == 0) data_->Add(Kind::kBegin);
      ++depth_;
      return true;
    }
    frames_.push_back({/*object=*/false, {}, 0});
    return tree_.start_array(size);
  }
  bool end_array() {
    if (Capturing()) {
      if (skip_ == 0) data_->Add(Kind::kEnd);
      return Close();
    }
    frames_.pop_back();
    return tree_.end_array() && ValueDone();
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& error) {
    const std::string_view what = error.what();
    if (error.id >= 101 && error.id < 200) {  // a syntax error, at its byte
      status_ = absl::InvalidArgumentError(
          absl::StrFormat("malformed JSON at byte %d: %s", position, what.substr(what.rfind(": ") + 2)));
    } else {  // "[json.exception.out_of_range.406] number overflow parsing '1e400'"
      const size_t tag = what.find("] ");
      status_ = absl::InvalidArgumentError(
          absl::StrFormat("malformed JSON: %s", tag == std::string_view::npos ? what : what.substr(tag + 2)));
    }
    return false;
  }

  const absl::Status& status() const { return status_; }

 private:
  struct Frame {
    bool object;
    std::string key;  // objects: the key of the value being read
    size_t index;     // arrays: the position of the value being read
  };

  bool Capturing() const { return depth_ > 0; }
  // Whether the next value is inputs[i].data of the request.
  bool AtData() const {
    return frames_.size() == 3 && frames_[0].object && frames_[0].key == "inputs" && !frames_[1].object &&
           frames_[2].object && frames_[2].key == "data";
  }
  // The tokens of the data starting now (a later `data` key replaces an earlier one, as
  // in the tree); the tree keeps null at the key.
  DataTokens& StartData() {
    const size_t input = frames_[1].index;
    if (out_.data.size() <= input) out_.data.resize(input + 1);
    data_ = &out_.data[input].emplace();
    return *data_;
  }
  // A scalar: a token of the data being read (none inside an object there), the start
  // and end of an input's data, or an event of the tree.
  template <typename AddToken, typename TreeEvent>
  bool Value(AddToken add_token, TreeEvent tree_event) {
    if (Capturing()) {
      if (skip_ == 0) add_token(*data_);
      return true;
    }
    if (AtData()) {
      add_token(StartData());
      return ValueDone();
    }
    return tree_event() && ValueDone();
  }
  // The end of a container inside the data; the data's own end is a value done.
  bool Close() {
    --depth_;
    return depth_ > 0 || ValueDone();
  }
  // A value of the enclosing array is complete: the next has the next position.
  bool ValueDone() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }

  InferJson& out_;
  nlohmann::detail::json_sax_dom_parser<json> tree_;
  std::vector<Frame> frames_;  // the tree's open containers
  DataTokens* data_ = nullptr;
  int64_t depth_ = 0;  // open arrays and objects inside the data being read
  int64_t skip_ = 0;   // open objects inside it, whose content is not kept
  absl::Status status_;
};

}  // namespace

absl::StatusOr<InferJson> ReadInferJson(std::string_view text) {
  InferJson out;
  Reader reader(out);
  if (!json::sax_parse(text, &reader) || !reader.status().ok()) {
    if (!reader.status().ok()) return reader.status();
    return absl::InvalidArgumentError("malformed JSON");
  }
  return out;
}

}  // namespace dynvm::tools::serve
