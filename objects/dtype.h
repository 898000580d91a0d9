// Element types of tensors and their conversions to DLPack and to text.
//
// Short names (f32, i64, bool, ...) are what the CLIs, the assembler and .npy handling
// use; `DType` is what NDArray stores and what kernels switch on.
//
//   absl::StatusOr<DType> t = ParseDType("f32");   // DType::kF32
//   DTypeSize(DType::kBF16) == 2
#ifndef DYNVM_OBJECTS_DTYPE_H_
#define DYNVM_OBJECTS_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "dlpack/dlpack.h"

namespace dynvm {

// The values are part of the executable file format: append only.
enum class DType : uint8_t {
  kF32 = 0,
  kF64 = 1,
  kF16 = 2,
  kBF16 = 3,
  kI8 = 4,
  kI16 = 5,
  kI32 = 6,
  kI64 = 7,
  kU8 = 8,
  kBool = 9,
  kU16 = 10,
  kU32 = 11,
  kU64 = 12,
  // Text (ONNX's STRING): each element a pointer to a string its storage keeps alive
  // (objects/string_tensor.h). Not a number: arithmetic and DLPack have none.
  kString = 13,
};
inline constexpr int kNumDTypes = 14;

// DLPack 0.6 (Debian's) predates kDLBool; this is the code later DLPack versions and
// PyTorch use for bool, one byte per element.
inline constexpr uint8_t kDLBoolCode = 6;

// Bytes per element.
size_t DTypeSize(DType dtype);
// The short name: "f32", "bf16", "bool", ...
std::string_view DTypeName(DType dtype);
// The long name, numpy's for every dtype numpy has: "float32", "bfloat16", "bool", ...
std::string_view DTypeLongName(DType dtype);
// Parses a short name; also accepts the long forms "float32", "int64", "uint8".
absl::StatusOr<DType> ParseDType(std::string_view name);
// Whether `raw` is the numeric value of a DType (for validating untrusted files).
bool IsValidDType(uint32_t raw);

// kString maps to kDLOpaqueHandle, which no consumer reads as text: exporters refuse
// string tensors before they get here.
DLDataType ToDLDataType(DType dtype);
// Maps a DLPack type with one lane to ours (never to kString: foreign pointers are not
// strings); others are InvalidArgument.
absl::StatusOr<DType> FromDLDataType(DLDataType type);

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_DTYPE_H_
