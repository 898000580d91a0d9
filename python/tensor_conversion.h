// Tensors between Python and the runtime, without copying where the memory allows it.
//
// In: anything with the buffer protocol (numpy arrays, numpy scalars, memoryview,
// bytes-like objects) or with `__dlpack__` (PyTorch, JAX, ... tensors on the CPU)
// becomes an NDArray that views the object's memory when that memory is C-contiguous
// and aligned to its element size (what FromDLPack requires); otherwise it is copied
// into a 64-byte-aligned tensor from the VM's allocator. A view keeps the Python
// object (its buffer export, or its DLPack capsule's tensor) alive; the last reference
// may go on any thread, with or without the GIL, and giving the memory back takes the
// GIL first.
//
// Out: an NDArray becomes a read-only numpy array over the tensor's memory whose
// `.base` is a `dynvm.Tensor` holding the reference that keeps that memory alive (past
// the VM and the Executable). Read-only because the memory may be a constant mapped
// read-only from the executable file, or shared with another result or an input.
//
//   DYNVM_ASSIGN_OR_RETURN(NDArray x, ImportTensor(obj, machine.allocator()));
//   DYNVM_ASSIGN_OR_RETURN(pybind11::object array, ExportTensor(std::move(y)));
#ifndef DYNVM_PYTHON_TENSOR_CONVERSION_H_
#define DYNVM_PYTHON_TENSOR_CONVERSION_H_

#include <memory>

#include "absl/status/statusor.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "pybind11/pybind11.h"

namespace dynvm::python {

// The tensor `obj` lends or, when its layout does not allow a view, a copy of it in
// memory from `allocator`. InvalidArgument if `obj` is no tensor, is not on the CPU, or
// has an element type dynvm lacks; Python exceptions raised by `obj`'s own export
// (`__dlpack__`) propagate. Needs the GIL.
absl::StatusOr<NDArray> ImportTensor(pybind11::handle obj,
                                     const std::shared_ptr<Allocator>& allocator);

// A read-only numpy array viewing `array`'s memory, with a `dynvm.Tensor` owning
// `array` as its base. Unimplemented for bf16, which numpy lacks. Needs the GIL.
absl::StatusOr<pybind11::object> ExportTensor(NDArray array);

// Adds the class `dynvm.Tensor` (the owner of an exported array's memory) to `module`.
void RegisterTensor(pybind11::module_& module);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_TENSOR_CONVERSION_H_
