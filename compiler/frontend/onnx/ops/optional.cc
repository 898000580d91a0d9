// Converters of ONNX's optional operators to the Optional ADT of the optional prelude
// (OptionalPrelude, added to a module whose graph uses optionals): Optional (of a
// value), OptionalHasElement and OptionalGetElement. An optional graph input or output
// is the same ADT (importer.h).
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/onnx/ops/common.h"
#include "compiler/frontend/relay_text/parser.h"

namespace dynvm::compiler::onnx_frontend::ops {
namespace {

// The type the optional `opt` holds, or an error if it is no optional.
absl::StatusOr<Type> HeldType(const NodeContext& ctx, const OnnxValue& opt) {
  if (opt.type.kind() != TypeKind::kAdt || opt.type.name() != "Optional" || opt.type.args().size() != 1) {
    return ctx.Invalid(absl::StrFormat("input is %s, expected an optional", opt.type.ToString()));
  }
  return opt.type.args()[0];
}

absl::StatusOr<Values> ConvertOptional(NodeContext& ctx) {
  std::optional<OnnxValue> x = ctx.OptionalInput(0);
  if (!x) {  // an empty optional of the type its attribute names
    DYNVM_ASSIGN_OR_RETURN(const Type held, ctx.TypeAttr("type"));
    const Expr none = Expr::Constructor("None", "Optional", kOptionalNoneTag, {});
    return Values{OnnxValue{none, OptionalOf(held), std::nullopt}};
  }
  const Expr some = Expr::Constructor("Some", "Optional", kOptionalSomeTag, {Type::Var("A")});
  return Values{OnnxValue{Expr::Call(some, {x->expr}), OptionalOf(x->type), std::nullopt}};
}

absl::StatusOr<Values> ConvertOptionalHasElement(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue opt, ctx.Input(0));
  DYNVM_RETURN_IF_ERROR(HeldType(ctx, opt).status());
  return Values{OnnxValue{Expr::Call(Expr::GlobalVar("opt_has"), {opt.expr}),
                          Type::Scalar(DType::kBool), std::nullopt}};
}

absl::StatusOr<Values> ConvertOptionalGetElement(NodeContext& ctx) {
  DYNVM_ASSIGN_OR_RETURN(const OnnxValue opt, ctx.Input(0));
  DYNVM_ASSIGN_OR_RETURN(const Type held, HeldType(ctx, opt));
  return Values{OnnxValue{Expr::Call(Expr::GlobalVar("opt_get"), {opt.expr}), held, std::nullopt}};
}

// The Optional ADT and its functions. Getting the element of an empty optional reaches
// the incomplete match, which stops the program with an error as ONNX requires.
constexpr char kPrelude[] = R"(#[version = "0.0.5"]
type Optional[A] {
  Some(A),
  None,
}

def @opt_has[A](%o: Optional[A]) -> bool {
  match (%o) {
    Some(_) => True,
    None => False,
  }
}

def @opt_get[A](%o: Optional[A]) -> A {
  match? (%o) {
    Some(%x) => %x,
  }
}
)";

}  // namespace

bool IsOptionalOperator(std::string_view op_type) { return op_type.starts_with("Optional"); }

absl::StatusOr<Module> OptionalPrelude() { return ParseModule(kPrelude, {}, "optional prelude"); }

Type OptionalOf(const Type& held) { return Type::Adt("Optional", {held}); }

void AddOptionalConverters(ConverterTable& table) {
  table.insert({
      {"Optional", {ConvertOptional, {"type"}}},
      {"OptionalHasElement", {ConvertOptionalHasElement, {}}},
      {"OptionalGetElement", {ConvertOptionalGetElement, {}}},
  });
}

}  // namespace dynvm::compiler::onnx_frontend::ops
