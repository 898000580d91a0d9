// Storage (objects/storage.h): blocks of tensor memory from an allocator or viewing
// memory another object keeps alive, and the strings a string tensor's storage owns.
#include "objects/storage.h"

#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "base/status_macros.h"

namespace dynvm {

// The strings a storage keeps alive, by address.
struct StorageObj::StringTable {
  absl::flat_hash_map<const StringObj*, ObjectRef<StringObj>> strings;
};

namespace {

// Guards every storage's string table: strings are rare and their kernels serial, so
// one lock costs nothing that matters and keeps StorageObj small.
std::mutex& StringTablesMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

}  // namespace

StorageObj::StorageObj(Buffer buffer, std::shared_ptr<Allocator> allocator)
    : Object(kTypeIndex), buffer_(buffer), allocator_(std::move(allocator)) {}

StorageObj::StorageObj(void* data, size_t size, ObjectRef<Object> owner)
    : Object(kTypeIndex), buffer_{data, size}, owner_(std::move(owner)) {}

StorageObj::~StorageObj() {
  if (allocator_) allocator_->Free(buffer_);
}

void StorageObj::AdoptString(ObjectRef<StringObj> s) {
  std::lock_guard<std::mutex> lock(StringTablesMutex());
  if (strings_ == nullptr) strings_ = std::make_unique<StringTable>();
  const StringObj* key = s.get();
  strings_->strings.try_emplace(key, std::move(s));
}

bool StorageObj::OwnsString(const StringObj* s) const {
  std::lock_guard<std::mutex> lock(StringTablesMutex());
  return strings_ != nullptr && strings_->strings.contains(s);
}

void StorageObj::ReleaseString(const StringObj* s) {
  ObjectRef<StringObj> released;  // destroyed after the lock is let go
  std::lock_guard<std::mutex> lock(StringTablesMutex());
  if (strings_ == nullptr) return;
  const auto it = strings_->strings.find(s);
  if (it == strings_->strings.end()) return;
  released = std::move(it->second);
  strings_->strings.erase(it);
}

absl::StatusOr<Storage> AllocateStorage(const std::shared_ptr<Allocator>& allocator,
                                        size_t nbytes) {
  DYNVM_ASSIGN_OR_RETURN(Buffer buffer, allocator->Allocate(nbytes));
  return MakeObject<StorageObj>(buffer, allocator);
}

}  // namespace dynvm
