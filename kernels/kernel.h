// The one kernel calling convention, and the registry that binds kernel-table entries
// of an executable to callables once, at load time.
//
// Destination passing: a kernel receives its inputs then its outputs, all tensors, with
// the outputs already allocated by the VM; it writes the outputs' elements. Attributes
// (axis, eps, transpose flags, fused constants) are parsed and validated once by the
// kernel's Bind function into an opaque state; a call does no string lookup, no
// parsing and no allocation. Library kernels (C++) and generated kernels look the same.
//
//   KernelRegistry registry;
//   RegisterCpuKernels(registry);
//   absl::StatusOr<BoundKernel> add = registry.Bind("add", {}, 2, 1);
//   NDArrayObj* args[] = {a, b, out};
//   add->Call(args);
#ifndef DYNVM_KERNELS_KERNEL_H_
#define DYNVM_KERNELS_KERNEL_H_

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/thread_pool.h"
#include "objects/ndarray.h"

namespace dynvm::kernels {

// An attribute value: int, float, string, or a list of ints or floats.
using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
// Attributes by name, ordered so that executables serialize deterministically.
using Attrs = std::map<std::string, AttrValue, std::less<>>;

// What a kernel receives on each call. New fields are appended, so kernels compiled
// against an older layout keep working.
struct KernelCall {
  const void* state;           // what Bind returned, or null
  NDArrayObj* const* args;     // inputs then outputs
  int32_t num_inputs;
  int32_t num_outputs;
  ThreadPool* pool;            // where to parallelise; never null

  absl::Span<NDArrayObj* const> inputs() const { return {args, static_cast<size_t>(num_inputs)}; }
  absl::Span<NDArrayObj* const> outputs() const {
    return {args + num_inputs, static_cast<size_t>(num_outputs)};
  }
};

// A kernel entry point. Wrappers check shapes and dtypes and return InvalidArgument
// naming what was wrong; microkernels behind them assume.
using KernelFn = absl::Status (*)(const KernelCall& call);

// What a shape function receives: the call's inputs (their shapes, and for
// data-dependent kernels their values) and one Shape per output to fill.
struct ShapeCall {
  const void* state;
  NDArrayObj* const* inputs;
  int32_t num_inputs;
  Shape* output_shapes;
  int32_t num_outputs;

  absl::Span<NDArrayObj* const> input_span() const {
    return {inputs, static_cast<size_t>(num_inputs)};
  }
};

// Computes the output shapes of a call before its outputs are allocated. Errors are
// what the kernel itself would report for these inputs (shapes that do not fit).
using ShapeFn = absl::Status (*)(const ShapeCall& call);

// The floating-point operations of a call (a multiply and an add count two), for the
// profiler's GFLOP/s: `state` is what Bind returned, `args` the call's inputs then
// outputs. nullopt when the arguments do not have the shapes the kernel takes (the
// call failed).
using FlopsFn = std::optional<double> (*)(const void* state, NDArrayObj* const* args,
                                          int num_inputs);

// Parses attributes into the kernel's private state. Errors name the attribute.
using BindFn = absl::StatusOr<std::shared_ptr<const void>> (*)(const Attrs& attrs);

// The row-function ABI of the native code the compiler's LLVM code generator emits for
// a fused elementwise program (compiler/llvm/fused_kernel.h). One row of the output:
// out[k] = program(in[0][k * strides[0]], ...) for k in [0, n), n >= 1. The contiguous
// variant assumes every stride is 1 and may ignore `strides`; the strided one takes
// each input's stride, 0 (the input repeats in[j][0]) or 1. `out` may be one of the
// `in` pointers (an input of the output's shape, updated in place), never a partial
// overlap.
using NativeRowFn = void (*)(float* out, const float* const* in, const int64_t* strides,
                             int64_t n);

// The code compiled for one fused program.
struct NativeElementwiseCode {
  NativeRowFn contiguous = nullptr;
  NativeRowFn strided = nullptr;
  std::shared_ptr<const void> owner;  // keeps the code mapped while a kernel uses it
};

// What binding may draw on besides the attributes: the native code an executable
// carries for its fused programs (compiler/llvm). A default context has none.
struct BindContext {
  // The row functions compiled for the fused program `text` (an attribute's value, as
  // written), or null; valid during the Bind call. Empty: no native code.
  std::function<const NativeElementwiseCode*(std::string_view text)> native_program;
};

// Bind for kernels whose attributes hold fused programs (a `program`, `prologue` or
// `epilogue`): they take the context so that those programs run native code.
using BindInContextFn = absl::StatusOr<std::shared_ptr<const void>> (*)(
    const Attrs& attrs, const BindContext& context);

// A kernel named "native.X" is kernel X running the executable's native code for its
// fused programs (kernels/elementwise/native_elementwise.h): an executable whose native
// code is not loaded binds X instead (vm/executable.h).
inline constexpr std::string_view kNativeKernelPrefix = "native.";

// Arity value meaning "any number".
inline constexpr int kVariadic = -1;

// How a kernel is registered.
struct KernelDef {
  std::string name;
  int num_inputs = kVariadic;
  int num_outputs = 1;
  KernelFn fn = nullptr;
  BindFn bind = nullptr;       // null: the kernel takes no attributes
  ShapeFn shape_fn = nullptr;  // every library kernel has one
  BindInContextFn bind_in_context = nullptr;  // instead of `bind` (at most one is set)
  // Whether the kernel handles string tensors (objects/string_tensor.h). Every other
  // kernel is refused them by BoundKernel before it runs: their elements are pointers
  // that only string-aware code may copy or follow.
  bool takes_strings = false;
  // Counts a call's floating-point operations; null for kernels whose time is not
  // spent in arithmetic worth counting (kernels/gemm/flops.h has the matrix products').
  FlopsFn flops = nullptr;
};

// A kernel resolved for one kernel-table entry, ready to call.
class BoundKernel {
 public:
  BoundKernel(const KernelDef* def, std::shared_ptr<const void> state, int num_inputs,
              int num_outputs)
      : def_(def), state_(std::move(state)), num_inputs_(num_inputs), num_outputs_(num_outputs) {}

  // Runs the kernel on `args` (num_inputs + num_outputs tensors), parallelising on
  // `pool`.
  absl::Status Call(NDArrayObj* const* args, ThreadPool& pool) const {
    if (!def_->takes_strings) {
      if (absl::Status s = RefuseStrings(args, num_inputs_ + num_outputs_); !s.ok()) return s;
    }
    return def_->fn(KernelCall{state_.get(), args, num_inputs_, num_outputs_, &pool});
  }
  // Fills `output_shapes` (num_outputs entries) with the shapes a call on `inputs`
  // produces. Unimplemented if the kernel has no shape function.
  absl::Status InferShapes(NDArrayObj* const* inputs, Shape* output_shapes) const;
  // The floating-point operations of a call on `args`, if the kernel counts them.
  std::optional<double> Flops(NDArrayObj* const* args) const {
    if (def_->flops == nullptr) return std::nullopt;
    return def_->flops(state_.get(), args, num_inputs_);
  }
  const std::string& name() const { return def_->name; }
  int num_inputs() const { return num_inputs_; }
  int num_outputs() const { return num_outputs_; }

 private:
  // InvalidArgument naming the kernel and the argument if one of the `n` is a string
  // tensor.
  absl::Status RefuseStrings(NDArrayObj* const* args, int n) const {
    for (int i = 0; i < n; ++i) {
      if (args[i]->dtype() == DType::kString) [[unlikely]] {
        return StringArgumentError(i);
      }
    }
    return absl::OkStatus();
  }
  absl::Status StringArgumentError(int index) const;

  const KernelDef* def_;
  std::shared_ptr<const void> state_;
  int num_inputs_;
  int num_outputs_;
};

class KernelRegistry {
 public:
  // Adds `def`; AlreadyExists if the name is taken, InvalidArgument if incomplete.
  absl::Status Register(KernelDef def);
  // Resolves `name` with `attrs` for a call with the given arity, its fused programs
  // running the native code `context` has for them. NotFound for an unknown kernel;
  // InvalidArgument for an arity the kernel does not take or a bad attribute.
  absl::StatusOr<BoundKernel> Bind(std::string_view name, const Attrs& attrs, int num_inputs,
                                   int num_outputs, const BindContext& context = {}) const;
  bool Contains(std::string_view name) const {
    return defs_.contains(absl::string_view(name.data(), name.size()));
  }
  // The definition registered under `name`, or null.
  const KernelDef* Find(std::string_view name) const;
  // The registered kernel names, sorted.
  std::vector<std::string> Names() const;

 private:
  // Node-based so that BoundKernels may point at definitions.
  absl::flat_hash_map<std::string, std::unique_ptr<KernelDef>> defs_;
};

// Typed access to attributes for Bind functions. Missing or mistyped attributes are
// InvalidArgument naming the attribute; the overloads with `fallback` return it when
// the attribute is absent. A float attribute also accepts an int value.
absl::StatusOr<int64_t> GetIntAttr(const Attrs& attrs, std::string_view name);
absl::StatusOr<int64_t> GetIntAttr(const Attrs& attrs, std::string_view name, int64_t fallback);
// A boolean attribute (Relay's bools arrive as ints): 0 or 1, else InvalidArgument.
absl::StatusOr<bool> GetBoolAttr(const Attrs& attrs, std::string_view name, bool fallback);
absl::StatusOr<double> GetFloatAttr(const Attrs& attrs, std::string_view name);
absl::StatusOr<double> GetFloatAttr(const Attrs& attrs, std::string_view name, double fallback);
absl::StatusOr<std::string> GetStringAttr(const Attrs& attrs, std::string_view name);
absl::StatusOr<std::string> GetStringAttr(const Attrs& attrs, std::string_view name,
                                          std::string_view fallback);
absl::StatusOr<std::vector<int64_t>> GetIntsAttr(const Attrs& attrs, std::string_view name);
absl::StatusOr<std::vector<int64_t>> GetIntsAttr(const Attrs& attrs, std::string_view name,
                                                 std::vector<int64_t> fallback);
// OK if every attribute in `attrs` is one of `known`, else InvalidArgument naming the
// first unknown one (a misspelt attribute must not be silently ignored).
absl::Status CheckKnownAttrs(const Attrs& attrs, std::initializer_list<std::string_view> known);

}  // namespace dynvm::kernels

#endif  // DYNVM_KERNELS_KERNEL_H_
