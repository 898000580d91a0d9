// Encoding and checking of the executable file's 64-byte header
// (serializer/internal/file_header.h).
#include "serializer/internal/file_header.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "serializer/internal/little_endian.h"

namespace dynvm::serializer::internal {
namespace {

// Field offsets inside the header; docs/file-format.md has the same table.
constexpr size_t kMajorAt = 8;
constexpr size_t kMinorAt = 12;
constexpr size_t kMetadataOffsetAt = 16;
constexpr size_t kMetadataSizeAt = 24;
constexpr size_t kWeightsOffsetAt = 32;
constexpr size_t kWeightsSizeAt = 40;
static_assert(kWeightsSizeAt + 8 + 16 == kHeaderSize, "16 reserved bytes end the header");

}  // namespace

std::array<uint8_t, kHeaderSize> EncodeFileHeader(const FileHeader& header) {
  std::array<uint8_t, kHeaderSize> out{};
  std::memcpy(out.data(), kMagic.data(), kMagic.size());
  StoreLittleEndian(header.major_version, out.data() + kMajorAt);
  StoreLittleEndian(header.minor_version, out.data() + kMinorAt);
  StoreLittleEndian(header.metadata_offset, out.data() + kMetadataOffsetAt);
  StoreLittleEndian(header.metadata_size, out.data() + kMetadataSizeAt);
  StoreLittleEndian(header.weights_offset, out.data() + kWeightsOffsetAt);
  StoreLittleEndian(header.weights_size, out.data() + kWeightsSizeAt);
  return out;
}

absl::StatusOr<FileHeader> DecodeFileHeader(absl::Span<const uint8_t> bytes,
                                            uint32_t expected_major) {
  if (bytes.size() < kHeaderSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "file is %d bytes, smaller than the %d-byte executable header", bytes.size(),
        kHeaderSize));
  }
  if (std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    std::string_view magic(reinterpret_cast<const char*>(bytes.data()), kMagic.size());
    return absl::InvalidArgumentError(absl::StrFormat(
        "not a dynvm executable: file starts with \"%s\", expected \"%s\"",
        absl::CHexEscape(absl::string_view(magic.data(), magic.size())),
        absl::string_view(kMagic.data(), kMagic.size())));
  }
  FileHeader header;
  header.major_version = LoadLittleEndian<uint32_t>(bytes.data() + kMajorAt);
  header.minor_version = LoadLittleEndian<uint32_t>(bytes.data() + kMinorAt);
  if (header.major_version != expected_major) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "executable format version %d.%d, this runtime reads %d.x", header.major_version,
        header.minor_version, expected_major));
  }
  header.metadata_offset = LoadLittleEndian<uint64_t>(bytes.data() + kMetadataOffsetAt);
  header.metadata_size = LoadLittleEndian<uint64_t>(bytes.data() + kMetadataSizeAt);
  header.weights_offset = LoadLittleEndian<uint64_t>(bytes.data() + kWeightsOffsetAt);
  header.weights_size = LoadLittleEndian<uint64_t>(bytes.data() + kWeightsSizeAt);
  return header;
}

}  // namespace dynvm::serializer::internal
