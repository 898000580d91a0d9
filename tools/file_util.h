// Whole-file input for the command-line tools.
//
//   absl::StatusOr<std::string> text = ReadFileOrStdin(path);   // "-" reads stdin
#ifndef DYNVM_TOOLS_FILE_UTIL_H_
#define DYNVM_TOOLS_FILE_UTIL_H_

#include <string>

#include "absl/status/statusor.h"

namespace dynvm::tools {

// Everything `path` holds, or everything on stdin when `path` is "-". Errors name the
// file ("<stdin>" for stdin) and carry the system's reason, with the status code it
// implies (NotFound, PermissionDenied, ...).
absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_FILE_UTIL_H_
