// Relations of the neural-network operators (kernels/nn/, kernels/matmul.cc):
// softmax, layer_norm, dense and batch_matmul.
#include <vector>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

constexpr DType kF32[] = {DType::kF32};

absl::StatusOr<Type> SoftmaxRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", -1));
  DYNVM_RETURN_IF_ERROR(NormalizeAxis(call, axis, x.rank()).status());
  return x;
}

// data, gamma [n], beta [n] with n = data.shape[axis].
absl::StatusOr<Type> LayerNormRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis, IntAttr(call, "axis", -1));
  DYNVM_ASSIGN_OR_RETURN(const int a, NormalizeAxis(call, axis, x.rank()));
  for (int i : {1, 2}) {
    DYNVM_ASSIGN_OR_RETURN(const Type p, TensorArg(call, i, i == 1 ? "gamma" : "beta", kF32));
    if (p.rank() != 1 || !MayEqual(p.shape()[0], x.shape()[a])) {
      return OpError(call, absl::StrFormat("%s has shape %s, expected [%s]", i == 1 ? "gamma" : "beta",
                                           ShapeText(p.shape()), x.shape()[a].ToString()));
    }
  }
  return x;
}

// x [..., k], weight [n, k] [, bias [n]] -> [..., n].
absl::StatusOr<Type> DenseRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type x, TensorArg(call, 0, "data", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type w, TensorArg(call, 1, "weight", kF32));
  if (x.rank() < 1) return OpError(call, "data has rank 0, expected at least 1");
  if (w.rank() != 2) {
    return OpError(call, absl::StrFormat("weight has shape %s, expected [units, k]", ShapeText(w.shape())));
  }
  if (!MayEqual(x.shape().back(), w.shape()[1])) {
    return OpError(call, absl::StrFormat("inner dimensions differ: %s and %s give k = %s and %s",
                                         ShapeText(x.shape()), ShapeText(w.shape()),
                                         x.shape().back().ToString(), w.shape()[1].ToString()));
  }
  Dim n = w.shape()[0];
  DYNVM_ASSIGN_OR_RETURN(const int64_t units, IntAttr(call, "units", -1));
  if (units >= 0) {
    if (!MayEqual(n, units)) {
      return OpError(call, absl::StrFormat("attribute units is %d but the weight gives %s", units, n.ToString()));
    }
    n = units;
  }
  if (call.args.size() == 3) {
    DYNVM_ASSIGN_OR_RETURN(const Type bias, TensorArg(call, 2, "bias", kF32));
    if (bias.rank() != 1 || !MayEqual(bias.shape()[0], n)) {
      return OpError(call, absl::StrFormat("bias has shape %s, expected [%s]", ShapeText(bias.shape()), n.ToString()));
    }
  }
  std::vector<Dim> shape = x.shape();
  shape.back() = n;
  return Type::Tensor(DType::kF32, std::move(shape));
}

// a [..., m, k] (or [..., k, m] transposed), b [..., k, n] (or [..., n, k], Relay's
// default) -> [broadcast batch..., m, n].
absl::StatusOr<Type> BatchMatmulRel(const OpCall& call) {
  DYNVM_ASSIGN_OR_RETURN(const Type a, TensorArg(call, 0, "a", kF32));
  DYNVM_ASSIGN_OR_RETURN(const Type b, TensorArg(call, 1, "b", kF32));
  if (a.rank() < 2 || b.rank() < 2) {
    return OpError(call, absl::StrFormat("operands have shapes %s and %s, expected rank 2 or more",
                                         ShapeText(a.shape()), ShapeText(b.shape())));
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t ta, IntAttr(call, "transpose_a", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t tb, IntAttr(call, "transpose_b", 1));
  const auto& as = a.shape();
  const auto& bs = b.shape();
  const Dim m = as[as.size() - (ta ? 1 : 2)], ka = as[as.size() - (ta ? 2 : 1)];
  const Dim kb = bs[bs.size() - (tb ? 1 : 2)], n = bs[bs.size() - (tb ? 2 : 1)];
  if (!MayEqual(ka, kb)) {
    return OpError(call, absl::StrFormat("inner dimensions differ: %s and %s give k = %s and %s",
                                         ShapeText(as), ShapeText(bs), ka.ToString(), kb.ToString()));
  }
  DYNVM_ASSIGN_OR_RETURN(std::vector<Dim> shape,
                         BroadcastShapes(call, std::vector<Dim>(as.begin(), as.end() - 2),
                                         std::vector<Dim>(bs.begin(), bs.end() - 2)));
  shape.push_back(m);
  shape.push_back(n);
  return Type::Tensor(DType::kF32, std::move(shape));
}

constexpr OpDef kOps[] = {
    {"nn.softmax", 1, 1, SoftmaxRel},
    {"nn.log_softmax", 1, 1, SoftmaxRel},
    {"nn.layer_norm", 3, 3, LayerNormRel},
    {"nn.dense", 2, 3, DenseRel},
    {"nn.batch_matmul", 2, 2, BatchMatmulRel},
};

}  // namespace

absl::Span<const OpDef> NnOps() { return kOps; }

}  // namespace dynvm::compiler::internal
