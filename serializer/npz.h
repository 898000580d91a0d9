// Reading numpy's `.npz` archives (np.savez, np.savez_compressed): a zip of `.npy`
// files, each stored or deflated (zlib), zip64 extra fields included as numpy writes
// them. The weights of a Relay program come as one (`vm_compile --const=w.npz`).
//
// Every size is checked before it is used: the central directory against the bytes,
// each entry's data against its local header, the declared size against what deflate
// can expand the compressed bytes to (at most 1032x, before anything is allocated), the
// inflated size against the declared one, and each entry's CRC-32. An entry over
// kMaxNpzEntryBytes uncompressed is refused (ResourceExhausted).
//
//   DYNVM_ASSIGN_OR_RETURN(std::vector<NpzEntry> arrays, serializer::ReadNpzFile("w.npz", allocator));
//   arrays[0].name  // "arr_0" (np.savez(a, b)) or the keyword (np.savez(w=a))
#ifndef DYNVM_SERIALIZER_NPZ_H_
#define DYNVM_SERIALIZER_NPZ_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"

namespace dynvm::serializer {

inline constexpr uint64_t kMaxNpzEntryBytes = uint64_t{1} << 32;

struct NpzEntry {
  std::string name;  // the member's name without ".npy"
  NDArray array;
};

// The arrays of `.npz` bytes, in archive order (the order np.savez wrote them: its
// positional arrays arr_0, arr_1, ..., then the keyword ones). Errors name the member
// and what was wrong (not a zip, truncated, an unsupported compression method, a CRC
// mismatch, a member that is not .npy, and ParseNpy's errors).
absl::StatusOr<std::vector<NpzEntry>> ParseNpz(absl::Span<const uint8_t> bytes,
                                               const std::shared_ptr<Allocator>& allocator);
// Reads the file at `path`; errors name the file.
absl::StatusOr<std::vector<NpzEntry>> ReadNpzFile(const std::string& path,
                                                  const std::shared_ptr<Allocator>& allocator);

}  // namespace dynvm::serializer

#endif  // DYNVM_SERIALIZER_NPZ_H_
