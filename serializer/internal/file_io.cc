// Read-only file mappings and atomic whole-file writes
// (serializer/internal/file_io.h).
#include "serializer/internal/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "objects/opaque.h"

namespace dynvm::serializer::internal {
namespace {

absl::Status ErrnoError(int error, std::string_view what, const std::string& path) {
  return absl::ErrnoToStatus(error, absl::StrFormat("cannot %s '%s'", what, path));
}

// Closes a descriptor on scope exit.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_;
};

// Writes every piece to `fd`, retrying short writes and EINTR.
absl::Status WriteAll(int fd, absl::Span<const absl::Span<const uint8_t>> pieces,
                      const std::string& path) {
  for (absl::Span<const uint8_t> piece : pieces) {
    const uint8_t* p = piece.data();
    size_t left = piece.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ErrnoError(n < 0 ? errno : EIO, "write", path);
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  return absl::OkStatus();
}

// Creates (truncating) `path` and writes `pieces` to it.
absl::Status WriteNewFile(const std::string& path,
                          absl::Span<const absl::Span<const uint8_t>> pieces) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, "create", path);
  absl::Status status = WriteAll(fd, pieces, path);
  if (::close(fd) != 0 && status.ok()) status = ErrnoError(errno, "close", path);
  return status;
}

}  // namespace

absl::StatusOr<MappedFile> MapFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "open", path);
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a regular file", path));
  }
  MappedFile file;
  if (st.st_size == 0) return file;  // mmap refuses length 0; an empty span says it all
  const size_t size = static_cast<size_t>(st.st_size);
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return ErrnoError(errno, "map", path);
  file.bytes = absl::Span<const uint8_t>(static_cast<const uint8_t*>(base), size);
  file.owner = MakeOpaque([base, size] { ::munmap(base, size); });
  return file;
}

absl::Status WriteFile(const std::string& path,
                       absl::Span<const absl::Span<const uint8_t>> pieces) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return WriteNewFile(path, pieces);  // a device or pipe: no rename possible
  }
  const std::string tmp = path + ".tmp";
  absl::Status status = WriteNewFile(tmp, pieces);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoError(errno, "rename a temporary file to", path);
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

}  // namespace dynvm::serializer::internal
