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
  absl::StatusOr<Module> (*run)(const Module&);
  bool (*enabled)(const CompileOptions&) = nullptr;  // null: always, at min_level
};

constexpr Pass kPasses[] = {
    {"typed", 0, InferTypes},
    {"lifted", 0, LiftLambdas},  // before the rest: they see only global functions
    {"folded", 1, FoldConstants},
    {"simplified", 2, SimplifyAlgebra},
    {"cse", 2, EliminateCommonSubexpressions},
    {"combined", 2, CombineDense},  // after CSE: equal denses are one, not two parts
    {"dce", 2, EliminateDeadCode},
    {"fused", 1, Fuse, FusionEnabled},
    {"packed", 2, PackWeights},
    {"anf", 0, ToANormalForm},  // the form code generation reads: a let per value
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
    DYNVM_ASSIGN_OR_RETURN(current, pass.run(current));
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
