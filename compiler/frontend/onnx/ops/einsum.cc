// The converter of ONNX's Einsum: any equation (explicit `->` or implicit output,
// ellipses with broadcasting, repeated labels within an operand, any number of
// operands), lowered to the library's transposes, reductions and products.
//
//   1. Each operand's repeated labels become a diagonal: its two axes moved last, the
//      elements off the diagonal zeroed by `where` against an identity mask, the last
//      axis summed away.
//   2. Labels that only one operand has and the output does not are summed away.
//   3. Operands combine left to right. Labels both have are batch axes when the output
//      or a later operand needs them, else contracted. An f32 pair with one contracted
//      label and at most one label of its own on each side — attention's
//      `bhqd,bhkd->bhqk`, a batched matmul — is one `matmul` over transposed operands;
//      any other pair is a broadcasting `multiply` and a `sum` over the contracted axes.
//   4. What remains is summed to the output's labels and transposed to its order.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/ops/common.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// Labels: letters a-z and A-Z are 0..51; the axes an ellipsis stands for are 52 and up,
// right-aligned across operands as numpy broadcasts them.
constexpr int kEllipsisLabel = 52;

int LetterLabel(char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + (c - 'A'); }
char LabelLetter(int label) { return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26)); }

struct Equation {
  std::vector<std::vector<int>> inputs;  // each operand's label per axis
  std::vector<int> output;
};

// One side's term without spaces: its letters, and where its ellipsis is (if any).
struct Term {
  std::vector<int> letters;
  std::optional<size_t> ellipsis;  // the number of letters before it
};

absl::StatusOr<Term> ParseTerm(const NodeContext& ctx, std::string_view text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.ellipsis || text.substr(i, 3) != "...") {
        return ctx.Invalid(absl::StrFormat("equation term '%s': '.' only as one ellipsis '...'", text));
      }
      term.ellipsis = term.letters.size();
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      term.letters.push_back(LetterLabel(c));
    } else {
      return ctx.Invalid(absl::StrFormat("equation term '%s': '%c' is no label (letters and '...')", text, c));
    }
  }
  return term;
}

// Splits `text` at `sep`.
std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

absl::StatusOr<Equation> ParseEquation(const NodeContext& ctx, std::string_view equation,
                                       const std::vector<OnnxValue>& operands) {
  const size_t arrow = equation.find("->");
  const std::vector<std::string_view> terms = Split(equation.substr(0, arrow), ',');
  if (terms.size() != operands.size()) {
    return ctx.Invalid(absl::StrFormat("equation '%s' has %d input terms for %d inputs", equation,
                                       terms.size(), operands.size()));
  }
  Equation eq;
  int ellipsis_rank = 0;
  std::vector<Term> parsed;
  for (size_t i = 0; i < terms.size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(Term term, ParseTerm(ctx, terms[i]));
    const int rank = operands[i].type.rank();
    const int letters = static_cast<int>(term.letters.size());
    if (term.ellipsis ? letters > rank : letters != rank) {
      return ctx.Invalid(absl::StrFormat("equation term '%s' labels %d axes of input %d, which has rank %d",
                                         terms[i], letters, i, rank));
    }
    if (term.ellipsis) ellipsis_rank = std::max(ellipsis_rank, rank - letters);
    parsed.push_back(std::move(term));
  }
  std::vector<int> count(kEllipsisLabel + ellipsis_rank, 0);
  for (size_t i = 0; i < parsed.size(); ++i) {
    const Term& term = parsed[i];
    std::vector<int> labels(term.letters.begin(), term.letters.end());
    if (term.ellipsis) {
      const int dims = operands[i].type.rank() - static_cast<int>(term.letters.size());
      std::vector<int> broadcast;
      for (int d = ellipsis_rank - dims; d < ellipsis_rank; ++d) broadcast.push_back(kEllipsisLabel + d);
      labels.insert(labels.begin() + static_cast<int64_t>(*term.ellipsis), broadcast.begin(), broadcast.end());
    }
    for (int label : labels) ++count[label];
    eq.inputs.push_back(std::move(labels));
  }
  if (arrow == std::string_view::npos) {
    // Implicit: the ellipsis' axes, then the letters used once, alphabetically (ONNX:
    // increasing order; numpy sorts upper case first, as the labels here do not: a-z
    // are 0-25).
    for (int d = 0; d < ellipsis_rank; ++d) eq.output.push_back(kEllipsisLabel + d);
    std::vector<int> once;
    for (int label = 0; label < kEllipsisLabel; ++label) {
      if (count[label] == 1) once.push_back(label);
    }
    std::sort(once.begin(), once.end(), [](int a, int b) {
      // 'A'..'Z' (26..51) sort before 'a'..'z' (0..25), as in ASCII.
      return (a >= 26 ? a - 26 : a + 26) < (b >= 26 ? b - 26 : b + 26);
    });
    eq.output.insert(eq.output.end(), once.begin(), once.end());
    return eq;
  }
  DYNVM_ASSIGN_OR_RETURN(Term out, ParseTerm(ctx, equation.substr(arrow + 2)));
  for (size_t i = 0; i <= out.letters.size(); ++i) {
    if (out.ellipsis == i) {
      for (int d = 0; d < ellipsis_rank; ++d) eq.output.push_back(kEllipsisLabel + d);
    }
    if (i == out.letters.size()) break;
    const int label = out.letters[i];
    if (count[label] == 0) {
      return ctx.Invalid(absl::StrFormat("equation '%s': output label '%c' is in no input", equation,
                                         LabelLetter(label)));
    }
    if (std::count(eq.output.begin(), eq.output.end(), label) != 0) {
      return ctx.Invalid(absl::StrFormat("equation '%s' repeats an output label", equation));
    }
    eq.output.push_back(label);
  }
  if (!out.ellipsis && ellipsis_rank > 0) {
    return ctx.Invalid(absl::StrFormat("equation '%s': the inputs have '...' and the output does not", equation));
  }
  return eq;
}

struct Operand {
  OnnxValue value;
  std::vector<int> labels;
};

bool Has(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// `x` transposed so that its labels come in `order` (a permutation of them).
absl::StatusOr<Operand> Permute(const NodeContext& ctx, Operand x, const std::vector<int>& order) {
  if (order == x.labels) return x;
  std::vector<int64_t> perm;
  for (int label : order) {
    perm.push_back(std::find(x.labels.begin(), x.labels.end(), label) - x.labels.begin());
  }
  DYNVM_ASSIGN_OR_RETURN(x.value, ctx.Call("transpose", {x.value}, {{"axes", perm}}));
  x.labels = order;
  return x;
}

// `x` summed over its labels not in `keep`.
absl::StatusOr<Operand> SumAllBut(const NodeContext& ctx, Operand x, const std::vector<int>& keep) {
  std::vector<int64_t> axes;
  std::vector<int> kept;
  for (size_t i = 0; i < x.labels.size(); ++i) {
    if (Has(keep, x.labels[i])) {
      kept.push_back(x.labels[i]);
    } else {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (axes.empty()) return x;
  DYNVM_ASSIGN_OR_RETURN(x.value, ctx.Call("sum", {x.value}, {{"axis", axes}, {"keepdims", int64_t{0}}}));
  x.labels = std::move(kept);
  return x;
}

// `x` with each repeated label reduced to its diagonal (step 1).
absl::StatusOr<Operand> Diagonals(const NodeContext& ctx, Operand x) {
  for (;;) {
    int p = -1, q = -1;
    for (size_t i = 0; i < x.labels.size() && p < 0; ++i) {
      for (size_t j = i + 1; j < x.labels.size(); ++j) {
        if (x.labels[i] == x.labels[j]) {
          p = static_cast<int>(i);
          q = static_cast<int>(j);
          break;
        }
      }
    }
    if (p < 0) return x;
    const int label = x.labels[p];
    std::vector<int64_t> perm;
    std::vector<int> labels;
    for (size_t i = 0; i < x.labels.size(); ++i) {
      if (static_cast<int>(i) != p && static_cast<int>(i) != q) {
        perm.push_back(static_cast<int64_t>(i));
        labels.push_back(x.labels[i]);
      }
    }
    perm.push_back(p);
    perm.push_back(q);
    DYNVM_ASSIGN_OR_RETURN(OnnxValue n, ExtentOf(ctx, x.value, p));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue i, Iota(ctx, n, x.value.type.shape()[p]));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue column, ctx.Call("expand_dims", {i}, {{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue eye, ctx.Call("equal", {column, i}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue moved, ctx.Call("transpose", {x.value}, {{"axes", perm}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(moved.type.dtype(), 0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue masked, ctx.Call("where", {eye, moved, zero}));
    DYNVM_ASSIGN_OR_RETURN(x.value, ctx.Call("sum", {masked}, {{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t{0}}}));
    labels.push_back(label);
    x.labels = std::move(labels);
  }
}

// `x` with `count` axes of extent 1 inserted at `axis`.
absl::StatusOr<OnnxValue> Insert(const NodeContext& ctx, const OnnxValue& x, size_t axis, size_t count) {
  if (count == 0) return x;
  return ctx.Call("expand_dims", {x}, {{"axis", static_cast<int64_t>(axis)}, {"num_newaxis", static_cast<int64_t>(count)}});
}

// The product of `a` and `b` keeping the labels of `needed` (step 3).
absl::StatusOr<Operand> Contract(const NodeContext& ctx, Operand a, Operand b, const std::vector<int>& needed) {
  std::vector<int> keep_a = needed, keep_b = needed;
  keep_a.insert(keep_a.end(), b.labels.begin(), b.labels.end());
  keep_b.insert(keep_b.end(), a.labels.begin(), a.labels.end());
  DYNVM_ASSIGN_OR_RETURN(a, SumAllBut(ctx, std::move(a), keep_a));
  DYNVM_ASSIGN_OR_RETURN(b, SumAllBut(ctx, std::move(b), keep_b));
  std::vector<int> batch, own_a, own_b, contracted;
  for (int label : a.labels) {
    if (!Has(b.labels, label)) {
      own_a.push_back(label);
    } else {
      (Has(needed, label) ? batch : contracted).push_back(label);
    }
  }
  for (int label : b.labels) {
    if (!Has(a.labels, label)) own_b.push_back(label);
  }
  std::vector<int> result = batch;
  result.insert(result.end(), own_a.begin(), own_a.end());
  result.insert(result.end(), own_b.begin(), own_b.end());
  const auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z = {}) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  if (a.value.type.dtype() == DType::kF32 && b.value.type.dtype() == DType::kF32 &&
      contracted.size() == 1 && own_a.size() <= 1 && own_b.size() <= 1) {
    DYNVM_ASSIGN_OR_RETURN(a, Permute(ctx, std::move(a), concat(batch, own_a, contracted)));
    DYNVM_ASSIGN_OR_RETURN(b, Permute(ctx, std::move(b), concat(batch, contracted, own_b)));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue lhs, Insert(ctx, a.value, batch.size(), 1 - own_a.size()));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue rhs, Insert(ctx, b.value, batch.size() + 1, 1 - own_b.size()));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue product, ctx.Call("matmul", {lhs, rhs}));
    std::vector<int64_t> added;
    if (own_a.empty()) added.push_back(static_cast<int64_t>(batch.size()));
    if (own_b.empty()) added.push_back(static_cast<int64_t>(batch.size()) + 1);
    if (!added.empty()) {
      DYNVM_ASSIGN_OR_RETURN(product, ctx.Call("squeeze", {product}, AxesAttr(added)));
    }
    return Operand{std::move(product), std::move(result)};
  }
  // Both operands laid out as batch, own_a, own_b, contracted, each with 1s where it
  // lacks the other's own axes; multiplied, then summed over the contracted axes.
  DYNVM_ASSIGN_OR_RETURN(a, Permute(ctx, std::move(a), concat(batch, own_a, contracted)));
  DYNVM_ASSIGN_OR_RETURN(b, Permute(ctx, std::move(b), concat(batch, own_b, contracted)));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue lhs, Insert(ctx, a.value, batch.size() + own_a.size(), own_b.size()));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue rhs, Insert(ctx, b.value, batch.size(), own_a.size()));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue product, ctx.Call("multiply", {lhs, rhs}));
  Operand out{std::move(product), concat(result, contracted)};
  return SumAllBut(ctx, std::move(out), result);
}

absl::StatusOr<Values> ConvertEinsum(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const std::string equation, ctx.String("equation"));
  std::vector<OnnxValue> values;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(i));
    values.push_back(std::move(v));
  }
  if (values.empty()) return ctx.Invalid("Einsum needs at least one input");
  DYNVM_ASSIGN_OR_RETURN(const Equation eq, ParseEquation(ctx, equation, values));
  std::vector<Operand> operands;
  for (size_t i = 0; i < values.size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(Operand x, Diagonals(ctx, Operand{values[i], eq.inputs[i]}));
    operands.push_back(std::move(x));
  }
  // Step 2: a label no other operand and not the output has is summed away at once.
  for (size_t i = 0; i < operands.size(); ++i) {
    std::vector<int> keep = eq.output;
    for (size_t j = 0; j < operands.size(); ++j) {
      if (j != i) keep.insert(keep.end(), operands[j].labels.begin(), operands[j].labels.end());
    }
    DYNVM_ASSIGN_OR_RETURN(operands[i], SumAllBut(ctx, std::move(operands[i]), keep));
  }
  Operand result = std::move(operands[0]);
  for (size_t i = 1; i < operands.size(); ++i) {
    std::vector<int> needed = eq.output;
    for (size_t j = i + 1; j < operands.size(); ++j) {
      needed.insert(needed.end(), operands[j].labels.begin(), operands[j].labels.end());
    }
    DYNVM_ASSIGN_OR_RETURN(result, Contract(ctx, std::move(result), std::move(operands[i]), needed));
  }
  DYNVM_ASSIGN_OR_RETURN(result, SumAllBut(ctx, std::move(result), eq.output));
  DYNVM_ASSIGN_OR_RETURN(result, Permute(ctx, std::move(result), eq.output));
  return Values{std::move(result.value)};
}

}  // namespace

void AddEinsumConverters(ConverterTable& table) {
  table.insert({{"Einsum", {ConvertEinsum, {"equation"}}}});
}

}  // namespace dynvm::compiler::onnx_frontend::ops
