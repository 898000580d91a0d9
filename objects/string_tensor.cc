// String tensors (objects/string_tensor.h): creation and element access.
#include "objects/string_tensor.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "objects/string_object.h"

namespace dynvm {
namespace {

const StringObj* LoadElement(const NDArrayObj& t, int64_t i) {
  const StringObj* p;
  std::memcpy(&p, static_cast<const char*>(t.data()) + i * sizeof(p), sizeof(p));
  return p;
}

}  // namespace

absl::StatusOr<std::string_view> StringElement(const NDArrayObj& t, int64_t i) {
  const StringObj* s = LoadElement(t, i);
  if (s == nullptr) return std::string_view();
  if (!t.storage()->OwnsString(s)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "element %d of a string tensor %s is not a string its storage holds (its bytes were "
        "written as another type's, or copied raw from another tensor)",
        i, ShapeToString(t.shape())));
  }
  return std::string_view(s->value());
}

void SetStringElement(const NDArrayObj& t, int64_t i, std::string_view value) {
  // The new text is copied before the old one goes: `value` may be the element itself.
  const StringObj* p = nullptr;  // "" takes no memory
  if (!value.empty()) {
    ObjectRef<StringObj> s = MakeObject<StringObj>(value);
    p = s.get();
    t.storage()->AdoptString(std::move(s));
  }
  const StringObj* old = LoadElement(t, i);
  std::memcpy(static_cast<char*>(t.data()) + i * sizeof(p), &p, sizeof(p));
  if (old != nullptr && old != p) t.storage()->ReleaseString(old);
}

absl::StatusOr<NDArray> MakeStringTensor(absl::Span<const int64_t> shape,
                                         absl::Span<const std::string> values,
                                         const std::shared_ptr<Allocator>& allocator) {
  DYNVM_ASSIGN_OR_RETURN(NDArray t, NDArrayObj::Empty(shape, DType::kString, allocator));
  if (static_cast<int64_t>(values.size()) != t->num_elements()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d strings for a string tensor %s of %d elements", values.size(),
        ShapeToString(shape), t->num_elements()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    SetStringElement(*t, static_cast<int64_t>(i), values[i]);
  }
  return t;
}

}  // namespace dynvm
