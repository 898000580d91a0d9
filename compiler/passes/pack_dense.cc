#include "compiler/passes/pack_dense.h"

#include <utility>
#include <vector>

#include "compiler/ir/rewrite.h"

namespace dynvm::compiler {
namespace {

Expr Pack(const Expr& e) {
  if (!e.is(ExprKind::kCall) || !e.callee().is(ExprKind::kOp) || e.callee().name() != "nn.dense") {
    return e;
  }
  const Expr& w = e.args()[1];
  if (!w.is(ExprKind::kConstant) || w.value()->dtype() != DType::kF32 || w.value()->ndim() != 2) {
    return e;
  }
  std::vector<Expr> args = e.args();
  args[1] = Expr::Call(Expr::Op("layout_transform"), {w},
                       {{"src_layout", std::string("NC")}, {"dst_layout", std::string("NC16n")}});
  kernels::Attrs attrs = e.attrs();
  attrs["units"] = w.value()->shape()[0];  // the packed weight pads it to a multiple of 16
  return Expr::Call(Expr::Op("nn.contrib_dense_pack"), std::move(args), std::move(attrs));
}

}  // namespace

absl::StatusOr<Expr> PackDenseWeights(const Expr& expr) {
  return RewriteBottomUp(expr, [](const Expr& e) -> absl::StatusOr<Expr> { return Pack(e); });
}

absl::StatusOr<Module> PackDenseWeights(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return PackDenseWeights(fn); });
}

}  // namespace dynvm::compiler
