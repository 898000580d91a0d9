// Tests of objects/ndarray.h and objects/storage.h: shape validation, Create's bounds
// checks, Empty's alignment, Reshape and Copy, and DLPack export/import (fields,
// zero-copy, deleter ownership, rejections, a round trip for every dtype).
#include "objects/ndarray.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/opaque.h"
#include "objects/storage.h"

namespace dynvm {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// A storage of `nbytes` from its own naive allocator.
Storage MakeStorage(size_t nbytes, std::shared_ptr<Allocator> allocator = MakeNaiveAllocator()) {
  absl::StatusOr<Storage> s = AllocateStorage(allocator, nbytes);
  EXPECT_TRUE(s.ok()) << s.status();
  return *std::move(s);
}

void ExpectInvalid(const absl::Status& status, std::string_view substr) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(substr)));
}

TEST(ShapeTest, NumElements) {
  EXPECT_EQ(*ShapeNumElements({}), 1);
  EXPECT_EQ(*ShapeNumElements({2, 3, 4}), 24);
  EXPECT_EQ(*ShapeNumElements({5, 0, 7}), 0);
  EXPECT_EQ(*ShapeNumElements({kInt64Max}), kInt64Max);
  // A zero extent makes any product representable.
  EXPECT_EQ(*ShapeNumElements({0, kInt64Max, kInt64Max}), 0);
  std::vector<int64_t> max_rank(kMaxRank, 1);
  EXPECT_EQ(*ShapeNumElements(max_rank), 1);
}

TEST(ShapeTest, NumElementsErrors) {
  ExpectInvalid(ShapeNumElements({2, -1}).status(), "negative dimension in shape [2, -1]");
  std::vector<int64_t> too_deep(kMaxRank + 1, 1);
  ExpectInvalid(ShapeNumElements(too_deep).status(), "rank 17 exceeds the maximum rank 16");
  ExpectInvalid(ShapeNumElements({int64_t{1} << 32, int64_t{1} << 32}).status(),
                "element count of shape [4294967296, 4294967296] overflows");
}

TEST(ShapeTest, ToString) {
  EXPECT_EQ(ShapeToString({}), "[]");
  EXPECT_EQ(ShapeToString({7}), "[7]");
  EXPECT_EQ(ShapeToString({2, 3}), "[2, 3]");
}

TEST(NDArrayCreateTest, ViewsStorageAtOffset) {
  Storage storage = MakeStorage(256);
  absl::StatusOr<NDArray> a = NDArrayObj::Create(storage, 64, DType::kF32, {3, 4});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->type_index(), TypeIndex::kNDArray);
  EXPECT_EQ((*a)->dtype(), DType::kF32);
  EXPECT_EQ((*a)->shape(), (Shape{3, 4}));
  EXPECT_EQ((*a)->ndim(), 2);
  EXPECT_EQ((*a)->num_elements(), 12);
  EXPECT_EQ((*a)->nbytes(), 48u);
  EXPECT_EQ((*a)->byte_offset(), 64u);
  EXPECT_EQ((*a)->data(), static_cast<char*>(storage->data()) + 64);
  EXPECT_EQ((*a)->storage().get(), storage.get());
  EXPECT_EQ(storage->use_count(), 2);
}

TEST(NDArrayCreateTest, ExactFitAndEmptyAtEnd) {
  Storage storage = MakeStorage(64);
  EXPECT_TRUE(NDArrayObj::Create(storage, 0, DType::kF64, {8}).ok());
  EXPECT_TRUE(NDArrayObj::Create(storage, 32, DType::kF64, {2, 2}).ok());
  // A zero-element tensor may sit exactly at the end.
  EXPECT_TRUE(NDArrayObj::Create(storage, 64, DType::kF32, {0, 5}).ok());
  // A rank-0 tensor is one element.
  absl::StatusOr<NDArray> scalar = NDArrayObj::Create(storage, 60, DType::kI32, {});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ((*scalar)->num_elements(), 1);
  EXPECT_EQ((*scalar)->ndim(), 0);
}

TEST(NDArrayCreateTest, DoesNotFit) {
  Storage storage = MakeStorage(64);
  ExpectInvalid(NDArrayObj::Create(storage, 0, DType::kF32, {17}).status(),
                "tensor f32 [17] at offset 0 does not fit in a storage of 64 bytes");
  ExpectInvalid(NDArrayObj::Create(storage, 4, DType::kF32, {16}).status(),
                "at offset 4 does not fit in a storage of 64 bytes");
  // Offset beyond the storage, even for zero elements.
  ExpectInvalid(NDArrayObj::Create(storage, 128, DType::kF32, {0}).status(),
                "at offset 128 does not fit");
  // An offset so large that offset + nbytes would wrap.
  ExpectInvalid(
      NDArrayObj::Create(storage, std::numeric_limits<size_t>::max() - 3, DType::kU8, {8}).status(),
      "does not fit");
}

TEST(NDArrayCreateTest, MisalignedOffset) {
  Storage storage = MakeStorage(64);
  ExpectInvalid(NDArrayObj::Create(storage, 2, DType::kF32, {1}).status(),
                "tensor offset 2 is not a multiple of the f32 element size 4");
  ExpectInvalid(NDArrayObj::Create(storage, 4, DType::kI64, {1}).status(),
                "not a multiple of the i64 element size 8");
  // One-byte types take any offset.
  EXPECT_TRUE(NDArrayObj::Create(storage, 3, DType::kU8, {5}).ok());
}

TEST(NDArrayCreateTest, InvalidShapes) {
  Storage storage = MakeStorage(64);
  ExpectInvalid(NDArrayObj::Create(storage, 0, DType::kF32, {-1}).status(),
                "negative dimension in shape [-1]");
  std::vector<int64_t> deep(kMaxRank + 1, 1);
  ExpectInvalid(NDArrayObj::Create(storage, 0, DType::kF32, deep).status(),
                "rank 17 exceeds the maximum rank 16");
  ExpectInvalid(NDArrayObj::Create(storage, 0, DType::kF32, {kInt64Max, 2}).status(), "overflows");
  // The element count fits int64 but the byte size does not fit size_t.
  ExpectInvalid(NDArrayObj::Create(storage, 0, DType::kF64, {int64_t{1} << 62}).status(),
                "does not fit");
  // A failed Create took no lasting reference to the storage.
  EXPECT_EQ(storage->use_count(), 1);
}

TEST(NDArrayEmptyTest, AlignedAndSized) {
  for (auto allocator : {MakeNaiveAllocator(), MakePooledAllocator()}) {
    for (int64_t n : {1, 3, 17, 64, 1000}) {
      absl::StatusOr<NDArray> a = NDArrayObj::Empty({n, 3}, DType::kF64, allocator);
      ASSERT_TRUE(a.ok()) << a.status();
      EXPECT_EQ(reinterpret_cast<uintptr_t>((*a)->data()) % kAllocAlignment, 0u) << n;
      EXPECT_EQ((*a)->nbytes(), static_cast<size_t>(n * 3 * 8));
      EXPECT_GE((*a)->storage()->size(), (*a)->nbytes());
      EXPECT_EQ((*a)->byte_offset(), 0u);
      // The whole buffer is writable (ASan checks).
      std::memset((*a)->data(), 0xab, (*a)->nbytes());
    }
    EXPECT_EQ(allocator->stats().bytes_live, 0);
  }
}

TEST(NDArrayEmptyTest, ZeroElementsAndScalars) {
  auto allocator = MakeNaiveAllocator();
  absl::StatusOr<NDArray> z = NDArrayObj::Empty({4, 0}, DType::kI32, allocator);
  ASSERT_TRUE(z.ok());
  EXPECT_EQ((*z)->num_elements(), 0);
  EXPECT_EQ((*z)->nbytes(), 0u);
  EXPECT_NE((*z)->data(), nullptr);
  absl::StatusOr<NDArray> s = NDArrayObj::Empty({}, DType::kBool, allocator);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->num_elements(), 1);
  *(*s)->data_as<uint8_t>() = 1;
}

TEST(NDArrayEmptyTest, StorageReturnsToItsAllocator) {
  auto allocator = MakeNaiveAllocator();
  {
    NDArray a = *NDArrayObj::Empty({128}, DType::kF32, allocator);
    EXPECT_EQ(allocator->stats().bytes_live, 512);
    NDArray alias = a;
  }
  EXPECT_EQ(allocator->stats().bytes_live, 0);
}

TEST(NDArrayEmptyTest, Errors) {
  auto allocator = MakeNaiveAllocator();
  ExpectInvalid(NDArrayObj::Empty({-2}, DType::kF32, allocator).status(), "negative dimension");
  ExpectInvalid(NDArrayObj::Empty({int64_t{1} << 62}, DType::kF64, allocator).status(),
                "byte size of f64 [4611686018427387904] overflows");
  auto limited = MakeNaiveAllocator(AllocatorOptions{.max_allocation_bytes = 1000});
  absl::StatusOr<NDArray> big = NDArrayObj::Empty({1001}, DType::kU8, limited);
  EXPECT_EQ(big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(NDArrayObj::Empty({1000}, DType::kU8, limited).ok());
}

TEST(ReshapeTest, ViewSharesStorage) {
  auto allocator = MakeNaiveAllocator();
  NDArray a = *NDArrayObj::Empty({2, 6}, DType::kI32, allocator);
  for (int i = 0; i < 12; ++i) a->data_as<int32_t>()[i] = i;
  absl::StatusOr<NDArray> r = Reshape(a, {3, 1, 4});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->shape(), (Shape{3, 1, 4}));
  EXPECT_EQ((*r)->dtype(), DType::kI32);
  EXPECT_EQ((*r)->data(), a->data());
  EXPECT_EQ((*r)->storage().get(), a->storage().get());
  EXPECT_EQ(a->storage()->use_count(), 2);
  (*r)->data_as<int32_t>()[5] = 100;  // writes are visible through both
  EXPECT_EQ(a->data_as<int32_t>()[5], 100);
  EXPECT_EQ(a->shape(), (Shape{2, 6}));  // the original is unchanged
  EXPECT_EQ(allocator->stats().allocations, 1);
}

TEST(ReshapeTest, KeepsTheByteOffset) {
  Storage storage = MakeStorage(128);
  NDArray a = *NDArrayObj::Create(storage, 32, DType::kF32, {4, 2});
  NDArray r = *Reshape(a, {8});
  EXPECT_EQ(r->byte_offset(), 32u);
  EXPECT_EQ(r->data(), a->data());
}

TEST(ReshapeTest, Errors) {
  NDArray a = *NDArrayObj::Empty({2, 3}, DType::kF32, MakeNaiveAllocator());
  ExpectInvalid(Reshape(a, {4, 2}).status(),
                "cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)");
  ExpectInvalid(Reshape(a, {}).status(), "to [] (1 elements)");
  ExpectInvalid(Reshape(a, {-6}).status(), "negative dimension");
  EXPECT_TRUE(Reshape(a, {6, 1, 1}).ok());
  NDArray z = *NDArrayObj::Empty({0, 3}, DType::kF32, MakeNaiveAllocator());
  EXPECT_TRUE(Reshape(z, {3, 0, 9}).ok());
}

TEST(CopyTest, DeepCopy) {
  auto allocator = MakeNaiveAllocator();
  Storage storage = MakeStorage(256, allocator);
  NDArray a = *NDArrayObj::Create(storage, 16, DType::kI16, {3, 5});
  for (int i = 0; i < 15; ++i) a->data_as<int16_t>()[i] = static_cast<int16_t>(i * 1000 - 7000);
  absl::StatusOr<NDArray> c = Copy(a, allocator);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE((*c)->storage().get(), a->storage().get());
  EXPECT_NE((*c)->data(), a->data());
  EXPECT_EQ((*c)->shape(), a->shape());
  EXPECT_EQ((*c)->dtype(), a->dtype());
  EXPECT_EQ((*c)->byte_offset(), 0u);
  EXPECT_EQ(std::memcmp((*c)->data(), a->data(), a->nbytes()), 0);
  (*c)->data_as<int16_t>()[0] = 1;
  EXPECT_EQ(a->data_as<int16_t>()[0], -7000);  // independent
  EXPECT_EQ(allocator->stats().allocations, 2);
}

TEST(CopyTest, ZeroElementsAndLimit) {
  NDArray z = *NDArrayObj::Empty({0}, DType::kF64, MakeNaiveAllocator());
  absl::StatusOr<NDArray> c = Copy(z, MakeNaiveAllocator());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->shape(), (Shape{0}));
  NDArray a = *NDArrayObj::Empty({100}, DType::kF64, MakeNaiveAllocator());
  auto limited = MakeNaiveAllocator(AllocatorOptions{.max_allocation_bytes = 100});
  EXPECT_EQ(Copy(a, limited).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(StorageTest, ViewKeepsOwnerAlive) {
  int finalized = 0;
  alignas(64) static char bytes[128];
  {
    Storage s = MakeObject<StorageObj>(bytes, sizeof(bytes), MakeOpaque([&] { ++finalized; }));
    EXPECT_EQ(s->data(), bytes);
    EXPECT_EQ(s->size(), 128u);
    NDArray a = *NDArrayObj::Create(s, 0, DType::kU8, {128});
    s.reset();
    EXPECT_EQ(finalized, 0);  // the tensor keeps the storage, the storage the owner
  }
  EXPECT_EQ(finalized, 1);
}

// ---------------------------------------------------------------------------------------
// DLPack.

TEST(ToDLPackTest, Fields) {
  auto allocator = MakeNaiveAllocator();
  Storage storage = MakeStorage(256, allocator);
  NDArray a = *NDArrayObj::Create(storage, 64, DType::kI64, {2, 3, 4});
  DLManagedTensor* dl = ToDLPack(a);
  ASSERT_NE(dl, nullptr);
  const DLTensor& t = dl->dl_tensor;
  EXPECT_EQ(t.device.device_type, kDLCPU);
  EXPECT_EQ(t.device.device_id, 0);
  EXPECT_EQ(t.ndim, 3);
  ASSERT_NE(t.shape, nullptr);
  EXPECT_EQ(t.shape[0], 2);
  EXPECT_EQ(t.shape[1], 3);
  EXPECT_EQ(t.shape[2], 4);
  EXPECT_EQ(t.strides, nullptr);  // compact row-major
  EXPECT_EQ(t.dtype.code, kDLInt);
  EXPECT_EQ(t.dtype.bits, 64);
  EXPECT_EQ(t.dtype.lanes, 1);
  EXPECT_EQ(static_cast<char*>(t.data) + t.byte_offset, a->data());
  ASSERT_NE(dl->deleter, nullptr);
  dl->deleter(dl);
}

TEST(ToDLPackTest, DeleterReleasesTheArray) {
  auto allocator = MakeNaiveAllocator();
  NDArray a = *NDArrayObj::Empty({4}, DType::kF32, allocator);
  EXPECT_EQ(a->use_count(), 1);
  DLManagedTensor* dl = ToDLPack(a);
  EXPECT_EQ(a->use_count(), 2);
  dl->deleter(dl);
  EXPECT_EQ(a->use_count(), 1);
}

TEST(ToDLPackTest, ExportOutlivesTheArray) {
  auto allocator = MakeNaiveAllocator();
  NDArray a = *NDArrayObj::Empty({4}, DType::kF32, allocator);
  a->data_as<float>()[3] = 2.0f;
  DLManagedTensor* dl = ToDLPack(a);
  a.reset();
  EXPECT_EQ(allocator->stats().bytes_live, 64);  // still held by the export
  EXPECT_EQ(static_cast<float*>(dl->dl_tensor.data)[3], 2.0f);
  EXPECT_EQ(dl->dl_tensor.shape[0], 4);
  dl->deleter(dl);
  EXPECT_EQ(allocator->stats().bytes_live, 0);
}

TEST(ToDLPackTest, RankZero) {
  NDArray a = *NDArrayObj::Empty({}, DType::kF64, MakeNaiveAllocator());
  DLManagedTensor* dl = ToDLPack(a);
  EXPECT_EQ(dl->dl_tensor.ndim, 0);
  dl->deleter(dl);
}

// A DLPack producer we control: owns its buffer, shape and strides, and counts how
// often its deleter runs.
struct Producer {
  DLManagedTensor tensor{};
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  void* buffer = nullptr;
  int* deleted = nullptr;

  // A tensor of `shape` and `dtype` over a fresh 64-byte-aligned buffer of `nbytes`.
  static DLManagedTensor* Make(std::vector<int64_t> shape, DLDataType dtype, size_t nbytes,
                               int* deleted) {
    auto* p = new Producer;
    p->shape = std::move(shape);
    p->buffer = std::aligned_alloc(64, std::max<size_t>(64, (nbytes + 63) / 64 * 64));
    p->deleted = deleted;
    DLTensor& t = p->tensor.dl_tensor;
    t.data = p->buffer;
    t.device = DLDevice{kDLCPU, 0};
    t.ndim = static_cast<int32_t>(p->shape.size());
    t.dtype = dtype;
    t.shape = p->shape.data();
    t.strides = nullptr;
    t.byte_offset = 0;
    p->tensor.manager_ctx = p;
    p->tensor.deleter = [](DLManagedTensor* self) {
      auto* prod = static_cast<Producer*>(self->manager_ctx);
      ++*prod->deleted;
      std::free(prod->buffer);
      delete prod;
    };
    return &p->tensor;
  }
  static Producer* Of(DLManagedTensor* t) { return static_cast<Producer*>(t->manager_ctx); }
  void SetStrides(std::vector<int64_t> s) {
    strides = std::move(s);
    tensor.dl_tensor.strides = strides.data();
  }
};

TEST(FromDLPackTest, ZeroCopyAndDeleterRunsOnceWhenLastViewGoes) {
  int deleted = 0;
  DLManagedTensor* dl = Producer::Make({2, 3}, DLDataType{kDLFloat, 32, 1}, 24, &deleted);
  float* data = static_cast<float*>(dl->dl_tensor.data);
  for (int i = 0; i < 6; ++i) data[i] = static_cast<float>(i) * 0.5f;
  absl::StatusOr<NDArray> a = FromDLPack(dl);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->data(), data);
  EXPECT_EQ((*a)->shape(), (Shape{2, 3}));
  EXPECT_EQ((*a)->dtype(), DType::kF32);
  EXPECT_EQ((*a)->data_as<float>()[5], 2.5f);
  NDArray view = *Reshape(*a, {6});
  NDArray copy = *a;
  a->reset();
  EXPECT_EQ(deleted, 0);
  copy.reset();
  EXPECT_EQ(deleted, 0);
  view.reset();
  EXPECT_EQ(deleted, 1);
}

TEST(FromDLPackTest, HonoursByteOffset) {
  int deleted = 0;
  DLManagedTensor* dl = Producer::Make({4}, DLDataType{kDLInt, 32, 1}, 64, &deleted);
  dl->dl_tensor.byte_offset = 16;
  absl::StatusOr<NDArray> a = FromDLPack(dl);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->data(), static_cast<char*>(dl->dl_tensor.data) + 16);
  a->reset();
  EXPECT_EQ(deleted, 1);
}

TEST(FromDLPackTest, NullDeleterIsAllowed) {
  alignas(64) static float buffer[4];
  int64_t shape[] = {4};
  DLManagedTensor t{};
  t.dl_tensor.data = buffer;
  t.dl_tensor.device = DLDevice{kDLCPU, 0};
  t.dl_tensor.ndim = 1;
  t.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  t.dl_tensor.shape = shape;
  t.deleter = nullptr;
  absl::StatusOr<NDArray> a = FromDLPack(&t);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->data(), buffer);
}

TEST(FromDLPackTest, ContiguousStridesAccepted) {
  int deleted = 0;
  DLManagedTensor* dl = Producer::Make({2, 1, 3}, DLDataType{kDLFloat, 64, 1}, 48, &deleted);
  // Compact strides; the size-1 axis may carry any stride (PyTorch does this).
  Producer::Of(dl)->SetStrides({3, 12345, 1});
  absl::StatusOr<NDArray> a = FromDLPack(dl);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->shape(), (Shape{2, 1, 3}));
  a->reset();
  EXPECT_EQ(deleted, 1);
}

// Each rejection leaves the tensor with the caller: the deleter has not run, and the
// caller may still call it.
class FromDLPackRejectTest : public ::testing::Test {
 protected:
  void ExpectRejected(DLManagedTensor* dl, std::string_view substr) {
    absl::StatusOr<NDArray> a = FromDLPack(dl);
    ASSERT_FALSE(a.ok());
    ExpectInvalid(a.status(), substr);
    EXPECT_EQ(deleted_, 0) << "ownership must stay with the caller on error";
    dl->deleter(dl);
    EXPECT_EQ(deleted_, 1);
  }
  int deleted_ = 0;
};

TEST_F(FromDLPackRejectTest, NonCpuDevice) {
  DLManagedTensor* dl = Producer::Make({4}, DLDataType{kDLFloat, 32, 1}, 16, &deleted_);
  dl->dl_tensor.device = DLDevice{kDLCUDA, 0};
  ExpectRejected(dl, "device type 2: only CPU (1) is supported");
}

TEST_F(FromDLPackRejectTest, NonContiguousStrides) {
  DLManagedTensor* dl = Producer::Make({2, 3}, DLDataType{kDLFloat, 32, 1}, 24, &deleted_);
  Producer::Of(dl)->SetStrides({1, 2});  // column-major
  ExpectRejected(dl, "shape [2, 3] is not contiguous (stride 2 of axis 1, expected 1)");
}

TEST_F(FromDLPackRejectTest, PaddedStrides) {
  DLManagedTensor* dl = Producer::Make({2, 3}, DLDataType{kDLInt, 8, 1}, 8, &deleted_);
  Producer::Of(dl)->SetStrides({4, 1});  // rows padded to 4
  ExpectRejected(dl, "stride 4 of axis 0, expected 3");
}

TEST_F(FromDLPackRejectTest, BadDType) {
  DLManagedTensor* dl = Producer::Make({4}, DLDataType{kDLFloat, 32, 4}, 64, &deleted_);
  ExpectRejected(dl, "unsupported DLPack dtype (code=2, bits=32, lanes=4)");
}

TEST_F(FromDLPackRejectTest, OpaqueHandles) {
  DLManagedTensor* dl = Producer::Make({4}, DLDataType{kDLOpaqueHandle, 64, 1}, 32, &deleted_);
  ExpectRejected(dl, "unsupported DLPack dtype");
}

TEST_F(FromDLPackRejectTest, MisalignedData) {
  DLManagedTensor* dl = Producer::Make({4}, DLDataType{kDLFloat, 32, 1}, 64, &deleted_);
  dl->dl_tensor.byte_offset = 2;
  ExpectRejected(dl, "not aligned to its element size");
}

TEST_F(FromDLPackRejectTest, MisalignedDataPointer) {
  DLManagedTensor* dl = Producer::Make({2}, DLDataType{kDLInt, 64, 1}, 64, &deleted_);
  dl->dl_tensor.data = static_cast<char*>(Producer::Of(dl)->buffer) + 4;
  ExpectRejected(dl, "not aligned");
}

TEST_F(FromDLPackRejectTest, RankTooLarge) {
  DLManagedTensor* dl = Producer::Make(std::vector<int64_t>(kMaxRank + 1, 1),
                                       DLDataType{kDLFloat, 32, 1}, 4, &deleted_);
  ExpectRejected(dl, "rank 17 outside [0, 16]");
}

TEST_F(FromDLPackRejectTest, NegativeRank) {
  DLManagedTensor* dl = Producer::Make({1}, DLDataType{kDLFloat, 32, 1}, 4, &deleted_);
  dl->dl_tensor.ndim = -1;
  ExpectRejected(dl, "rank -1 outside [0, 16]");
}

TEST_F(FromDLPackRejectTest, NegativeDim) {
  DLManagedTensor* dl = Producer::Make({3, -1}, DLDataType{kDLFloat, 32, 1}, 4, &deleted_);
  ExpectRejected(dl, "negative dimension");
}

TEST_F(FromDLPackRejectTest, ByteSizeOverflow) {
  // 2^62 f64 elements: the element count fits int64, the byte size does not fit size_t.
  DLManagedTensor* dl =
      Producer::Make({int64_t{1} << 62}, DLDataType{kDLFloat, 64, 1}, 64, &deleted_);
  ExpectRejected(dl, "overflows");
}

TEST(FromDLPackTest, NullTensor) {
  ExpectInvalid(FromDLPack(nullptr).status(), "null DLManagedTensor");
}

class DLPackRoundTripTest : public ::testing::TestWithParam<DType> {};

TEST_P(DLPackRoundTripTest, ExportThenImport) {
  const DType dtype = GetParam();
  auto allocator = MakeNaiveAllocator();
  NDArray a = *NDArrayObj::Empty({3, 5, 2}, dtype, allocator);
  auto* bytes = static_cast<uint8_t*>(a->data());
  for (size_t i = 0; i < a->nbytes(); ++i) {
    bytes[i] = static_cast<uint8_t>((i * 131 + 7) & 0xff);
    if (dtype == DType::kBool) bytes[i] &= 1;
  }
  std::vector<uint8_t> expected(bytes, bytes + a->nbytes());

  DLManagedTensor* dl = ToDLPack(a);
  absl::StatusOr<NDArray> b = FromDLPack(dl);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->dtype(), dtype);
  EXPECT_EQ((*b)->shape(), a->shape());
  EXPECT_EQ((*b)->data(), a->data());  // zero-copy both ways
  EXPECT_EQ(std::memcmp((*b)->data(), expected.data(), expected.size()), 0);
  EXPECT_EQ(a->use_count(), 2);  // the export holds the original
  a.reset();
  EXPECT_EQ(allocator->stats().bytes_live, 64 * ((30 * DTypeSize(dtype) + 63) / 64));
  b->reset();  // the import's last view goes: the export's deleter frees the original
  EXPECT_EQ(allocator->stats().bytes_live, 0);
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, DLPackRoundTripTest,
                         ::testing::Values(DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                           DType::kI8, DType::kI16, DType::kI32, DType::kI64,
                                           DType::kU8, DType::kU16, DType::kU32, DType::kU64,
                                           DType::kBool),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

}  // namespace
}  // namespace dynvm
