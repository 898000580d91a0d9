// A Storage is a block of memory that tensors are views into. The VM allocates storages
// (AllocStorage) and places tensors in them at byte offsets (AllocTensor), which is how
// memory planning lets several tensors share one block.
//
// A storage either owns a buffer from an Allocator (returned to it on destruction) or
// views memory kept alive by an owner object (the mmap of an executable, a DLPack
// producer).
//
// The elements of string tensors (DType::kString) are pointers to StringObjs that the
// storage they sit in keeps alive (objects/string_tensor.h): AdoptString keeps one until
// the storage goes (or an element overwrites it: ReleaseString), and OwnsString is how a
// read checks an element before following it.
//
//   absl::StatusOr<Storage> s = AllocateStorage(pool, 4096);
#ifndef DYNVM_OBJECTS_STORAGE_H_
#define DYNVM_OBJECTS_STORAGE_H_

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "objects/allocator.h"
#include "objects/object.h"
#include "objects/string_object.h"

namespace dynvm {

class StorageObj : public Object {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kStorage;

  // Owns `buffer`, which came from `allocator`.
  StorageObj(Buffer buffer, std::shared_ptr<Allocator> allocator);
  // Views `size` bytes at `data`, kept valid by `owner`.
  StorageObj(void* data, size_t size, ObjectRef<Object> owner);
  ~StorageObj();

  void* data() const { return buffer_.data; }
  size_t size() const { return buffer_.size; }

  // Keeps `s` alive as long as this storage. Thread-safe.
  void AdoptString(ObjectRef<StringObj> s);
  // Whether `s` is a string this storage keeps alive. Thread-safe.
  bool OwnsString(const StringObj* s) const;
  // Stops keeping `s` alive, if this storage keeps it. Thread-safe.
  void ReleaseString(const StringObj* s);

 private:
  struct StringTable;

  Buffer buffer_;
  std::shared_ptr<Allocator> allocator_;
  ObjectRef<Object> owner_;
  std::unique_ptr<StringTable> strings_;  // made by the first AdoptString
};

using Storage = ObjectRef<StorageObj>;

// A new storage of at least `nbytes` from `allocator`.
absl::StatusOr<Storage> AllocateStorage(const std::shared_ptr<Allocator>& allocator,
                                        size_t nbytes);

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_STORAGE_H_
