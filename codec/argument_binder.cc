// Matching outside arguments to parameters, then checking and building them: the
// binder every front end (vm_run, vm_serve, the Python module, the C API) shares.
#include "codec/argument_binder.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "vm/virtual_machine.h"

namespace dynvm::codec {
namespace {

// The name parameter `index` is matched by: options.param_names' or the signature's.
const std::string& ParamName(const vm::Function& function, const BindOptions& options,
                             size_t index) {
  return options.param_names.empty() ? function.params[index].name : options.param_names[index];
}

// "'y' (argument 1 of 'main')", or "argument 1 of 'main'" for an unnamed parameter.
std::string ParamLabel(const vm::Function& function, const BindOptions& options, size_t index) {
  const std::string& name = ParamName(function, options, index);
  const std::string position = absl::StrFormat("argument %d of '%s'", index, function.name);
  return name.empty() ? position : absl::StrFormat("'%s' (%s)", name, position);
}

// "x, y" ("argument 1" for an unnamed parameter), or "none".
std::string ParamList(const vm::Function& function, const BindOptions& options) {
  std::string out;
  for (size_t i = 0; i < function.params.size(); ++i) {
    const std::string& name = ParamName(function, options, i);
    absl::StrAppend(&out, i == 0 ? "" : ", ",
                    name.empty() ? absl::StrCat("argument ", i) : name);
  }
  return out.empty() ? "none" : out;
}

absl::Status MissingInputs(const vm::Function& function, const BindOptions& options,
                           absl::Span<const ArgumentSource* const> bound) {
  std::string missing;
  int count = 0;
  for (size_t i = 0; i < bound.size(); ++i) {
    if (bound[i] != nullptr) continue;
    const std::string& name = ParamName(function, options, i);
    const std::string type = vm::ValueSpecToString(function.params[i]);
    absl::StrAppend(&missing, count++ == 0 ? "" : ", ",
                    name.empty() ? absl::StrFormat("argument %d (%s)", i, type)
                                 : absl::StrFormat("'%s' (argument %d, %s)", name, i, type));
  }
  if (count == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("missing input%s for '%s': %s",
                                                    count == 1 ? "" : "s", function.name, missing));
}

// The source of each parameter, or an error for a name or position that fits none.
absl::StatusOr<std::vector<const ArgumentSource*>> Match(const vm::Function& function,
                                                         absl::Span<const ArgumentSource> sources,
                                                         const BindOptions& options) {
  const size_t num_params = function.params.size();
  std::vector<const ArgumentSource*> bound(num_params, nullptr);
  size_t positional = 0;
  for (const ArgumentSource& source : sources) {
    size_t index = positional;
    if (!source.name.empty()) {
      index = 0;
      while (index < num_params && ParamName(function, options, index) != source.name) ++index;
      if (index == num_params) {
        return absl::InvalidArgumentError(
            absl::StrFormat("unknown input name '%s': '%s' has parameters %s", source.name,
                            function.name, ParamList(function, options)));
      }
    } else if (positional == num_params) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "too many inputs: '%s' takes %d (%s) but %s would be argument %d", function.name,
          num_params, ParamList(function, options), source.label, positional));
    }
    if (bound[index] != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("input %s given twice (again by %s)",
                          ParamLabel(function, options, index), source.label));
    }
    if (source.name.empty()) ++positional;
    bound[index] = &source;
  }
  DYNVM_RETURN_IF_ERROR(MissingInputs(function, options, bound));
  return bound;
}

}  // namespace

absl::StatusOr<std::vector<Value>> BindArguments(const vm::Function& function,
                                                 absl::Span<const ArgumentSource> sources,
                                                 const BindOptions& options) {
  if (!options.param_names.empty() && options.param_names.size() != function.params.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d parameter names for '%s', which has %d parameters", options.param_names.size(),
        function.name, function.params.size()));
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<const ArgumentSource*> bound,
                         Match(function, sources, options));
  std::vector<Value> args;
  args.reserve(bound.size());
  for (size_t i = 0; i < bound.size(); ++i) {
    const ArgumentSource& source = *bound[i];
    absl::StatusOr<Value> value = source.build(function.params[i]);
    if (!value.ok()) {
      return absl::Status(value.status().code(),
                          absl::StrFormat("input %s: %s", ParamLabel(function, options, i),
                                          value.status().message()));
    }
    args.push_back(*std::move(value));
  }
  DYNVM_RETURN_IF_ERROR(vm::CheckArguments(function, args));
  return args;
}

}  // namespace dynvm::codec
