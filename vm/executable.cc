// Executable::Create: verify, load native code if trusted, bind the kernel table.
#include "vm/executable.h"

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "vm/native/native_code.h"
#include "vm/verifier.h"

namespace dynvm::vm {

absl::StatusOr<std::shared_ptr<const Executable>> Executable::Create(
    ExecutableSpec spec, const kernels::KernelRegistry& registry, const LoadOptions& options) {
  DYNVM_RETURN_IF_ERROR(VerifyExecutable(spec));
  // Untrusted native code is never mapped: the kernels bind without it.
  const bool ignored = !options.trust_native_code && !spec.native.object.empty();
  DYNVM_ASSIGN_OR_RETURN(const NativePrograms native,
                         LoadNativeCode(ignored ? NativeCode{} : spec.native));
  kernels::BindContext context;
  if (!native.empty()) {
    context.native_program = [&native](std::string_view text) -> const kernels::NativeElementwiseCode* {
      auto it = native.find(absl::string_view(text.data(), text.size()));
      return it == native.end() ? nullptr : &it->second;
    };
  }
  std::shared_ptr<Executable> exe(new Executable(std::move(spec)));
  exe->native_code_ignored_ = ignored;
  exe->bound_kernels_.reserve(exe->spec_.kernels.size());
  for (size_t i = 0; i < exe->spec_.kernels.size(); ++i) {
    const KernelEntry& entry = exe->spec_.kernels[i];
    // Without its native code, a native.X entry is X on the evaluator.
    const std::string_view name = ignored && entry.name.starts_with(kernels::kNativeKernelPrefix)
                                      ? std::string_view(entry.name).substr(kernels::kNativeKernelPrefix.size())
                                      : std::string_view(entry.name);
    absl::StatusOr<kernels::BoundKernel> bound =
        registry.Bind(name, entry.attrs, static_cast<int>(entry.num_inputs),
                      static_cast<int>(entry.num_outputs), context);
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
