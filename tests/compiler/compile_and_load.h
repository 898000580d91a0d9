// A module compiled and its executable serialized and loaded back, as vm_compile and
// vm_run would see it: the start of the tests that run compiled programs.
#ifndef DYNVM_TESTS_COMPILER_COMPILE_AND_LOAD_H_
#define DYNVM_TESTS_COMPILER_COMPILE_AND_LOAD_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "serializer/executable_file.h"
#include "vm/executable.h"

namespace dynvm::compiler::testing {

// `mod` compiled with `options` and reloaded; null (with a test failure) on an error.
inline std::shared_ptr<const vm::Executable> CompileAndLoad(const Module& mod,
                                                            const CompileOptions& options = {}) {
  absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(mod, options);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *exe : nullptr;
}

// Relay `text` (with `constants`) parsed, then CompileAndLoad; null (with a test
// failure) on an error.
inline std::shared_ptr<const vm::Executable> ParseCompileAndLoad(std::string_view text, std::string_view source_name,
                                                                 const CompileOptions& options,
                                                                 absl::Span<const NDArray> constants = {}) {
  absl::StatusOr<Module> mod = ParseModule(text, constants, source_name);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? CompileAndLoad(*mod, options) : nullptr;
}

}  // namespace dynvm::compiler::testing

#endif  // DYNVM_TESTS_COMPILER_COMPILE_AND_LOAD_H_
