// vm_compile: compiles a model — Relay text, or ONNX (a file named *.onnx) — into an
// executable file.
//
//   vm_compile model.relay -o exe.fbs [--const=w0.npy --const=w1.npy ... | --const=w.npz]
//   vm_compile model.onnx -o exe.fbs
//              [--opt-level=0..3] [--no-fuse] [--target-cpu=native|none|CPU]
//              [--dump-ir=PASS|all] [--dot=main.dot] [--stats]
//
// `meta[relay.Constant][i]` in the text is the i-th tensor of the --const files (paths
// relative to the current directory; an .npz gives its arrays: arr_0, arr_1, ... in
// that order, then keyword arrays as stored), or of the text's #[metadata] section; an ONNX model carries its weights (docs/onnx.md). --dump-ir prints the module in the text format after the
// named pass (parsed, typed, lifted, folded, simplified, cse, combined, packed_entry, dce, fused) or after every
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
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/dot.h"
#include "compiler/driver/model_input.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "serializer/api.h"
#include "tools/file_util.h"
#include "tools/flags.h"

namespace dynvm::tools {
namespace {

// Whether `path` names an ONNX model rather than Relay text.
bool IsOnnx(std::string_view path) { return path.ends_with(".onnx"); }

// The command line's values, with their defaults.
struct Args {
  std::string input, output, dump_ir, dot;
  std::string target_cpu = "native";  // empty after parsing for "none"
  std::vector<std::string> constants;
  int opt_level = 2;
  bool no_fuse = false;
  bool stats = false;
};

// What --dump-ir may name: the module as parsed, every pass, or any one pass, in the
// order of the fullest pipeline.
std::vector<std::string_view> DumpIrChoices() {
  std::vector<std::string_view> choices = {"all", "parsed"};
  for (const bool fuse : {true, false}) {
    for (int level = 3; level >= 0; --level) {
      compiler::CompileOptions options;
      options.opt_level = level;
      options.fuse = fuse;
      for (const std::string_view pass : compiler::PassNames(options)) {
        if (std::find(choices.begin(), choices.end(), pass) == choices.end()) choices.push_back(pass);
      }
    }
  }
  return choices;
}

// What the table cannot check: --const against the model's kind, and --dump-ir against
// the passes --opt-level and --no-fuse run. Turns --target-cpu=none into no target.
absl::Status CheckArgs(Args& args) {
  if (IsOnnx(args.input) && !args.constants.empty()) {
    return absl::InvalidArgumentError("--const is for Relay text; an ONNX model carries its weights");
  }
  if (!args.dump_ir.empty() && args.dump_ir != "all" && args.dump_ir != "parsed") {
    compiler::CompileOptions options;
    options.opt_level = args.opt_level;
    options.fuse = !args.no_fuse;
    const std::vector<std::string_view> passes = compiler::PassNames(options);
    if (std::find(passes.begin(), passes.end(), args.dump_ir) == passes.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--dump-ir=%s: expected all, parsed or a pass run at --opt-level=%d%s (%s)", args.dump_ir,
          args.opt_level, args.no_fuse ? " --no-fuse" : "",
          absl::StrJoin(passes, ", ", [](std::string* out, std::string_view p) { out->append(p); })));
    }
  }
  if (args.target_cpu == "none") args.target_cpu.clear();
  return absl::OkStatus();
}

// vm_compile's command line (docs/cli.md), storing into `args`.
CommandLine MakeCommandLine(Args& args) {
  return {
      .tool = "vm_compile",
      .positional = Positional{"model.relay|model.onnx", "model", &args.input, /*required=*/true,
                               "the program in Relay text (- reads stdin), or an ONNX model: a "
                               "file named *.onnx"},
      .flags =
          {Required(StringFlag("o", "exe.fbs", &args.output, "the executable file to write")),
           RepeatedFlag("const", "file.npy|file.npz", &args.constants,
                        "the tensors meta[relay.Constant][i] stands for, i counting them over the "
                        "--const flags from 0: an .npy is one, an .npz its arrays arr_0, arr_1, ... "
                        "then its keyword arrays (Relay text only: an ONNX model carries its weights)"),
           IntFlag("opt-level", "N", &args.opt_level, 0, 3,
                   "0: type inference and A-normal form only; 1: and folding, fusion, memory "
                   "planning, register allocation; 2 (default) and 3: and simplification, CSE, "
                   "combining parallel dense layers, dead code elimination"),
           Switch("no-fuse", &args.no_fuse, "skips operator fusion"),
           StringFlag("target-cpu", "CPU", &args.target_cpu,
                      "the CPU the fused groups are compiled to native code for: native "
                      "(default, this machine), none (the library's interpreted fused kernels), "
                      "or an LLVM CPU name (x86-64-v2, x86-64-v3, skylake...)"),
           EnumFlag("dump-ir", "PASS", &args.dump_ir, DumpIrChoices(),
                    "prints the module to stdout after the named pass (one the options run), "
                    "or after every pass with all"),
           StringFlag("dot", "main.dot", &args.dot,
                      "writes a Graphviz drawing of @main's dataflow as the last pass left it"),
           Switch("stats", &args.stats,
                  "prints to stderr what memory planning and register allocation did, and whether "
                  "a packed-token entry (@main_packed) was derived, or why not")},
      .after_parse = [&args] { return CheckArgs(args); },
  };
}

// The model; for Relay text, `text` receives it (for messages that point into it).
absl::StatusOr<compiler::Module> ReadModel(const Args& args, std::string& text) {
  if (IsOnnx(args.input)) return compiler::onnx_frontend::ImportOnnxFile(args.input);
  DYNVM_ASSIGN_OR_RETURN(const std::vector<NDArray> constants, compiler::ReadConstantFiles(args.constants));
  DYNVM_ASSIGN_OR_RETURN(text, ReadFileOrStdin(args.input));
  return compiler::ParseModule(text, constants, args.input);
}

absl::Status Run(const Args& args) {
  std::string text;
  DYNVM_ASSIGN_OR_RETURN(const compiler::Module module, ReadModel(args, text));
  compiler::CodegenStats stats;
  compiler::NativeCodegenStats native;
  compiler::CompileOptions options;
  options.opt_level = args.opt_level;
  options.fuse = !args.no_fuse;
  options.codegen_stats = &stats;
  options.target_cpu = args.target_cpu;
  options.native_stats = &native;
  compiler::PackedEntryOutcome packed_entry{false, "not tried (--opt-level below 2)"};
  options.packed_entry = &packed_entry;
  std::optional<compiler::Module> last;  // what the last pass left, for --dot
  options.after_pass = [&](std::string_view pass, const compiler::Module& m) {
    if (!args.dot.empty()) last = m;
    if (args.dump_ir.empty() || (args.dump_ir != "all" && args.dump_ir != pass)) return;
    std::printf("// after %s\n%s\n", std::string(pass).c_str(), compiler::PrintModule(m).text.c_str());
  };
  absl::StatusOr<vm::ExecutableSpec> spec = compiler::CompileModule(module, options);
  if (!spec.ok()) return compiler::NameCompileError(spec.status(), text, args.input);
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
    std::fprintf(stderr, "packed entry: %s%s\n", packed_entry.derived ? "" : "none: ",
                 packed_entry.detail.c_str());
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
  dynvm::tools::Args args;
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(
          dynvm::tools::MakeCommandLine(args), argc, argv)) {
    return *exit;
  }
  const absl::Status status = dynvm::tools::Run(args);
  if (!status.ok()) {
    std::fprintf(stderr, "vm_compile: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
