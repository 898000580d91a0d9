// vm_compile: compiles a model in Relay's text format into an executable file.
//
//   vm_compile model.relay -o exe.fbs [--const=w0.npy --const=w1.npy ...]
//              [--opt-level=0..3] [--dump-ir=PASS|all] [--dot=main.dot]
//
// `meta[relay.Constant][i]` in the text is the i-th --const file (paths relative to
// the current directory). --dump-ir prints the module in the text format after the
// named pass (parsed, typed, folded, simplified, cse, combined, dce) or after every pass, to
// stdout; --dot
// writes a Graphviz drawing of @main's dataflow as the last pass left it. Every
// error is one message on stderr and exit code 1; a bad command line exits with 2.
// See docs/cli.md.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/dot.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "objects/allocator.h"
#include "serializer/api.h"
#include "tools/file_util.h"

namespace dynvm::tools {
namespace {

constexpr char kUsage[] =
    "usage: vm_compile model.relay -o exe.fbs [--const=file.npy ...] [--opt-level=0..3] "
    "[--dump-ir=PASS|all] [--dot=main.dot]";

struct Args {
  std::string input, output, dump_ir, dot;
  std::vector<std::string> constants;
  int opt_level = 2;
  bool help = false;
};

absl::StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      args.help = true;
    } else if (arg == "-o") {
      if (i + 1 == argc) return absl::InvalidArgumentError("-o needs a file name");
      args.output = argv[++i];
    } else if (arg.starts_with("--const=")) {
      args.constants.emplace_back(arg.substr(8));
    } else if (arg.starts_with("--dot=")) {
      args.dot = std::string(arg.substr(6));
    } else if (arg.starts_with("--dump-ir=")) {
      args.dump_ir = std::string(arg.substr(10));
    } else if (arg.starts_with("--opt-level=")) {
      const std::string level(arg.substr(12));
      if (!absl::SimpleAtoi(level, &args.opt_level) || args.opt_level < 0 || args.opt_level > 3) {
        return absl::InvalidArgumentError(absl::StrFormat("--opt-level=%s: expected 0 to 3", level));
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return absl::InvalidArgumentError(absl::StrFormat("unknown option '%s'", std::string(arg)));
    } else if (!args.input.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat("more than one input: '%s'", std::string(arg)));
    } else {
      args.input = std::string(arg);
    }
  }
  if (args.help) return args;
  if (args.input.empty()) return absl::InvalidArgumentError("missing the model (model.relay)");
  if (args.output.empty()) return absl::InvalidArgumentError("missing -o exe.fbs");
  if (!args.dump_ir.empty() && args.dump_ir != "all" && args.dump_ir != "parsed") {
    const std::vector<std::string_view> passes = compiler::PassNames(args.opt_level);
    if (std::find(passes.begin(), passes.end(), args.dump_ir) == passes.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--dump-ir=%s: expected all, parsed or a pass run at --opt-level=%d (%s)", args.dump_ir,
          args.opt_level,
          absl::StrJoin(passes, ", ", [](std::string* out, std::string_view p) { out->append(p); })));
    }
  }
  return args;
}

absl::Status Run(const Args& args) {
  std::vector<NDArray> constants;
  for (const std::string& path : args.constants) {
    DYNVM_ASSIGN_OR_RETURN(NDArray c, serializer::ReadNpyFile(path, MakeNaiveAllocator()));
    constants.push_back(std::move(c));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string text, ReadFileOrStdin(args.input));
  DYNVM_ASSIGN_OR_RETURN(const compiler::Module module,
                         compiler::ParseModule(text, constants, args.input));
  compiler::CompileOptions options{.opt_level = args.opt_level};
  std::optional<compiler::Module> last;  // what the last pass left, for --dot
  options.after_pass = [&](std::string_view pass, const compiler::Module& m) {
    if (!args.dot.empty()) last = m;
    if (args.dump_ir.empty() || (args.dump_ir != "all" && args.dump_ir != pass)) return;
    std::printf("// after %s\n%s\n", std::string(pass).c_str(), compiler::PrintModule(m).text.c_str());
  };
  absl::StatusOr<vm::ExecutableSpec> spec = compiler::CompileModule(module, options);
  if (!spec.ok()) {
    return absl::Status(spec.status().code(),
                        absl::StrFormat("%s: %s", args.input, spec.status().message()));
  }
  if (!args.dot.empty()) {
    absl::StatusOr<compiler::Expr> main = last->Function("main");
    if (!main.ok()) return absl::InvalidArgumentError(absl::StrFormat("--dot: %s", main.status().message()));
    std::ofstream dot(args.dot);
    dot << compiler::DataflowDot(*main, "main");
    if (!dot) return absl::PermissionDeniedError(absl::StrFormat("cannot write '%s'", args.dot));
  }
  return serializer::SaveExecutable(*spec, args.output);
}

}  // namespace
}  // namespace dynvm::tools

int main(int argc, char** argv) {
  absl::StatusOr<dynvm::tools::Args> args = dynvm::tools::ParseArgs(argc, argv);
  if (!args.ok()) {
    std::fprintf(stderr, "vm_compile: %s (%s)\n", std::string(args.status().message()).c_str(),
                 dynvm::tools::kUsage);
    return 2;
  }
  if (args->help) {
    std::printf("%s\n", dynvm::tools::kUsage);
    return 0;
  }
  const absl::Status status = dynvm::tools::Run(*args);
  if (!status.ok()) {
    std::fprintf(stderr, "vm_compile: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
