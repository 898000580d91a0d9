// The Python view of a function's signature: `dynvm.Function` (name, inputs,
// outputs) and `dynvm.ValueSpec` (name, kind, dtype, shape, fields), read-only copies
// of vm::Function and vm::ValueSpec.
//
//   >>> exe.functions[0].inputs[0]
//   ValueSpec(input_ids: tensor i64[batch, sequence])
//   >>> spec.kind, spec.dtype, spec.shape
//   ('tensor', dtype('int64'), ['batch', 'sequence'])
#ifndef DYNVM_PYTHON_SIGNATURES_H_
#define DYNVM_PYTHON_SIGNATURES_H_

#include <string>

#include "pybind11/pybind11.h"
#include "vm/executable.h"

namespace dynvm::python {

// "input_ids: tensor i64[batch, sequence]", tuple fields with their names too: the text
// of a named spec for reprs and messages.
std::string NamedSpecText(const vm::ValueSpec& spec);

// Adds dynvm.ValueSpec and dynvm.Function to `module`.
void RegisterSignatures(pybind11::module_& module);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_SIGNATURES_H_
