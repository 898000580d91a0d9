// Code is first a list of unpacked instructions with jump targets as instruction
// indices; once a function is complete, targets become word offsets (every
// instruction's length is fixed by its operands, not by the offsets) and the list is
// encoded.
#include "compiler/codegen/codegen.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/ir/free_vars.h"
#include "objects/string_object.h"
#include "vm/bytecode.h"

namespace dynvm::compiler {
namespace {

using vm::Instruction;
using vm::Opcode;

vm::ValueSpec SpecOf(std::string name, const Type& t) {
  vm::ValueSpec spec;
  spec.name = std::move(name);
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

class ModuleGen;

class FunctionGen {
 public:
  FunctionGen(ModuleGen& module, std::string name) : module_(module), name_(std::move(name)) {}

  // The function `fn`; for a closure's code, `captured` are its free variables, which
  // arrive before the parameters (the VM passes a closure's captured values first).
  absl::StatusOr<vm::Function> Run(const Expr& fn, const std::vector<Expr>& captured = {});

 private:
  uint32_t NewRegister() { return next_register_++; }
  void Emit(Opcode op, std::vector<int64_t> operands, std::vector<int64_t> list = {}) {
    code_.push_back({op, std::move(operands), std::move(list)});
  }
  absl::Status Unsupported(std::string_view what) const {
    return absl::UnimplementedError(
        absl::StrCat("in @", name_, ": code generation does not support ", std::string(what), " yet"));
  }
  const Type& TypeOf(const Expr& e) const { return *e.checked_type(); }

  absl::StatusOr<uint32_t> Gen(const Expr& e);
  absl::StatusOr<uint32_t> GenLetChain(const Expr& e);
  // Code that returns the value of `e` from the function: a call of a global in tail
  // position becomes tail_invoke (the frame is reused, so recursion that expresses a
  // loop runs in constant space), an if returns from each branch, anything else is
  // computed and returned.
  absl::Status GenTail(const Expr& e);
  absl::StatusOr<std::vector<int64_t>> GenArgs(const Expr& call);
  absl::StatusOr<uint32_t> GenOpCall(const Expr& call, std::vector<uint32_t> args);
  absl::StatusOr<uint32_t> GenIf(const Expr& e);
  // A function literal: its code as a function of its own, and a closure of the values
  // it captures.
  absl::StatusOr<uint32_t> GenClosure(const Expr& fn);
  // match: the clauses in order, each a test of its pattern that jumps to the next
  // clause on failure; no clause matching is a fatal error. In tail position each body
  // returns, else each moves its value to one register and jumps past the rest.
  absl::StatusOr<uint32_t> GenMatch(const Expr& e, bool tail);
  // Tests `p` against the value in `reg`, binding its variables; failing tests jump to
  // the code after the clause (their If instructions are added to `fails`).
  void GenPatternTest(const Pattern& p, uint32_t reg, std::vector<size_t>& fails);
  // Allocates a tensor of type `t` (static) in a fresh register.
  uint32_t AllocStatic(const Type& t);
  // Allocates a tensor of dtype `dtype` and the shape in register `shape`.
  uint32_t AllocDynamic(DType dtype, int rank, uint32_t shape);
  absl::StatusOr<std::vector<uint32_t>> Encode();

  ModuleGen& module_;
  std::string name_;
  uint32_t next_register_ = 0;
  std::vector<Instruction> code_;
  // For each If and Goto, the instruction indices its offsets must reach.
  std::vector<std::pair<size_t, std::vector<size_t>>> jumps_;
  absl::flat_hash_map<uintptr_t, uint32_t> registers_;  // values already in a register
};

class ModuleGen {
 public:
  explicit ModuleGen(const Module& module) : module_(module) {}

  absl::StatusOr<vm::ExecutableSpec> Run();
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
  // Generates a function literal's code as a new function (after the module's own) and
  // returns its index.
  absl::StatusOr<uint32_t> AddClosureCode(const std::string& enclosing, const Expr& fn,
                                          const std::vector<Expr>& captured);
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
  vm::ExecutableSpec spec_;
  std::vector<vm::Function> closures_;  // placed after the module's functions
  absl::flat_hash_map<std::string, uint32_t> function_index_;
  absl::flat_hash_map<const NDArrayObj*, size_t> constant_index_;
};

absl::StatusOr<vm::Function> FunctionGen::Run(const Expr& fn, const std::vector<Expr>& captured) {
  vm::Function out;
  out.name = name_;
  for (const Expr& v : captured) {
    registers_[v.identity()] = NewRegister();
    out.params.push_back(SpecOf(v.name(), TypeOf(v)));
  }
  for (const Expr& p : fn.params()) {
    registers_[p.identity()] = NewRegister();
    out.params.push_back(SpecOf(p.name(), TypeOf(p)));
  }
  DYNVM_RETURN_IF_ERROR(GenTail(fn.body()));
  out.results.push_back(SpecOf("", TypeOf(fn.body())));
  DYNVM_ASSIGN_OR_RETURN(out.code, Encode());
  out.num_registers = next_register_;
  return out;
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
    case ExprKind::kVar:
      return absl::InternalError(absl::StrCat("in @", name_, ": unbound variable %", e.name()));
    case ExprKind::kConstant:
      r = NewRegister();
      Emit(Opcode::kLoadConst, {r, module_.Constant(e.value())});
      break;
    case ExprKind::kCall: {
      DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> args, GenArgs(e));
      const Expr& callee = e.callee();
      if (callee.is(ExprKind::kOp)) {
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
        DYNVM_ASSIGN_OR_RETURN(r, GenOpCall(e, std::move(tensors)));
      } else if (callee.is(ExprKind::kGlobalVar)) {
        DYNVM_ASSIGN_OR_RETURN(const uint32_t index, module_.FunctionIndex(callee.name()));
        r = NewRegister();
        Emit(Opcode::kInvoke, {r, index}, std::move(args));
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
    case ExprKind::kFunction: {
      DYNVM_ASSIGN_OR_RETURN(r, GenClosure(e));
      break;
    }
    case ExprKind::kMatch: {
      DYNVM_ASSIGN_OR_RETURN(r, GenMatch(e, /*tail=*/false));
      break;
    }
    case ExprKind::kConstructor:
      if (!e.field_types().empty()) return Unsupported("constructors used as function values");
      r = NewRegister();
      Emit(Opcode::kAllocADT, {r, e.tag()});
      break;
    default: return Unsupported("this expression");
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

absl::Status FunctionGen::GenTail(const Expr& e) {
  Expr cur = e;
  for (; cur.is(ExprKind::kLet); cur = cur.body()) {
    DYNVM_ASSIGN_OR_RETURN(const uint32_t value, Gen(cur.operand()));
    registers_[cur.var().identity()] = value;
  }
  if (cur.is(ExprKind::kCall) && cur.callee().is(ExprKind::kGlobalVar) &&
      !registers_.contains(cur.identity())) {
    DYNVM_ASSIGN_OR_RETURN(std::vector<int64_t> args, GenArgs(cur));
    DYNVM_ASSIGN_OR_RETURN(const uint32_t index, module_.FunctionIndex(cur.callee().name()));
    Emit(Opcode::kTailInvoke, {index}, std::move(args));
    return absl::OkStatus();
  }
  if (cur.is(ExprKind::kMatch) && !registers_.contains(cur.identity())) {
    return GenMatch(cur, /*tail=*/true).status();
  }
  if (cur.is(ExprKind::kIf) && !registers_.contains(cur.identity())) {
    DYNVM_ASSIGN_OR_RETURN(const uint32_t cond, Gen(cur.cond()));
    const size_t branch = code_.size();
    Emit(Opcode::kIf, {cond, 0, 0});
    const auto saved = registers_;
    const size_t then_start = code_.size();
    DYNVM_RETURN_IF_ERROR(GenTail(cur.then_branch()));
    registers_ = saved;
    const size_t else_start = code_.size();
    DYNVM_RETURN_IF_ERROR(GenTail(cur.else_branch()));
    registers_ = saved;
    jumps_.push_back({branch, {then_start, else_start}});
    return absl::OkStatus();
  }
  DYNVM_ASSIGN_OR_RETURN(const uint32_t result, Gen(cur));
  Emit(Opcode::kRet, {result});
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> FunctionGen::GenLetChain(const Expr& e) {
  Expr cur = e;
  for (; cur.is(ExprKind::kLet); cur = cur.body()) {
    DYNVM_ASSIGN_OR_RETURN(const uint32_t value, Gen(cur.operand()));
    registers_[cur.var().identity()] = value;
  }
  return Gen(cur);
}

uint32_t FunctionGen::AllocStatic(const Type& t) {
  int64_t elements = 1;
  std::vector<int64_t> shape;
  for (const Dim& d : t.shape()) {
    elements *= d.const_value();
    shape.push_back(d.const_value());
  }
  const uint32_t bytes = NewRegister(), storage = NewRegister(), tensor = NewRegister();
  Emit(Opcode::kLoadConsti, {bytes, elements * static_cast<int64_t>(DTypeSize(t.dtype()))});
  Emit(Opcode::kAllocStorage, {storage, bytes});
  Emit(Opcode::kAllocTensor, {tensor, storage, 0, static_cast<int64_t>(t.dtype())}, std::move(shape));
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
  const std::vector<Type> outputs = type.kind() == TypeKind::kTuple ? type.fields() : std::vector<Type>{type};
  for (const Type& t : outputs) {
    if (!t.is_tensor()) return Unsupported(absl::StrCat("operators returning ", t.ToString()));
  }
  const uint32_t kernel = module_.Kernel(call.callee().name(), call.attrs(),
                                         static_cast<uint32_t>(args.size()),
                                         static_cast<uint32_t>(outputs.size()));
  const bool all_static = std::all_of(outputs.begin(), outputs.end(), [](const Type& t) {
    return std::all_of(t.shape().begin(), t.shape().end(), [](const Dim& d) { return d.is_const(); });
  });
  std::vector<uint32_t> results;
  if (all_static) {
    for (const Type& t : outputs) results.push_back(AllocStatic(t));
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
  if (outputs.size() == 1) return results[0];
  const uint32_t tuple = NewRegister();
  Emit(Opcode::kAllocADT, {tuple, 0}, {results.begin(), results.end()});
  return tuple;
}

absl::StatusOr<uint32_t> FunctionGen::GenClosure(const Expr& fn) {
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Expr> captured, FreeVars(fn));
  std::vector<int64_t> values;
  for (const Expr& v : captured) {
    const auto it = registers_.find(v.identity());
    if (it == registers_.end()) {
      // Only a let-bound closure that calls itself reaches here: its variable is not
      // bound until the closure exists.
      return Unsupported(absl::StrCat("recursive closures (%", v.name(), ")"));
    }
    values.push_back(it->second);
  }
  DYNVM_ASSIGN_OR_RETURN(const uint32_t index, module_.AddClosureCode(name_, fn, captured));
  const uint32_t r = NewRegister();
  Emit(Opcode::kAllocClosure, {r, index}, std::move(values));
  return r;
}

void FunctionGen::GenPatternTest(const Pattern& p, uint32_t reg, std::vector<size_t>& fails) {
  switch (p.kind()) {
    case PatternKind::kWildcard: return;
    case PatternKind::kVar: registers_[p.expr().identity()] = reg; return;
    case PatternKind::kConstructor: {
      const uint32_t tag = NewRegister(), want = NewRegister(), same = NewRegister();
      Emit(Opcode::kGetTag, {tag, reg});
      Emit(Opcode::kLoadConsti, {want, p.expr().tag()});
      Emit(Opcode::kEqI, {same, tag, want});
      fails.push_back(code_.size());
      Emit(Opcode::kIf, {same, 0, 0});
      break;
    }
    case PatternKind::kTuple: break;
  }
  for (size_t i = 0; i < p.fields().size(); ++i) {
    if (p.fields()[i].kind() == PatternKind::kWildcard) continue;
    const uint32_t field = NewRegister();
    Emit(Opcode::kGetField, {field, reg, static_cast<int64_t>(i)});
    GenPatternTest(p.fields()[i], field, fails);
  }
}

absl::StatusOr<uint32_t> FunctionGen::GenMatch(const Expr& e, bool tail) {
  DYNVM_ASSIGN_OR_RETURN(const uint32_t data, Gen(e.data()));
  const uint32_t result = tail ? 0 : NewRegister();
  std::vector<size_t> exits;  // the gotos past the match
  for (const Clause& clause : e.clauses()) {
    const auto saved = registers_;
    std::vector<size_t> fails;
    GenPatternTest(clause.pattern, data, fails);
    if (tail) {
      DYNVM_RETURN_IF_ERROR(GenTail(clause.body));
    } else {
      DYNVM_ASSIGN_OR_RETURN(const uint32_t value, Gen(clause.body));
      Emit(Opcode::kMove, {result, value});
      exits.push_back(code_.size());
      Emit(Opcode::kGoto, {0});
    }
    registers_ = saved;
    for (size_t at : fails) jumps_.push_back({at, {at + 1, code_.size()}});
  }
  Emit(Opcode::kFatal, {module_.StringConstant(absl::StrCat(
                           "in @", name_, ": no clause of a match", e.complete() ? "" : "?",
                           " matches the value"))});
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
  const auto saved = registers_;
  const size_t then_start = code_.size();
  DYNVM_ASSIGN_OR_RETURN(const uint32_t then_value, Gen(e.then_branch()));
  Emit(Opcode::kMove, {result, then_value});
  const size_t jump = code_.size();
  Emit(Opcode::kGoto, {0});
  registers_ = saved;
  const size_t else_start = code_.size();
  DYNVM_ASSIGN_OR_RETURN(const uint32_t else_value, Gen(e.else_branch()));
  Emit(Opcode::kMove, {result, else_value});
  registers_ = saved;
  jumps_.push_back({branch, {then_start, else_start}});
  jumps_.push_back({jump, {code_.size()}});
  return result;
}

absl::StatusOr<std::vector<uint32_t>> FunctionGen::Encode() {
  // Word position of every instruction (and of the end).
  std::vector<size_t> position;
  std::vector<uint32_t> scratch;
  size_t words = 0;
  for (const Instruction& inst : code_) {
    position.push_back(words);
    scratch.clear();
    DYNVM_RETURN_IF_ERROR(vm::EncodeInstruction(inst, &scratch));
    words += scratch.size();
  }
  position.push_back(words);
  for (const auto& [at, targets] : jumps_) {
    Instruction& inst = code_[at];
    const size_t first = inst.op == Opcode::kIf ? 1 : 0;
    for (size_t i = 0; i < targets.size(); ++i) {
      inst.operands[first + i] = static_cast<int64_t>(position[targets[i]]) - static_cast<int64_t>(position[at]);
    }
  }
  std::vector<uint32_t> code;
  for (const Instruction& inst : code_) DYNVM_RETURN_IF_ERROR(vm::EncodeInstruction(inst, &code));
  return code;
}

absl::StatusOr<uint32_t> ModuleGen::AddClosureCode(const std::string& enclosing, const Expr& fn,
                                                  const std::vector<Expr>& captured) {
  const uint32_t index = static_cast<uint32_t>(function_index_.size() + closures_.size());
  const std::string name = absl::StrCat(enclosing, "$closure", closures_.size());
  closures_.emplace_back();  // reserve the index; nested closures come after
  const size_t slot = closures_.size() - 1;
  DYNVM_ASSIGN_OR_RETURN(vm::Function code, FunctionGen(*this, name).Run(fn, captured));
  closures_[slot] = std::move(code);
  return index;
}

absl::StatusOr<vm::ExecutableSpec> ModuleGen::Run() {
  spec_.producer = "dynvm compiler";
  for (const std::string& name : module_.function_names()) {
    function_index_[name] = static_cast<uint32_t>(function_index_.size());
  }
  for (const std::string& name : module_.function_names()) {
    const Expr fn = *module_.Function(name);
    DYNVM_ASSIGN_OR_RETURN(vm::Function f, FunctionGen(*this, name).Run(fn));
    spec_.functions.push_back(std::move(f));
  }
  for (vm::Function& f : closures_) spec_.functions.push_back(std::move(f));
  return std::move(spec_);
}

}  // namespace

absl::StatusOr<vm::ExecutableSpec> GenerateBytecode(const Module& module) {
  return ModuleGen(module).Run();
}

}  // namespace dynvm::compiler
