// Registration of fused_elementwise (kernels/elementwise/fused_elementwise.cc): a chain of f32
// elementwise operators, given as a small program, evaluated in one pass over memory.
// The compiler's operator-fusion pass emits it in place of chains such as
// `tanh(add(multiply(%x, %y), %b))`:
//
//   Attrs attrs = {{"program", std::string("t0 = multiply(i0, i1); t1 = add(t0, i2);"
//                                          " t2 = tanh(t1)")}};
//   absl::StatusOr<BoundKernel> k = registry.Bind("fused_elementwise", attrs, 3, 1);
//
// Other kernels read a program's result in place of an input through FusedProgram, so
// that it never reaches memory (the `prologue` of nn.softmax, nn.log_softmax and
// nn.layer_norm). The grammar, the operators and the numerics are in docs/kernels.md.
#ifndef DYNVM_KERNELS_ELEMENTWISE_FUSED_ELEMENTWISE_H_
#define DYNVM_KERNELS_ELEMENTWISE_FUSED_ELEMENTWISE_H_

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "objects/ndarray.h"

namespace dynvm::kernels {

// Adds fused_elementwise: inputs i0..iN-1 (f32, broadcast together numpy-style), one f32
// output of their broadcast shape, and the attribute `program` (string, required),
// parsed and checked once by Bind.
absl::Status RegisterFusedElementwiseKernels(KernelRegistry& registry);

// A program's limits.
inline constexpr int kFusedElementwiseMaxStatements = 64;
inline constexpr int kFusedElementwiseMaxInputs = 16;

// For the fusion pass: how many arguments operator `op` takes in a program (operands,
// then its literal parameters: 2 for nn.leaky_relu, 3 for clip), or -1 if programs do
// not have it.
int FusedElementwiseArity(std::string_view op);

// One call's evaluation of a FusedProgram, prepared by FusedProgram::Prepare: the
// broadcast loop over its inputs and how each is read. Const and shareable between
// threads; valid only inside the Prepare callback that receives it.
class FusedRangeEvaluator {
 public:
  virtual ~FusedRangeEvaluator() = default;

  // Writes elements [begin, begin + count) of the flat (row-major) output to dst[0,
  // count), on the calling thread, through its per-thread block buffers. The range must
  // lie within the output; count 0 writes nothing. Cheapest for whole rows of the
  // output's last axis (any length: long rows are cut into blocks), or runs of them.
  virtual void EvaluateRange(int64_t begin, int64_t count, float* dst) const = 0;
};

// One operand of a FusedStatement: input `index`, the result of statement `index`, or
// the literal `value`.
struct FusedOperand {
  enum Kind : uint8_t { kInput, kTemp, kLiteral };
  Kind kind;
  int index;
  float value;
};

// One statement of a parsed program, for code generators (compiler/llvm): `op` (a
// kernel name of the grammar's table) over `num_operands` operands, with the operator's
// constants in `params` (nn.leaky_relu's alpha; clip's a_min and a_max). Rewrites Parse
// made are applied: `power(x, 2)` reads `multiply(x, x)`.
struct FusedStatement {
  std::string_view op;
  int num_operands;
  FusedOperand operands[2];
  float params[2];
};

// A fused_elementwise program parsed and checked once, for kernels that read its
// result where they would read one input (a "prologue"): the program runs block by
// block into memory the kernel keeps in cache, so its result never touches memory.
// Copies share the parsed program (immutable).
//
//   // At Bind:
//   DYNVM_ASSIGN_OR_RETURN(FusedProgram p, FusedProgram::Parse(text, "prologue"));
//   // In the kernel (the shape function calls InferShape too):
//   DYNVM_ASSIGN_OR_RETURN(Shape shape, p.InferShape("nn.softmax", call.inputs()));
//   p.Prepare(call.inputs(), shape, [&](const FusedRangeEvaluator& eval) {
//     pool.ParallelFor(rows, 1, [&](int64_t r0, int64_t r1) {
//       for (int64_t r = r0; r < r1; ++r) eval.EvaluateRange(r * n, n, row_buffer);
//     });
//   });
class FusedProgram {
 public:
  // Parses `text` in fused_elementwise's grammar with fused_elementwise's errors
  // (InvalidArgument), naming attribute `attr` where a message names the program's
  // attribute. If `context` has native code for `text`, the program runs it.
  static absl::StatusOr<FusedProgram> Parse(std::string_view text,
                                            std::string_view attr = "program",
                                            const BindContext& context = {});

  // Whether evaluation runs native code (compiler/llvm) rather than the library's
  // evaluator. Either way the results are the same (see docs/native.md).
  bool native() const { return native_ != nullptr; }

  // The statements in order; the last one's result is the output.
  std::vector<FusedStatement> Statements() const;

  // 1 + the highest input iJ the program reads: the number of inputs a call takes.
  int num_inputs() const;
  // The number of statements (each costs about one more pass over a block).
  int num_statements() const;

  // The output shape for `inputs`: their broadcast. InvalidArgument, prefixed with
  // `op`, unless there are num_inputs() of them, all f32, broadcasting together.
  absl::StatusOr<Shape> InferShape(std::string_view op,
                                   absl::Span<NDArrayObj* const> inputs) const;

  // Prepares the evaluation of the program over `inputs` broadcast to `shape` (what
  // InferShape returned for them, with elements) and calls `fn` with it, on the calling
  // thread. Allocates nothing.
  void Prepare(absl::Span<NDArrayObj* const> inputs, absl::Span<const int64_t> shape,
               absl::FunctionRef<void(const FusedRangeEvaluator&)> fn) const;

  // Elements [begin, begin + count) of the output for `inputs` and `shape` (as in
  // Prepare) into dst[0, count), single-threaded. Prepare once instead for many ranges.
  void EvaluateRange(absl::Span<NDArrayObj* const> inputs, absl::Span<const int64_t> shape,
                     int64_t begin, int64_t count, float* dst) const;

  // The whole output for `inputs` and `shape` (as in Prepare) into `out`, parallel on
  // `pool`: what the fused_elementwise kernel runs. `out` may alias an input of `shape`.
  void Evaluate(absl::Span<NDArrayObj* const> inputs, absl::Span<const int64_t> shape,
                float* out, ThreadPool& pool) const;

 private:
  explicit FusedProgram(std::shared_ptr<const void> program) : program_(std::move(program)) {}

  std::shared_ptr<const void> program_;  // the parsed program (fused_elementwise.cc)
  std::shared_ptr<const NativeElementwiseCode> native_;  // null: the library's evaluator
};

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_ELEMENTWISE_FUSED_ELEMENTWISE_H_
