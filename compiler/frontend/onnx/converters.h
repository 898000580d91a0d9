// How the ONNX importer turns one node into IR: the values it tracks, the context a
// converter builds calls with, and the table of converters by operator.
//
// A converter reads its node's inputs (values already imported) and attributes, and
// returns one value per node output. It builds operator calls through the context,
// which infers each call's type with the operator's relation (compiler/ops), so that
// later converters can read ranks and extents; a relation's error becomes the node's.
//
//   absl::StatusOr<std::vector<OnnxValue>> ConvertRelu(NodeContext& ctx) {
//     DYNVM_ASSIGN_OR_RETURN(OnnxValue x, ctx.Input(0));
//     return Values(ctx.Call("nn.relu", {x}));
//   }
#ifndef DYNVM_COMPILER_FRONTEND_ONNX_CONVERTERS_H_
#define DYNVM_COMPILER_FRONTEND_ONNX_CONVERTERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/dim.h"
#include "compiler/ir/expr.h"
#include "compiler/ir/type.h"
#include "kernels/kernel.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"

namespace dynvm::compiler::onnx_frontend {

// A value of the graph: its expression and type, and for a small integer tensor of
// rank 0 or 1 (a shape, an index, an axis list) its elements as Dims when the importer
// can tell them without running the model: constants, or symbolic extents that came
// from Shape.
struct OnnxValue {
  Expr expr;
  Type type;
  std::optional<std::vector<Dim>> elements;

  // The elements when every one is a constant.
  std::optional<std::vector<int64_t>> ConstantElements() const;
};

// The values of `dims` when every one is a constant.
std::optional<std::vector<int64_t>> ConstantDims(const std::vector<Dim>& dims);

// The values in scope where a node is converted, by ONNX name: the graph's own and,
// in a subgraph, its enclosing graphs'.
using Scope = absl::flat_hash_map<std::string, OnnxValue>;

// One node being converted.
class NodeContext {
 public:
  // Let-bound values: each (Var, value) the importer binds around the graph's result,
  // in order.
  using Bindings = std::vector<std::pair<Expr, Expr>>;

  NodeContext(const onnx::NodeProto& node, int64_t opset, std::vector<std::optional<OnnxValue>> inputs,
              const std::string& base_dir, Bindings& bindings, const Scope& scope)
      : node_(node), opset_(opset), inputs_(std::move(inputs)), base_dir_(base_dir),
        bindings_(bindings), scope_(scope) {}

  const onnx::NodeProto& node() const { return node_; }
  // The version of the default ONNX domain the model imports.
  int64_t opset() const { return opset_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return node_.output_size(); }
  // Whether output `i` is wanted (ONNX leaves an unused optional output's name empty).
  bool HasOutput(int i) const { return i < node_.output_size() && !node_.output(i).empty(); }

  // Input `i`; InvalidArgument when the node lacks it.
  absl::StatusOr<OnnxValue> Input(int i) const;
  // Input `i`, or nothing when it is absent or empty (an optional input).
  std::optional<OnnxValue> OptionalInput(int i) const;
  // The elements of input `i`, which must be known at import (a constant, or shape
  // arithmetic the importer folded); Unimplemented otherwise, naming the input.
  absl::StatusOr<std::vector<int64_t>> ConstantInts(int i) const;
  // A float input that must be a constant scalar (or one-element tensor).
  absl::StatusOr<double> ConstantScalar(int i) const;

  // Attributes; a missing one gives the fallback (or InvalidArgument without one).
  bool HasAttr(std::string_view name) const;
  absl::StatusOr<int64_t> Int(std::string_view name, std::optional<int64_t> fallback = {}) const;
  absl::StatusOr<double> Float(std::string_view name, std::optional<double> fallback = {}) const;
  absl::StatusOr<std::string> String(std::string_view name,
                                     std::optional<std::string> fallback = {}) const;
  absl::StatusOr<std::vector<int64_t>> Ints(std::string_view name,
                                            std::optional<std::vector<int64_t>> fallback = {}) const;
  absl::StatusOr<std::vector<double>> Floats(std::string_view name,
                                             std::optional<std::vector<double>> fallback = {}) const;
  absl::StatusOr<std::vector<std::string>> Strings(std::string_view name,
                                                   std::optional<std::vector<std::string>> fallback = {}) const;
  absl::StatusOr<NDArray> Tensor(std::string_view name) const;
  // A TYPE_PROTO attribute as an IR type (TypeFromProto).
  absl::StatusOr<Type> TypeAttr(std::string_view name) const;
  // The graph attribute `name` (If's branches, Loop's body) imported in this node's
  // scope, its inputs bound to `inputs` in order: one value, the tuple of the subgraph's
  // outputs (wrapped in the subgraph's own bindings).
  absl::StatusOr<OnnxValue> Subgraph(std::string_view name, const std::vector<OnnxValue>& inputs = {}) const;
  // The declared rank of input `i` of the graph attribute `name`, if it declares one.
  std::optional<int> SubgraphInputRank(std::string_view name, int i) const;
  // The declared shape of output `i` of the graph attribute `name`, if it declares
  // every extent as a number.
  std::optional<std::vector<int64_t>> SubgraphOutputShape(std::string_view name, int i) const;

  // A call of the operator `op` and its type; the relation's error names this node.
  // Where the operator computes no half-precision floats, f16 (or bf16) arguments are
  // widened to f32 and a f32 result stored back in their dtype: computed in f32, stored
  // in f16, as ONNX Runtime's CPU kernels do.
  absl::StatusOr<OnnxValue> Call(std::string_view op, std::vector<OnnxValue> args,
                                 kernels::Attrs attrs = {}) const;
  // `v` with the more precise type `type`, which the converter proves from ONNX's
  // semantics where the operator's relation cannot (an extent it says is `?`): `v` is
  // bound to a Var annotated with `type`, which type inference takes as the value's.
  OnnxValue Narrow(const OnnxValue& v, Type type) const;
  // Field `index` of a tuple-typed value.
  static OnnxValue Field(const OnnxValue& tuple, int index);
  // A constant value (with its elements, when small and integer).
  static OnnxValue Constant(NDArray value);
  // A constant i64 tensor of rank 1, or of rank 0 when `scalar`.
  static OnnxValue ConstantI64(const std::vector<int64_t>& values, bool scalar = false);
  // A constant scalar of `dtype` holding `value` (converted).
  static absl::StatusOr<OnnxValue> ConstantScalarOf(DType dtype, double value);

  // Errors about this node: "node 'name' (Op, opset N): message".
  absl::Status Unimplemented(std::string_view message) const;
  absl::Status Invalid(std::string_view message) const;
  // The node as the source of the calls Call makes (Expr::Call's `source`), which
  // run-time errors name: "ONNX node 'name' (Op)", or for a node without a name
  // "ONNX node (Op) making 'its first output'".
  std::string Source() const;

 private:
  std::string Where() const;
  // Call's widening of half-precision arguments (the types and expressions are `args`'s,
  // moved out); nothing when there are none or the widened call fails too.
  std::optional<OnnxValue> CallWidened(std::string_view op, const std::vector<OnnxValue>& args,
                                       const std::vector<Type>& types, const std::vector<Expr>& exprs,
                                       const kernels::Attrs& attrs) const;

  const onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<std::optional<OnnxValue>> inputs_;
  const std::string& base_dir_;
  Bindings& bindings_;
  const Scope& scope_;
};

// Imports a subgraph with the values of `scope` visible and its inputs bound to
// `inputs` (importer.cc): its initializers and nodes, then the tuple of its outputs,
// wrapped in the bindings its nodes made.
absl::StatusOr<OnnxValue> ImportSubgraph(const onnx::GraphProto& graph, Scope scope,
                                         const std::vector<OnnxValue>& inputs, int64_t opset,
                                         const std::string& base_dir);

// The IR type of ONNX type `type` (importer.cc): a tensor's, a sequence of tensors' (the
// List ADT of the sequence prelude, its elements of one dtype and rank with every extent
// `?`), or an optional's of either (the Optional ADT of the optional prelude). `what`
// names the value in errors ("graph input 'x'").
absl::StatusOr<Type> TypeFromProto(std::string_view what, const onnx::TypeProto& type);

using Converter = absl::StatusOr<std::vector<OnnxValue>> (*)(NodeContext& ctx);

// An operator's converter and the attributes it understands, in every opset: a node
// with any other attribute is unsupported (an older opset's attribute that changes the
// meaning, such as `axis` on opset-6 broadcasting, never passes silently).
struct ConverterDef {
  Converter convert;
  std::vector<std::string_view> attributes;
};

// ONNX's training operators' domain; their converters are found as
// "ai.onnx.preview.training:Op".
inline constexpr std::string_view kTrainingDomain = "ai.onnx.preview.training";

// The converter of `op_type` in the default domain (or, prefixed with kTrainingDomain
// and ':', in the training domain), or null.
const ConverterDef* FindConverter(std::string_view op_type);
// The operators with a converter, sorted.
std::vector<std::string_view> SupportedOperators();

}  // namespace dynvm::compiler::onnx_frontend

#endif  // DYNVM_COMPILER_FRONTEND_ONNX_CONVERTERS_H_
