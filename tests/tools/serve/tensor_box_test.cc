// Tests of tools/serve/tensor_box.h, what the batcher pads, merges and splits with:
// boxes of numbers copy as bytes, boxes of strings as texts the destination keeps
// (objects/string_tensor.h), and the pad value's comparison reads texts too. Also
// ServedModel's refusal of results it could not name (an ADT).
#include "tools/serve/tensor_box.h"

#include <string>
#include <vector>

#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "objects/string_tensor.h"
#include "serializer/executable_file.h"
#include "tools/serve/served_model.h"

namespace dynvm::tools::serve {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> Texts(const NDArrayObj& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(StringElement(t, i).value_or("?"));
  return out;
}

TEST(TensorBoxTest, StringBoxesCopyTheirTexts) {
  // A 2x2 request placed at row 1 of a 3x3 batch padded with "pad", then cut back out.
  const std::vector<std::string> request_texts = {"a", "b", "c", "d"};
  NDArray request = *MakeStringTensor({2, 2}, request_texts, MakeNaiveAllocator());
  NDArray batch = *NDArrayObj::Empty({3, 3}, DType::kString, MakeNaiveAllocator());
  const std::vector<std::string> pad_text = {"pad"};
  NDArray pad = *MakeStringTensor({}, pad_text, MakeNaiveAllocator());
  FillTensor(*batch, *pad);
  CopyBox(*request, {0, 0}, *batch, {1, 0}, {2, 2});
  request = NDArray();  // the batch holds its own copies
  EXPECT_EQ(Texts(*batch),
            (std::vector<std::string>{"pad", "pad", "pad", "a", "b", "pad", "c", "d", "pad"}));
  NDArray back = *NDArrayObj::Empty({2, 2}, DType::kString, MakeNaiveAllocator());
  CopyBox(*batch, {1, 0}, *back, {0, 0}, {2, 2});
  batch = NDArray();
  EXPECT_EQ(Texts(*back), request_texts);
}

TEST(TensorBoxTest, NumberBoxesCopyTheirBytes) {
  NDArray src = *NDArrayObj::Empty({2, 3}, DType::kI32, MakeNaiveAllocator());
  for (int i = 0; i < 6; ++i) src->data_as<int32_t>()[i] = i;
  NDArray dst = *NDArrayObj::Empty({3, 2}, DType::kI32, MakeNaiveAllocator());
  NDArray zero = *NDArrayObj::Empty({}, DType::kI32, MakeNaiveAllocator());
  *zero->data_as<int32_t>() = -1;
  FillTensor(*dst, *zero);
  CopyBox(*src, {0, 1}, *dst, {1, 0}, {2, 2});
  EXPECT_EQ(std::vector<int32_t>(dst->data_as<int32_t>(), dst->data_as<int32_t>() + 6),
            (std::vector<int32_t>{-1, -1, 1, 2, 4, 5}));
}

TEST(TensorBoxTest, SameFirstElementComparesTexts) {
  const std::vector<std::string> x = {"same"};
  NDArray a = *MakeStringTensor({}, x, MakeNaiveAllocator());
  NDArray b = *MakeStringTensor({}, x, MakeNaiveAllocator());
  EXPECT_TRUE(SameFirstElement(*a, *b));  // different pointers, one text
  SetStringElement(*b, 0, "other");
  EXPECT_FALSE(SameFirstElement(*a, *b));
}

TEST(ServedModelTest, ResultsThatAreNotTensorsAreRefused) {
  absl::StatusOr<compiler::Module> mod = compiler::ParseModule(R"(#[version = "0.0.5"]
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @main(%x: Tensor[(2), float32]) -> List[Tensor[(2), float32]] {
  Cons(%x, Nil)
}
)", {}, "list.relay");
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<vm::ExecutableSpec> spec = compiler::CompileModule(*mod, {});
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  absl::StatusOr<ServedModel> model = ServedModel::Create("m", *exe, "main");
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(model.status().message()),
              HasSubstr("output 0 ('') of 'main' is any: vm_serve serves results of tensors"));
}

}  // namespace
}  // namespace dynvm::tools::serve
