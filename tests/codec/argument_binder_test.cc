// Tests of codec/argument_binder.h: matching by name and position, and every error the
// binder reports, each naming the input and what was expected.
#include "codec/argument_binder.h"

#include <string>
#include <vector>

#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"

namespace dynvm::codec {
namespace {

using ::testing::HasSubstr;

// main(x: tensor f32[n, 2], y: tensor f32[n, 2], k: int)
vm::Function Main() {
  vm::ValueSpec x;
  x.name = "x";
  x.kind = vm::ValueSpec::Kind::kTensor;
  x.dims = {vm::DimSpec::Symbol("n"), vm::DimSpec::Constant(2)};
  vm::ValueSpec y = x;
  y.name = "y";
  vm::ValueSpec k;
  k.name = "k";
  k.kind = vm::ValueSpec::Kind::kInt;
  vm::Function f;
  f.name = "main";
  f.params = {x, y, k};
  return f;
}

ArgumentSource TensorSource(std::string name, std::string label, Shape shape,
                            DType dtype = DType::kF32) {
  return {.name = std::move(name),
          .label = std::move(label),
          .build = [shape, dtype](const vm::ValueSpec&) -> absl::StatusOr<Value> {
            DYNVM_ASSIGN_OR_RETURN(NDArray t, NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator()));
            return Value(std::move(t));
          }};
}

ArgumentSource IntSource(std::string name, std::string label) {
  return {.name = std::move(name), .label = std::move(label),
          .build = [](const vm::ValueSpec&) -> absl::StatusOr<Value> { return Value::Int(4); }};
}

std::string Error(const std::vector<ArgumentSource>& sources, absl::StatusCode code =
                                                                  absl::StatusCode::kInvalidArgument,
                  BindOptions options = {}) {
  absl::StatusOr<std::vector<Value>> args = BindArguments(Main(), sources, options);
  EXPECT_FALSE(args.ok());
  EXPECT_EQ(args.status().code(), code) << args.status();
  return std::string(args.status().message());
}

TEST(ArgumentBinderTest, BindsByPositionAndName) {
  absl::StatusOr<std::vector<Value>> args =
      BindArguments(Main(), {IntSource("k", "k"), TensorSource("", "#0", {3, 2}),
                             TensorSource("", "#1", {3, 2})});
  ASSERT_TRUE(args.ok()) << args.status();
  ASSERT_EQ(args->size(), 3u);
  EXPECT_EQ((*args)[0].As<NDArrayObj>()->shape()[0], 3);
  EXPECT_EQ((*args)[2].int_value(), 4);
}

TEST(ArgumentBinderTest, TheSpecOfTheBoundParameterReachesTheBuild) {
  std::string seen;
  ArgumentSource k{.name = "", .label = "third",
                   .build = [&seen](const vm::ValueSpec& p) -> absl::StatusOr<Value> {
                     seen = p.name;
                     return Value::Int(1);
                   }};
  ASSERT_TRUE(BindArguments(Main(), {TensorSource("", "first", {1, 2}), TensorSource("", "second", {1, 2}), k}).ok());
  EXPECT_EQ(seen, "k");
}

TEST(ArgumentBinderTest, MatchingErrors) {
  EXPECT_EQ(Error({TensorSource("z", "input 0", {1, 2})}),
            "unknown input name 'z': 'main' has parameters x, y, k");
  EXPECT_EQ(Error({TensorSource("", "input 0", {1, 2}), TensorSource("x", "input 1 ('x=..')", {1, 2})}),
            "input 'x' (argument 0 of 'main') given twice (again by input 1 ('x=..'))");
  EXPECT_EQ(Error({TensorSource("", "a", {1, 2}), TensorSource("", "b", {1, 2}), IntSource("", "c"),
                   IntSource("", "input 3 ('4')")}),
            "too many inputs: 'main' takes 3 (x, y, k) but input 3 ('4') would be argument 3");
  EXPECT_EQ(Error({TensorSource("", "a", {1, 2}), IntSource("k", "k")}),
            "missing input for 'main': 'y' (argument 1, tensor f32[n, 2])");
  EXPECT_EQ(Error({TensorSource("", "a", {1, 2})}),
            "missing inputs for 'main': 'y' (argument 1, tensor f32[n, 2]), 'k' (argument 2, int)");
}

TEST(ArgumentBinderTest, ParamNamesReplaceTheSignaturesInMatchingAndMessages) {
  const std::vector<std::string> names = {"input_0", "input_1", "k"};
  const BindOptions options{.param_names = names};
  absl::StatusOr<std::vector<Value>> args = BindArguments(
      Main(), {TensorSource("input_1", "b", {3, 2}), TensorSource("input_0", "a", {3, 2}),
               IntSource("k", "k")},
      options);
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(Error({TensorSource("x", "a", {1, 2})}, absl::StatusCode::kInvalidArgument, options),
            "unknown input name 'x': 'main' has parameters input_0, input_1, k");
  EXPECT_EQ(Error({TensorSource("input_0", "a", {1, 2}), IntSource("k", "k")},
                  absl::StatusCode::kInvalidArgument, options),
            "missing input for 'main': 'input_1' (argument 1, tensor f32[n, 2])");
}

TEST(ArgumentBinderTest, ParameterNamesMustBeOnePerParameter) {
  const std::vector<std::string> names = {"a", "b"};
  EXPECT_EQ(Error({TensorSource("a", "a", {1, 2})}, absl::StatusCode::kInvalidArgument,
                  {.param_names = names}),
            "2 parameter names for 'main', which has 3 parameters");
}

TEST(ArgumentBinderTest, BuildErrorsNameTheInputAndKeepTheirCode) {
  ArgumentSource missing{.name = "y", .label = "y",
                         .build = [](const vm::ValueSpec&) -> absl::StatusOr<Value> {
                           return absl::NotFoundError("cannot open 'y.npy'");
                         }};
  EXPECT_EQ(Error({TensorSource("x", "x", {1, 2}), missing, IntSource("k", "k")},
                  absl::StatusCode::kNotFound),
            "input 'y' (argument 1 of 'main'): cannot open 'y.npy'");
}

TEST(ArgumentBinderTest, SignatureErrors) {
  EXPECT_EQ(Error({TensorSource("x", "x", {3, 2}, DType::kI32), TensorSource("y", "y", {3, 2}),
                   IntSource("k", "k")}),
            "argument 0 ('x') of 'main': expected tensor f32[n, 2], got i32[3, 2]: wrong dtype");
  EXPECT_THAT(Error({TensorSource("x", "x", {3}), TensorSource("y", "y", {3, 2}), IntSource("k", "k")}),
              HasSubstr("got f32[3]: rank 1, expected 2"));
  EXPECT_THAT(Error({TensorSource("x", "x", {3, 5}), TensorSource("y", "y", {3, 2}), IntSource("k", "k")}),
              HasSubstr("dim 1 is 5, expected 2"));
  EXPECT_THAT(Error({TensorSource("x", "x", {3, 2}), TensorSource("y", "y", {4, 2}), IntSource("k", "k")}),
              HasSubstr("argument 1 ('y') of 'main': expected tensor f32[n, 2], got f32[4, 2]: dim 0 "
                        "is 4 but n = 3 from argument 0 ('x')"));
  EXPECT_THAT(Error({TensorSource("x", "x", {3, 2}), TensorSource("y", "y", {3, 2}),
                     TensorSource("k", "k", {1, 2})}),
              HasSubstr("argument 2 ('k') of 'main': expected int, got"));
}

}  // namespace
}  // namespace dynvm::codec
