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

PyExecutable Load(const py::object& path) {
  // str, bytes or os.PathLike, as open() takes.
  const std::string file = py::module_::import("os").attr("fsdecode")(path).cast<std::string>();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe;
  {
    py::gil_scoped_release release;
    exe = serializer::LoadExecutable(file, kernels::DefaultRegistry());
  }
  return PyExecutable{ValueOrThrow(std::move(exe))};
}

PyExecutable LoadBytes(const py::object& data) {
  Py_buffer view;
  if (PyObject_GetBuffer(data.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe;
  {
    // The export pins the bytes (a bytearray cannot resize while it is exported).
    py::gil_scoped_release release;
    exe = serializer::LoadExecutableFromMemory(
        absl::MakeConstSpan(static_cast<const uint8_t*>(view.buf), static_cast<size_t>(view.len)),
        kernels::DefaultRegistry());
  }
  PyBuffer_Release(&view);
  return PyExecutable{ValueOrThrow(std::move(exe))};
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

  module.def("load", &Load, py::arg("path"),
             "Maps and verifies the executable file at `path` (weights are not copied).");
  module.def("load_bytes", &LoadBytes, py::arg("data"),
             "Verifies and loads an executable held in a bytes-like object (copied once).");
}

}  // namespace dynvm::python
