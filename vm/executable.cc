#include "vm/executable.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "vm/verifier.h"

namespace dynvm::vm {

std::string ValueSpecToString(const ValueSpec& spec) {
  switch (spec.kind) {
    case ValueSpec::Kind::kAny: return "any";
    case ValueSpec::Kind::kInt: return "int";
    case ValueSpec::Kind::kFloat: return "float";
    case ValueSpec::Kind::kBool: return "bool";
    case ValueSpec::Kind::kTuple:
      return absl::StrFormat("tuple(%s)", absl::StrJoin(spec.fields, ", ", [](std::string* out, const ValueSpec& f) {
                               absl::StrAppend(out, ValueSpecToString(f));
                             }));
    case ValueSpec::Kind::kTensor: break;
  }
  auto dim = [](std::string* out, const DimSpec& d) {
    if (d.extent >= 0) {
      absl::StrAppend(out, d.extent);
    } else {
      absl::StrAppend(out, d.symbol.empty() ? "?" : d.symbol);
    }
  };
  return absl::StrFormat("tensor %s[%s]", DTypeName(spec.dtype),
                         absl::StrJoin(spec.dims, ", ", dim));
}

absl::StatusOr<std::shared_ptr<const Executable>> Executable::Create(
    ExecutableSpec spec, const kernels::KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(VerifyExecutable(spec));
  std::shared_ptr<Executable> exe(new Executable(std::move(spec)));
  exe->bound_kernels_.reserve(exe->spec_.kernels.size());
  for (size_t i = 0; i < exe->spec_.kernels.size(); ++i) {
    const KernelEntry& entry = exe->spec_.kernels[i];
    absl::StatusOr<kernels::BoundKernel> bound = registry.Bind(
        entry.name, entry.attrs, static_cast<int>(entry.num_inputs),
        static_cast<int>(entry.num_outputs));
    if (!bound.ok()) {
      return absl::Status(bound.status().code(),
                          absl::StrFormat("kernel table entry %d: %s", i, bound.status().message()));
    }
    exe->bound_kernels_.push_back(*std::move(bound));
  }
  for (size_t i = 0; i < exe->spec_.functions.size(); ++i) {
    exe->function_index_.emplace(exe->spec_.functions[i].name, static_cast<uint32_t>(i));
  }
  return std::shared_ptr<const Executable>(std::move(exe));
}

std::optional<uint32_t> Executable::FunctionIndex(std::string_view name) const {
  auto it = function_index_.find(absl::string_view(name.data(), name.size()));
  if (it == function_index_.end()) return std::nullopt;
  return it->second;
}

}  // namespace dynvm::vm
