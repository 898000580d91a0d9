// Flag values for the command-line tools.
//
//   DYNVM_RETURN_IF_ERROR(ParseIntFlag("port", "8000", 0, 65535, port));
#ifndef DYNVM_TOOLS_FLAG_UTIL_H_
#define DYNVM_TOOLS_FLAG_UTIL_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace dynvm::tools {

// Sets `out` to `value`, the value of flag `name`, as an integer in [min, max];
// otherwise InvalidArgument "--name must be an integer in [min, max], got 'value'".
absl::Status ParseIntFlag(std::string_view name, std::string_view value, int64_t min,
                          int64_t max, int64_t& out);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_FLAG_UTIL_H_
