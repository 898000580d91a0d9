// The root of the object system: a reference-counted `Object` and the smart pointer
// `ObjectRef<T>` that owns it.
//
// Every heap value the VM handles (tensors, storages, ADTs, closures, shapes, strings)
// derives from `Object`. The count is intrusive and atomic, so references can cross
// threads (an Executable's constants are shared by VMs on many threads). Dispatch on
// the concrete type is by `type_index()` rather than RTTI, so code built with
// -fno-rtti (the LLVM-linked compiler) can use the same objects.
//
//   ObjectRef<StringObj> s = MakeObject<StringObj>("hello");
//   ObjectRef<Object> any = s;                       // upcast
//   if (auto str = any.As<StringObj>()) { ... }      // checked downcast
#ifndef DYNVM_OBJECTS_OBJECT_H_
#define DYNVM_OBJECTS_OBJECT_H_

#include <atomic>
#include <cstdint>
#include <new>
#include <string_view>
#include <utility>

#include "objects/object_memory.h"

namespace dynvm {

// The concrete kinds of object. Values are stable: they appear in diagnostics.
enum class TypeIndex : uint32_t {
  kStorage = 1,
  kNDArray = 2,
  kADT = 3,
  kClosure = 4,
  kShapeTuple = 5,
  kString = 6,
  kOpaque = 7,  // runtime-internal keep-alive owners (mapped files, foreign buffers)
};

// A short lowercase name of `index` for error messages ("tensor", "adt", ...).
std::string_view TypeIndexName(TypeIndex index);

class Object {
 public:
  // Destroys the object; set by the creator so that types with trailing arrays can
  // free themselves correctly without a virtual destructor in every object.
  using Deleter = void (*)(Object*);

  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  TypeIndex type_index() const { return type_index_; }
  int32_t use_count() const { return ref_count_.load(std::memory_order_relaxed); }

  void IncRef() { ref_count_.fetch_add(1, std::memory_order_relaxed); }
  void DecRef() {
    if (ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) Destroy();
  }

 protected:
  explicit Object(TypeIndex index) : type_index_(index) {}
  ~Object() = default;

 private:
  template <typename T>
  friend struct ObjectAllocator;

  // Runs the deleter. An object freed while another is being destroyed (a tuple's
  // fields, a tensor's storage) waits in a per-thread list that the outermost call
  // drains: freeing a chain of any depth takes constant stack — a program may build
  // tuples nested millions deep.
  void Destroy();

  std::atomic<int32_t> ref_count_{0};
  TypeIndex type_index_;
  Deleter deleter_ = nullptr;
};

// An owning pointer to an object of type `T` (or a subtype). Null is allowed.
template <typename T>
class ObjectRef {
 public:
  ObjectRef() = default;
  ObjectRef(std::nullptr_t) {}  // NOLINT: implicit null
  // Adopts one new reference to `ptr` (increments the count).
  explicit ObjectRef(T* ptr) : ptr_(ptr) {
    if (ptr_ != nullptr) ptr_->IncRef();
  }
  ObjectRef(const ObjectRef& other) : ObjectRef(other.ptr_) {}
  ObjectRef(ObjectRef&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)) {}
  template <typename U>
  ObjectRef(const ObjectRef<U>& other) : ObjectRef(static_cast<T*>(other.get())) {}  // NOLINT
  template <typename U>
  ObjectRef(ObjectRef<U>&& other) noexcept  // NOLINT: implicit upcast
      : ptr_(static_cast<T*>(other.release())) {}
  ~ObjectRef() { reset(); }

  ObjectRef& operator=(ObjectRef other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  T* get() const { return ptr_; }
  T* operator->() const { return ptr_; }
  T& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  bool operator==(const ObjectRef& other) const { return ptr_ == other.ptr_; }

  void reset() {
    if (ptr_ != nullptr) std::exchange(ptr_, nullptr)->DecRef();
  }
  // Gives up ownership without decrementing; the caller now owns one reference.
  T* release() { return std::exchange(ptr_, nullptr); }
  // Takes over one reference the caller owns (the inverse of release()).
  static ObjectRef Adopt(T* ptr) {
    ObjectRef ref;
    ref.ptr_ = ptr;
    return ref;
  }

  // A reference to the same object as `U` when its type index matches, else null.
  template <typename U>
  ObjectRef<U> As() const {
    if (ptr_ == nullptr || ptr_->type_index() != U::kTypeIndex) return nullptr;
    return ObjectRef<U>(static_cast<U*>(static_cast<Object*>(ptr_)));
  }

 private:
  T* ptr_ = nullptr;
};

// Allocates `T` from the per-thread object caches (objects/object_memory.h) and
// installs the matching deleter. Types with trailing storage provide their own factory
// instead.
template <typename T>
struct ObjectAllocator {
  template <typename... Args>
  static T* New(Args&&... args) {
    static_assert(alignof(T) <= internal::kObjectMemoryAlignment);
    // Frees the memory if T's constructor throws (no try: some callers are built
    // without exceptions).
    struct Guard {
      void* mem;
      ~Guard() { internal::FreeObjectMemory(mem, sizeof(T)); }
    } guard{internal::AllocateObjectMemory(sizeof(T))};
    T* obj = new (guard.mem) T(std::forward<Args>(args)...);
    guard.mem = nullptr;
    obj->deleter_ = [](Object* o) {
      T* self = static_cast<T*>(o);
      self->~T();
      internal::FreeObjectMemory(self, sizeof(T));
    };
    return obj;
  }
  // For types that placement-new themselves into raw memory: installs `deleter`.
  static void SetDeleter(T* obj, Object::Deleter deleter) { obj->deleter_ = deleter; }
};

template <typename T, typename... Args>
ObjectRef<T> MakeObject(Args&&... args) {
  return ObjectRef<T>(ObjectAllocator<T>::New(std::forward<Args>(args)...));
}

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_OBJECT_H_
