// Algebraic data types and closures: objects that carry an array of Values inline
// after their header (one allocation each).
//
// An ADT is a constructor tag with fields; a tuple is the ADT with tag 0. A closure is
// a function index with the values it captured; InvokeClosure passes the captured
// values first, then the call's arguments.
//
//   ObjectRef<ADTObj> cons = ADTObj::Create(/*tag=*/1, {head, tail});
//   cons->fields()[0]
#ifndef DYNVM_OBJECTS_ADT_H_
#define DYNVM_OBJECTS_ADT_H_

#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"
#include "objects/object.h"
#include "objects/value.h"

namespace dynvm {
namespace internal {

// Base of objects followed in memory by `size()` Values. `Derived` must be
// standard-layout enough that `this + 1` is where the values start.
template <typename Derived>
class ValueArrayObject : public Object {
 public:
  uint32_t size() const { return size_; }
  absl::Span<const Value> fields() const {
    return {reinterpret_cast<const Value*>(static_cast<const Derived*>(this) + 1), size_};
  }
  absl::Span<Value> mutable_fields() {
    return {reinterpret_cast<Value*>(static_cast<Derived*>(this) + 1), size_};
  }

 protected:
  ValueArrayObject(TypeIndex index, uint32_t size) : Object(index), size_(size) {}

  // Allocates a `Derived` built from `args` with room for `size` values; value i is a
  // copy of `get(i)` (which returns a `const Value&`). Lets the VM build an object
  // straight from scattered registers.
  template <typename Get, typename... Args>
  static ObjectRef<Derived> AllocateFrom(uint32_t size, Get&& get, Args&&... args) {
    static_assert(alignof(Derived) >= alignof(Value));
    void* mem = AllocateObjectMemory(sizeof(Derived) + size * sizeof(Value));
    auto* obj = new (mem) Derived(std::forward<Args>(args)..., size);
    Value* dst = obj->mutable_fields().data();
    for (uint32_t i = 0; i < size; ++i) new (dst + i) Value(get(i));
    ObjectAllocator<Derived>::SetDeleter(obj, [](Object* o) {
      auto* self = static_cast<Derived*>(o);
      const size_t bytes = sizeof(Derived) + self->size() * sizeof(Value);
      for (Value& v : self->mutable_fields()) v.~Value();
      self->~Derived();
      FreeObjectMemory(self, bytes);
    });
    return ObjectRef<Derived>(obj);
  }

 private:
  uint32_t size_;
};

}  // namespace internal

class alignas(8) ADTObj : public internal::ValueArrayObject<ADTObj> {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kADT;
  static ObjectRef<ADTObj> Create(uint32_t tag, absl::Span<const Value> fields) {
    return AllocateFrom(static_cast<uint32_t>(fields.size()),
                        [&](uint32_t i) -> const Value& { return fields[i]; }, tag);
  }
  // An ADT whose field i is a copy of `get(i)`.
  template <typename Get>
  static ObjectRef<ADTObj> CreateFrom(uint32_t tag, uint32_t size, Get&& get) {
    return AllocateFrom(size, std::forward<Get>(get), tag);
  }
  static ObjectRef<ADTObj> Tuple(absl::Span<const Value> fields) { return Create(0, fields); }

  uint32_t tag() const { return tag_; }

 private:
  friend class internal::ValueArrayObject<ADTObj>;
  ADTObj(uint32_t tag, uint32_t size) : ValueArrayObject(kTypeIndex, size), tag_(tag) {}
  uint32_t tag_;
};

class alignas(8) ClosureObj : public internal::ValueArrayObject<ClosureObj> {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kClosure;
  static ObjectRef<ClosureObj> Create(uint32_t func_index, absl::Span<const Value> captured) {
    return AllocateFrom(static_cast<uint32_t>(captured.size()),
                        [&](uint32_t i) -> const Value& { return captured[i]; }, func_index);
  }
  // A closure whose captured value i is a copy of `get(i)`.
  template <typename Get>
  static ObjectRef<ClosureObj> CreateFrom(uint32_t func_index, uint32_t size, Get&& get) {
    return AllocateFrom(size, std::forward<Get>(get), func_index);
  }

  uint32_t func_index() const { return func_index_; }

 private:
  friend class internal::ValueArrayObject<ClosureObj>;
  ClosureObj(uint32_t func_index, uint32_t size)
      : ValueArrayObject(kTypeIndex, size), func_index_(func_index) {}
  uint32_t func_index_;
};

using ADT = ObjectRef<ADTObj>;
using Closure = ObjectRef<ClosureObj>;

// The leaves of `value`, depth-first: the fields of an ADT (a tuple is one) in order,
// recursively; anything else is one leaf. An ADT without fields has no leaves. This is
// how the tools and the C API list a function's outputs.
inline void AppendLeaves(const Value& value, std::vector<Value>& out) {
  const ADTObj* root = value.As<ADTObj>();
  if (root == nullptr) {
    out.push_back(value);
    return;
  }
  // Iterative: a program may build ADTs nested millions deep.
  std::vector<std::pair<const ADTObj*, uint32_t>> stack = {{root, 0}};
  while (!stack.empty()) {
    auto& [adt, next] = stack.back();
    if (next == adt->size()) {
      stack.pop_back();
      continue;
    }
    const Value& field = adt->fields()[next++];
    if (const ADTObj* inner = field.As<ADTObj>()) {
      stack.emplace_back(inner, 0);
    } else {
      out.push_back(field);
    }
  }
}
// Whether `target` is `from` or reachable from it through the fields of ADTs and the
// captured values of closures. set_field checks it, so that a reference cell's write
// never makes a cycle, which reference counting could not free. Iterative, each object
// visited once.
inline bool Reaches(const Value& from, const Object* target) {
  absl::flat_hash_set<const Object*> seen;
  std::vector<const Value*> stack = {&from};
  while (!stack.empty()) {
    const Value& v = *stack.back();
    stack.pop_back();
    const Object* object = nullptr;
    absl::Span<const Value> children;
    if (const ADTObj* adt = v.As<ADTObj>()) {
      object = adt;
      children = adt->fields();
    } else if (const ClosureObj* closure = v.As<ClosureObj>()) {
      object = closure;
      children = closure->fields();
    } else {
      continue;
    }
    if (object == target) return true;
    if (!seen.insert(object).second) continue;
    for (const Value& child : children) stack.push_back(&child);
  }
  return false;
}

inline std::vector<Value> FlattenValue(const Value& value) {
  std::vector<Value> out;
  AppendLeaves(value, out);
  return out;
}

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_ADT_H_
