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
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "serializer/executable_file.h"
#include "tools/asm/assembler.h"
#include "tools/file_util.h"
#include "vm/verifier.h"

namespace dynvm::tools {
namespace {

constexpr char kUsage[] = "usage: vm_as [input.s | -] -o exe.fbs [--no-verify]";

struct Args {
  std::string input = "-";
  std::string output;
  bool verify = true;
  bool help = false;
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args args;
  bool has_input = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      args.help = true;
    } else if (arg == "--no-verify") {
      args.verify = false;
    } else if (arg == "-o") {
      if (i + 1 == argc) return absl::InvalidArgumentError("-o needs a file name");
      args.output = argv[++i];
    } else if (arg.size() > 1 && arg[0] == '-') {
      return absl::InvalidArgumentError(absl::StrFormat("unknown option '%s'", arg));
    } else if (has_input) {
      return absl::InvalidArgumentError(absl::StrFormat("more than one input: '%s'", arg));
    } else {
      args.input = arg;
      has_input = true;
    }
  }
  if (args.output.empty() && !args.help) {
    return absl::InvalidArgumentError("missing -o exe.fbs");
  }
  return args;
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
  if (args.verify) {
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
  absl::StatusOr<dynvm::tools::Args> args = dynvm::tools::ParseArgs(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "vm_as: %s (%s)\n", std::string(args.status().message()).c_str(),
                 dynvm::tools::kUsage);
    return 2;
  }
  if (args->help) {
    std::printf("%s\n", dynvm::tools::kUsage);
    return 0;
  }
  absl::Status status = dynvm::tools::Run(*args);
  if (!status.ok()) {
    std::fprintf(stderr, "vm_as: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
