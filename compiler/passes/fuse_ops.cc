// Two walks. The first, over the original graph, counts every node's users, then decides
// bottom-up which calls extend a dense layer's epilogue and which elementwise calls join
// their consumer's group. The second rewrites: each epilogue call becomes the fused dense
// (the calls it absorbed are left without users), and each group's root becomes one
// fused_elementwise call whose inputs are the rewritten leaves of the group.
#include "compiler/passes/fuse_ops.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/ir/rewrite.h"
#include "kernels/elementwise/fused_elementwise.h"

namespace dynvm::compiler {
namespace {

bool IsF32Tensor(const Expr& e) {
  return e.checked_type() && e.checked_type()->is_tensor() && e.checked_type()->dtype() == DType::kF32;
}

// Whether no dim of tensor type `t` is `?`: two `?` are equal types but may be
// different extents.
bool Known(const Type& t) {
  return std::none_of(t.shape().begin(), t.shape().end(), [](const Dim& d) { return d.is_any(); });
}

bool IsOpCall(const Expr& e, std::string_view name) {
  return e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp) && e.callee().name() == name;
}

// The activation name of the dense kernel for a call of an activation, or nullopt.
std::optional<std::string> ActivationOf(const Expr& e) {
  if (IsOpCall(e, "nn.relu")) return "relu";
  if (!IsOpCall(e, "gelu")) return std::nullopt;
  const auto it = e.attrs().find("approximate");
  if (it == e.attrs().end()) return "gelu";
  const std::string* form = std::get_if<std::string>(&it->second);
  if (form == nullptr) return std::nullopt;
  if (*form == "none") return "gelu";
  if (*form == "tanh") return "gelu_tanh";
  return std::nullopt;
}

// A float as a program literal that reads back to the same f32.
std::string FloatLiteral(float v) { return absl::StrFormat("%.9g", v); }

// How `e` reads in a fused_elementwise program: the operator's name and the literals
// that follow its tensor operands (attributes such as clip's bounds), or nullopt if it
// has no place there (another operator, attributes the program cannot say, not f32).
struct ProgramCall {
  std::string op;
  std::vector<std::string> literals;
};

std::optional<ProgramCall> ProgramOp(const Expr& e) {
  if (!e.is(ExprKind::kCall) || !e.callee().is(ExprKind::kOp) || !IsF32Tensor(e)) return std::nullopt;
  for (const Expr& a : e.args()) {
    if (!IsF32Tensor(a)) return std::nullopt;
  }
  ProgramCall call{e.callee().name(), {}};
  // Attributes that become literals, with the kernels' defaults.
  std::vector<std::pair<std::string_view, std::optional<double>>> literal_attrs;
  if (call.op == "gelu") {
    const std::optional<std::string> form = ActivationOf(e);
    if (!form) return std::nullopt;
    call.op = *form;
  } else if (call.op == "nn.leaky_relu") {
    literal_attrs = {{"alpha", 0.25}};
  } else if (call.op == "clip") {
    literal_attrs = {{"a_min", std::nullopt}, {"a_max", std::nullopt}};
  }
  for (const auto& [name, fallback] : literal_attrs) {
    // A number, as the kernel reads it (an integer converts), or the kernel's default.
    const auto it = e.attrs().find(name);
    std::optional<double> value = fallback;
    if (it != e.attrs().end()) {
      if (const double* d = std::get_if<double>(&it->second)) {
        value = *d;
      } else if (const int64_t* i = std::get_if<int64_t>(&it->second)) {
        value = static_cast<double>(*i);
      } else {
        return std::nullopt;
      }
    }
    if (!value) return std::nullopt;
    const float v = static_cast<float>(*value);
    if (!std::isfinite(v)) return std::nullopt;
    call.literals.push_back(FloatLiteral(v));
  }
  // Every attribute must be one the program says: gelu's form, or a literal.
  for (const auto& [name, value] : e.attrs()) {
    const bool said = (e.callee().name() == "gelu" && name == "approximate") ||
                      std::any_of(literal_attrs.begin(), literal_attrs.end(),
                                  [&name = name](const auto& a) { return a.first == name; });
    if (!said) return std::nullopt;
  }
  const int arity = static_cast<int>(e.args().size() + call.literals.size());
  if (kernels::FusedElementwiseArity(call.op) != arity) return std::nullopt;
  return call;
}

// A scalar f32 constant as a program literal that reads back to the same float.
std::optional<std::string> Literal(const Expr& e) {
  if (!e.is(ExprKind::kConstant) || e.value()->dtype() != DType::kF32 || e.value()->ndim() != 0) {
    return std::nullopt;
  }
  const float v = *e.value()->data_as<float>();
  if (!std::isfinite(v)) return std::nullopt;
  return FloatLiteral(v);
}

// What a call contributes to a dense layer's fused epilogue.
struct DenseChain {
  Expr dense;                  // the nn.dense call at its start
  std::optional<Expr> bias;    // its bias, given to the dense or added after
  std::string activation = "none";
  std::optional<Expr> residual;
};

class Fuser {
 public:
  absl::StatusOr<Expr> Run(const Expr& e) {
    DYNVM_RETURN_IF_ERROR(CountUses(e));
    DYNVM_RETURN_IF_ERROR(Decide(e));
    return RewriteBottomUp(e, [&](const Expr& original, const Expr& rebuilt) -> absl::StatusOr<Expr> {
      Expr out = Rewrite(original, rebuilt);
      rewritten_.emplace(original.identity(), out);
      return out;
    });
  }

 private:
  absl::Status CountUses(const Expr& e) {
    return RewriteBottomUp(e, [&](const Expr& node) -> absl::StatusOr<Expr> {
             ForEachChild(node, [&](const Expr& child) { ++uses_[child.identity()]; });
             return node;
           })
        .status();
  }

  bool SingleUse(const Expr& e) const {
    const auto it = uses_.find(e.identity());
    return it != uses_.end() && it->second == 1;
  }

  // The chain `e` extends, if it extends one.
  std::optional<DenseChain> Extend(const Expr& e) const {
    if (IsOpCall(e, "nn.dense") && IsF32Tensor(e) && e.attrs().count("activation") == 0) {
      DenseChain chain{e, std::nullopt, "none", std::nullopt};
      if (e.args().size() == 3) chain.bias = e.args()[2];
      return chain;
    }
    if (!e.is(ExprKind::kCall) || !IsF32Tensor(e)) return std::nullopt;
    if (const std::optional<std::string> act = ActivationOf(e)) {
      const DenseChain* below = ChainOf(e.args()[0]);
      if (below == nullptr || below->activation != "none" || below->residual) return std::nullopt;
      DenseChain chain = *below;
      chain.activation = *act;
      return chain;
    }
    if (!IsOpCall(e, "add")) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const DenseChain* below = ChainOf(e.args()[side]);
      const Expr& other = e.args()[1 - side];
      if (below == nullptr || below->residual || !IsF32Tensor(other)) continue;
      // The add must not broadcast the dense's output: the epilogue writes that shape.
      const Type& out = *e.checked_type();
      if (!(*e.args()[side].checked_type() == out) || !Known(out)) continue;
      const Type& t = *other.checked_type();
      if (!below->bias && below->activation == "none" && t.rank() == 1 && Known(t) &&
          t.shape()[0] == out.shape().back()) {
        DenseChain chain = *below;
        chain.bias = other;
        return chain;
      }
      // A residual: the GEMM kernel takes matrices.
      if (t == out && out.rank() == 2 && below->dense.args()[0].checked_type()->rank() == 2) {
        DenseChain chain = *below;
        chain.residual = other;
        return chain;
      }
    }
    return std::nullopt;
  }

  // The chain ending at `e` if `e` may be absorbed into a consumer.
  const DenseChain* ChainOf(const Expr& e) const {
    const auto it = chains_.find(e.identity());
    return it != chains_.end() && SingleUse(e) ? &it->second : nullptr;
  }

  absl::Status Decide(const Expr& e) {
    return RewriteBottomUp(e, [&](const Expr& node) -> absl::StatusOr<Expr> {
             if (std::optional<DenseChain> chain = Extend(node)) {
               chains_.emplace(node.identity(), std::move(*chain));
               if (!IsOpCall(node, "nn.dense")) return node;  // an epilogue, not elementwise
             }
             if (IsRowReduction(node)) {
               // Its input's group becomes its prologue.
               const Expr& data = node.args()[0];
               if (group_size_.contains(data.identity()) && SingleUse(data) && !absorbed_.contains(data.identity())) {
                 absorbed_.insert(data.identity());
                 with_prologue_.insert(node.identity());
               }
               return node;
             }
             if (!ProgramOp(node)) return node;
             int size = 1;
             for (const Expr& a : node.args()) {
               const auto it = group_size_.find(a.identity());
               if (it == group_size_.end() || !SingleUse(a) || absorbed_.contains(a.identity()) ||
                   !(a.checked_type()->shape() == node.checked_type()->shape()) || !Known(*a.checked_type()) ||
                   size + it->second > kernels::kFusedElementwiseMaxStatements) {
                 continue;
               }
               absorbed_.insert(a.identity());
               size += it->second;
             }
             group_size_[node.identity()] = size;
             return node;
           })
        .status();
  }

  Expr Rewritten(const Expr& original) const {
    const auto it = rewritten_.find(original.identity());
    return it == rewritten_.end() ? original : it->second;
  }

  // The float reductions: they read their data through a `prologue` program and apply
  // an `epilogue` program to each reduced value.
  static bool IsFloatReduction(const Expr& e) {
    for (const char* name : {"sum", "mean", "max", "min", "prod", "l2_norm"}) {
      if (IsOpCall(e, name)) return IsF32Tensor(e);
    }
    return false;
  }

  // softmax, log_softmax, layer_norm and the float reductions: kernels that read their
  // data (argument 0) through a `prologue` program, whose inputs replace the data in
  // the call.
  static bool IsRowReduction(const Expr& e) {
    const bool row_op = (IsOpCall(e, "nn.softmax") || IsOpCall(e, "nn.log_softmax")) ? e.args().size() == 1
                        : IsOpCall(e, "nn.layer_norm")                               ? e.args().size() == 3
                                                                                     : IsFloatReduction(e) && e.args().size() == 1;
    return row_op && !e.attrs().contains("prologue") && IsF32Tensor(e) && IsF32Tensor(e.args()[0]);
  }

  Expr Rewrite(const Expr& original, const Expr& rebuilt) const {
    if (with_prologue_.contains(original.identity())) {
      std::vector<Expr> inputs;
      std::string program;
      int statements = 0;
      Emit(original.args()[0], inputs, program, statements);
      if (inputs.empty() || inputs.size() > kernels::kFusedElementwiseMaxInputs) return rebuilt;
      for (size_t i = 1; i < original.args().size(); ++i) inputs.push_back(Rewritten(original.args()[i]));
      kernels::Attrs attrs = original.attrs();
      attrs["prologue"] = program;
      std::vector<std::string> sources = {original.source()};
      GroupSources(original.args()[0], sources);
      return Expr::Call(original.callee(), std::move(inputs), std::move(attrs), JoinSources(sources))
          .WithType(*original.checked_type());
    }
    if (const auto chain = chains_.find(original.identity());
        chain != chains_.end() && !IsOpCall(original, "nn.dense")) {
      return FusedDense(chain->second, *original.checked_type(), original.source());
    }
    const auto group = group_size_.find(original.identity());
    if (group == group_size_.end() || group->second < 2 || absorbed_.contains(original.identity())) {
      return rebuilt;
    }
    std::vector<Expr> inputs;
    std::string program;
    int statements = 0;
    Emit(original, inputs, program, statements);
    std::vector<std::string> sources;
    GroupSources(original, sources);
    // Literals only (constant folding's to do), or more inputs than a program reads.
    if (inputs.empty() || inputs.size() > kernels::kFusedElementwiseMaxInputs) return rebuilt;
    // A group of one reduction's result (and literals) is that reduction's epilogue.
    if (inputs.size() == 1 && IsFloatReduction(inputs[0]) && !inputs[0].attrs().contains("epilogue") &&
        SingleUse(LeafOf(original)) && *inputs[0].checked_type() == *original.checked_type()) {
      kernels::Attrs attrs = inputs[0].attrs();
      attrs["epilogue"] = program;
      sources.insert(sources.begin(), inputs[0].source());
      return Expr::Call(inputs[0].callee(), inputs[0].args(), std::move(attrs), JoinSources(sources))
          .WithType(*original.checked_type());
    }
    return Expr::Call(Expr::Op("fused_elementwise"), std::move(inputs), {{"program", program}}, JoinSources(sources))
        .WithType(*original.checked_type());
  }

  // Appends the sources of the calls in the group rooted at `e` (in the original
  // graph), root first.
  void GroupSources(const Expr& e, std::vector<std::string>& sources) const {
    sources.push_back(e.source());
    for (const Expr& a : e.args()) {
      if (absorbed_.contains(a.identity())) GroupSources(a, sources);
    }
  }

  // The one leaf of the group rooted at `e` that is not a literal, in the original
  // graph (the group has one input).
  Expr LeafOf(const Expr& e) const {
    for (const Expr& a : e.args()) {
      if (absorbed_.contains(a.identity())) return LeafOf(a);
      if (!Literal(a)) return a;
    }
    return e;
  }

  // Appends the statements computing `e` to `program`; returns the operand naming it.
  std::string Emit(const Expr& e, std::vector<Expr>& inputs, std::string& program, int& statements) const {
    std::vector<std::string> operands;
    for (const Expr& a : e.args()) {
      if (absorbed_.contains(a.identity())) {
        operands.push_back(Emit(a, inputs, program, statements));
      } else if (std::optional<std::string> literal = Literal(a)) {
        operands.push_back(*literal);
      } else {
        const Expr input = Rewritten(a);
        size_t index = 0;
        while (index < inputs.size() && !inputs[index].same_as(input)) ++index;
        if (index == inputs.size()) inputs.push_back(input);
        operands.push_back(absl::StrCat("i", index));
      }
    }
    const ProgramCall call = *ProgramOp(e);
    operands.insert(operands.end(), call.literals.begin(), call.literals.end());
    const std::string name = absl::StrCat("t", statements++);
    absl::StrAppend(&program, program.empty() ? "" : "; ", name, " = ", call.op, "(",
                    absl::StrJoin(operands, ", "), ")");
    return name;
  }

  // The dense layer of `chain` and what it absorbed; `source` is the chain's root's.
  Expr FusedDense(const DenseChain& chain, const Type& type, const std::string& source) const {
    const Expr& dense = chain.dense;
    std::vector<Expr> args = {Rewritten(dense.args()[0]), Rewritten(dense.args()[1])};
    if (chain.bias) args.push_back(Rewritten(*chain.bias));
    kernels::Attrs attrs;
    if (chain.residual) {
      args.push_back(Rewritten(*chain.residual));
      attrs = {{"trans_b", int64_t{1}}, {"residual", int64_t{1}}, {"activation", chain.activation}};
      return Expr::Call(Expr::Op("gemm"), std::move(args), std::move(attrs), JoinSources({dense.source(), source}))
          .WithType(type);
    }
    attrs = dense.attrs();
    if (chain.activation != "none") attrs["activation"] = chain.activation;
    return Expr::Call(dense.callee(), std::move(args), std::move(attrs), JoinSources({dense.source(), source}))
        .WithType(type);
  }

  absl::flat_hash_map<uintptr_t, int> uses_;
  absl::flat_hash_map<uintptr_t, DenseChain> chains_;
  absl::flat_hash_map<uintptr_t, int> group_size_;  // elementwise calls: their group's size so far
  absl::flat_hash_set<uintptr_t> absorbed_;          // calls computed inside their consumer's group
  absl::flat_hash_set<uintptr_t> with_prologue_;     // softmaxes whose data is a group
  absl::flat_hash_map<uintptr_t, Expr> rewritten_;
};

}  // namespace

absl::StatusOr<Expr> FuseOps(const Expr& expr) { return Fuser().Run(expr); }

absl::StatusOr<Module> FuseOps(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return FuseOps(fn); });
}

}  // namespace dynvm::compiler
