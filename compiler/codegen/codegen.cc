// A function's code is first a FunctionCode, unpacked instructions with jump targets as
// instruction indices and a register per value; memory planning and register
// allocation rewrite it, and it is encoded last.
#include "compiler/codegen/codegen.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/codegen/function_code.h"
#include "compiler/codegen/memory_plan.h"
#include "compiler/codegen/register_alloc.h"
#include "objects/string_object.h"
#include "vm/bytecode.h"

namespace dynvm::compiler {
namespace {

using vm::Instruction;
using vm::Opcode;

// `depth` as vm::kMaxSpecDepth counts it: a tuple deeper than the format allows is
// left `any` (the VM does not check it).
vm::ValueSpec SpecOf(std::string name, const Type& t, int depth = 1) {
  vm::ValueSpec spec;
  spec.name = std::move(name);
  if (t.kind() == TypeKind::kTuple && depth < vm::kMaxSpecDepth) {
    spec.kind = vm::ValueSpec::Kind::kTuple;
    for (const Type& f : t.fields()) spec.fields.push_back(SpecOf("", f, depth + 1));
    return spec;
  }
  if (!t.is_tensor()) return spec;  // kAny
  spec.kind = vm::ValueSpec::Kind::kTensor;
  spec.dtype = t.dtype();
  for (const Dim& d : t.shape()) {
    spec.dims.push_back(d.is_const()    ? vm::DimSpec::Constant(d.const_value())
                        : d.is_symbol() ? vm::DimSpec::Symbol(std::string(d.symbol_name()))
                                        : vm::DimSpec::Any());
  }
  return spec;
}

// Gives `f`'s result the module's names for it: one per field of a tuple, else one.
absl::Status NameResults(const std::vector<std::string>& names, vm::Function& f) {
  if (names.empty()) return absl::OkStatus();
  vm::ValueSpec& result = f.results.front();
  if (result.kind == vm::ValueSpec::Kind::kTuple && names.size() == result.fields.size()) {
    for (size_t i = 0; i < names.size(); ++i) result.fields[i].name = names[i];
    return absl::OkStatus();
  }
  if (result.kind != vm::ValueSpec::Kind::kTuple && names.size() == 1) {
    result.name = names[0];
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "@%s: %d result names for a result of type %s", f.name, names.size(),
      vm::ValueSpecToString(result)));
}

class ModuleGen;

class FunctionGen {
 public:
  FunctionGen(ModuleGen& module, std::string name) : module_(module), name_(std::move(name)) {}

  // The global function `fn`. A closure's code (lambda_lift.h) takes the captured values,
  // then its literal's parameters (the VM passes a closure's captured values first).
  absl::StatusOr<vm::Function> Run(const Expr& fn);

 private:
  // A closure known to be made of a closure's code: `let %f = @main.fn0(%x)`. It is
  // allocated only where used as a value; a call of it is a direct call of the code.
  struct KnownClosure {
    uint32_t function;
    std::vector<int64_t> captured;  // registers
  };
  // What is in registers at a point of the code. A branch starts from the state before
  // it and leaves it as it was: the other branch and the code after must not find values
  // in registers that were never written on their path.
  struct Bound {
    absl::flat_hash_map<uintptr_t, uint32_t> values;
    absl::flat_hash_map<std::string, uint32_t> dims;  // Dim::ToString() -> its value
    absl::flat_hash_map<uintptr_t, KnownClosure> closures;  // by the let variable's identity
  };

  uint32_t NewRegister() { return next_register_++; }
  void Emit(Opcode op, std::vector<int64_t> operands, std::vector<int64_t> list = {}) {
    code_.push_back({op, std::move(operands), std::move(list)});
    sources_.push_back(source_);
  }
  // Names `at`'s source (docs/text-format.md: "model.relay:3:18") when it has one.
  absl::Status Unsupported(std::string_view what, const Expr& at) const {
    return absl::UnimplementedError(absl::StrCat(at.source().empty() ? "" : at.source() + ": ", "in @", name_,
                                                 ": code generation does not support ", std::string(what), " yet"));
  }
  const Type& TypeOf(const Expr& e) const { return *e.checked_type(); }

  absl::StatusOr<uint32_t> Gen(const Expr& e);
  absl::StatusOr<uint32_t> GenLetChain(const Expr& e);
  // The lets at the head of `e`, each value in a register; returns what follows them.
  absl::StatusOr<Expr> GenLets(const Expr& e);
  // Code that returns the value of `e` from the function: a call of a global in tail
  // position becomes tail_invoke (the frame is reused, so recursion that expresses a
  // loop runs in constant space), an if returns from each branch, anything else is
  // computed and returned.
  absl::Status GenTail(const Expr& e);
  absl::StatusOr<std::vector<int64_t>> GenArgs(const Expr& call);
  absl::StatusOr<uint32_t> GenOpCall(const Expr& call, std::vector<uint32_t> args);
  absl::StatusOr<uint32_t> GenIf(const Expr& e);
  // A call of a global function that is not a closure's code, or of a known closure:
  // the function to invoke directly and its arguments (a closure's captured values
  // first); nullopt for any other call.
  absl::StatusOr<std::optional<std::pair<uint32_t, std::vector<int64_t>>>> DirectCall(const Expr& call);
  // Binds the symbols in the dims of tensor type `t` to the extents of the tensor in
  // `reg` (a parameter's or captured value's), for shape lowering.
  void BindSymbols(const Type& t, uint32_t reg);
  // The register holding the value of `d`, computed from the bound symbols with integer
  // instructions (each distinct expression once per path); nullopt for `?` or a symbol
  // this function has no value of.
  std::optional<uint32_t> LowerDim(const Dim& d);
  uint32_t LoadInt(int64_t value) { return *LowerDim(Dim(value)); }
  // match, compiled to a decision tree: each node tests one constructor of one value
  // (get_tag, eqi, if) and continues with the clauses that still may match on each side,
  // so no tag or field is read twice on a path; a leaf moves the chosen clause's
  // variables into its registers and jumps to its body, which is generated once; a path
  // no clause matches ends in a fatal error. In tail position each body returns, else
  // each moves its value to one register and jumps past the rest.
  absl::StatusOr<uint32_t> GenMatch(const Expr& e, bool tail);
  struct MatchRow;
  struct MatchState;
  void GenDecision(std::vector<MatchRow> rows, MatchState& state);
  // Allocates a tensor of type `t` (static) in a fresh register.
  uint32_t AllocStatic(const Type& t);
  // A shape register of tensor type `t`'s dims, computed by LowerDim (once per path);
  // nullopt if some dim cannot be.
  std::optional<uint32_t> LowerShape(const Type& t);
  // Allocates a tensor of type `t`, whose dims are computed by LowerDim; nullopt if
  // some dim cannot be.
  std::optional<uint32_t> AllocSymbolic(const Type& t);
  // Allocates a tensor of dtype `dtype` and the shape in register `shape`.
  uint32_t AllocDynamic(DType dtype, int rank, uint32_t shape);

  ModuleGen& module_;
  std::string name_;
  uint32_t next_register_ = 0;
  std::vector<Instruction> code_;
  std::vector<uint32_t> sources_;  // per instruction of code_ (FunctionCode::sources)
  uint32_t source_ = kNoSource;    // the source of the instructions Emit adds now
  // For each If and Goto, the instruction indices its jump operands must hold.
  std::vector<std::pair<size_t, std::vector<size_t>>> jumps_;
  Bound bound_;
  absl::flat_hash_map<uintptr_t, uint32_t>& registers_ = bound_.values;
};

class ModuleGen {
 public:
  ModuleGen(const Module& module, const CodegenOptions& options) : module_(module), options_(options) {}

  absl::StatusOr<vm::ExecutableSpec> Run();
  const Module& module() const { return module_; }
  absl::StatusOr<uint32_t> FunctionIndex(std::string_view name) const {
    const auto it = function_index_.find(std::string(name));
    if (it == function_index_.end()) return absl::NotFoundError(absl::StrCat("no function @", std::string(name)));
    return it->second;
  }
  uint32_t Kernel(const std::string& name, const kernels::Attrs& attrs, uint32_t inputs, uint32_t outputs) {
    for (size_t i = 0; i < spec_.kernels.size(); ++i) {
      const vm::KernelEntry& k = spec_.kernels[i];
      if (k.name == name && k.attrs == attrs && k.num_inputs == inputs && k.num_outputs == outputs) {
        return static_cast<uint32_t>(i);
      }
    }
    spec_.kernels.push_back({name, attrs, inputs, outputs});
    return static_cast<uint32_t>(spec_.kernels.size() - 1);
  }
  // Whether @`name` is a closure's code (lambda_lift.h).
  bool IsClosureCode(const std::string& name) const {
    const absl::StatusOr<Expr> fn = module_.Function(name);
    return fn.ok() && compiler::IsClosureCode(*fn);
  }
  // The bytecode passes, then the encoding.
  absl::StatusOr<std::vector<uint32_t>> Finish(FunctionCode& code, std::vector<vm::SourceEntry>& source_map) {
    if (options_.plan_memory) stats_.memory += PlanMemory(code);
    stats_.registers_before += code.num_registers;
    if (options_.allocate_registers) {
      RemoveDeadCode(code);
      AllocateRegisters(code);
    }
    stats_.registers_after += code.num_registers;
    return Encode(code, &source_map);
  }
  // The index of `source` in the executable's sources (kNoSource for "").
  uint32_t Source(const std::string& source) {
    if (source.empty()) return kNoSource;
    const auto [it, inserted] = source_index_.try_emplace(source, spec_.sources.size());
    if (inserted) spec_.sources.push_back(source);
    return it->second;
  }
  const CodegenStats& stats() const { return stats_; }
  uint32_t StringConstant(const std::string& text) {
    spec_.constants.push_back(Value(MakeObject<StringObj>(text)));
    return static_cast<uint32_t>(spec_.constants.size() - 1);
  }
  uint32_t Constant(const NDArray& value) {
    const auto [it, inserted] = constant_index_.try_emplace(value.get(), spec_.constants.size());
    if (inserted) spec_.constants.push_back(Value(value));
    return static_cast<uint32_t>(it->second);
  }

 private:
  const Module& module_;
  const CodegenOptions& options_;
  CodegenStats stats_;
  vm::ExecutableSpec spec_;
  absl::flat_hash_map<std::string, uint32_t> function_index_;
  absl::flat_hash_map<const NDArrayObj*, size_t> constant_index_;
  absl::flat_hash_map<std::string, uint32_t> source_index_;
};

absl::StatusOr<vm::Function> FunctionGen::Run(const Expr& def) {
  vm::Function out;
  out.name = name_;
  std::vector<Expr> params = def.params();
  const Expr& fn = IsClosureCode(def) ? def.body() : def;
  if (&fn != &def) params.insert(params.end(), fn.params().begin(), fn.params().end());
  for (const Expr& p : params) {
    registers_[p.identity()] = NewRegister();
    out.params.push_back(SpecOf(p.name(), TypeOf(p)));
  }
  for (const Expr& p : params) BindSymbols(TypeOf(p), registers_[p.identity()]);
  DYNVM_RETURN_IF_ERROR(GenTail(fn.body()));
  out.results.push_back(SpecOf("", TypeOf(fn.body())));
  for (const auto& [at, targets] : jumps_) {
    const size_t first = code_[at].op == Opcode::kIf ? 1 : 0;
    for (size_t i = 0; i < targets.size(); ++i) code_[at].operands[first + i] = static_cast<int64_t>(targets[i]);
  }
  FunctionCode code{std::move(code_), static_cast<uint32_t>(params.size()), next_register_, std::move(sources_)};
  DYNVM_ASSIGN_OR_RETURN(out.code, module_.Finish(code, out.source_map));
  out.num_registers = code.num_registers;
  return out;
}

void FunctionGen::BindSymbols(const Type& t, uint32_t reg) {
  if (!t.is_tensor()) return;
  for (size_t i = 0; i < t.shape().size(); ++i) {
    const Dim& d = t.shape()[i];
    if (!d.is_symbol() || bound_.dims.contains(d.ToString())) continue;
    const uint32_t r = NewRegister();
    Emit(Opcode::kDim, {r, reg, static_cast<int64_t>(i)});
    bound_.dims[d.ToString()] = r;
  }
}

std::optional<uint32_t> FunctionGen::LowerDim(const Dim& d) {
  if (const auto it = bound_.dims.find(d.ToString()); it != bound_.dims.end()) return it->second;
  const auto binary = [&](Opcode op) -> std::optional<uint32_t> {
    const auto [lhs, rhs] = d.operands();
    const std::optional<uint32_t> a = LowerDim(lhs), b = a ? LowerDim(rhs) : std::nullopt;
    if (!b) return std::nullopt;
    const uint32_t r = NewRegister();
    Emit(op, {r, *a, *b});
    return r;
  };
  std::optional<uint32_t> r;
  switch (d.form()) {
    case Dim::Form::kConstant:
      r = NewRegister();
      Emit(Opcode::kLoadConsti, {*r, d.const_value()});
      break;
    case Dim::Form::kSymbol:
    case Dim::Form::kAny: return std::nullopt;  // a symbol bound here is found above
    case Dim::Form::kLinear: {
      // constant + Σ coefficient · term, the constant last so `n + 1` reads as written.
      for (const auto& [term, coefficient] : d.linear_terms()) {
        std::optional<uint32_t> t = LowerDim(term);
        if (!t) return std::nullopt;
        if (coefficient != 1) {
          const uint32_t c = LoadInt(coefficient), product = NewRegister();
          Emit(Opcode::kMulI, {product, *t, c});
          t = product;
        }
        if (r) {
          const uint32_t sum = NewRegister();
          Emit(Opcode::kAddI, {sum, *r, *t});
          t = sum;
        }
        r = t;
      }
      if (d.linear_constant() != 0) {
        const uint32_t c = LoadInt(d.linear_constant()), sum = NewRegister();
        Emit(Opcode::kAddI, {sum, *r, c});
        r = sum;
      }
      break;
    }
    case Dim::Form::kAdd: r = binary(Opcode::kAddI); break;
    case Dim::Form::kMul: r = binary(Opcode::kMulI); break;
    case Dim::Form::kFloorDiv: r = binary(Opcode::kDivI); break;
    case Dim::Form::kFloorMod: r = binary(Opcode::kModI); break;
    case Dim::Form::kMin: r = binary(Opcode::kMinI); break;
    case Dim::Form::kMax: r = binary(Opcode::kMaxI); break;
  }
  if (r) bound_.dims[d.ToString()] = *r;
  return r;
}

absl::StatusOr<uint32_t> FunctionGen::Gen(const Expr& e) {
  if (e.is(ExprKind::kLet)) return GenLetChain(e);
  if (const auto it = registers_.find(e.identity()); it != registers_.end()) return it->second;
  // (Constructors are typed where they are used, and need no type here.)
  if (!e.checked_type() && !e.is(ExprKind::kVar) && !e.is(ExprKind::kConstructor)) {
    return absl::InvalidArgumentError(absl::StrCat("in @", name_, ": code generation needs a typed module (run type inference first)"));
  }
  uint32_t r = 0;
  switch (e.kind()) {
    case ExprKind::kVar: {
      const auto known = bound_.closures.find(e.identity());
      if (known == bound_.closures.end()) {
        return absl::InternalError(absl::StrCat("in @", name_, ": unbound variable %", e.name()));
      }
      r = NewRegister();
      Emit(Opcode::kAllocClosure, {r, known->second.function}, known->second.captured);
      break;
    }
    case ExprKind::kConstant:
      r = NewRegister();
      Emit(Opcode::kLoadConst, {r, module_.Constant(e.value())});
      break;
    case ExprKind::kCall: {
      DYNVM_ASSIGN_OR_RETURN(auto direct, DirectCall(e));
      if (direct) {
        r = NewRegister();
        Emit(Opcode::kInvoke, {r, direct->first}, std::move(direct->second));
        break;
      }
      DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> args, GenArgs(e));
      const Expr& callee = e.callee();
      if (callee.is(ExprKind::kOp) && callee.name() == "ref") {  // a cell: one field
        r = NewRegister();
        Emit(Opcode::kAllocADT, {r, 0}, std::move(args));
      } else if (callee.is(ExprKind::kOp) && callee.name() == "ref_read") {
        r = NewRegister();
        Emit(Opcode::kGetField, {r, args[0], 0});
      } else if (callee.is(ExprKind::kOp) && callee.name() == "ref_write") {
        Emit(Opcode::kSetField, {args[0], 0, args[1]});
        r = NewRegister();
        Emit(Opcode::kAllocADT, {r, 0});  // ()
      } else if (callee.is(ExprKind::kOp)) {
        // A tuple argument passes its fields (Relay's concatenate((%a, %b)) is the
        // kernel's concatenate(a, b)).
        std::vector<uint32_t> tensors;
        for (size_t i = 0; i < args.size(); ++i) {
          const Type& t = TypeOf(e.args()[i]);
          if (t.kind() != TypeKind::kTuple) {
            tensors.push_back(static_cast<uint32_t>(args[i]));
            continue;
          }
          for (size_t f = 0; f < t.fields().size(); ++f) {
            const uint32_t field = NewRegister();
            Emit(Opcode::kGetField, {field, args[i], static_cast<int64_t>(f)});
            tensors.push_back(field);
          }
        }
        // The call's instructions (its shape function, allocations, kernel) come from
        // its source; its arguments' from theirs.
        const uint32_t enclosing = std::exchange(source_, module_.Source(e.source()));
        absl::StatusOr<uint32_t> result = GenOpCall(e, std::move(tensors));
        source_ = enclosing;
        DYNVM_ASSIGN_OR_RETURN(r, std::move(result));
      } else if (callee.is(ExprKind::kGlobalVar)) {  // a closure's code: the call makes the closure
        DYNVM_ASSIGN_OR_RETURN(const uint32_t index, module_.FunctionIndex(callee.name()));
        r = NewRegister();
        Emit(Opcode::kAllocClosure, {r, index}, std::move(args));
      } else if (callee.is(ExprKind::kConstructor)) {
        r = NewRegister();
        Emit(Opcode::kAllocADT, {r, callee.tag()}, std::move(args));
      } else {
        DYNVM_ASSIGN_OR_RETURN(const uint32_t closure, Gen(callee));
        r = NewRegister();
        Emit(Opcode::kInvokeClosure, {r, closure}, std::move(args));
      }
      break;
    }
    case ExprKind::kTuple: {
      std::vector<int64_t> fields;
      for (const Expr& f : e.fields()) {
        DYNVM_ASSIGN_OR_RETURN(const uint32_t a, Gen(f));
        fields.push_back(a);
      }
      r = NewRegister();
      Emit(Opcode::kAllocADT, {r, 0}, std::move(fields));
      break;
    }
    case ExprKind::kTupleGetItem: {
      DYNVM_ASSIGN_OR_RETURN(const uint32_t t, Gen(e.tuple()));
      r = NewRegister();
      Emit(Opcode::kGetField, {r, t, e.index()});
      break;
    }
    case ExprKind::kIf: {
      DYNVM_ASSIGN_OR_RETURN(r, GenIf(e));
      break;
    }
    case ExprKind::kFunction:
      return absl::InternalError(
          absl::StrCat("in @", name_, ": a function literal reached code generation (run lambda lifting first)"));
    case ExprKind::kMatch: {
      DYNVM_ASSIGN_OR_RETURN(r, GenMatch(e, /*tail=*/false));
      break;
    }
    case ExprKind::kGlobalVar: {  // a global used as a value: a closure capturing nothing
      if (module_.IsClosureCode(e.name())) {
        return absl::InternalError(absl::StrCat("in @", name_, ": closure code @", e.name(), " used as a value"));
      }
      DYNVM_ASSIGN_OR_RETURN(const uint32_t index, module_.FunctionIndex(e.name()));
      r = NewRegister();
      Emit(Opcode::kAllocClosure, {r, index});
      break;
    }
    case ExprKind::kConstructor:
      if (!e.field_types().empty()) return Unsupported("constructors used as function values", e);
      r = NewRegister();
      Emit(Opcode::kAllocADT, {r, e.tag()});
      break;
    default: return Unsupported("this expression", e);
  }
  registers_[e.identity()] = r;
  return r;
}

absl::StatusOr<std::vector<int64_t>> FunctionGen::GenArgs(const Expr& call) {
  std::vector<int64_t> args;
  for (const Expr& arg : call.args()) {
    DYNVM_ASSIGN_OR_RETURN(const uint32_t a, Gen(arg));
    args.push_back(a);
  }
  return args;
}

absl::StatusOr<std::optional<std::pair<uint32_t, std::vector<int64_t>>>> FunctionGen::DirectCall(
    const Expr& call) {
  const Expr& callee = call.callee();
  std::pair<uint32_t, std::vector<int64_t>> direct;
  if (callee.is(ExprKind::kGlobalVar) && !module_.IsClosureCode(callee.name())) {
    DYNVM_ASSIGN_OR_RETURN(direct.first, module_.FunctionIndex(callee.name()));
  } else if (const auto known = bound_.closures.find(callee.identity());
             callee.is(ExprKind::kVar) && known != bound_.closures.end()) {
    direct = {known->second.function, known->second.captured};
  } else {
    return std::nullopt;
  }
  DYNVM_ASSIGN_OR_RETURN(const std::vector<int64_t> args, GenArgs(call));
  direct.second.insert(direct.second.end(), args.begin(), args.end());
  return direct;
}

absl::Status FunctionGen::GenTail(const Expr& e) {
  DYNVM_ASSIGN_OR_RETURN(const Expr cur, GenLets(e));
  if (cur.is(ExprKind::kCall) && !registers_.contains(cur.identity())) {
    DYNVM_ASSIGN_OR_RETURN(auto direct, DirectCall(cur));
    if (direct) {
      Emit(Opcode::kTailInvoke, {direct->first}, std::move(direct->second));
      return absl::OkStatus();
    }
  }
  if (cur.is(ExprKind::kMatch) && !registers_.contains(cur.identity())) {
    return GenMatch(cur, /*tail=*/true).status();
  }
  if (cur.is(ExprKind::kIf) && !registers_.contains(cur.identity())) {
    DYNVM_ASSIGN_OR_RETURN(const uint32_t cond, Gen(cur.cond()));
    const size_t branch = code_.size();
    Emit(Opcode::kIf, {cond, 0, 0});
    const Bound saved = bound_;
    const size_t then_start = code_.size();
    DYNVM_RETURN_IF_ERROR(GenTail(cur.then_branch()));
    bound_ = saved;
    const size_t else_start = code_.size();
    DYNVM_RETURN_IF_ERROR(GenTail(cur.else_branch()));
    bound_ = saved;
    jumps_.push_back({branch, {then_start, else_start}});
    return absl::OkStatus();
  }
  DYNVM_ASSIGN_OR_RETURN(const uint32_t result, Gen(cur));
  Emit(Opcode::kRet, {result});
  return absl::OkStatus();
}

absl::StatusOr<Expr> FunctionGen::GenLets(const Expr& e) {
  Expr cur = e;
  for (; cur.is(ExprKind::kLet); cur = cur.body()) {
    const Expr& value = cur.operand();
    if (value.is(ExprKind::kCall) && value.callee().is(ExprKind::kGlobalVar) &&
        module_.IsClosureCode(value.callee().name()) && !registers_.contains(value.identity())) {
      KnownClosure known;
      DYNVM_ASSIGN_OR_RETURN(known.function, module_.FunctionIndex(value.callee().name()));
      DYNVM_ASSIGN_OR_RETURN(known.captured, GenArgs(value));
      bound_.closures[cur.var().identity()] = std::move(known);
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(const uint32_t r, Gen(value));
    registers_[cur.var().identity()] = r;
  }
  return cur;
}

absl::StatusOr<uint32_t> FunctionGen::GenLetChain(const Expr& e) {
  DYNVM_ASSIGN_OR_RETURN(const Expr body, GenLets(e));
  return Gen(body);
}

uint32_t FunctionGen::AllocStatic(const Type& t) {
  int64_t elements = 1;
  std::vector<int64_t> shape;
  for (const Dim& d : t.shape()) {
    elements *= d.const_value();
    shape.push_back(d.const_value());
  }
  const uint32_t bytes = LoadInt(elements * static_cast<int64_t>(DTypeSize(t.dtype())));
  const uint32_t storage = NewRegister(), tensor = NewRegister();
  Emit(Opcode::kAllocStorage, {storage, bytes});
  Emit(Opcode::kAllocTensor, {tensor, storage, 0, static_cast<int64_t>(t.dtype())}, std::move(shape));
  return tensor;
}

std::optional<uint32_t> FunctionGen::LowerShape(const Type& t) {
  std::vector<int64_t> dims;
  std::string key = "#shape";  // not an identifier: no symbol's key
  for (const Dim& d : t.shape()) {
    const std::optional<uint32_t> r = LowerDim(d);
    if (!r) return std::nullopt;
    dims.push_back(*r);
    absl::StrAppend(&key, " ", d.ToString());
  }
  auto [it, inserted] = bound_.dims.try_emplace(key, 0);
  if (inserted) {
    it->second = NewRegister();
    Emit(Opcode::kMakeShape, {it->second}, std::move(dims));
  }
  return it->second;
}

std::optional<uint32_t> FunctionGen::AllocSymbolic(const Type& t) {
  Dim bytes(static_cast<int64_t>(DTypeSize(t.dtype())));
  for (const Dim& d : t.shape()) bytes = bytes * d;
  const std::optional<uint32_t> shape = LowerShape(t);
  const std::optional<uint32_t> size = shape ? LowerDim(bytes) : std::nullopt;
  if (!size) return std::nullopt;
  const uint32_t storage = NewRegister(), tensor = NewRegister();
  Emit(Opcode::kAllocStorage, {storage, *size});
  Emit(Opcode::kAllocTensorReg, {tensor, storage, LoadInt(0), static_cast<int64_t>(t.dtype()), *shape});
  return tensor;
}

uint32_t FunctionGen::AllocDynamic(DType dtype, int rank, uint32_t shape) {
  uint32_t bytes = NewRegister();
  Emit(Opcode::kLoadConsti, {bytes, static_cast<int64_t>(DTypeSize(dtype))});
  for (int i = 0; i < rank; ++i) {
    const uint32_t dim = NewRegister(), product = NewRegister();
    Emit(Opcode::kDim, {dim, shape, i});
    Emit(Opcode::kMulI, {product, bytes, dim});
    bytes = product;
  }
  const uint32_t storage = NewRegister(), offset = NewRegister(), tensor = NewRegister();
  Emit(Opcode::kAllocStorage, {storage, bytes});
  Emit(Opcode::kLoadConsti, {offset, 0});
  Emit(Opcode::kAllocTensorReg, {tensor, storage, offset, static_cast<int64_t>(dtype), shape});
  return tensor;
}

absl::StatusOr<uint32_t> FunctionGen::GenOpCall(const Expr& call, std::vector<uint32_t> args) {
  const Type& type = TypeOf(call);
  // Operators that only change a contiguous tensor's shape are views of their input
  // when the new shape can be computed here: no kernel, no copy.
  // Shape lowering: dims over symbols this function has values of are computed in
  // place; `?` needs the kernel's shape function.
  const auto computable = [&](const Dim& d) {
    if (d.is_any()) return false;
    const std::vector<std::string> symbols = d.Symbols();
    return std::all_of(symbols.begin(), symbols.end(),
                       [&](const std::string& name) { return bound_.dims.contains(name); });
  };
  const auto all_computable = [&](const Type& t) {
    return std::all_of(t.shape().begin(), t.shape().end(), computable);
  };
  const std::string& op = call.callee().name();
  if ((op == "reshape" || op == "squeeze" || op == "expand_dims") && type.is_tensor() && all_computable(type)) {
    const std::optional<uint32_t> shape = LowerShape(type);
    if (!shape) return absl::InternalError(absl::StrCat("in @", name_, ": cannot compute the shape ", type.ToString()));
    const uint32_t view = NewRegister();
    Emit(Opcode::kReshapeTensor, {view, args[0], *shape});
    return view;
  }
  const std::vector<Type> outputs = type.kind() == TypeKind::kTuple ? type.fields() : std::vector<Type>{type};
  for (const Type& t : outputs) {
    if (!t.is_tensor()) return Unsupported(absl::StrCat("operators returning ", t.ToString()), call);
  }
  const uint32_t kernel = module_.Kernel(call.callee().name(), call.attrs(),
                                         static_cast<uint32_t>(args.size()),
                                         static_cast<uint32_t>(outputs.size()));
  const bool all_static = std::all_of(outputs.begin(), outputs.end(), [](const Type& t) {
    return std::all_of(t.shape().begin(), t.shape().end(), [](const Dim& d) { return d.is_const(); });
  });
  const bool all_symbolic = std::all_of(outputs.begin(), outputs.end(), all_computable);
  std::vector<uint32_t> results;
  if (all_static) {
    for (const Type& t : outputs) results.push_back(AllocStatic(t));
  } else if (all_symbolic) {
    for (const Type& t : outputs) {
      const std::optional<uint32_t> tensor = AllocSymbolic(t);
      if (!tensor) return absl::InternalError(absl::StrCat("in @", name_, ": cannot compute the shape ", t.ToString()));
      results.push_back(*tensor);
    }
  } else {
    std::vector<int64_t> list(args.begin(), args.end());
    std::vector<uint32_t> shapes;
    for (size_t i = 0; i < outputs.size(); ++i) {
      shapes.push_back(NewRegister());
      list.push_back(shapes.back());
    }
    Emit(Opcode::kInvokeShapeFn, {kernel, static_cast<int64_t>(outputs.size())}, std::move(list));
    for (size_t i = 0; i < outputs.size(); ++i) {
      results.push_back(AllocDynamic(outputs[i].dtype(), outputs[i].rank(), shapes[i]));
    }
  }
  std::vector<int64_t> operands(args.begin(), args.end());
  operands.insert(operands.end(), results.begin(), results.end());
  Emit(Opcode::kInvokePacked, {kernel, static_cast<int64_t>(outputs.size())}, std::move(operands));
  if (type.kind() != TypeKind::kTuple) return results[0];
  const uint32_t tuple = NewRegister();
  Emit(Opcode::kAllocADT, {tuple, 0}, {results.begin(), results.end()});
  return tuple;
}

// A clause still in the running at a node of the decision tree: the tests left (a value
// in a register and the pattern it must match) and the variables bound so far.
struct FunctionGen::MatchRow {
  size_t clause;
  std::vector<std::pair<uint32_t, Pattern>> tests;
  std::vector<std::pair<uintptr_t, uint32_t>> bindings;  // pattern variable -> register
};

// What the nodes of one match's tree share.
struct FunctionGen::MatchState {
  uint32_t fatal_message;
  std::vector<std::vector<size_t>> leaves;  // per clause, the gotos to its body
  // Per path: the tag and field registers read on it, and the constructors each value
  // is known not to have. A node's children copy them.
  absl::flat_hash_map<uint32_t, uint32_t> tags;
  absl::flat_hash_map<std::pair<uint32_t, int64_t>, uint32_t> fields;
  absl::flat_hash_map<uint32_t, std::vector<int>> excluded;
  bool reached_fatal = false;  // some value matches no clause
};

void FunctionGen::GenDecision(std::vector<MatchRow> rows, MatchState& state) {
  const auto field = [&](uint32_t reg, int64_t i) {
    auto [it, inserted] = state.fields.try_emplace({reg, i}, 0);
    if (inserted) {
      it->second = NewRegister();
      Emit(Opcode::kGetField, {it->second, reg, i});
    }
    return it->second;
  };
  // Variables, wildcards and tuples need no test: bind, drop, or look at the fields.
  for (MatchRow& row : rows) {
    std::vector<std::pair<uint32_t, Pattern>> pending = std::move(row.tests);
    row.tests.clear();
    for (size_t k = 0; k < pending.size(); ++k) {
      const auto [reg, p] = pending[k];
      switch (p.kind()) {
        case PatternKind::kWildcard: break;
        case PatternKind::kVar: row.bindings.push_back({p.expr().identity(), reg}); break;
        case PatternKind::kTuple:
          for (size_t i = 0; i < p.fields().size(); ++i) {
            if (p.fields()[i].kind() != PatternKind::kWildcard) {
              pending.push_back({field(reg, static_cast<int64_t>(i)), p.fields()[i]});
            }
          }
          break;
        case PatternKind::kConstructor: row.tests.push_back({reg, p}); break;
      }
    }
  }
  if (rows.empty()) {
    Emit(Opcode::kFatal, {state.fatal_message});
    state.reached_fatal = true;
    return;
  }
  if (rows[0].tests.empty()) {  // the first clause left matches
    for (const auto& [var, reg] : rows[0].bindings) Emit(Opcode::kMove, {registers_.at(var), reg});
    state.leaves[rows[0].clause].push_back(code_.size());
    Emit(Opcode::kGoto, {0});
    return;
  }
  // Test the first clause's first constructor, unless the path already ruled out every
  // other constructor of its type.
  const uint32_t value = rows[0].tests.front().first;
  const Expr& constructor = rows[0].tests.front().second.expr();
  const int tag = constructor.tag();
  const TypeData* adt = module_.module().FindType(constructor.adt());
  const bool known = adt != nullptr && state.excluded[value].size() + 1 == adt->constructors.size();
  size_t branch = 0;
  if (!known) {
    auto [tag_it, inserted] = state.tags.try_emplace(value, 0);
    if (inserted) {
      tag_it->second = NewRegister();
      Emit(Opcode::kGetTag, {tag_it->second, value});
    }
    const uint32_t same = NewRegister();
    Emit(Opcode::kEqI, {same, tag_it->second, LoadInt(tag)});
    branch = code_.size();
    Emit(Opcode::kIf, {same, 0, 0});
  }
  const auto test_of = [value](const MatchRow& row) {
    return std::find_if(row.tests.begin(), row.tests.end(), [value](const auto& t) { return t.first == value; });
  };
  const auto saved_tags = state.tags;
  const auto saved_fields = state.fields;
  const auto saved_excluded = state.excluded;
  const Bound saved = bound_;

  // It has the constructor: clauses testing another go; those testing this one test its
  // fields instead, read here once.
  const size_t yes_start = code_.size();
  std::vector<MatchRow> yes;
  for (const MatchRow& row : rows) {
    const auto test = test_of(row);
    if (test != row.tests.end() && test->second.expr().tag() != tag) continue;
    MatchRow kept = row;
    if (test != row.tests.end()) {
      const Pattern p = test->second;
      kept.tests.erase(kept.tests.begin() + (test - row.tests.begin()));
      for (size_t i = 0; i < p.fields().size(); ++i) {
        if (p.fields()[i].kind() != PatternKind::kWildcard) {
          kept.tests.push_back({field(value, static_cast<int64_t>(i)), p.fields()[i]});
        }
      }
    }
    yes.push_back(std::move(kept));
  }
  GenDecision(std::move(yes), state);
  state.tags = saved_tags;
  state.fields = saved_fields;
  state.excluded = saved_excluded;
  bound_ = saved;
  if (known) return;

  // It has another: clauses testing this constructor go.
  const size_t no_start = code_.size();
  state.excluded[value].push_back(tag);
  std::vector<MatchRow> no;
  for (const MatchRow& row : rows) {
    const auto test = test_of(row);
    if (test == row.tests.end() || test->second.expr().tag() != tag) no.push_back(row);
  }
  GenDecision(std::move(no), state);
  state.tags = saved_tags;
  state.fields = saved_fields;
  state.excluded = saved_excluded;
  bound_ = saved;
  jumps_.push_back({branch, {yes_start, no_start}});
}

absl::StatusOr<uint32_t> FunctionGen::GenMatch(const Expr& e, bool tail) {
  DYNVM_ASSIGN_OR_RETURN(const uint32_t data, Gen(e.data()));
  const uint32_t result = tail ? 0 : NewRegister();
  const Bound before = bound_;
  MatchState state{module_.StringConstant(absl::StrCat("in @", name_, ": no clause of a match",
                                                        e.complete() ? "" : "?", " matches the value")),
                   std::vector<std::vector<size_t>>(e.clauses().size()), {}, {}, {}};
  std::vector<MatchRow> rows;
  for (size_t c = 0; c < e.clauses().size(); ++c) {
    rows.push_back({c, {{data, e.clauses()[c].pattern}}, {}});
    // Each clause's variables get registers of their own, which its leaves fill.
    std::vector<const Pattern*> stack = {&e.clauses()[c].pattern};
    while (!stack.empty()) {
      const Pattern* p = stack.back();
      stack.pop_back();
      if (p->kind() == PatternKind::kVar) registers_[p->expr().identity()] = NewRegister();
      for (const Pattern& f : p->fields()) stack.push_back(&f);
    }
  }
  const Bound with_vars = bound_;
  GenDecision(std::move(rows), state);
  if (state.reached_fatal && e.complete()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "in @", name_, ": match is not exhaustive: some value of its type matches no clause "
        "(add the missing clauses, or write match? for a partial match)"));
  }
  std::vector<size_t> exits;  // the gotos past the match
  for (size_t c = 0; c < e.clauses().size(); ++c) {
    if (state.leaves[c].empty()) continue;  // shadowed by the clauses before it
    bound_ = with_vars;
    const size_t body = code_.size();
    for (size_t at : state.leaves[c]) jumps_.push_back({at, {body}});
    if (tail) {
      DYNVM_RETURN_IF_ERROR(GenTail(e.clauses()[c].body));
    } else {
      DYNVM_ASSIGN_OR_RETURN(const uint32_t value, Gen(e.clauses()[c].body));
      Emit(Opcode::kMove, {result, value});
      exits.push_back(code_.size());
      Emit(Opcode::kGoto, {0});
    }
  }
  bound_ = before;
  for (size_t at : exits) jumps_.push_back({at, {code_.size()}});
  return result;
}

//   if cond, then, else
//   then: ...; move result, then_value; goto end
//   else: ...; move result, else_value
//   end:
absl::StatusOr<uint32_t> FunctionGen::GenIf(const Expr& e) {
  DYNVM_ASSIGN_OR_RETURN(const uint32_t cond, Gen(e.cond()));
  const uint32_t result = NewRegister();
  const size_t branch = code_.size();
  Emit(Opcode::kIf, {cond, 0, 0});
  // Values computed in a branch stay in it: the other branch and the code after the if
  // must not find them in a register that was never written on their path.
  const Bound saved = bound_;
  const size_t then_start = code_.size();
  DYNVM_ASSIGN_OR_RETURN(const uint32_t then_value, Gen(e.then_branch()));
  Emit(Opcode::kMove, {result, then_value});
  const size_t jump = code_.size();
  Emit(Opcode::kGoto, {0});
  bound_ = saved;
  const size_t else_start = code_.size();
  DYNVM_ASSIGN_OR_RETURN(const uint32_t else_value, Gen(e.else_branch()));
  Emit(Opcode::kMove, {result, else_value});
  bound_ = saved;
  jumps_.push_back({branch, {then_start, else_start}});
  jumps_.push_back({jump, {code_.size()}});
  return result;
}

absl::StatusOr<vm::ExecutableSpec> ModuleGen::Run() {
  spec_.producer = "dynvm compiler";
  for (const std::string& name : module_.function_names()) {
    function_index_[name] = static_cast<uint32_t>(function_index_.size());
  }
  for (const std::string& name : module_.function_names()) {
    const Expr fn = *module_.Function(name);
    DYNVM_ASSIGN_OR_RETURN(vm::Function f, FunctionGen(*this, name).Run(fn));
    DYNVM_RETURN_IF_ERROR(NameResults(module_.ResultNames(name), f));
    spec_.functions.push_back(std::move(f));
  }
  return std::move(spec_);
}

}  // namespace

absl::StatusOr<vm::ExecutableSpec> GenerateBytecode(const Module& module, const CodegenOptions& options,
                                                   CodegenStats* stats) {
  ModuleGen gen(module, options);
  DYNVM_ASSIGN_OR_RETURN(vm::ExecutableSpec spec, gen.Run());
  if (stats != nullptr) *stats = gen.stats();
  return spec;
}

}  // namespace dynvm::compiler
