// The Graphviz drawing of a function's dataflow (compiler/driver/dot.h).
#include "compiler/driver/dot.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "base/literals.h"

namespace dynvm::compiler {
namespace {

// A constant small enough to write inside its operator's box.
bool IsInlineConstant(const Expr& e) {
  return e.is(ExprKind::kConstant) && e.value()->num_elements() == 1 && e.value()->ndim() == 0;
}

std::string ScalarText(const NDArray& v) {
  switch (v->dtype()) {
    case DType::kF32: return FormatDouble(*v->data_as<float>());
    case DType::kF64: return FormatDouble(*v->data_as<double>());
    case DType::kI32: return absl::StrCat(*v->data_as<int32_t>());
    case DType::kI64: return absl::StrCat(*v->data_as<int64_t>());
    case DType::kBool: return *v->data_as<uint8_t>() ? "True" : "False";
    default: return "...";
  }
}

std::string AttrText(const kernels::AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return absl::StrCat(*i);
  if (const auto* d = std::get_if<double>(&value)) return FormatDouble(*d);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    return absl::StrCat("[", absl::StrJoin(*ints, ", "), "]");
  }
  return "[...]";
}

class Drawer {
 public:
  std::string Run(const Expr& fn, std::string_view name) {
    for (const Expr& p : fn.params()) Tensor(p, absl::StrCat("%", p.name()));
    const int result = Visit(fn.body());
    Edge(result, Node("box", "result", /*style=*/"rounded"));
    std::string out = absl::StrCat("digraph \"", std::string(name), "\" {\n  node [fontname=\"Helvetica\"];\n");
    for (size_t id = 0; id < nodes_list_.size(); ++id) {
      const DotNode& n = nodes_list_[id];
      const std::string escaped =
          absl::StrReplaceAll(n.label, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
      absl::StrAppend(&out, "  n", id, " [shape=", n.shape, ", label=\"", escaped, "\"",
                      n.style.empty() ? "" : absl::StrCat(", style=", n.style), "];\n");
    }
    return out + edges_ + "}\n";
  }

 private:
  struct DotNode {
    std::string shape, label, style;
  };
  int Node(std::string_view shape, const std::string& label, std::string_view style = "") {
    nodes_list_.push_back({std::string(shape), label, std::string(style)});
    return static_cast<int>(nodes_list_.size()) - 1;
  }
  void Edge(int from, int to) { absl::StrAppend(&edges_, "  n", from, " -> n", to, ";\n"); }
  std::string TypeText(const Expr& e) { return e.checked_type() ? e.checked_type()->ToString() : ""; }
  // A tensor node for `e`, named `name` (empty for an unnamed intermediate).
  int Tensor(const Expr& e, const std::string& name) {
    const std::string type = TypeText(e);
    const int id = Node("ellipse", name.empty() ? type : (type.empty() ? name : name + "\n" + type));
    nodes_[e.identity()] = id;
    return id;
  }

  // The node standing for the value of `e`.
  int Visit(const Expr& e) {
    if (const auto it = nodes_.find(e.identity()); it != nodes_.end()) return it->second;
    if (e.is(ExprKind::kLet)) {
      Expr cur = e;
      for (; cur.is(ExprKind::kLet); cur = cur.body()) {
        const int value = Visit(cur.operand());
        nodes_[cur.var().identity()] = value;
        std::string& label = nodes_list_[value].label;  // the tensor gets the let's name
        label = absl::StrCat("%", cur.var().name(), "\n", label);
      }
      return Visit(cur);
    }
    switch (e.kind()) {
      case ExprKind::kVar: return Tensor(e, absl::StrCat("%", e.name()));
      case ExprKind::kConstant: return Tensor(e, IsInlineConstant(e) ? ScalarText(e.value()) : "constant");
      case ExprKind::kGlobalVar: return Tensor(e, absl::StrCat("@", e.name()));
      case ExprKind::kCall: {
        const Expr& callee = e.callee();
        std::string label = callee.is(ExprKind::kOp) || callee.is(ExprKind::kConstructor) ? callee.name()
                            : callee.is(ExprKind::kGlobalVar) ? absl::StrCat("@", callee.name())
                                                              : "call";
        std::vector<int> inputs;
        std::vector<std::string> inline_args;
        for (const Expr& arg : e.args()) {
          if (IsInlineConstant(arg)) {
            inline_args.push_back(ScalarText(arg.value()));
          } else {
            inputs.push_back(Visit(arg));
          }
        }
        if (!inline_args.empty()) absl::StrAppend(&label, "(·, ", absl::StrJoin(inline_args, ", "), ")");
        for (const auto& [key, value] : e.attrs()) absl::StrAppend(&label, "\n", key, "=", AttrText(value));
        return Operation(e, label, inputs);
      }
      case ExprKind::kTuple: {
        std::vector<int> inputs;
        for (const Expr& f : e.fields()) inputs.push_back(Visit(f));
        return Operation(e, "tuple", inputs);
      }
      case ExprKind::kTupleGetItem: return Operation(e, absl::StrCat(".", e.index()), {Visit(e.tuple())});
      case ExprKind::kIf:
        return Operation(e, "if", {Visit(e.cond()), Visit(e.then_branch()), Visit(e.else_branch())});
      case ExprKind::kMatch: return Operation(e, "match", {Visit(e.data())});
      default: return Operation(e, e.is(ExprKind::kFunction) ? "fn" : "constructor", {});
    }
  }

  // A box for the operation, then a tensor node for its result.
  int Operation(const Expr& e, const std::string& label, const std::vector<int>& inputs) {
    const int box = Node("box", label);
    for (int input : inputs) Edge(input, box);
    const int result = Tensor(e, "");
    Edge(box, result);
    return result;
  }

  std::vector<DotNode> nodes_list_;
  std::string edges_;
  absl::flat_hash_map<uintptr_t, int> nodes_;
};

}  // namespace

std::string DataflowDot(const Expr& function, std::string_view name) {
  return Drawer().Run(function, name);
}

}  // namespace dynvm::compiler
