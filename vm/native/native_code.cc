// Native code of an executable, checked against this CPU and loaded: its programs' row
// functions.
#include "vm/native/native_code.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/cpu_features.h"
#include "vm/native/native_module.h"

namespace dynvm::vm {

absl::Status CheckNativeCodeRuns(const NativeCode& code,
                                 absl::FunctionRef<bool(std::string_view)> cpu_has) {
  std::vector<std::string_view> missing;
  for (const std::string& f : code.features) {
    const absl::Span<const std::string_view> known = kernels::KnownCpuFeatures();
    if (std::find(known.begin(), known.end(), f) == known.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "native code requires CPU feature '%s', which this runtime does not know: expected "
          "one of %s", f, absl::StrJoin(known, ", ", [](std::string* out, std::string_view k) {
            out->append(k);
          })));
    }
    if (!cpu_has(f)) missing.push_back(f);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "native code was generated for cpu '%s' and needs %s; this CPU lacks %s: recompile "
      "with vm_compile --target-cpu=native (or an older cpu such as x86-64-v2)",
      code.cpu, absl::StrJoin(code.features, ", "),
      absl::StrJoin(missing, ", ", [](std::string* out, std::string_view m) { out->append(m); })));
}

absl::StatusOr<NativePrograms> LoadNativeCode(const NativeCode& code) {
  NativePrograms programs;
  if (code.object.empty()) {
    if (!code.programs.empty()) {
      return absl::InvalidArgumentError("native code lists programs but holds no object");
    }
    return programs;
  }
  DYNVM_RETURN_IF_ERROR(CheckNativeCodeRuns(code, kernels::CpuHasFeature));
  DYNVM_ASSIGN_OR_RETURN(std::shared_ptr<const NativeModule> module,
                         NativeModule::Load(code.object, NativeRuntimeExternals()));
  for (const auto& [text, symbol] : code.programs) {
    kernels::NativeElementwiseCode rows;
    DYNVM_ASSIGN_OR_RETURN(const void* contiguous, module->Find(symbol + "_contiguous"));
    DYNVM_ASSIGN_OR_RETURN(const void* strided, module->Find(symbol + "_strided"));
    if (contiguous == nullptr || strided == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrFormat("native code: program \"%s\" has no code for '%s'", text, symbol));
    }
    rows.contiguous = reinterpret_cast<kernels::NativeRowFn>(const_cast<void*>(contiguous));
    rows.strided = reinterpret_cast<kernels::NativeRowFn>(const_cast<void*>(strided));
    rows.owner = module;
    programs.emplace(text, std::move(rows));
  }
  return programs;
}

}  // namespace dynvm::vm
