// ShapeTuple: an immutable list of int64 dimensions, the boxed form of a shape
// (ShapeOf produces one, AllocTensorReg and ReshapeTensor consume one).
#ifndef DYNVM_OBJECTS_SHAPE_TUPLE_H_
#define DYNVM_OBJECTS_SHAPE_TUPLE_H_

#include "absl/types/span.h"
#include "objects/ndarray.h"
#include "objects/object.h"

namespace dynvm {

class ShapeTupleObj : public Object {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kShapeTuple;
  explicit ShapeTupleObj(absl::Span<const int64_t> dims)
      : Object(kTypeIndex), dims_(dims.begin(), dims.end()) {}
  const Shape& dims() const { return dims_; }

 private:
  Shape dims_;
};

using ShapeTuple = ObjectRef<ShapeTupleObj>;

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_SHAPE_TUPLE_H_
