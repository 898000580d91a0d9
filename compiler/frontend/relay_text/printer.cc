// The printer works per function in two passes:
//
// 1. Placement. The function's expression DAG is walked once (iteratively, so that long
//    let chains and deep nesting do not exhaust the stack). Blocks are the bodies that
//    print between braces: the function's body, each branch of an if, each clause of a
//    match, the body of each fn literal. Visiting nodes parents-first (reverse
//    post-order), each node's block is the lowest common ancestor of the blocks of its
//    uses; a use inside a branch is in the branch's block, any other in its parent's.
//    Lexical scoping makes that block see every variable the node uses.
// 2. Printing. A block prints its let chain statement by statement; before each
//    statement, the nodes used more than once that belong to this block and are not yet
//    printed are bound to `%N = ...;`, dependencies first. Other nodes print inline.
#include "compiler/frontend/relay_text/printer.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <utility>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/literals.h"
#include "compiler/ir/scope_tree.h"
#include "objects/element_codec.h"

namespace dynvm::compiler {
namespace {

// Slots from here on are the blocks of lets that print inline, in parentheses: a let
// anywhere but the body of a let or of a block opens a block of its own, so that the
// nodes that use its variable are bound inside the parentheses.
constexpr int kInlineLetSlot = 1 << 20;

// Calls fn(child, slot, top) for each child of `e` that is not a leaf; slot is -1 for a
// child in e's own block, else the index of the block `e` opens for it; `top` says the
// child is a statement of its own (a let's value, a block's result), where a call
// prints inline. A call anywhere else is bound to %N, as TVM prints dataflow: chains of
// calls then print one per line, not nested as deep as the chain.
template <typename Fn>
void ForEachChild(const Expr& e, Fn&& fn) {
  int position = 0;
  const auto visit = [&](const Expr& child, int slot, bool top) {
    if (slot < 0 && child.is(ExprKind::kLet) && !(e.is(ExprKind::kLet) && child.same_as(e.body()))) {
      slot = kInlineLetSlot + position;
    }
    ++position;
    if (!IsAtom(child)) fn(child, slot, top);
  };
  switch (e.kind()) {
    case ExprKind::kCall:
      visit(e.callee(), -1, false);
      for (const Expr& arg : e.args()) visit(arg, -1, false);
      break;
    case ExprKind::kLet:
      visit(e.operand(), -1, true);
      visit(e.body(), -1, true);
      break;
    case ExprKind::kIf:
      visit(e.cond(), -1, false);
      visit(e.then_branch(), 0, true);
      visit(e.else_branch(), 1, true);
      break;
    case ExprKind::kTuple:
      for (const Expr& field : e.fields()) visit(field, -1, false);
      break;
    case ExprKind::kTupleGetItem: visit(e.tuple(), -1, false); break;
    case ExprKind::kFunction: visit(e.body(), 0, true); break;
    case ExprKind::kMatch:
      visit(e.data(), -1, false);
      for (size_t i = 0; i < e.clauses().size(); ++i) {
        visit(e.clauses()[i].body, static_cast<int>(i), true);
      }
      break;
    default: break;
  }
}

std::string AttrText(const kernels::AttrValue& value) {
  const auto float_text = [](double v) { return FormatDouble(v) + "f"; };
  if (const auto* i = std::get_if<int64_t>(&value)) return absl::StrCat(*i);
  if (const auto* d = std::get_if<double>(&value)) return float_text(*d);
  if (const auto* s = std::get_if<std::string>(&value)) return QuoteString(*s);
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    return absl::StrCat("[", absl::StrJoin(*ints, ", "), "]");
  }
  const auto& doubles = std::get<std::vector<double>>(value);
  return absl::StrCat("[", absl::StrJoin(doubles, ", ", [&](std::string* out, double v) {
                        out->append(float_text(v));
                      }),
                      "]");
}

std::string AttrsText(const kernels::Attrs& attrs) {
  return absl::StrJoin(attrs, ", ", [](std::string* out, const auto& entry) {
    absl::StrAppend(out, entry.first, "=", AttrText(entry.second));
  });
}

class Printer {
 public:
  explicit Printer(std::vector<NDArray>& constants) : constants_(constants) {}

  std::string Module(const compiler::Module& module);
  // `e` as a top-level block (a function body's bindings and result).
  std::string Root(const Expr& e, int indent);

 private:
  struct NodeInfo {
    int uses = 0;
    int top_uses = 0;  // uses as a statement of its own
    int block = -1;
    int binding = -1;  // N of `%N = ...`, once printed
  };

  void Place(const Expr& root);
  NodeInfo& Info(const Expr& e) { return info_[e.identity()]; }
  // Whether `e` prints as %N: used more than once, or a call used inside another
  // expression.
  bool IsShared(const Expr& e) {
    const auto it = info_.find(e.identity());
    if (IsAtom(e) || e.is(ExprKind::kLet) || it == info_.end()) return false;
    return it->second.uses > 1 || (e.is(ExprKind::kCall) && it->second.top_uses == 0);
  }

  void PrintBlock(const Expr& body, int block, int indent, std::string& out);
  void EmitPending(const Expr& e, int block, int indent, std::string& out);
  std::string Inline(const Expr& e, int indent);
  std::string Function(const Expr& fn, int indent, std::string_view head);
  std::string Pattern(const compiler::Pattern& p);
  std::string Constant(const NDArray& value);
  std::string VarName(const Expr& var);
  std::string VarDecl(const Expr& var);

  std::vector<NDArray>& constants_;
  absl::flat_hash_map<uintptr_t, NodeInfo> info_;
  absl::flat_hash_map<std::pair<uintptr_t, int>, int> block_of_slot_;
  absl::flat_hash_map<uintptr_t, int> let_block_;  // lets that print inline
  ScopeTree blocks_;
  int next_binding_ = 0;
  absl::flat_hash_map<uint64_t, std::string> var_names_;
  absl::flat_hash_set<std::string> used_names_;
  absl::flat_hash_map<std::string, int> next_suffix_;
  absl::flat_hash_map<const NDArrayObj*, size_t> constant_index_;
};

void Printer::Place(const Expr& root) {
  // Post-order of the DAG below `root`, iteratively. A node is expanded when first
  // popped, not when first pushed: a child queued by one parent and reached again
  // through another is pushed again, so that it finishes before both.
  std::vector<Expr> order;
  absl::flat_hash_set<uintptr_t> expanded_nodes;
  std::vector<std::pair<Expr, bool>> stack = {{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(e);
      continue;
    }
    if (!expanded_nodes.insert(e.identity()).second) continue;
    stack.emplace_back(e, true);
    ForEachChild(e, [&](const Expr& child, int, bool) {
      if (!expanded_nodes.contains(child.identity())) stack.emplace_back(child, false);
    });
  }
  const int root_block = blocks_.AddRoot();
  Info(root) = {1, 1, root_block, -1};
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Expr& e = *it;
    const int placed = Info(e).block;
    ForEachChild(e, [&](const Expr& child, int slot, bool top) {
      int site = placed;
      if (slot >= 0) {
        const auto key = std::pair(e.identity(), slot);
        auto [entry, inserted] = block_of_slot_.try_emplace(key, 0);
        if (inserted) {
          entry->second = blocks_.Add(placed);
          if (slot >= kInlineLetSlot) let_block_[child.identity()] = entry->second;
        }
        site = entry->second;
      }
      NodeInfo& info = Info(child);
      ++info.uses;
      info.top_uses += top;
      info.block = info.block < 0 ? site : blocks_.Lca(info.block, site);
    });
  }
}

std::string Printer::Root(const Expr& e, int indent) {
  if (IsAtom(e)) return std::string(indent, ' ') + Inline(e, indent);
  Place(e);
  std::string out;
  PrintBlock(e, Info(e).block, indent, out);
  return out;
}

// Prints the statements of a block and its result, one per line, at `indent`.
void Printer::PrintBlock(const Expr& body, int block, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  Expr e = body;
  while (e.is(ExprKind::kLet) && !IsShared(e)) {
    EmitPending(e.operand(), block, indent, out);
    absl::StrAppend(&out, pad, "let ", VarDecl(e.var()), " = ", Inline(e.operand(), indent), ";\n");
    e = e.body();
  }
  EmitPending(e, block, indent, out);
  absl::StrAppend(&out, pad, Inline(e, indent));
}

// Binds every node used more than once that `e` reaches, belongs to `block` and is not
// printed yet, dependencies first.
void Printer::EmitPending(const Expr& e, int block, int indent, std::string& out) {
  if (IsAtom(e)) return;
  absl::flat_hash_set<uintptr_t> expanded_nodes;  // as in Place: expanded when popped
  std::vector<std::pair<Expr, bool>> stack = {{e, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    NodeInfo& info = Info(node);
    if (expanded) {
      if (IsShared(node) && info.block == block && info.binding < 0) {
        const std::string text = Inline(node, indent);
        info.binding = next_binding_++;
        absl::StrAppend(&out, std::string(indent, ' '), "%", info.binding, " = ", text, ";\n");
      }
      continue;
    }
    if (info.binding >= 0 || !expanded_nodes.insert(node.identity()).second) continue;
    stack.emplace_back(node, true);
    // Children pushed last to first, so that independent bindings print in the order
    // their uses appear.
    const size_t first_child = stack.size();
    ForEachChild(node, [&](const Expr& child, int, bool) {
      if (!expanded_nodes.contains(child.identity())) stack.emplace_back(child, false);
    });
    std::reverse(stack.begin() + first_child, stack.end());
  }
}

std::string Printer::Inline(const Expr& e, int indent) {
  if (IsShared(e)) {
    const int binding = Info(e).binding;
    if (binding >= 0) return absl::StrCat("%", binding);
  }
  const auto list = [&](const std::vector<Expr>& items) {
    return absl::StrJoin(items, ", ", [&](std::string* out, const Expr& item) {
      out->append(Inline(item, indent));
    });
  };
  const std::string pad(indent, ' ');
  switch (e.kind()) {
    case ExprKind::kVar: return VarName(e);
    case ExprKind::kGlobalVar: return absl::StrCat("@", e.name());
    case ExprKind::kConstant: return Constant(e.value());
    case ExprKind::kOp:
    case ExprKind::kConstructor: return e.name();
    case ExprKind::kCall: {
      std::string args = list(e.args());
      if (!e.attrs().empty()) absl::StrAppend(&args, args.empty() ? "" : ", ", AttrsText(e.attrs()));
      const Expr& callee = e.callee();
      const bool wrap = !IsAtom(callee) && !callee.is(ExprKind::kCall);
      return absl::StrCat(wrap ? "(" : "", Inline(callee, indent), wrap ? ")" : "", "(", args, ")");
    }
    case ExprKind::kLet: {
      std::string out = "(\n";
      PrintBlock(e, let_block_[e.identity()], indent + 2, out);
      return absl::StrCat(out, "\n", pad, ")");
    }
    case ExprKind::kIf: {
      std::string out = absl::StrCat("if (", Inline(e.cond(), indent), ") {\n");
      PrintBlock(e.then_branch(), block_of_slot_[{e.identity(), 0}], indent + 2, out);
      absl::StrAppend(&out, "\n", pad, "} else {\n");
      PrintBlock(e.else_branch(), block_of_slot_[{e.identity(), 1}], indent + 2, out);
      return absl::StrCat(out, "\n", pad, "}");
    }
    case ExprKind::kTuple:
      return e.fields().size() == 1 ? absl::StrCat("(", list(e.fields()), ",)")
                                    : absl::StrCat("(", list(e.fields()), ")");
    case ExprKind::kTupleGetItem: {
      const Expr& t = e.tuple();
      const bool wrap = !IsAtom(t) && !IsShared(t) && !t.is(ExprKind::kCall) &&
                        !t.is(ExprKind::kTuple) && !t.is(ExprKind::kTupleGetItem);
      return absl::StrCat(wrap ? "(" : "", Inline(t, indent), wrap ? ")" : "", ".", e.index());
    }
    case ExprKind::kFunction: return Function(e, indent, "fn ");
    case ExprKind::kMatch: {
      std::string out = absl::StrCat(e.complete() ? "match (" : "match? (",
                                     Inline(e.data(), indent), ") {\n");
      for (size_t i = 0; i < e.clauses().size(); ++i) {
        const Clause& clause = e.clauses()[i];
        absl::StrAppend(&out, pad, "  ", Pattern(clause.pattern), " => {\n");
        PrintBlock(clause.body, block_of_slot_[{e.identity(), static_cast<int>(i)}], indent + 4, out);
        absl::StrAppend(&out, "\n", pad, "  },\n");
      }
      return absl::StrCat(out, pad, "}");
    }
  }
  return "";
}

// `head`(params[, attrs]) -> ret { body }, where head is "fn " or "def @name".
std::string Printer::Function(const Expr& fn, int indent, std::string_view head) {
  std::string out(head);
  if (!fn.type_params().empty()) absl::StrAppend(&out, "[", absl::StrJoin(fn.type_params(), ", "), "]");
  std::string params = absl::StrJoin(fn.params(), ", ", [&](std::string* s, const Expr& p) {
    s->append(VarDecl(p));
  });
  if (!fn.attrs().empty()) absl::StrAppend(&params, params.empty() ? "" : ", ", AttrsText(fn.attrs()));
  absl::StrAppend(&out, "(", params, ")");
  if (fn.annotation()) absl::StrAppend(&out, " -> ", fn.annotation()->ToString());
  out += " {\n";
  const Expr& body = fn.body();
  if (IsAtom(body)) {
    absl::StrAppend(&out, std::string(indent + 2, ' '), Inline(body, indent + 2));
  } else {
    PrintBlock(body, block_of_slot_[{fn.identity(), 0}], indent + 2, out);
  }
  return absl::StrCat(out, "\n", std::string(indent, ' '), "}");
}

std::string Printer::Pattern(const compiler::Pattern& p) {
  const auto fields = [&] {
    return absl::StrJoin(p.fields(), ", ", [&](std::string* out, const compiler::Pattern& f) {
      out->append(Pattern(f));
    });
  };
  switch (p.kind()) {
    case PatternKind::kWildcard: return "_";
    case PatternKind::kVar: return VarDecl(p.expr());
    case PatternKind::kConstructor:
      return p.fields().empty() ? p.expr().name() : absl::StrCat(p.expr().name(), "(", fields(), ")");
    case PatternKind::kTuple: return absl::StrCat("(", fields(), ")");
  }
  return "_";
}

std::string Printer::Constant(const NDArray& value) {
  if (value->ndim() == 0) {
    switch (value->dtype()) {
      case DType::kF32: return FormatDouble(*value->data_as<float>()) + "f";
      case DType::kF64: return FormatDouble(*value->data_as<double>()) + "f64";
      case DType::kI32: return absl::StrCat(*value->data_as<int32_t>());
      case DType::kI64: return absl::StrCat(*value->data_as<int64_t>(), "i64");
      case DType::kBool: return *value->data_as<uint8_t>() != 0 ? "True" : "False";
      case DType::kF16: return FormatDouble(ElementAsDouble(*value, 0)) + "f16";
      case DType::kI8:
      case DType::kI16:
      case DType::kU8:
      case DType::kU16:
      case DType::kU32:
        return absl::StrCat(ElementAsInt(*value, 0), value->dtype() == DType::kI8 || value->dtype() == DType::kI16 ? "i" : "u",
                            8 * DTypeSize(value->dtype()));
      case DType::kU64:  // a literal reads an int64: beyond it, a meta constant
        if (ElementAsInt(*value, 0) >= 0) return absl::StrCat(ElementAsInt(*value, 0), "u64");
        break;
      default: break;
    }
  }
  // One index per tensor, however many nodes hold it.
  const auto [it, inserted] = constant_index_.try_emplace(value.get(), constants_.size());
  if (inserted) constants_.push_back(value);
  return absl::StrCat("meta[relay.Constant][", it->second, "]");
}

std::string Printer::VarName(const Expr& var) {
  const auto it = var_names_.find(var.var_id());
  if (it != var_names_.end()) return it->second;
  std::string base;
  for (char c : var.name()) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
  std::string name = base;
  int& suffix = next_suffix_[base];  // resumes where the last clash of `base` left off
  while (!used_names_.insert(name).second) name = absl::StrCat(base, "_", ++suffix);
  return var_names_[var.var_id()] = "%" + name;
}

std::string Printer::VarDecl(const Expr& var) {
  std::string out = VarName(var);
  if (var.annotation()) absl::StrAppend(&out, ": ", var.annotation()->ToString());
  return out;
}

std::string Printer::Module(const compiler::Module& module) {
  std::string out = "#[version = \"0.0.5\"]\n";
  for (const std::string& name : module.type_names()) {
    const TypeData& type = *module.FindType(name);
    absl::StrAppend(&out, "type ", type.name);
    if (!type.type_params.empty()) absl::StrAppend(&out, "[", absl::StrJoin(type.type_params, ", "), "]");
    out += " {\n";
    for (const Expr& c : type.constructors) {
      absl::StrAppend(&out, "  ", c.name());
      if (!c.field_types().empty()) {
        absl::StrAppend(&out, "(", absl::StrJoin(c.field_types(), ", ", [](std::string* s, const Type& t) {
                          s->append(t.ToString());
                        }),
                        ")");
      }
      out += ",\n";
    }
    out += "}\n\n";
  }
  for (const std::string& name : module.function_names()) {
    const Expr fn = *module.Function(name);
    Place(fn);
    absl::StrAppend(&out, Function(fn, 0, absl::StrCat("def @", name)), "\n\n");
  }
  out.pop_back();
  return out;
}

}  // namespace

RelayText PrintModule(const Module& module) {
  RelayText out;
  out.text = Printer(out.constants).Module(module);
  return out;
}

std::string PrintExpr(const Expr& expr, std::vector<NDArray>& constants) {
  return Printer(constants).Root(expr, 0);
}

}  // namespace dynvm::compiler
