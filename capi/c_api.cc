// The C API (capi/c_api.h) over the C++ one: handles own shared_ptrs, statuses become
// codes plus a per-thread message, and no exception or C++ type crosses the boundary.
#include "capi/c_api.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "codec/argument_binder.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/value.h"
#include "serializer/executable_file.h"
#include "vm/executable.h"
#include "vm/virtual_machine.h"

using dynvm::Value;

// A signature entry with the storage its C view points into. symbol_ptrs is set once
// every entry has its final place (strings move with their owners).
struct CSpec {
  std::string name;
  std::string type;
  DynvmValueKind kind = DYNVM_KIND_ANY;
  DLDataType dtype{0, 0, 0};
  int32_t rank = -1;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
  std::vector<const char*> symbol_ptrs;  // into `symbols`
  size_t num_fields = 0;
};

struct CFunction {
  std::vector<CSpec> inputs;
  std::vector<CSpec> outputs;
};

struct DynvmExecutable {
  std::shared_ptr<const dynvm::vm::Executable> exe;
  std::vector<CFunction> functions;  // immutable once made: handles are read by many threads
};

// Handles are heap structs holding shared_ptrs, so releasing one drops a reference and a
// VM keeps what it uses (executable, pool, allocator) alive on its own.
struct DynvmThreadPool {
  std::shared_ptr<dynvm::kernels::ThreadPool> pool;
};

struct DynvmAllocator {
  std::shared_ptr<dynvm::Allocator> allocator;
};

struct DynvmVm {
  std::shared_ptr<dynvm::kernels::ThreadPool> pool;  // declared first: outlives `vm`
  std::unique_ptr<dynvm::vm::VirtualMachine> vm;
};

namespace {

thread_local std::string last_error;

// The int a C caller stored where a C enum is declared. C allows any int there, but
// reading a value outside the enumerators' range as the C++ enum is undefined: read
// the bytes instead, and compare as ints.
template <typename Enum>
int32_t EnumValue(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(int32_t));
  int32_t v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

bool IsTensor(const DynvmValue& v) { return EnumValue(v.kind) == DYNVM_KIND_TENSOR; }

DynvmStatus Fail(const absl::Status& status) {
  last_error = std::string(status.message());
  return static_cast<DynvmStatus>(status.code());
}

DynvmStatus InvalidArgument(const std::string& message) {
  return Fail(absl::InvalidArgumentError(message));
}

CSpec MakeSpec(const dynvm::vm::ValueSpec& spec) {
  CSpec c;
  c.name = spec.name;
  c.type = dynvm::vm::ValueSpecToString(spec);
  c.kind = static_cast<DynvmValueKind>(spec.kind);
  c.num_fields = spec.fields.size();
  if (spec.kind == dynvm::vm::ValueSpec::Kind::kTensor) {
    c.dtype = dynvm::ToDLDataType(spec.dtype);
    c.rank = static_cast<int32_t>(spec.dims.size());
    for (const dynvm::vm::DimSpec& d : spec.dims) {
      c.dims.push_back(d.extent);
      c.symbols.push_back(d.extent >= 0 ? "" : d.symbol.empty() ? "?" : d.symbol);
    }
  }
  return c;
}

DynvmValueSpec View(const CSpec& c) {
  return DynvmValueSpec{c.name.c_str(), c.type.c_str(), c.kind,         c.dtype,
                        c.rank,         c.dims.data(),  c.symbol_ptrs.data(), c.num_fields};
}

DynvmStatus WrapExecutable(absl::StatusOr<std::shared_ptr<const dynvm::vm::Executable>> exe,
                           DynvmExecutable** out) {
  if (!exe.ok()) return Fail(exe.status());
  auto handle = std::make_unique<DynvmExecutable>();
  handle->exe = *std::move(exe);
  for (const dynvm::vm::Function& f : handle->exe->functions()) {
    CFunction& c = handle->functions.emplace_back();
    for (const dynvm::vm::ValueSpec& p : f.params) c.inputs.push_back(MakeSpec(p));
    for (const dynvm::vm::ValueSpec* r : f.outputs()) c.outputs.push_back(MakeSpec(*r));
  }
  for (CFunction& f : handle->functions) {
    for (std::vector<CSpec>* specs : {&f.inputs, &f.outputs}) {
      for (CSpec& c : *specs) {
        for (const std::string& symbol : c.symbols) c.symbol_ptrs.push_back(symbol.c_str());
      }
    }
  }
  *out = handle.release();
  return DYNVM_OK;
}

}  // namespace

extern "C" {

const char* dynvm_last_error(void) { return last_error.c_str(); }

const char* dynvm_version(void) { return DYNVM_VERSION_STRING; }

const char* dynvm_status_name(DynvmStatus status) {
  switch (EnumValue(status)) {
    case DYNVM_OK: return "OK";
    case DYNVM_CANCELLED: return "CANCELLED";
    case DYNVM_UNKNOWN: return "UNKNOWN";
    case DYNVM_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case DYNVM_DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case DYNVM_NOT_FOUND: return "NOT_FOUND";
    case DYNVM_ALREADY_EXISTS: return "ALREADY_EXISTS";
    case DYNVM_PERMISSION_DENIED: return "PERMISSION_DENIED";
    case DYNVM_RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case DYNVM_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case DYNVM_ABORTED: return "ABORTED";
    case DYNVM_OUT_OF_RANGE: return "OUT_OF_RANGE";
    case DYNVM_UNIMPLEMENTED: return "UNIMPLEMENTED";
    case DYNVM_INTERNAL: return "INTERNAL";
    case DYNVM_UNAVAILABLE: return "UNAVAILABLE";
    case DYNVM_DATA_LOSS: return "DATA_LOSS";
    case DYNVM_UNAUTHENTICATED: return "UNAUTHENTICATED";
  }
  return "UNKNOWN_STATUS_CODE";
}

// ---- Executables -------------------------------------------------------------------

void dynvm_load_options_init(DynvmLoadOptions* options) {
  if (options != nullptr) *options = DynvmLoadOptions{.trust_native_code = 0};
}

DynvmStatus dynvm_executable_load_file(const char* path, DynvmExecutable** out) {
  return dynvm_executable_load_file_with_options(path, nullptr, out);
}

DynvmStatus dynvm_executable_load_memory(const void* data, size_t size, DynvmExecutable** out) {
  return dynvm_executable_load_memory_with_options(data, size, nullptr, out);
}

namespace {

dynvm::vm::LoadOptions ToLoadOptions(const DynvmLoadOptions* options) {
  return {.trust_native_code = options != nullptr && options->trust_native_code != 0};
}

}  // namespace

DynvmStatus dynvm_executable_load_file_with_options(const char* path, const DynvmLoadOptions* options,
                                                    DynvmExecutable** out) {
  if (path == nullptr || out == nullptr) {
    return InvalidArgument("dynvm_executable_load_file: path and out must not be null");
  }
  return WrapExecutable(
      dynvm::serializer::LoadExecutable(path, dynvm::kernels::DefaultRegistry(), ToLoadOptions(options)), out);
}

DynvmStatus dynvm_executable_load_memory_with_options(const void* data, size_t size, const DynvmLoadOptions* options,
                                                      DynvmExecutable** out) {
  if ((data == nullptr && size != 0) || out == nullptr) {
    return InvalidArgument("dynvm_executable_load_memory: data and out must not be null");
  }
  absl::Span<const uint8_t> bytes(static_cast<const uint8_t*>(data), size);
  return WrapExecutable(
      dynvm::serializer::LoadExecutableFromMemory(bytes, dynvm::kernels::DefaultRegistry(), ToLoadOptions(options)),
      out);
}

DynvmStatus dynvm_executable_native_code_ignored(const DynvmExecutable* exe, int* out) {
  if (exe == nullptr || out == nullptr) {
    return InvalidArgument("dynvm_executable_native_code_ignored: exe and out must not be null");
  }
  *out = exe->exe->native_code_ignored() ? 1 : 0;
  return DYNVM_OK;
}

void dynvm_executable_release(DynvmExecutable* exe) { delete exe; }

DynvmStatus dynvm_executable_num_functions(const DynvmExecutable* exe, size_t* out) {
  if (exe == nullptr || out == nullptr) {
    return InvalidArgument("dynvm_executable_num_functions: exe and out must not be null");
  }
  *out = exe->functions.size();
  return DYNVM_OK;
}

namespace {

// Checks `exe` and `function` for the function named `what`.
DynvmStatus CheckFunction(const char* what, const DynvmExecutable* exe, size_t function,
                          const void* out) {
  if (exe == nullptr || out == nullptr) {
    return InvalidArgument(absl::StrFormat("%s: exe and out must not be null", what));
  }
  if (function >= exe->functions.size()) {
    return InvalidArgument(absl::StrFormat("%s: function index %d out of range: %d functions",
                                           what, function, exe->functions.size()));
  }
  return DYNVM_OK;
}

DynvmStatus GetSpec(const char* what, const DynvmExecutable* exe, size_t function,
                    size_t index, DynvmValueSpec* out, bool input) {
  if (DynvmStatus s = CheckFunction(what, exe, function, out); s != DYNVM_OK) return s;
  const CFunction& f = exe->functions[function];
  const std::vector<CSpec>& specs = input ? f.inputs : f.outputs;
  if (index >= specs.size()) {
    return InvalidArgument(absl::StrFormat("%s: index %d out of range: function '%s' has %d",
                                           what, index, exe->exe->function(function).name,
                                           specs.size()));
  }
  *out = View(specs[index]);
  return DYNVM_OK;
}

}  // namespace

DynvmStatus dynvm_executable_function_name(const DynvmExecutable* exe, size_t function,
                                           const char** out) {
  if (DynvmStatus s = CheckFunction(__func__, exe, function, out); s != DYNVM_OK) return s;
  *out = exe->exe->function(function).name.c_str();
  return DYNVM_OK;
}

DynvmStatus dynvm_executable_find_function(const DynvmExecutable* exe, const char* name,
                                           size_t* out) {
  if (exe == nullptr || name == nullptr || out == nullptr) {
    return InvalidArgument("dynvm_executable_find_function: exe, name and out must not be null");
  }
  std::optional<uint32_t> index = exe->exe->FunctionIndex(name);
  if (!index) return Fail(absl::NotFoundError(absl::StrFormat("no function named '%s'", name)));
  *out = *index;
  return DYNVM_OK;
}

DynvmStatus dynvm_function_num_inputs(const DynvmExecutable* exe, size_t function,
                                      size_t* out) {
  if (DynvmStatus s = CheckFunction(__func__, exe, function, out); s != DYNVM_OK) return s;
  *out = exe->functions[function].inputs.size();
  return DYNVM_OK;
}

DynvmStatus dynvm_function_num_outputs(const DynvmExecutable* exe, size_t function,
                                       size_t* out) {
  if (DynvmStatus s = CheckFunction(__func__, exe, function, out); s != DYNVM_OK) return s;
  *out = exe->functions[function].outputs.size();
  return DYNVM_OK;
}

DynvmStatus dynvm_function_input(const DynvmExecutable* exe, size_t function, size_t index,
                                 DynvmValueSpec* out) {
  return GetSpec(__func__, exe, function, index, out, /*input=*/true);
}

DynvmStatus dynvm_function_output(const DynvmExecutable* exe, size_t function, size_t index,
                                  DynvmValueSpec* out) {
  return GetSpec(__func__, exe, function, index, out, /*input=*/false);
}

// ---- Thread pools and allocators ---------------------------------------------------

DynvmStatus dynvm_thread_pool_create(int32_t num_threads, DynvmThreadPool** out) {
  constexpr int32_t kMaxThreads = 1024;
  if (out == nullptr) return InvalidArgument("dynvm_thread_pool_create: out must not be null");
  if (num_threads < 1 || num_threads > kMaxThreads) {
    return InvalidArgument(absl::StrFormat(
        "dynvm_thread_pool_create: num_threads must be in [1, %d], got %d", kMaxThreads,
        num_threads));
  }
  *out = new DynvmThreadPool{std::make_shared<dynvm::kernels::ThreadPool>(num_threads)};
  return DYNVM_OK;
}

void dynvm_thread_pool_release(DynvmThreadPool* pool) { delete pool; }

DynvmStatus dynvm_allocator_create(DynvmAllocatorKind kind, uint64_t max_allocation_bytes,
                                   DynvmAllocator** out) {
  if (out == nullptr) return InvalidArgument("dynvm_allocator_create: out must not be null");
  dynvm::AllocatorOptions options;
  if (max_allocation_bytes != 0) options.max_allocation_bytes = max_allocation_bytes;
  switch (EnumValue(kind)) {
    case DYNVM_ALLOCATOR_POOLED:
      *out = new DynvmAllocator{dynvm::MakePooledAllocator(options)};
      return DYNVM_OK;
    case DYNVM_ALLOCATOR_NAIVE:
      *out = new DynvmAllocator{dynvm::MakeNaiveAllocator(options)};
      return DYNVM_OK;
  }
  return InvalidArgument(absl::StrFormat(
      "dynvm_allocator_create: unknown allocator kind %d, expected DYNVM_ALLOCATOR_POOLED (0) "
      "or DYNVM_ALLOCATOR_NAIVE (1)",
      EnumValue(kind)));
}

void dynvm_allocator_release(DynvmAllocator* allocator) { delete allocator; }

DynvmStatus dynvm_allocator_stats(const DynvmAllocator* allocator, DynvmAllocatorStats* out) {
  if (allocator == nullptr || out == nullptr) {
    return InvalidArgument("dynvm_allocator_stats: allocator and out must not be null");
  }
  const dynvm::AllocatorStats s = allocator->allocator->stats();
  *out = DynvmAllocatorStats{s.bytes_live,  s.peak_bytes_live, s.bytes_cached,
                             s.allocations, s.pool_hits,       s.system_allocations};
  return DYNVM_OK;
}

// ---- Virtual machines --------------------------------------------------------------

void dynvm_vm_options_init(DynvmVmOptions* options) {
  if (options == nullptr) return;
  const dynvm::vm::VmOptions defaults;
  *options = DynvmVmOptions{};
  options->max_call_depth = defaults.max_call_depth;
  options->max_steps = defaults.max_steps;
  options->max_memory_bytes = defaults.max_memory_bytes;
}

DynvmStatus dynvm_vm_create(DynvmExecutable* exe, const DynvmVmOptions* options, DynvmVm** out) {
  if (exe == nullptr || out == nullptr) {
    return InvalidArgument("dynvm_vm_create: exe and out must not be null");
  }
  DynvmVmOptions c;
  dynvm_vm_options_init(&c);
  if (options != nullptr) c = *options;
  if (c.max_call_depth == 0 || c.max_steps < 0 || c.timeout_us < 0 || c.max_memory_bytes < 0) {
    return InvalidArgument(absl::StrFormat(
        "dynvm_vm_create: max_call_depth must be >= 1 and max_steps, timeout_us and "
        "max_memory_bytes >= 0 (0: no limit); got %d, %d, %d and %d",
        c.max_call_depth, c.max_steps, c.timeout_us, c.max_memory_bytes));
  }
  auto vm = std::make_unique<DynvmVm>();
  dynvm::vm::VmOptions o;
  o.max_call_depth = c.max_call_depth;
  o.max_steps = c.max_steps;
  if (c.timeout_us > 0) o.timeout = absl::Microseconds(c.timeout_us);
  o.max_memory_bytes = c.max_memory_bytes;
  if (c.thread_pool != nullptr) {
    vm->pool = c.thread_pool->pool;
    o.thread_pool = vm->pool.get();
  }
  if (c.allocator != nullptr) o.allocator = c.allocator->allocator;
  vm->vm = std::make_unique<dynvm::vm::VirtualMachine>(exe->exe, std::move(o));
  *out = vm.release();
  return DYNVM_OK;
}

void dynvm_vm_release(DynvmVm* vm) { delete vm; }

DynvmValue dynvm_tensor_value(DLManagedTensor* tensor) {
  DynvmValue v{};
  v.kind = DYNVM_KIND_TENSOR;
  v.tensor = tensor;
  return v;
}

DynvmValue dynvm_int_value(int64_t i) {
  DynvmValue v{};
  v.kind = DYNVM_KIND_INT;
  v.i = i;
  return v;
}

DynvmValue dynvm_float_value(double f) {
  DynvmValue v{};
  v.kind = DYNVM_KIND_FLOAT;
  v.f = f;
  return v;
}

DynvmValue dynvm_bool_value(int b) {
  DynvmValue v{};
  v.kind = DYNVM_KIND_BOOL;
  v.i = b != 0;
  return v;
}

void dynvm_value_release(DynvmValue* value) {
  if (value == nullptr || !IsTensor(*value) || value->tensor == nullptr) return;
  DLManagedTensor* tensor = value->tensor;
  value->tensor = nullptr;
  if (tensor->deleter != nullptr) tensor->deleter(tensor);
}

}  // extern "C"

namespace {

// Calls the deleters of the tensors of args[0..n) that dynvm did not take over (those
// `taken` marks; none when it is empty), once per tensor even if the caller passed one
// twice.
void ReleaseTensors(const DynvmValue* args, size_t n, const std::vector<bool>& taken) {
  for (size_t i = 0; i < n; ++i) {
    if (!taken.empty() && taken[i]) continue;
    DLManagedTensor* t = IsTensor(args[i]) ? args[i].tensor : nullptr;
    if (t == nullptr || t->deleter == nullptr) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) {
      seen = IsTensor(args[j]) && args[j].tensor == t;
    }
    if (!seen) t->deleter(t);
  }
}

// An error if two arguments are the same managed tensor: dynvm takes each one over, and
// a DLManagedTensor has one owner (its deleter may run once).
absl::Status CheckDistinctTensors(const DynvmValue* args, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!IsTensor(args[i]) || args[i].tensor == nullptr) continue;
    for (size_t j = 0; j < i; ++j) {
      if (IsTensor(args[j]) && args[j].tensor == args[i].tensor) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "argument %d is the same DLManagedTensor as argument %d: each tensor argument must "
            "be a managed tensor of its own (dynvm takes each over); several may share memory",
            i, j));
      }
    }
  }
  return absl::OkStatus();
}

// The Value of C argument `arg`; takes over a tensor on success.
absl::StatusOr<Value> ToValue(const DynvmValue& arg) {
  const int32_t kind = EnumValue(arg.kind);
  switch (kind) {
    case DYNVM_KIND_TENSOR: {
      DYNVM_ASSIGN_OR_RETURN(dynvm::NDArray array, dynvm::FromDLPack(arg.tensor));
      return Value(std::move(array));
    }
    case DYNVM_KIND_INT: return Value::Int(arg.i);
    case DYNVM_KIND_FLOAT: return Value::Float(arg.f);
    case DYNVM_KIND_BOOL: return Value::Bool(arg.i != 0);
    case DYNVM_KIND_ANY:
    case DYNVM_KIND_TUPLE: break;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("kind %d is not a tensor (1), int (2), float (3) or bool (4)", kind));
}

// The arguments of function `function` from args[0..n), through the binder (by
// position, checked against the signature). Takes every tensor over whatever the
// outcome: on failure those the binder had not reached are released here.
absl::StatusOr<std::vector<Value>> BindArgs(const dynvm::vm::Function& function,
                                            const DynvmValue* args, size_t n) {
  std::vector<bool> taken(n, false);
  std::vector<dynvm::codec::ArgumentSource> sources;
  sources.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    sources.push_back({.name = "",
                       .label = absl::StrFormat("args[%d]", i),
                       .build = [&args, &taken, i](const dynvm::vm::ValueSpec&) {
                         absl::StatusOr<Value> value = ToValue(args[i]);
                         taken[i] = value.ok();
                         return value;
                       }});
  }
  absl::StatusOr<std::vector<Value>> bound = dynvm::codec::BindArguments(function, sources);
  if (!bound.ok()) ReleaseTensors(args, n, taken);
  return bound;
}

// The C value of a result leaf, or an error for what C cannot hold (closures, ...).
absl::StatusOr<DynvmValue> FromValue(const Value& value, size_t i) {
  if (value.is_int()) return dynvm_int_value(value.int_value());
  if (value.is_float()) return dynvm_float_value(value.float_value());
  if (value.is_bool()) return dynvm_bool_value(value.bool_value());
  if (const auto* t = value.As<dynvm::NDArrayObj>()) {
    if (t->dtype() == dynvm::DType::kString) {
      return absl::UnimplementedError(absl::StrFormat(
          "result %d is a string tensor, which DLPack (and so the C API) cannot carry", i));
    }
    return dynvm_tensor_value(dynvm::ToDLPack(value.AsRef<dynvm::NDArrayObj>()));
  }
  return absl::UnimplementedError(absl::StrFormat(
      "result %d is %s, which the C API cannot return (tensors, ints, floats and bools only)", i,
      value.TypeName()));
}

}  // namespace

namespace {

// dynvm_vm_invoke and dynvm_vm_invoke_with_limits: within `limits`, or the VM's options
// when there are none.
DynvmStatus Invoke(DynvmVm* vm, const char* function, const DynvmValue* args, size_t num_args,
                   DynvmValue* results, size_t max_results, size_t* num_results,
                   const dynvm::vm::InvokeLimits* limits) {
  if (args == nullptr && num_args != 0) {
    return InvalidArgument("dynvm_vm_invoke: args is null but num_args is not 0");
  }
  if (vm == nullptr || function == nullptr || num_results == nullptr ||
      (results == nullptr && max_results != 0)) {
    ReleaseTensors(args, num_args, {});
    return InvalidArgument(
        "dynvm_vm_invoke: vm, function and num_results must not be null, nor results when "
        "max_results > 0");
  }
  if (absl::Status distinct = CheckDistinctTensors(args, num_args); !distinct.ok()) {
    ReleaseTensors(args, num_args, {});
    return Fail(distinct);
  }
  const std::optional<uint32_t> index = vm->vm->executable().FunctionIndex(function);
  if (!index) {
    ReleaseTensors(args, num_args, {});
    return Fail(absl::NotFoundError(absl::StrFormat("no function named '%s'", function)));
  }
  absl::StatusOr<std::vector<Value>> bound =
      BindArgs(vm->vm->executable().function(*index), args, num_args);
  if (!bound.ok()) return Fail(bound.status());
  absl::StatusOr<Value> result = limits != nullptr ? vm->vm->Invoke(*index, *bound, *limits)
                                                   : vm->vm->Invoke(*index, *bound);
  if (!result.ok()) return Fail(result.status());

  const std::vector<Value> leaves = dynvm::FlattenValue(*result);
  if (leaves.size() > max_results) {
    *num_results = leaves.size();
    return Fail(absl::OutOfRangeError(absl::StrFormat(
        "function '%s' returns %d values but results has room for %d", function, leaves.size(),
        max_results)));
  }
  std::vector<DynvmValue> out;
  out.reserve(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    absl::StatusOr<DynvmValue> v = FromValue(leaves[i], i);
    if (!v.ok()) {
      for (DynvmValue& done : out) dynvm_value_release(&done);
      return Fail(v.status());
    }
    out.push_back(*v);
  }
  std::copy(out.begin(), out.end(), results);
  *num_results = out.size();
  return DYNVM_OK;
}

}  // namespace

extern "C" DynvmStatus dynvm_vm_invoke(DynvmVm* vm, const char* function,
                                       const DynvmValue* args, size_t num_args,
                                       DynvmValue* results, size_t max_results,
                                       size_t* num_results) {
  return Invoke(vm, function, args, num_args, results, max_results, num_results, nullptr);
}

extern "C" DynvmStatus dynvm_vm_invoke_with_limits(DynvmVm* vm, const char* function,
                                                   const DynvmValue* args, size_t num_args,
                                                   DynvmValue* results, size_t max_results,
                                                   size_t* num_results, int64_t timeout_us,
                                                   int64_t max_memory_bytes) {
  if (timeout_us < 0 || max_memory_bytes < 0) {
    ReleaseTensors(args, args == nullptr ? 0 : num_args, {});
    return InvalidArgument(absl::StrFormat(
        "dynvm_vm_invoke_with_limits: timeout_us and max_memory_bytes must be >= 0 (0: no "
        "limit), got %d and %d",
        timeout_us, max_memory_bytes));
  }
  dynvm::vm::InvokeLimits limits;
  if (timeout_us > 0) limits.deadline = absl::Now() + absl::Microseconds(timeout_us);
  limits.max_memory_bytes = max_memory_bytes;
  return Invoke(vm, function, args, num_args, results, max_results, num_results, &limits);
}
