// How failures cross into Python: every absl::Status error becomes an exception of
// `dynvm.Error` (a RuntimeError) or of its subclass for the status code, which also
// derives from the matching built-in exception so that callers can catch either:
//
//   InvalidArgument    dynvm.InvalidArgumentError    (also ValueError)
//   NotFound           dynvm.NotFoundError           (also LookupError)
//   ResourceExhausted  dynvm.ResourceExhaustedError  (also MemoryError)
//   DeadlineExceeded   dynvm.DeadlineExceededError   (also TimeoutError)
//   Unimplemented      dynvm.UnimplementedError      (also NotImplementedError)
//   any other code     dynvm.Error
//
// The exception's message is the status message; its `code` attribute is the code's
// name ("INVALID_ARGUMENT"). The binding code keeps failures as statuses, as the rest of
// dynvm does, and turns them into C++ exceptions (`StatusError`) only at the functions
// Python calls, where pybind11 translates them.
//
//   ThrowIfError(vm::CheckArguments(function, args));
//   Value out = ValueOrThrow(vm.Invoke(index, args));
#ifndef DYNVM_PYTHON_ERRORS_H_
#define DYNVM_PYTHON_ERRORS_H_

#include <exception>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pybind11/pybind11.h"

namespace dynvm::python {

// A non-OK status on its way to Python.
class StatusError : public std::exception {
 public:
  explicit StatusError(absl::Status status)
      : status_(std::move(status)), what_(status_.ToString()) {}
  const absl::Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  absl::Status status_;
  std::string what_;
};

// Throws StatusError when `status` is not OK.
inline void ThrowIfError(absl::Status status) {
  if (!status.ok()) throw StatusError(std::move(status));
}

// The value of `result`, or throws StatusError with its status.
template <typename T>
T ValueOrThrow(absl::StatusOr<T> result) {
  if (!result.ok()) throw StatusError(std::move(result).status());
  return *std::move(result);
}

// Adds dynvm.Error and its subclasses to `module` and registers the translation of
// StatusError into them. Call once, from the module's initialisation.
void RegisterErrors(pybind11::module_& module);

// For another extension module of the package (the compiler's): translates StatusError
// into the classes RegisterErrors added to `runtime`, so that every module raises the
// same dynvm.Error family.
void UseErrorsOf(const pybind11::module_& runtime);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_ERRORS_H_
