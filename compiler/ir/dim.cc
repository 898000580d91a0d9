// Dim's canonical form. Every Dim is one node:
//
//   kLinear   constant + sum coeff_i * term_i   terms sorted by text, coefficients non-zero;
//             a constant has no terms, and a lone term with coefficient 1 and constant 0
//             is the term itself, never a kLinear
//   kSymbol   a name
//   kAny      `?`
//   kMul, kFloorDiv, kFloorMod, kMin, kMax
//             terms that the form cannot reduce (a product of two non-constants, a
//             division by something that does not divide every coefficient, ...)
//   kAdd      a sum kept as written because folding it overflowed int64
//
// Each node carries its text, computed once, which orders terms and decides equality.
#include "compiler/ir/dim.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace dynvm::compiler {
namespace internal {

struct DimNode {
  enum class Kind { kLinear, kSymbol, kAny, kMul, kFloorDiv, kFloorMod, kMin, kMax, kAdd };

  Kind kind = Kind::kLinear;
  int64_t constant = 0;                       // kLinear
  std::vector<std::pair<Dim, int64_t>> terms;  // kLinear: (term, coefficient)
  std::string name;                           // kSymbol
  Dim lhs = Wrap(nullptr), rhs = Wrap(nullptr);  // the binary kinds; null otherwise
  std::string text;

  static Dim Wrap(std::shared_ptr<const DimNode> node) { return Dim(std::move(node)); }
  static const DimNode& Of(const Dim& d) { return *d.node_; }
};

}  // namespace internal

namespace {

using internal::DimNode;
using Kind = DimNode::Kind;
using Terms = std::vector<std::pair<Dim, int64_t>>;

const DimNode& NodeOf(const Dim& d) { return DimNode::Of(d); }

// Whether `d`, as an operand of `*`, `/` or `%`, prints without parentheses.
bool PrintsAsAtom(const Dim& d) {
  const DimNode& n = NodeOf(d);
  switch (n.kind) {
    case Kind::kSymbol:
    case Kind::kAny:
    case Kind::kMin:
    case Kind::kMax: return true;
    case Kind::kLinear: return n.terms.empty() && n.constant >= 0;
    default: return false;
  }
}

std::string Operand(const Dim& d) {
  return PrintsAsAtom(d) ? d.ToString() : absl::StrCat("(", d.ToString(), ")");
}

std::string LinearText(int64_t constant, const Terms& terms) {
  std::string text;
  for (const auto& [term, coeff] : terms) {
    const bool negate = coeff < 0 && coeff != std::numeric_limits<int64_t>::min();
    const int64_t shown = negate ? -coeff : coeff;
    if (text.empty()) {
      if (negate) text += "-";
    } else {
      text += negate ? " - " : " + ";
    }
    text += Operand(term);
    if (shown != 1) absl::StrAppend(&text, "*", shown);
  }
  if (text.empty()) return absl::StrCat(constant);
  if (constant > 0) absl::StrAppend(&text, " + ", constant);
  if (constant < 0) {
    if (constant == std::numeric_limits<int64_t>::min()) {
      absl::StrAppend(&text, " + (", constant, ")");
    } else {
      absl::StrAppend(&text, " - ", -constant);
    }
  }
  return text;
}

Dim MakeBinary(Kind kind, Dim lhs, Dim rhs) {
  auto node = std::make_shared<DimNode>();
  node->kind = kind;
  switch (kind) {
    case Kind::kMul: node->text = absl::StrCat(Operand(lhs), "*", Operand(rhs)); break;
    case Kind::kFloorDiv: node->text = absl::StrCat(Operand(lhs), " / ", Operand(rhs)); break;
    case Kind::kFloorMod: node->text = absl::StrCat(Operand(lhs), " % ", Operand(rhs)); break;
    case Kind::kMin: node->text = absl::StrCat("min(", lhs.ToString(), ", ", rhs.ToString(), ")"); break;
    case Kind::kMax: node->text = absl::StrCat("max(", lhs.ToString(), ", ", rhs.ToString(), ")"); break;
    case Kind::kAdd: node->text = absl::StrCat(Operand(lhs), " + ", Operand(rhs)); break;
    default: break;
  }
  node->lhs = std::move(lhs);
  node->rhs = std::move(rhs);
  return DimNode::Wrap(std::move(node));
}

// The canonical Dim of constant + sum of `terms` (any order, zero coefficients allowed,
// each term a symbol or an irreducible node, no term repeated).
Dim MakeLinear(int64_t constant, Terms terms) {
  std::erase_if(terms, [](const auto& t) { return t.second == 0; });
  std::sort(terms.begin(), terms.end(),
            [](const auto& a, const auto& b) { return a.first.ToString() < b.first.ToString(); });
  if (constant == 0 && terms.size() == 1 && terms[0].second == 1) return terms[0].first;
  auto node = std::make_shared<DimNode>();
  node->kind = Kind::kLinear;
  node->text = LinearText(constant, terms);
  node->constant = constant;
  node->terms = std::move(terms);
  return DimNode::Wrap(std::move(node));
}

// `d` as constant + terms (a lone term for a symbol or an irreducible node).
std::pair<int64_t, Terms> AsLinear(const Dim& d) {
  const DimNode& n = NodeOf(d);
  if (n.kind == Kind::kLinear) return {n.constant, n.terms};
  return {0, Terms{{d, 1}}};
}

bool Overflows(int64_t a, int64_t b, int64_t& out, char op) {
  switch (op) {
    case '+': return __builtin_add_overflow(a, b, &out);
    case '-': return __builtin_sub_overflow(a, b, &out);
    default: return __builtin_mul_overflow(a, b, &out);
  }
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t FloorModInt(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// a + scale * b over linear forms; nullopt-like `false` when a coefficient overflows.
bool AddScaled(const Dim& a, const Dim& b, int64_t scale, Dim& out) {
  auto [constant, terms] = AsLinear(a);
  const auto [b_constant, b_terms] = AsLinear(b);
  int64_t scaled;
  if (Overflows(b_constant, scale, scaled, '*') || Overflows(constant, scaled, constant, '+')) {
    return false;
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < terms.size(); ++i) index[terms[i].first.ToString()] = i;
  for (const auto& [term, coeff] : b_terms) {
    if (Overflows(coeff, scale, scaled, '*')) return false;
    const auto it = index.find(term.ToString());
    if (it == index.end()) {
      index[term.ToString()] = terms.size();
      terms.emplace_back(term, scaled);
    } else if (Overflows(terms[it->second].second, scaled, terms[it->second].second, '+')) {
      return false;
    }
  }
  out = MakeLinear(constant, std::move(terms));
  return true;
}

// Orders the operands of a commutative node by text.
std::pair<Dim, Dim> Ordered(const Dim& a, const Dim& b) {
  return a.ToString() <= b.ToString() ? std::pair{a, b} : std::pair{b, a};
}

}  // namespace

Dim::Dim() : Dim(int64_t{0}) {}

Dim::Dim(int64_t value) : Dim(MakeLinear(value, {})) {}

Dim Dim::Symbol(std::string_view name) {
  auto node = std::make_shared<DimNode>();
  node->kind = Kind::kSymbol;
  node->name = std::string(name);
  node->text = std::string(name);
  return Dim(std::move(node));
}

Dim Dim::Any() {
  static const Dim* const any = [] {
    auto node = std::make_shared<DimNode>();
    node->kind = Kind::kAny;
    node->text.assign(1, '?');  // (= "?" trips GCC 12's false -Wrestrict, PR 105329)
    return new Dim(std::move(node));
  }();
  return *any;
}

bool Dim::is_const() const { return node_->kind == Kind::kLinear && node_->terms.empty(); }
bool Dim::is_any() const { return node_->kind == Kind::kAny; }
bool Dim::is_symbol() const { return node_->kind == Kind::kSymbol; }
int64_t Dim::const_value() const { return is_const() ? node_->constant : 0; }
std::string_view Dim::symbol_name() const { return node_->name; }
const std::string& Dim::ToString() const { return node_->text; }

Dim::Form Dim::form() const {
  switch (node_->kind) {
    case Kind::kLinear: return node_->terms.empty() ? Form::kConstant : Form::kLinear;
    case Kind::kSymbol: return Form::kSymbol;
    case Kind::kAny: return Form::kAny;
    case Kind::kAdd: return Form::kAdd;
    case Kind::kMul: return Form::kMul;
    case Kind::kFloorDiv: return Form::kFloorDiv;
    case Kind::kFloorMod: return Form::kFloorMod;
    case Kind::kMin: return Form::kMin;
    case Kind::kMax: return Form::kMax;
  }
  return Form::kAny;
}
int64_t Dim::linear_constant() const { return node_->constant; }
const std::vector<std::pair<Dim, int64_t>>& Dim::linear_terms() const { return node_->terms; }
std::pair<Dim, Dim> Dim::operands() const { return {node_->lhs, node_->rhs}; }

bool MayEqual(const Dim& a, const Dim& b) {
  const Dim difference = a - b;  // ? if either is
  return !difference.is_const() || difference.const_value() == 0;
}

bool operator==(const Dim& a, const Dim& b) {
  return a.node_ == b.node_ || a.ToString() == b.ToString();
}

Dim operator+(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  Dim out;
  return AddScaled(a, b, 1, out) ? out : MakeBinary(Kind::kAdd, a, b);
}

Dim operator-(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  Dim out;
  if (AddScaled(a, b, -1, out)) return out;
  return MakeBinary(Kind::kAdd, a, MakeBinary(Kind::kMul, b, Dim(-1)));
}

Dim operator*(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (!a.is_const() && !b.is_const()) {
    auto [lhs, rhs] = Ordered(a, b);
    return MakeBinary(Kind::kMul, lhs, rhs);
  }
  const Dim& scalar = a.is_const() ? a : b;
  const Dim& other = a.is_const() ? b : a;
  Dim out;
  if (AddScaled(Dim(0), other, scalar.const_value(), out)) return out;
  return MakeBinary(Kind::kMul, other, scalar);
}

Dim FloorDiv(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (b.is_const() && b.const_value() != 0) {
    const int64_t c = b.const_value();
    if (c == 1) return a;
    auto [constant, terms] = AsLinear(a);
    const bool exact = std::all_of(terms.begin(), terms.end(),
                                   [c](const auto& t) { return t.second % c == 0; });
    // (sum c*k_i t_i + constant) / c = sum k_i t_i + floor(constant / c): the sum is a
    // multiple of c. c = -1 overflows only on INT64_MIN, which no coefficient divides out.
    const bool overflows =
        c == -1 && (constant == std::numeric_limits<int64_t>::min() ||
                    std::any_of(terms.begin(), terms.end(), [](const auto& t) {
                      return t.second == std::numeric_limits<int64_t>::min();
                    }));
    if (exact && !overflows) {
      for (auto& term : terms) term.second /= c;
      return MakeLinear(FloorDivInt(constant, c), std::move(terms));
    }
  }
  return MakeBinary(Kind::kFloorDiv, a, b);
}

Dim FloorMod(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (b.is_const() && b.const_value() != 0) {
    const int64_t c = b.const_value();
    const auto [constant, terms] = AsLinear(a);
    if (std::all_of(terms.begin(), terms.end(), [c](const auto& t) { return t.second % c == 0; })) {
      return Dim(c == -1 ? 0 : FloorModInt(constant, c));
    }
  }
  return MakeBinary(Kind::kFloorMod, a, b);
}

Dim Min(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_const() && b.is_const()) return std::min(a.const_value(), b.const_value());
  if (a == b) return a;
  auto [lhs, rhs] = Ordered(a, b);
  return MakeBinary(Kind::kMin, lhs, rhs);
}

Dim Max(const Dim& a, const Dim& b) {
  if (a.is_any() || b.is_any()) return Dim::Any();
  if (a.is_const() && b.is_const()) return std::max(a.const_value(), b.const_value());
  if (a == b) return a;
  auto [lhs, rhs] = Ordered(a, b);
  return MakeBinary(Kind::kMax, lhs, rhs);
}

absl::StatusOr<int64_t> Dim::Evaluate(const absl::flat_hash_map<std::string, int64_t>& env) const {
  const DimNode& n = *node_;
  const auto overflow = [&] {
    return absl::OutOfRangeError(absl::StrFormat("dimension %s overflows int64", n.text));
  };
  int64_t out = 0;
  switch (n.kind) {
    case Kind::kAny:
      return absl::InvalidArgumentError("dimension ? has no value before run time");
    case Kind::kSymbol: {
      const auto it = env.find(n.name);
      if (it == env.end()) {
        return absl::InvalidArgumentError(absl::StrFormat("symbol %s has no value", n.name));
      }
      return it->second;
    }
    case Kind::kLinear: {
      out = n.constant;
      for (const auto& [term, coeff] : n.terms) {
        DYNVM_ASSIGN_OR_RETURN(const int64_t v, term.Evaluate(env));
        int64_t scaled;
        if (Overflows(v, coeff, scaled, '*') || Overflows(out, scaled, out, '+')) return overflow();
      }
      return out;
    }
    default: break;
  }
  DYNVM_ASSIGN_OR_RETURN(const int64_t a, n.lhs.Evaluate(env));
  DYNVM_ASSIGN_OR_RETURN(const int64_t b, n.rhs.Evaluate(env));
  switch (n.kind) {
    case Kind::kAdd:
      if (Overflows(a, b, out, '+')) return overflow();
      return out;
    case Kind::kMul:
      if (Overflows(a, b, out, '*')) return overflow();
      return out;
    case Kind::kFloorDiv:
    case Kind::kFloorMod:
      if (b == 0) {
        return absl::InvalidArgumentError(
            absl::StrFormat("dimension %s divides by zero", n.text));
      }
      if (b == -1) {
        if (n.kind == Kind::kFloorMod) return 0;
        if (a == std::numeric_limits<int64_t>::min()) return overflow();
      }
      return n.kind == Kind::kFloorDiv ? FloorDivInt(a, b) : FloorModInt(a, b);
    case Kind::kMin: return std::min(a, b);
    case Kind::kMax: return std::max(a, b);
    default: return absl::InternalError("unreachable dimension kind");
  }
}

Dim Dim::Substitute(const absl::flat_hash_map<std::string, Dim>& substitution) const {
  const DimNode& n = *node_;
  switch (n.kind) {
    case Kind::kAny: return *this;
    case Kind::kSymbol: {
      const auto it = substitution.find(n.name);
      return it == substitution.end() ? *this : it->second;
    }
    case Kind::kLinear: {
      Dim out(n.constant);
      for (const auto& [term, coeff] : n.terms) out = out + term.Substitute(substitution) * coeff;
      return out;
    }
    default: break;
  }
  const Dim a = n.lhs.Substitute(substitution), b = n.rhs.Substitute(substitution);
  switch (n.kind) {
    case Kind::kAdd: return a + b;
    case Kind::kMul: return a * b;
    case Kind::kFloorDiv: return FloorDiv(a, b);
    case Kind::kFloorMod: return FloorMod(a, b);
    case Kind::kMin: return Min(a, b);
    default: return Max(a, b);
  }
}

std::vector<std::string> Dim::Symbols() const {
  std::vector<std::string> out;
  const auto visit = [&out](const auto& self, const Dim& d) -> void {
    const DimNode& n = NodeOf(d);
    switch (n.kind) {
      case Kind::kSymbol:
        if (std::find(out.begin(), out.end(), n.name) == out.end()) out.push_back(n.name);
        return;
      case Kind::kAny: return;
      case Kind::kLinear:
        for (const auto& term : n.terms) self(self, term.first);
        return;
      default:
        self(self, n.lhs);
        self(self, n.rhs);
    }
  };
  visit(visit, *this);
  return out;
}

}  // namespace dynvm::compiler
