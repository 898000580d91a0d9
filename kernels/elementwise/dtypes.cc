// The dtype-set checks the elementwise and reduction kernels share, with their
// messages (kernels/elementwise/dtypes.h).
#include "kernels/elementwise/dtypes.h"

#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "kernels/internal/checks.h"

namespace dynvm::kernels::elementwise {

std::string DTypeSetToString(DTypeSet set) {
  std::vector<std::string> names;
  for (int d = 0; d < kNumDTypes; ++d) {
    if ((set >> d) & 1) names.emplace_back(DTypeName(static_cast<DType>(d)));
  }
  if (names.size() <= 1) return names.empty() ? "" : names[0];
  const std::string last = names.back();
  names.pop_back();
  return absl::StrFormat("%s or %s", absl::StrJoin(names, ", "), last);
}

absl::Status CheckDTypeIn(std::string_view op, std::string_view what, const NDArrayObj& t,
                          DTypeSet set) {
  if ((set & Bit(t.dtype())) != 0) return absl::OkStatus();
  return internal::UnsupportedDType(op, what, t.dtype(), DTypeSetToString(set));
}

}  // namespace dynvm::kernels::elementwise
