// vm_as: assembles dynvm assembly text (docs/assembly.md) into an executable file.
//
//   vm_as model.s -o exe.fbs
//   vm_dis exe.fbs | vm_as - -o copy.fbs     # copy.fbs is byte-identical to exe.fbs
//
// Reads stdin when the input is `-` or missing. `npy "w.npy"` paths in the text are
// relative to the input file's directory (the current directory for stdin). The
// executable is verified before it is written unless --no-verify is given (for crafting
// malformed files to test loaders). Every error is one line on stderr and exit code 1;
// a bad command line exits with 2. See docs/cli.md.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "serializer/executable_file.h"
#include "tools/asm/assembler.h"
#include "tools/file_util.h"
#include "tools/flags.h"
#include "vm/verifier.h"

namespace dynvm::tools {
namespace {

// The command line's values, with their defaults.
struct Args {
  std::string input = "-";
  std::string output;
  bool no_verify = false;
};

// vm_as's command line (docs/cli.md), storing into `args`.
CommandLine MakeCommandLine(Args& args) {
  return {
      .tool = "vm_as",
      .positional = Positional{"input.s", "input", &args.input, /*required=*/false,
                               "the assembly text (docs/assembly.md); - or none reads stdin"},
      .flags = {Required(StringFlag("o", "exe.fbs", &args.output, "the executable file to write")),
                Switch("no-verify", &args.no_verify,
                       "skips the bytecode verifier, to craft malformed files for testing loaders")},
  };
}

absl::Status Run(const Args& args) {
  AssembleOptions options;
  if (args.input == "-") {
    options.filename = "<stdin>";
  } else {
    options.filename = args.input;
    options.base_dir = std::filesystem::path(args.input).parent_path().string();
  }
  DYNVM_ASSIGN_OR_RETURN(std::string text, ReadFileOrStdin(args.input));
  DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, Assemble(text, options));
  if (!args.no_verify) {
    absl::Status verified = vm::VerifyExecutable(spec);
    if (!verified.ok()) {
      return absl::Status(verified.code(),
                          absl::StrFormat("%s: %s", options.filename, verified.message()));
    }
  }
  return serializer::SaveExecutable(spec, args.output);
}

}  // namespace
}  // namespace dynvm::tools

int main(int argc, char** argv) {
  dynvm::tools::Args args;
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(
          dynvm::tools::MakeCommandLine(args), argc, argv)) {
    return *exit;
  }
  absl::Status status = dynvm::tools::Run(args);
  if (!status.ok()) {
    std::fprintf(stderr, "vm_as: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
