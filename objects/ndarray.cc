// NDArray (objects/ndarray.h): shape arithmetic, creation, reshape and copy, and
// DLPack import and export.
#include "objects/ndarray.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "objects/opaque.h"
#include "objects/string_tensor.h"

namespace dynvm {

absl::StatusOr<int64_t> ShapeNumElements(absl::Span<const int64_t> shape) {
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rank %d exceeds the maximum rank %d", shape.size(), kMaxRank));
  }
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("negative dimension in shape %s", ShapeToString(shape)));
    }
    if (__builtin_mul_overflow(count, dim, &count)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("element count of shape %s overflows", ShapeToString(shape)));
    }
  }
  return count;
}

std::string ShapeToString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<NDArray> NDArrayObj::Create(Storage storage, size_t offset, DType dtype,
                                           absl::Span<const int64_t> shape) {
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(shape));
  const size_t elem = DTypeSize(dtype);
  if (offset % elem != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor offset %d is not a multiple of the %s element size %d", offset,
        DTypeName(dtype), elem));
  }
  size_t nbytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), elem, &nbytes) ||
      offset > storage->size() || nbytes > storage->size() - offset) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "tensor %s %s at offset %d does not fit in a storage of %d bytes", DTypeName(dtype),
        ShapeToString(shape), offset, storage->size()));
  }
  return MakeObject<NDArrayObj>(std::move(storage), offset, dtype,
                                Shape(shape.begin(), shape.end()), count);
}

absl::StatusOr<NDArray> NDArrayObj::CreateNew(Storage storage, size_t offset, DType dtype,
                                              absl::Span<const int64_t> shape) {
  DYNVM_ASSIGN_OR_RETURN(NDArray t, Create(std::move(storage), offset, dtype, shape));
  // A new string tensor's elements are null pointers, which read as "". Texts an
  // earlier string tensor left in this place (memory planning reuses storages) go.
  if (dtype == DType::kString) {
    const auto* elements = static_cast<const char*>(t->data());
    for (int64_t i = 0; i < t->num_elements(); ++i) {
      const StringObj* old;
      std::memcpy(&old, elements + i * sizeof(old), sizeof(old));
      if (old != nullptr) t->storage()->ReleaseString(old);  // a lookup if not its own
    }
    std::memset(t->data(), 0, t->nbytes());
  }
  return t;
}

absl::StatusOr<NDArray> NDArrayObj::Empty(absl::Span<const int64_t> shape, DType dtype,
                                          const std::shared_ptr<Allocator>& allocator) {
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(shape));
  size_t nbytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), DTypeSize(dtype), &nbytes)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("byte size of %s %s overflows", DTypeName(dtype), ShapeToString(shape)));
  }
  DYNVM_ASSIGN_OR_RETURN(Storage storage, AllocateStorage(allocator, nbytes));
  return CreateNew(std::move(storage), 0, dtype, shape);
}

absl::StatusOr<NDArray> Reshape(const NDArray& array, absl::Span<const int64_t> shape) {
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(shape));
  if (count != array->num_elements()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot reshape %s (%d elements) to %s (%d elements)", ShapeToString(array->shape()),
        array->num_elements(), ShapeToString(shape), count));
  }
  return MakeObject<NDArrayObj>(array->storage(), array->byte_offset(), array->dtype(),
                                Shape(shape.begin(), shape.end()), count);
}

absl::StatusOr<NDArray> Copy(const NDArray& array, const std::shared_ptr<Allocator>& allocator) {
  DYNVM_ASSIGN_OR_RETURN(NDArray out,
                         NDArrayObj::Empty(array->shape(), array->dtype(), allocator));
  if (array->dtype() == DType::kString) {  // the new storage keeps its own strings
    for (int64_t i = 0; i < array->num_elements(); ++i) {
      DYNVM_ASSIGN_OR_RETURN(const std::string_view s, StringElement(*array, i));
      SetStringElement(*out, i, s);
    }
    return out;
  }
  if (array->nbytes() > 0) std::memcpy(out->data(), array->data(), array->nbytes());
  return out;
}

namespace {

// What a DLManagedTensor we export points back to: the array it views.
struct ExportContext {
  DLManagedTensor tensor;
  NDArray array;
};

}  // namespace

DLManagedTensor* ToDLPack(const NDArray& array) {
  auto* ctx = new ExportContext{};
  ctx->array = array;
  DLTensor& t = ctx->tensor.dl_tensor;
  // The first element itself, not the storage plus byte_offset: many consumers ignore
  // byte_offset, and DLPack allows either on CPU.
  t.data = array->data();
  t.byte_offset = 0;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = array->ndim();
  t.dtype = ToDLDataType(array->dtype());
  // The shape lives in the array, which the context keeps alive and never mutates.
  t.shape = const_cast<int64_t*>(array->shape().data());
  t.strides = nullptr;
  ctx->tensor.manager_ctx = ctx;
  ctx->tensor.deleter = [](DLManagedTensor* self) {
    delete static_cast<ExportContext*>(self->manager_ctx);
  };
  return &ctx->tensor;
}

absl::StatusOr<NDArray> FromDLPack(DLManagedTensor* tensor) {
  if (tensor == nullptr) return absl::InvalidArgumentError("null DLManagedTensor");
  const DLTensor& t = tensor->dl_tensor;
  if (t.device.device_type != kDLCPU) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DLPack tensor on device type %d: only CPU (1) is supported",
                        static_cast<int>(t.device.device_type)));
  }
  if (t.ndim < 0 || t.ndim > kMaxRank) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DLPack tensor rank %d outside [0, %d]", t.ndim, kMaxRank));
  }
  if (t.shape == nullptr && t.ndim > 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("DLPack tensor of rank %d has no shape (null)", t.ndim));
  }
  DYNVM_ASSIGN_OR_RETURN(DType dtype, FromDLDataType(t.dtype));
  absl::Span<const int64_t> shape(t.shape, static_cast<size_t>(t.ndim));
  DYNVM_ASSIGN_OR_RETURN(int64_t count, ShapeNumElements(shape));
  if (t.strides != nullptr) {
    int64_t expected = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (shape[i] != 1 && t.strides[i] != expected) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "DLPack tensor with shape %s is not contiguous (stride %d of axis %d, expected %d)",
            ShapeToString(shape), t.strides[i], i, expected));
      }
      expected *= shape[i];
    }
  }
  if (t.data == nullptr && count > 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "DLPack tensor %s%s has no data (null)", DTypeName(dtype), ShapeToString(shape)));
  }
  char* data = static_cast<char*>(t.data) + t.byte_offset;
  if (reinterpret_cast<uintptr_t>(data) % DTypeSize(dtype) != 0) {
    return absl::InvalidArgumentError("DLPack tensor data is not aligned to its element size");
  }
  size_t nbytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), DTypeSize(dtype), &nbytes)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "byte size of DLPack tensor %s %s overflows", DTypeName(dtype), ShapeToString(shape)));
  }
  ObjectRef<Object> owner = MakeOpaque([tensor] {
    if (tensor->deleter != nullptr) tensor->deleter(tensor);
  });
  auto storage = MakeObject<StorageObj>(data, nbytes, std::move(owner));
  return MakeObject<NDArrayObj>(std::move(storage), 0, dtype, Shape(shape.begin(), shape.end()),
                                count);
}

}  // namespace dynvm
