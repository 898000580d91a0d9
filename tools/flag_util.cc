#include "tools/flag_util.h"

#include <charconv>
#include <system_error>

#include "absl/strings/str_format.h"

namespace dynvm::tools {

absl::Status ParseIntFlag(std::string_view name, std::string_view value, int64_t min,
                          int64_t max, int64_t& out) {
  int64_t parsed = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (ec != std::errc() || ptr != value.data() + value.size() || parsed < min || parsed > max) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--%s must be an integer in [%d, %d], got '%s'", name, min, max, value));
  }
  out = parsed;
  return absl::OkStatus();
}

}  // namespace dynvm::tools
