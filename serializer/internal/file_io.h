// File access shared by the executable and .npy code: read-only mappings whose lifetime
// is an object, and whole-file writes that replace the destination atomically.
//
//   DYNVM_ASSIGN_OR_RETURN(MappedFile file, MapFile("exe.fbs"));
//   Use(file.bytes);                       // valid while file.owner (or a copy) lives
//   DYNVM_RETURN_IF_ERROR(WriteFile("out.npy", {header, data}));
#ifndef DYNVM_SERIALIZER_INTERNAL_FILE_IO_H_
#define DYNVM_SERIALIZER_INTERNAL_FILE_IO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/object.h"

namespace dynvm::serializer::internal {

// A whole file mapped read-only.
struct MappedFile {
  // The file's bytes; empty (and possibly null) for an empty file.
  absl::Span<const uint8_t> bytes;
  // Unmaps the file when its last reference goes (an OpaqueObj); null for an empty
  // file. Storages that view `bytes` must hold a reference to it.
  ObjectRef<Object> owner;
};

// Maps the regular file at `path` read-only and private. The mapping starts on a page
// boundary. Errors (open, fstat, not a regular file, mmap) name `path` and carry the
// errno text, with the status code errno implies (NotFound, PermissionDenied, ...).
// The file must not be truncated while mapped: reading past its new end raises SIGBUS,
// as with any mmap.
absl::StatusOr<MappedFile> MapFile(const std::string& path);

// Writes the concatenation of `pieces` to `path`. A regular (or missing) file is
// replaced atomically: the bytes go to `path`.tmp, which is then renamed over `path`,
// so a reader never sees a half-written file. Other destinations (/dev/stdout, a pipe)
// are written in place. Errors name the file and carry the errno text.
absl::Status WriteFile(const std::string& path,
                       absl::Span<const absl::Span<const uint8_t>> pieces);

}  // namespace dynvm::serializer::internal

#endif  // DYNVM_SERIALIZER_INTERNAL_FILE_IO_H_
