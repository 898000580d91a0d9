// Tests of objects/string_tensor.h: string tensors start empty, hold what is set, copy
// with their strings, and read an element their storage does not keep (bytes written
// as another type, a raw copy into another storage) as an error, never through it.
#include "objects/string_tensor.h"

#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/storage.h"

namespace dynvm {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Elements(const NDArrayObj& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    absl::StatusOr<std::string_view> s = StringElement(t, i);
    EXPECT_TRUE(s.ok()) << s.status();
    out.emplace_back(s.value_or(""));
  }
  return out;
}

TEST(StringTensorTest, NewTensorsHoldEmptyStrings) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty({2, 3}, DType::kString, MakeNaiveAllocator());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->nbytes(), 6 * sizeof(void*));
  EXPECT_EQ(Elements(**t), std::vector<std::string>(6, ""));
}

TEST(StringTensorTest, MakeAndSet) {
  const std::vector<std::string> values = {"a", "", std::string("n\0ul", 4), "\xff\xfe"};
  absl::StatusOr<NDArray> t = MakeStringTensor({2, 2}, values, MakeNaiveAllocator());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(Elements(**t), values);
  SetStringElement(**t, 1, "replaced");
  EXPECT_EQ(Elements(**t)[1], "replaced");
  EXPECT_EQ(Elements(**t)[0], "a");
}

const StringObj* Pointer(const NDArrayObj& t, int64_t i) {
  const StringObj* p;
  std::memcpy(&p, static_cast<const char*>(t.data()) + i * sizeof(p), sizeof(p));
  return p;
}

TEST(StringTensorTest, SettingAgainReleasesTheOldTextAndEmptyTakesNothing) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty({1}, DType::kString, MakeNaiveAllocator());
  ASSERT_TRUE(t.ok());
  SetStringElement(**t, 0, "first");
  const StringObj* first = Pointer(**t, 0);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE((*t)->storage()->OwnsString(first));
  SetStringElement(**t, 0, "second");  // a loop of casts keeps one text per element
  EXPECT_FALSE((*t)->storage()->OwnsString(first));
  EXPECT_EQ(StringElement(**t, 0).value_or("?"), "second");
  SetStringElement(**t, 0, "");
  EXPECT_EQ(Pointer(**t, 0), nullptr);
  EXPECT_EQ(StringElement(**t, 0).value_or("?"), "");
  // An element set from its own text keeps it.
  SetStringElement(**t, 0, "self");
  const absl::StatusOr<std::string_view> self = StringElement(**t, 0);
  ASSERT_TRUE(self.ok());
  SetStringElement(**t, 0, *self);
  EXPECT_EQ(StringElement(**t, 0).value_or("?"), "self");
}

TEST(StringTensorTest, ANewTensorInAStorageReleasesTheTextsLeftThere) {
  // Memory planning places string tensors where earlier ones were; Create only views.
  absl::StatusOr<Storage> storage = AllocateStorage(MakeNaiveAllocator(), 16);
  ASSERT_TRUE(storage.ok());
  absl::StatusOr<NDArray> first = NDArrayObj::CreateNew(*storage, 0, DType::kString, {2});
  ASSERT_TRUE(first.ok());
  SetStringElement(**first, 1, "left");
  const StringObj* left = Pointer(**first, 1);
  absl::StatusOr<NDArray> view = NDArrayObj::Create(*storage, 0, DType::kString, {2});
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(StringElement(**view, 1).value_or("?"), "left");
  absl::StatusOr<NDArray> second = NDArrayObj::CreateNew(*storage, 0, DType::kString, {2});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(StringElement(**second, 1).value_or("?"), "");
  EXPECT_FALSE((*storage)->OwnsString(left));
}

TEST(StringTensorTest, MakeChecksTheCount) {
  const std::vector<std::string> values = {"a", "b"};
  absl::StatusOr<NDArray> t = MakeStringTensor({3}, values, MakeNaiveAllocator());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("2 strings for a string tensor [3] of 3 elements"));
}

TEST(StringTensorTest, CopyOwnsItsStringsAndOutlivesTheSource) {
  const std::vector<std::string> values = {"x", "yz"};
  absl::StatusOr<NDArray> copy;
  {
    absl::StatusOr<NDArray> t = MakeStringTensor({2}, values, MakeNaiveAllocator());
    ASSERT_TRUE(t.ok());
    copy = Copy(*t, MakeNaiveAllocator());
    ASSERT_TRUE(copy.ok()) << copy.status();
  }
  EXPECT_EQ(Elements(**copy), values);
}

TEST(StringTensorTest, ViewsShareTheStrings) {
  const std::vector<std::string> values = {"p", "q", "r", "s"};
  absl::StatusOr<NDArray> t = MakeStringTensor({4}, values, MakeNaiveAllocator());
  ASSERT_TRUE(t.ok());
  absl::StatusOr<NDArray> view = Reshape(*t, {2, 2});
  ASSERT_TRUE(view.ok());
  t = NDArray();
  EXPECT_EQ(Elements(**view), values);
}

TEST(StringTensorTest, ForeignBytesAreAnErrorNotAPointer) {
  // A numeric tensor aliasing a string tensor's bytes (as a hostile program can place
  // them) overwrites its elements.
  absl::StatusOr<Storage> storage = AllocateStorage(MakeNaiveAllocator(), 64);
  ASSERT_TRUE(storage.ok());
  absl::StatusOr<NDArray> strings = NDArrayObj::CreateNew(*storage, 0, DType::kString, {2});
  ASSERT_TRUE(strings.ok());
  SetStringElement(**strings, 0, "kept");
  absl::StatusOr<NDArray> ints = NDArrayObj::Create(*storage, 0, DType::kI64, {2});
  ASSERT_TRUE(ints.ok());
  (*ints)->data_as<int64_t>()[1] = 0x12345678;
  EXPECT_EQ(StringElement(**strings, 0).value_or("?"), "kept");
  absl::StatusOr<std::string_view> bad = StringElement(**strings, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("element 1 of a string tensor [2]"));

  // A raw copy of the pointers into another storage: that storage keeps none of them.
  absl::StatusOr<NDArray> other = NDArrayObj::Empty({2}, DType::kString, MakeNaiveAllocator());
  ASSERT_TRUE(other.ok());
  std::memcpy((*other)->data(), (*strings)->data(), sizeof(void*));
  EXPECT_FALSE(StringElement(**other, 0).ok());
}

TEST(StringTensorTest, NotADLPackType) {
  EXPECT_FALSE(FromDLDataType(ToDLDataType(DType::kString)).ok());
}

}  // namespace
}  // namespace dynvm
