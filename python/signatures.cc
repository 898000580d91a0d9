// The bindings of `dynvm.Function` and `dynvm.ValueSpec`, copied from the
// executable's signatures (python/signatures.h).
#include "python/signatures.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "python/dtypes.h"

namespace dynvm::python {

namespace py = pybind11;

namespace {

using Kind = vm::ValueSpec::Kind;

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kAny: return "any";
    case Kind::kTensor: return "tensor";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kBool: return "bool";
    case Kind::kTuple: return "tuple";
  }
  return "unknown";
}

// The spec's text without its own name; tuple fields with theirs.
std::string SpecText(const vm::ValueSpec& spec) {
  if (spec.kind != Kind::kTuple) return vm::ValueSpecToString(spec);
  return absl::StrCat("tuple(", absl::StrJoin(spec.fields, ", ", [](std::string* out, const vm::ValueSpec& f) {
                        absl::StrAppend(out, NamedSpecText(f));
                      }), ")");
}

// Copies of `specs`, as a Python list.
py::list SpecList(const std::vector<vm::ValueSpec>& specs) {
  py::list out;
  for (const vm::ValueSpec& spec : specs) out.append(py::cast(spec, py::return_value_policy::copy));
  return out;
}

// A tensor's dims: ints for constants, strings for symbols, None for `?`.
py::object Shape(const vm::ValueSpec& spec) {
  if (spec.kind != Kind::kTensor) return py::none();
  py::list dims;
  for (const vm::DimSpec& d : spec.dims) {
    if (d.extent >= 0) {
      dims.append(py::int_(d.extent));
    } else if (!d.symbol.empty()) {
      dims.append(py::str(d.symbol));
    } else {
      dims.append(py::none());
    }
  }
  return dims;
}

}  // namespace

std::string NamedSpecText(const vm::ValueSpec& spec) {
  return spec.name.empty() ? SpecText(spec) : absl::StrCat(spec.name, ": ", SpecText(spec));
}

void RegisterSignatures(py::module_& module) {
  py::class_<vm::ValueSpec>(module, "ValueSpec", "The type of one input or output of a function.")
      .def_readonly("name", &vm::ValueSpec::name, "The name; empty when the compiler had none.")
      .def_property_readonly(
          "kind", [](const vm::ValueSpec& s) { return KindName(s.kind); },
          "'tensor', 'int', 'float', 'bool', 'tuple' or 'any'.")
      .def_property_readonly(
          "dtype",
          [](const vm::ValueSpec& s) {
            return s.kind == Kind::kTensor ? NumpyDType(s.dtype) : py::none();
          },
          "A tensor's numpy dtype; None for other kinds and for bfloat16.")
      .def_property_readonly("shape", &Shape,
                             "A tensor's dims (int, symbol name, or None for '?'); None for "
                             "other kinds.")
      .def_property_readonly(
          "fields", [](const vm::ValueSpec& s) { return SpecList(s.fields); },
          "A tuple's fields, in order; empty for other kinds.")
      .def("__repr__", [](const vm::ValueSpec& s) {
        return absl::StrCat("ValueSpec(", NamedSpecText(s), ")");
      });

  py::class_<vm::Function>(module, "Function", "A function of an executable and its signature.")
      .def_readonly("name", &vm::Function::name)
      .def_property_readonly(
          "inputs", [](const vm::Function& f) { return SpecList(f.params); },
          "The parameters, in order.")
      .def_property_readonly(
          "outputs", [](const vm::Function& f) { return SpecList(f.results); },
          "What the function returns: one value (an ONNX model's is a tuple of its named "
          "outputs).")
      .def("__repr__", [](const vm::Function& f) {
        auto named = [](std::string* out, const vm::ValueSpec& s) {
          absl::StrAppend(out, NamedSpecText(s));
        };
        return absl::StrCat("Function(", f.name, "(", absl::StrJoin(f.params, ", ", named),
                            ") -> ", absl::StrJoin(f.results, ", ", named), ")");
      });
}

}  // namespace dynvm::python
