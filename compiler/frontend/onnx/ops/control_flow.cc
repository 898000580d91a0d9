// Converters of ONNX's control flow: If, Loop and Scan, whose subgraphs are imported
// in place (NodeContext::Subgraph) and become the IR's `if` and let-bound functions that
// tail-call themselves.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
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

// If: both branches (subgraphs reading the enclosing graph's values) become the IR's
// `if`, which evaluates only the one taken.
absl::StatusOr<Values> ConvertIf(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(OnnxValue cond, ctx.Input(0));
  if (cond.type.rank() != 0) {  // a one-element tensor of any rank
    DYNVM_ASSIGN_OR_RETURN(cond, ctx.Call("reshape", {cond}, {{"newshape", std::vector<int64_t>{}}}));
  }
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue then_branch, ctx.Subgraph("then_branch"));
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue else_branch, ctx.Subgraph("else_branch"));
  if (then_branch.type != else_branch.type) {
    return ctx.Unimplemented(absl::StrFormat("branches of different types, %s and %s",
                                             then_branch.type.ToString(), else_branch.type.ToString()));
  }
  const OnnxValue both{Expr::If(cond.expr, then_branch.expr, else_branch.expr), then_branch.type,
                       std::nullopt};
  Values out;
  for (int i = 0; i < static_cast<int>(both.type.fields().size()); ++i) {
    out.push_back(NodeContext::Field(both, i));
  }
  return out;
}

// `v` as a 0-d tensor when it is a one-element tensor of rank `rank` <= 1, and back.
absl::StatusOr<OnnxValue> ToRank(const NodeContext& ctx, const OnnxValue& v, int rank) {
  if (v.type.rank() == rank) return v;
  return ctx.Call("reshape", {v}, {{"newshape", rank == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{1}}});
}

// A loop body (Loop's or Scan's) and the variables of its carried values.
struct CarriedBody {
  OnnxValue body;
  std::vector<Expr> vars;   // one per carried value, named `prefix`k
  std::vector<Type> types;  // theirs
};

// The graph attribute "body" imported on `before`, one variable per carried value, then
// `after`; the variables typed as the values `initial` enter, and if an iteration
// changes a type (body output `first_carried` + k differs from variable k), imported
// again with every extent of the carried tensors `?` and each carried sequence typed as
// the first import's body returned it (a sequence that enters empty, of unknown
// elements, takes the type of what the body inserts). A body with too few outputs is
// returned as it is, for the caller to report.
absl::StatusOr<CarriedBody> ImportCarriedBody(const NodeContext& ctx, const std::vector<OnnxValue>& initial,
                                              std::string_view prefix, const std::vector<OnnxValue>& before,
                                              const std::vector<OnnxValue>& after, int first_carried) {
  const int carried = static_cast<int>(initial.size());
  CarriedBody out;
  for (const bool exact : {true, false}) {
    const std::vector<Type> returned = exact ? std::vector<Type>() : out.body.type.fields();
    out.vars.clear();
    out.types.clear();
    std::vector<OnnxValue> inputs = before;
    for (int k = 0; k < carried; ++k) {
      const Type& entering = initial[k].type;
      const Type t = exact                 ? entering
                     : entering.is_tensor() ? AnyExtents(entering)
                                            : returned[first_carried + k];
      out.vars.push_back(Expr::Var(absl::StrFormat("%s%d", prefix, k), t));
      out.types.push_back(t);
      inputs.push_back(OnnxValue{out.vars.back(), t, std::nullopt});
    }
    inputs.insert(inputs.end(), after.begin(), after.end());
    DYNVM_ASSIGN_OR_RETURN(out.body, ctx.Subgraph("body", inputs));
    const std::vector<Type>& fields = out.body.type.fields();
    if (static_cast<int>(fields.size()) < first_carried + carried) break;
    if (std::equal(out.types.begin(), out.types.end(), fields.begin() + first_carried)) break;
  }
  return out;
}

// What Loop and Scan compile to: a let-bound function of (counters..., carried
// values..., scan outputs so far...) that, while `go` holds, evaluates the body and calls
// itself (a tail call) with the next counters, the body's carried values and each scan
// output grown by the body's slice, and otherwise returns the carried values and the scan
// outputs.
struct TailLoop {
  std::vector<Expr> params;         // counters, carried values, scan outputs
  std::vector<Type> result_types;   // the carried values', then the scan outputs'
  std::vector<OnnxValue> scan_initial;
  int counters = 0;                 // how many params lead that are not results
};

// Adds a scan output for each of the body's outputs from `first` on: a parameter holding
// [iterations, element...] and an empty initial value. The element shape is constant in
// the body's types, or as the body declares it (a slice of another shape then fails in
// concatenate, with a message, at run time).
absl::Status AddScanOutputs(const NodeContext& ctx, const OnnxValue& body, int first, TailLoop& loop) {
  const int outputs = static_cast<int>(body.type.fields().size());
  for (int k = first; k < outputs; ++k) {
    const Type& element = body.type.fields()[k];
    std::optional<std::vector<int64_t>> extents = ConstantDims(element.shape());
    if (!extents) extents = ctx.SubgraphOutputShape("body", k);
    if (!extents || static_cast<int>(extents->size()) != element.rank()) {
      return ctx.Unimplemented("a scan output whose element shape is neither constant nor declared");
    }
    std::vector<int64_t> shape = {0};
    std::vector<Dim> dims = {Dim::Any()};
    for (const int64_t d : *extents) {
      shape.push_back(d);
      dims.emplace_back(d);
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue zero, NodeContext::ConstantScalarOf(element.dtype(), 0.0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue empty, ctx.Call("full", {zero}, {{"shape", shape},
                                                                      {"dtype", std::string(RelayDTypeName(element.dtype()))}}));
    loop.scan_initial.push_back(std::move(empty));
    const Type acc = Type::Tensor(element.dtype(), dims);
    loop.params.push_back(Expr::Var(absl::StrFormat("scan_output%d", k - first), acc));
    loop.result_types.push_back(acc);
  }
  return absl::OkStatus();
}

// The loop's results, given the body (its carried values from output `carried_first`,
// then its scan outputs), `step` the variable the body is bound to in each iteration,
// the condition `go`, the counters' next values and their initial values and the
// carried values' initial ones.
absl::StatusOr<Values> FinishTailLoop(const NodeContext& ctx, const TailLoop& loop, const OnnxValue& body,
                                      const Expr& step, const OnnxValue& go, std::vector<Expr> next,
                                      std::vector<Expr> args, const std::vector<OnnxValue>& initial,
                                      int carried_first) {
  const int carried = static_cast<int>(initial.size());
  const int scans = static_cast<int>(loop.scan_initial.size());
  const OnnxValue step_value{step, body.type, std::nullopt};
  for (int k = 0; k < carried; ++k) next.push_back(NodeContext::Field(step_value, carried_first + k).expr);
  for (int k = 0; k < scans; ++k) {
    const OnnxValue acc{loop.params[loop.counters + carried + k], loop.result_types[carried + k], std::nullopt};
    DYNVM_ASSIGN_OR_RETURN(OnnxValue slice, ctx.Call("expand_dims", {NodeContext::Field(step_value, carried_first + carried + k)},
                                                     {{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue grown, ctx.Call("concatenate", {acc, slice}, {{"axis", int64_t{0}}}));
    next.push_back(grown.expr);
  }
  const Type result = Type::Tuple(loop.result_types);
  const Expr self = Expr::Var("loop");  // typed by inference from its function
  std::vector<Expr> done(loop.params.begin() + loop.counters, loop.params.end());
  const Expr fn = Expr::Function(
      loop.params,
      Expr::If(go.expr, Expr::Let(step, body.expr, Expr::Call(self, std::move(next))), Expr::Tuple(std::move(done))),
      result);
  for (const OnnxValue& v : initial) args.push_back(v.expr);
  for (const OnnxValue& v : loop.scan_initial) args.push_back(v.expr);
  // Bound to a variable once, so that every output reads the one loop (a Field of the
  // expression itself would repeat the recursive binding in each output).
  const OnnxValue all =
      ctx.Narrow(OnnxValue{Expr::Let(self, fn, Expr::Call(self, std::move(args))), result, std::nullopt}, result);
  Values out;
  for (int k = 0; k < carried + scans; ++k) out.push_back(NodeContext::Field(all, k));
  return out;
}

// Loop: a let-bound recursive function of (i, cond, carried values..., scan outputs so
// far...), tail-calling itself while i < M and cond, the body subgraph inline; scan
// outputs grow by one slice per iteration (their element shape must be constant).
absl::StatusOr<Values> ConvertLoop(NodeContext& ctx) {
  const std::optional<OnnxValue> max_trip = ctx.OptionalInput(0);
  const std::optional<OnnxValue> cond_in = ctx.OptionalInput(1);
  const int carried = ctx.num_inputs() - 2;
  const Type i64 = Type::Scalar(DType::kI64), boolean = Type::Scalar(DType::kBool);
  const Expr i = Expr::Var("loop_i", i64), cond = Expr::Var("loop_cond", boolean);
  std::vector<OnnxValue> initial;
  for (int k = 0; k < carried; ++k) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(2 + k));
    initial.push_back(std::move(v));
  }
  // The iteration number and condition, at the rank the body declares for them.
  std::vector<OnnxValue> counters;
  for (int k = 0; k < 2; ++k) {
    const OnnxValue scalar{k == 0 ? i : cond, k == 0 ? i64 : boolean, std::nullopt};
    const std::optional<int> rank = ctx.SubgraphInputRank("body", k);
    if (rank && *rank > 1) return ctx.Unimplemented("an iteration number or condition of rank above 1");
    DYNVM_ASSIGN_OR_RETURN(OnnxValue in, ToRank(ctx, scalar, rank.value_or(0)));
    counters.push_back(std::move(in));
  }
  DYNVM_ASSIGN_OR_RETURN(CarriedBody carried_body, ImportCarriedBody(ctx, initial, "loop_v", counters, {}, 1));
  const OnnxValue& body = carried_body.body;
  std::vector<Expr> params = {i, cond};
  params.insert(params.end(), carried_body.vars.begin(), carried_body.vars.end());
  const int outputs = static_cast<int>(body.type.fields().size());
  if (outputs < 1 + carried) {
    return ctx.Invalid(absl::StrFormat("the body has %d outputs, expected at least %d", outputs, 1 + carried));
  }
  TailLoop loop{params, carried_body.types, {}, 2};
  DYNVM_RETURN_IF_ERROR(AddScanOutputs(ctx, body, 1 + carried, loop));

  // Another iteration while i < M and cond.
  OnnxValue go{cond, boolean, std::nullopt};
  if (max_trip) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue m, ToRank(ctx, *max_trip, 0));
    DYNVM_ASSIGN_OR_RETURN(OnnxValue below, ctx.Call("less", {OnnxValue{i, i64, std::nullopt}, m}));
    DYNVM_ASSIGN_OR_RETURN(go, ctx.Call("logical_and", {below, go}));
  }
  const Expr step = Expr::Var("loop_step");
  DYNVM_ASSIGN_OR_RETURN(OnnxValue one, NodeContext::ConstantScalarOf(DType::kI64, 1.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue i_next, ctx.Call("add", {OnnxValue{i, i64, std::nullopt}, one}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue cond_next, ToRank(ctx, NodeContext::Field({step, body.type, std::nullopt}, 0), 0));
  // The first call: i = 0, cond as given (true when absent).
  std::vector<Expr> args = {NodeContext::ConstantI64({0}, /*scalar=*/true).expr};
  if (cond_in) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue c, ToRank(ctx, *cond_in, 0));
    args.push_back(c.expr);
  } else {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue t, NodeContext::ConstantScalarOf(DType::kBool, 1.0));
    args.push_back(t.expr);
  }
  return FinishTailLoop(ctx, loop, body, step, go, {i_next.expr, cond_next.expr}, std::move(args), initial,
                        /*carried_first=*/1);
}

// Scan (opset 9+): like Loop, a let-bound function tail-calling itself over i < T, T the
// scan inputs' extent along axis 0; the body reads slice i of each scan input and the
// state, and each scan output grows by its slice. Axes and directions other than 0 and
// forward are not supported.
// The opset-9 scan of `initial` states over `xs` (each scanned along axis 0): the body on
// the states and slice i of each scan input, for every i.
absl::StatusOr<Values> ScanOver(const NodeContext& ctx, const std::vector<OnnxValue>& initial,
                                const std::vector<OnnxValue>& xs) {
  const int states = static_cast<int>(initial.size());
  const Type i64 = Type::Scalar(DType::kI64);
  const Expr i = Expr::Var("scan_i", i64);
  const OnnxValue iv{i, i64, std::nullopt};
  std::vector<OnnxValue> slices;
  for (const OnnxValue& x : xs) {
    if (x.type.rank() < 1) return ctx.Invalid("a scan input of rank 0");
    DYNVM_ASSIGN_OR_RETURN(OnnxValue slice, ctx.Call("take", {x, iv}, {{"axis", int64_t{0}}}));
    slices.push_back(std::move(slice));
  }
  DYNVM_ASSIGN_OR_RETURN(CarriedBody carried_body, ImportCarriedBody(ctx, initial, "scan_s", {}, slices, 0));
  const OnnxValue& body = carried_body.body;
  std::vector<Expr> params = {i};
  params.insert(params.end(), carried_body.vars.begin(), carried_body.vars.end());
  if (static_cast<int>(body.type.fields().size()) < states) {
    return ctx.Invalid("the body has fewer outputs than states");
  }
  TailLoop loop{params, carried_body.types, {}, 1};
  DYNVM_RETURN_IF_ERROR(AddScanOutputs(ctx, body, states, loop));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue extents, ctx.Call("shape_of", {xs[0]}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue steps, ctx.Call("take", {extents, NodeContext::ConstantI64({0}, true)},
                                                   {{"axis", int64_t{0}}}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue go, ctx.Call("less", {iv, steps}));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue one, NodeContext::ConstantScalarOf(DType::kI64, 1.0));
  DYNVM_ASSIGN_OR_RETURN(OnnxValue i_next, ctx.Call("add", {iv, one}));
  return FinishTailLoop(ctx, loop, body, Expr::Var("scan_step"), go, {i_next.expr},
                        {NodeContext::ConstantI64({0}, /*scalar=*/true).expr}, initial, /*carried_first=*/0);
}

// Scan of opset 8: every input has a leading batch axis (states [B, ...], scan inputs
// [B, sequence, ...]) and the scan runs on each batch element alone; here the opset-9
// scan of each element, B known when compiling, its results stacked along a new batch
// axis. sequence_lens (input 0) must be absent: every element scans the whole sequence.
absl::StatusOr<Values> ConvertScan8(NodeContext& ctx, int64_t scan_inputs) {
  if (ctx.OptionalInput(0)) return ctx.Unimplemented("Scan of opset 8 with sequence_lens");
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> directions, ctx.Ints("directions", std::vector<int64_t>{}));
  if (std::any_of(directions.begin(), directions.end(), [](int64_t v) { return v != 0; })) {
    return ctx.Unimplemented("directions other than 0");
  }
  const int states = ctx.num_inputs() - 1 - static_cast<int>(scan_inputs);
  if (states < 0 || scan_inputs < 1) return ctx.Invalid("num_scan_inputs does not fit the inputs");
  std::vector<OnnxValue> all;
  for (int k = 1; k < ctx.num_inputs(); ++k) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(k));
    if (v.type.rank() < 1) return ctx.Invalid("an input without its batch axis");
    all.push_back(std::move(v));
  }
  const Dim& batch = all[0].type.shape()[0];
  if (!batch.is_const()) return ctx.Unimplemented("Scan of opset 8 over a batch known only at run time");
  std::vector<std::vector<OnnxValue>> per_output;
  for (int64_t b = 0; b < batch.const_value(); ++b) {
    std::vector<OnnxValue> initial, xs;
    for (int k = 0; k < static_cast<int>(all.size()); ++k) {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Call("take", {all[k], NodeContext::ConstantI64({b}, true)},
                                                   {{"axis", int64_t{0}}, {"mode", std::string("fast")}}));
      (k < states ? initial : xs).push_back(std::move(v));
    }
    DYNVM_ASSIGN_OR_RETURN(Values outs, ScanOver(ctx, initial, xs));
    per_output.resize(outs.size());
    for (size_t j = 0; j < outs.size(); ++j) {
      DYNVM_ASSIGN_OR_RETURN(OnnxValue row, ctx.Call("expand_dims", {outs[j]}, {{"axis", int64_t{0}}, {"num_newaxis", int64_t{1}}}));
      per_output[j].push_back(std::move(row));
    }
  }
  Values out;
  for (std::vector<OnnxValue>& rows : per_output) {
    if (rows.size() == 1) {
      out.push_back(std::move(rows[0]));
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(OnnxValue stacked, ctx.Call("concatenate", std::move(rows), {{"axis", int64_t{0}}}));
    out.push_back(std::move(stacked));
  }
  return out;
}

absl::StatusOr<Values> ConvertScan(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const int64_t scan_inputs, ctx.Int("num_scan_inputs"));
  if (ctx.opset() < 9) return ConvertScan8(ctx, scan_inputs);
  for (const std::string_view attr : {"scan_input_axes", "scan_input_directions", "scan_output_axes",
                                      "scan_output_directions"}) {
    DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> values, ctx.Ints(attr, std::vector<int64_t>{}));
    if (std::any_of(values.begin(), values.end(), [](int64_t v) { return v != 0; })) {
      return ctx.Unimplemented(absl::StrFormat("%s other than 0", attr));
    }
  }
  const int states = ctx.num_inputs() - static_cast<int>(scan_inputs);
  if (states < 0 || scan_inputs < 1) return ctx.Invalid("num_scan_inputs does not fit the inputs");
  std::vector<OnnxValue> initial, xs;
  for (int k = 0; k < ctx.num_inputs(); ++k) {
    DYNVM_ASSIGN_OR_RETURN(OnnxValue v, ctx.Input(k));
    (k < states ? initial : xs).push_back(std::move(v));
  }
  return ScanOver(ctx, initial, xs);
}

}  // namespace

void AddControlFlowConverters(ConverterTable& table) {
  table.insert({
      {"If", {ConvertIf, {"then_branch", "else_branch"}}},
      {"Loop", {ConvertLoop, {"body"}}},
      {"Scan", {ConvertScan, {"body", "num_scan_inputs", "scan_input_axes", "scan_input_directions",
                              "scan_output_axes", "scan_output_directions", "directions"}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
