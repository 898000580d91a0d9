// Reading TVM's metadata section (metadata.h): the JSON object graph from the root map
// to its relay.Constant array, then each constant's tensor from base64 and TVM's NDArray
// binary format. Every index and size is checked before it is used.
#include "compiler/frontend/relay_text/metadata.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "dlpack/dlpack.h"
#include "nlohmann/json.hpp"
#include "objects/allocator.h"
#include "objects/dtype.h"

namespace dynvm::compiler {
namespace {

using nlohmann::json;

static_assert(std::endian::native == std::endian::little,
              "TVM's tensors are little-endian and are copied as they are");

constexpr uint64_t kTvmNDArrayMagic = 0xDD5E40F096B4A13F;
constexpr int32_t kTvmCpuDevice = kDLCPU;
constexpr std::string_view kConstantKey = "relay.Constant";

absl::Status Invalid(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// --- One tensor in TVM's NDArray binary format ---

// Reads the fixed-size fields of a tensor blob front to back; memcpy, as nothing in
// the blob is aligned.
class BlobReader {
 public:
  explicit BlobReader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  absl::Status Read(T& out, std::string_view field) {
    if (bytes_.size() - offset_ < sizeof(T)) {
      return Invalid(absl::StrFormat("truncated at byte %d in the %s: %d bytes, expected %d",
                                     offset_, field, bytes_.size(), offset_ + sizeof(T)));
    }
    std::memcpy(&out, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return absl::OkStatus();
  }

  size_t offset() const { return offset_; }
  std::string_view rest() const { return bytes_.substr(offset_); }

 private:
  std::string_view bytes_;
  size_t offset_ = 0;
};

// Our dtype for a TVM DLDataType. TVM's bool is 1-bit uint, stored a byte an element.
absl::StatusOr<DType> TvmDType(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes != 1) {
    return Invalid(absl::StrFormat(
        "vector dtype (code %d, bits %d, lanes %d): expected lanes 1", code, bits, lanes));
  }
  if (code == kDLUInt && bits == 1) return DType::kBool;
  absl::StatusOr<DType> dtype = FromDLDataType(DLDataType{code, bits, lanes});
  if (!dtype.ok()) {
    return Invalid(absl::StrFormat(
        "unsupported dtype (code %d, bits %d): expected float16/32/64, bfloat16, "
        "int8/16/32/64, uint8/16/32/64 or bool",
        code, bits));
  }
  return *dtype;
}

// What a tensor's header says, once checked.
struct TensorHeader {
  DType dtype;
  Shape shape;
};

absl::StatusOr<TensorHeader> ReadTensorHeader(BlobReader& in) {
  uint64_t magic = 0, reserved = 0;
  DYNVM_RETURN_IF_ERROR(in.Read(magic, "magic"));
  if (magic != kTvmNDArrayMagic) {
    return Invalid(absl::StrFormat("magic 0x%016x, expected 0x%016x (a TVM NDArray)", magic,
                                   kTvmNDArrayMagic));
  }
  DYNVM_RETURN_IF_ERROR(in.Read(reserved, "reserved word"));
  int32_t device_type = 0, device_id = 0, ndim = 0;
  DYNVM_RETURN_IF_ERROR(in.Read(device_type, "device type"));
  DYNVM_RETURN_IF_ERROR(in.Read(device_id, "device id"));
  if (device_type != kTvmCpuDevice) {
    return Invalid(absl::StrFormat("device type %d, expected %d (the CPU)", device_type,
                                   kTvmCpuDevice));
  }
  DYNVM_RETURN_IF_ERROR(in.Read(ndim, "rank"));
  if (ndim < 0 || ndim > kMaxRank) {
    return Invalid(absl::StrFormat("rank %d, expected 0 to %d", ndim, kMaxRank));
  }
  uint8_t code = 0, bits = 0;
  uint16_t lanes = 0;
  DYNVM_RETURN_IF_ERROR(in.Read(code, "dtype code"));
  DYNVM_RETURN_IF_ERROR(in.Read(bits, "dtype bits"));
  DYNVM_RETURN_IF_ERROR(in.Read(lanes, "dtype lanes"));
  TensorHeader header;
  DYNVM_ASSIGN_OR_RETURN(header.dtype, TvmDType(code, bits, lanes));
  header.shape.resize(ndim);
  for (int64_t& dim : header.shape) DYNVM_RETURN_IF_ERROR(in.Read(dim, "shape"));
  return header;
}

// Copies the elements `src` into `array`; bools become 0/1, as kernels read them as C++
// bools.
void CopyElements(std::string_view src, const NDArray& array) {
  if (src.empty()) return;
  auto* dst = array->data_as<uint8_t>();
  if (array->dtype() == DType::kBool) {
    for (size_t i = 0; i < src.size(); ++i) dst[i] = src[i] != 0 ? 1 : 0;
  } else {
    std::memcpy(dst, src.data(), src.size());
  }
}

absl::StatusOr<NDArray> DecodeTensor(std::string_view bytes) {
  BlobReader in(bytes);
  DYNVM_ASSIGN_OR_RETURN(TensorHeader header, ReadTensorHeader(in));
  const std::string shape = ShapeToString(header.shape);
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(header.shape));
  int64_t expected = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(DTypeSize(header.dtype)), &expected)) {
    return Invalid(absl::StrFormat("byte size of %s %s overflows", DTypeLongName(header.dtype),
                                   shape));
  }
  int64_t byte_size = 0;
  DYNVM_RETURN_IF_ERROR(in.Read(byte_size, "data byte size"));
  if (byte_size != expected) {
    return Invalid(absl::StrFormat("data byte size %d, expected %d for %s %s", byte_size,
                                   expected, DTypeLongName(header.dtype), shape));
  }
  const std::string_view data = in.rest();
  if (data.size() != static_cast<uint64_t>(expected)) {
    return Invalid(absl::StrFormat("%s: %d bytes of data after the %d-byte header, expected %d",
                                   data.size() < static_cast<uint64_t>(expected)
                                       ? "truncated"
                                       : "trailing bytes",
                                   data.size(), in.offset(), expected));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray array,
                         NDArrayObj::Empty(header.shape, header.dtype, MakeNaiveAllocator()));
  CopyElements(data, array);
  return array;
}

// --- The JSON object graph ---

// A decimal string ("12"), as TVM writes node and tensor indices in "attrs".
std::optional<uint64_t> ParseDecimal(const json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  uint64_t out = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return out;
}

// A short rendering of a JSON value for messages.
std::string Show(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

class Graph {
 public:
  explicit Graph(const json& nodes) : nodes_(nodes) {}

  // Node `index` (a JSON number), which must be an object; `what` names the referrer.
  absl::StatusOr<const json*> Node(const json& index, std::string_view what) const {
    if (!index.is_number_unsigned()) {
      return Invalid(
          absl::StrFormat("%s is %s, expected a node index", what, Show(index)));
    }
    return NodeAt(index.get<uint64_t>(), what);
  }

  absl::StatusOr<const json*> NodeAt(uint64_t index, std::string_view what) const {
    if (index >= nodes_.size()) {
      return Invalid(absl::StrFormat("%s is node %d, out of range: nodes has %d", what, index,
                                     nodes_.size()));
    }
    const json& node = nodes_[index];
    if (!node.is_object()) {
      return Invalid(absl::StrFormat("node %d is %s, expected an object", index, Show(node)));
    }
    return &node;
  }

 private:
  const json& nodes_;
};

// The node's type key; TVM omits none, but a missing one is null's "".
std::string_view TypeKey(const json& node) {
  const auto it = node.find("type_key");
  if (it == node.end() || !it->is_string()) return "";
  return it->get_ref<const std::string&>();
}

// An optional array member of a node ("keys", "data"): absent is empty.
absl::StatusOr<const json*> ArrayMember(const json& node, const char* name, std::string_view what) {
  static const json kEmpty = json::array();
  const auto it = node.find(name);
  if (it == node.end()) return &kEmpty;
  if (!it->is_array()) {
    return Invalid(absl::StrFormat("%s's \"%s\" is %s, expected an array", what, name, Show(*it)));
  }
  return &*it;
}

// The root map's relay.Constant array, or null if the map has no such key.
absl::StatusOr<const json*> ConstantArray(const json& graph, const Graph& nodes) {
  const auto root = graph.find("root");
  if (root == graph.end()) return Invalid("no \"root\": expected the index of the root map");
  DYNVM_ASSIGN_OR_RETURN(const json* map, nodes.Node(*root, "the root"));
  if (TypeKey(*map) != "Map" && TypeKey(*map) != "StrMap") {
    return Invalid(absl::StrFormat("the root is a '%s', expected a Map", TypeKey(*map)));
  }
  DYNVM_ASSIGN_OR_RETURN(const json* keys, ArrayMember(*map, "keys", "the root map"));
  DYNVM_ASSIGN_OR_RETURN(const json* values, ArrayMember(*map, "data", "the root map"));
  if (keys->size() != values->size()) {
    return Invalid(absl::StrFormat("the root map has %d keys and %d values, expected string "
                                   "keys each with its value",
                                   keys->size(), values->size()));
  }
  for (size_t i = 0; i < keys->size(); ++i) {
    if (!(*keys)[i].is_string() || (*keys)[i].get_ref<const std::string&>() != kConstantKey) {
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(const json* array, nodes.Node((*values)[i], "meta[relay.Constant]"));
    if (TypeKey(*array) != "Array") {
      return Invalid(absl::StrFormat("meta[relay.Constant] is a '%s', expected an Array",
                                     TypeKey(*array)));
    }
    return ArrayMember(*array, "data", "meta[relay.Constant]");
  }
  return nullptr;
}

// The index into b64ndarrays of constant `i`, the node that `element` refers to.
absl::StatusOr<uint64_t> TensorIndex(const json& element, size_t i, const Graph& nodes,
                                     size_t num_tensors) {
  const std::string what = absl::StrFormat("meta[relay.Constant][%d]", i);
  DYNVM_ASSIGN_OR_RETURN(const json* node, nodes.Node(element, what));
  if (TypeKey(*node) != kConstantKey) {
    return Invalid(absl::StrFormat("%s is a '%s', expected a relay.Constant", what,
                                   TypeKey(*node)));
  }
  const auto attrs = node->find("attrs");
  if (attrs == node->end() || !attrs->is_object() || !attrs->contains("data")) {
    return Invalid(absl::StrFormat("%s has no attrs.data: expected its tensor's index", what));
  }
  const json& data = attrs->at("data");
  const std::optional<uint64_t> index = ParseDecimal(data);
  if (!index.has_value()) {
    return Invalid(absl::StrFormat("%s's data is %s, expected a tensor index as a decimal string",
                                   what, Show(data)));
  }
  if (*index >= num_tensors) {
    return Invalid(absl::StrFormat("%s's data is tensor %d, out of range: b64ndarrays has %d",
                                   what, *index, num_tensors));
  }
  return *index;
}

absl::StatusOr<json> ParseJson(std::string_view text) {
  // nlohmann reports syntax errors by exception only; none leaves this function.
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    const std::string_view what = e.what();
    return Invalid(absl::StrFormat("malformed JSON at byte %d: %s", e.byte,
                                   what.substr(what.rfind(": ") + 2)));
  } catch (const json::exception& e) {
    const std::string_view what = e.what();
    const size_t tag = what.find("] ");
    return Invalid(absl::StrFormat("malformed JSON: %s",
                                   tag == std::string_view::npos ? what : what.substr(tag + 2)));
  }
}

absl::StatusOr<std::vector<NDArray>> ParseMetadata(std::string_view text) {
  DYNVM_ASSIGN_OR_RETURN(const json graph, ParseJson(text));
  if (!graph.is_object()) {
    return Invalid(absl::StrFormat("the section is %s, expected a JSON object", Show(graph)));
  }
  const auto nodes_it = graph.find("nodes");
  if (nodes_it == graph.end() || !nodes_it->is_array()) {
    return Invalid("no \"nodes\" array: expected TVM's JSON object graph");
  }
  const Graph nodes(*nodes_it);
  DYNVM_ASSIGN_OR_RETURN(const json* constants, ConstantArray(graph, nodes));
  if (constants == nullptr) return std::vector<NDArray>();
  DYNVM_ASSIGN_OR_RETURN(const json* tensors, ArrayMember(graph, "b64ndarrays", "the graph"));

  std::vector<std::optional<NDArray>> decoded(tensors->size());
  std::vector<NDArray> out;
  out.reserve(constants->size());
  for (size_t i = 0; i < constants->size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(uint64_t t, TensorIndex((*constants)[i], i, nodes, tensors->size()));
    if (!decoded[t].has_value()) {
      const json& b64 = (*tensors)[t];
      std::string bytes;
      if (!b64.is_string() || !absl::Base64Unescape(b64.get_ref<const std::string&>(), &bytes)) {
        return Invalid(absl::StrFormat("b64ndarrays[%d] is not base64", t));
      }
      absl::StatusOr<NDArray> tensor = DecodeTensor(bytes);
      if (!tensor.ok()) {
        return absl::Status(tensor.status().code(),
                            absl::StrCat("b64ndarrays[", t, "]: ", tensor.status().message()));
      }
      decoded[t] = *std::move(tensor);
    }
    out.push_back(*decoded[t]);
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<NDArray>> ParseRelayMetadata(std::string_view json,
                                                        std::string_view source_name) {
  absl::StatusOr<std::vector<NDArray>> constants = ParseMetadata(json);
  if (!constants.ok()) {
    const absl::Status& status = constants.status();
    return absl::Status(status.code(),
                        absl::StrFormat("%s: metadata: %s", source_name, status.message()));
  }
  return constants;
}

}  // namespace dynvm::compiler
