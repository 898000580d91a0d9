// Object destruction (objects/object.h), releasing nested objects iteratively so that
// a deep chain cannot overflow the stack, and the names of object types.
#include "objects/object.h"

#include <vector>

#include "objects/value.h"

namespace dynvm {

namespace {

// The objects whose destruction the outermost Destroy() on this thread has deferred, so
// that freeing a chain of any depth takes constant stack. Its destructor marks it gone:
// objects released after this thread's thread-locals are destroyed (by a static that
// holds an executable, destroyed at exit after the main thread's thread-locals) then
// use a list on the outermost call's stack instead.
struct PendingDestruction {
  bool destroying = false;
  std::vector<Object*> objects;  // keeps its capacity: steady state allocates nothing
  ~PendingDestruction() { gone = true; }
  static thread_local bool gone;  // trivially destructible, so readable after
};

thread_local bool PendingDestruction::gone = false;
thread_local PendingDestruction pending;
// After `pending` is gone: the outermost call's list, or null.
thread_local std::vector<Object*>* late_pending = nullptr;

}  // namespace

void Object::Destroy() {
  // Runs this object's deleter, then those of the objects it released, from `list`.
  auto destroy_from = [this](std::vector<Object*>& list) {
    deleter_(this);
    while (!list.empty()) {
      Object* next = list.back();
      list.pop_back();
      next->deleter_(next);
    }
  };
  if (!PendingDestruction::gone) [[likely]] {
    if (pending.destroying) {
      pending.objects.push_back(this);
      return;
    }
    pending.destroying = true;
    destroy_from(pending.objects);
    pending.destroying = false;
    return;
  }
  if (late_pending != nullptr) {
    late_pending->push_back(this);
    return;
  }
  std::vector<Object*> list;
  late_pending = &list;
  destroy_from(list);
  late_pending = nullptr;
}

std::string_view TypeIndexName(TypeIndex index) {
  switch (index) {
    case TypeIndex::kStorage: return "storage";
    case TypeIndex::kNDArray: return "tensor";
    case TypeIndex::kADT: return "adt";
    case TypeIndex::kClosure: return "closure";
    case TypeIndex::kShapeTuple: return "shape";
    case TypeIndex::kString: return "string";
    case TypeIndex::kOpaque: return "opaque";
  }
  return "unknown";
}

std::string_view Value::TypeName() const {
  switch (kind_) {
    case Kind::kNone: return "none";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kBool: return "bool";
    case Kind::kObject: return TypeIndexName(obj_->type_index());
  }
  return "unknown";
}

}  // namespace dynvm
