// Constructors, accessors and structural helpers of the IR's expressions
// (compiler/ir/expr.h).
#include "compiler/ir/expr.h"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"

namespace dynvm::compiler {

// One node for every kind. The fixed children of a kind live in `parts`:
//
//   kCall {callee}   kLet {value, var, body}   kIf {cond, then, else}
//   kTupleGetItem {tuple}   kFunction {body}   kMatch {data}
//
// and its variable-length ones in `operands` (call args, tuple fields, params).
struct Expr::Node {
  ExprKind kind = ExprKind::kTuple;
  uint64_t var_id = 0;
  std::string name;
  std::optional<Type> annotation;
  NDArray value;
  std::vector<Expr> parts, operands;
  kernels::Attrs attrs;
  std::string source;
  int index = 0;
  std::vector<std::string> type_params;
  std::string adt;
  std::vector<Type> field_types;
  std::vector<Clause> clauses;
  bool complete = true;
  std::optional<Type> checked_type;

  ~Node();
};

// Destroys the children this node alone owns in a loop rather than by recursion, so that
// a let chain or a call chain a million deep is freed without a million stack frames.
// A child still owned elsewhere is left to its other owners; use_count() == 1 means no
// other owner exists, so none can appear concurrently.
Expr::Node::~Node() {
  std::vector<std::shared_ptr<const Node>> doomed;
  const auto take_unique = [&doomed](Node& node) {
    const auto take = [&doomed](Expr& e) {
      if (e.node_ != nullptr && e.node_.use_count() == 1) doomed.push_back(std::move(e.node_));
    };
    for (Expr& e : node.parts) take(e);
    for (Expr& e : node.operands) take(e);
    for (Clause& clause : node.clauses) take(clause.body);
  };
  take_unique(*this);
  while (!doomed.empty()) {
    std::shared_ptr<const Node> node = std::move(doomed.back());
    doomed.pop_back();
    // The last owner: nothing else can read the node while its children move out.
    take_unique(const_cast<Node&>(*node));
  }
}

namespace {

// Returned by accessors of kinds that lack the field.
template <typename T>
const T& Empty() {
  static const T* const empty = new T();
  return *empty;
}

uint64_t NextVarId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

Expr Expr::Make(Node node) { return Expr(std::make_shared<const Node>(std::move(node))); }

Expr::Expr() : node_(std::make_shared<const Node>()) {}

Expr Expr::Var(std::string_view name_hint, std::optional<Type> annotation) {
  Node n;
  n.kind = ExprKind::kVar;
  n.var_id = NextVarId();
  n.name = std::string(name_hint);
  n.annotation = std::move(annotation);
  return Make(std::move(n));
}

Expr Expr::GlobalVar(std::string_view name) {
  Node n;
  n.kind = ExprKind::kGlobalVar;
  n.name = std::string(name);
  return Make(std::move(n));
}

Expr Expr::Constant(NDArray value) {
  Node n;
  n.kind = ExprKind::kConstant;
  n.value = std::move(value);
  return Make(std::move(n));
}

Expr Expr::Op(std::string_view name) {
  Node n;
  n.kind = ExprKind::kOp;
  n.name = std::string(name);
  return Make(std::move(n));
}

Expr Expr::Call(Expr callee, std::vector<Expr> args, kernels::Attrs attrs, std::string source) {
  Node n;
  n.kind = ExprKind::kCall;
  n.parts = {std::move(callee)};
  n.operands = std::move(args);
  n.attrs = std::move(attrs);
  n.source = std::move(source);
  return Make(std::move(n));
}

std::string JoinSources(const std::vector<std::string>& sources) {
  constexpr size_t kShown = 3;
  std::vector<std::string_view> distinct;
  for (const std::string& s : sources) {
    if (!s.empty() && std::find(distinct.begin(), distinct.end(), s) == distinct.end()) distinct.push_back(s);
  }
  std::string out;
  for (size_t i = 0; i < distinct.size() && i < kShown; ++i) {
    out += (i == 0 ? "" : ", ");
    out += distinct[i];
  }
  if (distinct.size() > kShown) out += absl::StrFormat(" and %d more", distinct.size() - kShown);
  return out;
}

Expr Expr::Let(Expr var, Expr value, Expr body) {
  Node n;
  n.kind = ExprKind::kLet;
  n.parts = {std::move(value), std::move(var), std::move(body)};
  return Make(std::move(n));
}

Expr Expr::If(Expr cond, Expr then_branch, Expr else_branch) {
  Node n;
  n.kind = ExprKind::kIf;
  n.parts = {std::move(cond), std::move(then_branch), std::move(else_branch)};
  return Make(std::move(n));
}

Expr Expr::Tuple(std::vector<Expr> fields) {
  Node n;
  n.kind = ExprKind::kTuple;
  n.operands = std::move(fields);
  return Make(std::move(n));
}

Expr Expr::TupleGetItem(Expr tuple, int index) {
  Node n;
  n.kind = ExprKind::kTupleGetItem;
  n.parts = {std::move(tuple)};
  n.index = index;
  return Make(std::move(n));
}

Expr Expr::Function(std::vector<Expr> params, Expr body, std::optional<Type> ret_type,
                    std::vector<std::string> type_params, kernels::Attrs attrs) {
  Node n;
  n.kind = ExprKind::kFunction;
  n.annotation = std::move(ret_type);
  n.parts = {std::move(body)};
  n.operands = std::move(params);
  n.attrs = std::move(attrs);
  n.type_params = std::move(type_params);
  return Make(std::move(n));
}

Expr Expr::Constructor(std::string_view name, std::string_view adt, int tag,
                       std::vector<Type> field_types) {
  Node n;
  n.kind = ExprKind::kConstructor;
  n.name = std::string(name);
  n.index = tag;
  n.adt = std::string(adt);
  n.field_types = std::move(field_types);
  return Make(std::move(n));
}

Expr Expr::Match(Expr data, std::vector<Clause> clauses, bool complete) {
  Node n;
  n.kind = ExprKind::kMatch;
  n.parts = {std::move(data)};
  n.clauses = std::move(clauses);
  n.complete = complete;
  return Make(std::move(n));
}

ExprKind Expr::kind() const { return node_->kind; }
uint64_t Expr::var_id() const { return node_->var_id; }
const std::string& Expr::name() const { return node_->name; }
const std::optional<Type>& Expr::annotation() const { return node_->annotation; }
const NDArray& Expr::value() const { return node_->value; }
const std::vector<Expr>& Expr::operands() const { return node_->operands; }
const kernels::Attrs& Expr::attrs() const { return node_->attrs; }
const std::string& Expr::source() const { return node_->source; }
int Expr::index() const { return node_->index; }
const std::vector<std::string>& Expr::type_params() const { return node_->type_params; }
const std::string& Expr::adt() const { return node_->adt; }
const std::vector<Type>& Expr::field_types() const { return node_->field_types; }
const std::vector<Clause>& Expr::clauses() const { return node_->clauses; }
bool Expr::complete() const { return node_->complete; }
const std::optional<Type>& Expr::checked_type() const { return node_->checked_type; }

const Expr& Expr::operand() const {
  return node_->parts.empty() ? Empty<Expr>() : node_->parts[0];
}

const Expr& Expr::var() const {
  return kind() == ExprKind::kLet ? node_->parts[1] : Empty<Expr>();
}

const Expr& Expr::body() const {
  switch (kind()) {
    case ExprKind::kLet: return node_->parts[2];
    case ExprKind::kFunction: return node_->parts[0];
    case ExprKind::kIf: return node_->parts[1];
    default: return Empty<Expr>();
  }
}

const Expr& Expr::else_branch() const {
  return kind() == ExprKind::kIf ? node_->parts[2] : Empty<Expr>();
}

Expr Expr::WithSource(std::string source) const {
  Node copy = *node_;
  copy.source = std::move(source);
  return Make(std::move(copy));
}

Expr Expr::WithType(Type type) const {
  Node copy = *node_;
  copy.checked_type = std::move(type);
  return Make(std::move(copy));
}

bool Expr::same_as(const Expr& other) const {
  if (node_ == other.node_) return true;
  return kind() == ExprKind::kVar && other.kind() == ExprKind::kVar && var_id() == other.var_id();
}

uintptr_t Expr::identity() const {
  return kind() == ExprKind::kVar ? static_cast<uintptr_t>(var_id())
                                  : reinterpret_cast<uintptr_t>(node_.get());
}

Pattern Pattern::Wildcard() { return Pattern(PatternKind::kWildcard, Expr(), {}); }
Pattern Pattern::Bind(Expr var) { return Pattern(PatternKind::kVar, std::move(var), {}); }
Pattern Pattern::Constructor(Expr constructor, std::vector<Pattern> fields) {
  return Pattern(PatternKind::kConstructor, std::move(constructor), std::move(fields));
}
Pattern Pattern::Tuple(std::vector<Pattern> fields) {
  return Pattern(PatternKind::kTuple, Expr(), std::move(fields));
}

bool IsClosureCode(const Expr& fn) {
  if (!fn.is(ExprKind::kFunction)) return false;
  const auto it = fn.attrs().find(kClosureCodeAttr);
  if (it == fn.attrs().end()) return false;
  const auto* value = std::get_if<int64_t>(&it->second);
  return value != nullptr && *value != 0 && fn.body().is(ExprKind::kFunction);
}

bool IsAtom(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kGlobalVar:
    case ExprKind::kConstant:
    case ExprKind::kOp:
    case ExprKind::kConstructor: return true;
    default: return false;
  }
}

void ForEachChild(const Expr& e, const std::function<void(const Expr&)>& f) {
  switch (e.kind()) {
    case ExprKind::kCall:
      f(e.callee());
      for (const Expr& a : e.args()) f(a);
      return;
    case ExprKind::kTuple:
      for (const Expr& field : e.fields()) f(field);
      return;
    case ExprKind::kTupleGetItem: f(e.tuple()); return;
    case ExprKind::kLet:
      f(e.operand());
      f(e.body());
      return;
    case ExprKind::kIf:
      f(e.cond());
      f(e.then_branch());
      f(e.else_branch());
      return;
    case ExprKind::kFunction: f(e.body()); return;
    case ExprKind::kMatch:
      f(e.data());
      for (const Clause& c : e.clauses()) f(c.body);
      return;
    default: return;
  }
}

}  // namespace dynvm::compiler
