// StringObj: an immutable string, used for Fatal messages and string constants.
#ifndef DYNVM_OBJECTS_STRING_OBJECT_H_
#define DYNVM_OBJECTS_STRING_OBJECT_H_

#include <string>
#include <string_view>

#include "objects/object.h"

namespace dynvm {

class StringObj : public Object {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kString;
  explicit StringObj(std::string_view s) : Object(kTypeIndex), value_(s) {}
  const std::string& value() const { return value_; }

 private:
  std::string value_;
};

using String = ObjectRef<StringObj>;

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_STRING_OBJECT_H_
