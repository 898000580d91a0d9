// The Open Inference Protocol's JSON and binary tensors read into tensors and written
// back, element by element through objects/element_codec.h.
#include "tools/serve/inference_protocol.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "nlohmann/json.hpp"
#include "objects/element_codec.h"
#include "objects/string_tensor.h"
#include "tools/run/value_printer.h"
#include "tools/serve/infer_json.h"

namespace dynvm::tools::serve {
namespace {

using nlohmann::json;


// `text` as a JSON string, invalid UTF-8 replaced (names may come from the command line).
std::string Quote(std::string_view text) {
  return json(text).dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

// A JSON value in a message: scalars as written (at most 40 characters), not the whole
// of a container, which may be large or deeply nested.
std::string Describe(const json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
  if (text.size() > 40) text = absl::StrCat(text.substr(0, 37), "...");
  return text;
}

absl::Status InputError(std::string_view input, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrFormat("input '%s': %s", input, message));
}

// Where in `data` an element or array is, as "data[1][0]".
std::string DataPath(absl::Span<const size_t> path) {
  std::string out = "data";
  for (size_t i : path) absl::StrAppend(&out, "[", i, "]");
  return out;
}

using Kind = DataTokens::Kind;

// Checks that the value at token `at` of `data` nests as `shape` from depth
// path.size(): an array at depth d < rank has shape[d] items, the items at depth rank
// are scalars. Recurses at most rank (<= kMaxRank) deep.
absl::Status CheckNested(const DataTokens& data, size_t at, const Shape& shape, std::vector<size_t>& path) {
  const size_t depth = path.size();
  const bool array = data.kind(at) == Kind::kBegin;
  if (depth == shape.size()) {
    if (array) {
      return absl::InvalidArgumentError(absl::StrFormat("%s is an array, deeper than the rank %d of shape %s",
                                                        DataPath(path), shape.size(), ShapeToString(shape)));
    }
    return absl::OkStatus();
  }
  int64_t items = 0;
  if (array) {
    for (size_t i = at + 1; data.kind(i) != Kind::kEnd; i = data.Skip(i)) ++items;
  }
  if (!array || items != shape[depth]) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is %s, but axis %d of shape %s needs an array of %d (nest data as the shape, or give it flat)",
        DataPath(path), array ? absl::StrFormat("an array of %d", items) : Describe(data.AsJson(at)), depth,
        ShapeToString(shape), shape[depth]));
  }
  size_t i = at + 1;
  for (int64_t k = 0; k < items; ++k, i = data.Skip(i)) {
    path.push_back(static_cast<size_t>(k));
    DYNVM_RETURN_IF_ERROR(CheckNested(data, i, shape, path));
    path.pop_back();
  }
  return absl::OkStatus();
}

// Checks that `data` is a scalar (one element), a flat array of scalars, or arrays
// nested exactly as `shape` (ragged nesting such as [[1, 2, 3], [4]] for [2, 2] is
// refused, naming where); its elements are then its scalar tokens in order.
absl::Status CheckData(const DataTokens& data, const Shape& shape) {
  if (data.kind(0) != Kind::kBegin) return absl::OkStatus();
  bool nested = false;
  for (size_t i = 1; data.kind(i) != Kind::kEnd; i = data.Skip(i)) nested |= data.kind(i) == Kind::kBegin;
  if (!nested) return absl::OkStatus();
  if (shape.size() < 2) {
    return absl::InvalidArgumentError(absl::StrFormat("data nests deeper than the rank %d of shape %s",
                                                      shape.size(), ShapeToString(shape)));
  }
  std::vector<size_t> path;
  return CheckNested(data, 0, shape, path);
}

absl::Status StoreElement(const DataTokens& data, size_t token, NDArrayObj& array, int64_t index) {
  const DType dtype = array.dtype();
  const Kind kind = data.kind(token);
  if (dtype == DType::kBool) {
    if (kind != Kind::kBool) return absl::InvalidArgumentError("not true or false");
    SetBoolElement(array, index, data.boolean(token));
    return absl::OkStatus();
  }
  if (dtype == DType::kString) {
    if (kind != Kind::kString) return absl::InvalidArgumentError("not a string");
    SetStringElement(array, index, data.string(token));
    return absl::OkStatus();
  }
  if (IsFloatDType(dtype)) {
    double value;
    switch (kind) {
      case Kind::kFloat: value = data.floating(token); break;
      case Kind::kInt: value = static_cast<double>(data.integer(token)); break;
      case Kind::kUnsigned: value = static_cast<double>(data.unsigned_integer(token)); break;
      default: return absl::InvalidArgumentError("not a number");
    }
    // Finite: JSON has no infinities, and the parser refuses numbers past double's range.
    SetFloatElement(array, index, value);
    if (!std::isfinite(ElementAsDouble(array, index))) {
      return absl::InvalidArgumentError(absl::StrFormat("out of the finite range of %s", KServeDatatype(dtype)));
    }
    return absl::OkStatus();
  }
  if (kind == Kind::kUnsigned) return SetUnsignedElement(array, index, data.unsigned_integer(token));
  if (kind == Kind::kInt) return SetIntegerElement(array, index, data.integer(token));
  return absl::InvalidArgumentError("not an integer");
}

// The shape of input `name` from its "shape" field.
absl::StatusOr<Shape> ParseShape(std::string_view name, const json& input) {
  const auto it = input.find("shape");
  if (it == input.end() || !it->is_array()) return InputError(name, "'shape' must be an array of integers");
  if (it->size() > static_cast<size_t>(kMaxRank)) {
    return InputError(name, absl::StrFormat("rank %d exceeds the limit of %d", it->size(), kMaxRank));
  }
  Shape shape;
  for (const json& dim : *it) {
    if (!dim.is_number_integer() || (!dim.is_number_unsigned() && dim.get<int64_t>() < 0) ||
        (dim.is_number_unsigned() && dim.get<uint64_t>() > uint64_t{INT64_MAX})) {
      return InputError(name, absl::StrFormat("bad dim %s in 'shape': dims are integers >= 0",
                                              Describe(dim)));
    }
    shape.push_back(dim.get<int64_t>());
  }
  return shape;
}

// The bytes a tensor of `shape` and `dtype` takes, or InvalidArgument when that
// overflows: checked before anything is allocated.
absl::StatusOr<size_t> TensorBytes(std::string_view name, const Shape& shape, DType dtype) {
  absl::StatusOr<int64_t> count = ShapeNumElements(shape);
  if (!count.ok()) return InputError(name, count.status().message());
  if (*count > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(DTypeSize(dtype))) {
    return InputError(name, absl::StrFormat("shape %s of %s overflows a byte size",
                                            ShapeToString(shape), KServeDatatype(dtype)));
  }
  return static_cast<size_t>(*count) * DTypeSize(dtype);
}

// Where binary input data is read from: the bytes after the JSON, in input order.
struct BinaryCursor {
  std::string_view bytes;
  size_t offset = 0;
};

// A BYTES tensor's `size` binary bytes at the cursor: per element, its length as 4
// little-endian bytes, then its bytes.
absl::StatusOr<NDArray> ParseBinaryStrings(std::string_view name, uint64_t size, const Shape& shape,
                                           BinaryCursor& cursor,
                                           const std::shared_ptr<Allocator>& allocator) {
  const size_t left = cursor.bytes.size() - cursor.offset;
  const auto count = static_cast<uint64_t>(*ShapeNumElements(shape));  // checked by TensorBytes
  if (size > left || count > size / 4) {
    return InputError(name, absl::StrFormat(
        "binary_data_size %d does not fit: %d BYTES elements take at least %d bytes, and the "
        "binary part has %d left at offset %d",
        size, count, count * 4, left, cursor.offset));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray tensor, NDArrayObj::Empty(shape, DType::kString, allocator));
  const std::string_view bytes = cursor.bytes.substr(cursor.offset, size);
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t length = 0;
    if (bytes.size() - at < 4) {
      return InputError(name, absl::StrFormat("BYTES element %d has no length: the data ends", i));
    }
    for (int b = 0; b < 4; ++b) length |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + b])) << (8 * b);
    at += 4;
    if (length > bytes.size() - at) {
      return InputError(name, absl::StrFormat("BYTES element %d of %d bytes overruns binary_data_size %d",
                                              i, length, size));
    }
    SetStringElement(*tensor, static_cast<int64_t>(i), bytes.substr(at, length));
    at += length;
  }
  if (at != size) {
    return InputError(name, absl::StrFormat("binary_data_size is %d but the %d BYTES elements take %d",
                                            size, count, at));
  }
  cursor.offset += size;
  return tensor;
}

absl::StatusOr<NDArray> ParseBinaryTensor(std::string_view name, const json& size_field,
                                          const Shape& shape, DType dtype, size_t nbytes,
                                          BinaryCursor& cursor,
                                          const std::shared_ptr<Allocator>& allocator) {
  if (!size_field.is_number_unsigned() && !(size_field.is_number_integer() && size_field.get<int64_t>() >= 0)) {
    return InputError(name, "'binary_data_size' must be an integer >= 0");
  }
  const uint64_t size = size_field.get<uint64_t>();
  if (dtype == DType::kString) return ParseBinaryStrings(name, size, shape, cursor, allocator);
  if (size != nbytes) {
    return InputError(name, absl::StrFormat("binary_data_size is %d but shape %s of %s takes %d bytes",
                                            size, ShapeToString(shape), KServeDatatype(dtype), nbytes));
  }
  const size_t left = cursor.bytes.size() - cursor.offset;
  if (size > left) {
    return InputError(name, absl::StrFormat("binary data overruns the body: needs %d bytes at offset "
                                            "%d of the binary part, which has %d",
                                            size, cursor.offset, cursor.bytes.size()));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray tensor, NDArrayObj::Empty(shape, dtype, allocator));
  std::memcpy(tensor->data(), cursor.bytes.data() + cursor.offset, nbytes);
  cursor.offset += nbytes;
  if (dtype == DType::kBool) {  // any nonzero byte is true; kernels expect 0 or 1
    uint8_t* p = tensor->data_as<uint8_t>();
    for (size_t i = 0; i < nbytes; ++i) p[i] = p[i] != 0;
  }
  return tensor;
}

absl::StatusOr<NDArray> ParseJsonTensor(std::string_view name, const DataTokens& data, const Shape& shape,
                                        DType dtype, const std::shared_ptr<Allocator>& allocator) {
  absl::Status checked = CheckData(data, shape);
  if (!checked.ok()) return InputError(name, checked.message());
  int64_t elements = 0;
  for (size_t i = 0; i < data.size(); ++i) elements += data.kind(i) != Kind::kBegin && data.kind(i) != Kind::kEnd;
  const int64_t count = *ShapeNumElements(shape);  // checked by TensorBytes
  if (elements != count) {
    return InputError(name, absl::StrFormat("shape %s has %d elements but data has %d", ShapeToString(shape),
                                            count, elements));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray tensor, NDArrayObj::Empty(shape, dtype, allocator));
  int64_t index = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (data.kind(i) == Kind::kBegin || data.kind(i) == Kind::kEnd) continue;
    absl::Status stored = StoreElement(data, i, *tensor, index);
    if (!stored.ok()) {
      return InputError(name, absl::StrFormat("element %d (%s) of %s data: %s", index, Describe(data.AsJson(i)),
                                              KServeDatatype(dtype), stored.message()));
    }
    ++index;
  }
  return tensor;
}

absl::StatusOr<InferInput> ParseInput(const json& input, size_t position, const InferJson& parsed,
                                      BinaryCursor& cursor, const std::shared_ptr<Allocator>& allocator) {
  if (!input.is_object()) return absl::InvalidArgumentError(absl::StrFormat("inputs[%d] is not an object", position));
  const auto name_it = input.find("name");
  // An empty name would bind by position (codec/argument_binder.h): inputs are named.
  if (name_it == input.end() || !name_it->is_string() || name_it->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError(absl::StrFormat("inputs[%d] has no 'name' string, or an empty one", position));
  }
  const std::string name = name_it->get<std::string>();
  const auto type_it = input.find("datatype");
  if (type_it == input.end() || !type_it->is_string()) return InputError(name, "no 'datatype' string");
  absl::StatusOr<DType> dtype = ParseKServeDatatype(type_it->get<std::string>());
  if (!dtype.ok()) return InputError(name, dtype.status().message());
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, ParseShape(name, input));
  DYNVM_ASSIGN_OR_RETURN(const size_t nbytes, TensorBytes(name, shape, *dtype));

  const json* binary_size = nullptr;
  if (const auto params = input.find("parameters"); params != input.end()) {
    if (!params->is_object()) return InputError(name, "'parameters' must be an object");
    if (const auto it = params->find("binary_data_size"); it != params->end()) binary_size = &*it;
  }
  const auto data = input.find("data");
  if (binary_size != nullptr && data != input.end()) {
    return InputError(name, "has both 'data' and parameters.binary_data_size");
  }
  InferInput out{name, NDArray()};
  if (binary_size != nullptr) {
    DYNVM_ASSIGN_OR_RETURN(out.tensor, ParseBinaryTensor(name, *binary_size, shape, *dtype, nbytes,
                                                         cursor, allocator));
  } else if (data != input.end()) {
    if (position >= parsed.data.size() || !parsed.data[position].has_value()) {
      return absl::InternalError(absl::StrFormat("input '%s': its data was not read", name));
    }
    DYNVM_ASSIGN_OR_RETURN(out.tensor, ParseJsonTensor(name, *parsed.data[position], shape, *dtype, allocator));
  } else {
    return InputError(name, "has neither 'data' nor parameters.binary_data_size");
  }
  return out;
}

// A boolean parameter `key` of `object` (which may lack "parameters"); nullopt if absent.
absl::StatusOr<std::optional<bool>> BoolParameter(const json& object, std::string_view key,
                                                  std::string_view where) {
  const auto params = object.find("parameters");
  if (params == object.end()) return std::nullopt;
  if (!params->is_object()) return absl::InvalidArgumentError(absl::StrFormat("%s: 'parameters' must be an object", where));
  const auto it = params->find(key);
  if (it == params->end()) return std::nullopt;
  if (!it->is_boolean()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: parameters.%s must be true or false", where, key));
  }
  return it->get<bool>();
}

absl::Status ParseOutputs(const json& root, InferRequest& request) {
  DYNVM_ASSIGN_OR_RETURN(const std::optional<bool> binary_outputs,
                         BoolParameter(root, "binary_data_output", "request"));
  request.binary_outputs = binary_outputs.value_or(false);
  const auto outputs = root.find("outputs");
  if (outputs == root.end()) return absl::OkStatus();
  if (!outputs->is_array()) return absl::InvalidArgumentError("'outputs' must be an array");
  for (size_t i = 0; i < outputs->size(); ++i) {
    const json& output = (*outputs)[i];
    const auto name = output.is_object() ? output.find("name") : output.end();
    if (!output.is_object() || name == output.end() || !name->is_string()) {
      return absl::InvalidArgumentError(absl::StrFormat("outputs[%d] has no 'name' string", i));
    }
    const std::string where = absl::StrFormat("output '%s'", name->get<std::string>());
    DYNVM_ASSIGN_OR_RETURN(const std::optional<bool> binary, BoolParameter(output, "binary_data", where));
    request.outputs.push_back({name->get<std::string>(), binary});
  }
  return absl::OkStatus();
}

absl::StatusOr<InferRequest> ParseRequestJson(const InferJson& parsed, std::string_view binary,
                                              const std::shared_ptr<Allocator>& allocator) {
  const json& root = parsed.root;
  if (!root.is_object()) return absl::InvalidArgumentError("the request must be a JSON object");
  InferRequest request;
  if (const auto id = root.find("id"); id != root.end()) {
    if (!id->is_string()) return absl::InvalidArgumentError("'id' must be a string");
    request.id = id->get<std::string>();
  }
  const auto inputs = root.find("inputs");
  if (inputs == root.end() || !inputs->is_array()) {
    return absl::InvalidArgumentError("the request needs an 'inputs' array");
  }
  BinaryCursor cursor{binary, 0};
  for (size_t i = 0; i < inputs->size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(InferInput input, ParseInput((*inputs)[i], i, parsed, cursor, allocator));
    request.inputs.push_back(std::move(input));
  }
  if (cursor.offset != binary.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d bytes of binary data after the inputs' %d", binary.size() - cursor.offset, cursor.offset));
  }
  DYNVM_RETURN_IF_ERROR(ParseOutputs(root, request));
  return request;
}

// Appends the elements of `array` to `out` as a JSON array.
absl::Status AppendJsonData(const NDArrayObj& array, std::string& out) {
  out.push_back('[');
  char buffer[64];
  const DType dtype = array.dtype();
  for (int64_t i = 0; i < array.num_elements(); ++i) {
    if (i > 0) out.push_back(',');
    if (dtype == DType::kBool) {
      out.append(array.data_as<uint8_t>()[i] != 0 ? "true" : "false");
    } else if (dtype == DType::kString) {
      DYNVM_ASSIGN_OR_RETURN(const std::string_view s, StringElement(array, i));
      out.append(Quote(s));
    } else if (!IsFloatDType(dtype)) {
      out.append(IntElementText(array, i));
    } else if (const double v = ElementAsDouble(array, i); !std::isfinite(v)) {
      out.append("null");
    } else if (dtype == DType::kF32) {  // shortest text that reads back to the same float
      out.append(buffer, std::to_chars(buffer, buffer + sizeof(buffer), array.data_as<float>()[i]).ptr);
    } else if (dtype == DType::kF64) {
      out.append(buffer, std::to_chars(buffer, buffer + sizeof(buffer), v).ptr);
    } else {
      out.append(FormatElement(array, i));  // shortest for f16 / bf16
    }
  }
  out.push_back(']');
  return absl::OkStatus();
}

// Appends the elements of `array` to `out` as binary data: their bytes, or for BYTES
// each element's length (4 bytes, little-endian) and then its bytes.
absl::Status AppendBinaryData(const NDArrayObj& array, std::string& out) {
  if (array.dtype() != DType::kString) {
    out.append(static_cast<const char*>(array.data()), array.nbytes());
    return absl::OkStatus();
  }
  for (int64_t i = 0; i < array.num_elements(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(const std::string_view s, StringElement(array, i));
    const auto length = static_cast<uint32_t>(s.size());  // < 4 GiB: from a bounded request
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>(length >> (8 * b)));
    out.append(s);
  }
  return absl::OkStatus();
}

// A scalar output as the 0-d tensor the protocol can carry.
absl::StatusOr<NDArray> ScalarTensor(const Value& value, const std::shared_ptr<Allocator>& allocator) {
  const DType dtype = value.is_int() ? DType::kI64 : value.is_float() ? DType::kF64 : DType::kBool;
  DYNVM_ASSIGN_OR_RETURN(NDArray tensor, NDArrayObj::Empty({}, dtype, allocator));
  if (value.is_int()) DYNVM_RETURN_IF_ERROR(SetIntegerElement(*tensor, 0, value.int_value()));
  if (value.is_float()) SetFloatElement(*tensor, 0, value.float_value());
  if (value.is_bool()) SetBoolElement(*tensor, 0, value.bool_value());
  return tensor;
}

}  // namespace

std::string KServeDatatype(DType dtype) {
  if (dtype == DType::kString) return "BYTES";
  if (dtype == DType::kBool) return "BOOL";
  const DLDataType type = ToDLDataType(dtype);
  const char* kind = type.code == kDLFloat ? "FP" : type.code == kDLBfloat ? "BF"
                     : type.code == kDLInt ? "INT" : "UINT";
  return absl::StrCat(kind, type.bits);
}

absl::StatusOr<DType> ParseKServeDatatype(std::string_view name) {
  std::vector<std::string> names;
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto dtype = static_cast<DType>(i);
    if (KServeDatatype(dtype) == name) return dtype;
    names.push_back(KServeDatatype(dtype));
  }
  return absl::InvalidArgumentError(absl::StrFormat("unsupported datatype '%s' (supported: %s)", name,
                                                    absl::StrJoin(names, ", ")));
}

absl::StatusOr<InferRequest> ParseInferRequest(std::string_view body,
                                               std::optional<size_t> json_length,
                                               const std::shared_ptr<Allocator>& allocator) {
  const size_t length = json_length.value_or(body.size());
  if (length > body.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("%s is %d but the body has %d bytes",
                                                      kHeaderLengthHeader, length, body.size()));
  }
  DYNVM_ASSIGN_OR_RETURN(const InferJson parsed, ReadInferJson(body.substr(0, length)));
  return ParseRequestJson(parsed, body.substr(length), allocator);
}

absl::StatusOr<EncodedResponse> EncodeInferResponse(std::string_view model_name,
                                                    std::string_view id,
                                                    absl::Span<const InferOutput> outputs) {
  EncodedResponse response;
  std::string& out = response.body;
  std::string binary;
  absl::StrAppend(&out, R"({"model_name":)", Quote(model_name));
  if (!id.empty()) absl::StrAppend(&out, R"(,"id":)", Quote(id));
  out.append(R"(,"outputs":[)");
  const std::shared_ptr<Allocator> scalars = MakeNaiveAllocator();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const InferOutput& output = outputs[i];
    NDArray tensor = output.value.AsRef<NDArrayObj>();
    if (tensor.get() == nullptr) {
      if (!output.value.is_int() && !output.value.is_float() && !output.value.is_bool()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "output '%s' is a %s, which the protocol cannot carry", output.name, output.value.TypeName()));
      }
      DYNVM_ASSIGN_OR_RETURN(tensor, ScalarTensor(output.value, scalars));
    }
    absl::StrAppendFormat(&out, R"(%s{"name":%s,"datatype":"%s","shape":[%s])", i > 0 ? "," : "",
                          Quote(output.name), KServeDatatype(tensor->dtype()),
                          absl::StrJoin(tensor->shape(), ","));
    if (output.binary) {
      const size_t start = binary.size();
      DYNVM_RETURN_IF_ERROR(AppendBinaryData(*tensor, binary));
      absl::StrAppend(&out, R"(,"parameters":{"binary_data_size":)", binary.size() - start, "}}");
    } else {
      out.append(R"(,"data":)");
      DYNVM_RETURN_IF_ERROR(AppendJsonData(*tensor, out));
      out.push_back('}');
    }
  }
  out.append("]}");
  if (std::any_of(outputs.begin(), outputs.end(), [](const InferOutput& o) { return o.binary; })) {
    response.json_length = out.size();
    out.append(binary);
  }
  return response;
}

std::string ErrorBody(std::string_view message) {
  return json{{"error", message}}.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace dynvm::tools::serve
