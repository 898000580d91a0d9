// The KServe v2 codec: every dtype through JSON and binary data and back, nested data,
// and requests that must be refused with a message naming what is wrong — before
// anything large is allocated.
#include "tools/serve/inference_protocol.h"

#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "base/testing/heap_counter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "objects/string_tensor.h"
#include "tools/run/compare.h"
#include "tools/run/input_parser.h"

namespace dynvm::tools::serve {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

std::shared_ptr<Allocator> TestAllocator() {
  static const auto* allocator = new std::shared_ptr<Allocator>(MakeNaiveAllocator());
  return *allocator;
}

// One dtype's test tensor: inline text (tools/run/input_parser.h) and the same
// elements as JSON.
struct DTypeCase {
  DType dtype;
  std::string inline_text;
  std::string json_data;
};

std::vector<DTypeCase> Cases() {
  return {
      {DType::kF32, "2x2xf32=0.1,-1.5,3e10,0", "[0.1,-1.5,3e10,0]"},
      {DType::kF64, "2x2xf64=0.1,-1.5,1e300,-0", "[0.1,-1.5,1e300,-0.0]"},
      {DType::kF16, "2x2xf16=0.1,-1.5,65504,0", "[0.1,-1.5,65504,0]"},
      {DType::kBF16, "2x2xbf16=0.1,-1.5,3e38,0", "[0.1,-1.5,3e38,0]"},
      {DType::kI8, "2x2xi8=-128,127,0,5", "[-128,127,0,5]"},
      {DType::kI16, "2x2xi16=-32768,32767,0,5", "[-32768,32767,0,5]"},
      {DType::kI32, "2x2xi32=-2147483648,2147483647,0,5", "[-2147483648,2147483647,0,5]"},
      {DType::kI64, "2x2xi64=-9223372036854775808,9223372036854775807,0,5",
       "[-9223372036854775808,9223372036854775807,0,5]"},
      {DType::kU8, "2x2xu8=0,255,1,5", "[0,255,1,5]"},
      {DType::kU16, "2x2xu16=0,65535,1,5", "[0,65535,1,5]"},
      {DType::kU32, "2x2xu32=0,4294967295,1,5", "[0,4294967295,1,5]"},
      {DType::kU64, "2x2xu64=0,18446744073709551615,1,5", "[0,18446744073709551615,1,5]"},
      {DType::kBool, "2x2xbool=true,false,false,true", "[true,false,false,true]"},
  };
}

std::string OneInput(std::string_view datatype, std::string_view shape, std::string_view data) {
  return absl::StrFormat(R"({"inputs":[{"name":"x","datatype":"%s","shape":%s,"data":%s}]})", datatype,
                         shape, data);
}

// Requests that must be refused, and words their message must contain.
struct BadCase {
  std::string body;
  std::string message;
};

absl::StatusOr<InferRequest> Parse(std::string_view body, std::optional<size_t> json_length = std::nullopt) {
  return ParseInferRequest(body, json_length, TestAllocator());
}

// The tensor `text` (an inline tensor) as NDArray.
NDArray Inline(const std::string& text) {
  absl::StatusOr<NDArray> t = ParseInlineTensor(text, TestAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

// A response read back as a request: outputs have the form of inputs.
std::vector<InferInput> ReadBack(const EncodedResponse& response) {
  const size_t length = response.json_length.value_or(response.body.size());
  json root = json::parse(response.body.substr(0, length));
  const std::string as_request =
      json{{"inputs", root["outputs"]}}.dump() + response.body.substr(length);
  absl::StatusOr<InferRequest> request =
      Parse(as_request, response.json_length ? std::optional<size_t>(as_request.size() - (response.body.size() - length))
                                             : std::nullopt);
  EXPECT_TRUE(request.ok()) << request.status();
  return request.ok() ? std::move(request->inputs) : std::vector<InferInput>{};
}

TEST(InferenceProtocolTest, EveryDTypeRoundTripsThroughJson) {
  for (const DTypeCase& c : Cases()) {
    SCOPED_TRACE(DTypeName(c.dtype));
    absl::StatusOr<InferRequest> request = Parse(OneInput(KServeDatatype(c.dtype), "[2,2]", c.json_data));
    ASSERT_TRUE(request.ok()) << request.status();
    ASSERT_EQ(request->inputs.size(), 1u);
    const NDArray expected = Inline(c.inline_text);
    EXPECT_EQ(CompareValue(Value(expected), Value(request->inputs[0].tensor), {0, 0}), std::nullopt);

    absl::StatusOr<EncodedResponse> response =
        EncodeInferResponse("m", "id7", {{InferOutput{"y", Value(expected), false}}});
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_FALSE(response->json_length.has_value());
    const json root = json::parse(response->body);
    EXPECT_EQ(root["model_name"], "m");
    EXPECT_EQ(root["id"], "id7");
    EXPECT_EQ(root["outputs"][0]["datatype"], KServeDatatype(c.dtype));
    EXPECT_EQ(root["outputs"][0]["shape"], json::array({2, 2}));
    const std::vector<InferInput> back = ReadBack(*response);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(CompareValue(Value(expected), Value(back[0].tensor), {0, 0}), std::nullopt);
  }
}

TEST(InferenceProtocolTest, EveryDTypeRoundTripsThroughBinaryData) {
  for (const DTypeCase& c : Cases()) {
    SCOPED_TRACE(DTypeName(c.dtype));
    const NDArray expected = Inline(c.inline_text);
    const std::string header = absl::StrFormat(
        R"({"inputs":[{"name":"x","datatype":"%s","shape":[2,2],"parameters":{"binary_data_size":%d}}]})",
        KServeDatatype(c.dtype), expected->nbytes());
    const std::string body = header + std::string(static_cast<const char*>(expected->data()), expected->nbytes());
    absl::StatusOr<InferRequest> request = Parse(body, header.size());
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(CompareValue(Value(expected), Value(request->inputs[0].tensor), {0, 0}), std::nullopt);

    absl::StatusOr<EncodedResponse> response =
        EncodeInferResponse("m", "", {{InferOutput{"y", Value(expected), true}}});
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_TRUE(response->json_length.has_value());
    EXPECT_EQ(response->body.size(), *response->json_length + expected->nbytes());
    EXPECT_EQ(std::memcmp(response->body.data() + *response->json_length, expected->data(), expected->nbytes()), 0);
    const json root = json::parse(response->body.substr(0, *response->json_length));
    EXPECT_FALSE(root.contains("id"));
    EXPECT_EQ(root["outputs"][0]["parameters"]["binary_data_size"], expected->nbytes());
    EXPECT_FALSE(root["outputs"][0].contains("data"));
  }
}

TEST(InferenceProtocolTest, NestedDataEqualsFlat) {
  absl::StatusOr<InferRequest> nested = Parse(OneInput("INT32", "[2,3]", "[[1,2,3],[4,5,6]]"));
  absl::StatusOr<InferRequest> flat = Parse(OneInput("INT32", "[2,3]", "[1,2,3,4,5,6]"));
  ASSERT_TRUE(nested.ok()) << nested.status();
  ASSERT_TRUE(flat.ok()) << flat.status();
  EXPECT_EQ(CompareValue(Value(flat->inputs[0].tensor), Value(nested->inputs[0].tensor)), std::nullopt);
  EXPECT_EQ(nested->inputs[0].tensor->shape(), Shape({2, 3}));
}

TEST(InferenceProtocolTest, ScalarsZeroDimAndEmptyTensors) {
  absl::StatusOr<InferRequest> scalar = Parse(OneInput("FP32", "[]", "[2.5]"));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->inputs[0].tensor->ndim(), 0);
  absl::StatusOr<InferRequest> empty = Parse(OneInput("FP32", "[0,3]", "[]"));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->inputs[0].tensor->num_elements(), 0);

  absl::StatusOr<EncodedResponse> response = EncodeInferResponse(
      "m", "", {{InferOutput{"n", Value::Int(7), false}}, {InferOutput{"b", Value::Bool(true), false}}});
  ASSERT_TRUE(response.ok()) << response.status();
  const json root = json::parse(response->body);
  EXPECT_EQ(root["outputs"][0]["datatype"], "INT64");
  EXPECT_EQ(root["outputs"][0]["shape"], json::array());
  EXPECT_EQ(root["outputs"][0]["data"], json::array({7}));
  EXPECT_EQ(root["outputs"][1]["data"], json::array({true}));
}

TEST(InferenceProtocolTest, OutputsAndIdAreRead) {
  absl::StatusOr<InferRequest> request = Parse(
      R"({"id":"r1","inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],)"
      R"("outputs":[{"name":"b","parameters":{"binary_data":true}},{"name":"a"}],)"
      R"("parameters":{"binary_data_output":false}})");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->id, "r1");
  ASSERT_EQ(request->outputs.size(), 2u);
  EXPECT_EQ(request->outputs[0].name, "b");
  EXPECT_EQ(request->outputs[0].binary, std::optional<bool>(true));
  EXPECT_EQ(request->outputs[1].binary, std::nullopt);
  EXPECT_FALSE(request->binary_outputs);
}

TEST(InferenceProtocolTest, AnOutputsBinaryDataFalseOverridesTheRequestDefault) {
  absl::StatusOr<InferRequest> request = Parse(
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],)"
      R"("outputs":[{"name":"a","parameters":{"binary_data":false}},{"name":"b"}],)"
      R"("parameters":{"binary_data_output":true}})");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->binary_outputs);
  EXPECT_EQ(request->outputs[0].binary, std::optional<bool>(false));  // stays JSON
  EXPECT_EQ(request->outputs[1].binary, std::nullopt);                // follows the request
}

TEST(InferenceProtocolTest, NumbersPastDoubleAreRefusedNotThrown) {
  // nlohmann-json throws out_of_range (not parse_error) for these.
  for (const char* data : {"[1e400]", "[-1e400]", "[1,2e999]"}) {
    absl::StatusOr<InferRequest> request;
    ASSERT_NO_THROW(request = Parse(OneInput("FP64", "[1]", data))) << data;
    ASSERT_FALSE(request.ok()) << data;
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument) << data;
    EXPECT_THAT(std::string(request.status().message()), HasSubstr("malformed JSON: number overflow")) << data;
  }
}

TEST(InferenceProtocolTest, RaggedNestingIsRefused) {
  const std::vector<BadCase> cases = {
      {OneInput("INT32", "[2,2]", "[[1,2,3],[4]]"),
       "data[0] is an array of 3, but axis 1 of shape [2, 2] needs an array of 2"},
      {OneInput("INT32", "[2,2]", "[[1,2],[3]]"), "data[1] is an array of 1, but axis 1"},
      {OneInput("INT32", "[2,3]", "[[1,2],[3,4],[5,6]]"), "data is an array of 3, but axis 0"},
      {OneInput("INT32", "[2,2]", "[[1,2],3,4]"), "data is an array of 3, but axis 0"},
      {OneInput("INT32", "[2,2]", "[[1,2],[3,[4]]]"), "data[1][1] is an array, deeper than the rank 2"},
      {OneInput("INT32", "[3,2]", "[[1,2],[3,4],5]"), "data[2] is 5, but axis 1"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<InferRequest> request = Parse(c.body);
    ASSERT_FALSE(request.ok()) << c.body;
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(request.status().message()), HasSubstr(c.message)) << c.body;
  }
  // Nested exactly, and flat, are both fine; so are empty inner axes.
  EXPECT_TRUE(Parse(OneInput("INT32", "[2,1,2]", "[[[1,2]],[[3,4]]]")).ok());
  EXPECT_TRUE(Parse(OneInput("INT32", "[2,1,2]", "[1,2,3,4]")).ok());
  EXPECT_TRUE(Parse(OneInput("INT32", "[2,0]", "[[],[]]")).ok());
}

TEST(InferenceProtocolTest, FloatsPastTheirDatatypesRangeAreRefused) {
  const std::vector<BadCase> cases = {
      {OneInput("FP32", "[2]", "[1,1e39]"), "element 1 (1e+39) of FP32 data: out of the finite range of FP32"},
      {OneInput("FP32", "[1]", "[-3.5e38]"), "out of the finite range of FP32"},
      {OneInput("FP16", "[1]", "[70000]"), "out of the finite range of FP16"},
      {OneInput("BF16", "[1]", "[1e39]"), "out of the finite range of BF16"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<InferRequest> request = Parse(c.body);
    ASSERT_FALSE(request.ok()) << c.body;
    EXPECT_THAT(std::string(request.status().message()), HasSubstr(c.message)) << c.body;
  }
  // The largest finite values (and values that round to them) are kept.
  EXPECT_TRUE(Parse(OneInput("FP32", "[2]", "[3.4028234663852886e38,-3.4028235e38]")).ok());
  EXPECT_TRUE(Parse(OneInput("FP16", "[1]", "[65504]")).ok());
  EXPECT_TRUE(Parse(OneInput("FP64", "[1]", "[1e308]")).ok());
}

TEST(InferenceProtocolTest, FloatsAreShortestAndNonFiniteIsNull) {
  const NDArray t = Inline("4xf32=0.1,nan,inf,-2");
  absl::StatusOr<EncodedResponse> response = EncodeInferResponse("m", "", {{InferOutput{"y", Value(t), false}}});
  ASSERT_TRUE(response.ok());
  EXPECT_THAT(response->body, HasSubstr(R"("data":[0.1,null,null,-2])"));
  const NDArray h = Inline("2xf16=0.1,65504");
  response = EncodeInferResponse("m", "", {{InferOutput{"y", Value(h), false}}});
  ASSERT_TRUE(response.ok());
  // 65500.0 reads back as the f16 65504: the shortest text for the dtype, as numpy's.
  EXPECT_THAT(response->body, HasSubstr(R"("data":[0.1,65500.0])"));
}

TEST(InferenceProtocolTest, BadRequestsAreRefusedWithAMessage) {
  const std::vector<BadCase> cases = {
      {"{", "malformed JSON"},
      {"[1,2]", "must be a JSON object"},
      {R"({"inputs":{}})", "'inputs' array"},
      {R"({"id":5,"inputs":[]})", "'id' must be a string"},
      {R"({"inputs":[5]})", "inputs[0] is not an object"},
      {R"({"inputs":[{"datatype":"FP32","shape":[1],"data":[1]}]})", "no 'name'"},
      {R"({"inputs":[{"name":"","datatype":"FP32","shape":[1],"data":[1]}]})", "or an empty one"},
      {OneInput("COMPLEX64", "[1]", "[1]"), "unsupported datatype 'COMPLEX64'"},
      {OneInput("BYTES", "[2]", "[\"a\", 1]"), "element 1 (1) of BYTES data: not a string"},
      {OneInput("UINT64", "[1]", "[-1]"), "out of range [0, 18446744073709551615]"},
      {OneInput("FP32", "[-1]", "[]"), "bad dim -1"},
      {OneInput("FP32", "[1.5]", "[]"), "bad dim 1.5"},
      {OneInput("FP32", "3", "[]"), "'shape' must be an array"},
      {OneInput("FP32", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[1]"), "rank 17 exceeds"},
      {OneInput("FP32", "[2,3]", "[1,2,3,4,5]"), "shape [2, 3] has 6 elements but data has 5"},
      {OneInput("FP32", "[2]", "[[[1]],[[2]]]"), "nests deeper"},
      {OneInput("FP32", "[2]", R"([1,"a"])"), "element 1 (\"a\") of FP32 data: not a number"},
      {OneInput("INT64", "[2]", "[1,1.5]"), "element 1 (1.5) of INT64 data: not an integer"},
      {OneInput("INT64", "[2]", R"([1,{"a":[1,2]}])"), "element 1 (an object) of INT64 data: not an integer"},
      {OneInput("INT64", "[2,1]", R"([[1],{"a":[1]}])"), "data[1] is an object, but axis 1 of shape [2, 1]"},
      {OneInput("BOOL", "[1]", "[null]"), "element 0 (null) of BOOL data: not true or false"},
      {OneInput("UINT8", "[1]", "[256]"), "out of range [0, 255]"},
      {OneInput("INT8", "[1]", "[-129]"), "out of range [-128, 127]"},
      {OneInput("INT64", "[1]", "[9223372036854775808]"), "out of range"},
      {OneInput("BOOL", "[1]", "[1]"), "not true or false"},
      {OneInput("FP32", "[2]", "[{},1]"), "element 0 (an object)"},
      // Element counts and byte sizes that overflow are refused before allocating.
      {OneInput("FP32", "[4294967296,4294967296]", "[]"), "overflow"},
      {OneInput("FP64", "[2305843009213693952]", "[]"), "overflows a byte size"},
      {OneInput("FP32", "[1000000000000]", "[1]"), "has 1000000000000 elements but data has 1"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1]}]})", "neither 'data' nor"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1],"parameters":{"binary_data_size":4}}]})",
       "both 'data' and"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],"outputs":[{"parameters":{}}]})",
       "outputs[0] has no 'name'"},
      {R"({"inputs":[{"name":"x","datatype":"FP32","shape":[1],"data":[1]}],"outputs":[{"name":"y","parameters":{"binary_data":1}}]})",
       "parameters.binary_data must be true or false"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<InferRequest> request = Parse(c.body);
    ASSERT_FALSE(request.ok()) << c.body;
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument) << c.body;
    EXPECT_THAT(std::string(request.status().message()), HasSubstr(c.message)) << c.body;
  }
}

std::string BinaryHeader(int64_t size, std::string_view shape = "[2]") {
  return absl::StrFormat(
      R"({"inputs":[{"name":"x","datatype":"FP32","shape":%s,"parameters":{"binary_data_size":%d}}]})", shape,
      size);
}

TEST(InferenceProtocolTest, BinaryDataMustFitTheShapeAndTheBody) {
  const std::string eight(8, '\0');
  // Overruns: the header promises more than the body holds.
  std::string header = BinaryHeader(8);
  absl::StatusOr<InferRequest> request = Parse(header + eight.substr(0, 5), header.size());
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()), HasSubstr("overruns the body"));
  // A JSON length past the end of the body.
  request = Parse(header + eight, header.size() + 100);
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()), HasSubstr("Inference-Header-Content-Length"));
  // A size that disagrees with the shape.
  header = BinaryHeader(4);
  request = Parse(header + eight.substr(0, 4), header.size());
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()), HasSubstr("binary_data_size is 4 but shape [2] of FP32 takes 8"));
  // A huge size: refused by the shape check, nothing allocated.
  header = BinaryHeader(int64_t{1} << 62, "[1152921504606846976]");
  request = Parse(header + eight, header.size());
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()), HasSubstr("overruns the body"));
  // Bytes left over after the inputs.
  header = BinaryHeader(8);
  request = Parse(header + eight + "xx", header.size());
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()), HasSubstr("2 bytes of binary data after"));
  // Negative size.
  header = BinaryHeader(-8);
  request = Parse(header + eight, header.size());
  ASSERT_FALSE(request.ok());
  EXPECT_THAT(std::string(request.status().message()), HasSubstr("binary_data_size' must be an integer"));
  // And a good one.
  header = BinaryHeader(8);
  request = Parse(header + eight, header.size());
  EXPECT_TRUE(request.ok()) << request.status();
}

TEST(InferenceProtocolTest, BinaryBoolsAreNormalized) {
  const std::string header =
      R"({"inputs":[{"name":"x","datatype":"BOOL","shape":[3],"parameters":{"binary_data_size":3}}]})";
  absl::StatusOr<InferRequest> request = Parse(header + std::string("\x00\x07\x01", 3), header.size());
  ASSERT_TRUE(request.ok()) << request.status();
  const uint8_t* p = request->inputs[0].tensor->data_as<uint8_t>();
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[1], 1);
  EXPECT_EQ(p[2], 1);
}

// String tensors are BYTES: JSON strings, or in binary each element's length (4 bytes,
// little-endian) and then its bytes.
TEST(InferenceProtocolTest, BytesRoundTripThroughJsonAndBinaryData) {
  const std::vector<std::string> texts = {"", "a", "caf\xc3\xa9", std::string("n\0ul", 4)};
  const NDArray expected = *MakeStringTensor({2, 2}, texts, TestAllocator());
  for (const bool binary : {false, true}) {
    SCOPED_TRACE(binary ? "binary" : "json");
    absl::StatusOr<EncodedResponse> response =
        EncodeInferResponse("m", "", {{InferOutput{"y", Value(expected), binary}}});
    ASSERT_TRUE(response.ok()) << response.status();
    const size_t length = response->json_length.value_or(response->body.size());
    const json root = json::parse(response->body.substr(0, length));
    EXPECT_EQ(root["outputs"][0]["datatype"], "BYTES");
    if (binary) {
      EXPECT_EQ(root["outputs"][0]["parameters"]["binary_data_size"], 4 * 4 + 0 + 1 + 5 + 4);
      EXPECT_EQ(response->body.substr(length, 9), std::string("\0\0\0\0\x01\0\0\0a", 9));
    } else {
      EXPECT_EQ(root["outputs"][0]["data"][2], "caf\xc3\xa9");
    }
    const std::vector<InferInput> back = ReadBack(*response);
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(CompareValue(Value(expected), Value(back[0].tensor)), std::nullopt);
  }
}

TEST(InferenceProtocolTest, BinaryBytesMustBeWhole) {
  const std::vector<BadCase> cases = {
      // Two elements need at least 8 bytes of lengths.
      {"\x01\0\0\0a", "BYTES elements take at least 8 bytes"},
      // The second length runs past binary_data_size.
      {std::string("\x01\0\0\0a\x09\0\0\0bc", 11), "BYTES element 1 of 9 bytes overruns"},
      // Bytes left over after the last element.
      {std::string("\0\0\0\0\0\0\0\0zz", 10), "but the 2 BYTES elements take 8"},
  };
  for (const BadCase& c : cases) {
    const std::string header = absl::StrFormat(
        R"({"inputs":[{"name":"x","datatype":"BYTES","shape":[2],"parameters":{"binary_data_size":%d}}]})",
        c.body.size());
    absl::StatusOr<InferRequest> request = Parse(header + c.body, header.size());
    ASSERT_FALSE(request.ok()) << c.message;
    EXPECT_THAT(std::string(request.status().message()), HasSubstr(c.message));
  }
}

// A JSON body costs a small multiple of its size while parsed: its inputs' data is read
// as compact tokens, not as a JSON tree (tools/serve/infer_json.h). The densest text,
// INT64 ones as "1,", against the tree nlohmann::json would build of the same body.
TEST(InferenceProtocolTest, AJsonBodyCostsASmallMultipleOfItsSize) {
  constexpr int kElements = 1000000;
  std::string body = R"({"id":"big","inputs":[{"name":"x","datatype":"INT64","shape":[1000000],"data":[1)";
  for (int i = 1; i < kElements; ++i) body += ",1";
  body += "]}]}";
  const auto peak_of = [](auto&& parse) {
    const int64_t before = dynvm::testing::HeapBytesLive();
    dynvm::testing::ResetHeapPeak();
    parse();
    return static_cast<double>(dynvm::testing::HeapBytesPeak() - before);
  };
  const double size = static_cast<double>(body.size());
  const double tree = peak_of([&] { EXPECT_TRUE(nlohmann::json::parse(body).is_object()); });
  const double ours = peak_of([&] {
    absl::StatusOr<InferRequest> request = ParseInferRequest(body, std::nullopt, MakeNaiveAllocator());
    ASSERT_TRUE(request.ok()) << request.status();
    EXPECT_EQ(request->inputs[0].tensor->data_as<int64_t>()[kElements - 1], 1);
  });
  // Through operator new: the tokens and the small tree (measured 6.8 N; the tree alone
  // 21 N). The tensor, from the allocator's aligned_alloc, is not counted (4 N here).
  EXPECT_LT(ours, 9 * size) << "peak " << ours / size << " N (the tree alone: " << tree / size << " N)";
  EXPECT_LT(ours * 2, tree) << "peak " << ours / size << " N (the tree alone: " << tree / size << " N)";
}

// Repeated keys: the last one counts, for the data as for the rest (JSON's usual
// reading), and data elsewhere in the request is not taken for an input's.
TEST(InferenceProtocolTest, RepeatedKeysTakeTheLast) {
  absl::StatusOr<InferRequest> request = ParseInferRequest(
      R"({"data":[9],"inputs":[{"name":"a","datatype":"INT64","shape":[3],"data":[1,2,3]}],)"
      R"("inputs":[{"name":"x","datatype":"INT64","shape":[2],"data":[7],"data":[[5],[6]],"shape":[2,1]}],)"
      R"("outputs":[{"name":"y","data":[1]}]})",
      std::nullopt, MakeNaiveAllocator());
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_EQ(request->inputs.size(), 1u);
  EXPECT_EQ(request->inputs[0].name, "x");
  EXPECT_EQ(request->inputs[0].tensor->shape(), (Shape{2, 1}));
  EXPECT_EQ(request->inputs[0].tensor->data_as<int64_t>()[1], 6);
  ASSERT_EQ(request->outputs.size(), 1u);
}

TEST(InferenceProtocolTest, DatatypeNames) {
  for (const DTypeCase& c : Cases()) {
    absl::StatusOr<DType> back = ParseKServeDatatype(KServeDatatype(c.dtype));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, c.dtype);
  }
  EXPECT_EQ(KServeDatatype(DType::kF32), "FP32");
  EXPECT_EQ(KServeDatatype(DType::kBool), "BOOL");
  EXPECT_FALSE(ParseKServeDatatype("fp32").ok());
}

TEST(InferenceProtocolTest, ErrorBodyIsJson) {
  EXPECT_EQ(json::parse(ErrorBody("bad \"x\"\n"))["error"], "bad \"x\"\n");
  EXPECT_TRUE(json::accept(ErrorBody("\xff invalid utf-8")));
}

}  // namespace
}  // namespace dynvm::tools::serve
