// Register values between Python and the runtime: arguments in, results out.
//
// In, by the parameter's signature: an `int` parameter takes a Python or numpy integer,
// `float` a Python or numpy number, `bool` a Python or numpy bool; a tensor parameter a
// tensor (python/tensor_conversion.h), and a rank-0 tensor parameter also a Python
// scalar, converted to the parameter's dtype; a tuple parameter a tuple or list with a
// value per field. An `any` parameter goes by the Python type: bool, int, float, tuple
// or list, else a tensor.
//
// Out: ints, floats and bools become Python scalars, tensors numpy arrays viewing their
// memory, tuples Python tuples (nested), strings str and shapes tuples of ints. Closures
// and ADTs other than tuples have no Python form (UnimplementedError).
//
//   DYNVM_ASSIGN_OR_RETURN(Value arg, ToValue(obj, function.params[0], allocator));
//   DYNVM_ASSIGN_OR_RETURN(pybind11::object out, FromValue(result));
#ifndef DYNVM_PYTHON_VALUE_CONVERSION_H_
#define DYNVM_PYTHON_VALUE_CONVERSION_H_

#include <memory>

#include "absl/status/statusor.h"
#include "objects/allocator.h"
#include "objects/value.h"
#include "pybind11/pybind11.h"
#include "vm/executable.h"

namespace dynvm::python {

// `obj` as an argument for a parameter of type `spec`; copies that a tensor needs come
// from `allocator`. InvalidArgument when `obj` cannot be one (the message says what was
// expected and what came); whether a tensor's dtype and shape fit is left to the
// binder's check (codec/argument_binder.h). Needs the GIL.
absl::StatusOr<Value> ToValue(pybind11::handle obj, const vm::ValueSpec& spec,
                              const std::shared_ptr<Allocator>& allocator);

// `value` as a Python object. Needs the GIL.
absl::StatusOr<pybind11::object> FromValue(const Value& value);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_VALUE_CONVERSION_H_
