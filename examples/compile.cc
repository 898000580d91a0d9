// Compiling a model from C++ with the compiler library (dynvm::compiler): Relay text or
// an ONNX model to an executable file, as vm_compile does without its options.
//
//   compile_example model.relay exe.fbs      (or model.onnx)
//
// See docs/embedding.md ("Installing, and using an installed dynvm").
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/driver/compile.h"
#include "compiler/driver/model_input.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/relay_text/parser.h"
#include "serializer/executable_file.h"

namespace {

absl::Status Compile(const std::string& model, const std::string& out) {
  std::string text;  // Relay text, for errors that point into it
  absl::StatusOr<dynvm::compiler::Module> module;
  if (model.ends_with(".onnx")) {
    module = dynvm::compiler::onnx_frontend::ImportOnnxFile(model);
  } else {
    std::ifstream in(model);
    if (!in) return absl::NotFoundError("cannot read '" + model + "'");
    std::stringstream contents;
    contents << in.rdbuf();
    text = contents.str();
    module = dynvm::compiler::ParseModule(text, {}, model);
  }
  if (!module.ok()) return module.status();
  dynvm::compiler::CompileOptions options;  // -O2, fusion
  options.target_cpu = "native";            // native code for this CPU's fused groups
  absl::StatusOr<dynvm::vm::ExecutableSpec> spec = dynvm::compiler::CompileModule(*module, options);
  if (!spec.ok()) return dynvm::compiler::NameCompileError(spec.status(), text, model);
  return dynvm::serializer::SaveExecutable(*spec, out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: compile_example model.relay|model.onnx exe.fbs\n");
    return 2;
  }
  const absl::Status status = Compile(argv[1], argv[2]);
  if (!status.ok()) {
    std::fprintf(stderr, "compile_example: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::printf("wrote %s\n", argv[2]);
  return 0;
}
