// Python values to registers by the parameter's signature, and results back to
// Python (python/value_conversion.h).
#include "python/value_conversion.h"

#include <Python.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "objects/adt.h"
#include "objects/ndarray.h"
#include "objects/shape_tuple.h"
#include "objects/string_object.h"
#include "python/dtypes.h"
#include "python/tensor_conversion.h"

namespace dynvm::python {

namespace py = pybind11;

namespace {

const char* TypeName(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

bool IsInstance(py::handle obj, const char* numpy_type) {
  return py::isinstance(obj, py::module_::import("numpy").attr(numpy_type));
}

absl::Status Expected(const char* what, py::handle obj) {
  return absl::InvalidArgumentError(absl::StrFormat("expected %s, got a %s", what, TypeName(obj)));
}

absl::StatusOr<Value> ToInt(py::handle obj) {
  if (!PyLong_Check(obj.ptr()) && !IsInstance(obj, "integer")) return Expected("an int", obj);
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(obj.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s does not fit in int64", py::str(obj).cast<std::string>()));
  }
  return Value::Int(v);
}

absl::StatusOr<Value> ToFloat(py::handle obj) {
  if (!PyFloat_Check(obj.ptr()) && !PyLong_Check(obj.ptr()) && !IsInstance(obj, "number")) {
    return Expected("a float", obj);
  }
  const double v = PyFloat_AsDouble(obj.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    py::error_already_set error;
    return absl::InvalidArgumentError(error.what());
  }
  return Value::Float(v);
}

absl::StatusOr<Value> ToBool(py::handle obj) {
  if (!PyBool_Check(obj.ptr()) && !IsInstance(obj, "bool_")) return Expected("a bool", obj);
  return Value::Bool(PyObject_IsTrue(obj.ptr()) == 1);
}

// Tuples nest at most this deep either way. A Python list may contain itself and a
// program may build tuples of any depth: past the limit is an error, not a C stack
// overflow. Counted per thread, as the conversions run with the GIL held.
constexpr int kMaxNesting = 100;
thread_local int nesting = 0;

struct NestingGuard {
  NestingGuard() { ++nesting; }
  ~NestingGuard() { --nesting; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
  bool too_deep() const { return nesting > kMaxNesting; }
};

absl::StatusOr<Value> ToTuple(py::handle obj, const vm::ValueSpec& spec,
                              const std::shared_ptr<Allocator>& allocator) {
  if (!PyTuple_Check(obj.ptr()) && !PyList_Check(obj.ptr())) return Expected("a tuple", obj);
  NestingGuard guard;
  if (guard.too_deep()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tuples nested more than %d deep (or a list that contains itself)",
                        kMaxNesting));
  }
  py::sequence items = py::reinterpret_borrow<py::sequence>(obj);
  const bool any = spec.kind == vm::ValueSpec::Kind::kAny;
  if (!any && items.size() != spec.fields.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "expected a tuple of %d fields, got %d", spec.fields.size(), items.size()));
  }
  std::vector<Value> fields;
  fields.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<Value> field = ToValue(items[i], any ? vm::ValueSpec{} : spec.fields[i], allocator);
    if (!field.ok()) {
      return absl::Status(field.status().code(),
                          absl::StrFormat("field %d: %s", i, field.status().message()));
    }
    fields.push_back(*std::move(field));
  }
  return Value(ADTObj::Tuple(fields));
}

absl::StatusOr<Value> ToTensor(py::handle obj, const vm::ValueSpec& spec,
                               const std::shared_ptr<Allocator>& allocator) {
  if (spec.dtype == DType::kString) {
    return absl::UnimplementedError(
        "a string tensor parameter cannot be passed from Python (numpy strings are not "
        "dynvm's string tensors): use vm_run or the C++ API");
  }
  // A Python scalar for a rank-0 tensor: numpy makes the one-element array.
  if (spec.dims.empty() &&
      (PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()))) {
    py::object dtype = NumpyDType(spec.dtype);
    if (dtype.is_none()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a Python scalar cannot become a %s tensor: pass one through __dlpack__",
          DTypeName(spec.dtype)));
    }
    py::object scalar = py::module_::import("numpy").attr("asarray")(obj, dtype);
    return ImportTensor(scalar, allocator);
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray array, ImportTensor(obj, allocator));
  return Value(std::move(array));
}

absl::StatusOr<py::object> TupleToPython(const ADTObj& adt) {
  NestingGuard guard;
  if (guard.too_deep()) {
    return absl::UnimplementedError(
        absl::StrFormat("a result with tuples nested more than %d deep has no Python form",
                        kMaxNesting));
  }
  if (adt.tag() != 0) {
    return absl::UnimplementedError(absl::StrFormat(
        "a constructor value (ADT tag %d) has no Python form: only tuples (tag 0) do",
        adt.tag()));
  }
  py::tuple out(adt.size());
  for (uint32_t i = 0; i < adt.size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(out[i], FromValue(adt.fields()[i]));
  }
  return py::object(std::move(out));
}

}  // namespace

absl::StatusOr<Value> ToValue(py::handle obj, const vm::ValueSpec& spec,
                              const std::shared_ptr<Allocator>& allocator) {
  using Kind = vm::ValueSpec::Kind;
  switch (spec.kind) {
    case Kind::kInt: return ToInt(obj);
    case Kind::kFloat: return ToFloat(obj);
    case Kind::kBool: return ToBool(obj);
    case Kind::kTuple: return ToTuple(obj, spec, allocator);
    case Kind::kTensor: return ToTensor(obj, spec, allocator);
    case Kind::kAny: break;
  }
  if (PyBool_Check(obj.ptr())) return ToBool(obj);
  if (PyLong_Check(obj.ptr())) return ToInt(obj);
  if (PyFloat_Check(obj.ptr())) return ToFloat(obj);
  if (PyTuple_Check(obj.ptr()) || PyList_Check(obj.ptr())) return ToTuple(obj, spec, allocator);
  DYNVM_ASSIGN_OR_RETURN(NDArray array, ImportTensor(obj, allocator));
  return Value(std::move(array));
}

absl::StatusOr<py::object> FromValue(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kNone: return py::object(py::none());
    case Value::Kind::kInt: return py::object(py::int_(value.int_value()));
    case Value::Kind::kFloat: return py::object(py::float_(value.float_value()));
    case Value::Kind::kBool: return py::object(py::bool_(value.bool_value()));
    case Value::Kind::kObject: break;
  }
  if (NDArray array = value.AsRef<NDArrayObj>()) return ExportTensor(std::move(array));
  if (const ADTObj* adt = value.As<ADTObj>()) return TupleToPython(*adt);
  if (const StringObj* s = value.As<StringObj>()) return py::object(py::str(s->value()));
  if (const ShapeTupleObj* shape = value.As<ShapeTupleObj>()) {
    py::tuple out(shape->dims().size());
    for (size_t i = 0; i < shape->dims().size(); ++i) out[i] = py::int_(shape->dims()[i]);
    return py::object(std::move(out));
  }
  return absl::UnimplementedError(
      absl::StrFormat("a %s has no Python form", value.TypeName()));
}

}  // namespace dynvm::python
