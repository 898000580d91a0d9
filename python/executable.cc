// The bindings of `dynvm.Executable` (with save), `dynvm.load` and `dynvm.load_bytes`
// (python/executable.h).
#include "python/executable.h"

#include <Python.h>

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "python/errors.h"
#include "serializer/executable_file.h"

namespace dynvm::python {

namespace py = pybind11;

namespace {

// The notice for an executable whose native code was not trusted: a RuntimeWarning.
PyExecutable Noticed(PyExecutable exe) {
  if (exe.executable->native_code_ignored() &&
      PyErr_WarnEx(PyExc_RuntimeWarning,
                   "dynvm: the executable's native code is not trusted, its fused programs run on the "
                   "portable evaluator (trust_native=True runs it)",
                   1) != 0) {
    throw py::error_already_set();  // warnings turned into errors
  }
  return exe;
}

PyExecutable Load(const py::object& path, bool trust_native) {
  // str, bytes or os.PathLike, as open() takes.
  const std::string file = py::module_::import("os").attr("fsdecode")(path).cast<std::string>();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe;
  {
    py::gil_scoped_release release;
    exe = serializer::LoadExecutable(file, kernels::DefaultRegistry(), {.trust_native_code = trust_native});
  }
  return Noticed(PyExecutable{ValueOrThrow(std::move(exe))});
}

PyExecutable LoadBytes(const py::object& data, bool trust_native) {
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe;
  {
    // The export pins the bytes (a bytearray cannot resize while it is exported).
    py::gil_scoped_release release;
    exe = serializer::LoadExecutableFromMemory(
        absl::MakeConstSpan(static_cast<const uint8_t*>(view.buf), static_cast<size_t>(view.len)),
        kernels::DefaultRegistry(), {.trust_native_code = trust_native});
  }
  PyBuffer_Release(&view);
  return Noticed(PyExecutable{ValueOrThrow(std::move(exe))});
}

}  // namespace

void RegisterExecutable(py::module_& module) {
  py::class_<PyExecutable>(module, "Executable",
                           "A loaded, verified executable: immutable, shared by any number of "
                           "VirtualMachines on any number of threads.")
      .def_property_readonly(
          "functions",
          [](const PyExecutable& e) {
            py::list out;
            for (const vm::Function& f : e.executable->functions()) {
              out.append(py::cast(f, py::return_value_policy::copy));
            }
            return out;
          },
          "The functions, each with its signature (dynvm.Function).")
      .def(
          "function",
          [](const PyExecutable& e, const std::string& name) {
            std::optional<uint32_t> index = e.executable->FunctionIndex(name);
            if (!index) {
              ThrowIfError(absl::NotFoundError(absl::StrFormat("no function '%s' in the executable", name)));
            }
            return e.executable->function(*index);
          },
          py::arg("name"), "The function called `name`; NotFoundError if there is none.")
      .def_property_readonly(
          "producer", [](const PyExecutable& e) { return e.executable->spec().producer; },
          "Who made the file (\"dynvm compiler\", ...).")
      .def_property_readonly(
          "native_code_ignored", [](const PyExecutable& e) { return e.executable->native_code_ignored(); },
          "Whether the executable has native code that was not loaded (not trusted).")
      .def(
          "save",
          [](const PyExecutable& e, const py::object& path) {
            const std::string file = py::module_::import("os").attr("fsdecode")(path).cast<std::string>();
            py::gil_scoped_release release;
            ThrowIfError(serializer::SaveExecutable(e.executable->spec(), file));
          },
          py::arg("path"), "Writes the executable file (what vm_compile -o writes) to `path`.")
      .def("__repr__", [](const PyExecutable& e) {
        return absl::StrCat("<dynvm.Executable functions=[",
                            absl::StrJoin(e.executable->functions(), ", ",
                                          [](std::string* out, const vm::Function& f) {
                                            absl::StrAppend(out, f.name);
                                          }),
                            "]>");
      });

  module.def("load", &Load, py::arg("path"), py::kw_only(), py::arg("trust_native") = false,
             "Maps and verifies the executable file at `path` (weights are not copied). Its native "
             "code runs only with trust_native=True (the verifier cannot check machine code); "
             "otherwise its fused programs run on the portable evaluator, with a RuntimeWarning.");
  module.def("load_bytes", &LoadBytes, py::arg("data"), py::kw_only(), py::arg("trust_native") = false,
             "Verifies and loads an executable held in a bytes-like object (copied once); "
             "trust_native as for load.");
}

}  // namespace dynvm::python
