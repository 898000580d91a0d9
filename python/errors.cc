// Status to Python exception: the exception classes per status code, and raising them
// (python/errors.h).
#include "python/errors.h"

#include <Python.h>

#include <string>

#include "absl/status/status.h"

namespace dynvm::python {
namespace {

namespace py = pybind11;

// The exception classes, made once when the module initialises and kept for the life of
// the process (an extension module is never unloaded).
struct ErrorClasses {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;
  PyObject* resource_exhausted = nullptr;
  PyObject* deadline_exceeded = nullptr;
  PyObject* unimplemented = nullptr;
};

ErrorClasses& Classes() {
  static ErrorClasses classes;
  return classes;
}

// dynvm.`name`, deriving from every class in `bases`, added to `module`.
PyObject* MakeClass(py::module_& module, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("dynvm.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  module.add_object(name, py::handle(cls));  // the module takes a new reference
  return cls;
}

PyObject* ClassFor(absl::StatusCode code) {
  const ErrorClasses& c = Classes();
  switch (code) {
    case absl::StatusCode::kInvalidArgument: return c.invalid_argument;
    case absl::StatusCode::kNotFound: return c.not_found;
    case absl::StatusCode::kResourceExhausted: return c.resource_exhausted;
    case absl::StatusCode::kDeadlineExceeded: return c.deadline_exceeded;
    case absl::StatusCode::kUnimplemented: return c.unimplemented;
    default: return c.error;
  }
}

// Raises the Python exception for `status` (the GIL is held: translators run in the
// binding's call).
void Raise(const absl::Status& status) {
  py::handle cls(ClassFor(status.code()));
  py::object exc = cls(py::str(std::string(status.message())));
  exc.attr("code") = py::str(absl::StatusCodeToString(status.code()));
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

void RegisterTranslator() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      Raise(e.status());
    }
  });
}

}  // namespace

void RegisterErrors(py::module_& module) {
  ErrorClasses& c = Classes();
  auto builtin = [](PyObject* type) { return py::reinterpret_borrow<py::object>(type); };
  c.error = MakeClass(module, "Error", py::make_tuple(builtin(PyExc_RuntimeError)),
                      "A failure reported by the dynvm runtime; `code` names its status code.");
  py::object error = builtin(c.error);
  c.invalid_argument = MakeClass(module, "InvalidArgumentError",
                                 py::make_tuple(error, builtin(PyExc_ValueError)),
                                 "Arguments that do not fit a signature, a malformed file.");
  c.not_found = MakeClass(module, "NotFoundError", py::make_tuple(error, builtin(PyExc_LookupError)),
                          "An unknown function, file or kernel.");
  c.resource_exhausted = MakeClass(module, "ResourceExhaustedError",
                                   py::make_tuple(error, builtin(PyExc_MemoryError)),
                                   "An allocation, call-depth or step limit was reached.");
  c.deadline_exceeded = MakeClass(module, "DeadlineExceededError",
                                  py::make_tuple(error, builtin(PyExc_TimeoutError)),
                                  "An invocation ran past its time limit.");
  c.unimplemented = MakeClass(module, "UnimplementedError",
                              py::make_tuple(error, builtin(PyExc_NotImplementedError)),
                              "Something the runtime or this module does not support.");

  RegisterTranslator();
}

void UseErrorsOf(const py::module_& runtime) {
  ErrorClasses& c = Classes();
  const auto take = [&runtime](const char* name) {
    return py::object(runtime.attr(name)).release().ptr();  // kept for the life of the process
  };
  c.error = take("Error");
  c.invalid_argument = take("InvalidArgumentError");
  c.not_found = take("NotFoundError");
  c.resource_exhausted = take("ResourceExhaustedError");
  c.deadline_exceeded = take("DeadlineExceededError");
  c.unimplemented = take("UnimplementedError");
  RegisterTranslator();
}

}  // namespace dynvm::python
