// Batch plans (tools/serve/batch_plan.h): which inputs batch along axis 0, padding of
// variable-length axes, and cutting outputs back per request.
#include "tools/serve/batch_plan.h"

#include <algorithm>
#include <charconv>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "tools/run/input_parser.h"
#include "tools/serve/served_model.h"
#include "tools/serve/tensor_box.h"

namespace dynvm::tools::serve {
namespace {

// Why RULE batch fails for `function`, or the batch symbol's name when it holds.
absl::StatusOr<std::string> BatchSymbol(const vm::Function& function,
                                        absl::Span<const vm::ValueSpec* const> outputs) {
  if (function.params.empty()) return absl::FailedPreconditionError("the function takes no inputs");
  const vm::ValueSpec& first = function.params[0];
  if (first.kind != vm::ValueSpec::Kind::kTensor || first.dims.empty() || first.dims[0].symbol.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "axis 0 of input '%s' is not a named symbol", first.name));
  }
  const std::string& batch = first.dims[0].symbol;
  auto check = [&](const vm::ValueSpec& spec, std::string_view what) -> absl::Status {
    if (spec.kind != vm::ValueSpec::Kind::kTensor || spec.dims.empty() || spec.dims[0].symbol != batch) {
      return absl::FailedPreconditionError(absl::StrFormat("axis 0 of %s '%s' is not '%s'", what,
                                                           spec.name, batch));
    }
    for (size_t d = 1; d < spec.dims.size(); ++d) {
      if (spec.dims[d].symbol == batch) {
        return absl::FailedPreconditionError(
            absl::StrFormat("'%s' is also axis %d of %s '%s'", batch, d, what, spec.name));
      }
    }
    return absl::OkStatus();
  };
  for (const vm::ValueSpec& param : function.params) DYNVM_RETURN_IF_ERROR(check(param, "input"));
  for (const vm::ValueSpec* output : outputs) DYNVM_RETURN_IF_ERROR(check(*output, "output"));
  return batch;
}

const NDArrayObj& TensorOf(const Value& value) { return *value.As<NDArrayObj>(); }

}  // namespace

absl::StatusOr<PadRule> ParsePadRule(std::string_view text) {
  const size_t value_colon = text.rfind(':');
  const size_t axis_colon =
      value_colon == std::string_view::npos || value_colon == 0 ? std::string_view::npos
                                                                : text.rfind(':', value_colon - 1);
  PadRule rule;
  if (axis_colon == std::string_view::npos || axis_colon == 0) {
    return absl::InvalidArgumentError(absl::StrFormat("--pad must be INPUT:AXIS:VALUE, got '%s'", text));
  }
  rule.input = text.substr(0, axis_colon);
  const std::string_view axis = text.substr(axis_colon + 1, value_colon - axis_colon - 1);
  const auto [ptr, ec] = std::from_chars(axis.data(), axis.data() + axis.size(), rule.axis);
  if (ec != std::errc() || ptr != axis.data() + axis.size() || rule.axis < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("--pad '%s': bad axis '%s'", text, axis));
  }
  rule.value = text.substr(value_colon + 1);
  if (rule.value.empty()) return absl::InvalidArgumentError(absl::StrFormat("--pad '%s': no value", text));
  return rule;
}

absl::StatusOr<BatchPlan> BatchPlan::Create(const vm::Function& function,
                                            absl::Span<const PadRule> pads) {
  BatchPlan plan;
  plan.function_ = &function;
  const std::vector<const vm::ValueSpec*> outputs = function.outputs();
  absl::StatusOr<std::string> batch = BatchSymbol(function, outputs);
  if (!batch.ok()) {
    if (!pads.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--pad needs batching, which is off: ",
                                                      batch.status().message()));
    }
    plan.description_ = absl::StrCat("off: ", batch.status().message());
    return plan;
  }
  const size_t num_params = function.params.size();
  plan.pad_elements_.resize(num_params);
  plan.padded_axes_.resize(num_params);
  for (size_t i = 0; i < num_params; ++i) plan.padded_axes_[i].assign(function.params[i].dims.size(), -1);
  // [RULE pad]: each rule names a symbol axis of a parameter and gives its padding.
  for (const PadRule& rule : pads) {
    const auto param = std::find_if(function.params.begin(), function.params.end(),
                                    [&](const vm::ValueSpec& p) { return p.name == rule.input; });
    if (param == function.params.end()) {
      return absl::InvalidArgumentError(absl::StrFormat("--pad: no input '%s'", rule.input));
    }
    const size_t i = param - function.params.begin();
    if (rule.axis == 0 || static_cast<size_t>(rule.axis) >= param->dims.size() ||
        param->dims[rule.axis].symbol.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--pad: axis %d of input '%s' (%s) is not a named symbol other than the batch dim",
          rule.axis, rule.input, vm::ValueSpecToString(*param)));
    }
    absl::StatusOr<NDArray> element = ParseInlineTensor(
        absl::StrCat(std::string(DTypeName(param->dtype)), "=", rule.value), MakeNaiveAllocator());
    if (!element.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat("--pad value '%s' for input '%s': %s",
                                                        rule.value, rule.input, element.status().message()));
    }
    if (plan.pad_elements_[i].get() != nullptr && !SameFirstElement(*plan.pad_elements_[i], **element)) {
      return absl::InvalidArgumentError(absl::StrFormat("--pad: two values for input '%s'", rule.input));
    }
    plan.pad_elements_[i] = *std::move(element);
    const std::string& symbol = param->dims[rule.axis].symbol;
    auto known = std::find(plan.padded_.begin(), plan.padded_.end(), symbol);
    if (known == plan.padded_.end()) {
      plan.padded_.push_back(symbol);
      plan.padded_source_.push_back({i, static_cast<size_t>(rule.axis)});
      known = plan.padded_.end() - 1;
    }
    plan.padded_axes_[i][rule.axis] = static_cast<int>(known - plan.padded_.begin());
  }
  // Every parameter axis of a padded symbol must have its own rule.
  for (size_t i = 0; i < num_params; ++i) {
    const vm::ValueSpec& param = function.params[i];
    for (size_t d = 0; d < param.dims.size(); ++d) {
      const auto k = std::find(plan.padded_.begin(), plan.padded_.end(), param.dims[d].symbol);
      if (k != plan.padded_.end() && plan.padded_axes_[i][d] < 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--pad: axis %d of input '%s' is '%s' too and needs --pad=%s:%d:VALUE", d, param.name,
            *k, param.name, d));
      }
    }
  }
  for (const vm::ValueSpec* output : outputs) {
    std::vector<int>& axes = plan.output_padded_axes_.emplace_back(output->dims.size(), -1);
    for (size_t d = 1; d < output->dims.size(); ++d) {
      const vm::DimSpec& dim = output->dims[d];
      if (!plan.padded_.empty() && dim.extent < 0 && dim.symbol.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--pad: axis %d of output '%s' is '?' and cannot be cut back after padding", d, output->name));
      }
      const auto k = std::find(plan.padded_.begin(), plan.padded_.end(), dim.symbol);
      if (k != plan.padded_.end()) axes[d] = static_cast<int>(k - plan.padded_.begin());
    }
  }
  plan.enabled_ = true;
  plan.description_ = absl::StrCat("on: along '", *batch, "'");
  if (!plan.padded_.empty()) absl::StrAppend(&plan.description_, ", padding ", absl::StrJoin(plan.padded_, ", "));
  return plan;
}

int64_t BatchPlan::Rows(absl::Span<const Value> args) const { return TensorOf(args[0]).shape()[0]; }

int64_t BatchPlan::PaddedExtent(absl::Span<const Value> args, size_t k) const {
  const auto [param, axis] = padded_source_[k];
  return TensorOf(args[param]).shape()[axis];
}

bool BatchPlan::Compatible(absl::Span<const Value> a, absl::Span<const Value> b) const {
  if (!enabled_) return false;
  for (size_t i = 0; i < a.size(); ++i) {  // [RULE empty]
    if (TensorOf(a[i]).num_elements() == 0 || TensorOf(b[i]).num_elements() == 0) return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const Shape& x = TensorOf(a[i]).shape();
    const Shape& y = TensorOf(b[i]).shape();
    for (size_t d = 1; d < x.size(); ++d) {
      if (padded_axes_[i][d] < 0 && x[d] != y[d]) return false;
    }
  }
  return true;
}

Shape BatchPlan::MergedShape(absl::Span<const std::vector<Value>* const> requests, size_t i) const {
  Shape shape = TensorOf((*requests[0])[i]).shape();
  shape[0] = 0;
  for (const std::vector<Value>* request : requests) {
    const Shape& own = TensorOf((*request)[i]).shape();
    // Rows of checked arguments are far below INT64_MAX each; saturate anyway.
    if (__builtin_add_overflow(shape[0], own[0], &shape[0])) shape[0] = INT64_MAX;
    for (size_t d = 1; d < shape.size(); ++d) {
      if (padded_axes_[i][d] >= 0) shape[d] = std::max(shape[d], own[d]);
    }
  }
  return shape;
}

bool BatchPlan::CountMerged(absl::Span<const std::vector<Value>* const> requests, bool bytes,
                            int64_t& merged, int64_t& own) const {
  merged = 0;
  own = 0;
  for (size_t i = 0; i < function_->params.size(); ++i) {
    const int64_t unit = bytes ? static_cast<int64_t>(DTypeSize(TensorOf((*requests[0])[i]).dtype())) : 1;
    absl::StatusOr<int64_t> count = ShapeNumElements(MergedShape(requests, i));
    int64_t size = 0;
    if (!count.ok() || __builtin_mul_overflow(*count, unit, &size) ||
        __builtin_add_overflow(merged, size, &merged)) {
      return false;
    }
    for (const std::vector<Value>* request : requests) {
      if (__builtin_mul_overflow(TensorOf((*request)[i]).num_elements(), unit, &size) ||
          __builtin_add_overflow(own, size, &own)) {
        return false;
      }
    }
  }
  return true;
}

bool BatchPlan::WithinPaddingBudget(absl::Span<const std::vector<Value>* const> batch,
                                    absl::Span<const Value> candidate) const {
  const std::vector<Value> joining(candidate.begin(), candidate.end());
  std::vector<const std::vector<Value>*> members(batch.begin(), batch.end());
  members.push_back(&joining);
  int64_t merged = 0, own = 0;
  return CountMerged(members, /*bytes=*/false, merged, own) && merged - own <= own;
}

absl::StatusOr<std::vector<Value>> BatchPlan::Merge(
    absl::Span<const std::vector<Value>* const> requests,
    const std::shared_ptr<Allocator>& allocator) const {
  int64_t merged_bytes = 0, own_bytes = 0;
  if (!CountMerged(requests, /*bytes=*/true, merged_bytes, own_bytes)) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("the merged inputs of a batch of %d requests overflow a byte count", requests.size()));
  }
  if (merged_bytes - own_bytes > own_bytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "a batch of %d requests would pad its inputs to %d bytes, over twice their own %d bytes",
        requests.size(), merged_bytes, own_bytes));
  }
  std::vector<Value> merged;
  for (size_t i = 0; i < function_->params.size(); ++i) {
    const NDArrayObj& first = TensorOf((*requests[0])[i]);
    const Shape shape = MergedShape(requests, i);
    bool padding = false;
    for (const std::vector<Value>* request : requests) {
      const Shape& own = TensorOf((*request)[i]).shape();
      for (size_t d = 1; d < shape.size(); ++d) padding |= padded_axes_[i][d] >= 0 && own[d] != shape[d];
    }
    DYNVM_ASSIGN_OR_RETURN(NDArray tensor, NDArrayObj::Empty(shape, first.dtype(), allocator));
    if (padding) FillTensor(*tensor, *pad_elements_[i]);
    Shape start(shape.size(), 0);
    for (const std::vector<Value>* request : requests) {
      const NDArrayObj& own = TensorOf((*request)[i]);
      CopyBox(own, Shape(shape.size(), 0), *tensor, start, own.shape());
      start[0] += own.shape()[0];
    }
    merged.emplace_back(std::move(tensor));
  }
  return merged;
}

absl::StatusOr<std::vector<std::vector<Value>>> BatchPlan::Split(
    absl::Span<const Value> outputs, absl::Span<const std::vector<Value>* const> requests,
    const std::shared_ptr<Allocator>& allocator) const {
  int64_t rows = 0;
  for (const std::vector<Value>* request : requests) rows += Rows(*request);
  if (outputs.size() != output_padded_axes_.size()) {
    return absl::InvalidArgumentError(absl::StrFormat("the batch returned %d outputs, the signature has %d",
                                                      outputs.size(), output_padded_axes_.size()));
  }
  std::vector<std::vector<Value>> parts(requests.size());
  for (size_t o = 0; o < outputs.size(); ++o) {
    const NDArrayObj* batched = outputs[o].As<NDArrayObj>();
    if (batched == nullptr || batched->ndim() != static_cast<int>(output_padded_axes_[o].size()) ||
        batched->shape()[0] != rows) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "output %d of the batch is not a tensor of %d rows", o, rows));
    }
    Shape start(batched->ndim(), 0);
    for (size_t r = 0; r < requests.size(); ++r) {
      Shape extent = batched->shape();
      extent[0] = Rows(*requests[r]);
      for (size_t d = 1; d < extent.size(); ++d) {
        const int k = output_padded_axes_[o][d];
        if (k < 0) continue;
        extent[d] = PaddedExtent(*requests[r], k);
        if (extent[d] > batched->shape()[d]) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "axis %d of output %d is %d, shorter than '%s' = %d of a request", d, o,
              batched->shape()[d], padded_[k], extent[d]));
        }
      }
      if (extent == batched->shape()) {  // the whole output: this request ran alone, unpadded
        parts[r].push_back(outputs[o]);
        continue;
      }
      DYNVM_ASSIGN_OR_RETURN(NDArray own, NDArrayObj::Empty(extent, batched->dtype(), allocator));
      CopyBox(*batched, start, *own, Shape(extent.size(), 0), extent);
      parts[r].emplace_back(std::move(own));
      start[0] += extent[0];
    }
  }
  return parts;
}

}  // namespace dynvm::tools::serve
