// Requests packed into an encoder's packed entry (tools/serve/token_plan.h).
#include "tools/serve/token_plan.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "objects/ndarray.h"

namespace dynvm::tools::serve {
namespace {

bool IsSymbol(const vm::DimSpec& d, const std::string& symbol) { return d.extent < 0 && d.symbol == symbol; }

// Whether every element of `t` is 1 (integer, bool or float).
bool AllOnes(const NDArrayObj& t) {
  const int64_t n = t.num_elements();
  switch (t.dtype()) {
    case DType::kI64: return std::all_of(t.data_as<int64_t>(), t.data_as<int64_t>() + n, [](int64_t v) { return v == 1; });
    case DType::kI32: return std::all_of(t.data_as<int32_t>(), t.data_as<int32_t>() + n, [](int32_t v) { return v == 1; });
    case DType::kBool:
    case DType::kU8: return std::all_of(t.data_as<uint8_t>(), t.data_as<uint8_t>() + n, [](uint8_t v) { return v == 1; });
    case DType::kF32: return std::all_of(t.data_as<float>(), t.data_as<float>() + n, [](float v) { return v == 1.0f; });
    default: return false;
  }
}

// Why `packed` does not fit `f` as RULE packed asks, or nullopt when it does; fills
// the plan's tables.
std::optional<std::string> Match(const vm::Function& f, const vm::Function& packed, std::vector<size_t>& sources,
                                 std::vector<size_t>& masks, std::vector<bool>& token_outputs) {
  if (f.params.empty()) return "the function has no parameters";
  const vm::DimSpec& batch = f.params[0].dims.empty() ? vm::DimSpec::Any() : f.params[0].dims[0];
  const std::string b = batch.symbol;
  std::string s;
  for (const vm::ValueSpec& p : f.params) {
    if (p.kind != vm::ValueSpec::Kind::kTensor || p.dims.size() != 2 || !IsSymbol(p.dims[0], b) ||
        p.dims[1].extent >= 0 || p.dims[1].symbol.empty() || (!s.empty() && p.dims[1].symbol != s) || b.empty()) {
      return absl::StrFormat("parameter '%s' is not [batch, seq] like the others", p.name);
    }
    s = p.dims[1].symbol;
  }
  if (packed.params.size() < 2) return absl::StrFormat("'%s' has fewer than two parameters", packed.name);
  std::vector<bool> used(f.params.size(), false);
  for (size_t i = 0; i + 1 < packed.params.size(); ++i) {
    const vm::ValueSpec& p = packed.params[i];
    const auto it = std::find_if(f.params.begin(), f.params.end(), [&](const vm::ValueSpec& q) { return q.name == p.name; });
    if (it == f.params.end() || it->dtype != p.dtype || p.kind != vm::ValueSpec::Kind::kTensor || p.dims.size() != 1) {
      return absl::StrFormat("parameter '%s' of '%s' is not a [tokens] form of one of '%s'", p.name, packed.name, f.name);
    }
    sources.push_back(it - f.params.begin());
    used[it - f.params.begin()] = true;
  }
  const vm::ValueSpec& offsets = packed.params.back();
  if (offsets.kind != vm::ValueSpec::Kind::kTensor || offsets.dtype != DType::kI64 || offsets.dims.size() != 1) {
    return absl::StrFormat("the last parameter of '%s' is not the offsets, i64[sequences + 1]", packed.name);
  }
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (!used[i]) masks.push_back(i);
  }
  const std::vector<const vm::ValueSpec*> outputs = f.outputs(), packed_outputs = packed.outputs();
  if (outputs.size() != packed_outputs.size()) {
    return absl::StrFormat("'%s' has %d outputs, '%s' %d", f.name, outputs.size(), packed.name, packed_outputs.size());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    const vm::ValueSpec& o = *outputs[k];
    const vm::ValueSpec& p = *packed_outputs[k];
    if (o.kind != vm::ValueSpec::Kind::kTensor || p.kind != vm::ValueSpec::Kind::kTensor || o.dtype != p.dtype ||
        o.dims.empty() || !IsSymbol(o.dims[0], b)) {
      return absl::StrFormat("output %d of '%s' is not a tensor over [batch, ...]", k, f.name);
    }
    const bool tokens = o.dims.size() >= 2 && IsSymbol(o.dims[1], s);
    if (p.dims.size() + (tokens ? 1 : 0) != o.dims.size()) {
      return absl::StrFormat("output %d of '%s' does not match output %d of '%s'", k, packed.name, k, f.name);
    }
    token_outputs.push_back(tokens);
  }
  return std::nullopt;
}

}  // namespace

TokenPlan TokenPlan::Create(const vm::Executable& executable, uint32_t function_index) {
  TokenPlan plan;
  const vm::Function& f = executable.function(function_index);
  const std::string packed_name = f.name + "_packed";
  const std::optional<uint32_t> packed = executable.FunctionIndex(packed_name);
  if (!packed) {
    plan.description_ = absl::StrFormat("off: the executable has no '%s'", packed_name);
    return plan;
  }
  if (std::optional<std::string> why = Match(f, executable.function(*packed), plan.packed_sources_, plan.masks_,
                                             plan.token_outputs_)) {
    plan.description_ = absl::StrFormat("off: %s", *why);
    return plan;
  }
  plan.enabled_ = true;
  plan.packed_index_ = *packed;
  std::vector<std::string> masks;
  for (size_t i : plan.masks_) masks.push_back(f.params[i].name);
  plan.description_ = absl::StrFormat("packed tokens through '%s'%s", packed_name,
                                      masks.empty() ? "" : absl::StrFormat(" for requests with only ones in %s",
                                                                           absl::StrJoin(masks, ", ")));
  return plan;
}

int64_t TokenPlan::Tokens(absl::Span<const Value> args) const {
  if (!enabled_) return 0;
  for (size_t i : masks_) {
    if (!AllOnes(*args[i].As<NDArrayObj>())) return 0;
  }
  return args[0].As<NDArrayObj>()->num_elements();
}

absl::StatusOr<std::vector<Value>> TokenPlan::Merge(absl::Span<const std::vector<Value>* const> requests,
                                                    const std::shared_ptr<Allocator>& allocator) const {
  int64_t tokens = 0, sequences = 0;
  for (const std::vector<Value>* r : requests) {
    const Shape& shape = (*r)[0].As<NDArrayObj>()->shape();
    tokens += shape[0] * shape[1];
    sequences += shape[0];
  }
  std::vector<Value> args;
  for (size_t source : packed_sources_) {
    const DType dtype = (*requests[0])[source].As<NDArrayObj>()->dtype();
    absl::StatusOr<NDArray> merged = NDArrayObj::Empty({tokens}, dtype, allocator);
    if (!merged.ok()) return merged.status();
    char* out = static_cast<char*>((*merged)->data());
    for (const std::vector<Value>* r : requests) {
      const NDArrayObj& t = *(*r)[source].As<NDArrayObj>();
      std::memcpy(out, t.data(), t.nbytes());
      out += t.nbytes();
    }
    args.emplace_back(*std::move(merged));
  }
  absl::StatusOr<NDArray> offsets = NDArrayObj::Empty({sequences + 1}, DType::kI64, allocator);
  if (!offsets.ok()) return offsets.status();
  int64_t* o = (*offsets)->data_as<int64_t>();
  *o = 0;
  for (const std::vector<Value>* r : requests) {
    const Shape& shape = (*r)[0].As<NDArrayObj>()->shape();
    for (int64_t b = 0; b < shape[0]; ++b, ++o) o[1] = o[0] + shape[1];
  }
  args.emplace_back(*std::move(offsets));
  return args;
}

absl::StatusOr<std::vector<std::vector<Value>>> TokenPlan::Split(
    absl::Span<const Value> outputs, absl::Span<const std::vector<Value>* const> requests,
    const std::shared_ptr<Allocator>& allocator) const {
  if (outputs.size() != token_outputs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("the packed entry returned %d outputs, expected %d", outputs.size(), token_outputs_.size()));
  }
  std::vector<std::vector<Value>> parts(requests.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    const NDArrayObj* t = outputs[k].As<NDArrayObj>();
    if (t == nullptr || t->ndim() < 1) {
      return absl::InvalidArgumentError(absl::StrFormat("output %d of the packed entry is not a tensor", k));
    }
    Shape row_shape(t->shape().begin() + 1, t->shape().end());
    const int64_t row_bytes = t->shape()[0] == 0 ? 0 : static_cast<int64_t>(t->nbytes()) / t->shape()[0];
    int64_t row = 0;
    for (size_t r = 0; r < requests.size(); ++r) {
      const Shape& in = (*requests[r])[0].As<NDArrayObj>()->shape();  // [batch, seq]
      Shape shape = {in[0]};
      if (token_outputs_[k]) shape.push_back(in[1]);
      const int64_t rows = token_outputs_[k] ? in[0] * in[1] : in[0];
      if (row + rows > t->shape()[0]) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "output %d of the packed entry has %d rows, fewer than its requests' %d", k, t->shape()[0], row + rows));
      }
      shape.insert(shape.end(), row_shape.begin(), row_shape.end());
      absl::StatusOr<NDArray> part = NDArrayObj::Empty(shape, t->dtype(), allocator);
      if (!part.ok()) return part.status();
      std::memcpy((*part)->data(), static_cast<const char*>(t->data()) + row * row_bytes, rows * row_bytes);
      parts[r].emplace_back(*std::move(part));
      row += rows;
    }
  }
  return parts;
}

}  // namespace dynvm::tools::serve
