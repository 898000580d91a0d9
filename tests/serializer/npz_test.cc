// Tests of the .npz reader (serializer/npz.h) against archives numpy wrote
// (testdata/make_npz.py: np.savez, np.savez_compressed, an empty one), and against
// every truncation and corruption of them: each is an error naming what was wrong or
// reads the same arrays, never a crash (this binary runs under ASan and UBSan).
#include "serializer/npz.h"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"

namespace dynvm::serializer {
namespace {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(DYNVM_NPY_TESTDATA) + "/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::StatusOr<std::vector<NpzEntry>> Parse(const std::string& bytes) {
  return ParseNpz(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()),
                  MakeNaiveAllocator());
}

// What make_npz.py saved: w (float64 2.5) first, as numpy writes keywords first, then
// arr_0 (float32 [2, 3] 0..5), arr_1 (int64 10..13), arr_2 (bool True, False).
void ExpectFixtureArrays(const std::vector<NpzEntry>& arrays) {
  ASSERT_EQ(arrays.size(), 4u);
  EXPECT_EQ(arrays[0].name, "w");
  EXPECT_EQ(arrays[0].array->dtype(), DType::kF64);
  EXPECT_EQ(arrays[0].array->ndim(), 0);
  EXPECT_EQ(*arrays[0].array->data_as<double>(), 2.5);
  EXPECT_EQ(arrays[1].name, "arr_0");
  EXPECT_EQ(arrays[1].array->shape(), (Shape{2, 3}));
  const float* a = arrays[1].array->data_as<float>();
  EXPECT_EQ(std::vector<float>(a, a + 6), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(arrays[2].name, "arr_1");
  const int64_t* b = arrays[2].array->data_as<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(b, b + 4), (std::vector<int64_t>{10, 11, 12, 13}));
  EXPECT_EQ(arrays[3].name, "arr_2");
  EXPECT_EQ(arrays[3].array->dtype(), DType::kBool);
  EXPECT_EQ(arrays[3].array->data_as<uint8_t>()[0], 1);
  EXPECT_EQ(arrays[3].array->data_as<uint8_t>()[1], 0);
}

TEST(NpzTest, ReadsStoredAndDeflatedArchives) {
  for (const char* name : {"stored.npz", "deflated.npz"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<std::vector<NpzEntry>> arrays = ReadNpzFile(std::string(DYNVM_NPY_TESTDATA) + "/" + name,
                                                               MakeNaiveAllocator());
    ASSERT_TRUE(arrays.ok()) << arrays.status();
    ExpectFixtureArrays(*arrays);
  }
  absl::StatusOr<std::vector<NpzEntry>> none = Parse(Fixture("empty.npz"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(NpzTest, ErrorsSayWhatWasWrong) {
  EXPECT_THAT(std::string(Parse("hello").status().message()), HasSubstr("shorter than a zip's end record"));
  EXPECT_THAT(std::string(Parse(std::string(100, 'x')).status().message()),
              HasSubstr("no end of central directory record (not a zip archive)"));
  const std::string missing = "/nonexistent/w.npz";
  EXPECT_THAT(std::string(ReadNpzFile(missing, MakeNaiveAllocator()).status().message()), HasSubstr(missing));
  // A flipped byte in arr_0's data (stored: the bytes are the .npy's): its CRC fails.
  std::string stored = Fixture("stored.npz");
  const size_t data = stored.find("\x93NUMPY", stored.find("arr_0.npy"));
  ASSERT_NE(data, std::string::npos);
  stored[data + 140] ^= 0x40;
  EXPECT_THAT(std::string(Parse(stored).status().message()), HasSubstr("'arr_0.npy': CRC-32"));
  // An unknown compression method (the central directory's field of the first entry).
  std::string method = Fixture("stored.npz");
  const size_t central = method.find("PK\x01\x02");
  ASSERT_NE(central, std::string::npos);
  method[central + 10] = 12;  // bzip2
  EXPECT_THAT(std::string(Parse(method).status().message()),
              HasSubstr("'w.npy': compression method 12 (numpy writes 0, stored, or 8, deflate)"));
  // A member that is not .npy.
  std::string renamed = Fixture("stored.npz");
  const size_t name = renamed.find("w.npy", central);
  renamed.replace(name, 5, "w.txt");
  EXPECT_THAT(std::string(Parse(renamed).status().message()), HasSubstr("member 'w.txt' is not a .npy file"));
  // A deflated member whose declared size is larger than what it inflates to.
  std::string deflated = Fixture("deflated.npz");
  const size_t entry = deflated.find("PK\x01\x02");
  deflated[entry + 24] = static_cast<char>(deflated[entry + 24] + 1);
  EXPECT_THAT(std::string(Parse(deflated).status().message()), HasSubstr("does not inflate to its"));
  // A stored member claiming more bytes than it has: refused before any allocation (the
  // fuzzer's find: it once allocated the claim first).
  std::string stored_claim = Fixture("stored.npz");
  const size_t stored_entry = stored_claim.find("PK\x01\x02");
  const uint32_t claim = 1946157216u;
  std::memcpy(stored_claim.data() + stored_entry + 24, &claim, 4);
  EXPECT_THAT(std::string(Parse(stored_claim).status().message()),
              HasSubstr("'w.npy': stored sizes disagree (136 and 1946157216 bytes)"));
  // More than deflate can expand its bytes to: refused before any allocation.
  std::string huge = Fixture("deflated.npz");
  const uint32_t big = 0xFFFFFFF0u;
  std::memcpy(huge.data() + entry + 24, &big, 4);
  EXPECT_THAT(std::string(Parse(huge).status().message()),
              HasSubstr("'w.npy' claims 4294967280 bytes from 71 deflated ones, more than deflate expands to"));
}

// Every truncation and many random corruptions of both archives: an error or the same
// arrays, never a crash.
TEST(NpzTest, TruncationsAndCorruptionsFailCleanly) {
  for (const char* name : {"stored.npz", "deflated.npz"}) {
    const std::string bytes = Fixture(name);
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(Parse(bytes.substr(0, n)).ok()) << name << " cut at " << n;
    }
    std::mt19937 rng(7);
    for (int i = 0; i < 500; ++i) {
      std::string corrupt = bytes;
      for (int k = 0; k < 1 + i % 4; ++k) corrupt[rng() % corrupt.size()] = static_cast<char>(rng());
      (void)Parse(corrupt);
    }
  }
}

}  // namespace
}  // namespace dynvm::serializer
