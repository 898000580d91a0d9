// Reading a whole file, or stdin for "-", with errors that name the path (tools/file_util.h).
#include "tools/file_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace dynvm::tools {

absl::StatusOr<std::string> ReadFileOrStdin(const std::string& path, size_t max_bytes) {
  const bool is_stdin = path == "-";
  const std::string name = is_stdin ? "<stdin>" : path;
  FILE* file = is_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int error = errno;
    return absl::ErrnoToStatus(error, absl::StrFormat("cannot open '%s'", name));
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  bool too_large = false;
  while ((n = std::fread(buf, 1, sizeof(buf), file)) > 0) {
    if (n > max_bytes - out.size()) {
      too_large = true;
      break;
    }
    out.append(buf, n);
  }
  const int error = std::ferror(file) ? errno : 0;
  if (!is_stdin) std::fclose(file);
  if (too_large) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("'%s' is larger than the limit of %d bytes", name, max_bytes));
  }
  if (error != 0) return absl::ErrnoToStatus(error, absl::StrFormat("cannot read '%s'", name));
  return out;
}

}  // namespace dynvm::tools
