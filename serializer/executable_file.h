// Saving and loading executables (`exe.fbs`): a fixed header, a FlatBuffers root
// (serializer/executable.fbs) and a 64-byte-aligned weights section. See
// docs/file-format.md.
//
// Loading maps the file and never copies weights: tensor constants are views into the
// mapping, which stays alive as long as the Executable (or any constant taken from it).
// Everything is verified before use — header, FlatBuffers verifier, every constant's
// extent inside the weights section, then the bytecode verifier — so a truncated or
// corrupted file is an error, never a crash.
//
//   DYNVM_RETURN_IF_ERROR(serializer::SaveExecutable(spec, "exe.fbs"));
//   DYNVM_ASSIGN_OR_RETURN(auto exe, serializer::LoadExecutable(
//       "exe.fbs", kernels::DefaultRegistry()));   // {.trust_native_code = true} to run its native code
#ifndef DYNVM_SERIALIZER_EXECUTABLE_FILE_H_
#define DYNVM_SERIALIZER_EXECUTABLE_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/kernel.h"
#include "vm/executable.h"

namespace dynvm::serializer {

// The format version written; a file with another major version is rejected.
inline constexpr uint32_t kFormatMajorVersion = 1;
// Minor 1 added tuple signatures (ValueKind Tuple, ValueSpec.fields); minor 2 native
// code (Executable.native); minor 3 source maps (Executable.sources, Function.source_map).
inline constexpr uint32_t kFormatMinorVersion = 3;

// The bytes of `spec` as an executable file. Deterministic: the same spec gives the
// same bytes. Fails on a constant the format cannot hold.
absl::StatusOr<std::string> SerializeExecutable(const vm::ExecutableSpec& spec);
// Writes SerializeExecutable(spec) to `path`.
absl::Status SaveExecutable(const vm::ExecutableSpec& spec, const std::string& path);

// Parses and verifies an executable file without binding kernels. Tensor constants
// view `bytes`; `owner` (may be null when the caller guarantees the lifetime) keeps
// them alive and is stored as the spec's `backing`. `bytes` must be 8-byte aligned
// (FlatBuffers reads scalars in place; a 64-byte-aligned start keeps every tensor
// 64-byte aligned); otherwise InvalidArgument. Constants are read-only views: nothing
// may write through them (a mapped file is mapped PROT_READ).
absl::StatusOr<vm::ExecutableSpec> ParseExecutable(absl::Span<const uint8_t> bytes,
                                                   ObjectRef<Object> owner);

// Maps `path` read-only and loads it: ParseExecutable, then Executable::Create with
// `registry` and `options` (native code is loaded only if trusted: vm/executable.h).
// Errors name the file.
absl::StatusOr<std::shared_ptr<const vm::Executable>> LoadExecutable(
    const std::string& path, const kernels::KernelRegistry& registry, const vm::LoadOptions& options = {});
// Loads from memory the caller owns; the bytes are copied once into an aligned buffer
// owned by the executable.
absl::StatusOr<std::shared_ptr<const vm::Executable>> LoadExecutableFromMemory(
    absl::Span<const uint8_t> bytes, const kernels::KernelRegistry& registry,
    const vm::LoadOptions& options = {});

// The executable a file holding `spec` loads as: SerializeExecutable, then
// LoadExecutableFromMemory — what vm_compile then vm_run --trust-native do, without the
// file (for tests and tools that compile and run in one process: the spec was made
// here, so its native code is trusted).
absl::StatusOr<std::shared_ptr<const vm::Executable>> ReloadExecutable(
    const vm::ExecutableSpec& spec, const kernels::KernelRegistry& registry);

}  // namespace dynvm::serializer

#endif  // DYNVM_SERIALIZER_EXECUTABLE_FILE_H_
