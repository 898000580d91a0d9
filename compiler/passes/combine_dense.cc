// Two phases. Collect: a walk that knows its block (a function body, an if branch, a
// match clause) groups the combinable nn.dense calls of each block by input node and
// weight width. Replace: a bottom-up rewrite puts, where each member of a group of two
// or more was, a projection of one dense and split built on the rebuilt input.
#include "compiler/passes/combine_dense.h"

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/ir/rewrite.h"

namespace dynvm::compiler {
namespace {

// Appends an attribute's value to a grouping key.
void AppendAttrValue(std::string& key, int64_t v) { absl::StrAppend(&key, v); }
void AppendAttrValue(std::string& key, double v) { absl::StrAppendFormat(&key, "%a", v); }  // exact
void AppendAttrValue(std::string& key, const std::string& v) { absl::StrAppend(&key, v.size(), ":", v); }
template <typename T>
void AppendAttrValue(std::string& key, const std::vector<T>& v) {
  absl::StrAppend(&key, "[");
  for (const T& x : v) {
    AppendAttrValue(key, x);
    key += ",";
  }
  key += "]";
}

class Combiner {
 public:
  absl::StatusOr<Expr> Run(const Expr& fn) {
    Collect(fn.body(), NewBlock());
    std::vector<Group> combined;
    // The node each part replaces (a member, or the bias add it absorbs) -> (group, part).
    absl::flat_hash_map<uintptr_t, std::pair<size_t, int>> replaced;
    for (auto& [key, calls] : groups_) {
      Group g;
      for (const Expr& c : calls) {
        if (!in_several_blocks_.contains(c.identity())) g.members.push_back(c);
      }
      if (g.members.size() < 2) continue;
      g.bias_adds = BiasAdds(g.members);
      for (size_t i = 0; i < g.members.size(); ++i) {
        const Expr& at = g.bias_adds.empty() ? g.members[i] : g.bias_adds[i];
        replaced[at.identity()] = {combined.size(), static_cast<int>(i)};
      }
      combined.push_back(std::move(g));
    }
    if (combined.empty()) return fn;
    // Groups are found on the original graph, but the combined call must read the
    // rebuilt input: once an earlier group is replaced, every node after it is new.
    return RewriteBottomUp(fn, [&](const Expr& original, const Expr& rebuilt) -> absl::StatusOr<Expr> {
      const auto it = replaced.find(original.identity());
      if (it == replaced.end()) return rebuilt;
      Group& g = combined[it->second.first];
      if (!g.parts) {
        // A bias add's dense operand is the rebuilt member, which reads the rebuilt input.
        const Expr& member = g.bias_adds.empty() ? rebuilt : rebuilt.args()[DenseOperand(original)];
        g.parts = Combine(g, member.args()[0]);
      }
      return Expr::TupleGetItem(*g.parts, it->second.second);
    });
  }

 private:
  int NewBlock() { return next_block_++; }

  // Weights and biases are combined only when they are constants: constant folding
  // then concatenates them once, at compile time. Concatenating parameters would copy
  // every weight on every call, as much traffic as the packing the combined GEMM saves.
  static bool Available(const Expr& e) { return e.is(ExprKind::kConstant); }

  void Consider(const Expr& call, int block) {
    if (!call.is(ExprKind::kCall) || !call.callee().is(ExprKind::kOp) ||
        call.callee().name() != "nn.dense" || !call.checked_type()) {
      return;
    }
    const Expr& w = call.args()[1];
    if (!w.checked_type() || !w.checked_type()->is_tensor() || w.checked_type()->rank() != 2 ||
        !w.checked_type()->shape()[0].is_const() || !w.checked_type()->shape()[1].is_const()) {
      return;
    }
    for (size_t i = 1; i < call.args().size(); ++i) {
      if (!Available(call.args()[i])) return;
    }
    kernels::Attrs attrs = call.attrs();
    attrs.erase("units");
    std::string attrs_key;
    for (const auto& [name, value] : attrs) {
      absl::StrAppend(&attrs_key, name, "#", value.index(), "=");
      std::visit([&](const auto& v) { AppendAttrValue(attrs_key, v); }, value);
      attrs_key += ";";
    }
    const auto key = std::make_tuple(block, call.args()[0].identity(), call.args().size(),
                                     w.checked_type()->shape()[1].const_value(),
                                     static_cast<int>(w.checked_type()->dtype()), attrs_key);
    const auto [seen, first] = block_of_.try_emplace(call.identity(), block);
    if (!first) {
      if (seen->second != block) in_several_blocks_.insert(call.identity());
      return;
    }
    groups_[key].push_back(call);
  }

  void Collect(const Expr& e, int block) {
    if (!visited_.insert({e.identity(), block}).second) return;
    switch (e.kind()) {
      case ExprKind::kLet: {
        Expr cur = e;
        for (; cur.is(ExprKind::kLet); cur = cur.body()) Collect(cur.operand(), block);
        Collect(cur, block);
        return;
      }
      case ExprKind::kCall:
        Consider(e, block);
        Collect(e.callee(), block);
        for (const Expr& a : e.args()) {
          users_[a.identity()].push_back(e);
          Collect(a, block);
        }
        return;
      case ExprKind::kTuple:
        for (const Expr& f : e.fields()) {
          users_[f.identity()].push_back(e);
          Collect(f, block);
        }
        return;
      case ExprKind::kTupleGetItem:
        users_[e.tuple().identity()].push_back(e);
        Collect(e.tuple(), block);
        return;
      case ExprKind::kIf:
        Collect(e.cond(), block);
        Collect(e.then_branch(), NewBlock());
        Collect(e.else_branch(), NewBlock());
        return;
      case ExprKind::kFunction: Collect(e.body(), NewBlock()); return;
      case ExprKind::kMatch:
        Collect(e.data(), block);
        for (const Clause& c : e.clauses()) Collect(c.body, NewBlock());
        return;
      default: return;
    }
  }

  // Dense layers of one input, combined into one call and its split.
  struct Group {
    std::vector<Expr> members;
    // When every member without a bias is read only by an add of a constant bias of its
    // width (BERT's Q, K and V projections), those adds, which the combined dense
    // absorbs: each part then replaces the add, and the members go dead.
    std::vector<Expr> bias_adds;
    std::optional<Expr> parts;  // the split, once built
  };

  // Which operand of the bias add `add` is the dense (the other is the bias).
  static int DenseOperand(const Expr& add) { return add.args()[0].is(ExprKind::kConstant) ? 1 : 0; }

  // The bias adds of `members` (one per member, in order), or none if any member has a
  // bias already, another user, or a user that is not such an add.
  std::vector<Expr> BiasAdds(const std::vector<Expr>& members) const {
    std::vector<Expr> adds;
    for (const Expr& m : members) {
      const auto it = users_.find(m.identity());
      if (m.args().size() != 2 || it == users_.end() || it->second.size() != 1) return {};
      const Expr& add = it->second[0];
      if (!add.is(ExprKind::kCall) || !add.callee().is(ExprKind::kOp) ||
          add.callee().name() != "add" || add.args().size() != 2 || !add.attrs().empty()) {
        return {};
      }
      const Expr& bias = add.args()[1 - DenseOperand(add)];
      const Expr& dense = add.args()[DenseOperand(add)];
      const int64_t units = m.args()[1].checked_type()->shape()[0].const_value();
      if (dense.identity() != m.identity() || !bias.is(ExprKind::kConstant) ||
          bias.value()->dtype() != m.args()[1].value()->dtype() ||
          bias.value()->shape() != Shape{units}) {
        return {};
      }
      adds.push_back(add);
    }
    return adds;
  }

  // The split of one dense of `input` by the members' weights (and biases) concatenated.
  static Expr Combine(const Group& g, const Expr& input) {
    const std::vector<Expr>& members = g.members;
    const Expr& first = members[0];
    std::vector<Expr> weights, biases;
    std::vector<int64_t> split_points;
    std::vector<std::string> sources;
    int64_t total = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      const Expr& m = members[i];
      sources.push_back(m.source());
      weights.push_back(m.args()[1]);
      if (m.args().size() == 3) biases.push_back(m.args()[2]);
      if (!g.bias_adds.empty()) biases.push_back(g.bias_adds[i].args()[1 - DenseOperand(g.bias_adds[i])]);
      if (total > 0) split_points.push_back(total);
      total += m.args()[1].checked_type()->shape()[0].const_value();
    }
    const Expr concat = Expr::Op("concatenate");
    std::vector<Expr> args = {input, Expr::Call(concat, {Expr::Tuple(weights)}, {{"axis", int64_t{0}}})};
    if (!biases.empty()) args.push_back(Expr::Call(concat, {Expr::Tuple(biases)}, {{"axis", int64_t{0}}}));
    kernels::Attrs attrs = first.attrs();
    attrs["units"] = total;
    const std::string source = JoinSources(sources);
    const Expr dense = Expr::Call(first.callee(), std::move(args), std::move(attrs), source);
    return Expr::Call(Expr::Op("split"), {dense}, {{"indices_or_sections", split_points}, {"axis", int64_t{-1}}},
                      source);
  }

  int next_block_ = 0;
  absl::flat_hash_set<std::pair<uintptr_t, int>> visited_;
  absl::flat_hash_map<uintptr_t, int> block_of_;
  // The calls, tuples and projections that read each node (not lets or results: a
  // node with such a use is never absorbed whole, only read once more).
  absl::flat_hash_map<uintptr_t, std::vector<Expr>> users_;
  absl::flat_hash_set<uintptr_t> in_several_blocks_;
  std::map<std::tuple<int, uintptr_t, size_t, int64_t, int, std::string>, std::vector<Expr>> groups_;
};

}  // namespace

absl::StatusOr<Expr> CombineParallelDense(const Expr& function) {
  if (!function.is(ExprKind::kFunction)) return function;
  return Combiner().Run(function);
}

absl::StatusOr<Module> CombineParallelDense(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return CombineParallelDense(fn); });
}

}  // namespace dynvm::compiler
