// onnx_operators: the ONNX operators the importer converts, as the Markdown table of
// docs/onnx.md — one row per operator of the default domain, with the attributes its
// converter reads in every opset (a node with any other is refused). The table is
// generated from the converters' own table (compiler/frontend/onnx/converters.h), and
// a ctest fails when docs/onnx.md's copy differs from this output.
//
//   onnx_operators > table.md
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/frontend/onnx/converters.h"
#include "tools/flags.h"

int main(int argc, char** argv) {
  const dynvm::tools::CommandLine command_line = {.tool = "onnx_operators", .flags = {}};
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(command_line, argc, argv)) return *exit;
  namespace onnx = dynvm::compiler::onnx_frontend;
  std::string table = "| operator | attributes |\n|---|---|\n";
  for (const std::string_view op : onnx::SupportedOperators()) {
    const onnx::ConverterDef* def = onnx::FindConverter(op);
    std::string attributes;
    for (const std::string_view a : def->attributes) {
      attributes += (attributes.empty() ? "`" : ", `") + std::string(a) + "`";
    }
    table += "| `" + std::string(op) + "` | " + (attributes.empty() ? "—" : attributes) + " |\n";
  }
  std::fputs(table.c_str(), stdout);
  return 0;
}
