// GenerateNativeKernels: the target machine (baseline x86-64 plus the CPU's checkable
// features), one LLVM module of every fused program's row functions, LLVM's O2 pipeline,
// and the object, loaded once against the runtime's externals before it is embedded.
#include "compiler/llvm/native_codegen.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/llvm/fused_kernel.h"
#include "kernels/api.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "kernels/elementwise/native_elementwise.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "vm/native/native_module.h"

namespace dynvm::compiler {
namespace {

void InitializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

// A target machine for `cpu` and the CPU features its code may use.
struct Target {
  std::unique_ptr<llvm::TargetMachine> machine;
  std::string cpu;                    // the CPU name, "native" resolved
  std::vector<std::string> features;  // of kernels::KnownCpuFeatures()
};

// The features of kernels::KnownCpuFeatures() that CPU `name` has (this machine's, for
// the host's name and `native`).
std::vector<std::string> CpuFeatures(const llvm::Target& target, const std::string& triple,
                                     const std::string& name, bool native) {
  llvm::StringMap<bool> host;
  if (native) llvm::sys::getHostCPUFeatures(host);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target.createMCSubtargetInfo(triple, name, ""));
  std::vector<std::string> out;
  for (std::string_view f : kernels::KnownCpuFeatures()) {
    const std::string key(f);
    if (native ? host.lookup(key) : sti->checkFeatures("+" + key)) out.push_back(key);
  }
  return out;
}

// The target machine for `cpu` on this host's x86-64 triple. Instructions come from the
// x86-64 baseline plus the CPU's features that the runtime can check at load
// (kernels::KnownCpuFeatures), so that no instruction a CPU check cannot see (XOP, FMA4,
// AVX-VNNI...) gets into the code; scheduling is tuned for `cpu` itself.
absl::StatusOr<Target> MakeTarget(const std::string& cpu) {
  InitializeLlvm();
  const std::string triple = llvm::sys::getProcessTriple();
  if (!llvm::StringRef(triple).startswith("x86_64")) {
    return absl::UnimplementedError(
        absl::StrFormat("native kernels are generated for x86-64 only, not %s", triple));
  }
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) {
    return absl::InternalError(absl::StrFormat("llvm has no target for %s: %s", triple, error));
  }
  const bool native = cpu == "native";
  const std::string name = native ? llvm::sys::getHostCPUName().str() : cpu;
  // Checked before any target machine exists, which would warn on stderr and go on.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  if (generic == nullptr || !generic->isCPUStringValid(name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unknown target cpu '%s': expected native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or "
        "an llvm cpu name such as skylake or znver3", cpu));
  }
  Target out{nullptr, name, CpuFeatures(*target, triple, name, native)};
  std::string features;
  for (const std::string& f : out.features) absl::StrAppend(&features, features.empty() ? "+" : ",+", f);
  llvm::TargetOptions options;  // no fast-math: contraction only where the IR asks for an fma
  out.machine.reset(target->createTargetMachine(triple, "x86-64", features, options,
                                                llvm::Reloc::PIC_, llvm::CodeModel::Small,
                                                llvm::CodeGenOpt::Aggressive));
  if (out.machine == nullptr) {
    return absl::InternalError(absl::StrFormat("llvm cannot target cpu '%s'", name));
  }
  return out;
}

// Optimises `module` (the O2 pipeline: no fast-math flags are set, so nothing is
// reassociated or contracted) and emits it as an object file.
absl::StatusOr<std::string> EmitObject(llvm::Module& module, llvm::TargetMachine& machine) {
  std::string verify_errors;
  llvm::raw_string_ostream verify_os(verify_errors);
  if (llvm::verifyModule(module, &verify_os)) {
    return absl::InternalError(absl::StrCat("generated IR is invalid: ", verify_os.str()));
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, mam);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr, llvm::CGFT_ObjectFile)) {
    return absl::InternalError("llvm cannot emit an object file for this target");
  }
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace

absl::StatusOr<NativeCodegenStats> GenerateNativeKernels(vm::ExecutableSpec& spec,
                                                         const NativeTarget& target) {
  if (!spec.native.object.empty()) {
    return absl::FailedPreconditionError("the executable already has native code");
  }
  DYNVM_ASSIGN_OR_RETURN(Target machine_target, MakeTarget(target.cpu));
  llvm::TargetMachine* machine = machine_target.machine.get();
  NativeCodegenStats stats;
  stats.cpu = machine_target.cpu;
  stats.features = machine_target.features;
  const llvm::MCSubtargetInfo& sti = *machine->getMCSubtargetInfo();
  stats.vector_width = sti.checkFeatures("+avx512f") ? 16 : sti.checkFeatures("+avx") ? 8 : 4;
  const bool has_fma = sti.checkFeatures("+fma");

  llvm::LLVMContext context;
  llvm::Module module("dynvm_native", context);
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(machine->getTargetTriple().str());

  // Every fused program of the kernel table: fused_elementwise's `program`, and the
  // `prologue` and `epilogue` other kernels evaluate. One kernel per distinct text.
  std::map<std::string, std::string> symbol_of;  // program text -> its functions' name
  std::vector<size_t> renamed;                   // fused_elementwise entries
  for (size_t e = 0; e < spec.kernels.size(); ++e) {
    const vm::KernelEntry& entry = spec.kernels[e];
    // Only kernels that bind with native code hold programs (fused_elementwise is
    // renamed to one that does).
    const kernels::KernelDef* def = kernels::DefaultRegistry().Find(entry.name);
    if (entry.name != "fused_elementwise" && (def == nullptr || def->bind_in_context == nullptr)) {
      continue;
    }
    bool uses_native = false;
    for (const char* attr : {"program", "prologue", "epilogue"}) {
      auto found = entry.attrs.find(attr);
      if (found == entry.attrs.end() || !std::holds_alternative<std::string>(found->second)) {
        continue;
      }
      if (std::string_view(attr) == "program" && entry.name != "fused_elementwise") continue;
      const std::string& text = std::get<std::string>(found->second);
      auto [it, inserted] =
          symbol_of.try_emplace(text, absl::StrCat("dynvm_fused_", symbol_of.size()));
      if (inserted) {
        absl::StatusOr<kernels::FusedProgram> program = kernels::FusedProgram::Parse(text, attr);
        if (!program.ok()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "kernel table entry %d (%s): %s", e, entry.name, program.status().message()));
        }
        DYNVM_RETURN_IF_ERROR(llvm_codegen::EmitFusedKernel(*program, it->second, module,
                                                            stats.vector_width, has_fma));
      }
      uses_native = true;
    }
    if (entry.name == "fused_elementwise") renamed.push_back(e);
    stats.entries += uses_native ? 1 : 0;
  }
  if (symbol_of.empty()) return stats;
  for (llvm::Function& fn : module) {
    if (!fn.isDeclaration()) fn.addFnAttr("tune-cpu", stats.cpu);
  }
  DYNVM_ASSIGN_OR_RETURN(std::string object, EmitObject(module, *machine));
  // What the runtime will do with it, now: a function LLVM called that the runtime
  // does not provide is a compile error, not an executable that cannot load.
  absl::StatusOr<std::shared_ptr<const vm::NativeModule>> loaded =
      vm::NativeModule::Load(object, vm::NativeRuntimeExternals());
  if (!loaded.ok()) {
    return absl::InternalError(absl::StrFormat(
        "the generated code for cpu '%s' does not load: %s", stats.cpu, loaded.status().message()));
  }

  for (size_t e : renamed) spec.kernels[e].name = kernels::kNativeElementwiseKernel;
  stats.kernels = static_cast<int>(symbol_of.size());
  stats.object_bytes = object.size();
  spec.native = vm::NativeCode{stats.cpu, stats.features, std::move(object), std::move(symbol_of)};
  return stats;
}

}  // namespace dynvm::compiler
