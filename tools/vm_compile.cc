// vm_compile: compiles a model — Relay text, or ONNX (a file named *.onnx) — into an
// executable file.
//
//   vm_compile model.relay -o exe.fbs [--const=w0.npy --const=w1.npy ...]
//   vm_compile model.onnx -o exe.fbs
//              [--opt-level=0..3] [--no-fuse] [--target-cpu=native|none|CPU]
//              [--dump-ir=PASS|all] [--dot=main.dot] [--stats]
//
// `meta[relay.Constant][i]` in the text is the i-th --const file (paths relative to
// the current directory); an ONNX model carries its weights (docs/onnx.md). --dump-ir prints the module in the text format after the
// named pass (parsed, typed, folded, simplified, cse, combined, dce, fused) or after every
// pass, to stdout; --no-fuse skips operator fusion; --dot writes a Graphviz drawing of
// @main's dataflow as the last pass left it; --stats prints what memory planning and
// register allocation did to stderr; --target-cpu chooses the CPU the fused groups are
// compiled to native code for (default native, this machine; none keeps the library's
// interpreted fused kernels; x86-64-v2, x86-64-v3, skylake... for another). Every
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
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "objects/allocator.h"
#include "serializer/api.h"
#include "tools/file_util.h"

namespace dynvm::tools {
namespace {

constexpr char kUsage[] =
    "usage: vm_compile model.relay|model.onnx -o exe.fbs [--const=file.npy ...] [--opt-level=0..3] "
    "[--no-fuse] [--target-cpu=native|none|CPU] [--dump-ir=PASS|all] [--dot=main.dot] [--stats]";

// Whether `path` names an ONNX model rather than Relay text.
bool IsOnnx(std::string_view path) { return path.ends_with(".onnx"); }

struct Args {
  std::string input, output, dump_ir, dot;
  std::string target_cpu = "native";
  std::vector<std::string> constants;
  int opt_level = 2;
  bool fuse = true;
  bool stats = false;
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
    } else if (arg == "--no-fuse") {
      args.fuse = false;
    } else if (arg.starts_with("--target-cpu=")) {
      args.target_cpu = std::string(arg.substr(13));
      if (args.target_cpu.empty()) {
        return absl::InvalidArgumentError("--target-cpu= needs a cpu: native, none, x86-64-v3, ...");
      }
      if (args.target_cpu == "none") args.target_cpu.clear();
    } else if (arg == "--stats") {
      args.stats = true;
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
  if (args.input.empty()) return absl::InvalidArgumentError("missing the model (model.relay or model.onnx)");
  if (IsOnnx(args.input) && !args.constants.empty()) {
    return absl::InvalidArgumentError("--const is for Relay text; an ONNX model carries its weights");
  }
  if (args.output.empty()) return absl::InvalidArgumentError("missing -o exe.fbs");
  if (!args.dump_ir.empty() && args.dump_ir != "all" && args.dump_ir != "parsed") {
    compiler::CompileOptions options;
    options.opt_level = args.opt_level;
    options.fuse = args.fuse;
    const std::vector<std::string_view> passes = compiler::PassNames(options);
    if (std::find(passes.begin(), passes.end(), args.dump_ir) == passes.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--dump-ir=%s: expected all, parsed or a pass run at --opt-level=%d (%s)", args.dump_ir,
          args.opt_level,
          absl::StrJoin(passes, ", ", [](std::string* out, std::string_view p) { out->append(p); })));
    }
  }
  return args;
}

absl::StatusOr<compiler::Module> ReadModel(const Args& args) {
  if (IsOnnx(args.input)) return compiler::onnx_frontend::ImportOnnxFile(args.input);
  std::vector<NDArray> constants;
  for (const std::string& path : args.constants) {
    DYNVM_ASSIGN_OR_RETURN(NDArray c, serializer::ReadNpyFile(path, MakeNaiveAllocator()));
    constants.push_back(std::move(c));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::string text, ReadFileOrStdin(args.input));
  return compiler::ParseModule(text, constants, args.input);
}

absl::Status Run(const Args& args) {
  DYNVM_ASSIGN_OR_RETURN(const compiler::Module module, ReadModel(args));
  compiler::CodegenStats stats;
  compiler::NativeCodegenStats native;
  compiler::CompileOptions options;
  options.opt_level = args.opt_level;
  options.fuse = args.fuse;
  options.codegen_stats = &stats;
  options.target_cpu = args.target_cpu;
  options.native_stats = &native;
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
  if (args.stats) {
    const compiler::MemoryPlanStats& m = stats.memory;
    std::fprintf(stderr,
                 "memory plan: %lld static tensors of %lld bytes in an arena of %lld bytes; "
                 "%lld symbolic-size tensors in %lld storages\n"
                 "registers: %lld values in %lld registers\n",
                 static_cast<long long>(m.static_tensors), static_cast<long long>(m.static_bytes),
                 static_cast<long long>(m.arena_bytes), static_cast<long long>(m.symbolic_tensors),
                 static_cast<long long>(m.symbolic_storages), static_cast<long long>(stats.registers_before),
                 static_cast<long long>(stats.registers_after));
    if (!args.target_cpu.empty()) {
      std::fprintf(stderr,
                   "native code: %d fused programs for %d kernel-table entries, %zu bytes, cpu %s (%s), "
                   "%d f32 lanes\n",
                   native.kernels, native.entries, native.object_bytes, native.cpu.c_str(),
                   absl::StrJoin(native.features, ", ").c_str(), native.vector_width);
    }
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
