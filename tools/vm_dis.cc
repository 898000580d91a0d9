// vm_dis: prints an executable file as dynvm assembly text (docs/assembly.md), which
// vm_as reads back to the same file, byte for byte.
//
//   vm_dis exe.fbs > exe.s
//   vm_dis exe.fbs | vm_as - -o copy.fbs
//   vm_dis --opcodes                  # the instruction set: number, usage, meaning
//
// The file is parsed and verified (serializer::ParseExecutable) but its kernels are not
// bound, so it disassembles without the kernels it names. `-` reads stdin. Every error
// is one line on stderr and exit code 1; a bad command line exits with 2. See
// docs/cli.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "serializer/executable_file.h"
#include "tools/asm/disassembler.h"
#include "tools/file_util.h"

namespace dynvm::tools {
namespace {

constexpr char kUsage[] = "usage: vm_dis exe.fbs | vm_dis --opcodes";

absl::Status WriteStdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    return absl::ErrnoToStatus(errno, "cannot write to stdout");
  }
  return absl::OkStatus();
}

absl::Status DisassembleFile(const std::string& path) {
  // ParseExecutable reads the file in place and needs it 8-byte aligned; constants
  // view these words, which outlive the spec.
  std::vector<uint64_t> words;
  size_t size = 0;
  {
    // No limit but memory's: an executable is as large as its weights.
    DYNVM_ASSIGN_OR_RETURN(std::string bytes,
                           ReadFileOrStdin(path, std::numeric_limits<size_t>::max()));
    size = bytes.size();
    words.resize((size + 7) / 8);
    if (size > 0) std::memcpy(words.data(), bytes.data(), size);
  }  // frees `bytes` before the text is built: files can be gigabytes of weights
  absl::StatusOr<vm::ExecutableSpec> spec = serializer::ParseExecutable(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(words.data()), size),
      /*owner=*/nullptr);
  if (!spec.ok()) {
    return absl::Status(
        spec.status().code(),
        absl::StrFormat("%s: %s", path == "-" ? "<stdin>" : path, spec.status().message()));
  }
  return WriteStdout(Disassemble(*spec));
}

}  // namespace
}  // namespace dynvm::tools

int main(int argc, char** argv) {
  const std::string_view arg = argc == 2 ? argv[1] : "";
  if (arg == "-h" || arg == "--help") {
    std::printf("%s\n", dynvm::tools::kUsage);
    return 0;
  }
  if (argc != 2 || (arg.size() > 1 && arg[0] == '-' && arg != "--opcodes")) {
    const std::string problem = argc != 2
                                    ? absl::StrFormat("expected one argument, got %d", argc - 1)
                                    : absl::StrFormat("unknown option '%s'", arg);
    std::fprintf(stderr, "vm_dis: %s (%s)\n", problem.c_str(), dynvm::tools::kUsage);
    return 2;
  }
  absl::Status status = arg == "--opcodes"
                            ? dynvm::tools::WriteStdout(dynvm::tools::FormatOpcodeTable())
                            : dynvm::tools::DisassembleFile(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "vm_dis: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
