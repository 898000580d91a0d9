// The operator registry (compiler/ops/op_registry.h): every family's operators
// registered once, and lookup by name.
#include "compiler/ops/op_registry.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler {

absl::Span<const OpDef> AllOps() {
  static const std::vector<OpDef>* const ops = [] {
    auto* all = new std::vector<OpDef>;
    for (absl::Span<const OpDef> family : {internal::ElementwiseOps(), internal::ReduceOps(),
                                           internal::NnOps(), internal::TransformOps(),
                                           internal::CreationOps(), internal::ConvOps(),
                                           internal::DetectionOps(), internal::TextOps(),
                                           internal::ReferenceOps()}) {
      all->insert(all->end(), family.begin(), family.end());
    }
    return all;
  }();
  return *ops;
}

const OpDef* FindOp(std::string_view name) {
  static const auto* const index = [] {
    auto* by_name = new absl::flat_hash_map<std::string, const OpDef*>;
    for (const OpDef& def : AllOps()) by_name->emplace(std::string(def.name), &def);
    return by_name;
  }();
  const auto it = index->find(absl::string_view(name.data(), name.size()));
  return it == index->end() ? nullptr : it->second;
}

absl::StatusOr<Type> InferCallType(const OpDef& def, absl::Span<const Type> args,
                                   const kernels::Attrs& attrs) {
  const int n = static_cast<int>(args.size());
  if (n < def.min_args || (def.max_args >= 0 && n > def.max_args)) {
    const std::string expected =
        def.max_args < 0 ? absl::StrFormat("at least %d", def.min_args)
        : def.min_args == def.max_args ? absl::StrFormat("%d", def.min_args)
                                       : absl::StrFormat("%d to %d", def.min_args, def.max_args);
    return absl::InvalidArgumentError(absl::StrFormat("%s takes %s arguments, got %d",
                                                      std::string(def.name), expected, n));
  }
  return def.relation(OpCall{def.name, args, attrs});
}

}  // namespace dynvm::compiler
