// Constant folding (see compiler/passes/passes.h): calls on constants run through
// the kernel library at compile time and replaced by their values.
#include "compiler/passes/fold_constant.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "base/status_macros.h"
#include "compiler/ir/rewrite.h"
#include "compiler/ops/op_registry.h"
#include "kernels/api.h"
#include "kernels/thread_pool.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

// Calls folded in one run, by operator, attributes and argument values (the
// NDArrays, by identity): a call that two functions of a module share (a weight packed
// in @main and in @main_packed) folds to one constant, which the executable then
// stores once.
class FoldCache {
 public:
  const Expr* Find(const Expr& call, const std::vector<const NDArrayObj*>& args) const {
    const auto it = entries_.find(args);
    if (it == entries_.end()) return nullptr;
    for (const Entry& e : it->second) {
      if (e.op == call.callee().name() && e.attrs == call.attrs()) return &e.result;
    }
    return nullptr;
  }
  void Add(const Expr& call, std::vector<const NDArrayObj*> args, Expr result) {
    entries_[std::move(args)].push_back({call.callee().name(), call.attrs(), std::move(result)});
  }

 private:
  struct Entry {
    std::string op;
    kernels::Attrs attrs;
    Expr result;
  };
  absl::flat_hash_map<std::vector<const NDArrayObj*>, std::vector<Entry>> entries_;
};

// The arguments' values in order, a tuple's fields in its place.
std::vector<const NDArrayObj*> ArgumentValues(const Expr& call) {
  std::vector<const NDArrayObj*> values;
  for (const Expr& arg : call.args()) {
    if (arg.is(ExprKind::kTuple)) {
      for (const Expr& f : arg.fields()) values.push_back(f.value().get());
    } else {
      values.push_back(arg.value().get());
    }
  }
  return values;
}

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

absl::StatusOr<Expr> Fold(const Expr& e, FoldCache& cache) {
  if (e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp) &&
      std::all_of(e.args().begin(), e.args().end(), IsConstantArgument)) {
    std::vector<const NDArrayObj*> args = ArgumentValues(e);
    if (const Expr* folded = cache.Find(e, args)) return *folded;
    Expr folded = FoldCall(e);
    if (!folded.same_as(e)) cache.Add(e, std::move(args), folded);
    return folded;
  }
  if (e.is(ExprKind::kTupleGetItem) && e.tuple().is(ExprKind::kTuple) &&
      e.index() >= 0 && e.index() < static_cast<int>(e.tuple().fields().size())) {
    return e.tuple().fields()[e.index()];
  }
  return e;
}

absl::StatusOr<Expr> FoldWith(const Expr& expr, FoldCache& cache) {
  return RewriteBottomUp(expr, [&cache](const Expr& e) { return Fold(e, cache); });
}

}  // namespace

absl::StatusOr<Expr> FoldConstants(const Expr& expr) {
  FoldCache cache;
  return FoldWith(expr, cache);
}

absl::StatusOr<Module> FoldConstants(const Module& module) {
  FoldCache cache;
  return module.MapFunctions([&cache](const Expr& fn) { return FoldWith(fn, cache); });
}

}  // namespace dynvm::compiler
