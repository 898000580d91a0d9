// Tests of serializer/executable_file.h on files crafted with the generated FlatBuffers
// code: each violates one rule the loader must check (enum ranges, required fields,
// tensor extents, shared data), and one has 4 GiB of sparse weights to show that
// loading maps them without reading them.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "objects/api.h"
#include "serializer/executable_file.h"
#include "serializer/executable_generated.h"
#include "serializer/internal/file_header.h"
#include "vm/bytecode.h"

namespace dynvm::serializer {
namespace {

using ::flatbuffers::FlatBufferBuilder;
using ::flatbuffers::Offset;
using ::testing::HasSubstr;

// The tables a crafted file's root points to; Craft adds a valid "main" when
// `functions` is left empty.
struct Parts {
  std::vector<Offset<fbs::Function>> functions;
  std::vector<Offset<fbs::Kernel>> kernels;
  std::vector<Offset<fbs::Constant>> constants;
};

// `load_consti r0, 0; ret r0` in a one-register frame.
std::vector<uint32_t> RetCode() {
  return {vm::MakeHeader(vm::Opcode::kLoadConsti, 4), 0, 0, 0,
          vm::MakeHeader(vm::Opcode::kRet, 2), 0};
}

Offset<fbs::Function> MainFunction(FlatBufferBuilder& fbb) {
  auto name = fbb.CreateString("main");
  auto code = fbb.CreateVector(RetCode());
  return fbs::CreateFunction(fbb, name, 1, 0, 0, code);
}

// Header and metadata, zero-padded up to the weights section, and the header's values.
std::string HeaderAndMetadata(absl::Span<const uint8_t> metadata, uint64_t weights_size,
                              internal::FileHeader* out = nullptr) {
  internal::FileHeader h;
  h.major_version = kFormatMajorVersion;
  h.minor_version = kFormatMinorVersion;
  h.metadata_offset = internal::kHeaderSize;
  h.metadata_size = metadata.size();
  internal::AlignUp(h.metadata_offset + h.metadata_size, 64, &h.weights_offset);
  h.weights_size = weights_size;
  const std::array<uint8_t, 64> header = internal::EncodeFileHeader(h);
  std::string bytes(reinterpret_cast<const char*>(header.data()), header.size());
  bytes.append(reinterpret_cast<const char*>(metadata.data()), metadata.size());
  bytes.resize(h.weights_offset, '\0');
  if (out != nullptr) *out = h;
  return bytes;
}

// A whole file: the metadata `build` describes, then `weights_size` zero bytes.
std::string Craft(const std::function<void(FlatBufferBuilder&, Parts&)>& build,
                  uint64_t weights_size = 0, bool identifier = true) {
  FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  Parts parts;
  build(fbb, parts);
  if (parts.functions.empty()) parts.functions.push_back(MainFunction(fbb));
  auto root = fbs::CreateExecutable(fbb, fbb.CreateString("crafted"),
                                    fbb.CreateVector(parts.functions),
                                    fbb.CreateVector(parts.kernels),
                                    fbb.CreateVector(parts.constants));
  if (identifier) {
    fbs::FinishExecutableBuffer(fbb, root);
  } else {
    fbb.Finish(root);
  }
  std::string bytes = HeaderAndMetadata({fbb.GetBufferPointer(), fbb.GetSize()}, weights_size);
  bytes.resize(bytes.size() + weights_size, '\0');
  return bytes;
}

Offset<fbs::Constant> TensorConstant(FlatBufferBuilder& fbb, uint32_t dtype,
                                     const std::vector<int64_t>& shape, uint64_t offset,
                                     uint64_t nbytes) {
  auto shape_offset = fbb.CreateVector(shape);
  fbs::ConstantBuilder b(fbb);
  b.add_kind(fbs::ConstantKind::Tensor);
  b.add_dtype(static_cast<fbs::DType>(dtype));
  b.add_shape(shape_offset);
  b.add_offset(offset);
  b.add_nbytes(nbytes);
  return b.Finish();
}

// Parses `bytes` from 64-byte-aligned memory without an owner.
absl::StatusOr<vm::ExecutableSpec> ParseAligned(const std::string& bytes) {
  struct Free {
    void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t{64}); }
  };
  std::unique_ptr<uint8_t, Free> buffer(
      static_cast<uint8_t*>(::operator new(bytes.size() + 1, std::align_val_t{64})));
  std::memcpy(buffer.get(), bytes.data(), bytes.size());
  absl::StatusOr<vm::ExecutableSpec> spec = ParseExecutable({buffer.get(), bytes.size()}, nullptr);
  // Constants view the buffer, which dies here: keep only the status for tests that
  // need no tensor values.
  if (spec.ok()) spec->constants.clear();
  return spec;
}

TEST(ExecutableCraftedTest, ValidCraftedFileParses) {
  std::string bytes = Craft(
      [](FlatBufferBuilder& fbb, Parts& parts) {
        parts.constants.push_back(TensorConstant(fbb, /*f32=*/0, {2}, 64, 8));
      },
      /*weights_size=*/128);
  absl::StatusOr<vm::ExecutableSpec> spec = ParseAligned(bytes);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->producer, "crafted");
  EXPECT_EQ(spec->functions.at(0).name, "main");
}

struct BadCase {
  std::string_view name;
  std::function<void(FlatBufferBuilder&, Parts&)> build;
  std::string_view message;
  uint64_t weights_size = 64;
};

// A function named `name` whose parameter is `spec`.
Offset<fbs::Function> FunctionWithParam(FlatBufferBuilder& fbb, Offset<fbs::ValueSpec> spec) {
  auto name = fbb.CreateString("f");
  auto params = fbb.CreateVector(std::vector<Offset<fbs::ValueSpec>>{spec});
  auto code = fbb.CreateVector(RetCode());
  return fbs::CreateFunction(fbb, name, 1, params, 0, code);
}

// A kernel entry "k" with the given attributes.
Offset<fbs::Kernel> KernelWith(FlatBufferBuilder& fbb, std::vector<Offset<fbs::Attr>> attrs) {
  auto name = fbb.CreateString("k");
  return fbs::CreateKernel(fbb, name, 1, 1, fbb.CreateVector(attrs));
}

Offset<fbs::Attr> IntAttr(FlatBufferBuilder& fbb, const char* name, uint32_t kind = 0) {
  auto n = name == nullptr ? 0 : fbb.CreateString(name);
  fbs::AttrBuilder b(fbb);
  if (!n.IsNull()) b.add_name(n);
  b.add_kind(static_cast<fbs::AttrKind>(kind));
  b.add_int_value(1);
  return b.Finish();
}

std::vector<BadCase> BadCases() {
  using B = FlatBufferBuilder;
  return {
      {"misaligned tensor offset",
       [](B& fbb, Parts& p) { p.constants.push_back(TensorConstant(fbb, 0, {2, 3}, 32, 24)); },
       "constant 0: tensor offset 32 in the weights section is not a multiple of 64", 128},
      {"tensor past the weights",
       [](B& fbb, Parts& p) { p.constants.push_back(TensorConstant(fbb, 0, {16}, 64, 64)); },
       "constant 0: tensor bytes [64, +64) lie outside the 64-byte weights section"},
      {"tensor offset wraps",
       [](B& fbb, Parts& p) {
         p.constants.push_back(TensorConstant(fbb, 0, {16}, UINT64_MAX - 63, 64));
       },
       "lie outside the 64-byte weights section"},
      {"nbytes disagrees with the shape",
       [](B& fbb, Parts& p) { p.constants.push_back(TensorConstant(fbb, 0, {2, 3}, 0, 20)); },
       "constant 0: tensor f32 [2, 3] has 6 elements, but the file gives it 20 bytes"},
      {"byte size overflows",
       [](B& fbb, Parts& p) {
         p.constants.push_back(TensorConstant(fbb, 1, {int64_t{1} << 61}, 0, 0));
       },
       "but the file gives it 0 bytes"},
      {"unknown dtype",
       [](B& fbb, Parts& p) { p.constants.push_back(TensorConstant(fbb, 99, {1}, 0, 4)); },
       "constant 0: unknown dtype 99"},
      {"rank above the maximum",
       [](B& fbb, Parts& p) {
         p.constants.push_back(TensorConstant(fbb, 0, std::vector<int64_t>(17, 1), 0, 4));
       },
       "rank 17 above the maximum 16"},
      {"negative dimension",
       [](B& fbb, Parts& p) { p.constants.push_back(TensorConstant(fbb, 0, {2, -3}, 0, 24)); },
       "negative dimension"},
      {"element count overflows",
       [](B& fbb, Parts& p) {
         p.constants.push_back(
             TensorConstant(fbb, 0, {int64_t{1} << 40, int64_t{1} << 40}, 0, 0));
       },
       "overflows"},
      {"tensor without a shape",
       [](B& fbb, Parts& p) {
         fbs::ConstantBuilder b(fbb);
         b.add_kind(fbs::ConstantKind::Tensor);
         p.constants.push_back(b.Finish());
       },
       "tensor constant without a shape"},
      {"unknown constant kind",
       [](B& fbb, Parts& p) {
         fbs::ConstantBuilder b(fbb);
         b.add_kind(static_cast<fbs::ConstantKind>(7));
         p.constants.push_back(b.Finish());
       },
       "unknown constant kind 7"},
      {"string constant without a value",
       [](B& fbb, Parts& p) {
         fbs::ConstantBuilder b(fbb);
         b.add_kind(fbs::ConstantKind::String);
         p.constants.push_back(b.Finish());
       },
       "constant 0: missing the string value"},
      {"function without a name",
       [](B& fbb, Parts& p) {
         p.functions.push_back(fbs::CreateFunction(fbb, 0, 1, 0, 0, fbb.CreateVector(RetCode())));
       },
       "function 0: missing name"},
      {"function without code",
       [](B& fbb, Parts& p) {
         p.functions.push_back(fbs::CreateFunction(fbb, fbb.CreateString("f"), 1));
       },
       "function 0 ('f'): missing code"},
      {"unknown value kind",
       [](B& fbb, Parts& p) {
         p.functions.push_back(FunctionWithParam(
             fbb, fbs::CreateValueSpec(fbb, 0, static_cast<fbs::ValueKind>(9))));
       },
       "function 0 ('f'): parameter 0: unknown value kind 9"},
      {"value kind that would wrap in a byte",
       [](B& fbb, Parts& p) {
         p.functions.push_back(FunctionWithParam(
             fbb, fbs::CreateValueSpec(fbb, 0, static_cast<fbs::ValueKind>(256))));
       },
       "unknown value kind 256"},
      {"unknown dtype in a signature",
       [](B& fbb, Parts& p) {
         p.functions.push_back(FunctionWithParam(
             fbb, fbs::CreateValueSpec(fbb, 0, fbs::ValueKind::Int,
                                       static_cast<fbs::DType>(200))));
       },
       "parameter 0: unknown dtype 200"},
      {"signature rank above the maximum",
       [](B& fbb, Parts& p) {
         std::vector<Offset<fbs::Dim>> dims;
         for (int i = 0; i < 17; ++i) dims.push_back(fbs::CreateDim(fbb, 1));
         auto dims_offset = fbb.CreateVector(dims);
         p.functions.push_back(FunctionWithParam(
             fbb, fbs::CreateValueSpec(fbb, 0, fbs::ValueKind::Tensor, fbs::DType::F32,
                                       dims_offset)));
       },
       "rank 17 above the maximum 16"},
      {"unknown attribute kind",
       [](B& fbb, Parts& p) { p.kernels.push_back(KernelWith(fbb, {IntAttr(fbb, "a", 5)})); },
       "kernel table entry 0: kernel 'k' attribute 'a': unknown attribute kind 5"},
      {"duplicate attribute",
       [](B& fbb, Parts& p) {
         p.kernels.push_back(KernelWith(fbb, {IntAttr(fbb, "a"), IntAttr(fbb, "a")}));
       },
       "attribute 'a' appears twice"},
      {"attribute without a name",
       [](B& fbb, Parts& p) { p.kernels.push_back(KernelWith(fbb, {IntAttr(fbb, nullptr)})); },
       "kernel 'k' attribute 0: missing name"},
      {"string attribute without a value",
       [](B& fbb, Parts& p) { p.kernels.push_back(KernelWith(fbb, {IntAttr(fbb, "s", 2)})); },
       "missing the string value"},
      {"int list attribute without a value",
       [](B& fbb, Parts& p) { p.kernels.push_back(KernelWith(fbb, {IntAttr(fbb, "l", 3)})); },
       "int list attribute without a value"},
      {"float list attribute without a value",
       [](B& fbb, Parts& p) { p.kernels.push_back(KernelWith(fbb, {IntAttr(fbb, "l", 4)})); },
       "float list attribute without a value"},
      {"kernel without a name",
       [](B& fbb, Parts& p) { p.kernels.push_back(fbs::CreateKernel(fbb, 0, 1, 1)); },
       "kernel table entry 0: missing name"},
      {"one code vector shared by many functions",
       [](B& fbb, Parts& p) {
         std::vector<uint32_t> code(1000, 0);
         code[0] = vm::MakeHeader(vm::Opcode::kRet, 2);
         auto shared = fbb.CreateVector(code);
         for (int i = 0; i < 300; ++i) {
           p.functions.push_back(
               fbs::CreateFunction(fbb, fbb.CreateString(absl::StrCat("f", i)), 1, 0, 0, shared));
         }
       },
       "refers to the same data many times over"},
  };
}

TEST(ExecutableCraftedTest, RefusesEachBrokenRule) {
  for (const BadCase& c : BadCases()) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<vm::ExecutableSpec> spec = ParseAligned(Craft(c.build, c.weights_size));
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(spec.status().message(), HasSubstr(c.message));
  }
}

TEST(ExecutableCraftedTest, RefusesAMissingFileIdentifier) {
  std::string bytes = Craft([](FlatBufferBuilder&, Parts&) {}, 0, /*identifier=*/false);
  absl::StatusOr<vm::ExecutableSpec> spec = ParseAligned(bytes);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("file identifier \"DVMX\""));
}

TEST(ExecutableCraftedTest, RefusesGarbageMetadata) {
  std::string bytes = Craft([](FlatBufferBuilder&, Parts&) {});
  // Keep the identifier, point the root offset outside the buffer.
  const uint32_t root = 0x7ffffff0;
  std::memcpy(bytes.data() + 64, &root, sizeof(root));
  EXPECT_THAT(ParseAligned(bytes).status().message(), HasSubstr("FlatBuffers verification"));
}

// An [int64] vector holding `value`, carved out of a byte vector followed by `pad`
// bytes: legal for the verifier (it checks only the 4-byte length's alignment) but, for
// one of pad 0 and 4, its element is not 8-aligned.
Offset<flatbuffers::Vector<int64_t>> OddInt64Vector(FlatBufferBuilder& fbb, int64_t value,
                                                    int pad) {
  const uint32_t length = 1;
  std::vector<uint8_t> raw(reinterpret_cast<const uint8_t*>(&length),
                           reinterpret_cast<const uint8_t*>(&length) + 4);
  raw.insert(raw.end(), reinterpret_cast<const uint8_t*>(&value),
             reinterpret_cast<const uint8_t*>(&value) + 8);
  raw.resize(raw.size() + pad, 0);
  auto outer = fbb.CreateVector(raw);
  // Offsets count back from the end of the buffer; the data follows the 4-byte length.
  return Offset<flatbuffers::Vector<int64_t>>(outer.o - 4);
}

TEST(ExecutableCraftedTest, ReadsInt64VectorsAtAnyAddress) {
  for (int pad : {0, 4}) {
    std::string bytes = Craft(
        [pad](FlatBufferBuilder& fbb, Parts& parts) {
          auto shape = OddInt64Vector(fbb, 3, pad);
          fbs::ConstantBuilder b(fbb);
          b.add_kind(fbs::ConstantKind::Tensor);
          b.add_dtype(fbs::DType::I8);
          b.add_shape(shape);
          b.add_offset(0);
          b.add_nbytes(3);
          parts.constants.push_back(b.Finish());
        },
        /*weights_size=*/64);
    absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = LoadExecutableFromMemory(
        {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
        kernels::DefaultRegistry());
    ASSERT_TRUE(exe.ok()) << "pad " << pad << ": " << exe.status();
    EXPECT_EQ((*exe)->constant(0).As<NDArrayObj>()->shape(), Shape{3});
  }
}

// 4 GiB of weights in a sparse file: loading maps them without reading a page, and a
// constant past the 4 GiB mark (a 64-bit offset) reads back.
TEST(ExecutableCraftedTest, MapsHugeWeightsWithoutTouchingThem) {
  constexpr uint64_t kBig = uint64_t{4} << 30;
  FlatBufferBuilder fbb;
  fbb.ForceDefaults(true);
  std::vector<Offset<fbs::Function>> functions = {MainFunction(fbb)};
  std::vector<Offset<fbs::Constant>> constants = {
      TensorConstant(fbb, /*f32=*/0, {static_cast<int64_t>(kBig / 4)}, 0, kBig),
      TensorConstant(fbb, /*i64=*/7, {8}, kBig, 64)};
  auto root = fbs::CreateExecutable(fbb, fbb.CreateString("big"), fbb.CreateVector(functions),
                                    0, fbb.CreateVector(constants));
  fbs::FinishExecutableBuffer(fbb, root);
  internal::FileHeader h;
  const std::string head =
      HeaderAndMetadata({fbb.GetBufferPointer(), fbb.GetSize()}, kBig + 64, &h);

  const std::string path = absl::StrCat(::testing::TempDir(), "/crafted_big_", getpid(), ".fbs");
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, head.data(), head.size()), static_cast<ssize_t>(head.size()));
  if (::ftruncate(fd, static_cast<off_t>(h.weights_offset + h.weights_size)) != 0) {
    ::close(fd);
    std::remove(path.c_str());
    GTEST_SKIP() << "this filesystem cannot hold a sparse 4 GiB file";
  }
  ::close(fd);

  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      LoadExecutable(path, kernels::DefaultRegistry());
  std::remove(path.c_str());  // the mapping outlives the name
  ASSERT_TRUE(exe.ok()) << exe.status();
  const auto* big = (*exe)->constant(0).As<NDArrayObj>();
  const auto* tail = (*exe)->constant(1).As<NDArrayObj>();
  ASSERT_NE(big, nullptr);
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(big->nbytes(), kBig);
  EXPECT_EQ(static_cast<const char*>(tail->data()) - static_cast<const char*>(big->data()),
            static_cast<ptrdiff_t>(kBig));

  // No page of the big tensor is resident: nothing read it.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(big->data());
  const uintptr_t first = (begin + page - 1) / page * page;  // skip the metadata's page
  const size_t pages = (begin + kBig - first) / page;
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(::mincore(reinterpret_cast<void*>(first), pages * page, resident.data()), 0);
  size_t count = 0;
  for (unsigned char r : resident) count += r & 1;
  EXPECT_LT(count, pages / 1000) << count << " of " << pages << " pages resident";

  for (int64_t v : absl::Span<const int64_t>(tail->data_as<const int64_t>(), 8)) EXPECT_EQ(v, 0);
}

}  // namespace
}  // namespace dynvm::serializer
