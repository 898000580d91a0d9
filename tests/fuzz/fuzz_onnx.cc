// libFuzzer target: an ONNX model from a stranger (vm_compile model.onnx): protobuf
// parsing, ONNX's checker and shape inference, then our importer and type inference.
// The result is a module or a status. External data is looked up in a directory that
// does not exist, so a model can only name files it cannot read.
#include <cstdint>
#include <string_view>

#include "compiler/frontend/onnx/importer.h"
#include "compiler/passes/type_infer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm::compiler;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Module> module =
      onnx_frontend::ImportOnnxBytes(bytes, "/nonexistent/dynvm-fuzz", "fuzz");
  if (module.ok()) (void)InferTypes(*module);
  return 0;
}
