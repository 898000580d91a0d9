// Tests of fused_elementwise (kernels/elementwise/fused_elementwise.cc): chains of every operator on
// random broadcast shapes against the single-op kernels run one by one through the
// registry; Bind's errors for malformed programs and the call's errors, with their
// messages; thread counts and an output aliasing an input.
//
// Tolerance: none. The fused kernel runs the single-op kernels' own per-element
// functions (the unary microkernel table, elementwise::Add and kin), whose results do
// not depend on where an element sits in a vector, so results are compared bit for bit
// (any NaN equals any NaN). This holds for either microkernel table (DYNVM_ISA=scalar).
#include "kernels/elementwise/fused_elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "tests/kernels/fused_chain_util.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using ::dynvm::kernels::testing::BroadcastingShape;
using ::dynvm::kernels::testing::Chain;
using ::dynvm::kernels::testing::ExpectSameBits;
using ::dynvm::kernels::testing::Input;
using ::dynvm::kernels::testing::kFusedOps;
using ::dynvm::kernels::testing::Literal;
using ::dynvm::kernels::testing::OpInfo;
using ::dynvm::kernels::testing::ProgramText;
using ::dynvm::kernels::testing::RandomChain;
using ::dynvm::kernels::testing::RandomInputs;
using ::dynvm::kernels::testing::RandomShape;
using ::dynvm::kernels::testing::RunUnfused;
using ::dynvm::kernels::testing::Scalar;
using ::dynvm::kernels::testing::Step;
using ::dynvm::kernels::testing::Temp;
using ::dynvm::kernels::testing::RandomTensor;
using ::dynvm::kernels::testing::RunKernel;
using ::dynvm::kernels::testing::TensorOf;
using ::testing::HasSubstr;

constexpr char kFused[] = "fused_elementwise";

absl::StatusOr<NDArray> RunFused(const std::string& program, const std::vector<NDArray>& inputs,
                                 ThreadPool* pool = nullptr) {
  absl::StatusOr<std::vector<NDArray>> out =
      RunKernel(kFused, {{"program", program}}, inputs, {}, 1, pool);
  if (!out.ok()) return out.status();
  return (*out)[0];
}

// Runs `chain` on `inputs` fused and unfused and compares.
void CheckChain(const Chain& chain, const std::vector<NDArray>& inputs) {
  const std::string program = ProgramText(chain);
  std::vector<std::string> shapes;
  for (const NDArray& x : inputs) shapes.push_back(ShapeToString(x->shape()));
  const std::string what = absl::StrCat(program, " on ", absl::StrJoin(shapes, ", "));
  absl::StatusOr<NDArray> want = RunUnfused(chain, inputs);
  ASSERT_TRUE(want.ok()) << what << ": " << want.status();
  absl::StatusOr<NDArray> got = RunFused(program, inputs);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  ExpectSameBits(*got, *want, what);
}

// ---------------------------------------------------------------------------------------
// Agreement with the single-op kernels.

TEST(FusedElementwiseTest, EveryOpAloneMatchesItsKernel) {
  std::mt19937 rng(1);
  for (const OpInfo& op : kFusedOps) {
    int num_inputs = 0;
    const Chain chain = RandomChain(op, 1, 2, &num_inputs, rng);
    CheckChain(chain, RandomInputs({37, 600}, num_inputs, rng));
    CheckChain(chain, RandomInputs({}, num_inputs, rng));
  }
}

TEST(FusedElementwiseTest, RandomChainsOnRandomShapesMatchTheKernelsOneByOne) {
  std::mt19937 rng(2);
  for (int round = 0; round < 12; ++round) {
    for (const OpInfo& op : kFusedOps) {
      const int length = std::uniform_int_distribution<int>(1, 6)(rng);
      int num_inputs = 0;
      const Chain chain = RandomChain(op, length, 4, &num_inputs, rng);
      CheckChain(chain, RandomInputs(RandomShape(rng), num_inputs, rng));
    }
  }
}

TEST(FusedElementwiseTest, BroadcastPatterns) {
  std::mt19937 rng(3);
  const Chain bias_gelu = {{"add", {Input(0), Input(1)}}, {"gelu", {Temp(0)}}};
  const Chain scale_shift = {{"multiply", {Input(0), Input(1)}},
                             {"add", {Temp(0), Input(2)}},
                             {"tanh", {Temp(1)}}};
  const Chain with_literals = {{"multiply", {Literal(0.5f), Input(0)}},
                               {"subtract", {Temp(0), Input(1)}},
                               {"maximum", {Temp(1), Literal(-0.25f)}}};
  const auto inputs = [&](std::vector<std::vector<int64_t>> shapes) {
    std::vector<NDArray> out;
    for (const auto& s : shapes) out.push_back(RandomTensor(s, DType::kF32, rng, -2.0, 2.0));
    return out;
  };
  // (N, C) + (C), rows cut into blocks (C > 256) and grouped (C small).
  CheckChain(bias_gelu, inputs({{128, 3072}, {3072}}));
  CheckChain(bias_gelu, inputs({{1000, 3}, {3}}));
  CheckChain(bias_gelu, inputs({{3}, {1000, 3}}));
  // (N, 1) * (1, C) + (C): no input has the output's shape.
  CheckChain(scale_shift, inputs({{1000, 1}, {1, 301}, {301}}));
  CheckChain(scale_shift, inputs({{77, 1}, {1, 5}, {1}}));
  CheckChain(scale_shift, inputs({{2, 1, 700}, {3, 1}, {}}));
  // Short rows whose operands differ from row to row: gathered row by row, copied
  // ({5, 1, 3}) or filled ({8, 1}, the per-channel {16, 1, 1} of NCHW).
  CheckChain(scale_shift, inputs({{5, 8, 3}, {5, 1, 3}, {8, 1}}));
  CheckChain(scale_shift, inputs({{2, 16, 7, 7}, {16, 1, 1}, {16, 1, 1}}));
  // Literals, and inputs that are one value.
  CheckChain(with_literals, inputs({{513}, {}}));
  CheckChain(with_literals, inputs({{}, {4, 513}}));
  CheckChain(with_literals, inputs({{}, {}}));
  // Rank 0 everywhere, and extents of 0.
  CheckChain(scale_shift, inputs({{}, {}, {}}));
  CheckChain(scale_shift, inputs({{0, 3}, {3}, {1, 1}}));
  CheckChain(scale_shift, inputs({{5, 0}, {1}, {}}));
}

TEST(FusedElementwiseTest, UniformValuesAreComputedOnceAndBroadcast) {
  // t0..t2 repeat one value over every block; t3 does not, and the result of the
  // second program is one value for the whole output.
  std::mt19937 rng(4);
  const Chain chain = {{"exp", {Input(1)}},
                       {"add", {Temp(0), Literal(1.0f)}},
                       {"sqrt", {Temp(1)}},
                       {"multiply", {Input(0), Temp(2)}}};
  CheckChain(chain, {RandomTensor({3, 1000}, DType::kF32, rng), Scalar(0.75f)});
  CheckChain(chain, {RandomTensor({1000, 3}, DType::kF32, rng),
                     RandomTensor({1000, 1}, DType::kF32, rng)});
  absl::StatusOr<NDArray> got =
      RunFused("t0 = add(1.5, 2); t1 = multiply(t0, i1); t2 = sqrt(t1)",
               {RandomTensor({2, 3}, DType::kF32, rng), Scalar(4.0f)});
  ASSERT_TRUE(got.ok()) << got.status();
  // i0 is read by no statement but still shapes the output.
  EXPECT_EQ(ShapeToString((*got)->shape()), "[2, 3]");
  for (int64_t i = 0; i < (*got)->num_elements(); ++i) {
    EXPECT_EQ((*got)->data_as<float>()[i], std::sqrt(14.0f));
  }
}

TEST(FusedElementwiseTest, LiteralsAtTheEndsOfTheF32RangeRoundTrip) {
  // Nine significant digits print ±FLT_MAX as ±3.40282347e+38, a little above it: the
  // compiler writes such programs (BERT's mask is (1 - m) * finfo(float32).min).
  constexpr float kMax = std::numeric_limits<float>::max();
  absl::StatusOr<NDArray> got =
      RunFused("t0 = multiply(i0, -3.40282347e+38); t1 = add(t0, 3.40282347e+38)",
               {Scalar(1.0f)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*(*got)->data_as<float>(), -kMax + kMax);
  got = RunFused("t0 = multiply(i0, -3.40282347e+38)", {Scalar(1.0f)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*(*got)->data_as<float>(), -kMax);
  // Half an ulp above FLT_MAX rounds to infinity: out of range.
  EXPECT_FALSE(RunFused("t0 = multiply(i0, 3.4028235678e+38)", {Scalar(1.0f)}).ok());
}

TEST(FusedElementwiseTest, SquaresAreExactProducts) {
  // power(x, 2) runs as x * x: the correctly rounded square, equal to pow's on every
  // class of input (pow of glibc is within an ulp, so compare with the product).
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const std::vector<float> specials = {0.0f, -0.0f, 1.5f, -3.25f, 1e-30f, -1e-23f, 1.8e19f,
                                       -2e19f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::denorm_min()};
  std::mt19937 rng(11);
  NDArray x = RandomTensor({3, 257}, DType::kF32, rng);
  std::copy(specials.begin(), specials.end(), x->data_as<float>());
  for (const char* program : {"t0 = power(i0, 2)", "t0 = add(i0, 0); t1 = power(t0, 2.0)"}) {
    SCOPED_TRACE(program);
    absl::StatusOr<NDArray> got = RunFused(program, {x});
    ASSERT_TRUE(got.ok()) << got.status();
    for (int64_t i = 0; i < x->num_elements(); ++i) {
      const float v = x->data_as<float>()[i];
      const float want = v * v;
      const float g = (*got)->data_as<float>()[i];
      EXPECT_TRUE(g == want || (g != g && want != want)) << v << ": " << g << " vs " << want;
    }
  }
  // Another exponent still calls pow.
  absl::StatusOr<NDArray> cube = RunFused("t0 = power(i0, 3)", {Scalar(2.0f)});
  ASSERT_TRUE(cube.ok()) << cube.status();
  EXPECT_EQ(*(*cube)->data_as<float>(), 8.0f);
}

TEST(FusedElementwiseTest, TemporariesReadManyTimes) {
  std::mt19937 rng(5);
  const Chain chain = {{"add", {Input(0), Input(1)}},    {"multiply", {Temp(0), Temp(0)}},
                       {"subtract", {Temp(1), Temp(0)}}, {"exp", {Temp(0)}},
                       {"divide", {Temp(3), Temp(2)}},   {"minimum", {Temp(4), Temp(1)}}};
  CheckChain(chain,
             {RandomTensor({9, 700}, DType::kF32, rng), RandomTensor({700}, DType::kF32, rng)});
  CheckChain(chain,
             {RandomTensor({200, 7}, DType::kF32, rng), RandomTensor({7}, DType::kF32, rng)});
}

TEST(FusedElementwiseTest, WhitespaceIsFree) {
  std::mt19937 rng(6);
  const std::vector<NDArray> inputs = {RandomTensor({4, 5}, DType::kF32, rng),
                                       RandomTensor({5}, DType::kF32, rng)};
  absl::StatusOr<NDArray> spaced = RunFused("t0 = add(i0, i1); t1 = tanh(t0)", inputs);
  absl::StatusOr<NDArray> packed = RunFused("t0=add(i0,i1);t1=tanh(t0)", inputs);
  absl::StatusOr<NDArray> loose =
      RunFused("\n  t0 =\tadd ( i0 ,i1 )\n;\tt1= tanh( t0 ) \n", inputs);
  ASSERT_TRUE(spaced.ok() && packed.ok() && loose.ok());
  ExpectSameBits(*packed, *spaced, "packed");
  ExpectSameBits(*loose, *spaced, "loose");
}

TEST(FusedElementwiseTest, ThreadCountsGiveTheSameResult) {
  std::mt19937 rng(7);
  const Chain chain = {{"multiply", {Input(0), Input(1)}},
                       {"add", {Temp(0), Input(2)}},
                       {"gelu", {Temp(1)}},
                       {"clip", {Temp(2), Literal(-0.5f), Literal(0.5f)}},
                       {"divide", {Temp(3), Input(1)}}};
  const std::string program = ProgramText(chain);
  ThreadPool one(1), four(4);
  for (const std::vector<std::vector<int64_t>>& shapes :
       std::vector<std::vector<std::vector<int64_t>>>{{{256, 3072}, {3072}, {256, 1}},
                                                      {{20000, 3}, {20000, 1}, {3}}}) {
    std::vector<NDArray> inputs;
    for (const auto& s : shapes) inputs.push_back(RandomTensor(s, DType::kF32, rng, -2.0, 2.0));
    absl::StatusOr<NDArray> a = RunFused(program, inputs, &one);
    absl::StatusOr<NDArray> b = RunFused(program, inputs, &four);
    ASSERT_TRUE(a.ok() && b.ok());
    ExpectSameBits(*b, *a, "4 threads vs 1");
    CheckChain(chain, inputs);
  }
}

TEST(FusedElementwiseTest, OutputMayAliasAnInput) {
  // In place, as the VM may call it: x = tanh(x * 2 + b).
  std::mt19937 rng(8);
  NDArray x = RandomTensor({600, 700}, DType::kF32, rng);
  NDArray b = RandomTensor({700}, DType::kF32, rng);
  const Chain chain = {{"multiply", {Input(0), Literal(2.0f)}},
                       {"add", {Temp(0), Input(1)}},
                       {"tanh", {Temp(1)}}};
  absl::StatusOr<NDArray> want = RunUnfused(chain, {x, b});
  ASSERT_TRUE(want.ok());
  absl::StatusOr<BoundKernel> k =
      DefaultRegistry().Bind(kFused, {{"program", ProgramText(chain)}}, 2, 1);
  ASSERT_TRUE(k.ok()) << k.status();
  NDArrayObj* args[] = {x.get(), b.get(), x.get()};
  ASSERT_TRUE(k->Call(args, ThreadPool::Default()).ok());
  ExpectSameBits(x, *want, "in place");
}

// ---------------------------------------------------------------------------------------
// Errors.

absl::Status BindProgram(const std::string& program, int num_inputs = 2) {
  return DefaultRegistry().Bind(kFused, {{"program", program}}, num_inputs, 1).status();
}

TEST(FusedElementwiseErrorTest, BindRejectsMalformedPrograms) {
  std::string too_long = "t0 = exp(i0)";
  for (int k = 1; k < 65; ++k) too_long += absl::StrFormat("; t%d = exp(t%d)", k, k - 1);
  const struct {
    std::string program;
    std::string message;
  } kCases[] = {
      {"", "attribute 'program' is empty: expected statements such as"},
      {" \n ", "attribute 'program' is empty"},
      {"t0 = foo(i0)", "statement 0 \"t0 = foo(i0)\": unknown op 'foo': expected one of "
                       "negative, abs, exp"},
      {"t0 = neg(i0)", "unknown op 'neg'"},
      {"t0 = relu(i0)", "unknown op 'relu'"},
      {"t0 = add(i0)", "add takes 2 arguments, got 1"},
      {"t0 = exp()", "exp takes 1 argument, got 0"},
      {"t0 = exp(i0, i1)", "exp takes 1 argument, got 2"},
      {"t0 = nn.leaky_relu(i0)", "nn.leaky_relu takes 2 arguments, got 1"},
      {"t0 = exp(t0)", "reads t0 before it is assigned: no temporary is assigned yet"},
      {"t0 = exp(i0); t1 = add(t0, t2)",
       "statement 1 \"t1 = add(t0, t2)\": reads t2 before it is assigned: expected t0..t0"},
      {"t1 = exp(i0)", "assigns 't1', expected t0 (temporaries are numbered in order from t0)"},
      {"t0 = exp(i0); t0 = exp(t0)", "assigns 't0', expected t1"},
      {"t0 = exp i0", "statement 0 \"t0 = exp i0\": expected \"t0 = op(arg, ...)\""},
      {"exp(i0)", "expected \"t0 = op(arg, ...)\""},
      {"t0 = exp(i0);", "statement 1 \"\": expected \"t1 = op(arg, ...)\""},
      {"t0 = add(i0, 1.2.3)",
       "malformed argument '1.2.3': expected iJ, tK or a number such as 0.5 or -1e-12"},
      {"t0 = add(i0, 1e)", "malformed argument '1e'"},
      {"t0 = add(i0, +1)", "malformed argument '+1'"},
      {"t0 = add(i0, x)", "malformed argument 'x'"},
      {"t0 = add(i0, )", "malformed argument ''"},
      {"t0 = add(i0, i-1)", "malformed argument 'i-1'"},
      {"t0 = add(i0, 1e39)", "number 1e39 out of f32 range"},
      {"t0 = add(i0, 1e999)", "number 1e999 out of f32 range"},
      {"t0 = add(i0, i16)", "input i16 out of range: at most 16 inputs (i0..i15)"},
      {"t0 = add(i0, i99999999999)", "input i99999999999 out of range"},
      {"t0 = nn.leaky_relu(i0, i1)",
       "argument 2 of nn.leaky_relu must be a number (alpha), got 'i1'"},
      {"t0 = exp(i0); t1 = clip(t0, 0, t0)",
       "argument 3 of clip must be a number (a_min and a_max), got 't0'"},
      {"t0 = clip(i0, 1, -1)", "clip: a_min 1 must not exceed a_max -1"},
      {"t0 = exp(2.5)", "program reads no input: expected at least one iJ"},
      {too_long, "program has 65 statements, at most 64"},
  };
  for (const auto& c : kCases) {
    const absl::Status status = BindProgram(c.program);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.program;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message)) << c.program;
    EXPECT_THAT(std::string(status.message()), HasSubstr("kernel 'fused_elementwise'"));
  }
  // The limits themselves are fine.
  EXPECT_TRUE(BindProgram(too_long.substr(0, too_long.rfind(';'))).ok());
  EXPECT_TRUE(BindProgram("t0 = add(i0, i15)", 16).ok());
  EXPECT_TRUE(BindProgram("t0 = clip(i0, -inf, 6); t1 = add(t0, -1e-12); t2 = add(t1, 3.)").ok());
}

TEST(FusedElementwiseErrorTest, BindRejectsMissingAndUnknownAttributes) {
  absl::Status missing = DefaultRegistry().Bind(kFused, {}, 1, 1).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("program"));
  absl::Status unknown =
      DefaultRegistry()
          .Bind(kFused, {{"program", std::string("t0 = exp(i0)")}, {"programme", int64_t{1}}}, 1, 1)
          .status();
  EXPECT_THAT(std::string(unknown.message()), HasSubstr("programme"));
  absl::Status typed = DefaultRegistry().Bind(kFused, {{"program", int64_t{3}}}, 1, 1).status();
  EXPECT_THAT(std::string(typed.message()), HasSubstr("program"));
}

TEST(FusedElementwiseErrorTest, CallChecksInputsAndOutput) {
  std::mt19937 rng(9);
  const std::string program = "t0 = add(i0, i1); t1 = tanh(t0)";
  NDArray a = RandomTensor({2, 3}, DType::kF32, rng);
  NDArray b = RandomTensor({3}, DType::kF32, rng);

  absl::StatusOr<NDArray> count = RunFused(program, {a, b, b});
  EXPECT_THAT(std::string(count.status().message()),
              HasSubstr("fused_elementwise: the program reads inputs up to i1: expected 2 "
                        "inputs, got 3"));
  count = RunFused(program, {a});
  EXPECT_THAT(std::string(count.status().message()), HasSubstr("expected 2 inputs, got 1"));

  absl::StatusOr<NDArray> dtype = RunFused(program, {a, RandomTensor({3}, DType::kI32, rng)});
  EXPECT_EQ(dtype.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dtype.status().message()),
              HasSubstr("fused_elementwise: input i1 has dtype i32, expected f32"));

  absl::StatusOr<NDArray> shapes = RunFused(program, {a, RandomTensor({4}, DType::kF32, rng)});
  EXPECT_THAT(std::string(shapes.status().message()),
              HasSubstr("fused_elementwise: input i1: shapes [2, 3] and [4] do not broadcast"));

  // The kernel itself, given an output its shape function would not have allocated.
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(kFused, {{"program", program}}, 2, 1);
  ASSERT_TRUE(k.ok());
  const auto call = [&](std::vector<int64_t> shape, DType out_dtype) {
    NDArray out = *NDArrayObj::Empty(shape, out_dtype, MakeNaiveAllocator());
    NDArrayObj* args[] = {a.get(), b.get(), out.get()};
    return k->Call(args, ThreadPool::Default());
  };
  EXPECT_TRUE(call({2, 3}, DType::kF32).ok());
  EXPECT_THAT(std::string(call({2, 2}, DType::kF32).message()),
              HasSubstr("fused_elementwise: output 0 has shape [2, 2], expected [2, 3]"));
  EXPECT_THAT(std::string(call({2, 3}, DType::kF64).message()),
              HasSubstr("fused_elementwise: output 0 has dtype f64, expected f32"));
  // Empty tensors still have their dtypes checked.
  absl::StatusOr<NDArray> empty =
      RunFused(program, {RandomTensor({0, 3}, DType::kF32, rng),
                         RandomTensor({3}, DType::kI64, rng)});
  EXPECT_THAT(std::string(empty.status().message()),
              HasSubstr("input i1 has dtype i64, expected f32"));
}

TEST(FusedElementwiseErrorTest, ProgramsStartingAtAnyInputCountTheInputsRead) {
  // Inputs below the highest one read are inputs too, read or not.
  std::mt19937 rng(10);
  absl::StatusOr<NDArray> got = RunFused(
      "t0 = exp(i2)", {RandomTensor({4, 1}, DType::kF32, rng), RandomTensor({5}, DType::kF32, rng),
                       Scalar(0.0f)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(ShapeToString((*got)->shape()), "[4, 5]");
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ((*got)->data_as<float>()[i], 1.0f);
}

}  // namespace
}  // namespace dynvm::kernels
