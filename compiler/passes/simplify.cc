#include "compiler/passes/simplify.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "compiler/ir/rewrite.h"

namespace dynvm::compiler {
namespace {

bool IsOp(const Expr& e, std::string_view name) {
  return e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp) && e.callee().name() == name;
}

const std::vector<int64_t>* IntsAttr(const Expr& call, const char* name) {
  const auto it = call.attrs().find(name);
  if (it == call.attrs().end()) return nullptr;
  return std::get_if<std::vector<int64_t>>(&it->second);
}

bool IsStatic(const Type& t) {
  return t.is_tensor() && std::all_of(t.shape().begin(), t.shape().end(), [](const Dim& d) { return d.is_const(); });
}

bool SameType(const Expr& a, const Expr& b) {
  return a.checked_type() && b.checked_type() && *a.checked_type() == *b.checked_type();
}

// Whether the scalar constant `e` equals `value` (any numeric dtype).
bool IsScalar(const Expr& e, double value) {
  if (!e.is(ExprKind::kConstant) || e.value()->ndim() != 0) return false;
  const NDArray& v = e.value();
  switch (v->dtype()) {
    case DType::kF32: return *v->data_as<float>() == value;
    case DType::kF64: return *v->data_as<double>() == value;
    case DType::kI32: return *v->data_as<int32_t>() == value;
    case DType::kI64: return *v->data_as<int64_t>() == value;
    default: return false;
  }
}

Expr Simplify(const Expr& e) {
  if (!e.is(ExprKind::kCall) || !e.callee().is(ExprKind::kOp)) return e;
  if (IsOp(e, "reshape")) {
    const Expr& x = e.args()[0];
    // [reshape-identity]
    if (e.checked_type() && IsStatic(*e.checked_type()) && SameType(e, x)) return x;
    // [reshape-chain]
    const std::vector<int64_t>* codes = IntsAttr(e, "newshape");
    if (IsOp(x, "reshape") && codes != nullptr &&
        std::all_of(codes->begin(), codes->end(), [](int64_t c) { return c > 0 || c == -1; })) {
      return Expr::Call(e.callee(), {x.args()[0]}, e.attrs());
    }
    return e;
  }
  if (IsOp(e, "transpose") && IsOp(e.args()[0], "transpose")) {
    // [transpose-chain]: z[i] = y[q[i]] = x[p[q[i]]].
    const Expr& inner = e.args()[0];
    const std::vector<int64_t>* p = IntsAttr(inner, "axes");
    const std::vector<int64_t>* q = IntsAttr(e, "axes");
    if (p == nullptr || q == nullptr || p->size() != q->size() || p->empty()) return e;
    const int64_t rank = static_cast<int64_t>(p->size());
    std::vector<int64_t> composed;
    for (int64_t qi : *q) {
      const int64_t a = qi < 0 ? qi + rank : qi;
      if (a < 0 || a >= rank) return e;
      const int64_t pa = (*p)[a];
      composed.push_back(pa < 0 ? pa + rank : pa);
    }
    bool identity = true;
    for (int64_t i = 0; i < rank; ++i) identity &= composed[i] == i;
    if (identity) return inner.args()[0];
    kernels::Attrs attrs = e.attrs();
    attrs["axes"] = composed;
    return Expr::Call(e.callee(), {inner.args()[0]}, std::move(attrs));
  }
  // [arith-identity]
  const bool zero_right = IsOp(e, "add") || IsOp(e, "subtract");
  const bool one_right = IsOp(e, "multiply") || IsOp(e, "divide");
  if ((zero_right || one_right) && e.args().size() == 2) {
    const double neutral = zero_right ? 0.0 : 1.0;
    if (IsScalar(e.args()[1], neutral) && SameType(e, e.args()[0])) return e.args()[0];
    const bool commutes = IsOp(e, "add") || IsOp(e, "multiply");
    if (commutes && IsScalar(e.args()[0], neutral) && SameType(e, e.args()[1])) return e.args()[1];
  }
  return e;
}

}  // namespace

absl::StatusOr<Expr> SimplifyAlgebra(const Expr& expr) {
  return RewriteBottomUp(expr, [](const Expr& e) -> absl::StatusOr<Expr> { return Simplify(e); });
}

absl::StatusOr<Module> SimplifyAlgebra(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return SimplifyAlgebra(fn); });
}

}  // namespace dynvm::compiler
