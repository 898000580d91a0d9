// An object that runs a finalizer when its last reference goes: the keep-alive owner of
// memory the object system did not allocate (an mmap of an executable file, a tensor
// imported through DLPack). Storages that view such memory hold a reference to it.
//
//   ObjectRef<Object> owner = MakeOpaque([p] { munmap(p, n); });
#ifndef DYNVM_OBJECTS_OPAQUE_H_
#define DYNVM_OBJECTS_OPAQUE_H_

#include <functional>
#include <utility>

#include "objects/object.h"

namespace dynvm {

class OpaqueObj : public Object {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kOpaque;
  explicit OpaqueObj(std::function<void()> finalizer)
      : Object(kTypeIndex), finalizer_(std::move(finalizer)) {}
  ~OpaqueObj() {
    if (finalizer_) finalizer_();
  }

 private:
  std::function<void()> finalizer_;
};

inline ObjectRef<Object> MakeOpaque(std::function<void()> finalizer) {
  return MakeObject<OpaqueObj>(std::move(finalizer));
}

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_OPAQUE_H_
