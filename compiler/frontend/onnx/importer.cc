// ModelProto -> Module: loading and checking the model, the graph's inputs,
// initializers and outputs, and the walk over its nodes (converters.h does each node).
#include "compiler/frontend/onnx/importer.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/converters.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "compiler/frontend/onnx/tensor_proto.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

// The checker's entry point that takes a context, so that external data is looked up
// in the model's directory: libonnx 1.12 defines and exports it (checker.cc) but its
// header declares only the overloads that check against the current directory.
namespace onnx::checker {
void check_model(const ModelProto& model, CheckerContext& ctx);
}  // namespace onnx::checker

namespace dynvm::compiler::onnx_frontend {
namespace {

// `status` with its message after "`prefix`: ".
absl::Status Prefixed(std::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(std::string(prefix), ": ", std::string(status.message())));
}

// Protobuf cannot parse a message of 2 GiB or more; larger weights go in external data.
constexpr uint64_t kMaxModelBytes = std::numeric_limits<int32_t>::max();

// A symbol for a `dim_param`: the name itself when it is an identifier (the text
// format's rule for symbols), else the name with every other character replaced by
// '_' (and a leading '_' before a digit). Equal names give equal symbols.
Dim SymbolFor(const std::string& param) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::string name = param.empty() || is_digit(param[0]) ? "_" : "";
  for (const char c : param) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
    name += ok ? c : '_';
  }
  return Dim::Symbol(name);
}

// The IR type of a tensor type; `what` names its value in errors ("graph input 'x'").
absl::StatusOr<Type> TensorType(std::string_view what, const onnx::TypeProto::Tensor& tensor) {
  absl::StatusOr<DType> dtype = DTypeFromOnnx(tensor.elem_type());
  if (!dtype.ok()) return Prefixed(std::string(what), dtype.status());
  if (!tensor.has_shape()) {
    return absl::UnimplementedError(absl::StrFormat("%s has no shape: its rank must be known", what));
  }
  std::vector<Dim> dims;
  for (const onnx::TensorShapeProto::Dimension& d : tensor.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return absl::InvalidArgumentError(absl::StrFormat("%s has a negative dimension %d", what, d.dim_value()));
      }
      dims.emplace_back(d.dim_value());
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dims.push_back(SymbolFor(d.dim_param()));
    } else {
      dims.push_back(Dim::Any());
    }
  }
  return Type::Tensor(*dtype, std::move(dims));
}

}  // namespace

absl::StatusOr<Type> TypeFromProto(std::string_view what, const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return TensorType(what, type.tensor_type());
  if (type.has_sequence_type() && type.sequence_type().elem_type().has_tensor_type()) {
    DYNVM_ASSIGN_OR_RETURN(const Type element, TensorType(what, type.sequence_type().elem_type().tensor_type()));
    return ops::SequenceOf(element);
  }
  if (type.has_optional_type() && !type.optional_type().elem_type().has_optional_type()) {
    DYNVM_ASSIGN_OR_RETURN(const Type held, TypeFromProto(what, type.optional_type().elem_type()));
    return ops::OptionalOf(held);
  }
  return absl::UnimplementedError(absl::StrFormat(
      "%s is not a tensor, a sequence of tensors or an optional of one (maps and nested "
      "containers are not supported)",
      what));
}

namespace {

// The version of the default domain the model imports.
absl::StatusOr<int64_t> DefaultOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") {
      if (id.version() < kMinOpset || id.version() > kMaxOpset) {
        return absl::UnimplementedError(absl::StrFormat(
            "the model imports opset %d of the default domain; supported: %d to %d",
            id.version(), kMinOpset, kMaxOpset));
      }
      return id.version();
    }
  }
  // Only operators of ONNX's training domain: its converters read no default opset.
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (id.domain() == kTrainingDomain) return kMaxOpset;
  }
  // Valid (the checker passed), but all its operators are of other domains.
  return absl::UnimplementedError(
      "the model imports no version of the default ONNX domain (only operators of other "
      "domains, which are not supported)");
}

// Checks an output's type against what ONNX's shape inference said of it, when it said
// something: a disagreement is a converter's bug, better reported here than as wrong
// numbers.
absl::Status CheckOutputType(const onnx::ValueInfoProto& info, const Type& type) {
  if (!info.type().has_tensor_type() || !type.is_tensor()) return absl::OkStatus();
  const onnx::TypeProto::Tensor& tensor = info.type().tensor_type();
  if (tensor.elem_type() != 0) {
    absl::StatusOr<DType> dtype = DTypeFromOnnx(tensor.elem_type());
    if (dtype.ok() && *dtype != type.dtype()) {
      return absl::InternalError(absl::StrFormat(
          "graph output '%s': ONNX infers %s, the importer built %s", info.name(),
          RelayDTypeName(*dtype), type.ToString()));
    }
  }
  if (tensor.has_shape() && tensor.shape().dim_size() != type.rank()) {
    return absl::InternalError(absl::StrFormat(
        "graph output '%s': ONNX infers rank %d, the importer built %s", info.name(),
        tensor.shape().dim_size(), type.ToString()));
  }
  return absl::OkStatus();
}

// Adds `graph`'s initializers and the values of its nodes to `values`, the node
// converters' bindings to `bindings`.
absl::Status ImportNodes(const onnx::GraphProto& graph, int64_t opset, const std::string& base_dir,
                         Scope& values, NodeContext::Bindings& bindings) {
  for (const onnx::TensorProto& init : graph.initializer()) {
    DYNVM_ASSIGN_OR_RETURN(NDArray value, TensorFromProto(init, base_dir));
    values.insert_or_assign(init.name(), NodeContext::Constant(std::move(value)));
  }
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string where = absl::StrFormat("node '%s' (%s, opset %d)", node.name(),
                                              node.op_type(), opset);
    const bool training = node.domain() == kTrainingDomain;
    if (!node.domain().empty() && node.domain() != "ai.onnx" && !training) {
      return absl::UnimplementedError(absl::StrFormat(
          "%s: operators of domain '%s' are not supported", where, node.domain()));
    }
    const ConverterDef* def =
        FindConverter(training ? std::string(kTrainingDomain) + ":" + node.op_type() : node.op_type());
    if (def == nullptr) {
      return absl::UnimplementedError(
          absl::StrFormat("%s: operator %s is not supported", where, node.op_type()));
    }
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (std::find(def->attributes.begin(), def->attributes.end(), a.name()) == def->attributes.end()) {
        return absl::UnimplementedError(
            absl::StrFormat("%s: attribute '%s' is not supported", where, a.name()));
      }
    }
    std::vector<std::optional<OnnxValue>> inputs;
    for (const std::string& name : node.input()) {
      if (name.empty()) {
        inputs.emplace_back();
        continue;
      }
      auto it = values.find(name);
      if (it == values.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s reads '%s', which no graph input, initializer or earlier node defines", where, name));
      }
      inputs.push_back(it->second);
    }
    NodeContext ctx(node, opset, std::move(inputs), base_dir, bindings, values);
    DYNVM_ASSIGN_OR_RETURN(std::vector<OnnxValue> outputs, def->convert(ctx));
    for (int i = 0; i < node.output_size(); ++i) {
      if (node.output(i).empty()) continue;
      if (i >= static_cast<int>(outputs.size())) {
        return ctx.Unimplemented(absl::StrFormat("output %d ('%s') is not supported", i, node.output(i)));
      }
      values.insert_or_assign(node.output(i), std::move(outputs[i]));
    }
  }
  return absl::OkStatus();
}

// `graph`'s outputs, checked against what ONNX's inference said of them.
absl::StatusOr<std::vector<OnnxValue>> Outputs(const onnx::GraphProto& graph, const Scope& values) {
  std::vector<OnnxValue> results;
  for (const onnx::ValueInfoProto& output : graph.output()) {
    auto it = values.find(output.name());
    if (it == values.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("graph output '%s' is not defined by any node or input", output.name()));
    }
    DYNVM_RETURN_IF_ERROR(CheckOutputType(output, it->second.type));
    results.push_back(it->second);
  }
  if (results.empty()) return absl::InvalidArgumentError("the graph has no outputs");
  return results;
}

// What a prelude of ADTs serves: the operators that call its functions and the ONNX
// types its ADT stands for.
struct Prelude {
  bool (*is_operator)(std::string_view op_type);
  bool (*is_type)(const onnx::TypeProto& type);  // at the outermost level
  absl::StatusOr<Module> (*module)();
};

// Whether `type`, or a type inside it, is one `prelude` stands for.
bool HasType(const Prelude& prelude, const onnx::TypeProto& type) {
  if (prelude.is_type(type)) return true;
  if (type.has_sequence_type()) return HasType(prelude, type.sequence_type().elem_type());
  if (type.has_optional_type()) return HasType(prelude, type.optional_type().elem_type());
  return false;
}

// Whether `graph`, or a subgraph of it, has a node or an input or output `prelude` serves.
bool Uses(const Prelude& prelude, const onnx::GraphProto& graph) {
  for (const auto* values : {&graph.input(), &graph.output()}) {
    for (const onnx::ValueInfoProto& v : *values) {
      if (HasType(prelude, v.type())) return true;
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (prelude.is_operator(node.op_type())) return true;
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.has_g() && Uses(prelude, a.g())) return true;
      for (const onnx::GraphProto& g : a.graphs()) {
        if (Uses(prelude, g)) return true;
      }
    }
  }
  return false;
}

const Prelude kPreludes[] = {
    {ops::IsSequenceOperator, [](const onnx::TypeProto& t) { return t.has_sequence_type(); },
     ops::SequencePrelude},
    {ops::IsOptionalOperator, [](const onnx::TypeProto& t) { return t.has_optional_type(); },
     ops::OptionalPrelude},
};

// `body` inside the lets of `bindings`, in order.
Expr WrapInBindings(const NodeContext::Bindings& bindings, Expr body) {
  for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) body = Expr::Let(it->first, it->second, body);
  return body;
}

absl::StatusOr<Module> ImportGraph(const onnx::ModelProto& model, int64_t opset,
                                   const std::string& base_dir) {
  const onnx::GraphProto& graph = model.graph();
  absl::flat_hash_set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  Scope values;
  std::vector<Expr> params;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.contains(input.name())) continue;  // a constant (ImportNodes adds it)
    DYNVM_ASSIGN_OR_RETURN(Type type, TypeFromProto(absl::StrFormat("graph input '%s'", input.name()), input.type()));
    Expr var = Expr::Var(input.name(), type);
    params.push_back(var);
    values.insert_or_assign(input.name(), OnnxValue{var, type, std::nullopt});
  }
  NodeContext::Bindings bindings;
  DYNVM_RETURN_IF_ERROR(ImportNodes(graph, opset, base_dir, values, bindings));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<OnnxValue> outputs, Outputs(graph, values));
  std::vector<Expr> results;
  for (const OnnxValue& v : outputs) results.push_back(v.expr);
  Expr body = results.size() == 1 ? results[0] : Expr::Tuple(std::move(results));
  Module module;
  for (const Prelude& p : kPreludes) {  // the ADTs and the functions the converters called
    if (!Uses(p, graph)) continue;
    DYNVM_ASSIGN_OR_RETURN(const Module prelude, p.module());
    for (const std::string& name : prelude.type_names()) {
      DYNVM_RETURN_IF_ERROR(module.AddType(*prelude.FindType(name)));
    }
    for (const std::string& name : prelude.function_names()) {
      DYNVM_ASSIGN_OR_RETURN(Expr fn, prelude.Function(name));
      DYNVM_RETURN_IF_ERROR(module.AddFunction(name, std::move(fn)));
    }
  }
  DYNVM_RETURN_IF_ERROR(module.AddFunction(
      "main", Expr::Function(std::move(params), WrapInBindings(bindings, std::move(body)))));
  std::vector<std::string> output_names;
  for (const onnx::ValueInfoProto& output : graph.output()) output_names.push_back(output.name());
  DYNVM_RETURN_IF_ERROR(module.SetResultNames("main", std::move(output_names)));
  return module;
}

}  // namespace

absl::StatusOr<OnnxValue> ImportSubgraph(const onnx::GraphProto& graph, Scope scope,
                                         const std::vector<OnnxValue>& inputs, int64_t opset,
                                         const std::string& base_dir) {
  if (graph.input_size() != static_cast<int>(inputs.size())) {
    return absl::InvalidArgumentError(absl::StrFormat("the subgraph has %d inputs, expected %d",
                                                      graph.input_size(), inputs.size()));
  }
  for (int i = 0; i < graph.input_size(); ++i) scope.insert_or_assign(graph.input(i).name(), inputs[i]);
  NodeContext::Bindings bindings;
  DYNVM_RETURN_IF_ERROR(ImportNodes(graph, opset, base_dir, scope, bindings));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<OnnxValue> outputs, Outputs(graph, scope));
  std::vector<Expr> fields;
  std::vector<Type> types;
  for (const OnnxValue& v : outputs) {
    fields.push_back(v.expr);
    types.push_back(v.type);
  }
  return OnnxValue{WrapInBindings(bindings, Expr::Tuple(std::move(fields))), Type::Tuple(std::move(types)),
                   std::nullopt};
}

absl::StatusOr<Module> ImportOnnxBytes(std::string_view bytes, const std::string& base_dir,
                                       std::string_view name) {
  if (bytes.size() > kMaxModelBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d bytes is above the 2 GiB a protobuf can hold; keep large weights in external data",
        name, bytes.size()));
  }
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not an ONNX model (the protobuf does not parse)", name));
  }
  // libonnx reports problems by throwing; nothing else in dynvm throws, so the
  // exceptions stop here.
  try {
    onnx::checker::CheckerContext context;
    context.set_model_dir(base_dir + "/");
    onnx::checker::check_model(model, context);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: invalid ONNX model: %s", name, e.what()));
  }
  absl::StatusOr<int64_t> opset = DefaultOpset(model);
  if (!opset.ok()) {
    return Prefixed(name, opset.status());
  }
  // Strict: a node whose shapes cannot agree stops here. Types are not checked against
  // the schemas (exporters of old opsets wrote int64 Constants that opset 1 did not
  // allow, and ONNX's own runners accept them); the operators' relations check them as
  // each node is converted.
  try {
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type_val=*/false,
                                                                   /*strict_mode_val=*/1));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: ONNX shape inference failed: %s", name, e.what()));
  }
  absl::StatusOr<Module> module = ImportGraph(model, *opset, base_dir);
  if (!module.ok()) {
    return Prefixed(name, module.status());
  }
  return module;
}

absl::StatusOr<Module> ImportOnnxFile(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot read '%s': %s", path, ec.message()));
  }
  if (size > kMaxModelBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %d bytes is above the 2 GiB a protobuf can hold; keep large weights in external data",
        path, size));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    return absl::InvalidArgumentError(absl::StrFormat("cannot read '%s'", path));
  }
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return ImportOnnxBytes(bytes, dir.empty() ? std::string(".") : dir.string(), path);
}

}  // namespace dynvm::compiler::onnx_frontend
