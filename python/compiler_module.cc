// `dynvm._compiler`, the compiler of the Python package `dynvm`: its one function makes
// an executable file's bytes from a model, as vm_compile does; dynvm.compile
// (python/dynvm/__init__.py) reads the model and loads the result with the runtime. A
// module of its own so that `import dynvm` loads no LLVM, ONNX or protobuf.
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/driver/compile.h"
#include "compiler/driver/model_input.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/relay_text/parser.h"
#include "pybind11/pybind11.h"
#include "pybind11/stl.h"
#include "python/errors.h"
#include "serializer/executable_file.h"

namespace dynvm::python {
namespace {

namespace py = pybind11;

struct CompileRequest {
  std::string model;     // Relay text, or a serialized ONNX ModelProto
  std::string name;      // the file it came from ("<bytes>"), for messages
  std::string base_dir;  // where an ONNX model's external data is
  bool onnx = false;
  std::string target_cpu;
  int opt_level = 2;
  bool fuse = true;
  std::vector<std::string> constant_files;
};

absl::StatusOr<std::string> CompileToBytes(const CompileRequest& request) {
  if (request.opt_level < 0 || request.opt_level > 3) {
    return absl::InvalidArgumentError(absl::StrFormat("opt_level must be 0 to 3, got %d", request.opt_level));
  }
  std::string text;  // Relay text, for errors that point into it
  compiler::Module module;
  if (request.onnx) {
    if (!request.constant_files.empty()) {
      return absl::InvalidArgumentError("constants are for Relay text; an ONNX model carries its weights");
    }
    DYNVM_ASSIGN_OR_RETURN(module,
                           compiler::onnx_frontend::ImportOnnxBytes(request.model, request.base_dir, request.name));
  } else {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<NDArray> constants,
                           compiler::ReadConstantFiles(request.constant_files));
    text = request.model;
    DYNVM_ASSIGN_OR_RETURN(module, compiler::ParseModule(text, constants, request.name));
  }
  compiler::CompileOptions options;
  options.opt_level = request.opt_level;
  options.fuse = request.fuse;
  options.target_cpu = request.target_cpu == "none" ? "" : request.target_cpu;
  absl::StatusOr<vm::ExecutableSpec> spec = compiler::CompileModule(module, options);
  if (!spec.ok()) return compiler::NameCompileError(spec.status(), text, request.name);
  return serializer::SerializeExecutable(*spec);
}

py::bytes Compile(const py::bytes& model, std::string name, std::string base_dir, bool onnx, std::string target_cpu,
                  int opt_level, bool fuse, std::vector<std::string> constant_files) {
  CompileRequest request{std::string(model), std::move(name), std::move(base_dir), onnx, std::move(target_cpu),
                         opt_level, fuse, std::move(constant_files)};
  absl::StatusOr<std::string> bytes;
  {
    py::gil_scoped_release release;
    bytes = CompileToBytes(request);
  }
  return py::bytes(ValueOrThrow(std::move(bytes)));
}

}  // namespace
}  // namespace dynvm::python

PYBIND11_MODULE(_compiler, module) {
  namespace py = pybind11;
  module.doc() = "dynvm's compiler (use dynvm.compile).";
  dynvm::python::UseErrorsOf(py::module_::import("dynvm._runtime"));
  module.def("compile", &dynvm::python::Compile, py::arg("model"), py::arg("name"), py::arg("base_dir"),
             py::arg("onnx"), py::arg("target_cpu"), py::arg("opt_level"), py::arg("fuse"),
             py::arg("constant_files"),
             "The bytes of the executable file compiled from `model` (see dynvm.compile).");
}
