// Tests of tools/run/compare.h: flattening, tolerances, NaN, and the messages that say
// which element differs.
#include "tools/run/compare.h"

#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "tools/run/input_parser.h"

namespace dynvm::tools {
namespace {

using ::testing::Optional;

Value Inline(std::string_view text) {
  absl::StatusOr<NDArray> t = ParseInlineTensor(text, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? Value(*std::move(t)) : Value();
}

std::optional<std::string> Diff(std::string_view expected, std::string_view got,
                                CompareOptions options = {}) {
  return CompareValue(Inline(expected), Inline(got), options);
}

TEST(CompareValueTest, EqualTensorsMatch) {
  EXPECT_EQ(Diff("2x2xi32=1,2,3,4", "2x2xi32=1,2,3,4"), std::nullopt);
  EXPECT_EQ(Diff("0x3xf32=", "0x3xf32="), std::nullopt);
  EXPECT_EQ(Diff("3xf32=nan,inf,-inf", "3xf32=nan,inf,-inf"), std::nullopt);
}

TEST(CompareValueTest, FloatsWithinTolerance) {
  // |got - expected| <= 1e-6 + 1e-5 * 1000
  EXPECT_EQ(Diff("f64=1000", "f64=1000.01"), std::nullopt);
  EXPECT_THAT(Diff("f64=1000", "f64=1000.5"),
              Optional(std::string("1 of 1 elements differ (atol=1e-06, rtol=1e-05); first at "
                                   "[]: expected 1000.0, got 1000.5; max |got - expected| = 0.5")));
  CompareOptions loose;
  loose.atol = 0.1;
  EXPECT_EQ(Diff("f64=1000", "f64=1000.05", loose), std::nullopt);
  EXPECT_EQ(Diff("f16=0.1", "f16=0.1"), std::nullopt);
}

TEST(CompareValueTest, CountsMismatchesAndNamesTheFirstByMultiIndex) {
  EXPECT_THAT(Diff("2x3xf32=1,2,3,4,5,6", "2x3xf32=1,2,3,4.5,5,7"),
              Optional(std::string("2 of 6 elements differ (atol=1e-06, rtol=1e-05); first at "
                                   "[1, 0]: expected 4.0, got 4.5; max |got - expected| = 1.0")));
  EXPECT_THAT(Diff("2x2xi64=1,2,3,4", "2x2xi64=1,2,3,5"),
              Optional(std::string("1 of 4 elements differ; first at [1, 1]: expected 4, got 5")));
  EXPECT_THAT(
      Diff("2xbool=1,0", "2xbool=1,1"),
      Optional(std::string("1 of 2 elements differ; first at [1]: expected False, got True")));
  EXPECT_THAT(Diff("2xf32=nan,1", "2xf32=1,1"),
              Optional(std::string("1 of 2 elements differ (atol=1e-06, rtol=1e-05); first at "
                                   "[0]: expected nan, got 1.0")));
  EXPECT_THAT(Diff("f32=inf", "f32=-inf"),
              Optional(std::string("1 of 1 elements differ (atol=1e-06, rtol=1e-05); first at "
                                   "[]: expected inf, got -inf; max |got - expected| = inf")));
}

TEST(CompareValueTest, DTypeAndShapeMustMatchExactly) {
  EXPECT_THAT(Diff("2xf32=1,2", "2xf64=1,2"),
              Optional(std::string("expected tensor<f32>[2], got tensor<f64>[2]: wrong dtype")));
  EXPECT_THAT(
      Diff("1x2xf32=1,2", "2x1xf32=1,2"),
      Optional(std::string("expected tensor<f32>[1, 2], got tensor<f32>[2, 1]: wrong shape")));
}

TEST(CompareValueTest, Scalars) {
  EXPECT_EQ(CompareValue(Value::Int(5), Value::Int(5)), std::nullopt);
  EXPECT_THAT(CompareValue(Value::Int(5), Value::Int(6)),
              Optional(std::string("expected int 5, got int 6")));
  EXPECT_EQ(CompareValue(Value::Int(5), Value::Float(5.00001)), std::nullopt);
  EXPECT_THAT(CompareValue(Value::Float(1.5), Value::Float(1.6)),
              Optional(std::string("expected float 1.5, got float 1.6 (atol=1e-06, rtol=1e-05)")));
  EXPECT_EQ(CompareValue(Value::Float(NAN), Value::Float(NAN)), std::nullopt);
  EXPECT_THAT(CompareValue(Value::Bool(true), Value::Int(1)),
              Optional(std::string("expected bool true, got int 1")));
  EXPECT_THAT(CompareValue(Inline("i64=5"), Value::Int(5)),
              Optional(std::string("expected tensor<i64>[], got int 5")));
}

}  // namespace
}  // namespace dynvm::tools
