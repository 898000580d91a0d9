// The kernel registry and binding, BoundKernel's calls, and attribute access
// (kernels/kernel.h).
#include "kernels/kernel.h"

#include <algorithm>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace dynvm::kernels {

absl::Status KernelRegistry::Register(KernelDef def) {
  if (def.name.empty() || def.fn == nullptr) {
    return absl::InvalidArgumentError("kernel definition needs a name and a function");
  }
  if (def.bind != nullptr && def.bind_in_context != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kernel '%s' sets both bind and bind_in_context", def.name));
  }
  if (defs_.contains(def.name)) {
    return absl::AlreadyExistsError(absl::StrFormat("kernel '%s' registered twice", def.name));
  }
  std::string name = def.name;
  defs_.emplace(std::move(name), std::make_unique<KernelDef>(std::move(def)));
  return absl::OkStatus();
}

const KernelDef* KernelRegistry::Find(std::string_view name) const {
  auto it = defs_.find(absl::string_view(name.data(), name.size()));
  return it == defs_.end() ? nullptr : it->second.get();
}

std::vector<std::string> KernelRegistry::Names() const {
  std::vector<std::string> names;
  names.reserve(defs_.size());
  for (const auto& [name, def] : defs_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<BoundKernel> KernelRegistry::Bind(std::string_view name, const Attrs& attrs,
                                                 int num_inputs, int num_outputs,
                                                 const BindContext& context) const {
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
  if (def.bind != nullptr || def.bind_in_context != nullptr) {
    absl::StatusOr<std::shared_ptr<const void>> bound =
        def.bind != nullptr ? def.bind(attrs) : def.bind_in_context(attrs, context);
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

absl::Status BoundKernel::StringArgumentError(int index) const {
  return absl::InvalidArgumentError(absl::StrFormat(
      "kernel '%s' does not take string tensors (only kernels made for them, such as cast, "
      "do): argument %d is one",
      def_->name, index));
}

absl::Status BoundKernel::InferShapes(NDArrayObj* const* inputs, Shape* output_shapes) const {
  if (def_->shape_fn == nullptr) {
    return absl::UnimplementedError(
        absl::StrFormat("kernel '%s' has no shape function", def_->name));
  }
  if (!def_->takes_strings) DYNVM_RETURN_IF_ERROR(RefuseStrings(inputs, num_inputs_));
  return def_->shape_fn(
      ShapeCall{state_.get(), inputs, num_inputs_, output_shapes, num_outputs_});
}

namespace {

// The attribute `name` as a `T`, or an error naming it and `kind` ("int", ...), which
// `article` ("a" or "an") precedes in prose.
template <typename T>
absl::StatusOr<T> GetAttr(const Attrs& attrs, std::string_view name, std::string_view article,
                          std::string_view kind) {
  auto it = attrs.find(name);
  if (it == attrs.end()) {
    return absl::InvalidArgumentError(absl::StrFormat("missing %s attribute '%s'", kind, name));
  }
  if (const auto* v = std::get_if<T>(&it->second)) return *v;
  if constexpr (std::is_same_v<T, double>) {
    if (const auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("attribute '%s' must be %s %s", name, article, kind));
}

}  // namespace

absl::StatusOr<int64_t> GetIntAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr<int64_t>(attrs, name, "an", "int");
}

absl::StatusOr<int64_t> GetIntAttr(const Attrs& attrs, std::string_view name, int64_t fallback) {
  if (!attrs.contains(name)) return fallback;
  return GetIntAttr(attrs, name);
}

absl::StatusOr<double> GetFloatAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr<double>(attrs, name, "a", "float");
}

absl::StatusOr<double> GetFloatAttr(const Attrs& attrs, std::string_view name, double fallback) {
  if (!attrs.contains(name)) return fallback;
  return GetFloatAttr(attrs, name);
}

absl::StatusOr<std::string> GetStringAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr<std::string>(attrs, name, "a", "string");
}

absl::StatusOr<std::string> GetStringAttr(const Attrs& attrs, std::string_view name,
                                          std::string_view fallback) {
  if (!attrs.contains(name)) return std::string(fallback);
  return GetStringAttr(attrs, name);
}

absl::StatusOr<bool> GetBoolAttr(const Attrs& attrs, std::string_view name, bool fallback) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t value, GetIntAttr(attrs, name, fallback ? 1 : 0));
  if (value != 0 && value != 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("attribute '%s' must be 0 or 1, got %d", name, value));
  }
  return value == 1;
}

absl::StatusOr<std::vector<int64_t>> GetIntsAttr(const Attrs& attrs, std::string_view name) {
  return GetAttr<std::vector<int64_t>>(attrs, name, "an", "int list");
}

absl::StatusOr<std::vector<int64_t>> GetIntsAttr(const Attrs& attrs, std::string_view name,
                                                 std::vector<int64_t> fallback) {
  if (!attrs.contains(name)) return fallback;
  return GetIntsAttr(attrs, name);
}

absl::Status CheckKnownAttrs(const Attrs& attrs, std::initializer_list<std::string_view> known) {
  for (const auto& [name, value] : attrs) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return absl::InvalidArgumentError(absl::StrFormat("unknown attribute '%s'", name));
    }
  }
  return absl::OkStatus();
}

}  // namespace dynvm::kernels
