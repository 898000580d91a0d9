// Tests of serializer/executable_file.h on files the writer makes: round trips of every
// kind of content, deterministic bytes, zero-copy loading from a mapping, and the
// header-level refusals (magic, version, section bounds, truncation).
// Files crafted by hand (bad enums, bad extents, huge sparse weights) are in
// executable_crafted_test.cc.
#include "serializer/executable_file.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "objects/api.h"
#include "objects/opaque.h"
#include "serializer/internal/file_header.h"
#include "vm/bytecode.h"

namespace dynvm::serializer {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Bytes in 64-byte-aligned memory, as mmap and LoadExecutableFromMemory provide.
class AlignedBytes {
 public:
  explicit AlignedBytes(std::string_view bytes, size_t shift = 0)
      : data_(static_cast<uint8_t*>(::operator new(bytes.size() + 64, std::align_val_t{64}))),
        shift_(shift),
        size_(bytes.size()) {
    std::memcpy(data_ + shift_, bytes.data(), bytes.size());
  }
  ~AlignedBytes() { ::operator delete(data_, std::align_val_t{64}); }
  AlignedBytes(const AlignedBytes&) = delete;
  AlignedBytes& operator=(const AlignedBytes&) = delete;

  absl::Span<const uint8_t> span() const { return {data_ + shift_, size_}; }

 private:
  uint8_t* data_;
  size_t shift_;
  size_t size_;
};

std::shared_ptr<Allocator> Alloc() {
  static auto* allocator = new std::shared_ptr<Allocator>(MakeNaiveAllocator());
  return *allocator;
}

// The CPU kernels plus "test.attrs", which takes any arity and any attributes.
const kernels::KernelRegistry& TestRegistry() {
  static const kernels::KernelRegistry* registry = [] {
    auto* r = new kernels::KernelRegistry;
    EXPECT_TRUE(kernels::RegisterCpuKernels(*r).ok());
    EXPECT_TRUE(r->Register(kernels::KernelDef{
                               .name = "test.attrs",
                               .num_inputs = kernels::kVariadic,
                               .num_outputs = kernels::kVariadic,
                               .fn = [](const kernels::KernelCall&) { return absl::OkStatus(); },
                               .bind = [](const kernels::Attrs&)
                                   -> absl::StatusOr<std::shared_ptr<const void>> {
                                 return nullptr;
                               }})
                    .ok());
    return r;
  }();
  return *registry;
}

std::vector<uint32_t> Code(std::initializer_list<vm::Instruction> instructions) {
  std::vector<uint32_t> code;
  for (const vm::Instruction& inst : instructions) {
    absl::Status status = vm::EncodeInstruction(inst, &code);
    EXPECT_TRUE(status.ok()) << status;
  }
  return code;
}

// A tensor whose byte i is (i * 37 + seed) % 256 (0/1 for bool).
NDArray Patterned(DType dtype, std::vector<int64_t> shape, int seed) {
  NDArray a = *NDArrayObj::Empty(shape, dtype, Alloc());
  auto* p = static_cast<uint8_t*>(a->data());
  for (size_t i = 0; i < a->nbytes(); ++i) {
    p[i] = static_cast<uint8_t>((i * 37 + seed) % 256);
    if (dtype == DType::kBool) p[i] &= 1;
  }
  return a;
}

vm::ValueSpec Tensor(std::string name, DType dtype, std::vector<vm::DimSpec> dims) {
  return vm::ValueSpec{std::move(name), vm::ValueSpec::Kind::kTensor, dtype, std::move(dims), {}};
}
vm::ValueSpec Scalar(std::string name, vm::ValueSpec::Kind kind) {
  return vm::ValueSpec{std::move(name), kind, DType::kF32, {}, {}};
}

// Index of the "boom" string constant in TestSpec().
constexpr int64_t kBoomConstant = 12;

// A spec with several functions, kernel entries with every attribute kind, and
// constants of every kind and every dtype, including 0-d and zero-size tensors.
vm::ExecutableSpec TestSpec() {
  using Op = vm::Opcode;
  using Kind = vm::ValueSpec::Kind;
  vm::ExecutableSpec spec;
  spec.producer = "dynvm serializer test";
  // Constants 0..9: one tensor per dtype, sizes chosen so that padding varies.
  const std::pair<DType, std::vector<int64_t>> tensors[] = {
      {DType::kF32, {2, 3}}, {DType::kF64, {3}},   {DType::kF16, {5}}, {DType::kBF16, {2, 2}},
      {DType::kI8, {7}},     {DType::kI16, {3, 1}}, {DType::kI32, {4}}, {DType::kI64, {2}},
      {DType::kU8, {65}},    {DType::kBool, {3}}};
  int seed = 1;
  for (const auto& [dtype, shape] : tensors) spec.constants.push_back(Patterned(dtype, shape, seed++));
  spec.constants.push_back(Patterned(DType::kF32, {}, 99));     // 10: 0-d
  spec.constants.push_back(Patterned(DType::kI64, {0, 4}, 0));  // 11: zero-size
  spec.constants.push_back(MakeObject<StringObj>("boom"));       // 12
  spec.constants.push_back(MakeObject<StringObj>(""));           // 13
  spec.constants.push_back(Value::Int(-5));
  spec.constants.push_back(Value::Int(std::numeric_limits<int64_t>::min()));
  spec.constants.push_back(Value::Float(-0.0));
  spec.constants.push_back(Value::Float(std::numeric_limits<double>::quiet_NaN()));
  spec.constants.push_back(Value::Float(1e300));
  spec.constants.push_back(Value::Bool(true));
  spec.constants.push_back(Value::Bool(false));

  spec.kernels.push_back(vm::KernelEntry{
      "test.attrs",
      {{"axis", int64_t{-1}},
       {"eps", 1e-5},
       {"negzero", -0.0},
       {"mode", std::string("nearest")},
       {"empty", std::string()},
       {"perm", std::vector<int64_t>{0, 2, 1}},
       {"no_ints", std::vector<int64_t>{}},
       {"scales", std::vector<double>{0.5, -2.25}},
       {"no_floats", std::vector<double>{}}},
      2, 1});
  spec.kernels.push_back(vm::KernelEntry{"add", {}, 2, 1});

  spec.functions.push_back(vm::Function{
      "main", 4,
      {Tensor("input_ids", DType::kF32,
              {vm::DimSpec::Symbol("n"), vm::DimSpec::Constant(768), vm::DimSpec::Any()})},
      {Tensor("", DType::kF32, {vm::DimSpec::Symbol("n"), vm::DimSpec::Any()})},
      Code({{Op::kLoadConst, {1, 0}, {}},
            {Op::kLoadConst, {2, 0}, {}},  // the output, which add fills in place
            {Op::kInvokePacked, {0, 1}, {0, 1, 2}},
            {Op::kInvoke, {3, 1}, {2}},
            {Op::kRet, {3}, {}}})});
  spec.functions.push_back(vm::Function{
      "helper", 1, {Scalar("a", Kind::kAny)}, {Scalar("", Kind::kAny)},
      Code({{Op::kRet, {0}, {}}})});
  spec.functions.push_back(vm::Function{"fail", 1, {}, {},
                                        Code({{Op::kFatal, {kBoomConstant}, {}}})});
  spec.functions.push_back(vm::Function{
      "scalars", 3,
      {Scalar("i", Kind::kInt), Scalar("f", Kind::kFloat), Scalar("b", Kind::kBool)},
      {Scalar("", Kind::kInt)},
      Code({{Op::kLoadConsti, {1, -7}, {}}, {Op::kAddI, {0, 0, 1}, {}}, {Op::kRet, {0}, {}}})});
  // A tuple parameter and a tuple result with named, nested fields (ONNX outputs).
  vm::ValueSpec pair = Scalar("pair", Kind::kTuple);
  pair.fields = {Tensor("logits", DType::kF32, {vm::DimSpec::Symbol("n")}), Scalar("", Kind::kInt)};
  vm::ValueSpec nested = Scalar("", Kind::kTuple);
  nested.fields = {pair, Scalar("", Kind::kTuple)};  // and an empty tuple
  spec.functions.push_back(vm::Function{"tuples", 1, {pair}, {nested}, Code({{Op::kRet, {0}, {}}})});
  // Where main's instructions come from (pc 0: the first load_const, 6: invoke_packed).
  spec.sources = {"ONNX node 'add_1' (Add)", "ONNX node (Relu) making 'y'"};
  spec.functions[0].source_map = {{0, 1}, {6, 0}};
  return spec;
}

void ExpectConstantsEqual(const Value& a, const Value& b, size_t i) {
  SCOPED_TRACE(absl::StrCat("constant ", i));
  ASSERT_EQ(a.kind(), b.kind());
  if (a.is_int() || a.is_bool()) {
    EXPECT_EQ(a.int_value(), b.int_value());
  }
  if (a.is_float()) {
    // Bitwise: -0.0 and NaN must survive.
    uint64_t x, y;
    const double fa = a.float_value(), fb = b.float_value();
    std::memcpy(&x, &fa, sizeof(x));
    std::memcpy(&y, &fb, sizeof(y));
    EXPECT_EQ(x, y);
  }
  if (const auto* s = a.As<StringObj>()) {
    ASSERT_NE(b.As<StringObj>(), nullptr);
    EXPECT_EQ(s->value(), b.As<StringObj>()->value());
  }
  if (const auto* t = a.As<NDArrayObj>()) {
    const auto* u = b.As<NDArrayObj>();
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(t->dtype(), u->dtype());
    EXPECT_EQ(t->shape(), u->shape());
    ASSERT_EQ(t->nbytes(), u->nbytes());
    EXPECT_EQ(std::memcmp(t->data(), u->data(), t->nbytes()), 0);
  }
}

void ExpectSpecsEqual(const vm::ExecutableSpec& a, const vm::ExecutableSpec& b) {
  EXPECT_EQ(a.producer, b.producer);
  EXPECT_EQ(a.functions, b.functions);
  EXPECT_EQ(a.sources, b.sources);
  EXPECT_EQ(a.kernels, b.kernels);
  ASSERT_EQ(a.constants.size(), b.constants.size());
  for (size_t i = 0; i < a.constants.size(); ++i) {
    ExpectConstantsEqual(a.constants[i], b.constants[i], i);
  }
}

std::string TempPath(std::string_view name) {
  return absl::StrCat(::testing::TempDir(), "/executable_file_test_", getpid(), "_",
                      absl::string_view(name.data(), name.size()));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Whether `p` lies in a mapping of the file at `path` (per /proc/self/maps).
bool InFileMapping(const void* p, const std::string& path) {
  const std::string canonical = std::filesystem::canonical(path).string();
  std::ifstream maps("/proc/self/maps");
  const auto addr = reinterpret_cast<uintptr_t>(p);
  for (std::string line; std::getline(maps, line);) {
    if (!line.ends_with(" " + canonical)) continue;
    std::vector<std::string> range = absl::StrSplit(line.substr(0, line.find(' ')), '-');
    const uintptr_t lo = std::stoull(range[0], nullptr, 16);
    const uintptr_t hi = std::stoull(range[1], nullptr, 16);
    if (addr >= lo && addr < hi) return true;
  }
  return false;
}

absl::StatusOr<vm::ExecutableSpec> Parse(const AlignedBytes& bytes) {
  return ParseExecutable(bytes.span(), nullptr);
}

TEST(ExecutableFileTest, RoundTripsEveryKindOfContent) {
  const vm::ExecutableSpec spec = TestSpec();
  absl::StatusOr<std::string> bytes = SerializeExecutable(spec);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  AlignedBytes aligned(*bytes);
  absl::StatusOr<vm::ExecutableSpec> back = Parse(aligned);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSpecsEqual(spec, *back);
  // Attribute -0.0 keeps its sign (== alone would not notice).
  EXPECT_TRUE(std::signbit(std::get<double>(back->kernels[0].attrs.at("negzero"))));
}

TEST(ExecutableFileTest, SerializationIsDeterministic) {
  absl::StatusOr<std::string> first = SerializeExecutable(TestSpec());
  absl::StatusOr<std::string> second = SerializeExecutable(TestSpec());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  // Parsing and writing again gives the same file: what `vm_dis | vm_as` relies on.
  AlignedBytes aligned(*first);
  absl::StatusOr<vm::ExecutableSpec> back = Parse(aligned);
  ASSERT_TRUE(back.ok()) << back.status();
  absl::StatusOr<std::string> again = SerializeExecutable(*back);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*first, *again);
}

TEST(ExecutableFileTest, LaysOutTheDocumentedHeaderAndAlignment) {
  absl::StatusOr<std::string> bytes = SerializeExecutable(TestSpec());
  ASSERT_TRUE(bytes.ok());
  ASSERT_GE(bytes->size(), 64u);
  EXPECT_EQ(bytes->substr(0, 8), "DYNVMEXE");
  absl::StatusOr<internal::FileHeader> h = internal::DecodeFileHeader(
      {reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size()}, 1);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->major_version, kFormatMajorVersion);
  EXPECT_EQ(h->minor_version, kFormatMinorVersion);
  EXPECT_EQ(h->metadata_offset, 64u);
  EXPECT_EQ(bytes->substr(h->metadata_offset + 4, 4), "DVMX") << "file identifier";
  EXPECT_EQ(h->weights_offset % 64, 0u);
  EXPECT_GE(h->weights_offset, h->metadata_offset + h->metadata_size);
  EXPECT_EQ(h->weights_offset + h->weights_size, bytes->size());
  EXPECT_EQ(bytes->substr(48, 16), std::string(16, '\0')) << "reserved bytes are zero";
  AlignedBytes aligned(*bytes);
  absl::StatusOr<vm::ExecutableSpec> back = Parse(aligned);
  ASSERT_TRUE(back.ok());
  for (const Value& c : back->constants) {
    if (const auto* t = c.As<NDArrayObj>()) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
    }
  }
}

TEST(ExecutableFileTest, LoadedConstantsViewTheFileMapping) {
  const std::string path = TempPath("views.fbs");
  const vm::ExecutableSpec spec = TestSpec();
  ASSERT_TRUE(SaveExecutable(spec, path).ok());
  EXPECT_EQ(ReadFile(path), *SerializeExecutable(spec)) << "save writes what serialize returns";
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = LoadExecutable(path, TestRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  ExpectSpecsEqual(spec, (*exe)->spec());
  EXPECT_NE((*exe)->spec().backing.As<OpaqueObj>(), nullptr) << "the mapping's owner";
  int tensors = 0;
  for (const Value& c : (*exe)->spec().constants) {
    const auto* t = c.As<NDArrayObj>();
    if (t == nullptr || t->nbytes() == 0) continue;
    EXPECT_TRUE(InFileMapping(t->data(), path)) << "constants are views, not copies";
    ++tensors;
  }
  EXPECT_EQ(tensors, 11);
  EXPECT_EQ((*exe)->FunctionIndex("scalars"), 3u);
  EXPECT_EQ((*exe)->kernel(0).name(), "test.attrs");
  std::remove(path.c_str());
}

TEST(ExecutableFileTest, ConstantsKeepTheMappingAlive) {
  const std::string path = TempPath("alive.fbs");
  const vm::ExecutableSpec spec = TestSpec();
  ASSERT_TRUE(SaveExecutable(spec, path).ok());
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe = LoadExecutable(path, TestRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  NDArray weights = (*exe)->constant(8).AsRef<NDArrayObj>();
  exe->reset();
  std::remove(path.c_str());  // unlinking does not unmap either
  ExpectConstantsEqual(spec.constants[8], Value(weights), 8);
}

TEST(ExecutableFileTest, LoadsFromMemoryWithOneCopy) {
  const vm::ExecutableSpec spec = TestSpec();
  absl::StatusOr<std::string> bytes = SerializeExecutable(spec);
  ASSERT_TRUE(bytes.ok());
  // An odd address: the loader copies to an aligned buffer, so this is fine.
  AlignedBytes odd(*bytes, /*shift=*/3);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      LoadExecutableFromMemory(odd.span(), TestRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  ExpectSpecsEqual(spec, (*exe)->spec());
  const auto* t = (*exe)->constant(0).As<NDArrayObj>();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
  const auto* p = static_cast<const uint8_t*>(t->data());
  EXPECT_FALSE(p >= odd.span().data() && p < odd.span().data() + odd.span().size());
}

TEST(ExecutableFileTest, ParseRefusesUnalignedBytes) {
  absl::StatusOr<std::string> bytes = SerializeExecutable(TestSpec());
  AlignedBytes odd(*bytes, /*shift=*/4);
  absl::StatusOr<vm::ExecutableSpec> spec = Parse(odd);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr("LoadExecutableFromMemory"));
}

// Patches the header of a serialized TestSpec() and returns what parsing says.
absl::Status ParsePatched(const std::function<void(internal::FileHeader&)>& patch) {
  std::string bytes = *SerializeExecutable(TestSpec());
  internal::FileHeader h = *internal::DecodeFileHeader(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, 1);
  patch(h);
  const std::array<uint8_t, 64> header = internal::EncodeFileHeader(h);
  std::memcpy(bytes.data(), header.data(), header.size());
  AlignedBytes aligned(bytes);
  return Parse(aligned).status();
}

TEST(ExecutableFileTest, RefusesAnotherMajorVersionAndAcceptsNewerMinor) {
  absl::Status major = ParsePatched([](internal::FileHeader& h) {
    h.major_version = 2;
    h.minor_version = 3;
  });
  EXPECT_EQ(major.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(major.message(), "executable format version 2.3, this runtime reads 1.x");
  EXPECT_TRUE(ParsePatched([](internal::FileHeader& h) { h.minor_version = 9; }).ok());
}

TEST(ExecutableFileTest, RefusesBadMagic) {
  std::string bytes = *SerializeExecutable(TestSpec());
  bytes[0] = 'P';
  bytes[1] = 'K';
  AlignedBytes aligned(bytes);
  absl::Status status = Parse(aligned).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not a dynvm executable"));
  AlignedBytes tiny("DYNVMEXE");
  EXPECT_THAT(Parse(tiny).status().message(), HasSubstr("file is 8 bytes, smaller than"));
  EXPECT_FALSE(ParseExecutable({}, nullptr).ok());
}

TEST(ExecutableFileTest, RefusesSectionsOutsideTheFile) {
  using H = internal::FileHeader;
  const std::pair<std::function<void(H&)>, std::string_view> cases[] = {
      {[](H& h) { h.metadata_offset = 8; }, "metadata section"},
      {[](H& h) { h.metadata_offset += 4; }, "metadata section"},
      {[](H& h) { h.metadata_size = UINT64_MAX - 8; }, "metadata section"},
      {[](H& h) { h.metadata_offset = UINT64_MAX - 7; }, "metadata section"},
      {[](H& h) { h.metadata_size -= 8; }, "FlatBuffers verification"},
      {[](H& h) { h.weights_offset += 8; }, "weights section offset"},
      {[](H& h) { h.weights_offset -= 64; }, "weights section offset"},
      {[](H& h) { h.weights_size += 64; }, "file is truncated"},
      {[](H& h) { h.weights_size = UINT64_MAX; }, "file is truncated"},
      {[](H& h) { h.weights_offset = UINT64_MAX - 63; }, "file is truncated"},
  };
  for (const auto& [patch, message] : cases) {
    absl::Status status = ParsePatched(patch);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(status.message(), HasSubstr(message));
  }
}

TEST(ExecutableFileTest, EveryTruncationIsAnError) {
  const std::string bytes = *SerializeExecutable(TestSpec());
  for (size_t n = 0; n < bytes.size(); ++n) {
    AlignedBytes prefix(std::string_view(bytes).substr(0, n));
    EXPECT_FALSE(Parse(prefix).ok()) << "prefix of " << n << " bytes";
  }
}

TEST(ExecutableFileTest, LoadErrorsNameTheFile) {
  absl::StatusOr<std::shared_ptr<const vm::Executable>> missing =
      LoadExecutable("/nonexistent/exe.fbs", TestRegistry());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/exe.fbs"));
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file or directory"));

  EXPECT_THAT(LoadExecutable(::testing::TempDir(), TestRegistry()).status().message(),
              HasSubstr("is not a regular file"));

  const std::string path = TempPath("truncated.fbs");
  std::string bytes = *SerializeExecutable(TestSpec());
  bytes.resize(bytes.size() - 1);
  std::ofstream(path, std::ios::binary) << bytes;
  absl::Status truncated = LoadExecutable(path, TestRegistry()).status();
  EXPECT_THAT(std::string(truncated.message()), StartsWith(path + ": "));
  EXPECT_THAT(truncated.message(), HasSubstr("truncated"));

  std::ofstream(path, std::ios::binary | std::ios::trunc).close();
  EXPECT_THAT(LoadExecutable(path, TestRegistry()).status().message(),
              HasSubstr("file is 0 bytes"));
  std::remove(path.c_str());
}

TEST(ExecutableFileTest, LoadRunsTheBytecodeVerifierAndBindsKernels) {
  const std::string path = TempPath("verify.fbs");
  vm::ExecutableSpec bad = TestSpec();
  bad.functions[1].code = Code({{vm::Opcode::kRet, {7}, {}}});  // frame has 1 register
  ASSERT_TRUE(SaveExecutable(bad, path).ok());
  absl::Status status = LoadExecutable(path, TestRegistry()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith(path + ": "));
  EXPECT_THAT(status.message(), HasSubstr("function 'helper'"));

  absl::Status unbound = LoadExecutable(path, kernels::DefaultRegistry()).status();
  EXPECT_FALSE(unbound.ok());

  ASSERT_TRUE(SaveExecutable(TestSpec(), path).ok());
  absl::Status no_kernel = LoadExecutable(path, kernels::DefaultRegistry()).status();
  EXPECT_EQ(no_kernel.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(no_kernel.message(), HasSubstr("test.attrs"));
  std::remove(path.c_str());
}

TEST(ExecutableFileTest, LoadRefusesTuplesNestedTooDeep) {
  vm::ExecutableSpec spec = TestSpec();
  vm::ValueSpec deep = Scalar("", vm::ValueSpec::Kind::kInt);
  for (int i = 0; i < vm::kMaxSpecDepth + 2; ++i) {
    vm::ValueSpec outer = Scalar("", vm::ValueSpec::Kind::kTuple);
    outer.fields = {std::move(deep)};
    deep = std::move(outer);
  }
  spec.functions.back().results = {deep};
  absl::StatusOr<std::string> bytes = SerializeExecutable(spec);
  ASSERT_TRUE(bytes.ok()) << bytes.status();  // the writer does not verify
  const absl::Span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes->data()), bytes->size());
  absl::Status status = LoadExecutableFromMemory(view, TestRegistry()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tuples nested deeper than the maximum 8"));
}

TEST(ExecutableFileTest, SerializeRefusesConstantsTheFormatCannotHold) {
  vm::ExecutableSpec spec;
  spec.constants.push_back(ADTObj::Tuple({}));
  absl::StatusOr<std::string> bytes = SerializeExecutable(spec);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bytes.status().message(), HasSubstr("constant 0 is a"));
  spec.constants[0] = Value();
  EXPECT_FALSE(SerializeExecutable(spec).ok());
}

TEST(ExecutableFileTest, SaveErrorsNameTheFile) {
  absl::Status status = SaveExecutable(TestSpec(), "/nonexistent/dir/exe.fbs");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("/nonexistent/dir/exe.fbs"));
}

TEST(ExecutableFileTest, EmptySpecRoundTrips) {
  vm::ExecutableSpec spec;
  spec.producer = "";
  absl::StatusOr<std::string> bytes = SerializeExecutable(spec);
  ASSERT_TRUE(bytes.ok());
  AlignedBytes aligned(*bytes);
  absl::StatusOr<vm::ExecutableSpec> back = Parse(aligned);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSpecsEqual(spec, *back);
}

}  // namespace
}  // namespace dynvm::serializer
