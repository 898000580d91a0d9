// onnx_operators: the ONNX operators the importer converts, as the Markdown table of
// docs/onnx.md — one row per operator, with the opsets it exists in up to the importer's
// newest (from ONNX's schema registry) and the attributes its converter reads in every
// opset (a node with any other is refused). The table is
// generated from the converters' own table (compiler/frontend/onnx/converters.h), and
// a ctest fails when docs/onnx.md's copy differs from this output.
//
//   onnx_operators > table.md
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/frontend/onnx/converters.h"
#include "compiler/frontend/onnx/importer.h"
#include "onnx/defs/schema.h"
#include "tools/flags.h"

namespace {

// The opsets of `domain` in which `op` exists, up to `newest`: "first-newest" (or the
// one), from the oldest version of its schema; "?" if ONNX does not know it.
std::string Opsets(const std::string& op, const std::string& domain, int64_t newest) {
  for (int64_t v = 1; v <= newest; ++v) {
    if (onnx::OpSchemaRegistry::Schema(op, static_cast<int>(v), domain) != nullptr) {
      return v == newest ? std::to_string(v) : std::to_string(v) + "-" + std::to_string(newest);
    }
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  const dynvm::tools::CommandLine command_line = {.tool = "onnx_operators", .flags = {}};
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(command_line, argc, argv)) return *exit;
  namespace onnx = dynvm::compiler::onnx_frontend;
  std::string table = "| operator | opsets | attributes |\n|---|---|---|\n";
  for (const std::string_view op : onnx::SupportedOperators()) {
    const onnx::ConverterDef* def = onnx::FindConverter(op);
    std::string attributes;
    for (const std::string_view a : def->attributes) {
      attributes += (attributes.empty() ? "`" : ", `") + std::string(a) + "`";
    }
    // Training operators are listed as "domain:Op" (converters.h), in version 1 of it.
    const std::string name(op);
    const size_t colon = name.find(':');
    const std::string opsets = colon == std::string::npos ? Opsets(name, "", dynvm::compiler::onnx_frontend::kMaxOpset)
                                                          : Opsets(name.substr(colon + 1), name.substr(0, colon), 1);
    table += "| `" + name + "` | " + opsets + " | " + (attributes.empty() ? "—" : attributes) + " |\n";
  }
  std::fputs(table.c_str(), stdout);
  return 0;
}
