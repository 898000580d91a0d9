// Tests of tools/run/input_parser.h: inline tensors of every dtype, scalars, .npy
// files, binding by position and by name, and every error naming what was wrong.
#include "tools/run/input_parser.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serializer/npy.h"
#include "objects/element_codec.h"

namespace dynvm::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<Allocator> TestAllocator() {
  static const std::shared_ptr<Allocator> allocator = MakeNaiveAllocator();
  return allocator;
}

NDArray MustParse(std::string_view text) {
  absl::StatusOr<NDArray> t = ParseInlineTensor(text, TestAllocator());
  EXPECT_TRUE(t.ok()) << t.status() << " for " << text;
  return t.ok() ? *std::move(t) : NDArray();
}

std::vector<double> Doubles(const NDArray& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t->num_elements(); ++i) out.push_back(ElementAsDouble(*t, i));
  return out;
}

std::string ParseError(std::string_view text) {
  absl::StatusOr<NDArray> t = ParseInlineTensor(text, TestAllocator());
  EXPECT_FALSE(t.ok()) << text;
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << text;
  return std::string(t.status().message());
}

TEST(ParseInlineTensorTest, ReadsShapeDTypeAndElements) {
  NDArray t = MustParse("2x3xf32=1,2,3,4,5,6.5");
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_THAT(t->shape(), ElementsAre(2, 3));
  EXPECT_THAT(Doubles(t), ElementsAre(1, 2, 3, 4, 5, 6.5));
}

TEST(ParseInlineTensorTest, SeparatorsAreCommasSpacesAndBrackets) {
  EXPECT_THAT(Doubles(MustParse("2x2xi32=[1 2][3, 4]")), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Doubles(MustParse("3xi64= 1 ,\t2,3 ")), ElementsAre(1, 2, 3));
}

TEST(ParseInlineTensorTest, ScalarAndEmptyTensors) {
  NDArray scalar = MustParse("f32=3.5");
  EXPECT_EQ(scalar->ndim(), 0);
  EXPECT_THAT(Doubles(scalar), ElementsAre(3.5));
  NDArray empty = MustParse("0x3xf32=");
  EXPECT_THAT(empty->shape(), ElementsAre(0, 3));
  EXPECT_EQ(empty->num_elements(), 0);
}

TEST(ParseInlineTensorTest, EveryDType) {
  EXPECT_THAT(Doubles(MustParse("2xf64=0.1,-1e300")), ElementsAre(0.1, -1e300));
  EXPECT_THAT(Doubles(MustParse("2xi8=-128,127")), ElementsAre(-128, 127));
  EXPECT_THAT(Doubles(MustParse("2xi16=-32768,32767")), ElementsAre(-32768, 32767));
  EXPECT_THAT(Doubles(MustParse("2xi32=-2147483648,2147483647")),
              ElementsAre(-2147483648.0, 2147483647.0));
  EXPECT_EQ(ElementAsInt(*MustParse("i64=-9223372036854775808"), 0),
            std::numeric_limits<int64_t>::min());
  EXPECT_THAT(Doubles(MustParse("2xu8=0,255")), ElementsAre(0, 255));
  EXPECT_THAT(Doubles(MustParse("6xbool=true,false,True,False,1,0")),
              ElementsAre(1, 0, 1, 0, 1, 0));
  EXPECT_THAT(Doubles(MustParse("2xfloat32=1,2")), ElementsAre(1, 2));  // long names too
}

TEST(ParseInlineTensorTest, FloatSpecialValues) {
  std::vector<double> v = Doubles(MustParse("3xf32=nan,inf,-inf"));
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], INFINITY);
  EXPECT_EQ(v[2], -INFINITY);
}

TEST(ParseInlineTensorTest, F32RoundsTextOnceToNearest) {
  float expected = 0.1f;
  float got;
  std::memcpy(&got, MustParse("f32=0.1")->data(), sizeof(got));
  EXPECT_EQ(got, expected);
}

TEST(ParseInlineTensorTest, HalfPrecisionRoundsToNearestEven) {
  NDArray h = MustParse("6xf16=0.1,1,65504,65520,1e-8,2049");
  const uint16_t* bits = h->data_as<uint16_t>();
  EXPECT_EQ(bits[0], 0x2e66);  // 0.0999755859375
  EXPECT_EQ(bits[1], 0x3c00);
  EXPECT_EQ(bits[2], 0x7bff);  // the largest half
  EXPECT_EQ(bits[3], 0x7c00);  // halfway to 65536 rounds to even: infinity
  EXPECT_EQ(bits[4], 0x0000);  // below half the smallest subnormal
  EXPECT_EQ(bits[5], 0x6800);  // 2049 is halfway between 2048 and 2050: even is 2048
  NDArray b = MustParse("3xbf16=0.1,1,-3.0e38");
  const uint16_t* bbits = b->data_as<uint16_t>();
  EXPECT_EQ(bbits[0], 0x3dcd);
  EXPECT_EQ(bbits[1], 0x3f80);
  EXPECT_EQ(bbits[2], 0xff62);
}

TEST(ParseInlineTensorTest, ErrorsSayWhatWasWrong) {
  EXPECT_THAT(ParseError("2x3xf32=1,2,3,4,5"), HasSubstr("2x3xf32 needs 6 elements, got 5"));
  EXPECT_THAT(ParseError("2x3xf33=1"), HasSubstr("unknown dtype 'f33'"));
  EXPECT_THAT(ParseError("2xax3xf32=1"), HasSubstr("bad dim 'a' in '2xax3xf32'"));
  EXPECT_THAT(ParseError("-1xf32="), HasSubstr("bad dim '-1'"));
  EXPECT_THAT(ParseError("2xf32=1,abc"),
              HasSubstr("bad f32 element 'abc' at index 1: not a number"));
  EXPECT_THAT(ParseError("2xu8=1,256"),
              HasSubstr("bad u8 element '256' at index 1: out of range [0, 255]"));
  EXPECT_THAT(ParseError("i8=1.5"), HasSubstr("bad i8 element '1.5' at index 0: not an integer"));
  EXPECT_THAT(ParseError("f32=1e39"), HasSubstr("out of range"));
  EXPECT_THAT(ParseError("bool=2"), HasSubstr("not true, false, 1 or 0"));
  EXPECT_THAT(ParseError("f32"), HasSubstr("expected TYPE=VALUES"));
}

TEST(ParseValueTest, ScalarsFollowTheParameterKind) {
  using Kind = vm::ValueSpec::Kind;
  absl::StatusOr<Value> i = ParseValue("5", Kind::kInt, TestAllocator());
  ASSERT_TRUE(i.ok());
  EXPECT_TRUE(i->is_int());
  EXPECT_EQ(i->int_value(), 5);
  absl::StatusOr<Value> f = ParseValue("2", Kind::kFloat, TestAllocator());
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->is_float());
  EXPECT_EQ(f->float_value(), 2.0);
  absl::StatusOr<Value> inferred = ParseValue("1.5", Kind::kAny, TestAllocator());
  ASSERT_TRUE(inferred.ok());
  EXPECT_TRUE(inferred->is_float());
  absl::StatusOr<Value> b = ParseValue("false", Kind::kBool, TestAllocator());
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->is_bool());
  EXPECT_FALSE(b->bool_value());
  absl::StatusOr<Value> bad = ParseValue("five", Kind::kInt, TestAllocator());
  EXPECT_THAT(bad.status().message(), HasSubstr("bad value 'five'"));
}

TEST(ParseValueTest, ReadsNpyFilesAndNamesMissingOnes) {
  const std::string path = ::testing::TempDir() + "/run_input_" + std::to_string(getpid()) + ".npy";
  ASSERT_TRUE(serializer::WriteNpyFile(path, MustParse("2xi64=7,8")).ok());
  absl::StatusOr<Value> v = ParseValue("@" + path, vm::ValueSpec::Kind::kTensor, TestAllocator());
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(Doubles(v->AsRef<NDArrayObj>()), ElementsAre(7, 8));
  std::remove(path.c_str());
  absl::StatusOr<Value> missing =
      ParseValue("@" + path, vm::ValueSpec::Kind::kTensor, TestAllocator());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr(path));
}

vm::Function TwoInputs() {
  vm::Function f;
  f.name = "main";
  vm::ValueSpec x{"x",
                  vm::ValueSpec::Kind::kTensor,
                  DType::kF32,
                  {vm::DimSpec::Symbol("n"), vm::DimSpec::Constant(2)},
                  {}};
  vm::ValueSpec y = x;
  y.name = "y";
  vm::ValueSpec k{"k", vm::ValueSpec::Kind::kInt, DType::kF32, {}, {}};
  f.params = {x, y, k};
  return f;
}

absl::StatusOr<std::vector<Value>> Bind(std::vector<std::string> inputs) {
  return BindInputs(TwoInputs(), inputs, TestAllocator());
}

double First(const Value& v) { return ElementAsDouble(*v.As<NDArrayObj>(), 0); }

TEST(BindInputsTest, PositionalNamedAndMixed) {
  absl::StatusOr<std::vector<Value>> args = Bind({"1x2xf32=1,2", "1x2xf32=3,4", "5"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(First((*args)[1]), 3);
  EXPECT_EQ((*args)[2].int_value(), 5);

  args = Bind({"k=7", "y=1x2xf32=3,4", "x=1x2xf32=1,2"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(First((*args)[0]), 1);
  EXPECT_EQ(First((*args)[1]), 3);
  EXPECT_EQ((*args)[2].int_value(), 7);

  // The i-th positional input is parameter i wherever named ones appear.
  args = Bind({"k=7", "1x2xf32=1,2", "1x2xf32=3,4"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_EQ(First((*args)[1]), 3);
}

TEST(BindInputsTest, ErrorsNameTheInputs) {
  auto error = [](std::vector<std::string> inputs) {
    absl::StatusOr<std::vector<Value>> args = Bind(std::move(inputs));
    EXPECT_EQ(args.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(args.status().message());
  };
  EXPECT_EQ(error({"1x2xf32=1,2"}),
            "missing inputs for 'main': 'y' (argument 1, tensor f32[n, 2]), "
            "'k' (argument 2, int)");
  EXPECT_EQ(error({"1x2xf32=1,2", "k=1"}),
            "missing input for 'main': 'y' (argument 1, tensor f32[n, 2])");
  EXPECT_EQ(error({"z=1x2xf32=1,2"}), "unknown input name 'z': 'main' has parameters x, y, k");
  EXPECT_EQ(error({"1x2xf32=1,2", "x=1x2xf32=1,2"}),
            "input 'x' (argument 0 of 'main') given twice (again by input 1 ('x=1x2xf32=1,2'))");
  EXPECT_EQ(error({"1", "2", "3", "4"}),
            "too many inputs: 'main' takes 3 (x, y, k) but input 3 ('4') would be argument 3");
  EXPECT_EQ(error({"x=1x2xf32=1", "y=@", "k=1"}),
            "input 'x' (argument 0 of 'main'): 1x2xf32 needs 2 elements, got 1");
  // A prefix that is no parameter but starts with a digit is a tensor type.
  EXPECT_EQ(error({"2x?xf32=1", "y=1x2xf32=1,2", "k=1"}),
            "input 'x' (argument 0 of 'main'): bad dim '?' in '2x?xf32'");
}

TEST(BindInputsTest, AParameterNameWinsOverADTypeName) {
  vm::Function f;
  f.name = "g";
  f.params = {vm::ValueSpec{"f32", vm::ValueSpec::Kind::kFloat, DType::kF32, {}, {}}};
  absl::StatusOr<std::vector<Value>> args = BindInputs(f, {"f32=3"}, TestAllocator());
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_TRUE((*args)[0].is_float());
  // The name is taken and "f32=3" read as a tensor, which the signature check refuses.
  args = BindInputs(f, {"f32=f32=3"}, TestAllocator());
  EXPECT_EQ(args.status().message(), "argument 0 ('f32') of 'g': expected float, got tensor");
}

}  // namespace
}  // namespace dynvm::tools
