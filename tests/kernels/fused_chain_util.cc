// Random fused_elementwise chains for tests (tests/kernels/fused_chain_util.h).
#include "tests/kernels/fused_chain_util.h"

#include <cmath>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/kernel.h"
#include "objects/dtype.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels::testing {

namespace {

std::string ArgText(const Arg& a) {
  switch (a.kind) {
    case Arg::kInput:
      return absl::StrCat("i", a.index);
    case Arg::kTemp:
      return absl::StrCat("t", a.index);
    case Arg::kLiteral:
      break;
  }
  return absl::StrFormat("%.9g", a.value);  // round-trips every float
}

}  // namespace

std::string ProgramText(const Chain& chain) {
  std::vector<std::string> statements;
  for (size_t k = 0; k < chain.size(); ++k) {
    std::vector<std::string> args;
    for (const Arg& a : chain[k].args) args.push_back(ArgText(a));
    statements.push_back(
        absl::StrFormat("t%d = %s(%s)", k, chain[k].op, absl::StrJoin(args, ", ")));
  }
  return absl::StrJoin(statements, "; ");
}

NDArray Scalar(float v) { return TensorOf<float>({}, {v}); }

// The chain run one single-op kernel at a time, literals as rank-0 tensors.
absl::StatusOr<NDArray> RunUnfused(const Chain& chain, const std::vector<NDArray>& inputs) {
  std::vector<NDArray> temps;
  for (const Step& step : chain) {
    std::string name = step.op;
    Attrs attrs;
    std::vector<NDArray> args;
    const int operands = step.op == "add" || step.op == "subtract" || step.op == "multiply" ||
                                 step.op == "divide" || step.op == "power" ||
                                 step.op == "maximum" || step.op == "minimum" ||
                                 step.op == "mod" || step.op == "floor_mod"
                             ? 2
                             : 1;
    for (int a = 0; a < operands; ++a) {
      const Arg& arg = step.args[a];
      args.push_back(arg.kind == Arg::kInput  ? inputs[arg.index]
                     : arg.kind == Arg::kTemp ? temps[arg.index]
                                              : Scalar(arg.value));
    }
    if (step.op == "gelu_tanh") {
      name = "gelu";
      attrs["approximate"] = std::string("tanh");
    } else if (step.op == "nn.leaky_relu") {
      attrs["alpha"] = static_cast<double>(step.args[1].value);
    } else if (step.op == "clip") {
      attrs["a_min"] = static_cast<double>(step.args[1].value);
      attrs["a_max"] = static_cast<double>(step.args[2].value);
    }
    absl::StatusOr<std::vector<NDArray>> out = RunKernel(name, attrs, args);
    if (!out.ok()) return out.status();
    temps.push_back((*out)[0]);
  }
  return temps.back();
}

namespace {

// A literal of the kind a compiler folds in: a multiple of 1/8 in [-4, 4], never 0.
float RandomLiteral(std::mt19937& rng) {
  const int v = std::uniform_int_distribution<int>(-32, 31)(rng);
  return static_cast<float>(v >= 0 ? v + 1 : v) / 8.0f;
}

// A step applying `op`; `first` is its first operand. A second operand is a new input
// (the next unused one, while `*next_input` < `max_inputs`), an earlier temporary, a
// literal or an input already used, and is put first half of the time.
Step MakeStep(const OpInfo& op, Arg first, int k, int max_inputs, int* next_input,
              std::mt19937& rng) {
  Step step{op.name, {first}};
  if (op.operands == 2) {
    Arg second = Literal(RandomLiteral(rng));
    const int pick = std::uniform_int_distribution<int>(0, 3)(rng);
    if (*next_input < max_inputs && pick <= 1) {
      second = Input((*next_input)++);
    } else if (pick == 2 && k > 0) {
      second = Temp(std::uniform_int_distribution<int>(0, k - 1)(rng));
    } else if (pick == 3) {
      second = Input(std::uniform_int_distribution<int>(0, *next_input - 1)(rng));
    }
    step.args.push_back(second);
    if (rng() % 2 == 0) std::swap(step.args[0], step.args[1]);
  }
  if (op.params == 1) step.args.push_back(Literal(RandomLiteral(rng) / 8.0f + 0.5f));
  if (op.params == 2) {
    const float lo = -std::fabs(RandomLiteral(rng)) / 4.0f;
    step.args.push_back(Literal(lo));
    step.args.push_back(Literal(lo + std::fabs(RandomLiteral(rng))));
  }
  return step;
}

}  // namespace

// A chain of `length` steps starting with `first_op`, each reading the one before (so
// the last reads, through the others, every input).
Chain RandomChain(const OpInfo& first_op, int length, int max_inputs, int* num_inputs,
                  std::mt19937& rng) {
  Chain chain;
  *num_inputs = 1;
  for (int k = 0; k < length; ++k) {
    std::uniform_int_distribution<size_t> any_op(0, std::size(kFusedOps) - 1);
    const OpInfo& op = k == 0 ? first_op : kFusedOps[any_op(rng)];
    chain.push_back(MakeStep(op, k == 0 ? Input(0) : Temp(k - 1), k, max_inputs, num_inputs, rng));
  }
  return chain;
}

// A random output shape of rank 0..4 with at most ~100k elements, extents of 1, short
// and long rows, and sometimes 0.
std::vector<int64_t> RandomShape(std::mt19937& rng) {
  static constexpr int64_t kExtents[] = {1, 1, 2, 3, 5, 8, 17, 64, 300, 700, 1100};
  for (;;) {
    std::vector<int64_t> shape(std::uniform_int_distribution<int>(0, 4)(rng));
    int64_t n = 1;
    for (int64_t& d : shape) {
      d = rng() % 40 == 0 ? 0 : kExtents[rng() % std::size(kExtents)];
      n *= d;
    }
    if (n <= 100000) return shape;
  }
}

// A shape that broadcasts to `out`: a suffix of it with some extents set to 1.
std::vector<int64_t> BroadcastingShape(const std::vector<int64_t>& out, std::mt19937& rng) {
  const size_t rank = std::uniform_int_distribution<size_t>(0, out.size())(rng);
  std::vector<int64_t> shape(out.end() - rank, out.end());
  for (int64_t& d : shape) {
    if (rng() % 3 == 0) d = 1;
  }
  return shape;
}

// Inputs for a chain: input 0 of `out` (so that the output has that shape), the others
// broadcasting to it, values in [-2, 2).
std::vector<NDArray> RandomInputs(const std::vector<int64_t>& out, int count, std::mt19937& rng) {
  std::vector<NDArray> inputs = {RandomTensor(out, DType::kF32, rng, -2.0, 2.0)};
  for (int j = 1; j < count; ++j) {
    inputs.push_back(RandomTensor(BroadcastingShape(out, rng), DType::kF32, rng, -2.0, 2.0));
  }
  if (count > 1 && rng() % 2 == 0) std::swap(inputs[0], inputs[count - 1]);
  return inputs;
}

}  // namespace dynvm::kernels::testing
