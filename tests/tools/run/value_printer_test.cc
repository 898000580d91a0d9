// Tests of tools/run/value_printer.h. The tensor goldens are what numpy 1.24 prints for
// the same arrays with np.array2string(a, separator=', ').
#include "tools/run/value_printer.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/shape_tuple.h"
#include "objects/string_object.h"
#include "tools/run/elements.h"
#include "tools/run/input_parser.h"

namespace dynvm::tools {
namespace {

NDArray Inline(std::string_view text) {
  absl::StatusOr<NDArray> t = ParseInlineTensor(text, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *std::move(t) : NDArray();
}

// A tensor of `shape` whose element i is `value(i)`, stored as `T`.
template <typename T, typename F>
NDArray Make(DType dtype, Shape shape, F value) {
  NDArray t = *NDArrayObj::Empty(shape, dtype, MakeNaiveAllocator());
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<T>()[i] = static_cast<T>(value(i));
  return t;
}

std::string Data(const NDArray& t) { return FormatTensorData(*t); }

TEST(FormatTensorDataTest, FloatsAlignAsNumpy) {
  EXPECT_EQ(Data(Inline("2x3xf32=1.5,2,3,4,5,6.25")),
            "[[1.5 , 2.  , 3.  ],\n"
            " [4.  , 5.  , 6.25]]");
  EXPECT_EQ(Data(Inline("3xf32=-1.5,10,0.25")), "[-1.5 , 10.  ,  0.25]");
  EXPECT_EQ(Data(Inline("2xf64=-0.0,1")), "[-0.,  1.]");
  EXPECT_EQ(Data(Inline("2xf64=0.00011,0.1")), "[0.00011, 0.1    ]");
  EXPECT_EQ(Data(Inline("1x1xf64=1.5")), "[[1.5]]");
}

TEST(FormatTensorDataTest, ShortestDigitsOfTheDType) {
  EXPECT_EQ(Data(Make<float>(DType::kF32, {2}, [](int64_t i) { return (i + 1) / 3.0f; })),
            "[0.33333334, 0.6666667 ]");
  EXPECT_EQ(Data(Make<double>(DType::kF64, {2}, [](int64_t i) { return (i + 1) / 3.0; })),
            "[0.33333333, 0.66666667]");
  EXPECT_EQ(Data(Inline("2xf64=1,1.00000001")), "[1.        , 1.00000001]");
  EXPECT_EQ(Data(Inline("3xf16=0.1,0.2,0.3")), "[0.1, 0.2, 0.3]");
  EXPECT_EQ(Data(Inline("3xbf16=0.1,0.2,3")), "[0.1, 0.2, 3. ]");
}

TEST(FormatTensorDataTest, ScientificWhenMagnitudesCallForIt) {
  EXPECT_EQ(Data(Inline("4xf64=1e-5,1.5e10,-inf,nan")), "[1.0e-05, 1.5e+10,    -inf,     nan]");
  EXPECT_EQ(Data(Inline("2xf64=1e-300,1e300")), "[1.e-300, 1.e+300]");
  EXPECT_EQ(Data(Inline("2xf64=123456789,1")), "[1.23456789e+08, 1.00000000e+00]");
  EXPECT_EQ(Data(Inline("2xf64=1e-4,1")), "[1.e-04, 1.e+00]");
  EXPECT_EQ(Data(Inline("3xf16=0.1,65504,inf")), "[1.00e-01, 6.55e+04,      inf]");
  // Mantissas are filled with more digits of the exact value, not zeros.
  const float values[] = {0.001f, 3 / 7.0f, 6 / 7.0f * 1000};
  EXPECT_EQ(Data(Make<float>(DType::kF32, {3}, [&](int64_t i) { return values[i]; })),
            "[1.0000000e-03, 4.2857143e-01, 8.5714288e+02]");
}

TEST(FormatTensorDataTest, NonFiniteValues) {
  EXPECT_EQ(Data(Inline("2xf64=nan,inf")), "[nan, inf]");
  EXPECT_EQ(Data(Inline("3xf64=nan,-inf,1.5")), "[ nan, -inf,  1.5]");
}

TEST(FormatTensorDataTest, IntegersBoolsScalarsAndEmpty) {
  EXPECT_EQ(Data(Inline("2x3x4xi32=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23")),
            "[[[ 0,  1,  2,  3],\n"
            "  [ 4,  5,  6,  7],\n"
            "  [ 8,  9, 10, 11]],\n"
            "\n"
            " [[12, 13, 14, 15],\n"
            "  [16, 17, 18, 19],\n"
            "  [20, 21, 22, 23]]]");
  EXPECT_EQ(Data(Inline("2xbool=true,false")), "[ True, False]");
  EXPECT_EQ(Data(Inline("bool=true")), "True");
  EXPECT_EQ(Data(Inline("i8=-7")), "-7");
  EXPECT_EQ(Data(Inline("f32=3.5")), "3.5");
  EXPECT_EQ(Data(Inline("0x3xf64=")), "[]");
}

TEST(FormatTensorDataTest, LongRowsWrapAt75Columns) {
  EXPECT_EQ(Data(Make<float>(DType::kF32, {30}, [](int64_t i) { return i / 7.0f; })),
            "[0.        , 0.14285715, 0.2857143 , 0.42857143, 0.5714286 , 0.71428573,\n"
            " 0.85714287, 1.        , 1.1428572 , 1.2857143 , 1.4285715 , 1.5714285 ,\n"
            " 1.7142857 , 1.8571428 , 2.        , 2.142857  , 2.2857144 , 2.4285715 ,\n"
            " 2.5714285 , 2.7142856 , 2.857143  , 3.        , 3.142857  , 3.2857144 ,\n"
            " 3.4285715 , 3.5714285 , 3.7142856 , 3.857143  , 4.        , 4.142857  ]");
  EXPECT_EQ(Data(Make<int64_t>(DType::kI64, {40}, [](int64_t i) { return i * 1000 - 20000; })),
            "[-20000, -19000, -18000, -17000, -16000, -15000, -14000, -13000, -12000,\n"
            " -11000, -10000,  -9000,  -8000,  -7000,  -6000,  -5000,  -4000,  -3000,\n"
            "  -2000,  -1000,      0,   1000,   2000,   3000,   4000,   5000,   6000,\n"
            "   7000,   8000,   9000,  10000,  11000,  12000,  13000,  14000,  15000,\n"
            "  16000,  17000,  18000,  19000]");
}

TEST(FormatTensorDataTest, SummarizesPastAThousandElements) {
  EXPECT_EQ(Data(Make<float>(DType::kF32, {1001}, [](int64_t i) { return i; })),
            "[   0.,    1.,    2., ...,  998.,  999., 1000.]");
  EXPECT_EQ(Data(Make<uint8_t>(DType::kBool, {1002}, [](int64_t i) { return i % 2 == 0; })),
            "[ True, False,  True, ..., False,  True, False]");
  EXPECT_EQ(Data(Make<int64_t>(DType::kI64, {2, 1000}, [](int64_t i) { return i; })),
            "[[   0,    1,    2, ...,  997,  998,  999],\n"
            " [1000, 1001, 1002, ..., 1997, 1998, 1999]]");
  EXPECT_EQ(Data(Make<int64_t>(DType::kI64, {20, 100}, [](int64_t i) { return i; })),
            "[[   0,    1,    2, ...,   97,   98,   99],\n"
            " [ 100,  101,  102, ...,  197,  198,  199],\n"
            " [ 200,  201,  202, ...,  297,  298,  299],\n"
            " ...,\n"
            " [1700, 1701, 1702, ..., 1797, 1798, 1799],\n"
            " [1800, 1801, 1802, ..., 1897, 1898, 1899],\n"
            " [1900, 1901, 1902, ..., 1997, 1998, 1999]]");
}

TEST(FormatTensorDataTest, SummarizesEveryLongAxisOfAHigherRank) {
  const std::string text = Data(Make<double>(DType::kF64, {7, 11, 13}, [](int64_t) { return 0; }));
  const std::string block =
      "[[0., 0., 0., ..., 0., 0., 0.],\n"
      "  [0., 0., 0., ..., 0., 0., 0.],\n"
      "  [0., 0., 0., ..., 0., 0., 0.],\n"
      "  ...,\n"
      "  [0., 0., 0., ..., 0., 0., 0.],\n"
      "  [0., 0., 0., ..., 0., 0., 0.],\n"
      "  [0., 0., 0., ..., 0., 0., 0.]]";
  EXPECT_EQ(text, "[" + block + ",\n\n " + block + ",\n\n " + block + ",\n\n ...,\n\n " + block +
                      ",\n\n " + block + ",\n\n " + block + "]");
}

TEST(FormatFloatTest, AsPythonRepr) {
  EXPECT_EQ(FormatFloat(2.0), "2.0");
  EXPECT_EQ(FormatFloat(0.1), "0.1");
  EXPECT_EQ(FormatFloat(1e-5), "1e-05");
  EXPECT_EQ(FormatFloat(1e16), "1e+16");
  EXPECT_EQ(FormatFloat(1e15), "1000000000000000.0");
  EXPECT_EQ(FormatFloat(123456789012345678.0), "1.2345678901234568e+17");
  EXPECT_EQ(FormatFloat(0.0001), "0.0001");
  EXPECT_EQ(FormatFloat(-0.0), "-0.0");
  EXPECT_EQ(FormatFloat(1.5e300), "1.5e+300");
  EXPECT_EQ(FormatFloat(5e-324), "5e-324");
  EXPECT_EQ(FormatFloat(0.30000000000000004), "0.30000000000000004");
  EXPECT_EQ(FormatFloat(-INFINITY), "-inf");
  EXPECT_EQ(FormatFloat(NAN), "nan");
}

TEST(FormatElementTest, ShortestInTheDType) {
  EXPECT_EQ(FormatElement(*Inline("f32=0.1"), 0), "0.1");
  EXPECT_EQ(FormatElement(*Inline("f16=0.1"), 0), "0.1");
  EXPECT_EQ(FormatElement(*Inline("f32=1e20"), 0), "1e+20");
  EXPECT_EQ(FormatElement(*Inline("f64=1.00000001"), 0), "1.00000001");
  EXPECT_EQ(FormatElement(*Inline("2xi16=3,-4"), 1), "-4");
  EXPECT_EQ(FormatElement(*Inline("2xbool=1,0"), 0), "True");
}

TEST(FormatValueTest, ScalarsAndObjects) {
  EXPECT_EQ(FormatValue(Value::Int(-5)), "-5");
  EXPECT_EQ(FormatValue(Value::Float(2)), "2.0");
  EXPECT_EQ(FormatValue(Value::Bool(true)), "true");
  EXPECT_EQ(FormatValue(Value()), "none");
  EXPECT_EQ(FormatValue(Value(MakeObject<StringObj>("a \"b\"\n"))), "\"a \\\"b\\\"\\n\"");
  const int64_t dims[] = {2, 3};
  EXPECT_EQ(FormatValue(Value(MakeObject<ShapeTupleObj>(dims))), "shape[2, 3]");
  EXPECT_EQ(FormatValue(Value(Inline("2xf32=1,2"))), "tensor<f32>[2]\n[1., 2.]");
}

TEST(FormatValueTest, ClosuresByName) {
  vm::Function f, g;
  f.name = "f";
  g.name = "scale";
  const std::vector<vm::Function> functions = {f, g};
  PrintOptions options;
  options.functions = functions;
  Value closure(ClosureObj::Create(1, {Value::Int(3)}));
  EXPECT_EQ(FormatValue(closure, options), "closure<@scale>");
  EXPECT_EQ(FormatValue(closure), "closure<#1>");
}

TEST(FormatValueTest, AdtsOnOneLineWhenTheyFit) {
  const Value nil(ADTObj::Create(0, {}));
  const Value list(
      ADTObj::Create(1, {Value::Int(1), Value(ADTObj::Create(1, {Value::Int(2), nil}))}));
  EXPECT_EQ(FormatValue(list), "adt<tag 1>(1, adt<tag 1>(2, tuple()))");
  EXPECT_EQ(FormatValue(Value(ADTObj::Tuple({Value::Float(1.5), Value::Bool(false)}))),
            "tuple(1.5, false)");
}

TEST(FormatValueTest, AdtsWithTensorsOneFieldPerLine) {
  const Value inner(ADTObj::Tuple({Value(Inline("2x2xi32=1,2,3,4"))}));
  const Value outer(ADTObj::Tuple({Value::Int(5), inner}));
  EXPECT_EQ(FormatValue(outer),
            "tuple(\n"
            "  5,\n"
            "  tuple(\n"
            "    tensor<i32>[2, 2]\n"
            "    [[1, 2],\n"
            "     [3, 4]]\n"
            "  )\n"
            ")");
}

}  // namespace
}  // namespace dynvm::tools
