#include "objects/storage.h"

#include "base/status_macros.h"

namespace dynvm {

absl::StatusOr<Storage> AllocateStorage(const std::shared_ptr<Allocator>& allocator,
                                        size_t nbytes) {
  DYNVM_ASSIGN_OR_RETURN(Buffer buffer, allocator->Allocate(nbytes));
  return MakeObject<StorageObj>(buffer, allocator);
}

}  // namespace dynvm
