// libFuzzer target: Relay text from a stranger (vm_compile model.relay). Parsing and
// type checking give a module or a status. A module that type-checks must print to text
// that reads back to the same program (the printer's promise,
// compiler/frontend/relay_text/printer.h): it parses, type-checks and prints the same.
// And lambda lifting takes any typed module, and its result prints to text that parses
// and type-checks too.
#include <cstdint>
#include <string_view>

#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/passes/lambda_lift.h"
#include "compiler/passes/type_infer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dynvm::compiler;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Module> module = ParseModule(text);
  if (!module.ok()) return 0;
  absl::StatusOr<Module> typed = InferTypes(*module);
  if (!typed.ok()) return 0;
  const RelayText printed = PrintModule(*typed);
  absl::StatusOr<Module> again = ParseModule(printed.text, printed.constants);
  if (!again.ok()) __builtin_trap();
  absl::StatusOr<Module> typed_again = InferTypes(*again);
  if (!typed_again.ok() || PrintModule(*typed_again).text != printed.text) __builtin_trap();
  absl::StatusOr<Module> lifted = LiftLambdas(*typed);
  if (!lifted.ok()) __builtin_trap();
  const RelayText lifted_text = PrintModule(*lifted);
  absl::StatusOr<Module> lifted_again = ParseModule(lifted_text.text, lifted_text.constants);
  if (!lifted_again.ok() || !InferTypes(*lifted_again).ok()) __builtin_trap();
  return 0;
}
