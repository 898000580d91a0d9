// Tests of the #[metadata] reader (compiler/frontend/relay_text/metadata.h): tensors
// encoded and sections laid out the way TVM writes them, every dtype we read at ranks
// 0 to 3 (zero-sized ones too), a section TVM printed, and each malformed input with
// its message.
#include "compiler/frontend/relay_text/metadata.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/frontend/relay_text/parser.h"
#include "dlpack/dlpack.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/dtype.h"

namespace dynvm::compiler {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMagic = 0xDD5E40F096B4A13F;
constexpr std::string_view kPrefix = "model.relay: metadata: ";

// One tensor in TVM's NDArray binary format (SaveDLTensor). The fields are public so
// that tests can break them; ndim and the byte size default to what shape and data say.
struct TvmTensor {
  uint64_t magic = kMagic;
  int32_t device_type = kDLCPU;
  std::optional<int32_t> ndim;
  uint8_t code = kDLFloat;
  uint8_t bits = 32;
  uint16_t lanes = 1;
  std::vector<int64_t> shape;
  std::optional<int64_t> byte_size;
  std::string data;

  std::string Bytes() const {
    std::string out;
    Append(out, magic);
    Append(out, uint64_t{0});  // reserved
    Append(out, device_type);
    Append(out, int32_t{0});  // device id
    Append(out, ndim.value_or(static_cast<int32_t>(shape.size())));
    Append(out, code);
    Append(out, bits);
    Append(out, lanes);
    for (int64_t dim : shape) Append(out, dim);
    Append(out, byte_size.value_or(static_cast<int64_t>(data.size())));
    return out + data;
  }
  std::string Base64() const { return absl::Base64Escape(Bytes()); }

  template <typename T>
  static void Append(std::string& out, T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
  }
};

// A tensor of `code` and `bits` (DLPack's), `shape` and the raw bytes `data`.
TvmTensor Tensor(uint8_t code, uint8_t bits, std::vector<int64_t> shape, std::string data = "") {
  TvmTensor t;
  t.code = code;
  t.bits = bits;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// One node of TVM's JSON graph: attrs are strings, references are node indices.
struct Node {
  std::string type_key;
  std::vector<std::pair<std::string, std::string>> attrs = {};
  std::vector<std::string> keys = {};
  std::vector<int> data = {};
  std::string repr_str = {};
};

// The graph as dmlc's JSONWriter prints it (TVM's layout, down to the ", " line ends).
std::string WriteGraph(int root, const std::vector<Node>& nodes,
                       const std::vector<std::string>& b64ndarrays) {
  auto quote = [](const std::string& s) { return "\"" + s + "\""; };
  std::vector<std::string> printed;
  for (const Node& node : nodes) {
    std::vector<std::string> fields = {
        absl::StrCat("      \"type_key\": ", quote(node.type_key))};
    if (!node.repr_str.empty()) {
      fields.push_back(absl::StrCat("      \"repr_str\": ", quote(node.repr_str)));
    }
    if (!node.attrs.empty()) {
      std::vector<std::string> attrs;
      for (const auto& [key, value] : node.attrs) {
        attrs.push_back(absl::StrCat("        ", quote(key), ": ", quote(value)));
      }
      fields.push_back(
          absl::StrCat("      \"attrs\": {\n", absl::StrJoin(attrs, ", \n"), "\n      }"));
    }
    if (!node.keys.empty()) {
      std::vector<std::string> keys;
      for (const std::string& key : node.keys) keys.push_back("        " + quote(key));
      fields.push_back(
          absl::StrCat("      \"keys\": [\n", absl::StrJoin(keys, ", \n"), "\n      ]"));
    }
    if (!node.data.empty()) {
      fields.push_back(absl::StrCat("      \"data\": [", absl::StrJoin(node.data, ", "), "]"));
    }
    printed.push_back(absl::StrCat("    {\n", absl::StrJoin(fields, ", \n"), "\n    }"));
  }
  std::vector<std::string> arrays;
  for (const std::string& b64 : b64ndarrays) arrays.push_back("    " + quote(b64));
  return absl::StrCat("{\n  \"root\": ", root, ", \n  \"nodes\": [\n",
                      absl::StrJoin(printed, ", \n"), "\n  ], \n  \"b64ndarrays\": [\n",
                      absl::StrJoin(arrays, ", \n"),
                      "\n  ], \n  \"attrs\": {\"tvm_version\": \"0.19.0\"}\n}");
}

// What TVM prints for constants whose tensors are `b64ndarrays` and whose "data" attrs
// are `data_attrs`, with the nodes it prints beside them: null first, a SourceName
// array under another key, and the span and virtual device every constant carries.
std::string Section(const std::vector<std::string>& b64ndarrays,
                    const std::vector<std::string>& data_attrs) {
  const int first = 5;
  const int count = static_cast<int>(data_attrs.size());
  const int span = first + count, device = span + 1, scope = span + 2;
  std::vector<Node> nodes = {
      {""},
      {"Map", {}, {"SourceName", "relay.Constant"}, {2, 4}},
      {"Array", {}, {}, {3}},
      {"SourceName", {}, {}, {}, "from_string"},
      {"Array"},
  };
  for (int i = 0; i < count; ++i) {
    nodes[4].data.push_back(first + i);
    nodes.push_back({"relay.Constant",
                     {{"_checked_type_", "0"},
                      {"data", data_attrs[i]},
                      {"span", absl::StrCat(span)},
                      {"virtual_device_", absl::StrCat(device)}}});
  }
  nodes.push_back({"Span",
                   {{"column", "3"}, {"end_column", "26"}, {"end_line", "2"}, {"line", "2"},
                    {"source_name", "3"}}});
  nodes.push_back({"VirtualDevice",
                   {{"device_type_int", "-1"}, {"memory_scope", absl::StrCat(scope)},
                    {"target", "0"}, {"virtual_device_id", "-1"}}});
  nodes.push_back({"runtime.String"});
  return WriteGraph(/*root=*/1, nodes, b64ndarrays);
}

// A section of one constant per tensor, in order.
std::string SectionOf(const std::vector<TvmTensor>& tensors) {
  std::vector<std::string> b64, data;
  for (size_t i = 0; i < tensors.size(); ++i) {
    b64.push_back(tensors[i].Base64());
    data.push_back(absl::StrCat(i));
  }
  return Section(b64, data);
}

absl::StatusOr<std::vector<NDArray>> Parse(std::string_view json) {
  return ParseRelayMetadata(json, "model.relay");
}

std::string Contents(const NDArray& array) {
  return std::string(static_cast<const char*>(array->data()), array->nbytes());
}

TEST(RelayMetadataTest, ReadsTvmsPrintedLayout) {
  const TvmTensor weights = Tensor(kDLFloat, 32, {2, 3}, RawBytes<float>({1, 2, 3, 4, 5, 6}));
  const std::string json = SectionOf({weights});
  ASSERT_THAT(json, HasSubstr("\"type_key\": \"relay.Constant\", \n      \"attrs\": {\n"
                              "        \"_checked_type_\": \"0\", \n        \"data\": \"0\""));
  absl::StatusOr<std::vector<NDArray>> constants = Parse("\n" + json + "\n");
  ASSERT_TRUE(constants.ok()) << constants.status();
  ASSERT_EQ(constants->size(), 1u);
  const NDArray& w = (*constants)[0];
  EXPECT_EQ(w->dtype(), DType::kF32);
  EXPECT_EQ(w->shape(), (Shape{2, 3}));
  const float* p = w->data_as<float>();
  EXPECT_EQ(std::vector<float>(p, p + 6), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// A program as TVM's astext() saves it, the weights in its section, parses with them
// and compiles unchanged; the section and constants beside the text are not both given.
TEST(RelayMetadataTest, ProgramsCarryTheirWeights) {
  const std::string json = SectionOf({Tensor(kDLFloat, 32, {2}, RawBytes<float>({0.5f, -1.0f})),
                                      Tensor(kDLInt, 64, {}, RawBytes<int64_t>({7}))});
  const std::string text = "#[version = \"0.0.5\"]\n"
                           "def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
                           "  add(%x, meta[relay.Constant][0] /* ty=Tensor[(2), float32] */)\n"
                           "}\n\n#[metadata]\n" + json + "\n";
  absl::StatusOr<Module> mod = ParseModule(text, {}, "model.relay");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const Expr weight = mod->Function("main")->body().args()[1];
  ASSERT_EQ(weight.kind(), ExprKind::kConstant);
  EXPECT_EQ(std::vector<float>(weight.value()->data_as<float>(), weight.value()->data_as<float>() + 2),
            (std::vector<float>{0.5f, -1.0f}));
  EXPECT_THAT(std::string(ParseModule(text, {weight.value()}, "model.relay").status().message()),
              HasSubstr("model.relay: a #[metadata] section and 1 constants beside the text"));
  // A reference past the section's constants is the parser's error.
  const std::string past = "def @main() { meta[relay.Constant][2] }\n#[metadata]\n" + json;
  EXPECT_THAT(std::string(ParseModule(past, {}, "model.relay").status().message()),
              HasSubstr("meta[relay.Constant][2] is out of range: 2 constants given"));
  // A malformed section is its reader's error.
  EXPECT_THAT(std::string(ParseModule("def @main() { 1 }\n#[metadata]\n{", {}, "model.relay").status().message()),
              HasSubstr("model.relay: metadata: malformed JSON"));
}

// Every dtype at ranks 0 to 3, zero-sized shapes included, as one section whose
// constants come back in order.
TEST(RelayMetadataTest, RoundTripsEveryDTypeAndRank) {
  struct Case {
    uint8_t code, bits;
    DType dtype;
  };
  const std::vector<Case> dtypes = {
      {kDLFloat, 32, DType::kF32}, {kDLFloat, 64, DType::kF64},  {kDLFloat, 16, DType::kF16},
      {kDLBfloat, 16, DType::kBF16}, {kDLInt, 8, DType::kI8},    {kDLInt, 16, DType::kI16},
      {kDLInt, 32, DType::kI32},   {kDLInt, 64, DType::kI64},    {kDLUInt, 8, DType::kU8},
      {kDLUInt, 16, DType::kU16},  {kDLUInt, 32, DType::kU32},   {kDLUInt, 64, DType::kU64},
      {kDLUInt, 1, DType::kBool},  {kDLBoolCode, 8, DType::kBool},
  };
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {5}, {2, 0, 3}, {2, 3}, {1, 2, 3},
                                                    {2, 3, 4}, {0, 0}};
  std::vector<TvmTensor> tensors;
  std::vector<DType> expected_dtypes;
  for (const Case& c : dtypes) {
    for (const std::vector<int64_t>& shape : shapes) {
      TvmTensor t = Tensor(c.code, c.bits, shape);
      int64_t count = 1;
      for (int64_t dim : shape) count *= dim;
      const size_t elem = DTypeSize(c.dtype);
      for (int64_t i = 0; i < count * static_cast<int64_t>(elem); ++i) {
        const int64_t element = i / static_cast<int64_t>(elem);
        t.data.push_back(c.dtype == DType::kBool
                             ? static_cast<char>(element % 3 == 1)
                             : static_cast<char>((i * 37 + tensors.size() * 11 + 5) & 0xff));
      }
      tensors.push_back(std::move(t));
      expected_dtypes.push_back(c.dtype);
    }
  }
  absl::StatusOr<std::vector<NDArray>> constants = Parse(SectionOf(tensors));
  ASSERT_TRUE(constants.ok()) << constants.status();
  ASSERT_EQ(constants->size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("constant ", i, ": ", std::string(DTypeName(expected_dtypes[i])),
                              " ", ShapeToString(tensors[i].shape)));
    const NDArray& c = (*constants)[i];
    EXPECT_EQ(c->dtype(), expected_dtypes[i]);
    EXPECT_EQ(std::vector<int64_t>(c->shape().begin(), c->shape().end()), tensors[i].shape);
    EXPECT_EQ(Contents(c), tensors[i].data);
  }
}

TEST(RelayMetadataTest, ReadsValuesOfEachWidth) {
  const std::vector<TvmTensor> tensors = {
      Tensor(kDLFloat, 64, {2}, RawBytes<double>({-0.5, 1e300})),
      Tensor(kDLInt, 64, {}, RawBytes<int64_t>({-(int64_t{1} << 40)})),
      Tensor(kDLInt, 32, {3}, RawBytes<int32_t>({-7, 0, 1 << 30})),
      Tensor(kDLInt, 8, {2}, RawBytes<int8_t>({-128, 127})),
      Tensor(kDLUInt, 8, {1, 1}, RawBytes<uint8_t>({255})),
      // float16 1.0 and -2.0.
      Tensor(kDLFloat, 16, {2}, RawBytes<uint16_t>({0x3C00, 0xC000})),
  };
  absl::StatusOr<std::vector<NDArray>> c = Parse(SectionOf(tensors));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0]->data_as<double>()[1], 1e300);
  EXPECT_EQ(*(*c)[1]->data_as<int64_t>(), -(int64_t{1} << 40));
  EXPECT_EQ((*c)[2]->data_as<int32_t>()[0], -7);
  EXPECT_EQ((*c)[3]->data_as<int8_t>()[0], -128);
  EXPECT_EQ((*c)[4]->data_as<uint8_t>()[0], 255);
  EXPECT_EQ((*c)[5]->data_as<uint16_t>()[1], 0xC000);
}

// TVM's bool is a 1-bit uint stored a byte an element; any non-zero byte is true.
TEST(RelayMetadataTest, NormalisesBools) {
  for (uint8_t code : {uint8_t{kDLUInt}, kDLBoolCode}) {
    const TvmTensor flags = Tensor(code, code == kDLUInt ? 1 : 8, {4},
                                   std::string("\x00\x01\x02\xff", 4));
    absl::StatusOr<std::vector<NDArray>> c = Parse(SectionOf({flags}));
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ((*c)[0]->dtype(), DType::kBool);
    EXPECT_EQ(Contents((*c)[0]), std::string("\x00\x01\x01\x01", 4));
  }
}

// The array's order, not b64ndarrays', numbers the constants; constants that share a
// tensor share an NDArray; tensors no constant uses are not read.
TEST(RelayMetadataTest, ConstantsFollowTheArrayOrder) {
  const std::vector<std::string> b64 = {
      Tensor(kDLInt, 32, {}, RawBytes<int32_t>({10})).Base64(),
      Tensor(kDLInt, 32, {}, RawBytes<int32_t>({11})).Base64(),
      "not base64 and never read",
      Tensor(kDLInt, 32, {}, RawBytes<int32_t>({13})).Base64(),
  };
  absl::StatusOr<std::vector<NDArray>> c = Parse(Section(b64, {"3", "0", "1", "0"}));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 4u);
  std::vector<int32_t> values;
  for (const NDArray& a : *c) values.push_back(*a->data_as<int32_t>());
  EXPECT_EQ(values, (std::vector<int32_t>{13, 10, 11, 10}));
  EXPECT_EQ((*c)[1].get(), (*c)[3].get());
}

TEST(RelayMetadataTest, NoConstantsIsNoTensors) {
  const std::string only_names = WriteGraph(
      1, {{""}, {"Map", {}, {"SourceName"}, {2}}, {"Array", {}, {}, {3}},
          {"SourceName", {}, {}, {}, "from_string"}},
      {});
  absl::StatusOr<std::vector<NDArray>> c = Parse(only_names);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->empty());
  c = Parse(R"({"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map"}]})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->empty());
  // An empty constant array (keys with no values in TVM's writer).
  c = Parse(WriteGraph(1, {{""}, {"Map", {}, {"relay.Constant"}, {2}}, {"Array"}}, {}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->empty());
}

// A section TVM printed (astext), copied from apache/tvm's
// tests/python/contrib/test_ethosu/test_legalize.py at commit 17150f70d4 (June 2023,
// Apache-2.0): twelve int32 constants that share one VirtualDevice, among
// them an empty tensor and a 256-entry lookup table. The test wrote it on one line.
constexpr std::string_view kTvmPrintedSection =
    R"({  "root": 1,   "nodes": [    {      "type_key": ""    },     {      "type_key": "Map",       "keys": [        "relay.Constant"      ],       "data": [2]    },     {      "type_key": "Array",       "data": [        3,         6,         7,         8,         9,         10,         11,         12,         13,         14,         15,         16      ]    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "0",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "VirtualDevice",       "attrs": {        "device_type_int": "-1",         "memory_scope": "5",         "target": "0",         "virtual_device_id": "-1"      }    },     {      "type_key": "runtime.String"    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "1",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "2",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "3",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "4",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "5",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "6",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "7",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "8",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "9",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "10",         "span": "0",         "virtual_device_": "4"      }    },     {      "type_key": "relay.Constant",       "attrs": {        "_checked_type_": "0",         "data": "11",         "span": "0",         "virtual_device_": "4"      }    }  ],   "b64ndarrays": [    "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAAgAQAAAAAAAAAAAAAAAAAAAAAA",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAAgAQAAAQAAAAAAAAAEAAAAAAAAOAljBu1edgYu74kGq7qdBhbCsQYmBsYGkIfaBg5H7wZcRQQHOIMZB2IBLwecwEQHq8FaB1gFcQdrjIcHsVeeB/hntQcRvswHzVrkBwI//AeHaxQIN+EsCDehRQjiq14IYAJ4CJWlkQhplqsIxtXFCJZk4AjPQ/sIYnQWCUX3MQlxzU0J4vdpCZZ3hgmSTaMJ1XrACW8A3gln3/sJyxgaCq2tOAofn1cKOe52CnCclgo2qrYKDhnXChnq9wp+HhkLa7c6Cw+2XAucG38LS+mhC1IgxQv5wegLfc8MDCZKMQw9M1YMEox7DPZVoQw+kscMQkLuDGVnFQ0FAz0NhxZlDcijjQ1Zq7YNKC/gDaowCg5WsTQOs7JfDkM2iw6OPbcOI8rjDpXdEA98eT4Pd59sDyFRmw8rkMoPPF76DwW9KhA8rlsQmjONEN9OvxDQAfIQMU4lEW02WRE0u40RBN/CEbqj+BE8Cy8ScxdmElLKnRLMJdYS5ysPE6PeSBMLQIMTL1K+EyYX+hMPkTYUC8JzFECssRTpUfAUNrUvFWbYbxW5vbAVemfyFfrXNBZQEngWcRe8Fo7qABcNjkYXYwSNFwtQ1BeJcxwYbHFlGEdMrxiwBvoYWqNFGekkkhkUjt8ZmOEtGjkifRrFUs0aEHYeG/KOcBtdoMMbOK0XHHi4bBwSxsIcQtcZHRbwcR2mE8sdEEUlHpGHgB5a3twerkw6H9vVmB84ffgfKEZZIBc0uyB0Sh4h0YyCIbL+5yGro04iX3+2IneVHyOp6YkjtX/1I1tbYiS6gdAkVvQ/JWq4sCXt0SIm5kSWJmQVCyeJR4Endt/4J3rhcSjTUewo0zRoKeCO5SlnZGQq5LnkKuKTZivu9ukrweduLARr9Sx0hX0t3zsHLh6Tki6tkR8vbTmuLxyRPjDjndAw3WRkMT7r+TFNNpEyY0sqM+cvxTNV6WE0KH0ANRnxoDXISkM28o/nNmfGjTcI9DU4xh7gOKVMjDmpgzo6FMrqOg8mnTvgnVE88DkIPeb8wD1O73s+vRc5P858+D9gJbpAOxh+QUtcREKR+AxDKPTXQztWpUQQJnVF8GpHRm4sHEf9cfNHO0PNSNinqUmep4hKakpqSzCYTkzmmDVNbVcfTg3XC0/KIvtPEkPtUGtA4lF5I9pS+/TUU7y90lTahtNVWVnXVmY+3ldQP+hYgWX1WX26BVvlRxlcYRcwXfoySl6NpGdfLnaIYAuyrGFvYtRiEpX/YyFOLmW/m2Bm6IiWZ2sg0GhWbQ1q33pOa1lUk2xBBdxtN5kob+IbeXBgmc1xpB0mc9y0gnRca+N1nk1Idz5osXj9xx56oXmQe3KKBn19B4F+////fw==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAADAAAAA==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAAQAAAA==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAAAAAQA==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAA////fw==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAxMPDww==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAWlpaWg==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAAAAAIA==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAABAAAAA==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAAgAAAA==",     "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAABAAAAAAgAQABAAAAAAAAAAEAAAAAAAAAAQAAAAAAAAABAAAAAAAAAAQAAAAAAAAAIwAAAA=="  ]})";

TEST(RelayMetadataTest, ReadsASectionTvmPrinted) {
  absl::StatusOr<std::vector<NDArray>> c = Parse(kTvmPrintedSection);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->size(), 12u);
  for (const NDArray& a : *c) EXPECT_EQ(a->dtype(), DType::kI32);
  EXPECT_EQ((*c)[0]->shape(), (Shape{0}));
  EXPECT_EQ((*c)[1]->shape(), (Shape{256}));
  const int32_t* lut = (*c)[1]->data_as<int32_t>();
  EXPECT_EQ(lut[0], 107153720);
  EXPECT_EQ(lut[1], 108420845);
  EXPECT_EQ(lut[255], 2147483647);
  int64_t sum = 0;
  for (int i = 0; i < 256; ++i) sum += lut[i];
  EXPECT_EQ(sum, 174685340766);
  const std::vector<int32_t> scalars = {12,         1,          1073741824, 2147483647, -1010580540,
                                        1515870810, 536870912, 4,          2,          35};
  for (size_t i = 0; i < scalars.size(); ++i) {
    EXPECT_EQ((*c)[i + 2]->shape(), (Shape{1, 1, 1, 1})) << i;
    EXPECT_EQ(*(*c)[i + 2]->data_as<int32_t>(), scalars[i]) << i;
  }
}

// --- Malformed input ---

void ExpectError(const absl::StatusOr<std::vector<NDArray>>& result, std::string_view message) {
  ASSERT_FALSE(result.ok()) << "expected: " << message;
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), StartsWith(std::string(kPrefix)));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(std::string(message)));
}

TEST(RelayMetadataTest, RejectsMalformedGraphs) {
  const std::string b64 = Tensor(kDLFloat, 32, {}, RawBytes<float>({1})).Base64();
  EXPECT_EQ(Parse(R"({"root": 1, "nodes": [)").status().message(),
            "model.relay: metadata: malformed JSON at byte 23: syntax error while parsing "
            "value - unexpected end of input; expected '[', '{', or a literal");
  ExpectError(Parse(R"({"root": 1, "nodes": [}, "b64ndarrays": []})"),
              "malformed JSON at byte 23: syntax error while parsing value - unexpected '}'");
  ExpectError(Parse(""), "malformed JSON at byte 1");
  ExpectError(Parse("[1, 2]"), "the section is [1,2], expected a JSON object");
  ExpectError(Parse(R"({"root": 1})"), "no \"nodes\" array: expected TVM's JSON object graph");
  ExpectError(Parse(R"({"root": 1, "nodes": {}})"), "no \"nodes\" array");
  ExpectError(Parse(R"({"nodes": [{"type_key": ""}]})"),
              "no \"root\": expected the index of the root map");
  ExpectError(Parse(R"({"root": 7, "nodes": [{"type_key": ""}, {"type_key": "Map"}]})"),
              "the root is node 7, out of range: nodes has 2");
  ExpectError(Parse(R"({"root": -1, "nodes": []})"), "the root is -1, expected a node index");
  ExpectError(Parse(R"({"root": "1", "nodes": []})"), "the root is \"1\", expected a node index");
  ExpectError(Parse(R"({"root": 1, "nodes": [{"type_key": ""}, 5]})"),
              "node 1 is 5, expected an object");
  ExpectError(Parse(WriteGraph(1, {{""}, {"Array", {}, {}, {0}}}, {})),
              "the root is a 'Array', expected a Map");
  ExpectError(
      Parse(R"({"root": 1, "nodes": [{}, {"type_key": "Map", "keys": ["relay.Constant"]}]})"),
              "the root map has 1 keys and 0 values, expected string keys each with its value");
  ExpectError(
      Parse(R"({"root": 1, "nodes": [{}, {"type_key": "Map", "keys": "relay.Constant"}]})"),
              "the root map's \"keys\" is \"relay.Constant\", expected an array");
  ExpectError(Parse(WriteGraph(1, {{""}, {"Map", {}, {"relay.Constant"}, {9}}}, {})),
              "meta[relay.Constant] is node 9, out of range: nodes has 2");
  ExpectError(Parse(WriteGraph(1, {{""}, {"Map", {}, {"relay.Constant"}, {0}}}, {})),
              "meta[relay.Constant] is a '', expected an Array");
  ExpectError(Parse(WriteGraph(
                  1, {{""}, {"Map", {}, {"relay.Constant"}, {2}}, {"Array", {}, {}, {42}}}, {b64})),
              "meta[relay.Constant][0] is node 42, out of range: nodes has 3");
  ExpectError(Parse(WriteGraph(
                  1, {{""}, {"Map", {}, {"relay.Constant"}, {2}}, {"Array", {}, {}, {1}}}, {b64})),
              "meta[relay.Constant][0] is a 'Map', expected a relay.Constant");
  ExpectError(Parse(WriteGraph(1,
                               {{""}, {"Map", {}, {"relay.Constant"}, {2}}, {"Array", {}, {}, {3}},
                                {"relay.Constant", {{"span", "0"}}}},
                               {b64})),
              "meta[relay.Constant][0] has no attrs.data: expected its tensor's index");
  // The second constant is the broken one: the message names it.
  ExpectError(Parse(Section({b64}, {"0", "1"})),
              "meta[relay.Constant][1]'s data is tensor 1, out of range: b64ndarrays has 1");
  ExpectError(Parse(Section({b64}, {"18446744073709551615"})),
              "meta[relay.Constant][0]'s data is tensor 18446744073709551615, out of range");
  for (const char* bad : {"x1", "-1", "", " 1", "1 ", "+1", "0x1", "1.0",
                                "18446744073709551616"}) {
    SCOPED_TRACE(bad);
    ExpectError(Parse(Section({b64}, {bad})),
                absl::StrCat("meta[relay.Constant][0]'s data is \"", bad,
                             "\", expected a tensor index as a decimal string"));
  }
  const std::string number_data = R"({"root": 1, "nodes": [{}, {"type_key": "Map", "keys":
      ["relay.Constant"], "data": [2]}, {"type_key": "Array", "data": [3]},
      {"type_key": "relay.Constant", "attrs": {"data": 0}}], "b64ndarrays": [")" + b64 + "\"]}";
  ExpectError(Parse(number_data),
              "meta[relay.Constant][0]'s data is 0, expected a tensor index as a decimal string");
  const std::string no_tensors = WriteGraph(
      1, {{""}, {"Map", {}, {"relay.Constant"}, {2}}, {"Array", {}, {}, {3}},
          {"relay.Constant", {{"data", "0"}}}},
      {});
  ExpectError(Parse(no_tensors), "data is tensor 0, out of range: b64ndarrays has 0");
}

// A section of one constant whose tensor is `b64`.
std::string OneTensor(std::string b64) { return Section({std::move(b64)}, {"0"}); }

TEST(RelayMetadataTest, RejectsMalformedTensors) {
  const TvmTensor good = Tensor(kDLFloat, 32, {2, 3}, RawBytes<float>({1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(Parse(OneTensor(good.Base64())).ok());
  ExpectError(Parse(OneTensor("P6G0lvBAXt0!!")), "b64ndarrays[0] is not base64");
  ExpectError(Parse(OneTensor("P6G0lvBAXt0AAAAA=A==")), "b64ndarrays[0] is not base64");

  auto expect = [](TvmTensor t, std::string_view message) {
    ExpectError(Parse(OneTensor(t.Base64())), "b64ndarrays[0]: " + std::string(message));
  };
  TvmTensor t = good;
  t.magic = 1;
  expect(t, "magic 0x0000000000000001, expected 0xdd5e40f096b4a13f (a TVM NDArray)");
  t = good;
  t.device_type = 2;
  expect(t, "device type 2, expected 1 (the CPU)");
  t = good;
  t.byte_size = 20;
  expect(t, "data byte size 20, expected 24 for float32 [2, 3]");
  t = good;
  t.byte_size = -24;
  expect(t, "data byte size -24, expected 24 for float32 [2, 3]");
  t = good;
  t.data += "extra";
  t.byte_size = 24;
  expect(t, "trailing bytes: 29 bytes of data after the 56-byte header, expected 24");
  t = good;
  t.data.resize(10);
  t.byte_size = 24;
  expect(t, "truncated: 10 bytes of data after the 56-byte header, expected 24");
  // A huge claimed tensor with 4 bytes behind it: refused before anything is allocated.
  t = Tensor(kDLFloat, 32, {int64_t{1} << 40}, "abcd");
  t.byte_size = int64_t{4} << 40;
  expect(t, "truncated: 4 bytes of data after the 48-byte header, expected 4398046511104");
  t = good;
  t.shape = {2, -3};
  t.byte_size = 0;
  expect(t, "negative dimension in shape [2, -3]");
  t = good;
  t.ndim = -1;
  expect(t, "rank -1, expected 0 to 16");
  t = Tensor(kDLFloat, 32, std::vector<int64_t>(17, 1), RawBytes<float>({1}));
  expect(t, "rank 17, expected 0 to 16");
  t = Tensor(kDLFloat, 32, {int64_t{1} << 40, int64_t{1} << 40});
  expect(t, "element count of shape [1099511627776, 1099511627776] overflows");
  t = Tensor(kDLFloat, 64, {int64_t{1} << 61, 2});
  expect(t, "byte size of float64 [2305843009213693952, 2] overflows");
  t = good;
  t.lanes = 4;
  expect(t, "vector dtype (code 2, bits 32, lanes 4): expected lanes 1");
  t = good;
  t.code = kDLComplex;
  t.bits = 64;
  expect(t, "unsupported dtype (code 5, bits 64): expected float16/32/64, bfloat16, "
            "int8/16/32/64, uint8/16/32/64 or bool");
  t = good;
  t.code = kDLInt;
  t.bits = 4;
  expect(t, "unsupported dtype (code 0, bits 4)");
  t = good;
  t.code = kDLOpaqueHandle;
  t.bits = 64;
  expect(t, "unsupported dtype (code 3, bits 64)");
  ExpectError(Parse(Section({"5"}, {"0"})), "b64ndarrays[0] is not base64");
}

// Every prefix of a valid tensor is an error naming the field it stops in, never a
// read past the end.
TEST(RelayMetadataTest, RejectsEveryTruncation) {
  const std::string bytes =
      Tensor(kDLInt, 64, {3}, RawBytes<int64_t>({1, 2, 3})).Bytes();
  ASSERT_EQ(bytes.size(), 48u + 24u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    ExpectError(Parse(OneTensor(absl::Base64Escape(bytes.substr(0, n)))), "truncated");
  }
  ExpectError(Parse(OneTensor(absl::Base64Escape(bytes.substr(0, 30)))),
              "b64ndarrays[0]: truncated at byte 30 in the dtype lanes: 30 bytes, expected 32");
}

// Random corruptions of a tensor's bytes and of the JSON text are errors or tensors,
// never a crash (the sanitizer build runs this).
TEST(RelayMetadataTest, SurvivesRandomCorruption) {
  const std::string bytes =
      Tensor(kDLInt, 16, {2, 3}, RawBytes<int16_t>({1, -2, 3, -4, 5, -6})).Bytes();
  const std::string json = OneTensor(absl::Base64Escape(bytes));
  std::mt19937 rng(/*seed=*/7);
  for (int i = 0; i < 3000; ++i) {
    std::string b = bytes;
    for (int k = 0, n = 1 + static_cast<int>(rng() % 4); k < n; ++k) {
      b[rng() % b.size()] = static_cast<char>(rng());
    }
    if (rng() % 4 == 0) b.resize(rng() % (b.size() + 1));
    absl::StatusOr<std::vector<NDArray>> c = Parse(OneTensor(absl::Base64Escape(b)));
    if (!c.ok()) {
      EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
    }

    std::string j = json;
    j[rng() % j.size()] = "{}[]\",:0123456789x- "[rng() % 20];
    c = Parse(j);
    if (!c.ok()) {
      EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << j;
    }
  }
}

}  // namespace
}  // namespace dynvm::compiler
