// The compiler's pipeline (compiler/driver/compile.h): the passes each
// optimisation level runs, in order, then bytecode, verification and native code.
#include "compiler/driver/compile.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/passes/anf.h"
#include "compiler/passes/combine_dense.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dead_code.h"
#include "compiler/passes/fold_constant.h"
#include "compiler/passes/fuse_ops.h"
#include "compiler/passes/lambda_lift.h"
#include "compiler/passes/pack_dense.h"
#include "compiler/passes/pack_tokens.h"
#include "compiler/passes/simplify.h"
#include "compiler/passes/type_infer.h"
#include "vm/verifier.h"

namespace dynvm::compiler {
namespace {

// Parallel dense layers combined, typed again (the new calls have no types yet), and
// constant weights concatenated once.
absl::StatusOr<Module> CombineDense(const Module& module) {
  DYNVM_ASSIGN_OR_RETURN(const Module combined, CombineParallelDense(module));
  DYNVM_ASSIGN_OR_RETURN(const Module typed, InferTypes(combined));
  return FoldConstants(typed);
}

// Operators fused, and the module typed again: the relations check the fused calls
// (a fused_elementwise program is parsed by its kernel).
absl::StatusOr<Module> Fuse(const Module& module) {
  DYNVM_ASSIGN_OR_RETURN(const Module fused, FuseOps(module));
  return InferTypes(fused);
}

// Constant dense weights packed into the GEMM's panels once, here: the fused calls
// are final (a bias or activation fused into a dense stays with it).
absl::StatusOr<Module> PackWeights(const Module& module) {
  DYNVM_ASSIGN_OR_RETURN(const Module packed, PackDenseWeights(module));
  DYNVM_ASSIGN_OR_RETURN(const Module typed, InferTypes(packed));
  return FoldConstants(typed);
}

bool FusionEnabled(const CompileOptions& options) { return options.fuse; }

struct Pass {
  std::string_view name;
  int min_level;
  absl::StatusOr<Module> (*run)(const Module&, const CompileOptions&);
  bool (*enabled)(const CompileOptions&) = nullptr;  // null: always, at min_level
};

// A pass that needs no options.
template <absl::StatusOr<Module> (*kRun)(const Module&)>
absl::StatusOr<Module> Plain(const Module& module, const CompileOptions&) {
  return kRun(module);
}

absl::StatusOr<Module> DerivePacked(const Module& module, const CompileOptions& options) {
  return DerivePackedEntry(module, options.packed_entry);
}

constexpr Pass kPasses[] = {
    {"typed", 0, Plain<InferTypes>},
    {"lifted", 0, Plain<LiftLambdas>},  // before the rest: they see only global functions
    {"folded", 1, Plain<FoldConstants>},
    {"simplified", 2, Plain<SimplifyAlgebra>},
    {"cse", 2, Plain<EliminateCommonSubexpressions>},
    {"combined", 2, Plain<CombineDense>},  // after CSE: equal denses are one, not two parts
    // After the rules that make nn.attention and before fusion, which both functions
    // then go through.
    {"packed_entry", 2, DerivePacked},
    {"dce", 2, Plain<EliminateDeadCode>},
    {"fused", 1, Plain<Fuse>, FusionEnabled},
    {"packed", 2, Plain<PackWeights>},
    {"anf", 0, Plain<ToANormalForm>},  // the form code generation reads: a let per value
};

bool Runs(const Pass& pass, const CompileOptions& options) {
  return options.opt_level >= pass.min_level && (pass.enabled == nullptr || pass.enabled(options));
}

}  // namespace

std::vector<std::string_view> PassNames(const CompileOptions& options) {
  std::vector<std::string_view> names;
  for (const Pass& pass : kPasses) {
    if (Runs(pass, options)) names.push_back(pass.name);
  }
  return names;
}

absl::StatusOr<vm::ExecutableSpec> CompileModule(const Module& module, const CompileOptions& options) {
  if (options.opt_level < 0 || options.opt_level > 3) {
    return absl::InvalidArgumentError(
        absl::StrFormat("optimisation level %d: expected 0 to 3", options.opt_level));
  }
  if (options.after_pass) options.after_pass("parsed", module);
  Module current = module;
  for (const Pass& pass : kPasses) {
    if (!Runs(pass, options)) continue;
    DYNVM_ASSIGN_OR_RETURN(current, pass.run(current, options));
    if (options.after_pass) options.after_pass(pass.name, current);
  }
  CodegenOptions codegen;
  codegen.plan_memory = codegen.allocate_registers = options.opt_level >= 1;
  DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, GenerateBytecode(current, codegen, options.codegen_stats));
  DYNVM_RETURN_IF_ERROR(vm::VerifyExecutable(spec));
  if (!options.target_cpu.empty()) {
    DYNVM_ASSIGN_OR_RETURN(NativeCodegenStats stats,
                           GenerateNativeKernels(spec, NativeTarget{options.target_cpu}));
    if (options.native_stats != nullptr) *options.native_stats = std::move(stats);
  }
  return spec;
}

}  // namespace dynvm::compiler
