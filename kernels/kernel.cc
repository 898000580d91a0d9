#include "kernels/kernel.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace dynvm::kernels {

absl::Status KernelRegistry::Register(KernelDef def) {
  if (def.name.empty() || def.fn == nullptr) {
    return absl::InvalidArgumentError("kernel definition needs a name and a function");
  }
  if (defs_.contains(def.name)) {
    return absl::AlreadyExistsError(absl::StrFormat("kernel '%s' registered twice", def.name));
  }
  std::string name = def.name;
  defs_.emplace(std::move(name), std::make_unique<KernelDef>(std::move(def)));
  return absl::OkStatus();
}

absl::StatusOr<BoundKernel> KernelRegistry::Bind(std::string_view name, const Attrs& attrs,
                                                 int num_inputs, int num_outputs) const {
  auto it = defs_.find(absl::string_view(name.data(), name.size()));
  if (it == defs_.end()) {
    return absl::NotFoundError(absl::StrFormat("no kernel named '%s'", name));
  }
  const KernelDef& def = *it->second;
  if ((def.num_inputs != kVariadic && def.num_inputs != num_inputs) ||
      (def.num_outputs != kVariadic && def.num_outputs != num_outputs) || num_inputs < 0 ||
      num_outputs < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel '%s' takes %s inputs and %s outputs, not %d and %d", name,
        def.num_inputs == kVariadic ? "any number of" : absl::StrCat(def.num_inputs),
        def.num_outputs == kVariadic ? "any number of" : absl::StrCat(def.num_outputs),
        num_inputs, num_outputs));
  }
  std::shared_ptr<const void> state;
  if (def.bind != nullptr) {
    absl::StatusOr<std::shared_ptr<const void>> bound = def.bind(attrs);
    if (!bound.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("kernel '%s': %s", name, bound.status().message()));
    }
    state = *std::move(bound);
  } else if (!attrs.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kernel '%s' takes no attributes, got '%s'", name, attrs.begin()->first));
  }
  return BoundKernel(&def, std::move(state), num_inputs, num_outputs);
}

absl::StatusOr<int64_t> GetIntAttr(const Attrs& attrs, std::string_view name) {
  auto it = attrs.find(name);
  if (it == attrs.end()) {
    return absl::InvalidArgumentError(absl::StrFormat("missing int attribute '%s'", name));
  }
  if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  return absl::InvalidArgumentError(absl::StrFormat("attribute '%s' must be an int", name));
}

absl::StatusOr<int64_t> GetIntAttr(const Attrs& attrs, std::string_view name, int64_t fallback) {
  if (!attrs.contains(name)) return fallback;
  return GetIntAttr(attrs, name);
}

}  // namespace dynvm::kernels
