// The fixed 64-byte header at offset 0 of an executable file, and its encoding.
//
// The header is read with explicit little-endian byte loads (never by casting the file's
// bytes to a struct), so an unaligned or truncated buffer cannot cause undefined
// behaviour. docs/file-format.md draws the layout; this file is its one implementation,
// shared by the writer, the reader and the tests that craft malformed files.
//
//   FileHeader h = {.metadata_offset = 64, .metadata_size = n, ...};
//   std::array<uint8_t, kHeaderSize> bytes = EncodeFileHeader(h);
//   absl::StatusOr<FileHeader> back = DecodeFileHeader(bytes);
#ifndef DYNVM_SERIALIZER_INTERNAL_FILE_HEADER_H_
#define DYNVM_SERIALIZER_INTERNAL_FILE_HEADER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace dynvm::serializer::internal {

// The first eight bytes of every executable file.
inline constexpr std::string_view kMagic = "DYNVMEXE";
// Bytes of the fixed header; the FlatBuffer starts at or after this offset.
inline constexpr size_t kHeaderSize = 64;
// Alignment of the weights section's file offset and of every tensor inside it.
inline constexpr uint64_t kWeightsAlignment = 64;
// Alignment of the FlatBuffer's file offset: FlatBuffers aligns scalars to their size
// relative to the buffer start, so the start must be 8-aligned for reads to be aligned.
inline constexpr uint64_t kMetadataAlignment = 8;

// The header's fields; offsets and sizes are in bytes from the start of the file.
struct FileHeader {
  uint32_t major_version = 0;   // a reader rejects a major version it does not know
  uint32_t minor_version = 0;   // a reader accepts any minor version of its major
  uint64_t metadata_offset = 0; // where the FlatBuffer (executable.fbs) starts
  uint64_t metadata_size = 0;   // its size
  uint64_t weights_offset = 0;  // where the weights section starts; 64-aligned
  uint64_t weights_size = 0;    // its size
};

// The 64 header bytes of `header`: magic, the fields in the order above, little-endian,
// then 16 reserved zero bytes.
std::array<uint8_t, kHeaderSize> EncodeFileHeader(const FileHeader& header);

// Reads the header at the start of `bytes`. Checks only what the header alone can tell:
// size, magic and major version (`expected_major`). Section bounds are the caller's.
absl::StatusOr<FileHeader> DecodeFileHeader(absl::Span<const uint8_t> bytes,
                                            uint32_t expected_major);

// `value` rounded up to a multiple of `alignment` (a power of two); false on overflow.
inline bool AlignUp(uint64_t value, uint64_t alignment, uint64_t* out) {
  if (value > UINT64_MAX - (alignment - 1)) return false;
  *out = (value + alignment - 1) & ~(alignment - 1);
  return true;
}

}  // namespace dynvm::serializer::internal

#endif  // DYNVM_SERIALIZER_INTERNAL_FILE_HEADER_H_
