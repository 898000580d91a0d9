// Constant files and compile errors for the compiler's front doors
// (compiler/driver/model_input.h).
#include "compiler/driver/model_input.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "compiler/frontend/relay_text/parser.h"
#include "objects/allocator.h"
#include "serializer/npy.h"
#include "serializer/npz.h"

namespace dynvm::compiler {

absl::StatusOr<std::vector<NDArray>> ReadConstantFiles(const std::vector<std::string>& paths) {
  std::vector<NDArray> constants;
  for (const std::string& path : paths) {
    if (!absl::EndsWith(path, ".npz")) {
      DYNVM_ASSIGN_OR_RETURN(NDArray c, serializer::ReadNpyFile(path, MakeNaiveAllocator()));
      constants.push_back(std::move(c));
      continue;
    }
    DYNVM_ASSIGN_OR_RETURN(std::vector<serializer::NpzEntry> arrays,
                           serializer::ReadNpzFile(path, MakeNaiveAllocator()));
    // np.savez(a, b, w=c) stores w first: the positional arrays go by their index.
    const auto positional = std::stable_partition(
        arrays.begin(), arrays.end(), [](const serializer::NpzEntry& e) { return e.name.starts_with("arr_"); });
    std::sort(arrays.begin(), positional, [](const serializer::NpzEntry& a, const serializer::NpzEntry& b) {
      return std::atoll(a.name.c_str() + 4) < std::atoll(b.name.c_str() + 4);
    });
    for (serializer::NpzEntry& e : arrays) constants.push_back(std::move(e.array));
  }
  return constants;
}

absl::Status NameCompileError(const absl::Status& status, std::string_view text, std::string_view source_name) {
  if (status.ok()) return status;
  const absl::Status shown = ShowSourceLine(status, text, source_name);
  if (shown.message() != status.message()) return shown;
  return absl::Status(status.code(), absl::StrFormat("%s: %s", source_name, status.message()));
}

}  // namespace dynvm::compiler
