// Constant folding (see compiler/passes/passes.h): calls on constants run through
// the kernel library at compile time and replaced by their values.
#include "compiler/passes/fold_constant.h"

#include <algorithm>
#include <vector>

#include "base/status_macros.h"
#include "compiler/ir/rewrite.h"
#include "compiler/ops/op_registry.h"
#include "kernels/api.h"
#include "kernels/thread_pool.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

// The value of `call` (all of whose arguments are constants), or `call` itself when it
// cannot or should not be folded.
Expr FoldCall(const Expr& call) {
  const OpDef* def = FindOp(call.callee().name());
  const kernels::KernelRegistry& registry = kernels::DefaultRegistry();
  if (def == nullptr || !registry.Contains(call.callee().name())) return call;
  // A tuple argument (concatenate's) reaches the kernel as its fields, in order.
  std::vector<Type> arg_types;
  std::vector<NDArrayObj*> args;
  auto tensor_type = [](const NDArray& value) {
    return Type::Tensor(value->dtype(), {value->shape().begin(), value->shape().end()});
  };
  for (const Expr& arg : call.args()) {
    if (arg.is(ExprKind::kTuple)) {
      std::vector<Type> fields;
      for (const Expr& f : arg.fields()) {
        fields.push_back(tensor_type(f.value()));
        args.push_back(f.value().get());
      }
      arg_types.push_back(Type::Tuple(std::move(fields)));
      continue;
    }
    arg_types.push_back(tensor_type(arg.value()));
    args.push_back(arg.value().get());
  }
  const absl::StatusOr<Type> type = InferCallType(*def, arg_types, call.attrs());
  if (!type.ok()) return call;
  const std::vector<Type> outputs =
      type->kind() == TypeKind::kTuple ? type->fields() : std::vector<Type>{*type};
  if (std::any_of(outputs.begin(), outputs.end(), [](const Type& t) { return !t.is_tensor(); })) {
    return call;
  }
  const int num_outputs = static_cast<int>(outputs.size());
  const int num_inputs = static_cast<int>(args.size());
  absl::StatusOr<kernels::BoundKernel> kernel =
      registry.Bind(call.callee().name(), call.attrs(), num_inputs, num_outputs);
  if (!kernel.ok()) return call;
  std::vector<dynvm::Shape> shapes(num_outputs);
  if (!kernel->InferShapes(args.data(), shapes.data()).ok()) return call;
  std::vector<NDArray> results;
  for (int i = 0; i < num_outputs; ++i) {
    // A string result stays a call: executables hold no string constants.
    if (outputs[i].dtype() == DType::kString) return call;
    int64_t elements = 1;
    for (int64_t d : shapes[i]) elements = d == 0 ? 0 : std::min(elements * d, kMaxFoldedElements + 1);
    if (elements > kMaxFoldedElements) return call;
    absl::StatusOr<NDArray> out = NDArrayObj::Empty(shapes[i], outputs[i].dtype(), MakeNaiveAllocator());
    if (!out.ok()) return call;
    results.push_back(*std::move(out));
    args.push_back(results.back().get());
  }
  if (!kernel->Call(args.data(), kernels::ThreadPool::Default()).ok()) return call;
  if (type->kind() != TypeKind::kTuple) return Expr::Constant(results[0]);
  std::vector<Expr> fields;
  for (NDArray& r : results) fields.push_back(Expr::Constant(std::move(r)));
  return Expr::Tuple(std::move(fields));
}

bool IsConstant(const Expr& e) { return e.is(ExprKind::kConstant); }

// A constant, or a tuple of constants (concatenate's argument).
bool IsConstantArgument(const Expr& e) {
  return IsConstant(e) ||
         (e.is(ExprKind::kTuple) && std::all_of(e.fields().begin(), e.fields().end(), IsConstant));
}

absl::StatusOr<Expr> Fold(const Expr& e) {
  if (e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp) &&
      std::all_of(e.args().begin(), e.args().end(), IsConstantArgument)) {
    return FoldCall(e);
  }
  if (e.is(ExprKind::kTupleGetItem) && e.tuple().is(ExprKind::kTuple) &&
      e.index() >= 0 && e.index() < static_cast<int>(e.tuple().fields().size())) {
    return e.tuple().fields()[e.index()];
  }
  return e;
}

}  // namespace

absl::StatusOr<Expr> FoldConstants(const Expr& expr) { return RewriteBottomUp(expr, Fold); }

absl::StatusOr<Module> FoldConstants(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return FoldConstants(fn); });
}

}  // namespace dynvm::compiler
