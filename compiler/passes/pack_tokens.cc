// The packed entry of an encoder (compiler/passes/pack_tokens.h).
//
// One walk over @main's body gives every value a form, and every value with a packed
// form its expression in @main_packed:
//   invariant  independent of the inputs: the same expression (constants stay shared)
//   tokens     [batch or 1, seq, rest...] in @main, [tokens, rest...] packed
//   batch      [batch, rest...] in @main, [sequences, rest...] packed
//   mask       computed from the attention mask alone: no packed form; the expression
//              carried is its computation with the mask all ones, for the check
//   shape      the inputs' shape, its sequence length, as a 1-vector: only to slice
//              position ids
//   tuple      fields of these forms (split's result)
// An operator whose arguments' forms have no rule below stops the walk with the reason.
#include "compiler/passes/pack_tokens.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/passes/fold_constant.h"
#include "compiler/passes/type_infer.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "objects/allocator.h"

namespace dynvm::compiler {
namespace {

enum class Form { kInvariant, kTokens, kBatch, kMask, kShape, kTuple };

// kShape: what the shape arithmetic holds.
enum class ShapeValue { kInputShape, kSeqLength, kSeqLengthVector };

struct Packed {
  Form form = Form::kInvariant;
  // The packed value; kMask: the value with the mask all ones; kShape: none; kTuple:
  // the tuple when it is one value (split's result, a bound tuple), else none.
  Expr expr = {};
  ShapeValue shape = ShapeValue::kInputShape;
  std::vector<Packed> fields = {};  // kTuple
  bool whole = false;          // kTuple: `expr` is the tuple
};

// The reason the walk stopped: FailedPrecondition, so that it is told apart from
// errors of the pass itself.
absl::Status NoPackedForm(const Expr& e, std::string_view why) {
  const std::string where = e.source().empty() ? "" : absl::StrCat(" (", e.source(), ")");
  const std::string op = e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp)
                             ? absl::StrCat("`", e.callee().name(), "`")
                             : std::string("an expression");
  return absl::FailedPreconditionError(absl::StrFormat("%s%s: %s", op, where, why));
}

Expr Call(std::string_view op, std::vector<Expr> args, kernels::Attrs attrs = {},
          std::string source = {}) {
  return Expr::Call(Expr::Op(op), std::move(args), std::move(attrs), std::move(source));
}

int RankOf(const Expr& e) {
  return e.checked_type() && e.checked_type()->is_tensor() ? e.checked_type()->rank() : -1;
}

bool IsConstOne(const Dim& d) { return d.is_const() && d.const_value() == 1; }

// The int attribute `name` (or `fallback`), nullopt when it is not an int.
std::optional<int64_t> IntAttr(const Expr& call, std::string_view name, std::optional<int64_t> fallback) {
  const auto it = call.attrs().find(name);
  if (it == call.attrs().end()) return fallback;
  if (const int64_t* v = std::get_if<int64_t>(&it->second)) return *v;
  return std::nullopt;
}

// The values of an integer constant of rank <= 1, or nullopt.
std::optional<std::vector<int64_t>> IntValues(const Expr& e) {
  if (!e.is(ExprKind::kConstant) || e.value()->ndim() > 1) return std::nullopt;
  const NDArrayObj& t = *e.value();
  std::vector<int64_t> values;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.dtype() == DType::kI64) {
      values.push_back(t.data_as<int64_t>()[i]);
    } else if (t.dtype() == DType::kI32) {
      values.push_back(t.data_as<int32_t>()[i]);
    } else {
      return std::nullopt;
    }
  }
  return values;
}

bool IsElementwise(std::string_view op) {
  static constexpr std::string_view kOthers[] = {"cast", "where", "equal", "not_equal", "less",
                                                 "less_equal", "greater", "greater_equal",
                                                 "logical_and", "logical_or", "logical_not"};
  return kernels::FusedElementwiseArity(op) > 0 ||
         std::find(std::begin(kOthers), std::end(kOthers), op) != std::end(kOthers);
}

class Packer {
 public:
  // Every parameter of @main but `mask_param` is a token input.
  explicit Packer(std::optional<Expr> mask_param) : mask_param_(std::move(mask_param)) {}

  // @main_packed from @main, or the reason it has none.
  absl::StatusOr<Expr> Run(const Expr& main) {
    std::vector<Expr> params;
    for (const Expr& p : main.params()) {
      if (mask_param_ && p.same_as(*mask_param_)) {
        DYNVM_ASSIGN_OR_RETURN(NDArray ones, OnesOf(p.checked_type()->dtype()));
        memo_[p.identity()] = {Form::kMask, Expr::Constant(std::move(ones))};
        continue;
      }
      const Type& t = *p.checked_type();
      Expr packed = Expr::Var(p.name(), Type::Tensor(t.dtype(), {Dim::Symbol("tokens")}));
      params.push_back(packed);
      memo_[p.identity()] = {Form::kTokens, packed};
      if (!first_tokens_) first_tokens_ = packed;
    }
    offsets_ = Expr::Var("offsets", Type::Tensor(DType::kI64, {Dim::Symbol("sequences") + 1}));
    params.push_back(offsets_);
    DYNVM_ASSIGN_OR_RETURN(const Packed body, Visit(main.body()));
    DYNVM_ASSIGN_OR_RETURN(Expr result, Result(main.body(), body));
    return Expr::Function(std::move(params), std::move(result));
  }

  int attention_layers() const { return attention_layers_; }

 private:
  // A [1, 1] tensor of 1 of `dtype`: the mask at real tokens, broadcasting as [batch, seq].
  static absl::StatusOr<NDArray> OnesOf(DType dtype) {
    DYNVM_ASSIGN_OR_RETURN(NDArray one, NDArrayObj::Empty({1, 1}, dtype, MakeNaiveAllocator()));
    switch (dtype) {
      case DType::kI64: *one->data_as<int64_t>() = 1; break;
      case DType::kI32: *one->data_as<int32_t>() = 1; break;
      case DType::kF32: *one->data_as<float>() = 1; break;
      case DType::kBool: *one->data_as<uint8_t>() = 1; break;
      default:
        return absl::FailedPreconditionError(absl::StrFormat("an attention mask of dtype %s", DTypeName(dtype)));
    }
    return one;
  }

  // The function's result: a value with a packed form, or a tuple of them.
  absl::StatusOr<Expr> Result(const Expr& e, const Packed& p) {
    switch (p.form) {
      case Form::kInvariant:
      case Form::kTokens:
      case Form::kBatch:
        return p.expr;
      case Form::kTuple: {
        if (p.whole) return p.expr;
        std::vector<Expr> fields;
        for (size_t i = 0; i < p.fields.size(); ++i) {
          DYNVM_ASSIGN_OR_RETURN(Expr f, Result(e, p.fields[i]));
          fields.push_back(std::move(f));
        }
        return Expr::Tuple(std::move(fields));
      }
      case Form::kMask:
      case Form::kShape:
        break;
    }
    return NoPackedForm(e, "a result computed from the attention mask or the inputs' shape");
  }

  absl::StatusOr<Packed> Visit(const Expr& e) {
    if (const auto it = memo_.find(e.identity()); it != memo_.end()) return it->second;
    DYNVM_ASSIGN_OR_RETURN(Packed p, VisitNew(e));
    memo_[e.identity()] = p;
    return p;
  }

  absl::StatusOr<Packed> VisitNew(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::kConstant:
      case ExprKind::kOp:
        return Packed{Form::kInvariant, e};
      case ExprKind::kVar:
        return NoPackedForm(e, absl::StrCat("the variable %", e.name(), " is not bound in @main"));
      case ExprKind::kLet:
        return VisitLets(e);
      case ExprKind::kTuple: {
        Packed t{Form::kTuple};
        bool invariant = true;
        std::vector<Expr> fields;
        for (const Expr& f : e.fields()) {
          DYNVM_ASSIGN_OR_RETURN(Packed pf, Visit(f));
          invariant = invariant && pf.form == Form::kInvariant;
          fields.push_back(pf.expr);
          t.fields.push_back(std::move(pf));
        }
        if (invariant) return Packed{Form::kInvariant, Expr::Tuple(std::move(fields))};
        return t;
      }
      case ExprKind::kTupleGetItem: {
        DYNVM_ASSIGN_OR_RETURN(const Packed t, Visit(e.tuple()));
        if (t.form == Form::kInvariant) return Packed{Form::kInvariant, Expr::TupleGetItem(t.expr, e.index())};
        if (t.form == Form::kTuple && e.index() >= 0 && e.index() < static_cast<int>(t.fields.size())) {
          return t.fields[e.index()];
        }
        return NoPackedForm(e, "a projection of a value without a packed form");
      }
      case ExprKind::kCall:
        if (e.callee().is(ExprKind::kOp)) return VisitOpCall(e);
        return NoPackedForm(e, "a call of a function: only operators have packed forms");
      default:
        return NoPackedForm(e, "control flow or a function value: only dataflow has a packed form");
    }
  }

  // A let chain: each value bound to a fresh variable of @main_packed (values without
  // a packed form are not bound; their uses carry their form).
  absl::StatusOr<Packed> VisitLets(const Expr& e) {
    std::vector<std::pair<Expr, Expr>> bindings;
    Expr cur = e;
    for (; cur.is(ExprKind::kLet); cur = cur.body()) {
      DYNVM_ASSIGN_OR_RETURN(Packed value, Visit(cur.operand()));
      if (value.form == Form::kInvariant || value.form == Form::kTokens || value.form == Form::kBatch) {
        Expr var = Expr::Var(cur.var().name());
        bindings.emplace_back(var, value.expr);
        value.expr = var;
      } else if (value.form == Form::kTuple) {
        DYNVM_ASSIGN_OR_RETURN(Expr tuple, Result(cur.operand(), value));
        Expr var = Expr::Var(cur.var().name());
        bindings.emplace_back(var, tuple);
        for (size_t i = 0; i < value.fields.size(); ++i) {
          value.fields[i].expr = Expr::TupleGetItem(var, static_cast<int>(i));
        }
        value.expr = var;
        value.whole = true;
      }
      memo_[cur.var().identity()] = value;
    }
    DYNVM_ASSIGN_OR_RETURN(Packed body, Visit(cur));
    if (bindings.empty()) return body;
    if (body.form == Form::kTuple) {
      DYNVM_ASSIGN_OR_RETURN(body.expr, Result(cur, body));
      body.whole = true;
    }
    for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) {
      body.expr = Expr::Let(it->first, it->second, body.expr);
    }
    return body;
  }

  absl::StatusOr<Packed> VisitOpCall(const Expr& e) {
    std::vector<Packed> args;
    bool invariant = true, mask = false, shape = false;
    for (const Expr& a : e.args()) {
      DYNVM_ASSIGN_OR_RETURN(Packed p, Visit(a));
      invariant = invariant && p.form == Form::kInvariant;
      mask = mask || p.form == Form::kMask;
      shape = shape || p.form == Form::kShape;
      args.push_back(std::move(p));
    }
    const std::string& op = e.callee().name();
    if (invariant) return Packed{Form::kInvariant, Rebuild(e, args)};
    if (op == "nn.attention") return Attention(e, args);
    if (shape || op == "shape_of") return ShapeArithmetic(e, args);
    if (mask) {
      for (const Packed& a : args) {
        if (a.form != Form::kMask && a.form != Form::kInvariant) {
          return NoPackedForm(e, "the attention mask mixed with token values: only nn.attention may read it");
        }
      }
      return Packed{Form::kMask, Rebuild(e, args)};
    }
    if (op == "take") return Take(e, args);
    if (op == "nn.dense" || op == "nn.contrib_dense_pack") return RowWise(e, args);
    if (op == "gemm" || op == "matmul" || op == "nn.matmul") {
      if (args[0].form == Form::kBatch && RankOf(e.args()[0]) == 2) return RowWise(e, args);
      return NoPackedForm(e, "a matrix product over the sequence axis");
    }
    if (op == "nn.layer_norm" || op == "nn.softmax" || op == "nn.log_softmax" || op == "split") {
      return AlongAxis(e, args);
    }
    if (op == "reshape") return Reshape(e, args);
    if (op == "expand_dims") return ExpandDims(e, args);
    if (op == "transpose") return Transpose(e, args);
    if (IsElementwise(op)) return Elementwise(e, args);
    return NoPackedForm(e, "no packed form is known for this operator over [batch, seq] values");
  }

  // `e` with its arguments' packed expressions (the same node when none changed).
  static Expr Rebuild(const Expr& e, const std::vector<Packed>& args,
                      std::optional<kernels::Attrs> attrs = std::nullopt) {
    std::vector<Expr> exprs;
    bool same = !attrs.has_value();
    for (size_t i = 0; i < args.size(); ++i) {
      exprs.push_back(args[i].expr);
      same = same && args[i].expr.same_as(e.args()[i]);
    }
    if (same) return e;
    return Expr::Call(e.callee(), std::move(exprs), attrs ? *attrs : e.attrs(), e.source());
  }

  // The form of `args` other than invariant: all tokens, or all batch; else an error.
  absl::StatusOr<Form> VaryingForm(const Expr& e, const std::vector<Packed>& args) {
    std::optional<Form> form;
    for (const Packed& a : args) {
      if (a.form == Form::kInvariant) continue;
      if (a.form != Form::kTokens && a.form != Form::kBatch) {
        return NoPackedForm(e, "an argument without a packed form");
      }
      if (form && *form != a.form) return NoPackedForm(e, "token values mixed with per-sequence values");
      form = a.form;
    }
    return *form;
  }

  // Elementwise with numpy broadcasting: every varying operand of the result's rank;
  // an invariant operand may not vary along the batch or sequence axes, and loses the
  // batch axis if it has one.
  absl::StatusOr<Packed> Elementwise(const Expr& e, std::vector<Packed> args) {
    DYNVM_ASSIGN_OR_RETURN(const Form form, VaryingForm(e, args));
    const int rank = RankOf(e);
    for (size_t i = 0; i < args.size(); ++i) {
      const Expr& orig = e.args()[i];
      const int r = RankOf(orig);
      if (args[i].form != Form::kInvariant) {
        if (r != rank) return NoPackedForm(e, "an operand broadcast along the batch or sequence axis");
        continue;
      }
      if (r < 0) return NoPackedForm(e, "an operand that is not a tensor");
      const std::vector<Dim>& dims = orig.checked_type()->shape();
      const int varying_axes = form == Form::kTokens ? 2 : 1;  // batch [, seq]
      for (int a = 0; a < varying_axes; ++a) {
        const int axis = r - rank + a;  // the operand's axis aligned with axis a
        if (axis >= 0 && !IsConstOne(dims[axis])) {
          return NoPackedForm(e, "a constant operand that varies along the batch or sequence axis");
        }
      }
      if (form == Form::kTokens && r == rank) {
        args[i].expr = Call("squeeze", {args[i].expr}, {{"axis", std::vector<int64_t>{0}}});
      }
    }
    return Packed{form, Rebuild(e, args)};
  }

  // Operators on the last axes of a row-wise value (dense layers, gemm on [batch, k]):
  // the same call on the packed rows.
  absl::StatusOr<Packed> RowWise(const Expr& e, const std::vector<Packed>& args) {
    if (args[0].form != Form::kTokens && args[0].form != Form::kBatch) {
      return NoPackedForm(e, "a row-wise operator whose data has no packed form");
    }
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].form != Form::kInvariant) return NoPackedForm(e, "weights that depend on the inputs");
    }
    if (e.callee().name() == "gemm" && IntAttr(e, "trans_a", 0) != 0) {
      return NoPackedForm(e, "a transposed A");
    }
    return Packed{args[0].form, Rebuild(e, args)};
  }

  // An axis of a [batch, seq, rest...] value in the packed [tokens, rest...]: nullopt for
  // the batch and sequence axes.
  static std::optional<int64_t> PackedAxis(int64_t axis, int rank, Form form) {
    if (axis < 0) return axis;  // counted from the end: the same axis
    const int64_t lead = form == Form::kTokens ? 2 : 1;
    if (axis < lead || axis >= rank) return std::nullopt;
    return axis - lead + 1;
  }

  absl::StatusOr<Packed> AlongAxis(const Expr& e, const std::vector<Packed>& args) {
    if (args[0].form != Form::kTokens && args[0].form != Form::kBatch) {
      return NoPackedForm(e, "data without a packed form");
    }
    for (size_t i = 1; i < args.size(); ++i) {
      if (args[i].form != Form::kInvariant) return NoPackedForm(e, "parameters that depend on the inputs");
    }
    // The kernels' defaults: split's axis is 0, the others' the last.
    const std::optional<int64_t> axis = IntAttr(e, "axis", e.callee().name() == "split" ? 0 : -1);
    const std::optional<int64_t> packed =
        axis ? PackedAxis(*axis, RankOf(e.args()[0]), args[0].form) : std::nullopt;
    if (!packed) return NoPackedForm(e, "along the batch or sequence axis");
    kernels::Attrs attrs = e.attrs();
    attrs["axis"] = *packed;
    const Expr call = Rebuild(e, args, attrs);
    if (e.callee().name() != "split") return Packed{args[0].form, call};
    Packed t{Form::kTuple, call};
    t.whole = true;
    const int parts = e.checked_type() ? static_cast<int>(e.checked_type()->fields().size()) : 0;
    for (int i = 0; i < parts; ++i) t.fields.push_back({args[0].form, Expr::TupleGetItem(call, i)});
    return t;
  }

  // reshape keeping the batch and sequence axes (the types tell: the result's first
  // two extents are the data's): the packed rows keep their count, the rest is reshaped.
  absl::StatusOr<Packed> Reshape(const Expr& e, const std::vector<Packed>& args) {
    const Expr& data = e.args()[0];
    if (args[0].form != Form::kTokens || RankOf(data) < 2 || RankOf(e) < 2) {
      return NoPackedForm(e, "a reshape of a value that is not [batch, seq, ...]");
    }
    const std::vector<Dim>& in = data.checked_type()->shape();
    const std::vector<Dim>& out = e.checked_type()->shape();
    if (in[0] != out[0] || in[1] != out[1]) {
      return NoPackedForm(e, "a reshape that merges or splits the batch or sequence axis");
    }
    std::vector<int64_t> newshape = {-1};
    for (size_t i = 2; i < out.size(); ++i) {
      if (!out[i].is_const()) return NoPackedForm(e, "a reshape to extents the types do not know");
      newshape.push_back(out[i].const_value());
    }
    return Packed{Form::kTokens, Call("reshape", {args[0].expr}, {{"newshape", newshape}}, e.source())};
  }

  // expand_dims after the batch and sequence axes.
  absl::StatusOr<Packed> ExpandDims(const Expr& e, const std::vector<Packed>& args) {
    const int rank = RankOf(e.args()[0]);
    std::optional<int64_t> axis = IntAttr(e, "axis", std::nullopt);
    if (axis && *axis < 0) *axis += rank + 1;
    const std::optional<int64_t> packed = axis ? PackedAxis(*axis, rank + 1, args[0].form) : std::nullopt;
    if (!packed) return NoPackedForm(e, "a new axis before the batch or sequence axis");
    kernels::Attrs attrs = e.attrs();
    attrs["axis"] = *packed;
    return Packed{args[0].form, Rebuild(e, args, attrs)};
  }

  absl::StatusOr<Packed> Transpose(const Expr& e, const std::vector<Packed>& args) {
    const std::optional<std::vector<int64_t>> axes = [&]() -> std::optional<std::vector<int64_t>> {
      const auto it = e.attrs().find("axes");
      if (it == e.attrs().end()) return std::nullopt;
      if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
      return std::nullopt;
    }();
    const int rank = RankOf(e);
    if (args[0].form != Form::kTokens || !axes || static_cast<int>(axes->size()) != rank ||
        (*axes)[0] != 0 || (*axes)[1] != 1) {
      return NoPackedForm(e, "a transpose that moves the batch or sequence axis");
    }
    std::vector<int64_t> packed = {0};
    for (int i = 2; i < rank; ++i) packed.push_back(((*axes)[i] + rank) % rank - 1);
    return Packed{Form::kTokens, Call("transpose", {args[0].expr}, {{"axes", packed}}, e.source())};
  }

  // take: an embedding lookup by token values, or a pooler's row of each sequence.
  absl::StatusOr<Packed> Take(const Expr& e, const std::vector<Packed>& args) {
    const std::optional<int64_t> axis = IntAttr(e, "axis", std::nullopt);
    if (args[0].form == Form::kInvariant && args[1].form == Form::kTokens && axis == 0) {
      return Packed{Form::kTokens, Rebuild(e, args)};
    }
    const std::optional<std::vector<int64_t>> index = IntValues(e.args()[1]);
    if (args[0].form == Form::kTokens && args[1].form == Form::kInvariant && RankOf(e.args()[0]) >= 3 &&
        (axis == 1 || axis == 1 - RankOf(e.args()[0])) && index && index->size() == 1 &&
        RankOf(e.args()[1]) == 0 && (*index)[0] >= 0) {
      const Expr rows = Call("sequence_rows", {offsets_}, {{"row", (*index)[0]}});
      return Packed{Form::kBatch, Call("take", {args[0].expr, rows}, {{"axis", int64_t{0}}, {"mode", std::string("fast")}},
                                       e.source())};
    }
    return NoPackedForm(e, "a take that is neither an embedding lookup by token values nor a fixed row of each sequence");
  }

  absl::StatusOr<Packed> Attention(const Expr& e, const std::vector<Packed>& args) {
    const auto layout = e.attrs().find("layout");
    if (layout == e.attrs().end() || layout->second != kernels::AttrValue(std::string("BSHD"))) {
      return NoPackedForm(e, "attention in the BHSD layout (heads before the sequence)");
    }
    for (int i = 0; i < 3; ++i) {
      if (args[i].form != Form::kTokens) return NoPackedForm(e, "q, k or v without a packed form");
    }
    if (args.size() == 4) {
      if (args[3].form != Form::kMask) {
        return NoPackedForm(e, "a mask that is not computed from the attention mask input");
      }
      DYNVM_RETURN_IF_ERROR(CheckMaskAtOnes(e, args[3].expr));
    }
    kernels::Attrs attrs;
    if (const auto scale = e.attrs().find("scale"); scale != e.attrs().end()) attrs["scale"] = scale->second;
    ++attention_layers_;
    return Packed{Form::kTokens,
                  Call("nn.varlen_attention", {args[0].expr, args[1].expr, args[2].expr, offsets_},
                       std::move(attrs), e.source())};
  }

  // The mask, computed with the attention mask all ones, must add the same finite value
  // to every score (softmax does not see a constant added to a row).
  absl::Status CheckMaskAtOnes(const Expr& e, const Expr& at_ones) {
    absl::StatusOr<Expr> folded = FoldConstants(at_ones);
    if (!folded.ok() || !folded->is(ExprKind::kConstant) || folded->value()->dtype() != DType::kF32) {
      return NoPackedForm(e, "a mask whose value at an all-ones attention mask does not fold to a constant");
    }
    const NDArrayObj& m = *folded->value();
    const float* v = m.data_as<float>();
    for (int64_t i = 0; i < m.num_elements(); ++i) {
      if (!std::isfinite(v[i]) || v[i] != v[0]) {
        return NoPackedForm(e, "a mask that is not one finite value at an all-ones attention mask");
      }
    }
    return absl::OkStatus();
  }

  // The inputs' shape as far as position ids need it: shape_of(ids)[1] as a 1-vector,
  // the end of a slice [0, seq) of a [1, L] constant along axis 1.
  absl::StatusOr<Packed> ShapeArithmetic(const Expr& e, const std::vector<Packed>& args) {
    const std::string& op = e.callee().name();
    if (op == "shape_of" && args[0].form == Form::kTokens && RankOf(e.args()[0]) == 2) {
      return Packed{Form::kShape, Expr(), ShapeValue::kInputShape};
    }
    const std::optional<std::vector<int64_t>> index =
        e.args().size() > 1 ? IntValues(e.args()[1]) : std::nullopt;
    if (op == "take" && args[0].form == Form::kShape && args[0].shape == ShapeValue::kInputShape && IntAttr(e, "axis", 0) == 0 &&
        index && index->size() == 1 && ((*index)[0] == 1 || (*index)[0] == -1)) {
      return Packed{Form::kShape, Expr(), ShapeValue::kSeqLength};
    }
    if (op == "expand_dims" && args[0].form == Form::kShape && args[0].shape == ShapeValue::kSeqLength && IntAttr(e, "axis", 0) == 0 &&
        IntAttr(e, "num_newaxis", 1) == 1) {
      return Packed{Form::kShape, Expr(), ShapeValue::kSeqLengthVector};
    }
    if (op == "dyn.strided_slice") return PositionSlice(e, args);
    return NoPackedForm(e, "arithmetic on the inputs' shape other than the slice of position ids");
  }

  absl::StatusOr<Packed> PositionSlice(const Expr& e, const std::vector<Packed>& args) {
    const Expr& data = e.args()[0];
    const std::optional<std::vector<int64_t>> starts = IntValues(e.args()[1]);
    const std::optional<std::vector<int64_t>> axes =
        e.args().size() > 3 ? IntValues(e.args()[3]) : std::optional<std::vector<int64_t>>();
    const std::optional<std::vector<int64_t>> steps =
        e.args().size() > 4 ? IntValues(e.args()[4]) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
    const bool ok = args[0].form == Form::kInvariant && RankOf(data) == 2 &&
                    IsConstOne(data.checked_type()->shape()[0]) && starts && *starts == std::vector<int64_t>{0} &&
                    args[2].form == Form::kShape && args[2].shape == ShapeValue::kSeqLengthVector &&
                    axes && (*axes == std::vector<int64_t>{1} || *axes == std::vector<int64_t>{-1}) && steps &&
                    *steps == std::vector<int64_t>{1};
    if (!ok) return NoPackedForm(e, "a slice by the sequence length other than [0, seq) of a [1, L] table along axis 1");
    // Row t's id is the table's entry at its position in its sequence.
    const Expr table = Call("reshape", {args[0].expr}, {{"newshape", std::vector<int64_t>{-1}}});
    const Expr positions = Call("sequence_positions", {offsets_, *first_tokens_});
    return Packed{Form::kTokens,
                  Call("take", {table, positions}, {{"axis", int64_t{0}}, {"mode", std::string("fast")}}, e.source())};
  }

  std::optional<Expr> mask_param_;
  std::optional<Expr> first_tokens_;
  Expr offsets_;
  absl::flat_hash_map<uintptr_t, Packed> memo_;
  int attention_layers_ = 0;
};

bool IsMaskName(std::string_view name) { return name == "attention_mask" || name == "input_mask"; }

}  // namespace

absl::StatusOr<Module> DerivePackedEntry(const Module& module, PackedEntryOutcome* outcome) {
  auto refuse = [&](std::string why) -> absl::StatusOr<Module> {
    if (outcome != nullptr) *outcome = {false, std::move(why)};
    return module;
  };
  if (!module.HasFunction("main")) return refuse("no @main");
  if (module.HasFunction(kPackedEntryName)) return refuse(absl::StrFormat("the module has a @%s", kPackedEntryName));
  DYNVM_ASSIGN_OR_RETURN(const Expr main, module.Function("main"));
  if (!main.checked_type()) return absl::FailedPreconditionError("DerivePackedEntry: @main is not typed");
  // The inputs: [batch, seq] tensors of one batch and one sequence length.
  int tokens = 0;
  std::optional<Expr> mask;
  std::optional<std::vector<Dim>> shape;
  for (const Expr& p : main.params()) {
    const std::optional<Type>& t = p.checked_type();
    if (!t || !t->is_tensor() || t->rank() != 2 || (shape && t->shape() != *shape)) {
      return refuse(absl::StrFormat("input %%%s is not [batch, seq] like the others", p.name()));
    }
    shape = t->shape();
    if (IsMaskName(p.name()) && !mask) {
      mask = p;
    } else {
      ++tokens;
    }
  }
  if (tokens == 0) return refuse("no [batch, seq] token input");
  Packer packer(mask);
  absl::StatusOr<Expr> packed = packer.Run(main);
  if (!packed.ok()) {
    if (packed.status().code() != absl::StatusCode::kFailedPrecondition) return packed.status();
    return refuse(std::string(packed.status().message()));
  }
  if (packer.attention_layers() == 0) return refuse("no attention to pack: the function has no nn.attention");
  Module with = module;
  DYNVM_RETURN_IF_ERROR(with.AddFunction(kPackedEntryName, *packed));
  if (!module.ResultNames("main").empty()) {
    DYNVM_RETURN_IF_ERROR(with.SetResultNames(kPackedEntryName, module.ResultNames("main")));
  }
  absl::StatusOr<Module> typed = InferTypes(with);
  if (!typed.ok()) return refuse(absl::StrFormat("@%s does not type: %s", kPackedEntryName, typed.status().message()));
  if (outcome != nullptr) {
    *outcome = {true, absl::StrFormat("@%s: %d attention layers over packed sequences", kPackedEntryName,
                                      packer.attention_layers())};
  }
  return *std::move(typed);
}

}  // namespace dynvm::compiler
