#include "vm/executable.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "kernels/cpu_features.h"
#include "kernels/native_elementwise.h"
#include "vm/native_module.h"
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

namespace {

void AppendLeafSpecs(const ValueSpec& spec, std::vector<const ValueSpec*>& out) {
  if (spec.kind != ValueSpec::Kind::kTuple) {
    out.push_back(&spec);
    return;
  }
  for (const ValueSpec& field : spec.fields) AppendLeafSpecs(field, out);
}

}  // namespace

std::vector<const ValueSpec*> Function::outputs() const {
  std::vector<const ValueSpec*> out;
  for (const ValueSpec& r : results) AppendLeafSpecs(r, out);
  return out;
}

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

namespace {

// The row functions of every program of `code`, after checking that this CPU runs it
// and loading it; empty when there is no native code.
absl::StatusOr<absl::flat_hash_map<std::string, kernels::NativeElementwiseCode>> LoadNativeCode(
    const NativeCode& code) {
  absl::flat_hash_map<std::string, kernels::NativeElementwiseCode> programs;
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

}  // namespace

absl::StatusOr<std::shared_ptr<const Executable>> Executable::Create(
    ExecutableSpec spec, const kernels::KernelRegistry& registry) {
  DYNVM_RETURN_IF_ERROR(VerifyExecutable(spec));
  DYNVM_ASSIGN_OR_RETURN(const auto native, LoadNativeCode(spec.native));
  kernels::BindContext context;
  if (!native.empty()) {
    context.native_program = [&native](std::string_view text) -> const kernels::NativeElementwiseCode* {
      auto it = native.find(absl::string_view(text.data(), text.size()));
      return it == native.end() ? nullptr : &it->second;
    };
  }
  std::shared_ptr<Executable> exe(new Executable(std::move(spec)));
  exe->bound_kernels_.reserve(exe->spec_.kernels.size());
  for (size_t i = 0; i < exe->spec_.kernels.size(); ++i) {
    const KernelEntry& entry = exe->spec_.kernels[i];
    absl::StatusOr<kernels::BoundKernel> bound =
        registry.Bind(entry.name, entry.attrs, static_cast<int>(entry.num_inputs),
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
