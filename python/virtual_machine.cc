// The binding of `dynvm.VirtualMachine`: arguments bound through the codec, calls
// and their limits (python/virtual_machine.h).
#include "python/virtual_machine.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "codec/argument_binder.h"
#include "objects/adt.h"
#include "pybind11/stl.h"
#include "python/errors.h"
#include "python/executable.h"
#include "python/value_conversion.h"

namespace dynvm::python {

namespace py = pybind11;

namespace {

// `name`, or "output_<index>" when it is empty.
std::string OutputName(const std::string& name, size_t index) {
  return name.empty() ? absl::StrFormat("output_%d", index) : name;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PyVirtualMachine>> PyVirtualMachine::Create(
    std::shared_ptr<const vm::Executable> executable, std::optional<int> num_threads,
    vm::VmOptions options) {
  std::unique_ptr<kernels::ThreadPool> pool;
  if (num_threads) {
    if (*num_threads < 1) {
      return absl::InvalidArgumentError(
          absl::StrFormat("num_threads must be at least 1, got %d", *num_threads));
    }
    pool = std::make_unique<kernels::ThreadPool>(*num_threads);
  }
  if (options.max_call_depth < 1 || options.max_steps < 0 || options.max_memory_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "max_call_depth must be at least 1, max_steps and max_memory_bytes at least 0; got "
        "%d, %d and %d",
        options.max_call_depth, options.max_steps, options.max_memory_bytes));
  }
  return std::unique_ptr<PyVirtualMachine>(
      new PyVirtualMachine(std::move(executable), std::move(pool), options));
}

PyVirtualMachine::PyVirtualMachine(std::shared_ptr<const vm::Executable> executable,
                                   std::unique_ptr<kernels::ThreadPool> pool,
                                   vm::VmOptions options)
    : executable_(executable),
      pool_(std::move(pool)),
      num_threads_(pool_ ? pool_->num_threads() : kernels::ThreadPool::Default().num_threads()),
      machine_(std::move(executable), [&] {
        options.thread_pool = pool_.get();
        return options;
      }()) {}

absl::StatusOr<std::pair<uint32_t, std::vector<Value>>> PyVirtualMachine::BindArguments(
    const py::args& call, const py::kwargs& kwargs) const {
  if (call.empty() || !py::isinstance<py::str>(call[0])) {
    return absl::InvalidArgumentError("the first argument must be the function's name (a str)");
  }
  const std::string function = py::str(call[0]);
  const py::tuple args = call[py::slice(1, call.size(), 1)];
  const std::optional<uint32_t> index = executable_->FunctionIndex(function);
  if (!index) {
    return absl::NotFoundError(absl::StrFormat(
        "no function '%s' in the executable: it has %s", function,
        absl::StrJoin(executable_->functions(), ", ", [](std::string* out, const vm::Function& f) {
          out->append(f.name);
        })));
  }
  // Positional arguments first, as Python binds them; the binder refuses a keyword
  // that repeats one.
  std::vector<codec::ArgumentSource> sources;
  sources.reserve(args.size() + kwargs.size());
  auto add = [&](std::string name, std::string label, py::handle obj) {
    sources.push_back({.name = std::move(name),
                       .label = std::move(label),
                       .build = [this, obj](const vm::ValueSpec& param) {
                         return ToValue(obj, param, machine_.allocator());
                       }});
  };
  for (size_t i = 0; i < args.size(); ++i) {
    add("", absl::StrFormat("positional argument %d", i), args[i]);
  }
  for (const auto& [key, value] : kwargs) {
    std::string name = py::str(key);
    // An empty name means "by position" to the binder.
    if (name.empty()) return absl::InvalidArgumentError("an empty keyword names no parameter");
    add(name, absl::StrFormat("keyword '%s'", name), value);
  }
  DYNVM_ASSIGN_OR_RETURN(std::vector<Value> values,
                         codec::BindArguments(executable_->function(*index), sources));
  return std::make_pair(*index, std::move(values));
}

std::pair<uint32_t, Value> PyVirtualMachine::Run(const py::args& call,
                                                 const py::kwargs& kwargs) {
  auto [index, values] = ValueOrThrow(BindArguments(call, kwargs));
  absl::StatusOr<Value> result;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mu_);
    result = machine_.Invoke(index, values);
  }
  return {index, ValueOrThrow(std::move(result))};
}

py::object PyVirtualMachine::Invoke(const py::args& call, const py::kwargs& kwargs) {
  return ValueOrThrow(FromValue(Run(call, kwargs).second));
}

py::dict PyVirtualMachine::InvokeNamed(const py::args& call, const py::kwargs& kwargs) {
  const auto [index, result] = Run(call, kwargs);
  const std::vector<vm::ValueSpec>& results = executable_->function(index).results;
  py::dict out;
  const ADTObj* tuple = result.As<ADTObj>();
  if (results.size() == 1 && results[0].kind == vm::ValueSpec::Kind::kTuple &&
      tuple != nullptr && tuple->tag() == 0 && tuple->size() == results[0].fields.size()) {
    for (uint32_t i = 0; i < tuple->size(); ++i) {
      out[py::str(OutputName(results[0].fields[i].name, i))] =
          ValueOrThrow(FromValue(tuple->fields()[i]));
    }
    return out;
  }
  out[py::str(OutputName(results.empty() ? "" : results[0].name, 0))] =
      ValueOrThrow(FromValue(result));
  return out;
}

void RegisterVirtualMachine(py::module_& module) {
  py::class_<PyVirtualMachine>(
      module, "VirtualMachine",
      "Runs the functions of an Executable. One thread at a time: concurrent calls on the "
      "same VM wait for each other; use one VM per thread to run in parallel.")
      .def(py::init([](const PyExecutable& exe, std::optional<int> num_threads,
                       uint32_t max_call_depth, int64_t max_steps, std::optional<double> timeout,
                       int64_t max_memory_bytes) {
             vm::VmOptions options;
             options.max_call_depth = max_call_depth;
             options.max_steps = max_steps;
             if (timeout) {
               // NaN and negative budgets are refused; +inf is no limit.
               if (!(*timeout > 0)) {
                 throw py::value_error(absl::StrFormat(
                     "timeout must be a positive number of seconds or None, got %g", *timeout));
               }
               options.timeout = absl::Seconds(*timeout);
             }
             options.max_memory_bytes = max_memory_bytes;
             return ValueOrThrow(PyVirtualMachine::Create(exe.executable, num_threads, options));
           }),
           py::arg("executable"), py::arg("num_threads") = py::none(), py::kw_only(),
           py::arg("max_call_depth") = vm::VmOptions{}.max_call_depth,
           py::arg("max_steps") = vm::VmOptions{}.max_steps,
           py::arg("timeout") = py::none(),
           py::arg("max_memory_bytes") = vm::VmOptions{}.max_memory_bytes,
           "`num_threads`: a private kernel thread pool of that many threads (counting the "
           "caller); None: the process-wide pool. `max_call_depth`: deeper calls fail with "
           "ResourceExhaustedError; `max_steps`: calls and backward jumps one invocation may "
           "make (0: no limit); `timeout`: seconds one invocation may run (None: no limit), "
           "DeadlineExceededError after; `max_memory_bytes`: tensor memory one invocation may "
           "hold (0: no limit), ResourceExhaustedError beyond.")
      .def("invoke", &PyVirtualMachine::Invoke,
           "invoke(function, /, *args, **kwargs): runs the function named `function` on the "
           "arguments, by position or by parameter name; returns its result (a tuple result "
           "as a Python tuple, tensors as read-only numpy arrays).")
      .def("invoke_named", &PyVirtualMachine::InvokeNamed,
           "invoke_named(function, /, *args, **kwargs): as invoke, but returns a dict from "
           "output name to value, in signature order.")
      .def_property_readonly(
          "executable", [](const PyVirtualMachine& m) { return PyExecutable{m.executable()}; })
      .def_property_readonly("num_threads", &PyVirtualMachine::num_threads,
                             "Threads of the pool this VM's kernels run on.");
}

}  // namespace dynvm::python
