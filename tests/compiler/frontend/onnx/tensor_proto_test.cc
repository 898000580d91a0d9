// Tests of compiler/frontend/onnx/tensor_proto.h: every element type from raw_data and
// from its typed field, external data files, TensorProto files, and every refusal.
#include "compiler/frontend/onnx/tensor_proto.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/string_tensor.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using ::onnx::TensorProto;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

TensorProto Make(TensorProto::DataType type, std::vector<int64_t> dims, std::string name = "t") {
  TensorProto t;
  t.set_name(std::move(name));
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

template <typename T>
std::vector<T> Elements(const NDArray& a) {
  const T* p = a->data_as<const T>();
  return std::vector<T>(p, p + a->num_elements());
}

std::vector<uint8_t> Bytes(const NDArray& a) {
  const auto* p = static_cast<const uint8_t*>(a->data());
  return std::vector<uint8_t>(p, p + a->nbytes());
}

// A fresh directory for this test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
    path_ = absl::StrCat(testing::TempDir(), "/tensor_proto_test_", getpid(), "_", info->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }

  const std::string& path() const { return path_; }
  // Writes `bytes` to `name` (which may have directories) under the directory.
  std::string Write(const std::string& name, std::string_view bytes) const {
    const std::filesystem::path file = std::filesystem::path(path_) / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return file.string();
  }

 private:
  std::string path_;
};

void SetExternal(TensorProto& t, std::vector<std::pair<std::string, std::string>> entries) {
  t.set_data_location(TensorProto::EXTERNAL);
  for (auto& [key, value] : entries) {
    onnx::StringStringEntryProto* e = t.add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
}

// ---------------------------------------------------------------------------------
// DTypeFromOnnx

TEST(DTypeFromOnnxTest, MapsEverySupportedType) {
  const std::pair<TensorProto::DataType, DType> cases[] = {
      {TensorProto::FLOAT, DType::kF32},   {TensorProto::DOUBLE, DType::kF64},
      {TensorProto::FLOAT16, DType::kF16}, {TensorProto::BFLOAT16, DType::kBF16},
      {TensorProto::INT8, DType::kI8},     {TensorProto::INT16, DType::kI16},
      {TensorProto::INT32, DType::kI32},   {TensorProto::INT64, DType::kI64},
      {TensorProto::UINT8, DType::kU8},    {TensorProto::BOOL, DType::kBool},
      {TensorProto::UINT16, DType::kU16},  {TensorProto::UINT32, DType::kU32},
      {TensorProto::UINT64, DType::kU64},  {TensorProto::STRING, DType::kString},
  };
  for (const auto& [onnx_type, dtype] : cases) {
    absl::StatusOr<DType> got = DTypeFromOnnx(onnx_type);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, dtype) << TensorProto::DataType_Name(onnx_type);
  }
}

TEST(DTypeFromOnnxTest, RefusesOthersNamingThem) {
  const TensorProto::DataType refused[] = {TensorProto::UNDEFINED, TensorProto::COMPLEX64,
                                           TensorProto::COMPLEX128};
  for (TensorProto::DataType type : refused) {
    absl::StatusOr<DType> got = DTypeFromOnnx(type);
    // Types ONNX defines are unsupported; UNDEFINED is invalid.
    EXPECT_EQ(got.status().code(), type == TensorProto::UNDEFINED ? absl::StatusCode::kInvalidArgument
                                                                   : absl::StatusCode::kUnimplemented);
    EXPECT_THAT(got.status().message(),
                HasSubstr(absl::StrCat("unsupported ONNX element type ",
                                       TensorProto::DataType_Name(type), " (", type, ")")));
  }
  EXPECT_EQ(DTypeFromOnnx(TensorProto::COMPLEX64).status().message(),
            "unsupported ONNX element type COMPLEX64 (14); supported: FLOAT, DOUBLE, FLOAT16, "
            "BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL, STRING");
  EXPECT_THAT(DTypeFromOnnx(999).status().message(),
              HasSubstr("unsupported ONNX element type unknown (999)"));
  EXPECT_EQ(DTypeFromOnnx(999).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---------------------------------------------------------------------------------
// raw_data

TEST(TensorFromProtoTest, EveryTypeFromRawData) {
  const std::pair<TensorProto::DataType, DType> cases[] = {
      {TensorProto::FLOAT, DType::kF32},   {TensorProto::DOUBLE, DType::kF64},
      {TensorProto::FLOAT16, DType::kF16}, {TensorProto::BFLOAT16, DType::kBF16},
      {TensorProto::INT8, DType::kI8},     {TensorProto::INT16, DType::kI16},
      {TensorProto::INT32, DType::kI32},   {TensorProto::INT64, DType::kI64},
      {TensorProto::UINT8, DType::kU8},    {TensorProto::BOOL, DType::kBool},
      {TensorProto::UINT16, DType::kU16},  {TensorProto::UINT32, DType::kU32},
      {TensorProto::UINT64, DType::kU64},  // STRING: never raw (RefusesSegmentsStrings...)
  };
  for (const auto& [onnx_type, dtype] : cases) {
    SCOPED_TRACE(TensorProto::DataType_Name(onnx_type));
    TensorProto t = Make(onnx_type, {2, 3});
    std::string raw(6 * DTypeSize(dtype), '\0');
    for (size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<char>((i * 37 + 11) % 256);
    if (dtype == DType::kBool) {
      for (char& c : raw) c &= 1;
    }
    t.set_raw_data(raw);
    absl::StatusOr<NDArray> a = TensorFromProto(t, "");
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ((*a)->dtype(), dtype);
    EXPECT_THAT((*a)->shape(), ElementsAre(2, 3));
    EXPECT_EQ(Bytes(*a), std::vector<uint8_t>(raw.begin(), raw.end()));
  }
}

TEST(TensorFromProtoTest, RawBoolBytesBecomeZeroOrOne) {
  TensorProto t = Make(TensorProto::BOOL, {4});
  t.set_raw_data(std::string("\x00\x02\xff\x01", 4));
  absl::StatusOr<NDArray> a = TensorFromProto(t, "");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Elements<uint8_t>(*a), ElementsAre(0, 1, 1, 1));
}

TEST(TensorFromProtoTest, ScalarAndEmptyTensors) {
  TensorProto scalar = Make(TensorProto::INT64, {});
  scalar.add_int64_data(-7);
  absl::StatusOr<NDArray> s = TensorFromProto(scalar, "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->ndim(), 0);
  EXPECT_THAT(Elements<int64_t>(*s), ElementsAre(-7));

  // No elements: no data at all, or an empty raw_data.
  absl::StatusOr<NDArray> empty = TensorFromProto(Make(TensorProto::FLOAT, {0, 3}), "");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT((*empty)->shape(), ElementsAre(0, 3));
  TensorProto empty_raw = Make(TensorProto::INT32, {3, 0});
  empty_raw.set_raw_data("");
  ASSERT_TRUE(TensorFromProto(empty_raw, "").ok());
}

// ---------------------------------------------------------------------------------
// Typed fields

TEST(TensorFromProtoTest, FloatData) {
  TensorProto t = Make(TensorProto::FLOAT, {3});
  for (float v : {1.5f, -2.0f, std::numeric_limits<float>::infinity()}) t.add_float_data(v);
  absl::StatusOr<NDArray> a = TensorFromProto(t, "");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->dtype(), DType::kF32);
  EXPECT_THAT(Elements<float>(*a),
              ElementsAre(1.5f, -2.0f, std::numeric_limits<float>::infinity()));
}

TEST(TensorFromProtoTest, DoubleData) {
  TensorProto t = Make(TensorProto::DOUBLE, {2});
  t.add_double_data(0.1);
  t.add_double_data(-1e300);
  absl::StatusOr<NDArray> a = TensorFromProto(t, "");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->dtype(), DType::kF64);
  EXPECT_THAT(Elements<double>(*a), ElementsAre(0.1, -1e300));
}

TEST(TensorFromProtoTest, Int64Data) {
  TensorProto t = Make(TensorProto::INT64, {2});
  t.add_int64_data(std::numeric_limits<int64_t>::min());
  t.add_int64_data(std::numeric_limits<int64_t>::max());
  absl::StatusOr<NDArray> a = TensorFromProto(t, "");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->dtype(), DType::kI64);
  EXPECT_THAT(Elements<int64_t>(*a), ElementsAre(std::numeric_limits<int64_t>::min(),
                                                 std::numeric_limits<int64_t>::max()));
}

// `values` in int32_data for `type`; the tensor's elements as unsigned bit patterns of
// the element size.
template <typename T>
std::vector<T> FromInt32Data(TensorProto::DataType type, DType dtype, std::vector<int32_t> values) {
  TensorProto t = Make(type, {static_cast<int64_t>(values.size())});
  for (int32_t v : values) t.add_int32_data(v);
  absl::StatusOr<NDArray> a = TensorFromProto(t, "");
  EXPECT_TRUE(a.ok()) << a.status();
  if (!a.ok()) return {};
  EXPECT_EQ((*a)->dtype(), dtype);
  return Elements<T>(*a);
}

TEST(TensorFromProtoTest, Int32DataForEveryTypeStoredThere) {
  EXPECT_THAT(FromInt32Data<int32_t>(TensorProto::INT32, DType::kI32,
                                     {std::numeric_limits<int32_t>::min(), 0, 5}),
              ElementsAre(std::numeric_limits<int32_t>::min(), 0, 5));
  EXPECT_THAT(FromInt32Data<int16_t>(TensorProto::INT16, DType::kI16, {-32768, -1, 32767}),
              ElementsAre(-32768, -1, 32767));
  EXPECT_THAT(FromInt32Data<int8_t>(TensorProto::INT8, DType::kI8, {-128, -1, 127}),
              ElementsAre(-128, -1, 127));
  EXPECT_THAT(FromInt32Data<uint8_t>(TensorProto::UINT8, DType::kU8, {0, 128, 255}),
              ElementsAre(0, 128, 255));
  EXPECT_THAT(FromInt32Data<uint8_t>(TensorProto::BOOL, DType::kBool, {0, 1, 1}),
              ElementsAre(0, 1, 1));
  // float16 1.0, -2.0 and a NaN; bfloat16 1.0, -inf and a NaN: their bit patterns.
  EXPECT_THAT(FromInt32Data<uint16_t>(TensorProto::FLOAT16, DType::kF16, {0x3C00, 0xC000, 0xFFFF}),
              ElementsAre(0x3C00, 0xC000, 0xFFFF));
  EXPECT_THAT(
      FromInt32Data<uint16_t>(TensorProto::BFLOAT16, DType::kBF16, {0x3F80, 0xFF80, 0x7FC0}),
      ElementsAre(0x3F80, 0xFF80, 0x7FC0));
}

TEST(TensorFromProtoTest, Int32DataOutOfRangeIsRefused) {
  const struct {
    TensorProto::DataType type;
    int32_t value;
    std::string range;
  } cases[] = {
      {TensorProto::INT8, 128, "[-128, 127]"},        {TensorProto::INT8, -129, "[-128, 127]"},
      {TensorProto::INT16, 32768, "[-32768, 32767]"}, {TensorProto::UINT8, -1, "[0, 255]"},
      {TensorProto::UINT8, 256, "[0, 255]"},          {TensorProto::BOOL, 2, "[0, 1]"},
      {TensorProto::FLOAT16, -1, "[0, 65535]"},       {TensorProto::BFLOAT16, 65536, "[0, 65535]"},
  };
  for (const auto& c : cases) {
    TensorProto t = Make(c.type, {2}, "x");
    t.add_int32_data(0);
    t.add_int32_data(c.value);
    absl::StatusOr<NDArray> a = TensorFromProto(t, "");
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(a.status().message(),
              absl::StrCat("tensor 'x': int32_data[1] = ", c.value, " is out of range for ",
                           TensorProto::DataType_Name(c.type), ": expected ", c.range));
  }
}

// ---------------------------------------------------------------------------------
// Refusals of the message itself

void ExpectInvalid(const TensorProto& t, const std::string& message) {
  absl::StatusOr<NDArray> a = TensorFromProto(t, "");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << a.status();
  EXPECT_EQ(a.status().message(), message);
}

TEST(TensorFromProtoTest, RefusesBadShapes) {
  ExpectInvalid(Make(TensorProto::FLOAT, {2, -3}, "w"),
                "tensor 'w': dim 1 of [2, -3] is negative: expected sizes >= 0");
  ExpectInvalid(Make(TensorProto::FLOAT, std::vector<int64_t>(17, 1), "w"),
                "tensor 'w' has rank 17: at most 16 is supported");
  // The element count overflows int64.
  absl::StatusOr<NDArray> count =
      TensorFromProto(Make(TensorProto::FLOAT, {int64_t{1} << 62, 4}, "w"), "");
  EXPECT_EQ(count.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(count.status().message(), HasSubstr("tensor 'w': "));
  // The count fits but the bytes do not.
  ExpectInvalid(Make(TensorProto::INT64, {int64_t{1} << 61}, "w"),
                "tensor 'w': INT64 [2305843009213693952] has more than 2^63 bytes");
}

TEST(TensorFromProtoTest, RefusesDataThatDoesNotMatchTheShape) {
  TensorProto raw = Make(TensorProto::FLOAT, {2, 3}, "w");
  raw.set_raw_data(std::string(20, '\0'));
  ExpectInvalid(raw, "tensor 'w': raw_data has 20 bytes, FLOAT [2, 3] needs 24");

  TensorProto floats = Make(TensorProto::FLOAT, {2, 3}, "w");
  for (int i = 0; i < 7; ++i) floats.add_float_data(1);
  ExpectInvalid(floats, "tensor 'w': float_data has 7 elements, FLOAT [2, 3] needs 6");

  TensorProto int32s = Make(TensorProto::INT8, {4}, "w");
  int32s.add_int32_data(1);
  ExpectInvalid(int32s, "tensor 'w': int32_data has 1 elements, INT8 [4] needs 4");

  ExpectInvalid(
      Make(TensorProto::INT64, {2}, "w"),
      "tensor 'w' (INT64 [2]) has no data: expected raw_data, int64_data or external data");
}

TEST(TensorFromProtoTest, RefusesTheWrongOrSeveralSources) {
  TensorProto wrong = Make(TensorProto::FLOAT, {1}, "w");
  wrong.add_int64_data(1);
  ExpectInvalid(wrong,
                "tensor 'w' of type FLOAT has int64_data: expected its elements in "
                "float_data or raw_data");

  TensorProto fp16 = Make(TensorProto::FLOAT16, {1}, "w");
  fp16.add_float_data(1);
  ExpectInvalid(fp16,
                "tensor 'w' of type FLOAT16 has float_data: expected its elements in "
                "int32_data or raw_data");

  TensorProto both = Make(TensorProto::FLOAT, {1}, "w");
  both.add_float_data(1);
  both.set_raw_data(std::string(4, '\0'));
  ExpectInvalid(both,
                "tensor 'w' has data in raw_data and float_data: expected exactly one source");

  TensorProto raw_and_external = Make(TensorProto::FLOAT, {1}, "w");
  raw_and_external.set_raw_data(std::string(4, '\0'));
  SetExternal(raw_and_external, {{"location", "w.bin"}});
  ExpectInvalid(raw_and_external,
                "tensor 'w' has data in raw_data and external data: expected exactly one source");
}

TEST(TensorFromProtoTest, RefusesSegmentsStringsAndUnsupportedTypes) {
  TensorProto segment = Make(TensorProto::FLOAT, {4}, "w");
  segment.mutable_segment()->set_begin(0);
  segment.mutable_segment()->set_end(2);
  segment.add_float_data(1);
  segment.add_float_data(2);
  ExpectInvalid(
      segment,
      "tensor 'w' is segment [0, 2) of a larger tensor: segmented tensors are not supported");

  // Strings are in string_data, one per element, and nowhere else.
  TensorProto strings = Make(TensorProto::STRING, {2}, "s");
  strings.add_string_data("hello");
  ExpectInvalid(strings, "tensor 's': string_data has 1 elements, STRING [2] needs 2");
  strings.add_string_data(std::string("w\0rld", 5));
  absl::StatusOr<NDArray> read = TensorFromProto(strings, "");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)->dtype(), DType::kString);
  EXPECT_EQ(StringElement(**read, 0).value_or("?"), "hello");
  EXPECT_EQ(StringElement(**read, 1).value_or("?"), std::string("w\0rld", 5));
  strings.set_raw_data("xy");
  ExpectInvalid(strings, "tensor 's' has data in raw_data and string_data: expected exactly one "
                         "source");
  strings.clear_string_data();
  ExpectInvalid(strings, "tensor 's' of type STRING has raw_data: expected its elements in "
                         "string_data");

  TensorProto complex = Make(TensorProto::COMPLEX64, {1}, "c");
  complex.add_float_data(1);
  complex.add_float_data(2);
  EXPECT_THAT(TensorFromProto(complex, "").status().message(),
              HasSubstr("tensor 'c': unsupported ONNX element type COMPLEX64 (14)"));

  TensorProto undefined;
  undefined.add_dims(1);
  EXPECT_THAT(TensorFromProto(undefined, "").status().message(),
              HasSubstr("unnamed tensor: unsupported ONNX element type UNDEFINED (0)"));
}

// ---------------------------------------------------------------------------------
// External data

std::string FloatBytes(std::vector<float> values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

TEST(TensorFromProtoTest, ExternalDataAtAnOffset) {
  TempDir dir;
  dir.Write("weights.bin", "pad!" + FloatBytes({1, 2, 3, 4}) + "tail");
  TensorProto t = Make(TensorProto::FLOAT, {2, 2}, "w");
  SetExternal(
      t, {{"location", "weights.bin"}, {"offset", "4"}, {"length", "16"}, {"checksum", "ignored"}});
  absl::StatusOr<NDArray> a = TensorFromProto(t, dir.path());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Elements<float>(*a), ElementsAre(1, 2, 3, 4));
}

TEST(TensorFromProtoTest, ExternalDataWholeFileAndSubdirectories) {
  TempDir dir;
  dir.Write("data/w.bin", FloatBytes({5, 6}));
  for (const std::string location : {"data/w.bin", "./data/w.bin", "data/../data/w.bin"}) {
    SCOPED_TRACE(location);
    TensorProto t = Make(TensorProto::FLOAT, {2}, "w");
    SetExternal(t, {{"location", location}});
    absl::StatusOr<NDArray> a = TensorFromProto(t, dir.path());
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_THAT(Elements<float>(*a), ElementsAre(5, 6));
  }
  // Offset without length: to the end of the file.
  TensorProto t = Make(TensorProto::FLOAT, {1}, "w");
  SetExternal(t, {{"location", "data/w.bin"}, {"offset", "4"}});
  absl::StatusOr<NDArray> a = TensorFromProto(t, dir.path());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Elements<float>(*a), ElementsAre(6));
}

TEST(TensorFromProtoTest, ExternalBoolBytesBecomeZeroOrOne) {
  TempDir dir;
  dir.Write("b.bin", std::string("\x00\x07\x01", 3));
  TensorProto t = Make(TensorProto::BOOL, {3}, "b");
  SetExternal(t, {{"location", "b.bin"}});
  absl::StatusOr<NDArray> a = TensorFromProto(t, dir.path());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Elements<uint8_t>(*a), ElementsAre(0, 1, 1));
}

// `t` (FLOAT [2], external) with `entries`, read against `dir`.
absl::Status External(const TempDir& dir,
                      std::vector<std::pair<std::string, std::string>> entries) {
  TensorProto t = Make(TensorProto::FLOAT, {2}, "w");
  SetExternal(t, std::move(entries));
  return TensorFromProto(t, dir.path()).status();
}

TEST(TensorFromProtoTest, ExternalLocationsOutsideTheModelDirectoryAreRefused) {
  TempDir dir;
  dir.Write("w.bin", FloatBytes({1, 2}));
  const std::string abs = dir.path() + "/w.bin";
  EXPECT_EQ(External(dir, {{"location", abs}}).message(),
            absl::StrCat("tensor 'w': external_data location '", abs,
                         "' is absolute: expected a path relative to the model's directory"));
  for (const std::string location : {"../w.bin", "sub/../../w.bin", ".."}) {
    const absl::Status s = External(dir, {{"location", location}});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), absl::StrCat("tensor 'w': external_data location '", location,
                                        "' leaves the model's directory"));
  }
  EXPECT_EQ(External(dir, {{"location", ""}}).message(),
            "tensor 'w': external_data location is empty");
  EXPECT_EQ(External(dir, {{"location", std::string("w.bin\0x", 7)}}).message(),
            "tensor 'w': external_data location contains a NUL byte");
}

TEST(TensorFromProtoTest, BadExternalDataEntriesAreRefused) {
  TempDir dir;
  dir.Write("w.bin", FloatBytes({1, 2}));
  EXPECT_EQ(External(dir, {}).message(),
            "tensor 'w': data_location is EXTERNAL but external_data has no location");
  EXPECT_EQ(External(dir, {{"location", "w.bin"}, {"basepath", "/"}}).message(),
            "tensor 'w': unknown external_data key 'basepath': expected location, offset, "
            "length or checksum");
  EXPECT_EQ(External(dir, {{"location", "w.bin"}, {"location", "w.bin"}}).message(),
            "tensor 'w': external_data key 'location' given twice");
  EXPECT_EQ(External(dir, {{"location", "w.bin"}, {"offset", "-1"}}).message(),
            "tensor 'w': external_data offset '-1' is not a non-negative integer");
  EXPECT_EQ(External(dir, {{"location", "w.bin"}, {"length", "8x"}}).message(),
            "tensor 'w': external_data length '8x' is not a non-negative integer");

  TensorProto default_location = Make(TensorProto::FLOAT, {2}, "w");
  default_location.add_float_data(1);
  default_location.add_float_data(2);
  default_location.add_external_data()->set_key("location");
  ExpectInvalid(default_location,
                "tensor 'w' has external_data entries but data_location is not EXTERNAL");
}

TEST(TensorFromProtoTest, ExternalRangesAreCheckedAgainstTheFile) {
  TempDir dir;
  const std::string path = dir.Write("w.bin", FloatBytes({1, 2, 3}));  // 12 bytes
  EXPECT_EQ(External(dir, {{"location", "w.bin"}, {"offset", "13"}}).message(),
            absl::StrCat("tensor 'w': external_data offset 13 is past the end of '", path,
                         "' (12 bytes)"));
  EXPECT_EQ(External(dir, {{"location", "w.bin"}, {"offset", "8"}, {"length", "8"}}).message(),
            absl::StrCat("tensor 'w': external_data offset 8 + length 8 runs past the end of '",
                         path, "' (12 bytes)"));
  EXPECT_EQ(
      External(dir, {{"location", "w.bin"}}).message(),
      absl::StrCat("tensor 'w': external data in '", path, "' has 12 bytes, FLOAT [2] needs 8"));
  EXPECT_EQ(
      External(dir, {{"location", "w.bin"}, {"length", "4"}}).message(),
      absl::StrCat("tensor 'w': external data in '", path, "' has 4 bytes, FLOAT [2] needs 8"));
  EXPECT_TRUE(External(dir, {{"location", "w.bin"}, {"offset", "4"}}).ok());
}

TEST(TensorFromProtoTest, MissingOrOddExternalFiles) {
  TempDir dir;
  const absl::Status missing = External(dir, {{"location", "nope.bin"}});
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.message(), HasSubstr("tensor 'w': external data: cannot open '"));
  EXPECT_THAT(missing.message(), HasSubstr("nope.bin'"));

  std::filesystem::create_directories(dir.path() + "/d");
  const absl::Status directory = External(dir, {{"location", "d"}});
  EXPECT_EQ(directory.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(directory.message(), HasSubstr("d' is not a regular file"));
}

// ---------------------------------------------------------------------------------
// ReadTensorProtoFile

TEST(ReadTensorProtoFileTest, ReadsASerializedTensor) {
  TempDir dir;
  TensorProto t = Make(TensorProto::INT32, {2, 2}, "x");
  for (int v : {1, -2, 3, -4}) t.add_int32_data(v);
  const std::string path = dir.Write("input_0.pb", t.SerializeAsString());
  absl::StatusOr<NDArray> a = ReadTensorProtoFile(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->dtype(), DType::kI32);
  EXPECT_THAT((*a)->shape(), ElementsAre(2, 2));
  EXPECT_THAT(Elements<int32_t>(*a), ElementsAre(1, -2, 3, -4));
}

TEST(ReadTensorProtoFileTest, Uint16DeclaredBFloat16IsReadAsBFloat16Bits) {
  TempDir dir;
  TensorProto t = Make(TensorProto::UINT16, {3}, "x");
  for (int bits : {0x3f80, 0xc000, 0x7fc0}) t.add_int32_data(bits);  // 1, -2, NaN
  const std::string path = dir.Write("input_0.pb", t.SerializeAsString());
  absl::StatusOr<NDArray> a = ReadTensorProtoFile(path, TensorProto::BFLOAT16);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->dtype(), DType::kBF16);
  EXPECT_THAT(Elements<uint16_t>(*a), ElementsAre(0x3f80, 0xc000, 0x7fc0));
  // Without the declaration (or with another) UINT16 is u16.
  for (std::optional<int32_t> declared : {std::optional<int32_t>(), std::optional<int32_t>(TensorProto::FLOAT)}) {
    absl::StatusOr<NDArray> u = ReadTensorProtoFile(path, declared);
    ASSERT_TRUE(u.ok()) << u.status();
    EXPECT_EQ((*u)->dtype(), DType::kU16);
  }
}

TEST(ReadTensorProtoFileTest, ExternalDataIsRelativeToTheFile) {
  TempDir dir;
  dir.Write("set/w.bin", FloatBytes({7, 8}));
  TensorProto t = Make(TensorProto::FLOAT, {2}, "w");
  SetExternal(t, {{"location", "w.bin"}});
  absl::StatusOr<NDArray> a = ReadTensorProtoFile(dir.Write("set/w.pb", t.SerializeAsString()));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(Elements<float>(*a), ElementsAre(7, 8));
}

TEST(ReadTensorProtoFileTest, ErrorsNameTheFile) {
  TempDir dir;
  const absl::StatusOr<NDArray> missing = ReadTensorProtoFile(dir.path() + "/none.pb");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("cannot open '" + dir.path() + "/none.pb'"));

  EXPECT_EQ(ReadTensorProtoFile(dir.path()).status().message(),
            absl::StrCat("'", dir.path(), "' is not a regular file"));
  // A FIFO with no writer is refused, not waited on.
  const std::string fifo = dir.path() + "/fifo.pb";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_EQ(ReadTensorProtoFile(fifo).status().message(),
            absl::StrCat("'", fifo, "' is not a regular file"));

  // A length-delimited field that claims 5 bytes and has 2.
  const std::string truncated = dir.Write("bad.pb", std::string("\x0a\x05\x01\x02", 4));
  const absl::StatusOr<NDArray> bad = ReadTensorProtoFile(truncated);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            absl::StrCat("'", truncated,
                         "' is not a serialized onnx TensorProto: protobuf parsing failed"));

  TensorProto t = Make(TensorProto::FLOAT, {2}, "y");
  t.add_float_data(1);
  const std::string short_data = dir.Write("short.pb", t.SerializeAsString());
  EXPECT_EQ(ReadTensorProtoFile(short_data).status().message(),
            absl::StrCat(short_data, ": tensor 'y': float_data has 1 elements, FLOAT [2] needs 2"));

  // An empty file parses as a tensor with no type.
  const std::string empty = dir.Write("empty.pb", "");
  EXPECT_THAT(ReadTensorProtoFile(empty).status().message(),
              HasSubstr(": unnamed tensor: unsupported ONNX element type UNDEFINED (0)"));
}

TEST(ReadTensorProtoFileTest, RefusesFilesTooLargeForProtobuf) {
  TempDir dir;
  const std::string path = dir.path() + "/huge.pb";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const bool sparse = ::ftruncate(fd, off_t{1} << 31) == 0;  // no blocks written
  ::close(fd);
  if (!sparse) GTEST_SKIP() << "cannot make a 2 GiB sparse file here";
  const absl::StatusOr<NDArray> a = ReadTensorProtoFile(path);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(a.status().message(),
            absl::StrCat("'", path,
                         "' has 2147483648 bytes: a TensorProto file may have at most 2147483647"));
}

// The files ONNX's own backend tests use, when the package is installed.
TEST(ReadTensorProtoFileTest, ReadsOnnxTestData) {
  const std::string dir = "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "libonnx-testdata is not installed";
  absl::StatusOr<NDArray> x = ReadTensorProtoFile(dir + "/input_0.pb");
  absl::StatusOr<NDArray> y = ReadTensorProtoFile(dir + "/output_0.pb");
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(y.ok()) << y.status();
  ASSERT_EQ((*x)->dtype(), DType::kF32);
  ASSERT_EQ((*x)->shape(), (*y)->shape());
  const std::vector<float> xs = Elements<float>(*x), ys = Elements<float>(*y);
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], std::abs(xs[i])) << i;
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
