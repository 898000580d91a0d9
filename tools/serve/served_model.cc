// The served model (tools/serve/served_model.h): its metadata in the protocol's terms,
// and request inputs bound through the codec.
#include "tools/serve/served_model.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codec/argument_binder.h"
#include "nlohmann/json.hpp"

namespace dynvm::tools::serve {
namespace {

using nlohmann::json;

// {"name", "datatype", "shape"} of one input or output. Scalars are 0-d tensors of
// INT64, FP64 or BOOL; an output of any type has the datatype "BYTES" and shape [-1]
// (the protocol has nothing closer).
json TensorMetadata(const std::string& name, const vm::ValueSpec& spec) {
  std::string datatype = "BYTES";  // KServeDatatype returns a string: a view would dangle
  json shape = json::array();
  switch (spec.kind) {
    case vm::ValueSpec::Kind::kTensor:
      datatype = KServeDatatype(spec.dtype);
      for (const vm::DimSpec& dim : spec.dims) shape.push_back(dim.extent);
      break;
    case vm::ValueSpec::Kind::kInt: datatype = "INT64"; break;
    case vm::ValueSpec::Kind::kFloat: datatype = "FP64"; break;
    case vm::ValueSpec::Kind::kBool: datatype = "BOOL"; break;
    default: shape.push_back(-1); break;
  }
  return {{"name", name}, {"datatype", datatype}, {"shape", std::move(shape)}};
}

// The first name in `names` that occurs twice, if any.
std::optional<std::string> Duplicate(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  const auto it = std::adjacent_find(names.begin(), names.end());
  if (it == names.end()) return std::nullopt;
  return *it;
}

}  // namespace

absl::StatusOr<ServedModel> ServedModel::Create(std::string name,
                                                std::shared_ptr<const vm::Executable> executable,
                                                std::string_view function) {
  const std::optional<uint32_t> index = executable->FunctionIndex(function);
  if (!index) {
    std::vector<std::string> names;
    for (const vm::Function& f : executable->functions()) names.push_back(f.name);
    return absl::NotFoundError(absl::StrFormat("no function '%s' in the executable (it has %s)",
                                               function, absl::StrJoin(names, ", ")));
  }
  ServedModel model;
  model.name_ = std::move(name);
  model.executable_ = std::move(executable);
  model.function_index_ = *index;
  const vm::Function& f = model.function();
  for (size_t i = 0; i < f.params.size(); ++i) {
    const vm::ValueSpec& param = f.params[i];
    if (param.kind != vm::ValueSpec::Kind::kTensor) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "parameter %d ('%s') of '%s' is %s: vm_serve serves functions of tensors only", i,
          param.name, f.name, vm::ValueSpecToString(param)));
    }
    model.input_names_.push_back(param.name.empty() ? absl::StrFormat("input_%d", i) : param.name);
  }
  model.output_specs_ = f.outputs();
  for (size_t i = 0; i < model.output_specs_.size(); ++i) {
    // An ADT (an ONNX sequence or optional) would flatten into a varying number of
    // tensors and be answered under the wrong names.
    if (model.output_specs_[i]->kind == vm::ValueSpec::Kind::kAny) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "output %d ('%s') of '%s' is %s: vm_serve serves results of tensors, ints, floats "
          "and bools only",
          i, model.output_specs_[i]->name, f.name, vm::ValueSpecToString(*model.output_specs_[i])));
    }
    const std::string& spec_name = model.output_specs_[i]->name;
    model.output_names_.push_back(spec_name.empty() ? absl::StrFormat("output_%d", i) : spec_name);
  }
  for (const auto* names : {&model.input_names_, &model.output_names_}) {
    if (std::optional<std::string> twice = Duplicate(*names)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("two %s of '%s' are named '%s'",
                          names == &model.input_names_ ? "inputs" : "outputs", f.name, *twice));
    }
  }
  return model;
}

absl::StatusOr<std::vector<Value>> ServedModel::BindInputs(std::vector<InferInput> inputs) const {
  std::vector<codec::ArgumentSource> sources;
  sources.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    InferInput& input = inputs[k];
    sources.push_back({.name = input.name,
                       .label = absl::StrFormat("request input %d ('%s')", k, input.name),
                       .build = [&input](const vm::ValueSpec&) -> absl::StatusOr<Value> {
                         return Value(std::move(input.tensor));
                       }});
  }
  return codec::BindArguments(function(), sources,
                              {.param_names = input_names_});
}

absl::StatusOr<std::vector<size_t>> ServedModel::SelectOutputs(
    absl::Span<const RequestedOutput> requested) const {
  std::vector<size_t> indices;
  if (requested.empty()) {
    for (size_t i = 0; i < output_names_.size(); ++i) indices.push_back(i);
    return indices;
  }
  for (const RequestedOutput& output : requested) {
    const auto it = std::find(output_names_.begin(), output_names_.end(), output.name);
    if (it == output_names_.end()) {
      return absl::InvalidArgumentError(absl::StrFormat("unknown output '%s' (model '%s' has %s)",
                                                        output.name, name_, absl::StrJoin(output_names_, ", ")));
    }
    indices.push_back(it - output_names_.begin());
  }
  return indices;
}

std::string ServedModel::MetadataJson() const {
  json inputs = json::array(), outputs = json::array();
  for (size_t i = 0; i < input_names_.size(); ++i) {
    inputs.push_back(TensorMetadata(input_names_[i], function().params[i]));
  }
  for (size_t i = 0; i < output_names_.size(); ++i) {
    outputs.push_back(TensorMetadata(output_names_[i], *output_specs_[i]));
  }
  const json metadata = {{"name", name_},         {"versions", json::array({"1"})},
                         {"platform", "dynvm"},   {"inputs", std::move(inputs)},
                         {"outputs", std::move(outputs)}};
  return metadata.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace dynvm::tools::serve
