#include "objects/object.h"

#include "objects/value.h"

namespace dynvm {

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
