// NativeModule: the native kernels the compiler generated, loaded at run time with no
// LLVM and no dlopen. The compiler emits them as one ELF64 x86-64 relocatable object
// (ET_REL, what `clang -c -fPIC` writes: PIC, small code model), stored as bytes in the
// executable file; Load links that object into fresh memory by itself.
//
// The bytes may be hostile: every offset, size, index and count is checked before use,
// and malformed input gives InvalidArgument (`native code: ...`), never a crash. The
// mapping is W^X: written while relocations apply, then code becomes read+execute and
// constants read-only; no page is ever writable and executable at once.
//
//   const NativeExternal externals[] = {{"powf", reinterpret_cast<const void*>(&powf)}};
//   DYNVM_ASSIGN_OR_RETURN(std::shared_ptr<const NativeModule> module,
//                          NativeModule::Load(object_bytes, externals));
//   DYNVM_ASSIGN_OR_RETURN(const void* address, module->Find("fused_add_relu"));
//   auto* kernel = reinterpret_cast<void (*)(const float*, float*, int64_t)>(
//       const_cast<void*>(address));
#ifndef DYNVM_VM_NATIVE_NATIVE_MODULE_H_
#define DYNVM_VM_NATIVE_NATIVE_MODULE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace dynvm::vm {

// A function the object may call that it does not define (libm's powf, ...), resolved
// by name. `name` only needs to outlive the Load call.
struct NativeExternal {
  std::string_view name;  // the symbol's name in the object, e.g. "powf"
  const void* address;    // what calls and references to it reach
};

// What the runtime lets generated code call, for the operations LLVM lowers to libm
// calls: sinf, cosf and sincosf (sin and cos lanes beyond the vector reduction), powf,
// fmodf, and floorf, ceilf and roundevenf (rounding on CPUs without SSE4.1). Each is
// the C library's, as the kernel library calls it. The compiler loads what it emits
// against this list, so an executable it writes never names anything else.
absl::Span<const NativeExternal> NativeRuntimeExternals();

// One loaded object: its code, constants and the stubs and GOT slots its relocations
// needed, in one private anonymous mapping that lives as long as the module. Immutable
// once loaded, so it may be shared and its functions called from any thread.
class NativeModule {
 public:
  // Loads `object` into fresh memory: copies the SHF_ALLOC sections (executable ones
  // first, then 16-byte call stubs for `externals`, then page-aligned read-only
  // sections and GOT slots), applies their RELA relocations, then makes code
  // read+execute and the rest read-only.
  //
  // Accepts ELFCLASS64, little-endian, EV_CURRENT, ET_REL, EM_X86_64 with exactly one
  // symbol table, RELA relocations of types NONE, 64, PC32, PLT32, PC64, 32, 32S,
  // GOTPCREL, GOTPCRELX and REX_GOTPCRELX. Undefined symbols resolve by name against
  // `externals`; calls to them go through a stub, so every rel32 reaches. Fails with
  // InvalidArgument (`native code: ...`, naming what was found and what was expected)
  // on malformed input, a writable or thread-local SHF_ALLOC section (generated kernels
  // keep no mutable state; empty ones and .data.rel.ro, which only relocations write,
  // are accepted), an unknown symbol or relocation type, or an absolute 32-bit
  // relocation that does not fit (the object was not compiled with -fPIC);
  // ResourceExhausted past 64 MiB of mapped memory or when mmap fails.
  static absl::StatusOr<std::shared_ptr<const NativeModule>> Load(
      std::string_view object, absl::Span<const NativeExternal> externals);

  // The address of the defined, global (or weak) function symbol (STT_FUNC) `name`,
  // or NotFound naming it. The address is valid as long as this module lives.
  absl::StatusOr<const void*> Find(std::string_view name) const;

  // Bytes of code and constants mapped (whole pages, stubs and GOT slots included).
  size_t size() const { return size_; }

  // Unmaps the memory: no function of this module may run any more.
  ~NativeModule();

  NativeModule(const NativeModule&) = delete;
  NativeModule& operator=(const NativeModule&) = delete;

 private:
  NativeModule(void* base, size_t size) : base_(base), size_(size) {}

  void* base_ = nullptr;  // the mapping; null when the object has nothing to load
  size_t size_ = 0;
  absl::flat_hash_map<std::string, const void*> functions_;  // Find's table
};

}  // namespace dynvm::vm

#endif  // DYNVM_VM_NATIVE_NATIVE_MODULE_H_
