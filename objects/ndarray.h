// NDArray: a dense, contiguous (C-order) tensor viewing a Storage at a byte offset.
//
// Tensors are immutable in shape and dtype once made; kernels write their elements.
// They convert to and from DLPack without copying: ToDLPack() hands out a
// DLManagedTensor that keeps the array alive, FromDLPack() wraps a producer's memory
// and calls its deleter when the last view goes.
//
//   absl::StatusOr<NDArray> x = NDArrayObj::Empty({2, 3}, DType::kF32, allocator);
//   float* p = (*x)->data_as<float>();
//   DLManagedTensor* dl = ToDLPack(*x);   // consumer calls dl->deleter(dl) when done
#ifndef DYNVM_OBJECTS_NDARRAY_H_
#define DYNVM_OBJECTS_NDARRAY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dlpack/dlpack.h"
#include "objects/allocator.h"
#include "objects/dtype.h"
#include "objects/object.h"
#include "objects/storage.h"

namespace dynvm {

// The largest rank a tensor may have; larger shapes are InvalidArgument everywhere.
inline constexpr int kMaxRank = 16;

using Shape = absl::InlinedVector<int64_t, 6>;

// The product of `shape`, or InvalidArgument if a dim is negative, the rank exceeds
// kMaxRank, or the product overflows int64.
absl::StatusOr<int64_t> ShapeNumElements(absl::Span<const int64_t> shape);
// "[2, 3]" for messages.
std::string ShapeToString(absl::Span<const int64_t> shape);

class NDArrayObj : public Object {
 public:
  static constexpr TypeIndex kTypeIndex = TypeIndex::kNDArray;

  // A tensor of `shape` and `dtype` in `storage` starting `offset` bytes in. Fails
  // with InvalidArgument if the shape is invalid, `offset` is not a multiple of the
  // element size, or the tensor does not fit in the storage.
  static absl::StatusOr<ObjectRef<NDArrayObj>> Create(Storage storage, size_t offset,
                                                      DType dtype,
                                                      absl::Span<const int64_t> shape);
  // The same, for a tensor that starts its life there: a string tensor's elements
  // are set to "" (objects/string_tensor.h); others are left as they are.
  static absl::StatusOr<ObjectRef<NDArrayObj>> CreateNew(Storage storage, size_t offset,
                                                         DType dtype,
                                                         absl::Span<const int64_t> shape);
  // A tensor in a fresh storage from `allocator`; elements are uninitialised (strings
  // "").
  static absl::StatusOr<ObjectRef<NDArrayObj>> Empty(
      absl::Span<const int64_t> shape, DType dtype,
      const std::shared_ptr<Allocator>& allocator);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t num_elements() const { return num_elements_; }
  size_t nbytes() const { return static_cast<size_t>(num_elements_) * DTypeSize(dtype_); }
  size_t byte_offset() const { return byte_offset_; }
  const Storage& storage() const { return storage_; }

  void* data() const { return static_cast<char*>(storage_->data()) + byte_offset_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data());
  }

  // NDArrayObj is made through Create/Empty; public for MakeObject.
  NDArrayObj(Storage storage, size_t offset, DType dtype, Shape shape, int64_t num_elements)
      : Object(kTypeIndex),
        storage_(std::move(storage)),
        byte_offset_(offset),
        shape_(std::move(shape)),
        num_elements_(num_elements),
        dtype_(dtype) {}

 private:
  Storage storage_;
  size_t byte_offset_;
  Shape shape_;
  int64_t num_elements_;
  DType dtype_;
};

using NDArray = ObjectRef<NDArrayObj>;

// A view of `array` with `shape` (same element count), sharing its storage.
absl::StatusOr<NDArray> Reshape(const NDArray& array, absl::Span<const int64_t> shape);
// A deep copy into a new storage from `allocator`.
absl::StatusOr<NDArray> Copy(const NDArray& array, const std::shared_ptr<Allocator>& allocator);

// Exports `array` without copying. The returned tensor holds a reference to the
// array until the consumer calls its deleter.
DLManagedTensor* ToDLPack(const NDArray& array);
// Imports `tensor` without copying. On success the array owns `tensor` and calls its
// deleter when the last view goes; on error (non-CPU device, non-contiguous strides,
// unsupported dtype, misaligned data) ownership stays with the caller.
absl::StatusOr<NDArray> FromDLPack(DLManagedTensor* tensor);

}  // namespace dynvm

#endif  // DYNVM_OBJECTS_NDARRAY_H_
