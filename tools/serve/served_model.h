// The model vm_serve serves: one function of an executable under a name, its inputs and
// outputs as the Open Inference Protocol describes them, and the binding of a
// request's named inputs to the function's parameters.
//
// Inputs are the function's parameters, which must all be tensors; outputs are its
// result flattened depth-first (a tuple's fields in order, as vm_run lists them). Each
// takes its name from the signature (an ONNX model's graph input and output names);
// unnamed ones are called input_<i> / output_<i>.
//
//   DYNVM_ASSIGN_OR_RETURN(ServedModel model, ServedModel::Create("bert", exe, "main"));
//   DYNVM_ASSIGN_OR_RETURN(std::vector<Value> args, model.BindInputs(request.inputs));
#ifndef DYNVM_TOOLS_SERVE_SERVED_MODEL_H_
#define DYNVM_TOOLS_SERVE_SERVED_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/value.h"
#include "tools/serve/inference_protocol.h"
#include "vm/executable.h"

namespace dynvm::tools::serve {

class ServedModel {
 public:
  // Serves function `function` of `executable` as model `name`. NotFound for an
  // unknown function (listing the ones there are); InvalidArgument when a parameter is
  // not a tensor, a result is not made of tensors, ints, floats and bools (an ADT such
  // as an ONNX sequence), or two inputs or outputs share a name.
  static absl::StatusOr<ServedModel> Create(std::string name,
                                            std::shared_ptr<const vm::Executable> executable,
                                            std::string_view function);

  const std::string& name() const { return name_; }
  const std::shared_ptr<const vm::Executable>& executable() const { return executable_; }
  uint32_t function_index() const { return function_index_; }
  const vm::Function& function() const { return executable_->function(function_index_); }
  // One per parameter, in order.
  const std::vector<std::string>& input_names() const { return input_names_; }
  // One per output (the result flattened), in order.
  const std::vector<std::string>& output_names() const { return output_names_; }

  // The parameters' values in order from a request's inputs, matched by input_names()
  // and checked against the signature (codec::BindArguments): InvalidArgument naming an
  // unknown input, one given twice, the missing ones, or one that does not fit.
  absl::StatusOr<std::vector<Value>> BindInputs(std::vector<InferInput> inputs) const;

  // The indices into output_names() of what `requested` asks for, in its order; all
  // outputs when it is empty. InvalidArgument for an unknown name.
  absl::StatusOr<std::vector<size_t>> SelectOutputs(absl::Span<const RequestedOutput> requested) const;

  // The body of GET /v2/models/NAME: {"name", "versions", "platform": "dynvm",
  // "inputs": [...], "outputs": [...]}, each tensor {"name", "datatype", "shape"} with
  // -1 for a dim that is not a constant.
  std::string MetadataJson() const;

 private:
  ServedModel() = default;

  std::string name_;
  std::shared_ptr<const vm::Executable> executable_;
  uint32_t function_index_ = 0;
  std::vector<std::string> input_names_;
  std::vector<std::string> output_names_;
  std::vector<const vm::ValueSpec*> output_specs_;  // into executable_'s signature
};

}  // namespace dynvm::tools::serve

#endif  // DYNVM_TOOLS_SERVE_SERVED_MODEL_H_
