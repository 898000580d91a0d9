// `dynvm._runtime`, the runtime of the Python package `dynvm` (docs/python.md), which
// python/dynvm/__init__.py re-exports: load executables, inspect their signatures, run
// them on numpy arrays without copying. No compiler, no LLVM: that is dynvm._compiler.
//
//   >>> import dynvm
//   >>> exe = dynvm.load("exe.fbs")
//   >>> vm = dynvm.VirtualMachine(exe)
//   >>> out = vm.invoke("main", x=np.ones((2, 4), np.float32))
#include "pybind11/pybind11.h"
#include "python/errors.h"
#include "python/executable.h"
#include "python/signatures.h"
#include "python/tensor_conversion.h"
#include "python/virtual_machine.h"

PYBIND11_MODULE(_runtime, module) {
  namespace py = pybind11;
  module.doc() = "dynvm: run executables compiled by vm_compile (see docs/python.md).";
  // Arrays go through numpy's C API: without numpy, fail at import rather than at the
  // first call.
  py::module_::import("numpy");
  dynvm::python::RegisterErrors(module);
  dynvm::python::RegisterSignatures(module);
  dynvm::python::RegisterTensor(module);
  dynvm::python::RegisterExecutable(module);
  dynvm::python::RegisterVirtualMachine(module);
}
