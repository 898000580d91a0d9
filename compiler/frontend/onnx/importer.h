// The ONNX front end: a model exported with dynamic axes becomes a module whose @main
// serves every input extent (docs/onnx.md).
//
//   DYNVM_ASSIGN_OR_RETURN(Module mod, onnx_frontend::ImportOnnxFile("bert.onnx"));
//   DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, CompileModule(mod, options));
//
// The model is parsed, checked (onnx::checker) and shape-inferred by Debian's libonnx
// (1.12), then its graph becomes @main:
//   - one parameter per graph input that is not an initializer, in graph order, named as
//     the input (so that `vm_run exe.fbs --input=input_ids=@ids.npy` finds it), typed
//     from its ONNX type: a `dim_param` is a named symbolic dim, shared wherever the name
//     recurs, a `dim_value` a constant, and an unnamed dynamic dim `?`; a sequence of
//     tensors is the List ADT and an optional the Optional ADT (below);
//   - initializers (inline or external data) and Constant nodes become constants;
//   - each node becomes operator calls (converters.h); shape arithmetic over the
//     symbolic dims (Shape, Gather, Concat... feeding Reshape or Expand) is folded at
//     import, so that such reshapes keep their symbolic types;
//   - it returns the graph's only output, or a tuple of its outputs in graph order.
//
// Errors: an unreadable, malformed or invalid model is InvalidArgument (the checker's
// message included); a node no converter supports — its operator, an attribute value
// or a dtype — is Unimplemented naming the node, the operator and the opset. Nothing
// throws.
#ifndef DYNVM_COMPILER_FRONTEND_ONNX_IMPORTER_H_
#define DYNVM_COMPILER_FRONTEND_ONNX_IMPORTER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace dynvm::compiler::onnx_frontend {

// The default domain's versions this importer's converters are written for.
inline constexpr int64_t kMinOpset = 1;
inline constexpr int64_t kMaxOpset = 17;

// An ONNX sequence is a List ADT value: a chain of Cons cells (tag kListConsTag, fields
// the element tensor and the rest of the list) ending in Nil (tag kListNilTag, no
// fields). Graph inputs and outputs that are sequences pass as such values.
inline constexpr uint32_t kListConsTag = 0;
inline constexpr uint32_t kListNilTag = 1;

// An ONNX optional is an Optional ADT value: Some (tag kOptionalSomeTag, one field, the
// value) or None (tag kOptionalNoneTag, no fields).
inline constexpr uint32_t kOptionalSomeTag = 0;
inline constexpr uint32_t kOptionalNoneTag = 1;

// Reads, checks and imports the model at `path`; external data is read relative to the
// model's directory.
absl::StatusOr<Module> ImportOnnxFile(const std::string& path);

// The same for a serialized ModelProto in memory; external data is read relative to
// `base_dir`. `name` names the model in messages.
absl::StatusOr<Module> ImportOnnxBytes(std::string_view bytes, const std::string& base_dir,
                                       std::string_view name = "model");

}  // namespace dynvm::compiler::onnx_frontend

#endif  // DYNVM_COMPILER_FRONTEND_ONNX_IMPORTER_H_
