// What every way into the compiler shares besides the pipeline (vm_compile, the Python
// module's compile): the constants of Relay text from .npy/.npz files, and a compile
// error made to name where it happened.
//
//   DYNVM_ASSIGN_OR_RETURN(std::vector<NDArray> constants, ReadConstantFiles({"w.npz"}));
//   DYNVM_ASSIGN_OR_RETURN(Module module, ParseModule(text, constants, "model.relay"));
//   absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(module, options);
//   if (!spec.ok()) return NameCompileError(spec.status(), text, "model.relay");
#ifndef DYNVM_COMPILER_DRIVER_MODEL_INPUT_H_
#define DYNVM_COMPILER_DRIVER_MODEL_INPUT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "objects/ndarray.h"

namespace dynvm::compiler {

// The tensors meta[relay.Constant][i] stands for, i counting over `paths` from 0: an .npy
// is one, an .npz its arrays arr_0, arr_1, ... in that order, then its keyword arrays as
// stored.
absl::StatusOr<std::vector<NDArray>> ReadConstantFiles(const std::vector<std::string>& paths);

// `status` from compiling the model `source_name`: when it names a place in the Relay
// `text`, that line with a caret is appended (ShowSourceLine); otherwise the message is
// prefixed with `source_name`. `text` is empty for an ONNX model.
absl::Status NameCompileError(const absl::Status& status, std::string_view text, std::string_view source_name);

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_DRIVER_MODEL_INPUT_H_
