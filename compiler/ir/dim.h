// A dimension of a tensor type: a constant (768), a named symbol (`n`), an expression
// over symbols (`n*12`, `n + 1`, `(n + 7) / 8`), or `?`, a dimension known only at run
// time from the data.
//
//   const Dim n = Dim::Symbol("n");
//   const Dim rows = n * 12 + 1;              // prints "n*12 + 1"
//   rows == Dim::Symbol("n") * 12 + 1          // true: equal expressions are equal Dims
//   (n + n) == n * 2                           // true
//   rows.Evaluate({{"n", 3}})                  // 37
//
// Dims are immutable values, cheap to copy (one shared pointer). Every Dim is kept in
// a canonical form, so that structural equality decides equality of expressions that
// differ only by the rules the form applies: a sum of terms with integer coefficients
// (like terms combined, constants folded, terms in one order); a product of a sum by a
// constant distributed; division and remainder by a constant that divides every
// coefficient done exactly; min and max of constants folded. Other products, divisions,
// remainders, mins and maxes stay as terms of their own. `?` absorbs arithmetic: `? + 1`
// is `?`, as in Relay, since nothing is known of either.
//
// Arithmetic that would overflow int64 at compile time, or divide by a constant zero,
// is not folded: the expression is kept as written, and Evaluate reports the error when
// the values arrive. Division is floor division and `%` its remainder (the sign of the
// divisor), as in TVM's shape arithmetic.
#ifndef DYNVM_COMPILER_IR_DIM_H_
#define DYNVM_COMPILER_IR_DIM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace dynvm::compiler {

namespace internal {
struct DimNode;
}  // namespace internal

class Dim {
 public:
  // The constant 0.
  Dim();
  // A constant extent; implicit, so that `n * 12` and `Dim{768}` read naturally.
  Dim(int64_t value);  // NOLINT(google-explicit-constructor)

  // The symbol `name`: two Symbols of the same name are the same dimension. For the
  // text to parse back, `name` is an identifier ([A-Za-z_][A-Za-z0-9_]*); the parser
  // makes no others.
  static Dim Symbol(std::string_view name);
  // `?`: an extent the types do not know.
  static Dim Any();

  bool is_const() const;
  bool is_any() const;
  bool is_symbol() const;
  // The value of a constant; 0 for other Dims.
  int64_t const_value() const;
  // The name of a symbol; empty for other Dims.
  std::string_view symbol_name() const;

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a) { return Dim(0) - a; }
  // Floor division and its remainder.
  friend Dim FloorDiv(const Dim& a, const Dim& b);
  friend Dim FloorMod(const Dim& a, const Dim& b);
  friend Dim Min(const Dim& a, const Dim& b);
  friend Dim Max(const Dim& a, const Dim& b);

  // Whether `a` and `b` can be the same extent for some values of the symbols: false
  // only when they differ by a non-zero constant (3 and 4, n and n + 1); true when
  // either is `?`.
  friend bool MayEqual(const Dim& a, const Dim& b);

  // Whether the canonical forms are the same.
  friend bool operator==(const Dim& a, const Dim& b);
  friend bool operator!=(const Dim& a, const Dim& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Dim& d) {
    return H::combine(std::move(h), d.ToString());
  }

  // The text form, which the Relay text parser reads back to an equal Dim: "768", "n",
  // "?", "n*12 + 1", "(n + 7) / 8", "min(n, 512)".
  const std::string& ToString() const;

  // The value once every symbol has one. InvalidArgument for an unbound symbol, for `?`,
  // for a division or remainder by zero, and OutOfRange for int64 overflow.
  absl::StatusOr<int64_t> Evaluate(const absl::flat_hash_map<std::string, int64_t>& env) const;

  // This Dim with symbols replaced by the Dims `substitution` maps them to (others
  // kept), in canonical form again.
  Dim Substitute(const absl::flat_hash_map<std::string, Dim>& substitution) const;

  // The distinct symbols, in the order they first print.
  std::vector<std::string> Symbols() const;

  // How the Dim is built, one level deep, for code that computes it (shape lowering):
  //   kConstant   const_value()
  //   kSymbol     symbol_name()
  //   kAny        `?`
  //   kLinear     linear_constant() + the sum of coefficient * term over linear_terms()
  //   kAdd, kMul, kFloorDiv, kFloorMod, kMin, kMax   operands() (an addition kept as
  //               written because folding it would overflow)
  enum class Form { kConstant, kSymbol, kAny, kLinear, kAdd, kMul, kFloorDiv, kFloorMod, kMin, kMax };
  Form form() const;
  int64_t linear_constant() const;
  const std::vector<std::pair<Dim, int64_t>>& linear_terms() const;
  std::pair<Dim, Dim> operands() const;

 private:
  explicit Dim(std::shared_ptr<const internal::DimNode> node) : node_(std::move(node)) {}
  friend struct internal::DimNode;

  std::shared_ptr<const internal::DimNode> node_;
};

}  // namespace dynvm::compiler

#endif  // DYNVM_COMPILER_IR_DIM_H_
