// DType names, sizes, text and DLPack conversions (objects/dtype.h).
#include "objects/dtype.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm {
namespace {

struct DTypeInfo {
  std::string_view name;
  std::string_view long_name;
  size_t size;
  uint8_t dl_code;
};

// Indexed by DType's value.
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"f32", "float32", 4, kDLFloat},
    {"f64", "float64", 8, kDLFloat},
    {"f16", "float16", 2, kDLFloat},
    {"bf16", "bfloat16", 2, kDLBfloat},
    {"i8", "int8", 1, kDLInt},
    {"i16", "int16", 2, kDLInt},
    {"i32", "int32", 4, kDLInt},
    {"i64", "int64", 8, kDLInt},
    {"u8", "uint8", 1, kDLUInt},
    {"bool", "bool", 1, kDLBoolCode},
    {"u16", "uint16", 2, kDLUInt},
    {"u32", "uint32", 4, kDLUInt},
    {"u64", "uint64", 8, kDLUInt},
    {"string", "string", sizeof(void*), kDLOpaqueHandle},
}};

const DTypeInfo& Info(DType dtype) { return kInfo[static_cast<size_t>(dtype)]; }

}  // namespace

size_t DTypeSize(DType dtype) { return Info(dtype).size; }
std::string_view DTypeName(DType dtype) { return Info(dtype).name; }
std::string_view DTypeLongName(DType dtype) { return Info(dtype).long_name; }
bool IsValidDType(uint32_t raw) { return raw < kNumDTypes; }

absl::StatusOr<DType> ParseDType(std::string_view name) {
  for (size_t i = 0; i < kInfo.size(); ++i) {
    if (name == kInfo[i].name || name == kInfo[i].long_name) return static_cast<DType>(i);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown dtype '%s': expected one of f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, "
      "u32, u64, bool, string",
      name));
}

DLDataType ToDLDataType(DType dtype) {
  const DTypeInfo& info = Info(dtype);
  return DLDataType{info.dl_code, static_cast<uint8_t>(info.size * 8), 1};
}

absl::StatusOr<DType> FromDLDataType(DLDataType type) {
  if (type.lanes == 1) {
    for (size_t i = 0; i < kInfo.size(); ++i) {
      if (static_cast<DType>(i) == DType::kString) continue;
      if (kInfo[i].dl_code == type.code && kInfo[i].size * 8 == type.bits) {
        return static_cast<DType>(i);
      }
    }
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("unsupported DLPack dtype (code=%d, bits=%d, lanes=%d)", type.code,
                      type.bits, type.lanes));
}

}  // namespace dynvm
