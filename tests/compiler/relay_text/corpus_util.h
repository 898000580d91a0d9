// What the corpus test (corpus_test.cc) needs to run the programs of
// tests/compiler/relay_text/*.relay and check them: a table of run cases, one per
// program, and helpers that build inputs (tensors, lists, tuples) and compare results
// with references computed in double precision.
//
//   const Case kCase = {"model_mlp.relay", [](vm::VirtualMachine& machine) {
//     std::optional<Value> out = Invoke(machine, {Value(x), ...});
//     ASSERT_TRUE(out.has_value());
//     ExpectTensor(*out, DType::kF32, {n, 4}, want, /*tolerance=*/1e-5);
//   }};
#ifndef DYNVM_TESTS_COMPILER_RELAY_TEXT_CORPUS_UTIL_H_
#define DYNVM_TESTS_COMPILER_RELAY_TEXT_CORPUS_UTIL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <random>
#include <string_view>
#include <vector>

#include "objects/adt.h"
#include "objects/dtype.h"
#include "objects/ndarray.h"
#include "objects/value.h"
#include "tests/compiler/reference_math.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler::corpus {

using Values = std::vector<double>;  // a tensor's elements, row-major, in double

// One program of the corpus and its check: `run` invokes the program's functions on
// `machine` at several shapes and compares every result with a reference.
struct Case {
  std::string_view file;  // the name of the .relay file in the corpus directory
  void (*run)(vm::VirtualMachine& machine);
};

// gtest prints a case as its file's name.
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

// The cases of the programs that exercise one grammar feature each (corpus_features.cc)
// and of the whole models (corpus_models.cc).
std::vector<Case> FeatureCases();
std::vector<Case> ModelCases();

// A tensor of `dtype` and `shape` holding `values` converted (rounded as a cast to the
// dtype rounds; bools are nonzero).
NDArray Tensor(DType dtype, const Shape& shape, const Values& values);
// A float32 tensor of uniform values in [lo, hi).
NDArray Random(const Shape& shape, std::mt19937& rng, double lo = -1, double hi = 1);
// Rank-0 tensors.
NDArray Scalar(DType dtype, double value);
inline NDArray Bool(bool v) { return Scalar(DType::kBool, v ? 1 : 0); }
inline NDArray I64(int64_t v) { return Scalar(DType::kI64, static_cast<double>(v)); }

// The elements of a float32 tensor (as the program's input held them).
Values ValuesOf(const NDArray& t);

// A List as the corpus defines it: Cons (tag 0) of a head and a tail, Nil (tag 1).
Value MakeList(const std::vector<Value>& items);
// The items of a List value, head first; a test failure if `list` is not one.
std::vector<Value> ListItems(const Value& list);
inline Value Tuple(const std::vector<Value>& fields) { return Value(ADTObj::Tuple(fields)); }

// `function` of `machine` on `args`; a test failure (and nullopt) if the run fails.
std::optional<Value> Invoke(vm::VirtualMachine& machine, const std::vector<Value>& args,
                            std::string_view function = "main");

// The fields of a tuple or ADT value with `size` fields; a test failure (and `size`
// empty values) otherwise.
std::vector<Value> Fields(const Value& v, size_t size);

// `got` is a tensor of `dtype` and `shape` whose elements e satisfy
// |e - want| <= tolerance * (1 + |want|) (integers and bools: tolerance 0, exact).
void ExpectTensor(const Value& got, DType dtype, const Shape& shape, const Values& want,
                  double tolerance = 0);
// `got` is a rank-0 tensor of `dtype` equal to `want` (within `tolerance` as above).
void ExpectScalar(const Value& got, DType dtype, double want, double tolerance = 0);

// Elementwise references.
Values Map(const Values& a, const std::function<double(double)>& f);
Values Zip(const Values& a, const Values& b, const std::function<double(double, double)>& f);
// Matrix products and row softmaxes: tests/compiler/reference_math.h.
using testing::MatMul;
using testing::SoftmaxRows;
// Columns [begin, end) of a [rows, cols] matrix.
Values Columns(const Values& a, int64_t rows, int64_t cols, int64_t begin, int64_t end);
double Sigmoid(double v);

}  // namespace dynvm::compiler::corpus

#endif  // DYNVM_TESTS_COMPILER_RELAY_TEXT_CORPUS_UTIL_H_
