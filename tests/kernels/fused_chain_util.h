// fused_elementwise chains for tests: built as data, rendered as a program, run one
// single-op kernel at a time, and generated at random over random broadcast shapes.
// Shared by the tests of the library's fused kernel and of the generated native ones.
//
//   std::mt19937 rng(1);
//   int num_inputs = 0;
//   Chain chain = RandomChain(kFusedOps[0], /*length=*/3, /*max_inputs=*/4, &num_inputs, rng);
//   std::vector<NDArray> inputs = RandomInputs(RandomShape(rng), num_inputs, rng);
//   absl::StatusOr<NDArray> want = RunUnfused(chain, inputs);  // ProgramText(chain) fused
#ifndef DYNVM_TESTS_KERNELS_FUSED_CHAIN_UTIL_H_
#define DYNVM_TESTS_KERNELS_FUSED_CHAIN_UTIL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "objects/ndarray.h"

namespace dynvm::kernels::testing {

// The operators of a program, with the number of operands (tensor arguments) and of
// literal constants that follow them.
struct OpInfo {
  const char* name;
  int operands;
  int params;
};
inline constexpr OpInfo kFusedOps[] = {
    {"negative", 1, 0}, {"abs", 1, 0},       {"exp", 1, 0},           {"log", 1, 0},
    {"sqrt", 1, 0},     {"rsqrt", 1, 0},     {"reciprocal", 1, 0},    {"tanh", 1, 0},
    {"sigmoid", 1, 0},  {"nn.relu", 1, 0},   {"nn.leaky_relu", 1, 1}, {"gelu", 1, 0},
    {"gelu_tanh", 1, 0}, {"erf", 1, 0},      {"sin", 1, 0},           {"cos", 1, 0},
    {"floor", 1, 0},    {"ceil", 1, 0},      {"round", 1, 0},         {"sign", 1, 0},
    {"clip", 1, 2},     {"add", 2, 0},       {"subtract", 2, 0},      {"multiply", 2, 0},
    {"divide", 2, 0},   {"power", 2, 0},     {"maximum", 2, 0},       {"minimum", 2, 0},
    {"mod", 2, 0},      {"floor_mod", 2, 0},
};

// ---------------------------------------------------------------------------------------
// Chains: built here as data, rendered as a program, and run both ways.

struct Arg {
  enum Kind { kInput, kTemp, kLiteral } kind;
  int index = 0;
  float value = 0.0f;
};
inline Arg Input(int j) { return {Arg::kInput, j}; }
inline Arg Temp(int k) { return {Arg::kTemp, k}; }
inline Arg Literal(float v) { return {Arg::kLiteral, 0, v}; }

struct Step {
  std::string op;
  std::vector<Arg> args;  // operands, then literal constants
};
using Chain = std::vector<Step>;

// The program text of `chain` (literals printed so that they round-trip).
std::string ProgramText(const Chain& chain);

// A rank-0 f32 tensor.
NDArray Scalar(float v);

// The chain run one single-op kernel at a time, literals as rank-0 tensors.
absl::StatusOr<NDArray> RunUnfused(const Chain& chain, const std::vector<NDArray>& inputs);

// A chain of `length` steps starting with `first_op`, each reading the one before (so
// the last reads, through the others, every input); at most `max_inputs` inputs, their
// number in `*num_inputs`.
Chain RandomChain(const OpInfo& first_op, int length, int max_inputs, int* num_inputs,
                  std::mt19937& rng);

// A random output shape of rank 0..4 with at most ~100k elements, extents of 1, short
// and long rows, and sometimes 0.
std::vector<int64_t> RandomShape(std::mt19937& rng);

// A shape that broadcasts to `out`: a suffix of it with some extents set to 1.
std::vector<int64_t> BroadcastingShape(const std::vector<int64_t>& out, std::mt19937& rng);

// Inputs for a chain: input 0 of `out` (so that the output has that shape), the others
// broadcasting to it, values in [-2, 2).
std::vector<NDArray> RandomInputs(const std::vector<int64_t>& out, int count, std::mt19937& rng);

}  // namespace dynvm::kernels::testing

#endif  // DYNVM_TESTS_KERNELS_FUSED_CHAIN_UTIL_H_
