// Tests of objects/dtype.h: names, sizes, parsing, and the DLPack type mapping of every
// dtype, including the rejections of types we do not have.
#include "objects/dtype.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm {
namespace {

using ::testing::HasSubstr;

struct DTypeRow {
  DType dtype;
  const char* name;
  const char* long_name;
  size_t size;
  uint8_t dl_code;
};

// Written out independently of dtype.cc's table.
const DTypeRow kRows[] = {
    {DType::kF32, "f32", "float32", 4, kDLFloat}, {DType::kF64, "f64", "float64", 8, kDLFloat},
    {DType::kF16, "f16", "float16", 2, kDLFloat}, {DType::kBF16, "bf16", "bfloat16", 2, kDLBfloat},
    {DType::kI8, "i8", "int8", 1, kDLInt},        {DType::kI16, "i16", "int16", 2, kDLInt},
    {DType::kI32, "i32", "int32", 4, kDLInt},     {DType::kI64, "i64", "int64", 8, kDLInt},
    {DType::kU8, "u8", "uint8", 1, kDLUInt},      {DType::kBool, "bool", "bool", 1, 6},
    {DType::kU16, "u16", "uint16", 2, kDLUInt},   {DType::kU32, "u32", "uint32", 4, kDLUInt},
    {DType::kU64, "u64", "uint64", 8, kDLUInt},
    {DType::kString, "string", "string", sizeof(void*), kDLOpaqueHandle},
};

TEST(DTypeTest, TableCoversEveryDType) {
  ASSERT_EQ(std::size(kRows), static_cast<size_t>(kNumDTypes));
  for (int i = 0; i < kNumDTypes; ++i) EXPECT_EQ(static_cast<int>(kRows[i].dtype), i);
}

TEST(DTypeTest, NamesSizesAndParsing) {
  for (const DTypeRow& row : kRows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(DTypeName(row.dtype), row.name);
    EXPECT_EQ(DTypeSize(row.dtype), row.size);
    absl::StatusOr<DType> parsed = ParseDType(row.name);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, row.dtype);
    absl::StatusOr<DType> parsed_long = ParseDType(row.long_name);
    ASSERT_TRUE(parsed_long.ok()) << parsed_long.status();
    EXPECT_EQ(*parsed_long, row.dtype);
  }
}

TEST(DTypeTest, ParseRejectsUnknownNames) {
  for (const char* bad : {"", "F32", "float", "int", "f128", "i32 ", "boolean"}) {
    absl::StatusOr<DType> parsed = ParseDType(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(std::string("'") + bad + "'"));
  }
}

TEST(DTypeTest, IsValidDType) {
  for (uint32_t i = 0; i < static_cast<uint32_t>(kNumDTypes); ++i) EXPECT_TRUE(IsValidDType(i));
  EXPECT_FALSE(IsValidDType(kNumDTypes));
  EXPECT_FALSE(IsValidDType(255));
  EXPECT_FALSE(IsValidDType(0xffffffffu));
}

TEST(DTypeTest, DLDataTypeRoundTrip) {
  for (const DTypeRow& row : kRows) {
    if (row.dtype == DType::kString) continue;  // FromDLDataTypeRejects
    SCOPED_TRACE(row.name);
    DLDataType dl = ToDLDataType(row.dtype);
    EXPECT_EQ(dl.code, row.dl_code);
    EXPECT_EQ(dl.bits, row.size * 8);
    EXPECT_EQ(dl.lanes, 1);
    absl::StatusOr<DType> back = FromDLDataType(dl);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, row.dtype);
  }
}

TEST(DTypeTest, FromDLDataTypeRejects) {
  const DLDataType bad[] = {
      {kDLFloat, 32, 4},   // vector lanes
      {kDLFloat, 8, 1},    // no 8-bit float
      {kDLInt, 128, 1},    // no 128-bit int
      {kDLUInt, 128, 1},   // no u128
      {kDLBfloat, 32, 1},  // bfloat is 16 bits only
      {200, 32, 1},        // unknown code
      {kDLFloat, 32, 0},   // zero lanes
      ToDLDataType(DType::kString),  // foreign pointers are no strings
  };
  for (const DLDataType& t : bad) {
    absl::StatusOr<DType> r = FromDLDataType(t);
    ASSERT_FALSE(r.ok()) << int(t.code) << " " << int(t.bits) << " " << t.lanes;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(),
                HasSubstr(absl::StrFormat("code=%d, bits=%d, lanes=%d", t.code, t.bits, t.lanes)));
  }
}

}  // namespace
}  // namespace dynvm
