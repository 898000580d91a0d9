// The text of value specs, a function's outputs, and the source of an instruction.
#include "vm/executable_spec.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace dynvm::vm {

std::string ValueSpecToString(const ValueSpec& spec) {
  switch (spec.kind) {
    case ValueSpec::Kind::kAny: return "any";
    case ValueSpec::Kind::kInt: return "int";
    case ValueSpec::Kind::kFloat: return "float";
    case ValueSpec::Kind::kBool: return "bool";
    case ValueSpec::Kind::kTuple:
      return absl::StrFormat("tuple(%s)", absl::StrJoin(spec.fields, ", ", [](std::string* out, const ValueSpec& f) {
                               absl::StrAppend(out, ValueSpecToString(f));
                             }));
    case ValueSpec::Kind::kTensor: break;
  }
  auto dim = [](std::string* out, const DimSpec& d) {
    if (d.extent >= 0) {
      absl::StrAppend(out, d.extent);
    } else {
      absl::StrAppend(out, d.symbol.empty() ? "?" : d.symbol);
    }
  };
  return absl::StrFormat("tensor %s[%s]", DTypeName(spec.dtype),
                         absl::StrJoin(spec.dims, ", ", dim));
}

namespace {

void AppendLeafSpecs(const ValueSpec& spec, std::vector<const ValueSpec*>& out) {
  if (spec.kind != ValueSpec::Kind::kTuple) {
    out.push_back(&spec);
    return;
  }
  for (const ValueSpec& field : spec.fields) AppendLeafSpecs(field, out);
}

}  // namespace

std::vector<const ValueSpec*> Function::outputs() const {
  std::vector<const ValueSpec*> out;
  for (const ValueSpec& r : results) AppendLeafSpecs(r, out);
  return out;
}

const std::string* SourceAt(const ExecutableSpec& spec, const Function& function, uint32_t pc) {
  const auto it = std::lower_bound(function.source_map.begin(), function.source_map.end(), pc,
                                   [](const SourceEntry& e, uint32_t p) { return e.pc < p; });
  if (it == function.source_map.end() || it->pc != pc || it->source >= spec.sources.size()) return nullptr;
  return &spec.sources[it->source];
}

}  // namespace dynvm::vm
