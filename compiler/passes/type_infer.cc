// Type inference by unification. Unknown types are fresh type variables named "'t<N>",
// which the text format cannot spell, so that they never meet a program's own type
// parameters (which stay rigid inside the function that declares them). A substitution
// maps fresh variables to what unification learned; types are resolved through it.
//
// Every node is typed once (memoised by identity, so shared nodes keep one type), then
// the module is rebuilt with the resolved types attached, with the same sharing. A type
// left with a fresh variable after all functions are inferred is an error: nothing in
// the program determined it.
#include "compiler/passes/type_infer.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/op_registry.h"
#include "compiler/passes/eta_expand.h"

namespace dynvm::compiler {
namespace {

bool IsFresh(const Type& t) {
  return t.kind() == TypeKind::kVar && !t.name().empty() && t.name()[0] == '\'';
}

// Fresh dims, "'d<N>", stand for a callee's signature symbols at one call.
bool IsFreshDim(const Dim& d) { return d.is_symbol() && d.symbol_name().starts_with('\''); }

void CollectSymbols(const Type& t, absl::flat_hash_set<std::string>& out) {
  for (const Dim& d : t.shape()) {
    for (std::string& s : d.Symbols()) out.insert(std::move(s));
  }
  for (const Type& f : t.fields()) CollectSymbols(f, out);
  if (t.kind() == TypeKind::kFunc) CollectSymbols(t.ret(), out);
}

bool HasFresh(const Type& t) {
  if (IsFresh(t)) return true;
  for (const Type& f : t.fields()) {
    if (HasFresh(f)) return true;
  }
  return t.kind() == TypeKind::kFunc && HasFresh(t.ret());
}

class Inferer {
 public:
  explicit Inferer(const Module& module) : module_(module) {}

  absl::StatusOr<Module> Run();

 private:
  Type Fresh() { return Type::Var(absl::StrCat("'t", next_fresh_++)); }
  // `t` with the dims unification learned substituted (to a fixpoint: a learned dim may
  // mention other fresh dims).
  Type ResolveDims(Type t) const;
  Type Resolve(const Type& t) const;
  bool Occurs(const std::string& name, const Type& t) const;
  absl::Status Unify(const Type& expected, const Type& actual, std::string_view what);
  absl::StatusOr<Type> Join(const Type& a, const Type& b, std::string_view what);
  // A generic function type with its type parameters replaced by fresh variables.
  Type Instantiate(const Type& t);
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat("in @", current_, ": ", std::string(message)));
  }

  // The type of `e`; an error names the innermost expression with a source around
  // where it arose ("model.relay:3:18: in @main: ...").
  absl::StatusOr<Type> Infer(const Expr& e);
  absl::StatusOr<Type> InferExpr(const Expr& e);
  // `status` naming `at`'s source, unless an inner expression's already does.
  absl::Status Place(absl::Status status, const Expr& at);
  absl::StatusOr<Type> InferCall(const Expr& e);
  absl::StatusOr<Type> InferLetChain(const Expr& e);
  absl::StatusOr<Type> InferFunction(const Expr& e);
  // The type a let gives its variable before typing its value: a function literal's
  // declared signature when every parameter and the result are annotated (so that a
  // recursive literal knows its own result inside itself), else a fresh variable.
  Type SignatureOf(const Expr& e);
  absl::StatusOr<Type> ConstructorType(const Expr& ctor);
  absl::Status CheckPattern(const Pattern& p, const Type& t);
  void Record(const Expr& e, const Type& t) {
    if (e.is(ExprKind::kVar)) {
      var_types_[e.var_id()] = t;
    } else {
      expr_types_[e.identity()] = t;
    }
  }

  absl::StatusOr<Expr> Rebuild(const Expr& e);
  absl::StatusOr<Pattern> RebuildPattern(const Pattern& p);
  absl::StatusOr<Type> Final(const Expr& e);

  const Module& module_;
  std::string current_;
  bool error_placed_ = false;  // an error on its way out already names its source
  // Types a call expects of a function literal argument's untyped parameters, by var id
  // (InferCall), taken when the literal is typed.
  absl::flat_hash_map<uint64_t, Type> expected_params_;
  // Let-bound function literals with untyped parameters not yet typed, by the let's var
  // id: (the let, the literal). One is typed at its first call, its parameters taking
  // the arguments' types (InferCall), at any other first use, or at the end of its let
  // chain.
  absl::flat_hash_map<uint64_t, std::pair<Expr, Expr>> pending_;
  absl::Status InferPending(uint64_t var_id);
  int next_fresh_ = 0;
  absl::flat_hash_map<std::string, Type> subst_;
  absl::flat_hash_map<std::string, Dim> dim_subst_;
  int next_fresh_dim_ = 0;
  absl::flat_hash_map<uint64_t, Type> var_types_;
  absl::flat_hash_map<uintptr_t, Type> expr_types_;
  absl::flat_hash_map<std::string, Type> global_types_;
  absl::flat_hash_map<uintptr_t, Expr> rebuilt_;
};

Type Inferer::ResolveDims(Type t) const {
  for (int i = 0; i < 64 && !dim_subst_.empty(); ++i) {
    Type next = t.SubstituteDims(dim_subst_);
    if (next == t) break;
    t = std::move(next);
  }
  return t;
}

Type Inferer::Resolve(const Type& t) const {
  switch (t.kind()) {
    case TypeKind::kTensor: return ResolveDims(t);
    case TypeKind::kVar: {
      const auto it = subst_.find(t.name());
      return it == subst_.end() ? t : Resolve(it->second);
    }
    default: break;
  }
  std::vector<Type> fields;
  for (const Type& f : t.fields()) fields.push_back(Resolve(f));
  switch (t.kind()) {
    case TypeKind::kTuple: return Type::Tuple(std::move(fields));
    case TypeKind::kAdt: return Type::Adt(t.name(), std::move(fields));
    case TypeKind::kRef: return Type::Ref(std::move(fields[0]));
    default: return Type::Func(std::move(fields), Resolve(t.ret()), t.type_params());
  }
}

bool Inferer::Occurs(const std::string& name, const Type& t) const {
  const Type r = Resolve(t);
  if (r.kind() == TypeKind::kVar) return r.name() == name;
  for (const Type& f : r.fields()) {
    if (Occurs(name, f)) return true;
  }
  return r.kind() == TypeKind::kFunc && Occurs(name, r.ret());
}

absl::Status Inferer::Unify(const Type& expected, const Type& actual, std::string_view what) {
  const Type a = Resolve(expected), b = Resolve(actual);
  const auto mismatch = [&] {
    return Error(absl::StrFormat("%s: expected %s, got %s", what, a.ToString(), b.ToString()));
  };
  if (IsFresh(a) || IsFresh(b)) {
    const Type& var = IsFresh(a) ? a : b;
    const Type& other = IsFresh(a) ? b : a;
    if (other.kind() == TypeKind::kVar && other.name() == var.name()) return absl::OkStatus();
    if (Occurs(var.name(), other)) return mismatch();
    subst_[var.name()] = other;
    return absl::OkStatus();
  }
  if (a.kind() != b.kind()) return mismatch();
  switch (a.kind()) {
    case TypeKind::kTensor:
      if (a.dtype() != b.dtype() || a.rank() != b.rank()) return mismatch();
      for (int i = 0; i < a.rank(); ++i) {
        const Dim& x = a.shape()[i];
        const Dim& y = b.shape()[i];
        if (x == y) continue;
        // A callee's signature symbol meets the caller's extent: bind it.
        if (IsFreshDim(x) || IsFreshDim(y)) {
          const Dim& fresh = IsFreshDim(x) ? x : y;
          const Dim& other = IsFreshDim(x) ? y : x;
          const std::vector<std::string> inside = other.Symbols();
          if (std::find(inside.begin(), inside.end(), fresh.symbol_name()) == inside.end()) {
            dim_subst_[std::string(fresh.symbol_name())] = other;
            continue;
          }
        }
        if (!MayEqual(x, y)) return mismatch();
      }
      return absl::OkStatus();
    case TypeKind::kVar: return a.name() == b.name() ? absl::OkStatus() : mismatch();
    case TypeKind::kAdt:
      if (a.name() != b.name()) return mismatch();
      break;
    case TypeKind::kFunc:
      DYNVM_RETURN_IF_ERROR(Unify(a.ret(), b.ret(), what));
      break;
    case TypeKind::kTuple:
    case TypeKind::kRef: break;
  }
  if (a.fields().size() != b.fields().size()) return mismatch();
  for (size_t i = 0; i < a.fields().size(); ++i) {
    DYNVM_RETURN_IF_ERROR(Unify(a.fields()[i], b.fields()[i], what));
  }
  return absl::OkStatus();
}

absl::StatusOr<Type> Inferer::Join(const Type& x, const Type& y, std::string_view what) {
  const Type a = Resolve(x), b = Resolve(y);
  if (a.is_tensor() && b.is_tensor() && a.dtype() == b.dtype() && a.rank() == b.rank()) {
    std::vector<Dim> dims;
    for (int i = 0; i < a.rank(); ++i) dims.push_back(a.shape()[i] == b.shape()[i] ? a.shape()[i] : Dim::Any());
    return Type::Tensor(a.dtype(), std::move(dims));
  }
  if (a.kind() == TypeKind::kTuple && b.kind() == TypeKind::kTuple &&
      a.fields().size() == b.fields().size()) {
    std::vector<Type> fields;
    for (size_t i = 0; i < a.fields().size(); ++i) {
      DYNVM_ASSIGN_OR_RETURN(Type f, Join(a.fields()[i], b.fields()[i], what));
      fields.push_back(std::move(f));
    }
    return Type::Tuple(std::move(fields));
  }
  DYNVM_RETURN_IF_ERROR(Unify(a, b, what));
  return Resolve(a);
}

Type Inferer::Instantiate(const Type& t) {
  if (t.kind() != TypeKind::kFunc) return t;
  // The signature's symbols are the callee's own: fresh ones per use, which
  // unification binds to the caller's extents.
  absl::flat_hash_set<std::string> symbols;
  CollectSymbols(t, symbols);
  absl::flat_hash_map<std::string, Dim> renamed;
  for (const std::string& s : symbols) renamed[s] = Dim::Symbol(absl::StrCat("'d", next_fresh_dim_++));
  const Type fn = renamed.empty() ? t : t.SubstituteDims(renamed);
  if (fn.type_params().empty()) return fn;
  std::vector<std::pair<std::string, Type>> fresh;
  for (const std::string& param : fn.type_params()) fresh.emplace_back(param, Fresh());
  return Type::Func(fn.params(), fn.ret()).SubstituteVars(fresh);
}

absl::Status Inferer::Place(absl::Status status, const Expr& at) {
  if (status.ok() || error_placed_ || at.source().empty()) return status;
  error_placed_ = true;
  return absl::Status(status.code(), absl::StrCat(at.source(), ": ", status.message()));
}

absl::StatusOr<Type> Inferer::Infer(const Expr& e) {
  absl::StatusOr<Type> t = InferExpr(e);
  if (!t.ok()) return Place(t.status(), e);
  return t;
}

absl::Status Inferer::InferPending(uint64_t var_id) {
  const auto it = pending_.find(var_id);
  if (it == pending_.end()) return absl::OkStatus();
  const auto [let, literal] = it->second;
  pending_.erase(it);  // a recursive use inside the literal sees the variable's type
  DYNVM_ASSIGN_OR_RETURN(const Type value, Infer(literal));
  return Place(Unify(var_types_[var_id], value, absl::StrCat("the value of %", let.var().name())), let);
}

absl::StatusOr<Type> Inferer::InferExpr(const Expr& e) {
  if (e.is(ExprKind::kVar)) {
    DYNVM_RETURN_IF_ERROR(InferPending(e.var_id()));
    const auto it = var_types_.find(e.var_id());
    if (it == var_types_.end()) return Error(absl::StrCat("free variable %", e.name()));
    return it->second;
  }
  // A global and a constructor are instantiated afresh at every use, even when one node
  // stands for several uses (the module's constructor nodes always do).
  if (e.is(ExprKind::kGlobalVar)) {
    const auto it = global_types_.find(e.name());
    if (it == global_types_.end()) return Error(absl::StrCat("undefined function @", e.name()));
    return Instantiate(it->second);
  }
  if (e.is(ExprKind::kConstructor)) return ConstructorType(e);
  if (const auto it = expr_types_.find(e.identity()); it != expr_types_.end()) return it->second;
  Type t;
  switch (e.kind()) {
    case ExprKind::kGlobalVar:
    case ExprKind::kConstructor:
    case ExprKind::kVar:
      break;
    case ExprKind::kConstant: {
      std::vector<Dim> shape(e.value()->shape().begin(), e.value()->shape().end());
      t = Type::Tensor(e.value()->dtype(), std::move(shape));
      break;
    }
    case ExprKind::kOp:
      return Error(absl::StrCat("operator ", e.name(), " used as a value: call it"));
    case ExprKind::kCall: {
      DYNVM_ASSIGN_OR_RETURN(t, InferCall(e));
      break;
    }
    case ExprKind::kLet: return InferLetChain(e);
    case ExprKind::kIf: {
      DYNVM_ASSIGN_OR_RETURN(const Type cond, Infer(e.cond()));
      DYNVM_RETURN_IF_ERROR(Unify(Type::Scalar(DType::kBool), cond, "the condition of if"));
      DYNVM_ASSIGN_OR_RETURN(const Type then_type, Infer(e.then_branch()));
      DYNVM_ASSIGN_OR_RETURN(const Type else_type, Infer(e.else_branch()));
      DYNVM_ASSIGN_OR_RETURN(t, Join(then_type, else_type, "the branches of if"));
      break;
    }
    case ExprKind::kTuple: {
      std::vector<Type> fields;
      for (const Expr& f : e.fields()) {
        DYNVM_ASSIGN_OR_RETURN(Type ft, Infer(f));
        fields.push_back(std::move(ft));
      }
      t = Type::Tuple(std::move(fields));
      break;
    }
    case ExprKind::kTupleGetItem: {
      DYNVM_ASSIGN_OR_RETURN(const Type tuple_type, Infer(e.tuple()));
      const Type tuple = Resolve(tuple_type);
      if (tuple.kind() != TypeKind::kTuple) {
        return Error(absl::StrFormat("projection .%d of %s, which is not a tuple", e.index(),
                                     tuple.ToString()));
      }
      if (e.index() < 0 || e.index() >= static_cast<int>(tuple.fields().size())) {
        return Error(absl::StrFormat("projection .%d of %s, which has %d fields", e.index(),
                                     tuple.ToString(), tuple.fields().size()));
      }
      t = tuple.fields()[e.index()];
      break;
    }
    case ExprKind::kFunction: {
      DYNVM_ASSIGN_OR_RETURN(t, InferFunction(e));
      break;
    }
    case ExprKind::kMatch: {
      DYNVM_ASSIGN_OR_RETURN(const Type data, Infer(e.data()));
      std::optional<Type> result;
      for (const Clause& clause : e.clauses()) {
        DYNVM_RETURN_IF_ERROR(CheckPattern(clause.pattern, data));
        DYNVM_ASSIGN_OR_RETURN(const Type body, Infer(clause.body));
        if (result) {
          DYNVM_ASSIGN_OR_RETURN(result, Join(*result, body, "the clauses of match"));
        } else {
          result = body;
        }
      }
      if (!result) return Error("match with no clauses");
      t = *result;
      break;
    }
  }
  Record(e, t);
  return t;
}

// Whether `e` is a function literal with a parameter of no declared type.
bool HasUntypedParams(const Expr& e) {
  return e.is(ExprKind::kFunction) &&
         std::any_of(e.params().begin(), e.params().end(), [](const Expr& p) { return !p.annotation(); });
}

absl::StatusOr<Type> Inferer::InferCall(const Expr& e) {
  const Expr& callee = e.callee();
  std::vector<Type> args;
  for (const Expr& arg : e.args()) {
    // A function literal passed to a function (@map(fn (%v) { nn.relu(%v) }, %l)) is
    // typed after the other arguments, its untyped parameters taking the types the
    // callee expects of them by then.
    if (!callee.is(ExprKind::kOp) && HasUntypedParams(arg)) {
      args.push_back(Fresh());
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(Type t, Infer(arg));
    args.push_back(std::move(t));
  }
  if (callee.is(ExprKind::kOp)) {
    const OpDef* def = FindOp(callee.name());
    if (def == nullptr) return Error(absl::StrCat("unknown operator ", callee.name()));
    for (size_t i = 0; i < args.size(); ++i) {
      args[i] = Resolve(args[i]);
      if (HasFresh(args[i])) {
        return Error(absl::StrFormat("%s: the type of argument %d is not known here; annotate it",
                                     callee.name(), i));
      }
    }
    absl::StatusOr<Type> out = InferCallType(*def, args, e.attrs());
    if (!out.ok()) return Error(out.status().message());
    return out;
  }
  // A called literal with untyped parameters (one let-bound, typed at its first call,
  // or one in place) takes their types from the arguments.
  const Expr* literal = HasUntypedParams(callee) ? &callee : nullptr;
  if (const auto it = callee.is(ExprKind::kVar) ? pending_.find(callee.var_id()) : pending_.end();
      it != pending_.end()) {
    literal = &it->second.second;
  }
  if (literal != nullptr && literal->params().size() == args.size()) {
    for (size_t j = 0; j < args.size(); ++j) {
      const Type arg = Resolve(args[j]);
      if (!literal->params()[j].annotation() && !HasFresh(arg)) {
        expected_params_[literal->params()[j].var_id()] = arg;
      }
    }
  }
  DYNVM_ASSIGN_OR_RETURN(const Type callee_type, Infer(callee));
  Type fn = Resolve(callee_type);
  // A value of a generic function type (a generic literal, a parameter fn [A] (A) -> A)
  // is instantiated afresh at each call, as globals are.
  if (fn.kind() == TypeKind::kFunc && !fn.type_params().empty()) fn = Instantiate(fn);
  if (IsFresh(fn)) {
    std::vector<Type> params;
    for (size_t i = 0; i < args.size(); ++i) params.push_back(Fresh());
    const Type made = Type::Func(std::move(params), Fresh());
    DYNVM_RETURN_IF_ERROR(Unify(fn, made, "a called value"));
    fn = made;
  }
  if (fn.kind() != TypeKind::kFunc) return Error(absl::StrCat("calling a value of type ", fn.ToString()));
  if (fn.params().size() != args.size()) {
    return Error(absl::StrFormat("%s takes %d arguments, got %d", fn.ToString(), fn.params().size(),
                                 args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    DYNVM_RETURN_IF_ERROR(Unify(fn.params()[i], args[i], absl::StrFormat("argument %d of a call", i)));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Expr& arg = e.args()[i];
    if (!HasUntypedParams(arg)) continue;
    const Type expected = Resolve(fn.params()[i]);
    if (expected.kind() == TypeKind::kFunc && expected.params().size() == arg.params().size()) {
      for (size_t j = 0; j < arg.params().size(); ++j) {
        if (!arg.params()[j].annotation()) expected_params_[arg.params()[j].var_id()] = expected.params()[j];
      }
    }
    DYNVM_ASSIGN_OR_RETURN(const Type t, Infer(arg));
    DYNVM_RETURN_IF_ERROR(Unify(args[i], t, absl::StrFormat("argument %d of a call", i)));
  }
  return fn.ret();
}

// A let chain in a loop: its length costs no stack. Each let's variable is in scope in
// its own value (a let-bound fn may recurse).
absl::StatusOr<Type> Inferer::InferLetChain(const Expr& e) {
  std::vector<Expr> chain;
  Expr cur = e;
  for (; cur.is(ExprKind::kLet); cur = cur.body()) {
    chain.push_back(cur);
    const Expr& var = cur.var();
    const Type declared = var.annotation() ? *var.annotation() : SignatureOf(cur.operand());
    var_types_[var.var_id()] = declared;
    if (!var.annotation() && HasUntypedParams(cur.operand())) {
      pending_[var.var_id()] = {cur, cur.operand()};
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(const Type value, Infer(cur.operand()));
    DYNVM_RETURN_IF_ERROR(Place(Unify(declared, value, absl::StrCat("the value of %", var.name())), cur));
  }
  DYNVM_ASSIGN_OR_RETURN(const Type body, Infer(cur));
  for (const Expr& let : chain) DYNVM_RETURN_IF_ERROR(InferPending(let.var().var_id()));
  for (const Expr& let : chain) Record(let, body);
  return body;
}

Type Inferer::SignatureOf(const Expr& e) {
  if (!e.is(ExprKind::kFunction) || !e.annotation()) return Fresh();
  std::vector<Type> params;
  for (const Expr& p : e.params()) {
    if (!p.annotation()) return Fresh();
    params.push_back(*p.annotation());
  }
  return Type::Func(std::move(params), *e.annotation(), e.type_params());
}

absl::StatusOr<Type> Inferer::InferFunction(const Expr& e) {
  std::vector<Type> params;
  for (const Expr& p : e.params()) {
    Type t = p.annotation() ? *p.annotation() : Fresh();
    if (const auto it = expected_params_.find(p.var_id()); it != expected_params_.end()) {
      t = it->second;
      expected_params_.erase(it);
    }
    var_types_[p.var_id()] = t;
    params.push_back(t);
  }
  DYNVM_ASSIGN_OR_RETURN(const Type body, Infer(e.body()));
  Type ret = body;
  if (e.annotation()) {
    DYNVM_RETURN_IF_ERROR(Unify(*e.annotation(), body, "the result of a function"));
    ret = *e.annotation();
  }
  return Type::Func(std::move(params), ret, e.type_params());
}

// A constructor as a value: fn (fields) -> Adt[fresh...], or the Adt for a nullary one.
absl::StatusOr<Type> Inferer::ConstructorType(const Expr& ctor) {
  const TypeData* data = module_.FindType(ctor.adt());
  if (data == nullptr) return Error(absl::StrCat("constructor ", ctor.name(), " of unknown type ", ctor.adt()));
  std::vector<std::pair<std::string, Type>> fresh;
  std::vector<Type> args;
  for (const std::string& param : data->type_params) {
    args.push_back(Fresh());
    fresh.emplace_back(param, args.back());
  }
  const Type adt = Type::Adt(data->name, std::move(args));
  if (ctor.field_types().empty()) return adt;
  std::vector<Type> fields;
  for (const Type& f : ctor.field_types()) fields.push_back(f.SubstituteVars(fresh));
  return Type::Func(std::move(fields), adt);
}

absl::Status Inferer::CheckPattern(const Pattern& p, const Type& t) {
  switch (p.kind()) {
    case PatternKind::kWildcard: return absl::OkStatus();
    case PatternKind::kVar: {
      const Expr& var = p.expr();
      if (var.annotation()) DYNVM_RETURN_IF_ERROR(Unify(*var.annotation(), t, absl::StrCat("pattern %", var.name())));
      var_types_[var.var_id()] = var.annotation() ? *var.annotation() : t;
      return absl::OkStatus();
    }
    case PatternKind::kTuple: {
      std::vector<Type> fields;
      for (size_t i = 0; i < p.fields().size(); ++i) fields.push_back(Fresh());
      DYNVM_RETURN_IF_ERROR(Unify(Type::Tuple(fields), t, "a tuple pattern"));
      for (size_t i = 0; i < fields.size(); ++i) DYNVM_RETURN_IF_ERROR(CheckPattern(p.fields()[i], fields[i]));
      return absl::OkStatus();
    }
    case PatternKind::kConstructor: {
      DYNVM_ASSIGN_OR_RETURN(const Type ctor, ConstructorType(p.expr()));
      const bool nullary = ctor.kind() != TypeKind::kFunc;
      DYNVM_RETURN_IF_ERROR(Unify(nullary ? ctor : ctor.ret(), t,
                                  absl::StrCat("pattern ", p.expr().name())));
      const std::vector<Type> no_fields;
      const std::vector<Type>& fields = nullary ? no_fields : ctor.params();
      if (fields.size() != p.fields().size()) {
        return Error(absl::StrFormat("pattern %s has %d fields, the constructor %d", p.expr().name(),
                                     p.fields().size(), fields.size()));
      }
      for (size_t i = 0; i < fields.size(); ++i) DYNVM_RETURN_IF_ERROR(CheckPattern(p.fields()[i], fields[i]));
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Rebuilding with the resolved types

absl::StatusOr<Type> Inferer::Final(const Expr& e) {
  const bool is_var = e.is(ExprKind::kVar);
  Type t = Resolve(is_var ? var_types_.at(e.var_id()) : expr_types_.at(e.identity()));
  // A callee's symbol no argument determined (one only in its result) is unknown here.
  absl::flat_hash_set<std::string> symbols;
  CollectSymbols(t, symbols);
  absl::flat_hash_map<std::string, Dim> unknown;
  for (const std::string& s : symbols) {
    if (s.starts_with('\'')) unknown[s] = Dim::Any();
  }
  if (!unknown.empty()) t = t.SubstituteDims(unknown);
  if (HasFresh(t)) {
    return Error(absl::StrFormat("the type of %s is not determined (%s); annotate it",
                                 is_var ? absl::StrCat("%", e.name()) : "an expression", t.ToString()));
  }
  return t;
}

absl::StatusOr<Pattern> Inferer::RebuildPattern(const Pattern& p) {
  std::vector<Pattern> fields;
  for (const Pattern& f : p.fields()) {
    DYNVM_ASSIGN_OR_RETURN(Pattern rf, RebuildPattern(f));
    fields.push_back(std::move(rf));
  }
  switch (p.kind()) {
    case PatternKind::kWildcard: return p;
    case PatternKind::kVar: {
      DYNVM_ASSIGN_OR_RETURN(Expr var, Rebuild(p.expr()));
      return Pattern::Bind(std::move(var));
    }
    case PatternKind::kTuple: return Pattern::Tuple(std::move(fields));
    case PatternKind::kConstructor: return Pattern::Constructor(p.expr(), std::move(fields));
  }
  return p;
}

absl::StatusOr<Expr> Inferer::Rebuild(const Expr& e) {
  // Operators and constructors are typed where they are used (the call, the pattern);
  // a global carries its declared signature.
  if (e.is(ExprKind::kOp) || e.is(ExprKind::kConstructor)) return e;
  if (e.is(ExprKind::kGlobalVar)) return e.WithType(Resolve(global_types_.at(e.name())));
  if (const auto it = rebuilt_.find(e.identity()); it != rebuilt_.end()) return it->second;
  const auto all = [&](const std::vector<Expr>& items) -> absl::StatusOr<std::vector<Expr>> {
    std::vector<Expr> out;
    for (const Expr& item : items) {
      DYNVM_ASSIGN_OR_RETURN(Expr r, Rebuild(item));
      out.push_back(std::move(r));
    }
    return out;
  };
  Expr out;
  switch (e.kind()) {
    case ExprKind::kVar:
    case ExprKind::kConstant:
      out = e;
      break;
    case ExprKind::kCall: {
      DYNVM_ASSIGN_OR_RETURN(Expr callee, Rebuild(e.callee()));
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> args, all(e.args()));
      out = Expr::Call(std::move(callee), std::move(args), e.attrs(), e.source());
      break;
    }
    case ExprKind::kLet: {
      // Iteratively over the chain.
      std::vector<std::pair<Expr, Expr>> lets;  // (original let, rebuilt value)
      Expr cur = e;
      for (; cur.is(ExprKind::kLet) && !rebuilt_.contains(cur.identity()); cur = cur.body()) {
        DYNVM_ASSIGN_OR_RETURN(Expr value, Rebuild(cur.operand()));
        lets.emplace_back(cur, std::move(value));
      }
      DYNVM_ASSIGN_OR_RETURN(Expr body, Rebuild(cur));
      for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        DYNVM_ASSIGN_OR_RETURN(Expr var, Rebuild(it->first.var()));
        DYNVM_ASSIGN_OR_RETURN(const Type t, Final(it->first));
        body = Expr::Let(std::move(var), std::move(it->second), std::move(body)).WithType(t);
        rebuilt_[it->first.identity()] = body;
      }
      return body;
    }
    case ExprKind::kIf: {
      DYNVM_ASSIGN_OR_RETURN(Expr cond, Rebuild(e.cond()));
      DYNVM_ASSIGN_OR_RETURN(Expr then_branch, Rebuild(e.then_branch()));
      DYNVM_ASSIGN_OR_RETURN(Expr else_branch, Rebuild(e.else_branch()));
      out = Expr::If(std::move(cond), std::move(then_branch), std::move(else_branch));
      break;
    }
    case ExprKind::kTuple: {
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> fields, all(e.fields()));
      out = Expr::Tuple(std::move(fields));
      break;
    }
    case ExprKind::kTupleGetItem: {
      DYNVM_ASSIGN_OR_RETURN(Expr tuple, Rebuild(e.tuple()));
      out = Expr::TupleGetItem(std::move(tuple), e.index());
      break;
    }
    case ExprKind::kFunction: {
      DYNVM_ASSIGN_OR_RETURN(std::vector<Expr> params, all(e.params()));
      DYNVM_ASSIGN_OR_RETURN(Expr body, Rebuild(e.body()));
      out = Expr::Function(std::move(params), std::move(body), e.annotation(), e.type_params(), e.attrs());
      break;
    }
    case ExprKind::kMatch: {
      DYNVM_ASSIGN_OR_RETURN(Expr data, Rebuild(e.data()));
      std::vector<Clause> clauses;
      for (const Clause& c : e.clauses()) {
        DYNVM_ASSIGN_OR_RETURN(Pattern p, RebuildPattern(c.pattern));
        DYNVM_ASSIGN_OR_RETURN(Expr body, Rebuild(c.body));
        clauses.push_back({std::move(p), std::move(body)});
      }
      out = Expr::Match(std::move(data), std::move(clauses), e.complete());
      break;
    }
    default: return e;
  }
  DYNVM_ASSIGN_OR_RETURN(const Type t, Final(e));
  out = out.WithType(t);
  rebuilt_[e.identity()] = out;
  return out;
}

absl::StatusOr<Module> Inferer::Run() {
  for (const std::string& name : module_.function_names()) {
    current_ = name;
    const Expr fn = *module_.Function(name);
    std::vector<Type> params;
    for (const Expr& p : fn.params()) {
      if (!p.annotation()) return Error(absl::StrCat("parameter %", p.name(), " needs a type"));
      params.push_back(*p.annotation());
    }
    global_types_[name] = Type::Func(std::move(params), fn.annotation() ? *fn.annotation() : Fresh(),
                                     fn.type_params());
  }
  for (const std::string& name : module_.function_names()) {
    current_ = name;
    const Expr fn = *module_.Function(name);
    DYNVM_ASSIGN_OR_RETURN(const Type t, Infer(fn));
    DYNVM_RETURN_IF_ERROR(Unify(global_types_[name].ret(), t.ret(), absl::StrCat("the result of @", name)));
  }
  Module out = module_;
  for (const std::string& name : module_.function_names()) {
    current_ = name;
    DYNVM_ASSIGN_OR_RETURN(Expr fn, Rebuild(*module_.Function(name)));
    DYNVM_RETURN_IF_ERROR(out.SetFunction(name, std::move(fn)));
  }
  return out;
}

}  // namespace

absl::StatusOr<Module> InferTypes(const Module& module) {
  Module expanded = module;
  for (const std::string& name : module.function_names()) {
    DYNVM_ASSIGN_OR_RETURN(Expr fn, EtaExpand(*module.Function(name), name));
    DYNVM_RETURN_IF_ERROR(expanded.SetFunction(name, std::move(fn)));
  }
  return Inferer(expanded).Run();
}

}  // namespace dynvm::compiler
