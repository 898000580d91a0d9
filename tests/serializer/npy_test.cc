// Tests of serializer/npy.h: round trips for every dtype and shape kind, files written
// by numpy (testdata/, see make_npy_fixtures.py), byte-for-byte agreement with numpy's
// writer, header parsing, and every refusal.
#include "serializer/npy.h"

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/string_tensor.h"

namespace dynvm::serializer {
namespace {

using ::testing::HasSubstr;

std::string Fixture(std::string_view name) {
  return std::string(DYNVM_NPY_TESTDATA) + "/" + std::string(name);
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A file name in the test's temporary directory, unique to this process.
std::string TempPath(std::string_view name) {
  return ::testing::TempDir() + "/npy_test_" + std::to_string(getpid()) + "_" +
         std::string(name);
}

absl::Span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::shared_ptr<Allocator> Alloc() {
  static auto* allocator = new std::shared_ptr<Allocator>(MakeNaiveAllocator());
  return *allocator;
}

// A tensor whose byte i is (i * 37 + 11) % 256 — every bit pattern the dtype allows,
// normalised to 0/1 for bool.
NDArray Patterned(DType dtype, absl::Span<const int64_t> shape) {
  NDArray a = *NDArrayObj::Empty(shape, dtype, Alloc());
  auto* p = static_cast<uint8_t*>(a->data());
  for (size_t i = 0; i < a->nbytes(); ++i) {
    p[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
    if (dtype == DType::kBool) p[i] &= 1;
  }
  return a;
}

// A version 1.0 file with header dict `dict` (padded as numpy pads) and `data`.
std::string MakeNpy(std::string_view dict, std::string_view data) {
  std::string header(dict);
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + std::string(data);
}

template <typename T>
std::vector<T> Elements(const NDArray& a) {
  const T* p = a->data_as<const T>();
  return std::vector<T>(p, p + a->num_elements());
}

constexpr DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                DType::kI8,  DType::kI16, DType::kI32, DType::kI64,
                                DType::kU8,  DType::kU16, DType::kU32, DType::kU64,
                                DType::kBool};

TEST(NpyTest, RoundTripsEveryDTypeAndShapeKind) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3}, {0, 3}, {1, 2, 1, 3}};
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kBF16) continue;  // widened on write: BFloat16WidensToFloat32
    for (const auto& shape : shapes) {
      SCOPED_TRACE(std::string(DTypeName(dtype)) + " " + ShapeToString(shape));
      NDArray a = Patterned(dtype, shape);
      const std::string bytes = *SerializeNpy(a);
      EXPECT_EQ(bytes.size() % 64, a->nbytes() % 64) << "data starts 64-byte aligned";
      absl::StatusOr<NDArray> b = ParseNpy(AsBytes(bytes), Alloc());
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ((*b)->dtype(), dtype);
      EXPECT_EQ((*b)->shape(), a->shape());
      ASSERT_EQ((*b)->nbytes(), a->nbytes());
      EXPECT_EQ(std::memcmp((*b)->data(), a->data(), a->nbytes()), 0);
    }
  }
}

// bf16 has no numpy dtype. SerializeNpy widens it to '<f4', which is exact, so numpy
// users get the real values and reading the file back yields f32.
TEST(NpyTest, BFloat16WidensToFloat32) {
  NDArray a = *NDArrayObj::Empty({3}, DType::kBF16, Alloc());
  const uint16_t bits[] = {0x3fc0 /*1.5*/, 0xc080 /*-4*/, 0x7f80 /*inf*/};
  std::memcpy(a->data(), bits, sizeof(bits));
  const std::string bytes = *SerializeNpy(a);
  EXPECT_THAT(bytes, HasSubstr("'descr': '<f4'"));
  absl::StatusOr<NDArray> b = ParseNpy(AsBytes(bytes), Alloc());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->dtype(), DType::kF32);
  EXPECT_EQ(Elements<float>(*b), (std::vector<float>{1.5f, -4.0f, INFINITY}));
}

TEST(NpyTest, ReadsNumpyFilesOfEveryDType) {
  const std::vector<float> floats = {-1, -0.5, 0, 0.5, 1, 1.5};
  auto read = [](std::string_view name, DType dtype) {
    absl::StatusOr<NDArray> a = ReadNpyFile(Fixture(name), Alloc());
    EXPECT_TRUE(a.ok()) << name << ": " << a.status();
    if (!a.ok()) return NDArray();
    EXPECT_EQ((*a)->dtype(), dtype) << name;
    EXPECT_EQ((*a)->shape(), (Shape{2, 3})) << name;
    return *a;
  };
  EXPECT_EQ(Elements<float>(read("f4_2x3.npy", DType::kF32)), floats);
  EXPECT_EQ(Elements<double>(read("f8_2x3.npy", DType::kF64)),
            (std::vector<double>(floats.begin(), floats.end())));
  // IEEE half: -1, -0.5, 0, 0.5, 1, 1.5.
  EXPECT_EQ(Elements<uint16_t>(read("f2_2x3.npy", DType::kF16)),
            (std::vector<uint16_t>{0xbc00, 0xb800, 0x0000, 0x3800, 0x3c00, 0x3e00}));
  EXPECT_EQ(Elements<int8_t>(read("i1_2x3.npy", DType::kI8)),
            (std::vector<int8_t>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(Elements<int16_t>(read("i2_2x3.npy", DType::kI16)),
            (std::vector<int16_t>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(Elements<int32_t>(read("i4_2x3.npy", DType::kI32)),
            (std::vector<int32_t>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(Elements<int64_t>(read("i8_2x3.npy", DType::kI64)),
            (std::vector<int64_t>{-2, -1, 0, 1, 2, 3}));
  EXPECT_EQ(Elements<uint8_t>(read("u1_2x3.npy", DType::kU8)),
            (std::vector<uint8_t>{250, 251, 252, 253, 254, 255}));
  EXPECT_EQ(Elements<uint16_t>(read("u2_2x3.npy", DType::kU16)),
            (std::vector<uint16_t>{65530, 65531, 65532, 65533, 65534, 65535}));
  EXPECT_EQ(Elements<uint32_t>(read("u4_2x3.npy", DType::kU32)),
            (std::vector<uint32_t>{4294967290u, 4294967291u, 4294967292u, 4294967293u,
                                   4294967294u, 4294967295u}));
  EXPECT_EQ(Elements<uint64_t>(read("u8_2x3.npy", DType::kU64)),
            (std::vector<uint64_t>{18446744073709551610u, 18446744073709551611u,
                                   18446744073709551612u, 18446744073709551613u,
                                   18446744073709551614u, 18446744073709551615u}));
  EXPECT_EQ(Elements<uint8_t>(read("b1_2x3.npy", DType::kBool)),
            (std::vector<uint8_t>{1, 0, 0, 1, 0, 0}));
}

TEST(NpyTest, ReadsNumpyShapes) {
  absl::StatusOr<NDArray> scalar = ReadNpyFile(Fixture("f4_scalar.npy"), Alloc());
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ((*scalar)->ndim(), 0);
  EXPECT_EQ(Elements<float>(*scalar), std::vector<float>{3.5f});

  absl::StatusOr<NDArray> vec = ReadNpyFile(Fixture("i8_1d.npy"), Alloc());
  ASSERT_TRUE(vec.ok()) << vec.status();
  EXPECT_EQ((*vec)->shape(), Shape{5});
  EXPECT_EQ(Elements<int64_t>(*vec), (std::vector<int64_t>{0, 1, 2, 3, 4}));

  absl::StatusOr<NDArray> empty = ReadNpyFile(Fixture("f4_0x3.npy"), Alloc());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)->shape(), (Shape{0, 3}));
  EXPECT_EQ((*empty)->num_elements(), 0);

  absl::StatusOr<NDArray> rank4 = ReadNpyFile(Fixture("i4_rank4.npy"), Alloc());
  ASSERT_TRUE(rank4.ok()) << rank4.status();
  EXPECT_EQ((*rank4)->shape(), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(Elements<int32_t>(*rank4)[23], 23);
}

// What we write is exactly what numpy writes, so numpy reads it (and `cmp` agrees).
TEST(NpyTest, WritesTheSameBytesAsNumpy) {
  for (std::string_view name :
       {"f2_2x3.npy", "f4_2x3.npy", "f8_2x3.npy", "i1_2x3.npy", "i2_2x3.npy", "i4_2x3.npy",
        "i8_2x3.npy", "u1_2x3.npy", "b1_2x3.npy", "f4_scalar.npy", "i8_1d.npy", "f4_0x3.npy",
        "i4_rank4.npy"}) {
    SCOPED_TRACE(name);
    const std::string numpy_bytes = ReadBytes(Fixture(name));
    absl::StatusOr<NDArray> a = ParseNpy(AsBytes(numpy_bytes), Alloc());
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(*SerializeNpy(*a), numpy_bytes);
  }
}

TEST(NpyTest, ByteSwapsBigEndianFiles) {
  absl::StatusOr<NDArray> i4 = ReadNpyFile(Fixture("be_i4_2x3.npy"), Alloc());
  ASSERT_TRUE(i4.ok()) << i4.status();
  EXPECT_EQ(Elements<int32_t>(*i4), (std::vector<int32_t>{-2, -1, 0, 1, 2, 3}));
  absl::StatusOr<NDArray> f8 = ReadNpyFile(Fixture("be_f8_2x3.npy"), Alloc());
  ASSERT_TRUE(f8.ok()) << f8.status();
  EXPECT_EQ(Elements<double>(*f8), (std::vector<double>{-1, -0.5, 0, 0.5, 1, 1.5}));
  absl::StatusOr<NDArray> f2 = ReadNpyFile(Fixture("be_f2_2x3.npy"), Alloc());
  ASSERT_TRUE(f2.ok()) << f2.status();
  EXPECT_EQ(Elements<uint16_t>(*f2),
            (std::vector<uint16_t>{0xbc00, 0xb800, 0x0000, 0x3800, 0x3c00, 0x3e00}));
}

TEST(NpyTest, ReadsHeaderVersions2And3) {
  for (std::string_view name : {"f4_2x3_v2.npy", "f4_2x3_v3.npy"}) {
    absl::StatusOr<NDArray> a = ReadNpyFile(Fixture(name), Alloc());
    ASSERT_TRUE(a.ok()) << name << ": " << a.status();
    EXPECT_EQ(Elements<float>(*a), (std::vector<float>{-1, -0.5, 0, 0.5, 1, 1.5}));
  }
}

TEST(NpyTest, RefusesFortranOrder) {
  absl::StatusOr<NDArray> a = ReadNpyFile(Fixture("fortran_2x3.npy"), Alloc());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(),
              HasSubstr("fortran-order .npy is not supported: save with np.ascontiguousarray"));
  // Rank 1: Fortran and C order are the same bytes.
  const std::string vec = MakeNpy("{'descr': '<i2', 'fortran_order': True, 'shape': (2,), }",
                                  std::string("\x01\x00\x02\x00", 4));
  absl::StatusOr<NDArray> b = ParseNpy(AsBytes(vec), Alloc());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Elements<int16_t>(*b), (std::vector<int16_t>{1, 2}));
}

// numpy's fixed-width strings: the same six texts as UTF-32 ('<U'), big-endian UTF-32
// cut to one code point ('>U1' widened to '>U2'), and UTF-8 bytes ('|S').
std::vector<std::string> Strings(const NDArray& a) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < a->num_elements(); ++i) {
    out.emplace_back(StringElement(*a, i).value_or("<invalid>"));
  }
  return out;
}

TEST(NpyTest, ReadsNumpyStrings) {
  const std::vector<std::string> texts = {"", "a", "bc", "d\xc3\xa9", "\xe2\x82\xac",
                                          "\xf0\x9f\x98\x80"};
  for (const char* name : {"U_2x3.npy", "S_2x3.npy"}) {
    absl::StatusOr<NDArray> a = ReadNpyFile(Fixture(name), Alloc());
    ASSERT_TRUE(a.ok()) << name << ": " << a.status();
    EXPECT_EQ((*a)->dtype(), DType::kString);
    EXPECT_EQ((*a)->shape(), (Shape{2, 3}));
    EXPECT_EQ(Strings(*a), texts) << name;
  }
  absl::StatusOr<NDArray> be = ReadNpyFile(Fixture("be_U_2x3.npy"), Alloc());
  ASSERT_TRUE(be.ok()) << be.status();
  EXPECT_EQ(Strings(*be), (std::vector<std::string>{"", "a", "b", "d", "\xe2\x82\xac",
                                                    "\xf0\x9f\x98\x80"}));
}

TEST(NpyTest, StringTensorsRoundTrip) {
  // UTF-8 text is written as '<U' (numpy reads str); other bytes as '|S'.
  const std::vector<std::vector<std::string>> cases = {
      {"", "a", "bc", "d\xc3\xa9"}, {"ok", "\xff\xfe", std::string("n\0ul", 4), ""}};
  for (const std::vector<std::string>& texts : cases) {
    NDArray a = *MakeStringTensor({2, 2}, texts, Alloc());
    const std::string bytes = *SerializeNpy(a);
    EXPECT_THAT(bytes, HasSubstr(&texts == &cases[0] ? "'descr': '<U2'" : "'descr': '|S4'"));
    absl::StatusOr<NDArray> b = ParseNpy(AsBytes(bytes), Alloc());
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ((*b)->dtype(), DType::kString);
    EXPECT_EQ(Strings(*b), texts);
  }
}

TEST(NpyTest, StringTensorsItCannotWriteAreErrors) {
  // An element its storage does not hold (bytes written as another type's).
  NDArray forged = *NDArrayObj::Empty({1}, DType::kString, Alloc());
  const uintptr_t junk = 0x1230;
  std::memcpy(forged->data(), &junk, sizeof(junk));
  absl::StatusOr<std::string> a = SerializeNpy(forged);
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  // One element wider than a reader takes (2^20 code points).
  const std::vector<std::string> texts = {std::string((size_t{1} << 20) + 1, 'x'), "y"};
  absl::StatusOr<std::string> b = SerializeNpy(*MakeStringTensor({2}, texts, Alloc()));
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(b.status().message(), HasSubstr("the longest 1048577 code points"));
}

TEST(NpyTest, RefusesBadStrings) {
  // A UTF-32 value that is no Unicode scalar value, and widths past the limit or zero.
  const std::string surrogate("\x00\xd8\x00\x00", 4);
  absl::StatusOr<NDArray> a =
      ParseNpy(AsBytes(MakeNpy("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", surrogate)),
               Alloc());
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), HasSubstr("0xd800, which is not a Unicode scalar value"));
  for (const char* descr : {"<U0", "|S0", "<U1048577", "|S99999999999999999999"}) {
    absl::StatusOr<NDArray> b = ParseNpy(
        AsBytes(MakeNpy(absl::StrFormat("{'descr': '%s', 'fortran_order': False, 'shape': (1,), }", descr),
                        "")),
        Alloc());
    ASSERT_FALSE(b.ok()) << descr;
    EXPECT_THAT(b.status().message(), HasSubstr("unsupported .npy dtype")) << descr;
  }
}

TEST(NpyTest, RefusesUnsupportedDTypesNamingThem) {
  absl::StatusOr<NDArray> c8 = ReadNpyFile(Fixture("c8_2x3.npy"), Alloc());
  EXPECT_EQ(c8.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c8.status().message(), HasSubstr("unsupported .npy dtype '<c8'"));
  EXPECT_THAT(c8.status().message(), HasSubstr("c8_2x3.npy"));
  absl::StatusOr<NDArray> s = ReadNpyFile(Fixture("structured.npy"), Alloc());
  EXPECT_THAT(s.status().message(), HasSubstr("structured"));
}

TEST(NpyTest, ReportsTruncatedDataWithExpectedAndActualBytes) {
  std::string bytes = ReadBytes(Fixture("f4_2x3.npy"));
  bytes.resize(bytes.size() - 4);
  absl::StatusOr<NDArray> a = ParseNpy(AsBytes(bytes), Alloc());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(a.status().message(), HasSubstr("truncated .npy data: f32 [2, 3] needs 24 bytes, "
                                              "the file has 20"));
}

TEST(NpyTest, EveryTruncationIsAnError) {
  const std::string bytes = ReadBytes(Fixture("i4_rank4.npy"));
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(ParseNpy(AsBytes(std::string_view(bytes).substr(0, n)), Alloc()).ok()) << n;
  }
}

TEST(NpyTest, RefusesBadMagicAndVersion) {
  EXPECT_THAT(ParseNpy(AsBytes("PK\x03\x04 not npy"), Alloc()).status().message(),
              HasSubstr("not a .npy file"));
  std::string v4 = ReadBytes(Fixture("f4_2x3.npy"));
  v4[6] = 4;
  EXPECT_THAT(ParseNpy(AsBytes(v4), Alloc()).status().message(),
              HasSubstr("unsupported .npy version 4.0"));
}

TEST(NpyTest, ParsesHeaderVariants) {
  const std::string data("\x01\x02\x03\x04\x05\x06", 6);
  for (std::string_view dict : {
           "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }",
           "{'shape': (2, 3), 'fortran_order': False, 'descr': '|u1'}",
           "{ \"descr\" : \"u1\" , 'fortran_order':False,'shape':(2,3,)}",
           "{'descr': '=u1', 'fortran_order': False, 'shape': (2L, 3L), }",
           "{'descr': '>u1', 'fortran_order': False, 'shape': (6,)}",
           "{'descr': '|u1', 'fortran_order': False, 'shape': (6)}",
       }) {
    SCOPED_TRACE(dict);
    absl::StatusOr<NDArray> a = ParseNpy(AsBytes(MakeNpy(dict, data)), Alloc());
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ((*a)->dtype(), DType::kU8);
    EXPECT_EQ((*a)->num_elements(), 6);
    EXPECT_EQ(Elements<uint8_t>(*a), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  }
}

TEST(NpyTest, RefusesMalformedHeaders) {
  const std::string data(64, '\0');
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", "negative dimension"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
       "overflows int64"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
       "overflows"},
      {"{'descr': '<f4', 'fortran_order': False, }", "are required"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", "duplicate"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}", "unexpected key"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': ()}", "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "must be a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ','"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': ()}", "expected ':'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': ()}", "expected ',' or '}'"},
      {"['descr', '<f4']", "expected '{'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} trailing", "after the closing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
       "rank above the maximum 16"},
      {"{'descr': 'i", "unterminated string"},
  };
  for (const auto& [dict, message] : cases) {
    SCOPED_TRACE(dict);
    absl::StatusOr<NDArray> a = ParseNpy(AsBytes(MakeNpy(dict, data)), Alloc());
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(a.status().message(), HasSubstr(message));
  }
}

TEST(NpyTest, NormalisesBoolBytes) {
  const std::string file = MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                   std::string("\x00\x02\xff", 3));
  absl::StatusOr<NDArray> a = ParseNpy(AsBytes(file), Alloc());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(Elements<uint8_t>(*a), (std::vector<uint8_t>{0, 1, 1}));
}

TEST(NpyTest, HeadersAreAlignedForEveryRank) {
  for (int rank = 0; rank <= kMaxRank; ++rank) {
    NDArray a = *NDArrayObj::Empty(std::vector<int64_t>(rank, 1), DType::kI8, Alloc());
    const std::string bytes = *SerializeNpy(a);
    EXPECT_EQ((bytes.size() - a->nbytes()) % 64, 0) << rank;
    EXPECT_EQ(bytes[6], 1) << "version 1.0";
  }
}

TEST(NpyTest, WritesAndReadsFiles) {
  const std::string path = TempPath("out.npy");
  NDArray a = Patterned(DType::kI32, {4, 5});
  ASSERT_TRUE(WriteNpyFile(path, a).ok());
  absl::StatusOr<NDArray> b = ReadNpyFile(path, Alloc());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(std::memcmp((*b)->data(), a->data(), a->nbytes()), 0);
  EXPECT_EQ(ReadBytes(path), *SerializeNpy(a));
  std::remove(path.c_str());
}

TEST(NpyTest, FileErrorsNameThePath) {
  absl::StatusOr<NDArray> missing = ReadNpyFile("/nonexistent/x.npy", Alloc());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/x.npy"));
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file or directory"));
  absl::Status write = WriteNpyFile("/nonexistent/y.npy", Patterned(DType::kF32, {1}));
  EXPECT_THAT(write.message(), HasSubstr("/nonexistent/y.npy"));
  const std::string empty = TempPath("empty.npy");
  std::ofstream(empty).close();
  EXPECT_THAT(ReadNpyFile(empty, Alloc()).status().message(), HasSubstr("not a .npy file"));
  std::remove(empty.c_str());
}

}  // namespace
}  // namespace dynvm::serializer
