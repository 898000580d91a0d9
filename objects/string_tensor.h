// String tensors: tensors of DType::kString, the text of ONNX's STRING tensors.
//
// An element is a pointer to an immutable StringObj (null is ""), which the storage
// the tensor sits in keeps alive (StorageObj::AdoptString) until the storage goes or
// the element is set again. A read follows an
// element only once that storage confirms it keeps that string: a string tensor whose
// bytes something else wrote (a program aliasing it with a numeric tensor, a raw copy
// into another storage) reads as an error, never through a wild pointer. New string
// tensors start with every element "" (NDArrayObj zero-fills them).
//
// Only kernels whose KernelDef says so take string tensors (kernels/kernel.h); DLPack,
// numeric .npy files and executable constants have no string type.
//
//   DYNVM_ASSIGN_OR_RETURN(NDArray t, MakeStringTensor({2}, {"a", "bc"}, allocator));
//   SetStringElement(*t, 1, "d");
//   absl::StatusOr<std::string_view> s = StringElement(*t, 1);  // "d"
#ifndef DYNVM_OBJECTS_STRING_TENSOR_H_
#define DYNVM_OBJECTS_STRING_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"

namespace dynvm {

// Element `i` (flat, C order) of the string tensor `t`, valid until the element is set
// again or its storage goes. InvalidArgument if the element is not a string `t`'s
// storage keeps.
absl::StatusOr<std::string_view> StringElement(const NDArrayObj& t, int64_t i);

// Sets element `i` of the string tensor `t` to a copy of `value`.
void SetStringElement(const NDArrayObj& t, int64_t i, std::string_view value);

// A new string tensor of `shape` holding `values` (one per element, C order);
// InvalidArgument if their number is not the shape's element count.
absl::StatusOr<NDArray> MakeStringTensor(absl::Span<const int64_t> shape,
                                         absl::Span<const std::string> values,
                                         const std::shared_ptr<Allocator>& allocator);

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_STRING_TENSOR_H_
