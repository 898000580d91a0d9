// Tensors in from the buffer protocol and DLPack, and out as numpy arrays viewing the
// runtime's memory (python/tensor_conversion.h).
#include "python/tensor_conversion.h"

#include <Python.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "dlpack/dlpack.h"
#include "objects/dtype.h"
#include "pybind11/numpy.h"
#include "python/dtypes.h"

namespace dynvm::python {

namespace py = pybind11;

namespace {

// What a tensor viewing Python memory holds: the DLManagedTensor FromDLPack adopts,
// and what gives the memory back to its producer.
struct Loan {
  DLManagedTensor managed{};
  std::vector<int64_t> shape;
  Py_buffer view{};                     // lent through the buffer protocol
  bool has_view = false;
  DLManagedTensor* producer = nullptr;  // lent through __dlpack__
};

// Gives the memory back. Needs the GIL: releasing a buffer or running a producer's
// deleter may drop the last reference to a Python object.
void ReturnLoan(Loan* loan) {
  if (loan->has_view) PyBuffer_Release(&loan->view);
  if (loan->producer != nullptr && loan->producer->deleter != nullptr) {
    loan->producer->deleter(loan->producer);
  }
  delete loan;
}

// The deleter of a lent tensor, run when its last view goes: on whatever thread drops
// it, holding the GIL or not. After the interpreter has shut down there is nothing to
// give back to, and taking the GIL would hang.
void DeleteLoan(DLManagedTensor* managed) {
  auto* loan = static_cast<Loan*>(managed->manager_ctx);
  if (!Py_IsInitialized()) return;
  const PyGILState_STATE gil = PyGILState_Ensure();
  ReturnLoan(loan);
  PyGILState_Release(gil);
}

// Owns a loan until an NDArray adopts it; returns it otherwise (the GIL is held in
// binding code).
struct LoanDeleter {
  void operator()(Loan* loan) const { ReturnLoan(loan); }
};
using LoanPtr = std::unique_ptr<Loan, LoanDeleter>;

bool IsCContiguous(absl::Span<const int64_t> shape, absl::Span<const int64_t> byte_strides,
                   size_t itemsize) {
  int64_t expected = static_cast<int64_t>(itemsize);
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (shape[i] == 0) return true;
    if (shape[i] != 1 && byte_strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

// Copies the elements of axes `axis`.. of a strided source to `*dst` in C order,
// advancing `*dst`.
void CopyStrided(const char* src, absl::Span<const int64_t> shape,
                 absl::Span<const int64_t> byte_strides, size_t itemsize, size_t axis,
                 char** dst) {
  if (axis == shape.size()) {
    std::memcpy(*dst, src, itemsize);
    *dst += itemsize;
    return;
  }
  for (int64_t i = 0; i < shape[axis]; ++i) {
    CopyStrided(src + i * byte_strides[axis], shape, byte_strides, itemsize, axis + 1, dst);
  }
}

// A view of the loaned memory at `data` when its layout allows, else a copy from
// `allocator` (and the loan goes back at once).
absl::StatusOr<NDArray> Borrow(LoanPtr loan, void* data, DType dtype,
                               absl::Span<const int64_t> byte_strides,
                               const std::shared_ptr<Allocator>& allocator) {
  const size_t itemsize = DTypeSize(dtype);
  const absl::Span<const int64_t> shape = loan->shape;
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensor of rank %d: at most %d is supported", shape.size(), kMaxRank));
  }
  const bool aligned = reinterpret_cast<uintptr_t>(data) % itemsize == 0;
  if (!aligned || !IsCContiguous(shape, byte_strides, itemsize)) {
    DYNVM_ASSIGN_OR_RETURN(NDArray copy, NDArrayObj::Empty(shape, dtype, allocator));
    if (copy->num_elements() > 0) {
      char* dst = static_cast<char*>(copy->data());
      CopyStrided(static_cast<const char*>(data), shape, byte_strides, itemsize, 0, &dst);
    }
    return copy;
  }
  DLManagedTensor& managed = loan->managed;
  managed.dl_tensor.data = data;
  managed.dl_tensor.device = {kDLCPU, 0};
  managed.dl_tensor.ndim = static_cast<int>(shape.size());
  managed.dl_tensor.dtype = ToDLDataType(dtype);
  managed.dl_tensor.shape = loan->shape.data();
  managed.dl_tensor.strides = nullptr;
  managed.dl_tensor.byte_offset = 0;
  managed.manager_ctx = loan.get();
  managed.deleter = DeleteLoan;
  absl::StatusOr<NDArray> array = FromDLPack(&managed);
  if (array.ok()) loan.release();  // the array owns it now
  return array;
}

absl::StatusOr<NDArray> ImportBuffer(py::handle obj, const std::shared_ptr<Allocator>& allocator) {
  LoanPtr loan(new Loan);
  if (PyObject_GetBuffer(obj.ptr(), &loan->view, PyBUF_RECORDS_RO) != 0) {
    py::error_already_set error;
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot read the buffer of a %s: %s", Py_TYPE(obj.ptr())->tp_name, error.what()));
  }
  loan->has_view = true;
  const Py_buffer& view = loan->view;
  DYNVM_ASSIGN_OR_RETURN(
      DType dtype,
      DTypeFromBufferFormat(view.format != nullptr ? view.format : "B", view.itemsize));
  std::vector<int64_t> byte_strides(view.ndim);
  loan->shape.resize(view.ndim);
  for (int i = 0; i < view.ndim; ++i) {
    loan->shape[i] = view.shape[i];
    byte_strides[i] = view.strides[i];
  }
  void* data = view.buf;
  return Borrow(std::move(loan), data, dtype, byte_strides, allocator);
}

absl::StatusOr<NDArray> ImportDLPack(py::handle obj, const std::shared_ptr<Allocator>& allocator) {
  py::object capsule = obj.attr("__dlpack__")();
  auto* producer =
      static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (producer == nullptr) throw py::error_already_set();
  // Renaming the capsule tells its destructor that a consumer owns the tensor now.
  if (PyCapsule_SetName(capsule.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  LoanPtr loan(new Loan);
  loan->producer = producer;
  const DLTensor& t = producer->dl_tensor;
  if (t.device.device_type != kDLCPU) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a %s on DLPack device type %d: only CPU tensors (1) can be passed",
        Py_TYPE(obj.ptr())->tp_name, static_cast<int>(t.device.device_type)));
  }
  if (t.ndim < 0 || t.ndim > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tensor of rank %d: at most %d is supported", t.ndim, kMaxRank));
  }
  DYNVM_ASSIGN_OR_RETURN(DType dtype, FromDLDataType(t.dtype));
  const auto itemsize = static_cast<int64_t>(DTypeSize(dtype));
  loan->shape.assign(t.shape, t.shape + t.ndim);
  std::vector<int64_t> byte_strides(t.ndim);
  int64_t contiguous = itemsize;
  for (int i = t.ndim - 1; i >= 0; --i) {
    byte_strides[i] = t.strides != nullptr ? t.strides[i] * itemsize : contiguous;
    contiguous *= t.shape[i];
  }
  void* data = static_cast<char*>(t.data) + t.byte_offset;
  return Borrow(std::move(loan), data, dtype, byte_strides, allocator);
}

// The owner of an exported array's memory: its numpy `.base`.
struct Tensor {
  NDArray array;
};

}  // namespace

absl::StatusOr<NDArray> ImportTensor(py::handle obj, const std::shared_ptr<Allocator>& allocator) {
  if (PyObject_CheckBuffer(obj.ptr())) return ImportBuffer(obj, allocator);
  if (py::hasattr(obj, "__dlpack__")) return ImportDLPack(obj, allocator);
  return absl::InvalidArgumentError(absl::StrFormat(
      "expected a tensor (a numpy array, an object with the buffer protocol or with "
      "__dlpack__), got a %s",
      Py_TYPE(obj.ptr())->tp_name));
}

absl::StatusOr<py::object> ExportTensor(NDArray array) {
  py::object dtype = NumpyDType(array->dtype());
  if (dtype.is_none()) {
    return absl::UnimplementedError(absl::StrFormat(
        "a %s tensor cannot become a numpy array: numpy has no dtype with its layout",
        DTypeName(array->dtype())));
  }
  const Shape& dims = array->shape();
  std::vector<py::ssize_t> shape(dims.begin(), dims.end());
  std::vector<py::ssize_t> strides(dims.size());
  py::ssize_t stride = static_cast<py::ssize_t>(DTypeSize(array->dtype()));
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  void* data = array->data();
  py::object owner = py::cast(Tensor{std::move(array)});
  py::array out(dtype.cast<py::dtype>(), std::move(shape), std::move(strides), data, owner);
  out.attr("setflags")(py::arg("write") = false);
  return py::object(std::move(out));
}

void RegisterTensor(py::module_& module) {
  py::class_<Tensor>(module, "Tensor",
                     "The runtime tensor an output array views; the array's `.base`. It keeps "
                     "the memory alive after the VM and the Executable are gone.")
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               py::tuple shape(t.array->ndim());
                               for (int i = 0; i < t.array->ndim(); ++i) {
                                 shape[i] = py::int_(t.array->shape()[i]);
                               }
                               return shape;
                             })
      .def_property_readonly("dtype", [](const Tensor& t) { return NumpyDType(t.array->dtype()); })
      .def_property_readonly(
          "data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.array->data()); },
          "The address of the first element, for checking what memory is shared.")
      .def("__repr__", [](const Tensor& t) {
        return absl::StrFormat("<dynvm.Tensor %s%s>", DTypeName(t.array->dtype()),
                               ShapeToString(t.array->shape()));
      });
}

}  // namespace dynvm::python
