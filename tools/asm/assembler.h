// The assembler of dynvm's bytecode assembly text (docs/assembly.md): turns the text
// `vm_dis` prints, or that a person writes, into an ExecutableSpec.
//
// Everything a spec holds has a text form (producer, functions with their signatures
// and code, the kernel table with attributes, constants of every kind), so
// Assemble(Disassemble(spec)) equals `spec`. The assembler resolves names (labels,
// @functions, kernels, constants) in any order of definition, but checks only what the
// text itself decides; run vm::VerifyExecutable on the result before trusting it.
//
//   AssembleOptions options;
//   options.filename = "model.s";        // in error messages
//   options.base_dir = "models";         // where `npy "w.npy"` is looked for
//   absl::StatusOr<vm::ExecutableSpec> spec = Assemble(text, options);
//   // on error: "model.s:12:9: undefined label 'L3'"
#ifndef DYNVM_TOOLS_ASM_ASSEMBLER_H_
#define DYNVM_TOOLS_ASM_ASSEMBLER_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "objects/allocator.h"
#include "vm/executable.h"

namespace dynvm::tools {

struct AssembleOptions {
  // The name errors give the text, as in "<filename>:<line>:<col>: ...".
  std::string filename = "<input>";
  // The directory relative `.npy` paths are resolved against; empty means the current
  // directory.
  std::string base_dir;
  // Where tensor constants are allocated; null means a naive allocator.
  std::shared_ptr<Allocator> allocator;
};

// Assembles `text`. Fails with InvalidArgument whose message is one line,
// "<filename>:<line>:<col>: <what was wrong>" (an unknown instruction, a wrong operand,
// an undefined or duplicate name, a bad dtype, ...); a failure to read an `.npy` file
// keeps its own code and is prefixed the same way.
absl::StatusOr<vm::ExecutableSpec> Assemble(std::string_view text,
                                            const AssembleOptions& options = {});

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_ASM_ASSEMBLER_H_
