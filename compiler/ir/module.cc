// Module (compiler/ir/module.h): adding and looking up global functions and
// data types.
#include "compiler/ir/module.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace dynvm::compiler {
namespace {

// Abseil 20220623's maps look keys up by absl::string_view, not std::string_view.
absl::string_view Key(std::string_view name) { return {name.data(), name.size()}; }

}  // namespace

Type TypeData::SelfType() const {
  std::vector<Type> args;
  args.reserve(type_params.size());
  for (const std::string& param : type_params) args.push_back(Type::Var(param));
  return Type::Adt(name, std::move(args));
}

absl::StatusOr<Module> Module::MapFunctions(
    const std::function<absl::StatusOr<Expr>(const Expr&)>& fn) const {
  Module out = *this;
  for (const std::string& name : function_order_) {
    absl::StatusOr<Expr> mapped = fn(functions_.at(name));
    if (!mapped.ok()) return mapped.status();
    absl::Status set = out.SetFunction(name, *std::move(mapped));
    if (!set.ok()) return set;
  }
  return out;
}

absl::Status Module::AddFunction(std::string_view name, Expr function) {
  if (!function.is(ExprKind::kFunction)) {
    return absl::InvalidArgumentError(absl::StrFormat("@%s is not a function", name));
  }
  if (functions_.contains(Key(name))) {
    return absl::AlreadyExistsError(absl::StrFormat("function @%s is defined twice", name));
  }
  functions_.emplace(std::string(name), std::move(function));
  function_order_.emplace_back(name);
  return absl::OkStatus();
}

absl::Status Module::SetFunction(std::string_view name, Expr function) {
  if (!function.is(ExprKind::kFunction)) {
    return absl::InvalidArgumentError(absl::StrFormat("@%s is not a function", name));
  }
  const auto it = functions_.find(Key(name));
  if (it == functions_.end()) {
    return absl::NotFoundError(absl::StrFormat("no function @%s in the module", name));
  }
  it->second = std::move(function);
  return absl::OkStatus();
}

bool Module::HasFunction(std::string_view name) const { return functions_.contains(Key(name)); }

absl::Status Module::SetResultNames(std::string_view function, std::vector<std::string> names) {
  if (!HasFunction(function)) {
    return absl::NotFoundError(absl::StrFormat("no function @%s in the module", function));
  }
  result_names_[std::string(function)] = std::move(names);
  return absl::OkStatus();
}

const std::vector<std::string>& Module::ResultNames(std::string_view function) const {
  static const std::vector<std::string>* const kNone = new std::vector<std::string>();
  const auto it = result_names_.find(Key(function));
  return it == result_names_.end() ? *kNone : it->second;
}

absl::StatusOr<Expr> Module::Function(std::string_view name) const {
  const auto it = functions_.find(Key(name));
  if (it == functions_.end()) {
    return absl::NotFoundError(absl::StrFormat("no function @%s in the module", name));
  }
  return it->second;
}

absl::Status Module::AddType(TypeData type) {
  if (types_.contains(type.name)) {
    return absl::AlreadyExistsError(absl::StrFormat("type %s is defined twice", type.name));
  }
  for (size_t i = 0; i < type.constructors.size(); ++i) {
    const Expr& c = type.constructors[i];
    if (!c.is(ExprKind::kConstructor) || c.adt() != type.name || c.tag() != static_cast<int>(i)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "constructor %d of type %s must be a constructor of %s with tag %d", i, type.name,
          type.name, i));
    }
    if (constructors_.contains(c.name())) {
      return absl::AlreadyExistsError(
          absl::StrFormat("constructor %s is defined twice", c.name()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (type.constructors[j].name() == c.name()) {
        return absl::AlreadyExistsError(
            absl::StrFormat("constructor %s is defined twice", c.name()));
      }
    }
  }
  for (const Expr& c : type.constructors) constructors_.emplace(c.name(), c);
  type_order_.push_back(type.name);
  std::string name = type.name;
  types_.emplace(std::move(name), std::move(type));
  return absl::OkStatus();
}

const TypeData* Module::FindType(std::string_view name) const {
  const auto it = types_.find(Key(name));
  return it == types_.end() ? nullptr : &it->second;
}

const Expr* Module::FindConstructor(std::string_view name) const {
  const auto it = constructors_.find(Key(name));
  return it == constructors_.end() ? nullptr : &it->second;
}

}  // namespace dynvm::compiler
