// Two passes over the expression DAG, both iterative, so that a call chain or a let
// chain a hundred thousand deep converts without as many stack frames:
//
// 1. Placement (as the printer places `%N = ...`). Blocks form a tree: the root, and
//    one block per function body, if branch and match clause. Visiting the nodes
//    parents first (reverse post-order), each node's block is the lowest common
//    ancestor of the blocks of its uses, and its use count is known.
// 2. Conversion, with an explicit stack of tasks in evaluation order. Each block has a
//    list of bindings, appended to when a node bound to a variable is finished (so in
//    evaluation order); a block is closed, its list wrapped around its result as lets,
//    when its expression is finished. The block a node is bound in is open then: it
//    encloses the use being converted.
#include "compiler/passes/anf.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/scope_tree.h"

namespace dynvm::compiler {
namespace {

// A fused group: one kernel's worth of operators, kept whole.
bool IsPrimitive(const Expr& fn) {
  const auto it = fn.attrs().find("Primitive");
  if (it == fn.attrs().end()) return false;
  const auto* value = std::get_if<int64_t>(&it->second);
  return value != nullptr && *value != 0;
}

// The `i`th child of a node in evaluation order. `slot` is -1 for a child evaluated in
// the node's own block, else the index of the block the node opens for it; `operand`
// says the child must become an atom (a let's value and body, and block results, need
// not).
struct Child {
  const Expr* expr;
  int slot;
  bool operand;
};

std::optional<Child> ChildAt(const Expr& e, size_t i) {
  switch (e.kind()) {
    case ExprKind::kCall:
      if (i == 0) return Child{&e.callee(), -1, true};
      if (i <= e.args().size()) return Child{&e.args()[i - 1], -1, true};
      return std::nullopt;
    case ExprKind::kTuple:
      if (i < e.fields().size()) return Child{&e.fields()[i], -1, true};
      return std::nullopt;
    case ExprKind::kTupleGetItem:
      if (i == 0) return Child{&e.tuple(), -1, true};
      return std::nullopt;
    case ExprKind::kLet:
      if (i == 0) return Child{&e.operand(), -1, false};
      if (i == 1) return Child{&e.body(), -1, false};
      return std::nullopt;
    case ExprKind::kIf:
      if (i == 0) return Child{&e.cond(), -1, true};
      if (i == 1) return Child{&e.then_branch(), 0, false};
      if (i == 2) return Child{&e.else_branch(), 1, false};
      return std::nullopt;
    case ExprKind::kFunction:
      if (i == 0 && !IsPrimitive(e)) return Child{&e.body(), 0, false};
      return std::nullopt;
    case ExprKind::kMatch:
      if (i == 0) return Child{&e.data(), -1, true};
      if (i <= e.clauses().size()) return Child{&e.clauses()[i - 1].body, static_cast<int>(i - 1), false};
      return std::nullopt;
    default: return std::nullopt;
  }
}

// `e` with its children replaced by `parts` (in ChildAt order), or `e` itself when
// every part is the child it replaces. A new node keeps `e`'s checked type.
Expr Rebuild(const Expr& e, std::vector<Expr>& parts) {
  bool changed = false;
  for (size_t i = 0; i < parts.size(); ++i) changed |= !parts[i].same_as(*ChildAt(e, i)->expr);
  if (!changed) return e;
  Expr out;
  switch (e.kind()) {
    case ExprKind::kCall:
      out = Expr::Call(parts[0], std::vector<Expr>(parts.begin() + 1, parts.end()), e.attrs(), e.source());
      break;
    case ExprKind::kTuple: out = Expr::Tuple(std::move(parts)); break;
    case ExprKind::kTupleGetItem: out = Expr::TupleGetItem(parts[0], e.index()); break;
    case ExprKind::kIf: out = Expr::If(parts[0], parts[1], parts[2]); break;
    case ExprKind::kFunction:
      out = Expr::Function(e.params(), parts[0], e.annotation(), e.type_params(), e.attrs());
      break;
    case ExprKind::kMatch: {
      std::vector<Clause> clauses;
      for (size_t i = 0; i < e.clauses().size(); ++i) clauses.push_back({e.clauses()[i].pattern, parts[i + 1]});
      out = Expr::Match(parts[0], std::move(clauses), e.complete());
      break;
    }
    default: return e;  // lets are rebuilt by their block; leaves have no parts
  }
  return e.checked_type() ? out.WithType(*e.checked_type()) : out;
}

class AnfConverter {
 public:
  Expr Run(const Expr& root);

 private:
  struct NodeInfo {
    int uses = 0;
    int block = -1;
  };
  // `let var = value` in a block's list; `let` is the let it came from, if any, reused
  // when nothing about it changed.
  struct Binding {
    Expr var, value;
    std::optional<Expr> let;
  };
  // Converting `e`: `parts` are its converted children so far. `operand`: the result
  // must be an atom. `closes`: `e` is the expression of this block, which is wrapped
  // around the result (-1: none).
  struct Task {
    Expr e;
    bool operand;
    int closes;
    std::vector<Expr> parts = {};
  };

  void Place(const Expr& root);
  // The result of `task`, its node finished (children converted); binds it if needed.
  Expr Finish(Task& task);
  // `result` inside the lets of `block`'s list, which is emptied. New lets take the
  // type of `result`, else `block_type` (the type of the expression the block replaces).
  Expr Close(int block, Expr result, const std::optional<Type>& block_type);
  Expr Bind(const Expr& e, Expr value);

  absl::flat_hash_map<uintptr_t, NodeInfo> info_;  // non-atom nodes of the input
  absl::flat_hash_map<std::pair<uintptr_t, int>, int> block_of_slot_;
  ScopeTree blocks_;
  std::vector<std::vector<Binding>> bindings_;  // per block
  absl::flat_hash_map<uintptr_t, Expr> bound_;  // input node -> its variable
  int next_var_ = 0;
};

void AnfConverter::Place(const Expr& root) {
  // Post-order of the DAG; a node is expanded when first popped, so that one reached
  // through two parents finishes before both (see printer.cc).
  std::vector<Expr> order;
  absl::flat_hash_set<uintptr_t> expanded_nodes;
  std::vector<std::pair<Expr, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = std::move(stack.back());
    stack.pop_back();
    if (expanded) {
      order.push_back(std::move(e));
      continue;
    }
    if (!expanded_nodes.insert(e.identity()).second) continue;
    stack.emplace_back(e, true);
    for (size_t i = 0; const std::optional<Child> child = ChildAt(e, i); ++i) {
      const Expr& c = *child->expr;
      if (!IsAtom(c) && !expanded_nodes.contains(c.identity())) stack.emplace_back(c, false);
    }
  }
  info_[root.identity()] = {1, blocks_.AddRoot()};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Expr& e = *it;
    const int block = info_[e.identity()].block;
    for (size_t i = 0; const std::optional<Child> child = ChildAt(e, i); ++i) {
      const Expr& c = *child->expr;
      if (IsAtom(c)) continue;
      int site = block;
      if (child->slot >= 0) {
        site = blocks_.Add(block);
        block_of_slot_[{e.identity(), child->slot}] = site;
      }
      NodeInfo& info = info_[c.identity()];
      ++info.uses;
      info.block = info.block < 0 ? site : blocks_.Lca(info.block, site);
    }
  }
  bindings_.resize(blocks_.size());
}

Expr AnfConverter::Bind(const Expr& e, Expr value) {
  Expr var = Expr::Var(absl::StrCat("v", next_var_++));
  if (e.checked_type()) var = var.WithType(*e.checked_type());
  bindings_[info_[e.identity()].block].push_back({var, std::move(value), std::nullopt});
  bound_[e.identity()] = var;
  return var;
}

Expr AnfConverter::Close(int block, Expr result, const std::optional<Type>& block_type) {
  std::vector<Binding> list = std::move(bindings_[block]);
  bindings_[block].clear();
  for (auto it = list.rbegin(); it != list.rend(); ++it) {
    if (it->let && it->let->operand().same_as(it->value) && it->let->body().same_as(result)) {
      result = *it->let;
      continue;
    }
    std::optional<Type> type = result.checked_type();
    if (!type) type = it->let ? it->let->checked_type() : block_type;
    Expr let = Expr::Let(std::move(it->var), std::move(it->value), std::move(result));
    result = type ? let.WithType(*type) : let;
  }
  return result;
}

Expr AnfConverter::Finish(Task& task) {
  const Expr& e = task.e;
  const NodeInfo& info = info_[e.identity()];
  Expr result;
  if (e.is(ExprKind::kLet)) {
    result = task.parts[1];  // the let itself is in its block's list
  } else {
    result = Rebuild(e, task.parts);
    if (task.operand || info.uses > 1) result = Bind(e, std::move(result));
  }
  if (info.uses > 1) bound_[e.identity()] = result;  // an atom: a let's body was one
  return task.closes >= 0 ? Close(task.closes, std::move(result), e.checked_type()) : result;
}

Expr AnfConverter::Run(const Expr& root) {
  if (IsAtom(root)) return root;
  Place(root);
  std::vector<Task> stack;
  stack.push_back({root, /*operand=*/false, /*closes=*/0});
  while (true) {
    Task& task = stack.back();
    const size_t i = task.parts.size();
    const std::optional<Child> child = ChildAt(task.e, i);
    if (!child) {
      Expr result = Finish(task);
      stack.pop_back();
      if (stack.empty()) return result;
      stack.back().parts.push_back(std::move(result));
      continue;
    }
    const Expr& e = task.e;
    if (e.is(ExprKind::kLet) && i == 1) {
      // The value is converted: bind it, then convert the body in the let's place.
      bindings_[info_[e.identity()].block].push_back({e.var(), task.parts[0], e});
    }
    const Expr& c = *child->expr;
    if (IsAtom(c)) {
      task.parts.push_back(c);
      continue;
    }
    if (const auto it = bound_.find(c.identity()); it != bound_.end()) {
      task.parts.push_back(it->second);  // a block opened for it would be empty
      continue;
    }
    bool operand = child->operand;
    if (e.is(ExprKind::kLet) && i == 1) operand = task.operand || info_[e.identity()].uses > 1;
    const int closes = child->slot >= 0 ? block_of_slot_.at({e.identity(), child->slot}) : -1;
    stack.push_back({c, operand, closes});  // invalidates `task`
  }
}

}  // namespace

absl::StatusOr<Expr> ToANormalForm(const Expr& expr) { return AnfConverter().Run(expr); }

absl::StatusOr<Module> ToANormalForm(const Module& module) {
  return module.MapFunctions([](const Expr& fn) { return ToANormalForm(fn); });
}

}  // namespace dynvm::compiler
