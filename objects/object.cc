#include "objects/object.h"

#include <vector>

#include "objects/value.h"

namespace dynvm {

namespace {

thread_local bool destroying = false;
thread_local std::vector<Object*> pending_destruction;

}  // namespace

void Object::Destroy() {
  if (destroying) {
    pending_destruction.push_back(this);
    return;
  }
  destroying = true;
  deleter_(this);
  while (!pending_destruction.empty()) {
    Object* next = pending_destruction.back();
    pending_destruction.pop_back();
    next->deleter_(next);
  }
  destroying = false;
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
