// fused_elementwise: a chain of f32 elementwise operators evaluated in one pass over
// memory. The chain is a program, bound once:
//
//   program   := statement (';' statement)*           at most kMaxStatements
//   statement := 't'K '=' op '(' arg (',' arg)* ')'     K = 0, 1, 2... in order
//   arg       := 'i'J | 't'K | number                   input J, an earlier temporary, or a
//                                                       literal (std::from_chars, rounded to f32)
//
// with whitespace free between tokens; the result is the last temporary. Operators are
// the single-op kernels' (kOps below), computed by the very functions those kernels run,
// so a fused chain equals the unfused one bit for bit.
//
// Bind turns the program into statements over value indices and gives each temporary a
// block buffer, reusing the buffer of a temporary after its last read, so that a chain
// needs as many buffers as it has temporaries alive at once. A call walks the output in
// blocks of at most kBlock elements (2 KiB): a block's temporaries stay in L1 and only
// the inputs and the output touch memory. Blocks stay within a row of the innermost
// (merged) axis whenever the rows are long, so that each input is read in place or is
// one value repeated; short rows are grouped whole, inputs that vary along rows only are
// tiled once per thread, and the others, unless they have the output's shape, are
// gathered row by row (Access). A value that is one repeated value (a literal, a
// broadcast input, or what is computed from them) is computed once per block, not per
// element.
//
// A call makes a Plan (the loop, the grid, each input's access) and runs the grid's
// blocks in parallel. FusedProgram (the header) runs the same plan for other kernels,
// which ask for ranges of the output one thread at a time (RangeEvaluator): a range's
// whole rows run as the grid's blocks would, partial rows run by run.
#include "kernels/elementwise/fused_elementwise.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "kernels/elementwise/binary_ops.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/elementwise/native_elementwise.h"
#include "kernels/elementwise/ukernels.h"
#include "kernels/internal/checks.h"
#include "kernels/microkernels.h"
#include "kernels/scratch.h"

namespace dynvm::kernels {
namespace {

using elementwise::VUnaryOp;
using elementwise::VUnaryParams;
using elementwise::VUnaryUkernel;

constexpr char kName[] = "fused_elementwise";

constexpr int kMaxStatements = kFusedElementwiseMaxStatements;
constexpr int kMaxInputs = kFusedElementwiseMaxInputs;
// Elements per block: the temporaries of a block, and its gathered inputs, stay in L1.
constexpr int64_t kBlock = 512;

// Value indices: inputs, then temporaries, then literals (at most two per statement).
constexpr int kTempBase = kMaxInputs;
constexpr int kLiteralBase = kTempBase + kMaxStatements;
constexpr int kMaxValues = kLiteralBase + 2 * kMaxStatements;

// An operand within a block: p[0, n) if it advances (stride 1), or the one value *p
// repeated (stride 0).
struct Value {
  const float* p;
  int64_t stride;
};

// ---------------------------------------------------------------------------------------
// Operators.

// c[j] = Op(a[j], b[j]) for j < n; an operand of stride 0 repeats its value, and n is 1
// when both do. `c` may be a.p or b.p (elements are read before they are written).
using BinaryBlockFn = void (*)(int64_t n, Value a, Value b, float* c);

template <typename Op>
void BinaryBlock(int64_t n, Value a, Value b, float* c) {
  if (a.stride == 0 && b.stride == 0) {
    c[0] = Op::Apply(*a.p, *b.p);
  } else if (b.stride == 0) {
    const float y = *b.p;
    for (int64_t j = 0; j < n; ++j) c[j] = Op::Apply(a.p[j], y);
  } else if (a.stride == 0) {
    const float x = *a.p;
    for (int64_t j = 0; j < n; ++j) c[j] = Op::Apply(x, b.p[j]);
  } else {
    for (int64_t j = 0; j < n; ++j) c[j] = Op::Apply(a.p[j], b.p[j]);
  }
}

// An operator of the program. Its arguments are operands (values of the program), then
// `num_params` constants of the operator (literals only).
struct OpSpec {
  const char* name;  // the single-op kernel's name (gelu_tanh: gelu, approximate="tanh")
  int num_args;
  int num_params;
  const char* params;    // their names, for messages
  BinaryBlockFn binary;  // null for a unary map
  VUnaryOp unary;
};

constexpr OpSpec kOps[] = {
    {"negative", 1, 0, "", nullptr, VUnaryOp::kNeg},
    {"abs", 1, 0, "", nullptr, VUnaryOp::kAbs},
    {"exp", 1, 0, "", nullptr, VUnaryOp::kExp},
    {"log", 1, 0, "", nullptr, VUnaryOp::kLog},
    {"sqrt", 1, 0, "", nullptr, VUnaryOp::kSqrt},
    {"rsqrt", 1, 0, "", nullptr, VUnaryOp::kRsqrt},
    {"reciprocal", 1, 0, "", nullptr, VUnaryOp::kReciprocal},
    {"tanh", 1, 0, "", nullptr, VUnaryOp::kTanh},
    {"sigmoid", 1, 0, "", nullptr, VUnaryOp::kSigmoid},
    {"nn.relu", 1, 0, "", nullptr, VUnaryOp::kRelu},
    {"nn.leaky_relu", 2, 1, "alpha", nullptr, VUnaryOp::kLeakyRelu},
    {"gelu", 1, 0, "", nullptr, VUnaryOp::kGeluErf},
    {"gelu_tanh", 1, 0, "", nullptr, VUnaryOp::kGeluTanh},
    {"erf", 1, 0, "", nullptr, VUnaryOp::kErf},
    {"sin", 1, 0, "", nullptr, VUnaryOp::kSin},
    {"cos", 1, 0, "", nullptr, VUnaryOp::kCos},
    {"floor", 1, 0, "", nullptr, VUnaryOp::kFloor},
    {"ceil", 1, 0, "", nullptr, VUnaryOp::kCeil},
    {"round", 1, 0, "", nullptr, VUnaryOp::kRound},
    {"sign", 1, 0, "", nullptr, VUnaryOp::kSign},
    {"clip", 3, 2, "a_min and a_max", nullptr, VUnaryOp::kClip},
    {"add", 2, 0, "", BinaryBlock<elementwise::Add>, {}},
    {"subtract", 2, 0, "", BinaryBlock<elementwise::Subtract>, {}},
    {"multiply", 2, 0, "", BinaryBlock<elementwise::Multiply>, {}},
    {"divide", 2, 0, "", BinaryBlock<elementwise::Divide>, {}},
    {"power", 2, 0, "", BinaryBlock<elementwise::Power>, {}},
    {"maximum", 2, 0, "", BinaryBlock<elementwise::Maximum>, {}},
    {"minimum", 2, 0, "", BinaryBlock<elementwise::Minimum>, {}},
    {"mod", 2, 0, "", BinaryBlock<elementwise::Mod>, {}},
    {"floor_mod", 2, 0, "", BinaryBlock<elementwise::FloorMod>, {}},
};

const OpSpec* FindOp(absl::string_view name) {
  for (const OpSpec& op : kOps) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------
// The bound program.

struct Statement {
  BinaryBlockFn binary;  // null: `unary`
  VUnaryOp unary;
  VUnaryParams params;
  int16_t args[2];       // value indices of the operands (args[1]: binary only)
  int16_t buffer;        // block buffer of the result; the last statement writes the output
};

struct Program {
  std::vector<Statement> statements;
  std::vector<float> literals;  // value kLiteralBase + j
  int num_inputs = 0;           // 1 + the highest input read
  int num_buffers = 0;
  std::string attr;             // the attribute holding it, for messages
};

// A parsed argument.
struct Arg {
  enum Kind { kInput, kTemp, kLiteral } kind;
  int index;    // of the input or temporary
  float value;  // of the literal
};

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), absl::ascii_isdigit);
}

// `text` (stripped) as an argument of statement `statement`.
absl::StatusOr<Arg> ParseArg(absl::string_view text, int statement) {
  const char* end = text.data() + text.size();
  if (text.size() > 1 && (text[0] == 'i' || text[0] == 't') && AllDigits(text.substr(1))) {
    int index = 0;
    if (std::from_chars(text.data() + 1, end, index).ec != std::errc()) index = kMaxInputs;
    if (text[0] == 'i') {
      if (index >= kMaxInputs) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "input %s out of range: at most %d inputs (i0..i%d)", text, kMaxInputs,
            kMaxInputs - 1));
      }
      return Arg{Arg::kInput, index, 0.0f};
    }
    if (index >= statement) {
      return absl::InvalidArgumentError(
          statement == 0 ? absl::StrFormat("reads %s before it is assigned: no temporary is "
                                           "assigned yet", text)
                         : absl::StrFormat("reads %s before it is assigned: expected t0..t%d",
                                           text, statement - 1));
    }
    return Arg{Arg::kTemp, index, 0.0f};
  }
  double value = 0.0;
  const std::from_chars_result parsed = std::from_chars(text.data(), end, value);
  if (parsed.ec == std::errc::invalid_argument || parsed.ptr != end) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "malformed argument '%s': expected iJ, tK or a number such as 0.5 or -1e-12", text));
  }
  // Nine significant digits print every f32 exactly, and ±FLT_MAX prints as
  // 3.40282347e+38, just above it: what rounds to a finite f32 (below FLT_MAX plus half
  // an ulp) is in range, and rounds (the cast of a value above FLT_MAX would be
  // undefined, so it is clamped).
  constexpr double kRoundsToInfinity = 0x1.ffffffp127;
  if (parsed.ec == std::errc::result_out_of_range ||
      (std::isfinite(value) && std::fabs(value) >= kRoundsToInfinity)) {
    return absl::InvalidArgumentError(absl::StrFormat("number %s out of f32 range", text));
  }
  constexpr double kMax = std::numeric_limits<float>::max();
  if (std::isfinite(value)) value = std::clamp(value, -kMax, kMax);
  return Arg{Arg::kLiteral, 0, static_cast<float>(value)};
}

// Sets the constants of unary `op` from `values`, checked as the single-op kernel
// checks its attributes.
absl::Status SetParams(const OpSpec& op, const float* values, VUnaryParams& params) {
  if (op.unary == VUnaryOp::kLeakyRelu) params.alpha = values[0];
  if (op.unary == VUnaryOp::kClip) {
    if (!(values[0] <= values[1])) {
      return absl::InvalidArgumentError(
          absl::StrFormat("clip: a_min %g must not exceed a_max %g", values[0], values[1]));
    }
    params.min = values[0];
    params.max = values[1];
  }
  return absl::OkStatus();
}

// Appends statement `k`, `text` (stripped), to `program`.
absl::Status ParseStatement(int k, absl::string_view text, Program& program) {
  const size_t eq = text.find('=');
  const size_t open = text.find('(');
  if (eq == text.npos || open == text.npos || open < eq || text.back() != ')') {
    return absl::InvalidArgumentError(absl::StrFormat("expected \"t%d = op(arg, ...)\"", k));
  }
  const absl::string_view target = absl::StripAsciiWhitespace(text.substr(0, eq));
  if (target != absl::StrCat("t", k)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "assigns '%s', expected t%d (temporaries are numbered in order from t0)", target, k));
  }
  const absl::string_view name = absl::StripAsciiWhitespace(text.substr(eq + 1, open - eq - 1));
  const OpSpec* op = FindOp(name);
  if (op == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "unknown op '%s': expected one of %s", name,
        absl::StrJoin(kOps, ", ", [](std::string* out, const OpSpec& o) { out->append(o.name); })));
  }
  const absl::string_view inside =
      absl::StripAsciiWhitespace(text.substr(open + 1, text.size() - open - 2));
  std::vector<absl::string_view> args;
  if (!inside.empty()) args = absl::StrSplit(inside, ',');
  if (static_cast<int>(args.size()) != op->num_args) {
    return absl::InvalidArgumentError(absl::StrFormat("%s takes %d argument%s, got %d", op->name,
                                                      op->num_args, op->num_args == 1 ? "" : "s",
                                                      args.size()));
  }
  Statement statement{op->binary, op->unary, {}, {0, 0}, 0};
  const int num_operands = op->num_args - op->num_params;
  float params[2] = {};
  for (int a = 0; a < op->num_args; ++a) {
    const absl::string_view arg_text = absl::StripAsciiWhitespace(args[a]);
    DYNVM_ASSIGN_OR_RETURN(const Arg arg, ParseArg(arg_text, k));
    if (a >= num_operands) {
      if (arg.kind != Arg::kLiteral) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "argument %d of %s must be a number (%s), got '%s'", a + 1, op->name, op->params,
            arg_text));
      }
      params[a - num_operands] = arg.value;
      continue;
    }
    switch (arg.kind) {
      case Arg::kInput:
        program.num_inputs = std::max(program.num_inputs, arg.index + 1);
        statement.args[a] = static_cast<int16_t>(arg.index);
        break;
      case Arg::kTemp:
        statement.args[a] = static_cast<int16_t>(kTempBase + arg.index);
        break;
      case Arg::kLiteral:
        statement.args[a] = static_cast<int16_t>(kLiteralBase + program.literals.size());
        program.literals.push_back(arg.value);
        break;
    }
  }
  DYNVM_RETURN_IF_ERROR(SetParams(*op, params, statement.params));
  // power(x, 2) is x * x: the correctly rounded square, bit for bit what pow gives on
  // every input including -0, infinities and NaN, and an order of magnitude faster
  // than calling pow per element. ONNX exporters spell LayerNorm's variance this way.
  if (statement.binary == BinaryBlock<elementwise::Power> &&
      statement.args[1] == kLiteralBase + static_cast<int>(program.literals.size()) - 1 &&
      program.literals.back() == 2.0f) {
    statement.binary = BinaryBlock<elementwise::Multiply>;
    statement.args[1] = statement.args[0];
    program.literals.pop_back();
  }
  program.statements.push_back(statement);
  return absl::OkStatus();
}

// Gives every temporary but the last (which is the output) a block buffer, reusing the
// buffer of a temporary from its last read on: the statement that reads it last may
// write its result there, as the microkernels read element j before writing it.
void AssignBuffers(Program& program) {
  const int n = static_cast<int>(program.statements.size());
  const auto operands = [&](const Statement& s) { return s.binary != nullptr ? 2 : 1; };
  std::vector<int> last_read(n, -1);
  for (int k = 0; k < n; ++k) {
    const Statement& s = program.statements[k];
    for (int a = 0; a < operands(s); ++a) {
      if (s.args[a] >= kTempBase && s.args[a] < kLiteralBase) last_read[s.args[a] - kTempBase] = k;
    }
  }
  std::vector<int16_t> free;
  for (int k = 0; k + 1 < n; ++k) {
    Statement& s = program.statements[k];
    for (int a = 0; a < operands(s); ++a) {
      const int v = s.args[a];
      const bool repeated = a == 1 && v == s.args[0];
      if (v >= kTempBase && v < kLiteralBase && last_read[v - kTempBase] == k && !repeated) {
        free.push_back(program.statements[v - kTempBase].buffer);
      }
    }
    if (free.empty()) {
      s.buffer = static_cast<int16_t>(program.num_buffers++);
    } else {
      s.buffer = free.back();
      free.pop_back();
    }
    if (last_read[k] < 0) free.push_back(s.buffer);  // never read
  }
}

// `text`, the value of attribute `attr`, parsed and checked.
absl::StatusOr<Program> ParseProgram(absl::string_view text, absl::string_view attr) {
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "attribute '%s' is empty: expected statements such as \"t0 = add(i0, i1); "
        "t1 = tanh(t0)\"", attr));
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ';');
  if (parts.size() > kMaxStatements) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program has %d statements, at most %d", parts.size(), kMaxStatements));
  }
  Program program;
  program.attr = std::string(attr);
  for (size_t k = 0; k < parts.size(); ++k) {
    const absl::string_view statement = absl::StripAsciiWhitespace(parts[k]);
    absl::Status status = ParseStatement(static_cast<int>(k), statement, program);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("program statement %d \"%s\": %s", k, statement, status.message()));
    }
  }
  if (program.num_inputs == 0) {
    return absl::InvalidArgumentError("program reads no input: expected at least one iJ");
  }
  AssignBuffers(program);
  return program;
}

absl::StatusOr<std::shared_ptr<const void>> BindFused(const Attrs& attrs) {
  DYNVM_RETURN_IF_ERROR(CheckKnownAttrs(attrs, {"program"}));
  DYNVM_ASSIGN_OR_RETURN(const std::string text, GetStringAttr(attrs, "program"));
  DYNVM_ASSIGN_OR_RETURN(Program program, ParseProgram(text, "program"));
  return std::shared_ptr<const void>(std::make_shared<const Program>(std::move(program)));
}

// ---------------------------------------------------------------------------------------
// Evaluation.

// The output split into blocks of at most kBlock elements. Rows of the loop's innermost
// axis longer than half a block are cut into equal blocks within the row; shorter rows
// are grouped whole, so that every block starts at a row.
struct BlockGrid {
  bool cut;
  int64_t unit;      // elements of a row (cut rows), or of the output (grouped rows)
  int64_t per_unit;  // blocks per unit
  int64_t size;      // elements per block, but the last of a unit
  int64_t count;     // blocks in all

  // [begin, end) of block `i`.
  std::pair<int64_t, int64_t> Block(int64_t i) const {
    const int64_t start = (i / per_unit) * unit;
    const int64_t begin = start + (i % per_unit) * size;
    return {begin, std::min(begin + size, start + unit)};
  }
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The grid of an output of `total` elements in rows of `row` (both > 0).
BlockGrid MakeBlockGrid(int64_t row, int64_t total) {
  if (2 * row > kBlock) {
    const int64_t per_row = CeilDiv(row, kBlock);
    return {true, row, per_row, CeilDiv(row, per_row), total / row * per_row};
  }
  const int64_t size = kBlock / row * row;
  const int64_t count = CeilDiv(total, size);
  return {false, total, count, size, count};
}

// How a block reads an input.
enum class Access : uint8_t {
  kRun,      // cut rows: in place at the run's offset, or its one value
  kDense,    // grouped rows, the output's shape (but for extents of 1): in place
  kUniform,  // grouped rows, one element: that value
  kTiled,    // grouped rows, varying along rows only: the same for every block, tiled once
  kGather,   // grouped rows, otherwise: gathered row by row
};

// The inputs of a call as the blocks read them.
template <size_t N>
struct Inputs {
  int count;
  const float* data[N];
  Access access[N];
  bool gathers;  // some input is kGather (so the loop has rank >= 2)
};

// One call's evaluation, for programs of at most N inputs: the broadcast loop over the
// inputs, its grid of blocks, and how blocks read each input.
template <size_t N>
struct Plan {
  const Program* program;
  const VUnaryUkernel* vunary;  // the unary microkernel table
  BroadcastLoop<N> loop;
  BroadcastLoop<N> rows;  // `loop` without its innermost axis, if some input is gathered
  int64_t row;            // extent of the loop's innermost axis (1 for an empty output)
  BlockGrid grid;
  Inputs<N> in;
};

// `loop` without its innermost axis, of rank >= 2: a loop over its rows, whose strides
// are any.
template <size_t N>
BroadcastLoop<N> RowLoop(const BroadcastLoop<N>& loop) {
  BroadcastLoop<N> rows = loop;
  rows.rank = loop.rank - 1;
  rows.num_elements = loop.num_elements / loop.extents[loop.rank - 1];
  return rows;
}

// How blocks of `grid` read input `k` of `loop`, which has `num_elements`.
template <size_t N>
Access ChooseAccess(const BroadcastLoop<N>& loop, const BlockGrid& grid, int k,
                    int64_t num_elements) {
  if (grid.cut) return Access::kRun;
  if (num_elements == loop.num_elements) return Access::kDense;
  if (num_elements == 1) return Access::kUniform;
  bool rows_alike = loop.strides[k][loop.rank - 1] == 1;
  for (int d = 0; d + 1 < loop.rank; ++d) rows_alike = rows_alike && loop.strides[k][d] == 0;
  return rows_alike ? Access::kTiled : Access::kGather;
}

// The plan of `program` over `inputs` broadcast to `shape`.
template <size_t N>
void MakePlan(const Program& program, absl::Span<NDArrayObj* const> inputs,
              absl::Span<const int64_t> shape, Plan<N>& plan) {
  std::array<absl::Span<const int64_t>, N> shapes;  // absent inputs: rank 0, never advance
  for (int k = 0; k < program.num_inputs; ++k) shapes[k] = inputs[k]->shape();
  plan.program = &program;
  plan.vunary = GetMicrokernels().elementwise.vunary;
  plan.loop = MakeBroadcastLoop<N>(shapes, shape);
  const int64_t total = plan.loop.num_elements;
  plan.row = total == 0 ? 1 : plan.loop.extents[plan.loop.rank - 1];
  plan.grid = MakeBlockGrid(plan.row, total);
  plan.in = Inputs<N>{program.num_inputs, {}, {}, false};
  for (int k = 0; k < plan.in.count; ++k) {
    plan.in.data[k] = inputs[k]->data_as<float>();
    plan.in.access[k] = ChooseAccess(plan.loop, plan.grid, k, inputs[k]->num_elements());
    plan.in.gathers = plan.in.gathers || plan.in.access[k] == Access::kGather;
  }
  plan.rows = plan.in.gathers ? RowLoop(plan.loop) : plan.loop;
}

// What a task of a call works in: the program's values as a block sees them, and the
// calling thread's block buffers.
struct Workspace {
  float* buffers;  // the temporaries' block buffers (kBlock floats each)
  float* gather;   // kBlock floats per input, for gathered and tiled inputs
  Value values[kMaxValues];
};

// Sets up `ws` for a task of `plan` whose grouped blocks have at most `tile` elements
// (a multiple of the row, at most the grid's block size): literals, and kTiled inputs
// tiled once into `gather`.
template <size_t N>
void StartTask(const Plan<N>& plan, int64_t tile, Workspace& ws) {
  const Program& program = *plan.program;
  thread_local ScratchBuffer scratch;
  ws.buffers = scratch.As<float>((program.num_buffers + plan.in.count) * kBlock);
  ws.gather = ws.buffers + program.num_buffers * kBlock;
  for (size_t j = 0; j < program.literals.size(); ++j) {
    ws.values[kLiteralBase + j] = {&program.literals[j], 0};
  }
  for (int k = 0; k < plan.in.count; ++k) {
    if (plan.in.access[k] != Access::kTiled) continue;
    float* dst = ws.gather + k * kBlock;
    for (int64_t j = 0; j < tile; j += plan.row) {
      std::memcpy(dst + j, plan.in.data[k], plan.row * sizeof(float));
    }
  }
}

// Runs the program over one block of `n` elements, its inputs in ws.values, writing
// out[0, n).
template <size_t N>
void RunBlock(const Plan<N>& plan, int64_t n, Workspace& ws, float* out) {
  const Program& program = *plan.program;
  Value* values = ws.values;
  const size_t last = program.statements.size() - 1;
  for (size_t k = 0; k <= last; ++k) {
    const Statement& s = program.statements[k];
    float* dst = k == last ? out : ws.buffers + s.buffer * kBlock;
    const Value a = values[s.args[0]];
    int64_t stride = a.stride;
    if (s.binary == nullptr) {
      plan.vunary[static_cast<int>(s.unary)](stride != 0 ? n : 1, a.p, dst, &s.params);
    } else {
      const Value b = values[s.args[1]];
      stride |= b.stride;
      s.binary(stride != 0 ? n : 1, a, b, dst);
    }
    values[kTempBase + k] = {dst, stride};
  }
  if (values[kTempBase + last].stride == 0) std::fill(out + 1, out + n, out[0]);
}

// Output elements [begin, end) into out[0, end - begin), run by run of the loop's
// innermost axis, each cut into equal blocks of at most kBlock: within a run every
// input is read in place or is one value repeated, whatever the inputs' accesses.
template <size_t N>
void RunRuns(const Plan<N>& plan, int64_t begin, int64_t end, Workspace& ws, float* out) {
  const std::array<int64_t, N> inner = plan.loop.inner_strides();
  ForEachBroadcastRun(plan.loop, begin, end, [&](const std::array<int64_t, N>& offsets,
                                                 int64_t pos, int64_t n) {
    const int64_t size = CeilDiv(n, CeilDiv(n, kBlock));
    for (int64_t j = 0; j < n; j += size) {
      for (int k = 0; k < plan.in.count; ++k) {
        ws.values[k] = {plan.in.data[k] + offsets[k] + j * inner[k], inner[k]};
      }
      RunBlock(plan, std::min(size, n - j), ws, out + (pos - begin) + j);
    }
  });
}

// Block [begin, end) of whole rows (grouped rows) into out[0, end - begin): dense
// inputs in place, uniform ones as their value, tiled ones as StartTask tiled them,
// gathered ones row by row, walking plan.rows, into ws.gather.
template <size_t N>
void RunGroupedBlock(const Plan<N>& plan, int64_t begin, int64_t end, Workspace& ws,
                     float* out) {
  const Inputs<N>& in = plan.in;
  for (int k = 0; k < in.count; ++k) {
    switch (in.access[k]) {
      case Access::kDense:
        ws.values[k] = {in.data[k] + begin, 1};
        break;
      case Access::kUniform:
        ws.values[k] = {in.data[k], 0};
        break;
      case Access::kTiled:
      case Access::kGather:
        ws.values[k] = {ws.gather + k * kBlock, 1};
        break;
      case Access::kRun:
        break;
    }
  }
  if (in.gathers) {
    const int64_t row = plan.row;
    const std::array<int64_t, N> inner = plan.loop.inner_strides();
    const std::array<int64_t, N> row_strides = plan.rows.inner_strides();
    ForEachBroadcastRun(plan.rows, begin / row, end / row, [&](const std::array<int64_t, N>& offsets,
                                                               int64_t first_row,
                                                               int64_t num_rows) {
      for (int k = 0; k < in.count; ++k) {
        if (in.access[k] != Access::kGather) continue;
        const float* src = in.data[k] + offsets[k];
        float* dst = ws.gather + k * kBlock + (first_row * row - begin);
        for (int64_t r = 0; r < num_rows; ++r, src += row_strides[k], dst += row) {
          if (inner[k] != 0) {
            std::memcpy(dst, src, row * sizeof(float));
          } else {
            std::fill_n(dst, row, *src);
          }
        }
      }
    });
  }
  RunBlock(plan, end - begin, ws, out);
}

// Output elements per parallel chunk for a program of `statements` over `inputs`:
// each statement costs about as much as streaming one more array.
int64_t ElementGrain(int64_t inputs, int64_t statements) {
  return internal::GrainForBytes(sizeof(float) * (inputs + 1 + statements));
}

// The whole output into `out`, in the grid's blocks, parallel on `pool`.
template <size_t N>
void EvaluateAll(const Plan<N>& plan, float* out, ThreadPool& pool) {
  const int64_t grain =
      CeilDiv(ElementGrain(plan.in.count, static_cast<int64_t>(plan.program->statements.size())),
              plan.grid.size);
  pool.ParallelFor(plan.grid.count, grain, [&](int64_t first, int64_t last) {
    Workspace ws;
    StartTask(plan, plan.grid.size, ws);
    for (int64_t i = first; i < last; ++i) {
      const auto [begin, end] = plan.grid.Block(i);
      if (plan.grid.cut) {
        RunRuns(plan, begin, end, ws, out + begin);
      } else {
        RunGroupedBlock(plan, begin, end, ws, out + begin);
      }
    }
  });
}

// FusedRangeEvaluator over a plan.
template <size_t N>
class RangeEvaluator final : public FusedRangeEvaluator {
 public:
  explicit RangeEvaluator(const Plan<N>& plan) : plan_(plan) {}

  // Cut rows: run by run. Grouped rows: the whole rows of the range in blocks of the
  // grid's size (so inputs are gathered or tiled as the kernel does), the partial rows
  // at either end run by run.
  void EvaluateRange(int64_t begin, int64_t count, float* dst) const override {
    if (count <= 0) return;
    const int64_t end = begin + count;
    Workspace ws;
    if (plan_.grid.cut) {
      StartTask(plan_, /*tile=*/0, ws);
      RunRuns(plan_, begin, end, ws, dst);
      return;
    }
    const int64_t row = plan_.row;
    const int64_t first = std::min(end, CeilDiv(begin, row) * row);
    const int64_t last = std::max(first, end / row * row);
    StartTask(plan_, std::min(plan_.grid.size, last - first), ws);
    RunRuns(plan_, begin, first, ws, dst);
    for (int64_t b = first; b < last; b += plan_.grid.size) {
      RunGroupedBlock(plan_, b, std::min(b + plan_.grid.size, last), ws, dst + (b - begin));
    }
    RunRuns(plan_, last, end, ws, dst + (last - begin));
  }

 private:
  const Plan<N>& plan_;
};

// Calls fn(plan) with the plan of `program` over `inputs` and `shape`, on the stack.
// The broadcast loop's cost per run grows with its operand count: few inputs, few
// operands.
template <typename Fn>
void WithPlan(const Program& program, absl::Span<NDArrayObj* const> inputs,
              absl::Span<const int64_t> shape, Fn&& fn) {
  if (program.num_inputs <= 2) {
    Plan<2> plan;
    MakePlan(program, inputs, shape, plan);
    fn(plan);
  } else if (program.num_inputs <= 4) {
    Plan<4> plan;
    MakePlan(program, inputs, shape, plan);
    fn(plan);
  } else {
    Plan<kMaxInputs> plan;
    MakePlan(program, inputs, shape, plan);
    fn(plan);
  }
}

// The output shape: the broadcast of the inputs', which must be as many as the program
// reads, all f32. Messages start with `op`.
absl::StatusOr<Shape> InferProgramShape(const Program& program, std::string_view op,
                                        absl::Span<NDArrayObj* const> inputs) {
  if (static_cast<int>(inputs.size()) != program.num_inputs) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the %s reads inputs up to i%d: expected %d inputs, got %d", op, program.attr,
        program.num_inputs - 1, program.num_inputs, inputs.size()));
  }
  Shape shape;
  for (size_t k = 0; k < inputs.size(); ++k) {
    DYNVM_RETURN_IF_ERROR(
        internal::CheckDType(op, absl::StrCat("input i", k), *inputs[k], DType::kF32));
    absl::StatusOr<Shape> joined = BroadcastShapes(shape, inputs[k]->shape());
    if (!joined.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: input i%d: %s", op, k, joined.status().message()));
    }
    shape = *std::move(joined);
  }
  return shape;
}

absl::StatusOr<Shape> InferShape(const void* state, absl::Span<NDArrayObj* const> inputs) {
  return InferProgramShape(*static_cast<const Program*>(state), kName, inputs);
}

absl::Status FusedKernel(const KernelCall& call) {
  const Program& program = *static_cast<const Program*>(call.state);
  DYNVM_ASSIGN_OR_RETURN(const Shape shape, InferShape(call.state, call.inputs()));
  const NDArrayObj& out = *call.outputs()[0];
  DYNVM_RETURN_IF_ERROR(internal::CheckOutput(kName, out, DType::kF32, shape));
  if (out.num_elements() == 0) return absl::OkStatus();
  float* y = out.data_as<float>();
  WithPlan(program, call.inputs(), shape,
           [&](const auto& plan) { EvaluateAll(plan, y, *call.pool); });
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------
// Native evaluation: the row functions compiled for the program (compiler/llvm) over
// the broadcast loop of the inputs, one call per run along its innermost axis.

struct NativePlan {
  BroadcastLoop<kMaxInputs> loop;
  std::array<const float*, kMaxInputs> data{};
  std::array<int64_t, kMaxInputs> strides{};  // along the innermost axis: 0 or 1
  size_t num_inputs = 0;
  NativeRowFn row = nullptr;

  // Elements [begin, end) of the output into dst[0, end - begin).
  void Run(int64_t begin, int64_t end, float* dst) const {
    ForEachBroadcastRun(loop, begin, end,
                        [&](const std::array<int64_t, kMaxInputs>& offsets, int64_t pos,
                            int64_t n) {
                          std::array<const float*, kMaxInputs> in;
                          for (size_t j = 0; j < num_inputs; ++j) in[j] = data[j] + offsets[j];
                          row(dst + (pos - begin), in.data(), strides.data(), n);
                        });
  }
};

// The plan of `inputs` broadcast to `shape`; the contiguous variant when every input
// advances along the innermost axis, else the strided one.
NativePlan MakeNativePlan(const NativeElementwiseCode& code, absl::Span<NDArrayObj* const> inputs,
                          absl::Span<const int64_t> shape) {
  assert(inputs.size() <= kMaxInputs);  // InferShape checked the program's count
  NativePlan plan;
  std::array<absl::Span<const int64_t>, kMaxInputs> shapes{};  // absent inputs: scalars
  plan.num_inputs = inputs.size();
  for (size_t j = 0; j < inputs.size(); ++j) {
    shapes[j] = inputs[j]->shape();
    plan.data[j] = inputs[j]->data_as<float>();
  }
  plan.loop = MakeBroadcastLoop<kMaxInputs>(shapes, shape);
  plan.strides = plan.loop.inner_strides();
  bool contiguous = true;
  for (size_t j = 0; j < inputs.size(); ++j) contiguous = contiguous && plan.strides[j] == 1;
  plan.row = contiguous ? code.contiguous : code.strided;
  return plan;
}

class NativeRangeEvaluator final : public FusedRangeEvaluator {
 public:
  explicit NativeRangeEvaluator(const NativePlan& plan) : plan_(plan) {}
  void EvaluateRange(int64_t begin, int64_t count, float* dst) const override {
    plan_.Run(begin, begin + count, dst);
  }

 private:
  const NativePlan& plan_;
};

}  // namespace

int FusedElementwiseArity(std::string_view op) {
  const OpSpec* spec = FindOp(absl::string_view(op.data(), op.size()));
  return spec == nullptr ? -1 : spec->num_args;
}

absl::Status RegisterFusedElementwiseKernels(KernelRegistry& registry) {
  return registry.Register(KernelDef{.name = kName,
                                     .num_inputs = kVariadic,
                                     .num_outputs = 1,
                                     .fn = FusedKernel,
                                     .bind = BindFused,
                                     .shape_fn = internal::SingleShapeFn<InferShape>});
}

// ---------------------------------------------------------------------------------------
// FusedProgram.

absl::StatusOr<FusedProgram> FusedProgram::Parse(std::string_view text, std::string_view attr,
                                                 const BindContext& context) {
  DYNVM_ASSIGN_OR_RETURN(Program program,
                         ParseProgram(absl::string_view(text.data(), text.size()),
                                      absl::string_view(attr.data(), attr.size())));
  FusedProgram out(std::make_shared<const Program>(std::move(program)));
  if (context.native_program) {
    if (const NativeElementwiseCode* code = context.native_program(text)) {
      out.native_ = std::make_shared<const NativeElementwiseCode>(*code);
    }
  }
  return out;
}

std::vector<FusedStatement> FusedProgram::Statements() const {
  const Program& program = *static_cast<const Program*>(program_.get());
  const auto operand = [&](int v) {
    if (v < kTempBase) return FusedOperand{FusedOperand::kInput, v, 0.0f};
    if (v < kLiteralBase) return FusedOperand{FusedOperand::kTemp, v - kTempBase, 0.0f};
    return FusedOperand{FusedOperand::kLiteral, 0, program.literals[v - kLiteralBase]};
  };
  std::vector<FusedStatement> out;
  for (const Statement& s : program.statements) {
    const OpSpec* spec = nullptr;
    for (const OpSpec& op : kOps) {
      if (s.binary != nullptr ? op.binary == s.binary : op.binary == nullptr && op.unary == s.unary) {
        spec = &op;
        break;
      }
    }
    FusedStatement statement{spec->name, spec->num_args - spec->num_params, {}, {}};
    for (int a = 0; a < statement.num_operands; ++a) statement.operands[a] = operand(s.args[a]);
    if (s.unary == VUnaryOp::kLeakyRelu) statement.params[0] = s.params.alpha;
    if (s.unary == VUnaryOp::kClip) {
      statement.params[0] = s.params.min;
      statement.params[1] = s.params.max;
    }
    out.push_back(statement);
  }
  return out;
}

int FusedProgram::num_inputs() const {
  return static_cast<const Program*>(program_.get())->num_inputs;
}

int FusedProgram::num_statements() const {
  return static_cast<int>(static_cast<const Program*>(program_.get())->statements.size());
}

absl::StatusOr<Shape> FusedProgram::InferShape(std::string_view op,
                                               absl::Span<NDArrayObj* const> inputs) const {
  return InferProgramShape(*static_cast<const Program*>(program_.get()), op, inputs);
}

void FusedProgram::Prepare(absl::Span<NDArrayObj* const> inputs, absl::Span<const int64_t> shape,
                           absl::FunctionRef<void(const FusedRangeEvaluator&)> fn) const {
  if (native_ != nullptr) {
    const NativePlan plan = MakeNativePlan(*native_, inputs, shape);
    fn(NativeRangeEvaluator(plan));
    return;
  }
  WithPlan(*static_cast<const Program*>(program_.get()), inputs, shape,
           [&](const auto& plan) { fn(RangeEvaluator(plan)); });
}

void FusedProgram::EvaluateRange(absl::Span<NDArrayObj* const> inputs,
                                 absl::Span<const int64_t> shape, int64_t begin, int64_t count,
                                 float* dst) const {
  Prepare(inputs, shape,
          [&](const FusedRangeEvaluator& eval) { eval.EvaluateRange(begin, count, dst); });
}

void FusedProgram::Evaluate(absl::Span<NDArrayObj* const> inputs, absl::Span<const int64_t> shape,
                            float* out, ThreadPool& pool) const {
  if (native_ != nullptr) {
    const NativePlan plan = MakeNativePlan(*native_, inputs, shape);
    pool.ParallelFor(plan.loop.num_elements,
                     ElementGrain(static_cast<int64_t>(inputs.size()), num_statements()),
                     [&](int64_t begin, int64_t end) { plan.Run(begin, end, out + begin); });
    return;
  }
  WithPlan(*static_cast<const Program*>(program_.get()), inputs, shape, [&](const auto& plan) {
    if (plan.loop.num_elements > 0) EvaluateAll(plan, out, pool);
  });
}

}  // namespace dynvm::kernels
