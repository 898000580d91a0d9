// `dynvm.VirtualMachine`: runs the functions of an Executable on Python values.
//
// Arguments bind to parameters by position, then by keyword (the signature's names);
// the VM runs with the GIL released; the result comes back as Python objects
// (python/value_conversion.h). A VirtualMachine is meant for one thread at a time, as
// vm::VirtualMachine is: calls from several Python threads on the same VM take turns
// on a mutex instead of racing. For parallel inference make one VM per thread; they
// share the Executable.
//
//   >>> vm = dynvm.VirtualMachine(exe, num_threads=2)
//   >>> hidden, pooled = vm.invoke("main", input_ids=ids, attention_mask=mask,
//   ...                            token_type_ids=types)
#ifndef DYNVM_PYTHON_VIRTUAL_MACHINE_H_
#define DYNVM_PYTHON_VIRTUAL_MACHINE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/thread_pool.h"
#include "objects/value.h"
#include "pybind11/pybind11.h"
#include "vm/virtual_machine.h"

namespace dynvm::python {

class PyVirtualMachine {
 public:
  // A VM running `executable`, its kernels on a private pool of `num_threads` threads
  // (the process-wide default pool when absent). InvalidArgument for a count below 1.
  static absl::StatusOr<std::unique_ptr<PyVirtualMachine>> Create(
      std::shared_ptr<const vm::Executable> executable, std::optional<int> num_threads,
      vm::VmOptions options);

  // Runs the function named by the first of `call`, on the rest of `call` and on
  // `kwargs`, converting the result to Python. (The name travels in `call` so that a
  // parameter may be called "function" too.) Throws StatusError for bad arguments
  // (InvalidArgument naming the parameter), an unknown function (NotFound) and failures
  // of the run.
  pybind11::object Invoke(const pybind11::args& call, const pybind11::kwargs& kwargs);
  // The same, with the result as a dict from output name to value, in signature order:
  // a tuple result's fields by their names, any other result under its own name.
  // Unnamed outputs are called "output_<i>".
  pybind11::dict InvokeNamed(const pybind11::args& call, const pybind11::kwargs& kwargs);

  const std::shared_ptr<const vm::Executable>& executable() const { return executable_; }
  int num_threads() const { return num_threads_; }

 private:
  PyVirtualMachine(std::shared_ptr<const vm::Executable> executable,
                   std::unique_ptr<kernels::ThreadPool> pool, vm::VmOptions options);

  // The index of the function `call` names and the arguments bound to its
  // parameters. Needs the GIL.
  absl::StatusOr<std::pair<uint32_t, std::vector<Value>>> BindArguments(
      const pybind11::args& call, const pybind11::kwargs& kwargs) const;
  // Binds, runs with the GIL released, and returns the function's index and result.
  std::pair<uint32_t, Value> Run(const pybind11::args& call, const pybind11::kwargs& kwargs);

  std::shared_ptr<const vm::Executable> executable_;
  std::unique_ptr<kernels::ThreadPool> pool_;  // declared before machine_: outlives it
  int num_threads_;
  std::mutex mu_;  // taken with the GIL released, so a waiting thread blocks no other
  vm::VirtualMachine machine_;
};

// Adds dynvm.VirtualMachine to `module`.
void RegisterVirtualMachine(pybind11::module_& module);

}  // namespace dynvm::python

#endif  // DYNVM_PYTHON_VIRTUAL_MACHINE_H_
