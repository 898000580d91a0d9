// `dynvm.Executable`, `dynvm.load` and `dynvm.load_bytes`: loading a compiled model and
// listing its functions.
//
//   >>> exe = dynvm.load("exe.fbs")
//   >>> [f.name for f in exe.functions]
//   ['main']
#ifndef DYNVM_PYTHON_EXECUTABLE_H_
#define DYNVM_PYTHON_EXECUTABLE_H_

#include <memory>

#include "pybind11/pybind11.h"
#include "vm/executable.h"

namespace dynvm::python {

// The Python object of an executable: a share of the immutable vm::Executable, which
// any number of VirtualMachines (and threads) use at once.
struct PyExecutable {
  std::shared_ptr<const vm::Executable> executable;
};

// Adds dynvm.Executable, dynvm.load and dynvm.load_bytes to `module`.
void RegisterExecutable(pybind11::module_& module);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_EXECUTABLE_H_
