// Python-style quoting of string elements.
#include "tools/run/elements.h"

#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "objects/string_tensor.h"

namespace dynvm::tools {

std::string StringElementRepr(const NDArrayObj& array, int64_t index) {
  const absl::StatusOr<std::string_view> s = StringElement(array, index);
  if (!s.ok()) return "<invalid string>";
  return absl::StrCat("'", absl::CHexEscape(absl::string_view(s->data(), s->size())), "'");
}

}  // namespace dynvm::tools
