// Converters of ONNX's sequence operators to the List ADT of the sequence prelude
// (SequencePrelude, added to a module whose graph uses them): SequenceConstruct,
// SequenceEmpty, SequenceLength, SequenceAt, SequenceInsert, SequenceErase,
// ConcatFromSequence, SplitToSequence and SequenceMap.
//
// A sequence's elements are tensors of one dtype and rank whose extents may differ, so
// each element enters the list through a variable typed with every extent `?`.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "compiler/frontend/relay_text/parser.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

const Type kI64 = Type::Scalar(DType::kI64);

Type ListOf(const Type& element) { return Type::Adt("List", {element}); }

// The tags are the constructors' positions in the prelude's `type List`.
Expr Cons() {
  return Expr::Constructor("Cons", "List", kListConsTag, {Type::Var("A"), ListOf(Type::Var("A"))});
}
Expr Nil() { return Expr::Constructor("Nil", "List", kListNilTag, {}); }

// The element type of a sequence value; Unimplemented when nothing tells it (an empty
// sequence whose dtype and rank no element gave).
absl::StatusOr<Type> ElementType(const NodeContext& ctx, const OnnxValue& seq) {
  if (seq.type.kind() != TypeKind::kAdt || seq.type.name() != "List" || seq.type.args().size() != 1) {
    return ctx.Invalid(absl::StrFormat("input is %s, expected a sequence", seq.type.ToString()));
  }
  const Type& element = seq.type.args()[0];
  if (!element.is_tensor()) return ctx.Unimplemented("a sequence whose element type is not known yet");
  return element;
}

// `t` as a list element: every extent `?`.
OnnxValue Element(const NodeContext& ctx, const OnnxValue& t) {
  return ctx.Narrow(t, AnyExtents(t.type));
}

OnnxValue Length(const OnnxValue& seq) {
  return OnnxValue{Expr::Call(Expr::GlobalVar("seq_length"), {seq.expr}), kI64, std::nullopt};
}

// A position of the sequence: input `i` as an int64 scalar, negative ones counted from
// the end; `fallback` when the input is absent (required without one).
absl::StatusOr<OnnxValue> Position(const NodeContext& ctx, int i, const OnnxValue& seq,
                                   std::optional<OnnxValue> fallback = std::nullopt) {
  std::optional<OnnxValue> pos = ctx.OptionalInput(i);
  if (!pos && fallback) return *fallback;
  if (!pos) return ctx.Invalid(absl::StrFormat("input %d (the position) is required", i));
  OnnxValue p = *pos;
  if (p.type.dtype() != DType::kI64) {
    DYNVM_ASSIGN_OR_RETURN(p, ctx.Call("cast", {p}, {{"dtype", std::string("int64")}}));
  }
  if (p.type.rank() != 0) {
    DYNVM_ASSIGN_OR_RETURN(p, ctx.Call("reshape", {p}, {{"newshape", std::vector<int64_t>{}}}));
  }
  DYNVM_ASSIGN_OR_RETURN(OnnxValue negative, ctx.Call("less", {p, NodeContext::ConstantI64({0}, true)}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue from_end, ctx.Call("add", {p, Length(seq)}));
  return ctx.Call("where", {negative, from_end, p});
}

absl::StatusOr<Values> ConvertSequenceConstruct(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue first, ctx.Input(0));
  const Type element = AnyExtents(first.type);
  Expr list = Nil();
  for (int i = ctx.num_inputs() - 1; i >= 0; --i) {
    DYNVM_ASSIGN_OR_RETURN(const OnnxValue t, ctx.Input(i));
    if (t.type.dtype() != element.dtype() || t.type.rank() != element.rank()) {
      return ctx.Unimplemented("elements of different dtypes or ranks");
    }
    list = Expr::Call(Cons(), {Element(ctx, t).expr, list});
  }
  return Values{OnnxValue{list, ListOf(element), std::nullopt}};
}

absl::StatusOr<Values> ConvertSequenceEmpty(NodeContext&) {
  return Values{OnnxValue{Nil(), ListOf(Type::Var("A")), std::nullopt}};
}

absl::StatusOr<Values> ConvertSequenceLength(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue seq, ctx.Input(0));
  return Values{Length(seq)};
}

absl::StatusOr<Values> ConvertSequenceAt(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue seq, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const Type element, ElementType(ctx, seq));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue pos, Position(ctx, 1, seq));
  return Values{OnnxValue{Expr::Call(Expr::GlobalVar("seq_at"), {seq.expr, pos.expr}), element, std::nullopt}};
}

absl::StatusOr<Values> ConvertSequenceInsert(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue seq, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue t, ctx.Input(1));
  const Type element = AnyExtents(t.type);
  if (seq.type.kind() == TypeKind::kAdt && !seq.type.args().empty() && seq.type.args()[0].is_tensor() &&
      seq.type.args()[0] != element) {
    return ctx.Unimplemented("an element of another dtype or rank than the sequence's");
  }
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue pos, Position(ctx, 2, seq, Length(seq)));
  return Values{OnnxValue{Expr::Call(Expr::GlobalVar("seq_insert"), {seq.expr, pos.expr, Element(ctx, t).expr}),
                          ListOf(element), std::nullopt}};
}

absl::StatusOr<Values> ConvertSequenceErase(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue seq, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue last, ctx.Call("subtract", {Length(seq), NodeContext::ConstantI64({1}, true)}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue pos, Position(ctx, 1, seq, last));
  return Values{OnnxValue{Expr::Call(Expr::GlobalVar("seq_erase"), {seq.expr, pos.expr}), seq.type, std::nullopt}};
}

// ConcatFromSequence: a let-bound function over the list, concatenating each element
// (with a new axis when new_axis) with the concatenation of the rest.
absl::StatusOr<Values> ConvertConcatFromSequence(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue seq, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const Type element, ElementType(ctx, seq));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis"));
  DYNVM_ASSIGN_OR_RETURN(const int64_t new_axis, ctx.Int("new_axis", 0));
  const int out_rank = element.rank() + (new_axis != 0 ? 1 : 0);
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, out_rank));
  const Type result = Type::Tensor(element.dtype(), std::vector<Dim>(out_rank, Dim::Any()));
  const Expr self = Expr::Var("seq_concat");
  const Expr list = Expr::Var("seq", ListOf(element));
  const Expr head = Expr::Var("head", element), tail = Expr::Var("tail", ListOf(element));
  OnnxValue h{head, element, std::nullopt};
  if (new_axis != 0) {
    DYNVM_ASSIGN_OR_RETURN(h, ctx.Call("expand_dims", {h}, {{"axis", int64_t{axis}}, {"num_newaxis", int64_t{1}}}));
  }
  // The recursive call's result bound to a variable of the result type, which type
  // inference needs before it has inferred the function.
  const Expr rest = Expr::Var("rest", result);
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue joined, ctx.Call("concatenate", {h, OnnxValue{rest, result, std::nullopt}},
                                                          {{"axis", int64_t{axis}}}));
  const Expr inner = Expr::Match(tail, {Clause{Pattern::Constructor(Nil(), {}), h.expr},
                                        Clause{Pattern::Wildcard(), Expr::Let(rest, Expr::Call(self, {tail}), joined.expr)}});
  // An empty sequence has nothing to concatenate: ONNX calls it an error, and so does the
  // incomplete match at run time.
  const Expr body = Expr::Match(list, {Clause{Pattern::Constructor(Cons(), {Pattern::Bind(head), Pattern::Bind(tail)}),
                                              inner}},
                                /*complete=*/false);
  const Expr fn = Expr::Function({list}, body, result);
  return Values{OnnxValue{Expr::Let(self, fn, Expr::Call(self, {seq.expr})), result, std::nullopt}};
}

// SequenceMap: the body applied, for each position i of the first input, to element i
// of every sequence input and to the tensor inputs as they are; each of its outputs
// collected into a sequence. A let-bound function of (i, the sequences so far...) that
// calls itself while i is below the first sequence's length, as Loop does.
absl::StatusOr<Values> ConvertSequenceMap(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue first, ctx.Input(0));
  DYNVM_RETURN_IF_ERROR(ElementType(ctx, first).status());
  const Expr i = Expr::Var("map_i", kI64);
  std::vector<OnnxValue> inputs;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    DYNVM_ASSIGN_OR_RETURN(const OnnxValue v, ctx.Input(k));
    if (v.type.is_tensor()) {
      inputs.push_back(v);
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(const Type element, ElementType(ctx, v));
    inputs.push_back(OnnxValue{Expr::Call(Expr::GlobalVar("seq_at"), {v.expr, i}), element, std::nullopt});
  }
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue body, ctx.Subgraph("body", inputs));
  const std::vector<Type>& results = body.type.fields();
  if (static_cast<int>(results.size()) != ctx.num_outputs()) {
    return ctx.Invalid(absl::StrFormat("the body has %d outputs for %d sequences", results.size(), ctx.num_outputs()));
  }
  const Expr self = Expr::Var("seq_map");
  const Expr step = Expr::Var("map_step", body.type);
  std::vector<Expr> params = {i}, done, next;
  std::vector<Type> result_types;
  const OnnxValue iv{i, kI64, std::nullopt};
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue i_next, ctx.Call("add", {iv, NodeContext::ConstantI64({1}, true)}));
  next.push_back(i_next.expr);
  std::vector<std::pair<Expr, Expr>> elements;  // each output's element, bound to a variable of its list's type
  for (size_t j = 0; j < results.size(); ++j) {
    if (!results[j].is_tensor()) return ctx.Unimplemented("a body output that is not a tensor");
    const Type list = SequenceOf(results[j]);
    const Expr acc = Expr::Var(absl::StrFormat("map_out%d", j), list);
    params.push_back(acc);
    done.push_back(acc);
    result_types.push_back(list);
    const Expr element = Expr::Var(absl::StrFormat("map_element%d", j), AnyExtents(results[j]));
    elements.emplace_back(element, Expr::TupleGetItem(step, static_cast<int>(j)));
    const OnnxValue seq{acc, list, std::nullopt};
    next.push_back(Expr::Call(Expr::GlobalVar("seq_insert"), {acc, Length(seq).expr, element}));
  }
  const Type result = Type::Tuple(result_types);
  Expr grow = Expr::Call(self, std::move(next));
  for (auto it = elements.rbegin(); it != elements.rend(); ++it) grow = Expr::Let(it->first, it->second, grow);
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue more, ctx.Call("less", {iv, Length(first)}));
  const Expr fn = Expr::Function(params, Expr::If(more.expr, Expr::Let(step, body.expr, grow), Expr::Tuple(done)),
                                 result);
  std::vector<Expr> args = {NodeContext::ConstantI64({0}, /*scalar=*/true).expr};
  for (size_t j = 0; j < results.size(); ++j) args.push_back(Nil());
  const OnnxValue all =
      ctx.Narrow(OnnxValue{Expr::Let(self, fn, Expr::Call(self, std::move(args))), result, std::nullopt}, result);
  Values out;
  for (size_t j = 0; j < results.size(); ++j) out.push_back(NodeContext::Field(all, static_cast<int>(j)));
  return out;
}

// SplitToSequence without split sizes: the slices of x along `axis`, one per index (the
// axis kept with extent 1, or removed when keepdims is 0), built from the last one back.
// With split sizes (a 1-D input of a length known when compiling, the sizes themselves
// possibly read at run time), the pieces dyn.split cuts, in order.
absl::StatusOr<Values> ConvertSplitToSequence(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue x, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t axis_attr, ctx.Int("axis", 0));
  DYNVM_ASSIGN_OR_RETURN(const int64_t keepdims, ctx.Int("keepdims", 1));
  DYNVM_ASSIGN_OR_RETURN(const int axis, NormalizeAxis(ctx, axis_attr, x.type.rank()));
  if (std::optional<OnnxValue> split = ctx.OptionalInput(1)) {
    if (split->type.rank() != 1 || !split->type.shape()[0].is_const()) {
      return ctx.Unimplemented("split sizes other than a 1-D tensor of a length known when compiling");
    }
    const int64_t parts = split->type.shape()[0].const_value();
    if (parts < 1) return ctx.Invalid("the split input holds no sizes");
    DYNVM_ASSIGN_OR_RETURN(const OnnxValue pieces,
                           ctx.Call("dyn.split", {x, ShapeOperand(*split)}, {{"axis", int64_t{axis}}}));
    const Type element = AnyExtents(x.type);
    Expr list = Nil();
    for (int64_t k = parts - 1; k >= 0; --k) {
      list = Expr::Call(Cons(), {Element(ctx, NodeContext::Field(pieces, static_cast<int>(k))).expr, list});
    }
    return Values{OnnxValue{list, ListOf(element), std::nullopt}};
  }
  const Type element = Type::Tensor(x.type.dtype(), std::vector<Dim>(x.type.rank() - (keepdims != 0 ? 0 : 1), Dim::Any()));
  const Expr self = Expr::Var("split_seq");
  const Expr i = Expr::Var("i", kI64), acc = Expr::Var("acc", ListOf(element));
  const OnnxValue iv{i, kI64, std::nullopt};
  OnnxValue index = iv;
  if (keepdims != 0) {
    DYNVM_ASSIGN_OR_RETURN(index, ctx.Call("expand_dims", {iv}, {{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
  }
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue slice, ctx.Call("take", {x, index}, {{"axis", int64_t{axis}}}));
  const Expr slice_var = Expr::Var("slice", element);  // widened to the element type
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue done, ctx.Call("less", {iv, NodeContext::ConstantI64({0}, true)}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue previous, ctx.Call("subtract", {iv, NodeContext::ConstantI64({1}, true)}));
  const Expr step = Expr::Let(slice_var, slice.expr,
                              Expr::Call(self, {previous.expr, Expr::Call(Cons(), {slice_var, acc})}));
  const Expr fn = Expr::Function({i, acc}, Expr::If(done.expr, acc, step), ListOf(element));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue extents, ctx.Call("shape_of", {x}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue n, ctx.Call("take", {extents, NodeContext::ConstantI64({axis}, true)},
                                                     {{"axis", int64_t{0}}}));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue last, ctx.Call("subtract", {n, NodeContext::ConstantI64({1}, true)}));
  return Values{OnnxValue{Expr::Let(self, fn, Expr::Call(self, {last.expr, Nil()})), ListOf(element), std::nullopt}};
}

// The List ADT and its functions. Positions are already in [0, length] (insert) or
// [0, length) (at, erase) when valid; an invalid one reaches Nil in the incomplete
// matches, which stops the program with an error as ONNX requires.
constexpr char kPrelude[] = R"(#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @seq_length[A](%l: List[A]) -> int64 {
  match (%l) {
    Cons(_, %t) => add(@seq_length(%t), 1i64),
    Nil => 0i64,
  }
}

def @seq_at[A](%l: List[A], %i: int64) -> A {
  match? (%l) {
    Cons(%h, %t) => if (equal(%i, 0i64)) { %h } else { @seq_at(%t, subtract(%i, 1i64)) },
  }
}

def @seq_insert[A](%l: List[A], %i: int64, %x: A) -> List[A] {
  if (equal(%i, 0i64)) {
    Cons(%x, %l)
  } else {
    match? (%l) {
      Cons(%h, %t) => Cons(%h, @seq_insert(%t, subtract(%i, 1i64), %x)),
    }
  }
}

def @seq_erase[A](%l: List[A], %i: int64) -> List[A] {
  match? (%l) {
    Cons(%h, %t) => if (equal(%i, 0i64)) { %t } else { Cons(%h, @seq_erase(%t, subtract(%i, 1i64))) },
  }
}
)";

}  // namespace

bool IsSequenceOperator(std::string_view op_type) {
  return op_type.starts_with("Sequence") || op_type == "ConcatFromSequence" ||
         op_type == "SplitToSequence";
}

absl::StatusOr<Module> SequencePrelude() { return ParseModule(kPrelude, {}, "sequence prelude"); }

Type SequenceOf(const Type& element) {
  return ListOf(AnyExtents(element));
}

void AddSequenceConverters(ConverterTable& table) {
  table.insert({
      {"SequenceConstruct", {ConvertSequenceConstruct, {}}},
      {"SequenceEmpty", {ConvertSequenceEmpty, {"dtype"}}},
      {"SequenceLength", {ConvertSequenceLength, {}}},
      {"SequenceAt", {ConvertSequenceAt, {}}},
      {"SequenceInsert", {ConvertSequenceInsert, {}}},
      {"SequenceErase", {ConvertSequenceErase, {}}},
      {"ConcatFromSequence", {ConvertConcatFromSequence, {"axis", "new_axis"}}},
      {"SequenceMap", {ConvertSequenceMap, {"body"}}},
      {"SplitToSequence", {ConvertSplitToSequence, {"axis", "keepdims"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
