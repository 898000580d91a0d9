// The pass that packs constant dense weights into GEMM panels at compile time
// (see compiler/passes/passes.h).
#include "compiler/passes/pack_dense.h"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "compiler/passes/fold_constant.h"

namespace dynvm::compiler {
namespace {

constexpr int64_t kPanel = 16;  // NC16n

bool IsOp(const Expr& e, std::string_view name) {
  return e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp) && e.callee().name() == name;
}

// Whether `w` is a constant f32 [n, k] weight that constant folding will pack: its
// panels, n rounded up to 16 rows, within what folding stores.
bool Packable(const Expr& w) {
  if (!w.is(ExprKind::kConstant) || w.value()->dtype() != DType::kF32 || w.value()->ndim() != 2) {
    return false;
  }
  const int64_t n = w.value()->shape()[0], k = w.value()->shape()[1];
  return (n + kPanel - 1) / kPanel * kPanel * k <= kMaxFoldedElements;
}

// nn.contrib_dense_pack(x, layout_transform(w), rest..., attrs, units=n), from `source`.
Expr PackedDense(const Expr& x, const Expr& w, std::vector<Expr> rest, kernels::Attrs attrs,
                 const std::string& source) {
  std::vector<Expr> args = {x, Expr::Call(Expr::Op("layout_transform"), {w},
                                          {{"src_layout", std::string("NC")},
                                           {"dst_layout", std::string("NC16n")}})};
  args.insert(args.end(), rest.begin(), rest.end());
  attrs["units"] = w.value()->shape()[0];  // the packed weight pads it to a multiple of 16
  return Expr::Call(Expr::Op("nn.contrib_dense_pack"), std::move(args), std::move(attrs), source);
}

// The value of integer attribute `name` of `call`, or `fallback` when absent.
std::optional<int64_t> IntAttr(const Expr& call, const char* name, int64_t fallback) {
  const auto it = call.attrs().find(name);
  if (it == call.attrs().end()) return fallback;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return *v;
  return std::nullopt;
}

Expr Pack(const Expr& e) {
  if (IsOp(e, "nn.dense") && Packable(e.args()[1])) {
    return PackedDense(e.args()[0], e.args()[1], {e.args().begin() + 2, e.args().end()}, e.attrs(), e.source());
  }
  // Fusion's gemm(x, w, [b,] r, trans_b=1, residual=1, activation=a) = a(x wᵀ + b) + r.
  if (IsOp(e, "gemm") && e.args().size() >= 3 && Packable(e.args()[1]) &&
      IntAttr(e, "trans_b", 0) == 1 && IntAttr(e, "residual", 0) == 1 && IntAttr(e, "trans_a", 0) == 0) {
    kernels::Attrs attrs;
    for (const auto& [name, value] : e.attrs()) {
      if (name == "activation") {
        attrs[name] = value;
      } else if (name != "trans_b" && name != "residual" && name != "trans_a") {
        return e;  // alpha, or anything else the dense does not take
      }
    }
    const Expr& residual = e.args().back();
    std::vector<Expr> bias(e.args().begin() + 2, e.args().end() - 1);
    return Expr::Call(Expr::Op("add"),
                      {PackedDense(e.args()[0], e.args()[1], std::move(bias), std::move(attrs), e.source()), residual},
                      {}, e.source());
  }
  return e;
}

}  // namespace

absl::StatusOr<Expr> PackDenseWeights(const Expr& expr) {
  return RewriteBottomUp(expr, [](const Expr& e) -> absl::StatusOr<Expr> { return Pack(e); });
}

absl::StatusOr<Module> PackDenseWeights(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return PackDenseWeights(fn); });
}

}  // namespace dynvm::compiler
