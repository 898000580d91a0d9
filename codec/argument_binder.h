// Binding a function's arguments from outside values: the one place where vm_run's
// --input specs, vm_serve's request inputs, the Python module's call arguments and the
// C API's values are matched to a function's parameters and checked against its
// signature before the VM runs.
//
// Each front end turns its own format (text, .npy, JSON, binary, a numpy buffer, a
// DLTensor) into ArgumentSources; the binder matches them to parameters as Python binds
// a call (a source without a name is the next parameter by position, named ones go
// anywhere), has each source build its Value for the parameter it landed on, and checks the values against the signature (kind, dtype,
// rank, constant dims, and every symbolic dim agreeing across inputs), with the VM's
// own check. Every error names the input, what was wrong and what was expected.
//
//   std::vector<codec::ArgumentSource> sources;
//   sources.push_back({.name = "x", .label = "input 0 ('x=@x.npy')",
//                      .build = [&](const vm::ValueSpec&) { return ReadX(); }});
//   absl::StatusOr<std::vector<Value>> args = codec::BindArguments(function, sources);
#ifndef DYNVM_CODEC_ARGUMENT_BINDER_H_
#define DYNVM_CODEC_ARGUMENT_BINDER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/value.h"
#include "vm/executable.h"

namespace dynvm::codec {

// One outside argument as a front end describes it.
struct ArgumentSource {
  // The parameter it names; empty: the next parameter by position.
  std::string name;
  // How the caller wrote it, for messages: "input 2 ('x=@x.npy')", "keyword 'ids'".
  std::string label;
  // Makes the value for the parameter the source was bound to (whose spec may decide
  // how a scalar is read). Its errors are returned prefixed with the input, code kept.
  std::function<absl::StatusOr<Value>(const vm::ValueSpec& param)> build;
};

// How BindArguments matches and names parameters.
struct BindOptions {
  // The names sources match parameters by and messages call them, one per parameter
  // (vm_serve calls an unnamed parameter "input_<i>"); empty: the signature's names.
  // Not owned: outlives the call. Any other count is an InvalidArgument.
  absl::Span<const std::string> param_names;
};

// The arguments of `function` from `sources`, in parameter order. InvalidArgument for
// an unknown name, a parameter given twice, more sources than parameters, missing
// parameters (all of them listed with their types), and values that do not fit the
// signature (vm::CheckArguments' message); a build error keeps its code. Each source
// bounds what its `build` allocates (a file's size, a request body's limit).
absl::StatusOr<std::vector<Value>> BindArguments(const vm::Function& function,
                                                 absl::Span<const ArgumentSource> sources,
                                                 const BindOptions& options = {});

}  // namespace dynvm::codec

#endif  // DYNVM_CODEC_ARGUMENT_BINDER_H_
