// Tests of Module (compiler/ir/module.h): functions in order, replaced and looked up,
// ADTs with their constructors, and the errors for duplicates and malformed entries.
#include "compiler/ir/module.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dynvm::compiler {
namespace {

Expr Identity() {
  const Expr x = Expr::Var("x");
  return Expr::Function({x}, x);
}

TypeData ListType() {
  const Type a = Type::Var("A");
  return {"List", {"A"},
          {Expr::Constructor("Cons", "List", 0, {a, Type::Adt("List", {a})}),
           Expr::Constructor("Nil", "List", 1, {})}};
}

TEST(ModuleTest, FunctionsKeepTheirOrder) {
  Module mod;
  ASSERT_TRUE(mod.AddFunction("main", Identity()).ok());
  ASSERT_TRUE(mod.AddFunction("helper", Identity()).ok());
  EXPECT_EQ(mod.function_names(), (std::vector<std::string>{"main", "helper"}));
  EXPECT_TRUE(mod.HasFunction("helper"));
  const Expr replacement = Identity();
  ASSERT_TRUE(mod.SetFunction("main", replacement).ok());
  absl::StatusOr<Expr> main = mod.Function("main");
  ASSERT_TRUE(main.ok());
  EXPECT_TRUE(main->same_as(replacement));
  EXPECT_EQ(mod.function_names().size(), 2u);
}

TEST(ModuleTest, FunctionErrors) {
  Module mod;
  ASSERT_TRUE(mod.AddFunction("main", Identity()).ok());
  EXPECT_EQ(mod.AddFunction("main", Identity()).message(), "function @main is defined twice");
  EXPECT_EQ(mod.AddFunction("f", Expr::Var("x")).message(), "@f is not a function");
  EXPECT_EQ(mod.SetFunction("g", Identity()).message(), "no function @g in the module");
  EXPECT_EQ(mod.Function("g").status().code(), absl::StatusCode::kNotFound);
}

TEST(ModuleTest, TypesAndConstructors) {
  Module mod;
  ASSERT_TRUE(mod.AddType(ListType()).ok());
  const TypeData* list = mod.FindType("List");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->SelfType().ToString(), "List[A]");
  const Expr* cons = mod.FindConstructor("Cons");
  ASSERT_NE(cons, nullptr);
  EXPECT_EQ(cons->tag(), 0);
  EXPECT_EQ(mod.FindConstructor("Nil")->tag(), 1);
  EXPECT_EQ(mod.FindConstructor("Leaf"), nullptr);
  EXPECT_EQ(mod.FindType("Tree"), nullptr);
  EXPECT_EQ(mod.type_names(), std::vector<std::string>{"List"});
}

TEST(ModuleTest, TypeErrors) {
  Module mod;
  ASSERT_TRUE(mod.AddType(ListType()).ok());
  EXPECT_EQ(mod.AddType(ListType()).message(), "type List is defined twice");
  EXPECT_EQ(mod.AddType({"Other", {}, {Expr::Constructor("Nil", "Other", 0, {})}}).message(),
            "constructor Nil is defined twice");
  EXPECT_EQ(mod.AddType({"Pair", {}, {Expr::Constructor("P", "Pair", 1, {})}}).message(),
            "constructor 0 of type Pair must be a constructor of Pair with tag 0");
  EXPECT_EQ(mod.AddType({"Pair", {}, {Expr::Constructor("P", "List", 0, {})}}).message(),
            "constructor 0 of type Pair must be a constructor of Pair with tag 0");
  EXPECT_EQ(mod.AddType({"Two", {},
                         {Expr::Constructor("T", "Two", 0, {}), Expr::Constructor("T", "Two", 1, {})}})
                .message(),
            "constructor T is defined twice");
  // A failed AddType leaves nothing behind.
  EXPECT_EQ(mod.FindType("Two"), nullptr);
  EXPECT_EQ(mod.FindConstructor("T"), nullptr);
}

}  // namespace
}  // namespace dynvm::compiler
