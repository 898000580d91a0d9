// Relations of Relay's reference operators, which the VM runs without kernels (code
// generation makes a one-field cell of each ref and reads and writes its field):
//   ref(v: T) -> ref(T)        ref_read(r: ref(T)) -> T        ref_write(r: ref(T), v: T) -> ()
// They are the only operators with effects (compiler/passes/effects.h).
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ops/internal/relations.h"

namespace dynvm::compiler::internal {
namespace {

absl::Status CheckNoAttrs(const OpCall& call) {
  if (call.attrs.empty()) return absl::OkStatus();
  return OpError(call, absl::StrFormat("takes no attributes, got '%s'", call.attrs.begin()->first));
}

absl::StatusOr<Type> RefRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckNoAttrs(call));
  return Type::Ref(call.args[0]);
}

// The reference argument's value type.
absl::StatusOr<Type> ValueOf(const OpCall& call) {
  const Type& r = call.args[0];
  if (r.kind() != TypeKind::kRef) return OpError(call, absl::StrFormat("expected a reference, got %s", r.ToString()));
  return r.fields()[0];
}

absl::StatusOr<Type> RefReadRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckNoAttrs(call));
  return ValueOf(call);
}

absl::StatusOr<Type> RefWriteRel(const OpCall& call) {
  DYNVM_RETURN_IF_ERROR(CheckNoAttrs(call));
  DYNVM_ASSIGN_OR_RETURN(const Type value, ValueOf(call));
  if (value != call.args[1]) {
    return OpError(call, absl::StrFormat("writes %s into %s", call.args[1].ToString(), call.args[0].ToString()));
  }
  return Type::Tuple({});
}

constexpr OpDef kOps[] = {
    {"ref", 1, 1, RefRel, /*bytecode=*/true, /*effects=*/true},
    {"ref_read", 1, 1, RefReadRel, /*bytecode=*/true, /*effects=*/true},
    {"ref_write", 2, 2, RefWriteRel, /*bytecode=*/true, /*effects=*/true},
};

}  // namespace

absl::Span<const OpDef> ReferenceOps() { return kOps; }

}  // namespace dynvm::compiler::internal
