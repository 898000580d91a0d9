// The zip structures an .npz uses, read from the end: the end-of-central-directory
// record (found by scanning back over at most a 64 KiB comment; zip64's locator and
// record when numpy's entries overflow 32 bits), then each central directory entry,
// whose sizes and local-header offset (zip64 extra field 0x0001 when they are
// 0xFFFFFFFF) locate the member's data after its local header.
#include "serializer/npz.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "serializer/internal/file_io.h"
#include "serializer/internal/little_endian.h"
#include "serializer/npy.h"

namespace dynvm::serializer {
namespace {

constexpr uint32_t kEndOfCentralDirectory = 0x06054b50;
constexpr uint32_t kZip64EndLocator = 0x07064b50;
constexpr uint32_t kZip64End = 0x06064b50;
constexpr uint32_t kCentralEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kSaturated32 = 0xFFFFFFFF;

absl::Status Invalid(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrFormat("not a readable .npz: %s", what));
}

// The little-endian T at `at`, which the caller has checked lies inside `bytes`.
template <typename T>
T Load(absl::Span<const uint8_t> bytes, uint64_t at) {
  return internal::LoadLittleEndian<T>(bytes.data() + at);
}

bool Fits(absl::Span<const uint8_t> bytes, uint64_t at, uint64_t size) {
  return at <= bytes.size() && size <= bytes.size() - at;
}

struct Member {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// Where the central directory is and how many entries it has.
struct Directory {
  uint64_t offset = 0, size = 0, entries = 0;
};

absl::StatusOr<Directory> FindDirectory(absl::Span<const uint8_t> bytes) {
  if (bytes.size() < 22) return Invalid("shorter than a zip's end record");
  const uint64_t lowest = bytes.size() >= 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (uint64_t at = bytes.size() - 22;; --at) {
    if (Load<uint32_t>(bytes, at) == kEndOfCentralDirectory) {
      Directory d{Load<uint32_t>(bytes, at + 16), Load<uint32_t>(bytes, at + 12), Load<uint16_t>(bytes, at + 10)};
      const bool zip64 = d.offset == kSaturated32 || d.size == kSaturated32 || d.entries == 0xFFFF;
      if (zip64) {
        if (at < 20 || Load<uint32_t>(bytes, at - 20) != kZip64EndLocator) return Invalid("zip64 locator missing");
        const uint64_t record = Load<uint64_t>(bytes, at - 20 + 8);
        if (!Fits(bytes, record, 56) || Load<uint32_t>(bytes, record) != kZip64End) {
          return Invalid("zip64 end record out of the file");
        }
        d = {Load<uint64_t>(bytes, record + 48), Load<uint64_t>(bytes, record + 40), Load<uint64_t>(bytes, record + 32)};
      }
      if (!Fits(bytes, d.offset, d.size)) return Invalid("central directory out of the file");
      return d;
    }
    if (at == lowest) break;
  }
  return Invalid("no end of central directory record (not a zip archive)");
}

// The zip64 extra field's values for those of `m`'s sizes and offset that are saturated.
absl::Status ReadZip64Extra(absl::Span<const uint8_t> extra, Member& m) {
  for (uint64_t at = 0; at + 4 <= extra.size();) {
    const uint16_t id = Load<uint16_t>(extra, at), size = Load<uint16_t>(extra, at + 2);
    if (!Fits(extra, at + 4, size)) return Invalid(absl::StrFormat("'%s': extra field out of its entry", m.name));
    if (id == 0x0001) {
      uint64_t next = at + 4;
      for (uint64_t* field : {&m.uncompressed, &m.compressed, &m.local_offset}) {
        if (*field != kSaturated32) continue;
        if (next + 8 > at + 4 + size) return Invalid(absl::StrFormat("'%s': short zip64 field", m.name));
        *field = Load<uint64_t>(extra, next);
        next += 8;
      }
    }
    at += 4 + size;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Member>> ReadDirectory(absl::Span<const uint8_t> bytes, const Directory& d) {
  std::vector<Member> members;
  uint64_t at = d.offset;
  const uint64_t end = d.offset + d.size;
  for (uint64_t i = 0; i < d.entries; ++i) {
    if (at + 46 > end || Load<uint32_t>(bytes, at) != kCentralEntry) {
      return Invalid(absl::StrFormat("central directory entry %d malformed", i));
    }
    Member m;
    m.method = Load<uint16_t>(bytes, at + 10);
    m.crc = Load<uint32_t>(bytes, at + 16);
    m.compressed = Load<uint32_t>(bytes, at + 20);
    m.uncompressed = Load<uint32_t>(bytes, at + 24);
    const uint16_t name_len = Load<uint16_t>(bytes, at + 28), extra_len = Load<uint16_t>(bytes, at + 30),
                   comment_len = Load<uint16_t>(bytes, at + 32);
    m.local_offset = Load<uint32_t>(bytes, at + 42);
    const uint64_t next = at + 46 + name_len + extra_len + comment_len;
    if (next > end) return Invalid(absl::StrFormat("central directory entry %d runs past the directory", i));
    m.name.assign(reinterpret_cast<const char*>(bytes.data() + at + 46), name_len);
    DYNVM_RETURN_IF_ERROR(ReadZip64Extra(bytes.subspan(at + 46 + name_len, extra_len), m));
    members.push_back(std::move(m));
    at = next;
  }
  return members;
}

// The uncompressed bytes of `m`.
absl::StatusOr<std::string> Extract(absl::Span<const uint8_t> bytes, const Member& m) {
  if (m.uncompressed > kMaxNpzEntryBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat("'%s' holds %d bytes uncompressed, above the limit of %d",
                                                        m.name, m.uncompressed, kMaxNpzEntryBytes));
  }
  if (!Fits(bytes, m.local_offset, 30) || Load<uint32_t>(bytes, m.local_offset) != kLocalHeader) {
    return Invalid(absl::StrFormat("'%s': local header missing", m.name));
  }
  const uint64_t data = m.local_offset + 30 + Load<uint16_t>(bytes, m.local_offset + 26) +
                        Load<uint16_t>(bytes, m.local_offset + 28);
  if (!Fits(bytes, data, m.compressed)) return Invalid(absl::StrFormat("'%s': data runs past the file", m.name));
  const absl::Span<const uint8_t> in = bytes.subspan(data, m.compressed);
  // Every claimed size is checked against the bytes before it is allocated: a stored
  // member is its bytes, and deflate expands at most 1032 to 1 (zlib's technical details).
  if (m.method != 0 && m.method != 8) {
    return Invalid(absl::StrFormat("'%s': compression method %d (numpy writes 0, stored, or 8, deflate)", m.name,
                                   m.method));
  }
  if (m.method == 0 && m.compressed != m.uncompressed) {
    return Invalid(absl::StrFormat("'%s': stored sizes disagree (%d and %d bytes)", m.name, m.compressed,
                                   m.uncompressed));
  }
  if (m.method == 8 && m.uncompressed > m.compressed * 1032 + 64) {
    return Invalid(absl::StrFormat("'%s' claims %d bytes from %d deflated ones, more than deflate expands to",
                                   m.name, m.uncompressed, m.compressed));
  }
  std::string out(m.uncompressed, '\0');
  if (m.method == 0) {
    if (!out.empty()) std::memcpy(out.data(), in.data(), out.size());
  } else {
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) return absl::InternalError("zlib: inflateInit2 failed");
    int rc = Z_OK;
    uint64_t consumed = 0, produced = 0;
    // Chunks of at most 1 GiB (zlib's counts are 32-bit).
    while (rc == Z_OK) {
      const uint64_t in_chunk = std::min<uint64_t>(in.size() - consumed, uint64_t{1} << 30);
      const uint64_t out_chunk = std::min<uint64_t>(out.size() - produced, uint64_t{1} << 30);
      z.next_in = const_cast<Bytef*>(in.data() + consumed);
      z.avail_in = static_cast<uInt>(in_chunk);
      z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
      z.avail_out = static_cast<uInt>(out_chunk);
      rc = inflate(&z, Z_NO_FLUSH);
      consumed += in_chunk - z.avail_in;
      produced += out_chunk - z.avail_out;
      if (rc == Z_OK && z.avail_out == out_chunk && z.avail_in == in_chunk) break;  // no progress
      if (rc == Z_BUF_ERROR) break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END || produced != out.size()) {
      return Invalid(absl::StrFormat("'%s': deflate data does not inflate to its %d bytes", m.name, m.uncompressed));
    }
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < out.size();) {
    const uInt n = static_cast<uInt>(std::min<uint64_t>(out.size() - done, uint64_t{1} << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(out.data() + done), n);
    done += n;
  }
  if (crc != m.crc) return Invalid(absl::StrFormat("'%s': CRC-32 %08x, the archive says %08x", m.name, crc, m.crc));
  return out;
}

}  // namespace

absl::StatusOr<std::vector<NpzEntry>> ParseNpz(absl::Span<const uint8_t> bytes,
                                               const std::shared_ptr<Allocator>& allocator) {
  DYNVM_ASSIGN_OR_RETURN(const Directory d, FindDirectory(bytes));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Member> members, ReadDirectory(bytes, d));
  std::vector<NpzEntry> out;
  for (const Member& m : members) {
    if (m.name.size() < 4 || m.name.compare(m.name.size() - 4, 4, ".npy") != 0) {
      return Invalid(absl::StrFormat("member '%s' is not a .npy file", m.name));
    }
    DYNVM_ASSIGN_OR_RETURN(const std::string npy, Extract(bytes, m));
    absl::StatusOr<NDArray> array =
        ParseNpy(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(npy.data()), npy.size()), allocator);
    if (!array.ok()) {
      return absl::Status(array.status().code(), absl::StrFormat("'%s': %s", m.name, array.status().message()));
    }
    out.push_back({m.name.substr(0, m.name.size() - 4), *std::move(array)});
  }
  return out;
}

absl::StatusOr<std::vector<NpzEntry>> ReadNpzFile(const std::string& path,
                                                  const std::shared_ptr<Allocator>& allocator) {
  DYNVM_ASSIGN_OR_RETURN(internal::MappedFile file, internal::MapFile(path));
  absl::StatusOr<std::vector<NpzEntry>> arrays = ParseNpz(file.bytes, allocator);
  if (!arrays.ok()) {
    return absl::Status(arrays.status().code(), absl::StrFormat("%s: %s", path, arrays.status().message()));
  }
  return arrays;
}

}  // namespace dynvm::serializer
