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
#include <optional>
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
#include "tools/flags.h"

namespace dynvm::tools {
namespace {

// The command line's values, with their defaults.
struct Args {
  std::string input;
  bool opcodes = false;
};

// vm_dis's command line (docs/cli.md), storing into `args`: a file or --opcodes.
CommandLine MakeCommandLine(Args& args) {
  return {
      .tool = "vm_dis",
      .positional = Positional{"exe.fbs", "executable file", &args.input, /*required=*/false,
                               "the executable to print; - reads stdin"},
      .flags = {Switch("opcodes", &args.opcodes,
                       "prints the instruction set instead: number, usage, meaning")},
      .after_parse = [&args]() -> absl::Status {
        if (args.opcodes && !args.input.empty()) {
          return absl::InvalidArgumentError(
              absl::StrFormat("--opcodes takes no executable file, got '%s'", args.input));
        }
        if (!args.opcodes && args.input.empty()) {
          return absl::InvalidArgumentError("missing the executable file (exe.fbs) or --opcodes");
        }
        return absl::OkStatus();
      },
  };
}

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
  dynvm::tools::Args args;
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(
          dynvm::tools::MakeCommandLine(args), argc, argv)) {
    return *exit;
  }
  absl::Status status = args.opcodes ? dynvm::tools::WriteStdout(dynvm::tools::FormatOpcodeTable())
                                     : dynvm::tools::DisassembleFile(args.input);
  if (!status.ok()) {
    std::fprintf(stderr, "vm_dis: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
