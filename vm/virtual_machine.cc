// The interpreter. One dispatch function (Run) keeps pc, the code pointer and the
// register window in locals and jumps between handlers with computed goto (a switch
// when DYNVM_NO_COMPUTED_GOTO is defined or the compiler lacks labels-as-values).
// Handlers are short; anything that can fail or allocate goes through out-of-line
// helpers that return a status. The verifier has already checked every operand, so
// handlers only check what depends on run-time values (the kind of a register, shapes).
#include "vm/virtual_machine.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "kernels/deadline.h"
#include "objects/adt.h"
#include "objects/ndarray.h"
#include "objects/shape_tuple.h"
#include "objects/storage.h"
#include "objects/string_object.h"
#include "vm/bytecode.h"

#if defined(__GNUC__) && !defined(DYNVM_NO_COMPUTED_GOTO)
#define DYNVM_COMPUTED_GOTO 1
#endif

namespace dynvm::vm {

// A call in progress. `resume_pc` and `result_register` are set when this frame calls
// another: where to continue and which of this frame's registers receives the result.
struct VirtualMachine::Frame {
  uint32_t function_index;
  uint32_t resume_pc;
  uint32_t result_register;
  size_t base;
};

namespace {

// The register stack never grows beyond this many values (16 bytes each).
constexpr size_t kMaxStackRegisters = size_t{1} << 24;

absl::Status KindError(const Value& v, uint32_t reg, std::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrFormat("register %d holds %s, expected %s", reg, v.TypeName(), expected));
}

absl::Status IntOverflow(std::string_view op, int64_t a, int64_t b) {
  return absl::OutOfRangeError(absl::StrFormat("integer overflow in %d %s %d", a, op, b));
}

// Floor division and modulo on int64, with the two undefined cases made errors.
absl::StatusOr<int64_t> FloorDiv(int64_t a, int64_t b, bool modulo) {
  if (b == 0) return absl::InvalidArgumentError(absl::StrFormat("division of %d by zero", a));
  if (a == INT64_MIN && b == -1) return IntOverflow(modulo ? "mod" : "/", a, b);
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) {
    --q;
    r += b;
  }
  return modulo ? r : q;
}

// Whether `v`, which If found to be neither a bool nor an int, counts as true: it must
// be a 0-d tensor, true when its element is non-zero.
absl::StatusOr<bool> TensorTruthy(const Value& v, uint32_t reg) {
  const NDArrayObj* t = v.As<NDArrayObj>();
  if (t == nullptr) return KindError(v, reg, "a bool, an int or a 0-d tensor");
  if (t->ndim() != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "condition is a tensor of shape %s, expected a 0-d tensor", ShapeToString(t->shape())));
  }
  const void* p = t->data();
  switch (t->dtype()) {
    case DType::kBool:
    case DType::kU8:
    case DType::kI8: return *static_cast<const uint8_t*>(p) != 0;
    case DType::kI16:
    case DType::kU16: return *static_cast<const uint16_t*>(p) != 0;
    case DType::kU32: return *static_cast<const uint32_t*>(p) != 0;
    case DType::kU64: return *static_cast<const uint64_t*>(p) != 0;
    case DType::kI32: return *static_cast<const int32_t*>(p) != 0;
    case DType::kI64: return *static_cast<const int64_t*>(p) != 0;
    case DType::kF32: return *static_cast<const float*>(p) != 0.0f;
    case DType::kF64: return *static_cast<const double*>(p) != 0.0;
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("condition tensor of dtype %s: expected bool, an integer dtype, f32 "
                          "or f64",
                          DTypeName(t->dtype())));
  }
}

// The dims of a shape operand: a ShapeTuple, or a 1-d i64/i32 tensor.
absl::StatusOr<Shape> ShapeOperand(const Value& v, uint32_t reg) {
  if (const ShapeTupleObj* s = v.As<ShapeTupleObj>()) return s->dims();
  const NDArrayObj* t = v.As<NDArrayObj>();
  if (t == nullptr || t->ndim() != 1 ||
      (t->dtype() != DType::kI64 && t->dtype() != DType::kI32)) {
    return KindError(v, reg, "a shape or a 1-d i64/i32 tensor");
  }
  if (t->num_elements() > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("shape of rank %d above the maximum %d", t->num_elements(), kMaxRank));
  }
  Shape dims(static_cast<size_t>(t->num_elements()));
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i] = t->dtype() == DType::kI64 ? t->data_as<int64_t>()[i] : t->data_as<int32_t>()[i];
  }
  return dims;
}

int64_t Read64(const uint32_t* words) {
  return static_cast<int64_t>(uint64_t{words[0]} | (uint64_t{words[1]} << 32));
}

absl::StatusOr<Value> AllocTensor(const Value& storage_value, uint32_t storage_reg,
                                  int64_t offset, uint32_t dtype,
                                  absl::Span<const int64_t> dims) {
  StorageObj* storage = storage_value.As<StorageObj>();
  if (storage == nullptr) return KindError(storage_value, storage_reg, "a storage");
  if (offset < 0) {
    return absl::InvalidArgumentError(absl::StrFormat("negative tensor offset %d", offset));
  }
  DYNVM_ASSIGN_OR_RETURN(NDArray t,
                         NDArrayObj::CreateNew(Storage(storage), static_cast<size_t>(offset),
                                               static_cast<DType>(dtype), dims));
  return Value(std::move(t));
}

}  // namespace

VirtualMachine::VirtualMachine(std::shared_ptr<const Executable> executable, VmOptions options)
    : executable_(std::move(executable)),
      options_(std::move(options)),
      allocator_(options_.allocator ? options_.allocator : MakePooledAllocator()),
      thread_pool_(options_.thread_pool ? options_.thread_pool : &kernels::ThreadPool::Default()) {
  frames_.reserve(64);
  size_t max_arity = 0;
  for (const KernelEntry& entry : executable_->spec().kernels) {
    max_arity = std::max<size_t>(max_arity, entry.num_inputs + entry.num_outputs);
  }
  kernel_args_.resize(max_arity);
  shapes_.resize(max_arity);
  uint32_t max_frame = 0;
  for (const Function& function : executable_->functions()) {
    max_frame = std::max(max_frame, function.num_registers);
  }
  // TailInvoke passes at most its callee's parameters, which fit in its frame.
  scratch_.resize(max_frame);
}

VirtualMachine::~VirtualMachine() = default;

absl::Status VirtualMachine::EnsureRegisters(size_t count) {
  if (count <= registers_.size()) return absl::OkStatus();
  if (count > kMaxStackRegisters) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "register stack of %d values exceeds the limit of %d", count, kMaxStackRegisters));
  }
  registers_.resize(std::max(count, std::min(2 * registers_.size(), kMaxStackRegisters)));
  return absl::OkStatus();
}

void VirtualMachine::Unwind() {
  if (!frames_.empty()) {
    const Frame& top = frames_.back();
    const size_t end = top.base + executable_->function(top.function_index).num_registers;
    for (size_t i = 0; i < end; ++i) registers_[i].Clear();
  }
  frames_.clear();
}

namespace {

// Checks arguments against a signature, binding each symbol to the first extent it
// meets (every occurrence in one call must agree).
class ArgumentChecker {
 public:
  explicit ArgumentChecker(const Function& function) : function_(function) {}

  absl::Status Check(absl::Span<const Value> args) {
    if (args.size() != function_.params.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "function '%s' takes %d arguments, got %d", function_.name, function_.params.size(),
          args.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      arg_ = i;
      path_.clear();
      DYNVM_RETURN_IF_ERROR(CheckValue(function_.params[i], args[i]));
    }
    return absl::OkStatus();
  }

 private:
  // A symbol's extent and where it was bound.
  struct Binding {
    const std::string* symbol;
    int64_t extent;
    size_t arg;
    std::string path;
  };

  absl::Status Mismatch(const ValueSpec& spec, std::string_view detail) const {
    const ValueSpec& param = function_.params[arg_];
    return absl::InvalidArgumentError(absl::StrFormat("argument %d ('%s')%s of '%s': expected %s, %s",
                                                      arg_, param.name, path_, function_.name,
                                                      ValueSpecToString(spec), detail));
  }

  absl::Status CheckValue(const ValueSpec& spec, const Value& arg) {
    auto got_kind = [&] { return Mismatch(spec, absl::StrFormat("got %s", arg.TypeName())); };
    switch (spec.kind) {
      case ValueSpec::Kind::kAny: return absl::OkStatus();
      case ValueSpec::Kind::kInt: return arg.is_int() ? absl::OkStatus() : got_kind();
      case ValueSpec::Kind::kFloat: return arg.is_float() ? absl::OkStatus() : got_kind();
      case ValueSpec::Kind::kBool: return arg.is_bool() ? absl::OkStatus() : got_kind();
      case ValueSpec::Kind::kTuple: return CheckTuple(spec, arg);
      case ValueSpec::Kind::kTensor: return CheckTensor(spec, arg);
    }
    return got_kind();
  }

  absl::Status CheckTuple(const ValueSpec& spec, const Value& arg) {
    const ADTObj* t = arg.As<ADTObj>();
    if (t == nullptr || t->tag() != 0) return Mismatch(spec, absl::StrFormat("got %s", arg.TypeName()));
    if (t->size() != spec.fields.size()) {
      return Mismatch(spec, absl::StrFormat("got a tuple of %d fields", t->size()));
    }
    const size_t outer = path_.size();
    for (size_t k = 0; k < spec.fields.size(); ++k) {
      path_.resize(outer);
      absl::StrAppend(&path_, ", field ", k);
      DYNVM_RETURN_IF_ERROR(CheckValue(spec.fields[k], t->fields()[k]));
    }
    path_.resize(outer);
    return absl::OkStatus();
  }

  absl::Status CheckTensor(const ValueSpec& spec, const Value& arg) {
    const NDArrayObj* t = arg.As<NDArrayObj>();
    if (t == nullptr) return Mismatch(spec, absl::StrFormat("got %s", arg.TypeName()));
    const std::string got = absl::StrFormat("got %s%s", DTypeName(t->dtype()), ShapeToString(t->shape()));
    if (t->dtype() != spec.dtype) return Mismatch(spec, absl::StrFormat("%s: wrong dtype", got));
    if (static_cast<size_t>(t->ndim()) != spec.dims.size()) {
      return Mismatch(spec, absl::StrFormat("%s: rank %d, expected %d", got, t->ndim(), spec.dims.size()));
    }
    for (size_t d = 0; d < spec.dims.size(); ++d) {
      const DimSpec& dim = spec.dims[d];
      const int64_t extent = t->shape()[d];
      if (dim.extent >= 0 && extent != dim.extent) {
        return Mismatch(spec, absl::StrFormat("%s: dim %d is %d, expected %d", got, d, extent, dim.extent));
      }
      if (dim.symbol.empty()) continue;
      auto it = std::find_if(bound_.begin(), bound_.end(),
                             [&](const Binding& b) { return *b.symbol == dim.symbol; });
      if (it == bound_.end()) {
        bound_.push_back({&dim.symbol, extent, arg_, path_});
      } else if (it->extent != extent) {
        return Mismatch(spec, absl::StrFormat("%s: dim %d is %d but %s = %d from argument %d ('%s')%s",
                                              got, d, extent, dim.symbol, it->extent, it->arg,
                                              function_.params[it->arg].name, it->path));
      }
    }
    return absl::OkStatus();
  }

  const Function& function_;
  absl::InlinedVector<Binding, 8> bound_;  // few per signature
  size_t arg_ = 0;                         // the argument being checked
  std::string path_;                       // ", field 1, field 0" inside tuples
};

}  // namespace

absl::Status CheckArguments(const Function& function, absl::Span<const Value> args) {
  return ArgumentChecker(function).Check(args);
}

namespace {

// Steps between two looks at the clock when a deadline is set: a call or backward jump
// costs a few ns, a clock read about 20.
constexpr int64_t kStepsPerDeadlineCheck = 1024;
constexpr int64_t kNoDeadline = kernels::kNoKernelDeadline;

// Deadlines are kept on the monotonic clock (kernels/deadline.h), that of the kernels'
// own deadline, which the invocation's is.
using kernels::SteadyNowNs;

// `now` plus `d`, saturated to the int64 range; an infinite `d` is no deadline.
int64_t SteadyDeadline(int64_t now, absl::Duration d) {
  if (d == absl::InfiniteDuration()) return kNoDeadline;
  int64_t deadline;
  if (__builtin_add_overflow(now, absl::ToInt64Nanoseconds(d), &deadline)) {
    return d > absl::ZeroDuration() ? kNoDeadline : INT64_MIN;
  }
  return deadline;
}

}  // namespace

absl::StatusOr<uint32_t> VirtualMachine::FindFunction(std::string_view name) const {
  std::optional<uint32_t> index = executable_->FunctionIndex(name);
  if (!index) return absl::NotFoundError(absl::StrFormat("no function named '%s'", name));
  return *index;
}

absl::StatusOr<Value> VirtualMachine::Invoke(std::string_view function,
                                             absl::Span<const Value> args) {
  DYNVM_ASSIGN_OR_RETURN(uint32_t index, FindFunction(function));
  return Invoke(index, args);
}

absl::StatusOr<Value> VirtualMachine::Invoke(uint32_t function_index,
                                             absl::Span<const Value> args) {
  const int64_t now = SteadyNowNs();
  return InvokeWithin(function_index, args, now, SteadyDeadline(now, options_.timeout),
                      options_.max_memory_bytes);
}

absl::StatusOr<Value> VirtualMachine::Invoke(std::string_view function,
                                             absl::Span<const Value> args,
                                             const InvokeLimits& limits) {
  DYNVM_ASSIGN_OR_RETURN(uint32_t index, FindFunction(function));
  return Invoke(index, args, limits);
}

absl::StatusOr<Value> VirtualMachine::Invoke(uint32_t function_index,
                                             absl::Span<const Value> args,
                                             const InvokeLimits& limits) {
  const int64_t now = SteadyNowNs();
  const int64_t deadline = limits.deadline == absl::InfiniteFuture()
                               ? kNoDeadline
                               : SteadyDeadline(now, limits.deadline - absl::Now());
  return InvokeWithin(function_index, args, now, deadline, limits.max_memory_bytes);
}

absl::StatusOr<Value> VirtualMachine::InvokeWithin(uint32_t function_index,
                                                   absl::Span<const Value> args,
                                                   int64_t started_ns, int64_t deadline_ns,
                                                   int64_t max_memory_bytes) {
  if (function_index >= executable_->functions().size()) {
    return absl::NotFoundError(absl::StrFormat("function index %d out of range: %d functions",
                                               function_index, executable_->functions().size()));
  }
  if (max_memory_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "memory limit must be >= 0 bytes (0: none), got %d", max_memory_bytes));
  }
  const Function& function = executable_->function(function_index);
  DYNVM_RETURN_IF_ERROR(CheckArguments(function, args));

  started_ns_ = started_ns;
  deadline_ns_ = deadline_ns;
  DYNVM_RETURN_IF_ERROR(CheckDeadline());
  const int64_t steps = options_.max_steps > 0 ? options_.max_steps : INT64_MAX;
  steps_left_ = deadline_ns_ == kNoDeadline ? steps : std::min(steps, kStepsPerDeadlineCheck);
  steps_reserve_ = steps - steps_left_;
  memory_limit_ = max_memory_bytes;
  memory_baseline_ = memory_limit_ > 0 ? allocator_->stats().bytes_live : 0;

  DYNVM_RETURN_IF_ERROR(EnsureRegisters(function.num_registers));
  for (size_t i = 0; i < args.size(); ++i) registers_[i] = args[i];
  frames_.push_back(Frame{function_index, 0, 0, 0});
  absl::StatusOr<Value> result;
  // Long kernels stop between blocks of work once it passes; the check after each
  // kernel call then fails the invocation.
  const kernels::ScopedKernelDeadline kernel_deadline(deadline_ns_);
  if (options_.profiler != nullptr) [[unlikely]] {
    options_.profiler->Begin(*executable_, function_index);
    result = Run<true>();
    options_.profiler->End();
  } else {
    result = Run<false>();
  }
  if (!result.ok()) Unwind();
  return result;
}

namespace {

// Annotates a failure of the instruction at `pc` of `function`, naming where the
// instruction comes from when the executable says.
absl::Status AtInstruction(const absl::Status& status, const Executable& exe, const Function& function,
                           uint32_t pc) {
  const Opcode op = static_cast<Opcode>(HeaderOpcode(function.code[pc]));
  const std::string* source = SourceAt(exe.spec(), function, pc);
  return absl::Status(status.code(),
                      absl::StrFormat("function '%s', instruction %d (%s)%s: %s", function.name, pc,
                                      GetOpcodeInfo(op).mnemonic, source ? " of " + *source : "",
                                      status.message()));
}

}  // namespace

template <bool kProfile>
absl::StatusOr<Value> VirtualMachine::Run() {
  const Executable& exe = *executable_;
  const Function* func = &exe.function(frames_.back().function_index);
  // The instruction pointer into func->code; pc offsets are only computed at calls
  // and for messages.
  const uint32_t* ip = func->code.data();
  Value* regs = registers_.data();
  absl::Status status;

#define OPND(i) ip[1 + (i)]
#define REG(i) regs[OPND(i)]
// Advances past the current instruction: by a constant for fixed formats, else by the
// header's length. Used only inside CASE(name), which defines kThisFormat.
#define NEXT()                                                          \
  do {                                                                  \
    constexpr uint32_t kFixed = FixedLength(kThisFormat);               \
    ip += kFixed != 0 ? kFixed : HeaderLength(*ip);                      \
  } while (false)
#define FAIL(expr)   \
  do {               \
    status = (expr); \
    goto fail;       \
  } while (false)
#define TRY(expr)                                  \
  do {                                             \
    absl::Status dynvm_try_ = (expr);              \
    if (!dynvm_try_.ok()) FAIL(std::move(dynvm_try_)); \
  } while (false)

#ifdef DYNVM_COMPUTED_GOTO
  static constexpr void* kDispatch[] = {
#define DYNVM_OPCODE(name, mnemonic, format, meaning) &&op_##name,
#include "vm/opcodes.def"
#undef DYNVM_OPCODE
  };
#define DISPATCH()                                         \
  do {                                                     \
    if constexpr (kProfile) options_.profiler->Tick(ip);   \
    goto* kDispatch[HeaderOpcode(*ip)];                    \
  } while (false)
// Each handler body runs inside an `if constexpr` whose init-statement names the
// opcode's format, so NEXT() can advance by a compile-time length.
// Locals with destructors live in an inner block that ends before NEXT() and
// DISPATCH(): a computed goto must not leave the scope of such a variable (clang
// rejects it, and the destructor would not run).
#define CASE(name) \
  op_##name:       \
  if constexpr ([[maybe_unused]] constexpr std::string_view kThisFormat = internal::kFormat##name; true)
  DISPATCH();
#else
#define DISPATCH() continue
#define CASE(name)      \
  case Opcode::k##name: \
  if constexpr ([[maybe_unused]] constexpr std::string_view kThisFormat = internal::kFormat##name; true)
  for (;;) {
    if constexpr (kProfile) options_.profiler->Tick(ip);
    switch (static_cast<Opcode>(HeaderOpcode(*ip))) {
#endif

  CASE(Move) {
    REG(0) = REG(1);
    NEXT();
    DISPATCH();
  }
  CASE(Ret) {
    {
      Value result = std::move(REG(0));
      for (uint32_t i = 0; i < func->num_registers; ++i) regs[i].Clear();
      frames_.pop_back();
      if (frames_.empty()) return result;
      const Frame& caller = frames_.back();
      func = &exe.function(caller.function_index);
      ip = func->code.data() + caller.resume_pc;
      regs = registers_.data() + caller.base;
      regs[caller.result_register] = std::move(result);
    }
    DISPATCH();
  }
  CASE(Fatal) {
    const std::string& message = exe.constant(OPND(0)).As<StringObj>()->value();
    FAIL(absl::AbortedError(absl::StrFormat("fatal: %s", message)));
  }
  CASE(Goto) {
    const int32_t offset = static_cast<int32_t>(OPND(0));
    if (offset <= 0 && --steps_left_ < 0) [[unlikely]] TRY(NextStepSlice());
    ip += offset;
    DISPATCH();
  }
  CASE(If) {
    const Value& cond = REG(0);
    bool truth;
    if (cond.is_bool() || cond.is_int()) [[likely]] {
      truth = cond.int_value() != 0;
    } else {
      absl::StatusOr<bool> t = TensorTruthy(cond, OPND(0));
      if (!t.ok()) FAIL(t.status());
      truth = *t;
    }
    const int32_t offset = static_cast<int32_t>(truth ? OPND(1) : OPND(2));
    if (offset <= 0 && --steps_left_ < 0) [[unlikely]] TRY(NextStepSlice());
    ip += offset;
    DISPATCH();
  }
  CASE(Invoke) {
    const uint32_t callee_index = OPND(1);
    const Function& callee = exe.function(callee_index);
    const uint32_t n = OPND(2);
    const size_t base = frames_.back().base + func->num_registers;
    if (frames_.size() >= options_.max_call_depth) [[unlikely]] FAIL(DepthError(callee));
    if (--steps_left_ < 0) [[unlikely]] TRY(NextStepSlice());
    if (base + callee.num_registers > registers_.size()) [[unlikely]] {
      TRY(EnsureRegisters(base + callee.num_registers));
      regs = registers_.data() + frames_.back().base;
    }
    Value* callee_regs = registers_.data() + base;
    for (uint32_t i = 0; i < n; ++i) callee_regs[i].CopyIntoNone(regs[OPND(3 + i)]);
    Frame& caller = frames_.back();
    caller.result_register = OPND(0);
    NEXT();
    caller.resume_pc = static_cast<uint32_t>(ip - func->code.data());
    frames_.push_back(Frame{callee_index, 0, 0, base});
    func = &callee;
    ip = callee.code.data();
    regs = callee_regs;
    DISPATCH();
  }
  CASE(TailInvoke) {
    const uint32_t callee_index = OPND(0);
    const Function& callee = exe.function(callee_index);
    const uint32_t n = OPND(1);
    if (--steps_left_ < 0) [[unlikely]] TRY(NextStepSlice());
    const size_t base = frames_.back().base;
    if (base + callee.num_registers > registers_.size()) [[unlikely]] {
      TRY(EnsureRegisters(base + callee.num_registers));
      regs = registers_.data() + base;
    }
    const uint32_t* args = &OPND(2);
    // Copying argument j into register j in order is safe when no argument reads a
    // register an earlier copy wrote (args[j] >= j): the common case of a loop, done
    // in place. Otherwise the arguments are staged in scratch_ (all kNone between uses,
    // sized for the largest frame).
    bool in_place = true;
    for (uint32_t j = 0; j < n; ++j) in_place &= args[j] >= j;
    if (in_place) [[likely]] {
      for (uint32_t j = 0; j < n; ++j) {
        if (args[j] != j) regs[j] = regs[args[j]];
      }
    } else {
      Value* stage = scratch_.data();
      for (uint32_t j = 0; j < n; ++j) stage[j].CopyIntoNone(regs[args[j]]);
      for (uint32_t j = 0; j < n; ++j) regs[j] = std::move(stage[j]);
    }
    // The frame is reused as is: its registers are released when overwritten or at
    // Ret. Only the part the callee does not cover is cleared now, to keep every
    // register above the top frame kNone (what Invoke relies on).
    for (uint32_t i = callee.num_registers, end = func->num_registers; i < end; ++i) {
      regs[i].Clear();
    }
    frames_.back().function_index = callee_index;
    func = &callee;
    ip = callee.code.data();
    DISPATCH();
  }
  CASE(InvokeClosure) {
    const ClosureObj* closure = REG(1).As<ClosureObj>();
    if (closure == nullptr) FAIL(KindError(REG(1), OPND(1), "a closure"));
    const Function& callee = exe.function(closure->func_index());
    const uint32_t n = OPND(2);
    const uint32_t captured = closure->size();
    if (captured + n != callee.num_params()) {
      FAIL(absl::InvalidArgumentError(absl::StrFormat(
          "closure of '%s' captured %d values and is called with %d arguments: it takes %d",
          callee.name, captured, n, callee.num_params())));
    }
    const size_t base = frames_.back().base + func->num_registers;
    if (frames_.size() >= options_.max_call_depth) [[unlikely]] FAIL(DepthError(callee));
    if (--steps_left_ < 0) [[unlikely]] TRY(NextStepSlice());
    // `closure` stays valid across a regrowth of the stack: moved Values keep pointing
    // at the same object.
    if (base + callee.num_registers > registers_.size()) [[unlikely]] {
      TRY(EnsureRegisters(base + callee.num_registers));
      regs = registers_.data() + frames_.back().base;
    }
    Value* callee_regs = registers_.data() + base;
    for (uint32_t i = 0; i < captured; ++i) callee_regs[i].CopyIntoNone(closure->fields()[i]);
    for (uint32_t i = 0; i < n; ++i) callee_regs[captured + i].CopyIntoNone(regs[OPND(3 + i)]);
    Frame& caller = frames_.back();
    caller.result_register = OPND(0);
    NEXT();
    caller.resume_pc = static_cast<uint32_t>(ip - func->code.data());
    frames_.push_back(Frame{closure->func_index(), 0, 0, base});
    func = &callee;
    ip = callee.code.data();
    regs = callee_regs;
    DISPATCH();
  }
  CASE(InvokePacked) {
    {
      const kernels::BoundKernel& kernel = exe.kernel(OPND(0));
      if (deadline_ns_ != kNoDeadline) [[unlikely]] TRY(CheckDeadline());
      TRY(GatherTensors(kernel, &OPND(3), OPND(2), regs));
      NDArrayObj** args = kernel_args_.data();
      absl::Status kernel_status = kernel.Call(args, *thread_pool_);
      if (!kernel_status.ok()) {
        FAIL(absl::Status(kernel_status.code(), absl::StrFormat("kernel '%s': %s", kernel.name(),
                                                                kernel_status.message())));
      }
      // A kernel the deadline stopped left its output unfinished: fail before anything
      // reads it.
      if (deadline_ns_ != kNoDeadline) [[unlikely]] TRY(CheckDeadline());
      if constexpr (kProfile) {
        options_.profiler->AddFlops(kernel.Flops(args));
      }
    }
    NEXT();
    DISPATCH();
  }
  CASE(InvokeShapeFn) {
    {
      const kernels::BoundKernel& kernel = exe.kernel(OPND(0));
      const uint32_t num_outputs = OPND(1);
      const uint32_t num_inputs = OPND(2) - num_outputs;
      TRY(GatherTensors(kernel, &OPND(3), num_inputs, regs));
      absl::Status shape_status = kernel.InferShapes(kernel_args_.data(), shapes_.data());
      if (!shape_status.ok()) {
        FAIL(absl::Status(shape_status.code(),
                          absl::StrFormat("shape function of kernel '%s': %s", kernel.name(),
                                          shape_status.message())));
      }
      for (uint32_t i = 0; i < num_outputs; ++i) {
        REG(3 + num_inputs + i) = Value(MakeObject<ShapeTupleObj>(shapes_[i]));
      }
    }
    NEXT();
    DISPATCH();
  }
  CASE(AllocStorage) {
    {
      const Value& size = REG(1);
      if (!size.is_int()) FAIL(KindError(size, OPND(1), "an int byte count"));
      if (size.int_value() < 0) {
        FAIL(absl::InvalidArgumentError(
            absl::StrFormat("negative storage size %d", size.int_value())));
      }
      if (memory_limit_ > 0) [[unlikely]] TRY(CheckMemory(static_cast<size_t>(size.int_value())));
      absl::StatusOr<Storage> storage =
          AllocateStorage(allocator_, static_cast<size_t>(size.int_value()));
      if (!storage.ok()) FAIL(storage.status());
      REG(0) = Value(*std::move(storage));
    }
    NEXT();
    DISPATCH();
  }
  CASE(AllocTensor) {
    {
      // Operands: dst, storage, offset (2 words), dtype, rank, rank x dim (2 words each).
      const uint32_t rank = OPND(5);
      int64_t dims[kMaxRank];
      for (uint32_t i = 0; i < rank; ++i) dims[i] = Read64(&OPND(6 + 2 * i));
      absl::StatusOr<Value> t =
          AllocTensor(REG(1), OPND(1), Read64(&OPND(2)), OPND(4), absl::MakeConstSpan(dims, rank));
      if (!t.ok()) FAIL(t.status());
      REG(0) = *std::move(t);
    }
    NEXT();
    DISPATCH();
  }
  CASE(AllocTensorReg) {
    {
      const Value& offset = REG(2);
      if (!offset.is_int()) FAIL(KindError(offset, OPND(2), "an int byte offset"));
      absl::StatusOr<Shape> shape = ShapeOperand(REG(4), OPND(4));
      if (!shape.ok()) FAIL(shape.status());
      absl::StatusOr<Value> t = AllocTensor(REG(1), OPND(1), offset.int_value(), OPND(3), *shape);
      if (!t.ok()) FAIL(t.status());
      REG(0) = *std::move(t);
    }
    NEXT();
    DISPATCH();
  }
  CASE(AllocADT) {
    const uint32_t n = OPND(2);
    // Captures by value: taking the address of pc/regs would keep them out of registers.
    const uint32_t* list = &OPND(3);
    Value* frame = regs;
    REG(0) = Value(ADTObj::CreateFrom(
        OPND(1), n, [frame, list](uint32_t i) -> const Value& { return frame[list[i]]; }));
    NEXT();
    DISPATCH();
  }
  CASE(AllocClosure) {
    const uint32_t n = OPND(2);
    const uint32_t* list = &OPND(3);
    Value* frame = regs;
    REG(0) = Value(ClosureObj::CreateFrom(
        OPND(1), n, [frame, list](uint32_t i) -> const Value& { return frame[list[i]]; }));
    NEXT();
    DISPATCH();
  }
  CASE(GetField) {
    const ADTObj* adt = REG(1).As<ADTObj>();
    if (adt == nullptr) FAIL(KindError(REG(1), OPND(1), "an adt"));
    if (OPND(2) >= adt->size()) {
      FAIL(absl::OutOfRangeError(absl::StrFormat("field %d of an adt (tag %d) with %d fields",
                                                 OPND(2), adt->tag(), adt->size())));
    }
    REG(0) = Value(adt->fields()[OPND(2)]);
    NEXT();
    DISPATCH();
  }
  CASE(SetField) {
    ADTObj* adt = REG(0).As<ADTObj>();
    if (adt == nullptr) FAIL(KindError(REG(0), OPND(0), "an adt"));
    if (OPND(1) >= adt->size()) {
      FAIL(absl::OutOfRangeError(absl::StrFormat("field %d of an adt (tag %d) with %d fields",
                                                 OPND(1), adt->tag(), adt->size())));
    }
    if (Reaches(REG(2), adt)) {
      FAIL(absl::InvalidArgumentError(absl::StrFormat(
          "field %d of an adt (tag %d) would hold the adt itself: a cycle, which reference counting "
          "cannot free",
          OPND(1), adt->tag())));
    }
    adt->mutable_fields()[OPND(1)] = REG(2);
    NEXT();
    DISPATCH();
  }
  CASE(GetTag) {
    const ADTObj* adt = REG(1).As<ADTObj>();
    if (adt == nullptr) FAIL(KindError(REG(1), OPND(1), "an adt"));
    REG(0).SetInt(adt->tag());
    NEXT();
    DISPATCH();
  }
  CASE(LoadConst) {
    REG(0) = exe.constant(OPND(1));
    NEXT();
    DISPATCH();
  }
  CASE(LoadConsti) {
    REG(0).SetInt(Read64(&OPND(1)));
    NEXT();
    DISPATCH();
  }
  CASE(LoadConstf) {
    REG(0) = Value::Float(std::bit_cast<double>(Read64(&OPND(1))));
    NEXT();
    DISPATCH();
  }
  CASE(ShapeOf) {
    const NDArrayObj* t = REG(1).As<NDArrayObj>();
    if (t == nullptr) FAIL(KindError(REG(1), OPND(1), "a tensor"));
    REG(0) = Value(MakeObject<ShapeTupleObj>(t->shape()));
    NEXT();
    DISPATCH();
  }
  CASE(Dim) {
    const Value& v = REG(1);
    const Shape* shape = nullptr;
    if (const NDArrayObj* t = v.As<NDArrayObj>()) shape = &t->shape();
    if (const ShapeTupleObj* s = v.As<ShapeTupleObj>()) shape = &s->dims();
    if (shape == nullptr) FAIL(KindError(v, OPND(1), "a tensor or a shape"));
    if (OPND(2) >= shape->size()) {
      FAIL(absl::OutOfRangeError(
          absl::StrFormat("axis %d of a shape of rank %d", OPND(2), shape->size())));
    }
    REG(0).SetInt((*shape)[OPND(2)]);
    NEXT();
    DISPATCH();
  }
  CASE(MakeShape) {
    const uint32_t n = OPND(1);
    if (n > static_cast<uint32_t>(kMaxRank)) {
      FAIL(absl::InvalidArgumentError(
          absl::StrFormat("shape of rank %d above the maximum %d", n, kMaxRank)));
    }
    int64_t dims[kMaxRank];
    for (uint32_t i = 0; i < n; ++i) {
      const Value& d = REG(2 + i);
      if (!d.is_int()) FAIL(KindError(d, OPND(2 + i), "an int dimension"));
      dims[i] = d.int_value();
    }
    TRY(ShapeNumElements(absl::MakeConstSpan(dims, n)).status());
    REG(0) = Value(MakeObject<ShapeTupleObj>(absl::MakeConstSpan(dims, n)));
    NEXT();
    DISPATCH();
  }
  CASE(ReshapeTensor) {
    {
      NDArrayObj* t = REG(1).As<NDArrayObj>();
      if (t == nullptr) FAIL(KindError(REG(1), OPND(1), "a tensor"));
      absl::StatusOr<Shape> shape = ShapeOperand(REG(2), OPND(2));
      if (!shape.ok()) FAIL(shape.status());
      absl::StatusOr<NDArray> view = Reshape(NDArray(t), *shape);
      if (!view.ok()) FAIL(view.status());
      REG(0) = Value(*std::move(view));
    }
    NEXT();
    DISPATCH();
  }
  CASE(DeviceCopy) {
    {
      NDArrayObj* t = REG(1).As<NDArrayObj>();
      if (t == nullptr) FAIL(KindError(REG(1), OPND(1), "a tensor"));
      if (memory_limit_ > 0) [[unlikely]] TRY(CheckMemory(t->nbytes()));
      absl::StatusOr<NDArray> copy = Copy(NDArray(t), allocator_);
      if (!copy.ok()) FAIL(copy.status());
      REG(0) = Value(*std::move(copy));
    }
    NEXT();
    DISPATCH();
  }
  CASE(KillRegister) {
    REG(0).Clear();
    NEXT();
    DISPATCH();
  }

// Integer instructions: both operands must be unboxed ints. `body` computes `r` from
// `a` and `b` and may FAIL.
#define DYNVM_INT_OP(name, body)                                            \
  CASE(name) {                                                              \
    const Value& va = REG(1);                                               \
    const Value& vb = REG(2);                                               \
    if (!va.is_int()) [[unlikely]] FAIL(KindError(va, OPND(1), "an int"));  \
    if (!vb.is_int()) [[unlikely]] FAIL(KindError(vb, OPND(2), "an int"));  \
    {                                                                       \
      const int64_t a = va.int_value(), b = vb.int_value();                 \
      body;                                                                 \
    }                                                                       \
    NEXT();                                                                 \
    DISPATCH();                                                             \
  }
#define DYNVM_CHECKED(builtin, sym)                              \
  int64_t r;                                                     \
  if (builtin(a, b, &r)) FAIL(IntOverflow(sym, a, b));           \
  REG(0).SetInt(r)
#define DYNVM_DIVISION(modulo)                                   \
  absl::StatusOr<int64_t> r = FloorDiv(a, b, modulo);            \
  if (!r.ok()) FAIL(r.status());                                 \
  REG(0).SetInt(*r)

  DYNVM_INT_OP(AddI, DYNVM_CHECKED(__builtin_add_overflow, "+"))
  DYNVM_INT_OP(SubI, DYNVM_CHECKED(__builtin_sub_overflow, "-"))
  DYNVM_INT_OP(MulI, DYNVM_CHECKED(__builtin_mul_overflow, "*"))
  DYNVM_INT_OP(DivI, DYNVM_DIVISION(false))
  DYNVM_INT_OP(ModI, DYNVM_DIVISION(true))
  DYNVM_INT_OP(MinI, REG(0).SetInt(a < b ? a : b))
  DYNVM_INT_OP(MaxI, REG(0).SetInt(a > b ? a : b))
  DYNVM_INT_OP(EqI, REG(0).SetBool(a == b))
  DYNVM_INT_OP(NeI, REG(0).SetBool(a != b))
  DYNVM_INT_OP(LtI, REG(0).SetBool(a < b))
  DYNVM_INT_OP(LeI, REG(0).SetBool(a <= b))

#undef DYNVM_INT_OP
#undef DYNVM_CHECKED
#undef DYNVM_DIVISION

#ifndef DYNVM_COMPUTED_GOTO
      case Opcode::kNumOpcodes: break;
    }
    FAIL(absl::InternalError("unreachable opcode"));
  }
#endif

fail:
  return AtInstruction(status, exe, *func, static_cast<uint32_t>(ip - func->code.data()));

#undef OPND
#undef REG
#undef NEXT
#undef FAIL
#undef TRY
#undef DISPATCH
#undef CASE
}

absl::Status VirtualMachine::GatherTensors(const kernels::BoundKernel& kernel,
                                           const uint32_t* registers, uint32_t count,
                                           const Value* regs) {
  for (uint32_t i = 0; i < count; ++i) {
    kernel_args_[i] = regs[registers[i]].As<NDArrayObj>();
    if (kernel_args_[i] == nullptr) [[unlikely]] {
      return absl::InvalidArgumentError(absl::StrFormat(
          "argument %d of kernel '%s': register %d holds %s, expected a tensor", i,
          kernel.name(), registers[i], regs[registers[i]].TypeName()));
    }
  }
  return absl::OkStatus();
}

absl::Status VirtualMachine::NextStepSlice() {
  if (steps_reserve_ == 0) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "step limit of %d calls and backward jumps exceeded", options_.max_steps));
  }
  DYNVM_RETURN_IF_ERROR(CheckDeadline());
  // This step is the first of the new slice.
  const int64_t slice = std::min(steps_reserve_, kStepsPerDeadlineCheck);
  steps_reserve_ -= slice;
  steps_left_ = slice - 1;
  return absl::OkStatus();
}

absl::Status VirtualMachine::CheckDeadline() const {
  if (deadline_ns_ == kNoDeadline) return absl::OkStatus();
  const int64_t now = SteadyNowNs();
  if (now <= deadline_ns_) return absl::OkStatus();
  // Durations, not int64 differences: a deadline of InfinitePast is INT64_MIN here.
  const absl::Duration budget = absl::Nanoseconds(deadline_ns_) - absl::Nanoseconds(started_ns_);
  if (budget < absl::ZeroDuration()) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "deadline exceeded: it had passed %s before the invocation began",
        absl::FormatDuration(-budget)));
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "deadline exceeded: the invocation had %s and ran %s", absl::FormatDuration(budget),
      absl::FormatDuration(absl::Nanoseconds(now - started_ns_))));
}

absl::Status VirtualMachine::CheckMemory(size_t nbytes) const {
  const int64_t held = allocator_->stats().bytes_live - memory_baseline_;
  if (nbytes <= static_cast<size_t>(memory_limit_) &&
      held <= memory_limit_ - static_cast<int64_t>(nbytes)) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrFormat(
      "memory limit of %d bytes for this invocation exceeded: it holds %d bytes and asks "
      "for %d more",
      memory_limit_, held, nbytes));
}

absl::Status VirtualMachine::DepthError(const Function& callee) const {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "call depth limit %d exceeded calling '%s'", options_.max_call_depth, callee.name));
}

}  // namespace dynvm::vm
