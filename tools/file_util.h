// Whole-file input for the command-line tools.
//
//   absl::StatusOr<std::string> text = ReadFileOrStdin(path);   // "-" reads stdin
#ifndef DYNVM_TOOLS_FILE_UTIL_H_
#define DYNVM_TOOLS_FILE_UTIL_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace dynvm::tools {

// The largest text the tools read (Relay text, assembly): 1 GiB.
inline constexpr size_t kMaxTextFileBytes = size_t{1} << 30;

// Everything `path` holds, or everything on stdin when `path` is "-". Errors name the
// file ("<stdin>" for stdin) and carry the system's reason, with the status code it
// implies (NotFound, PermissionDenied, ...); more than `max_bytes` is
// ResourceExhausted, found at most 64 KiB past the limit.
absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path,
                                            size_t max_bytes = kMaxTextFileBytes);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_FILE_UTIL_H_
