// Tests of the elementwise binary kernels (kernels/elementwise/binary.cc) against a scalar reference
// written here, on random and hand-picked broadcast shapes: arithmetic, power, mod,
// comparisons over every dtype, logical operations and where; of numpy broadcasting and
// its loop driver (kernels/elementwise/broadcast.h); of the kernel wrappers' errors; and of
// KernelRegistry (kernels/kernel.h).
//
// Tolerances: one IEEE operation is correctly rounded, so a float result may differ from
// the reference computed in a wider type only by the final rounding, at most half an
// ulp of the result type. We allow one ulp relative (|got - ref| <= eps * |ref|, plus
// the smallest normal for results near zero); power, a library call, gets two. mod,
// floor_mod, comparisons, logical operations, where and integers are compared exactly.
#include "kernels/elementwise/binary.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/kernel.h"
#include "objects/allocator.h"
#include "objects/element_codec.h"
#include "objects/ndarray.h"
#include "tests/kernels/kernel_test_util.h"

namespace dynvm::kernels {
namespace {

using ::testing::HasSubstr;

const char* const kOps[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};

std::shared_ptr<Allocator> Alloc() {
  static auto* allocator = new std::shared_ptr<Allocator>(MakeNaiveAllocator());
  return *allocator;
}

template <typename T>
constexpr DType DTypeOf() {
  if constexpr (std::is_same_v<T, float>) return DType::kF32;
  if constexpr (std::is_same_v<T, double>) return DType::kF64;
  if constexpr (std::is_same_v<T, int32_t>) return DType::kI32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::kI64;
  if constexpr (std::is_same_v<T, int16_t>) return DType::kI16;
  if constexpr (std::is_same_v<T, int8_t>) return DType::kI8;
  if constexpr (std::is_same_v<T, uint8_t>) return DType::kU8;
  if constexpr (std::is_same_v<T, uint16_t>) return DType::kU16;
  if constexpr (std::is_same_v<T, uint32_t>) return DType::kU32;
  if constexpr (std::is_same_v<T, uint64_t>) return DType::kU64;
}

template <typename T>
NDArray MakeArray(const std::vector<int64_t>& shape, const std::vector<T>& values) {
  NDArray a = *NDArrayObj::Empty(shape, DTypeOf<T>(), Alloc());
  EXPECT_EQ(static_cast<size_t>(a->num_elements()), values.size());
  if (!values.empty()) std::memcpy(a->data(), values.data(), values.size() * sizeof(T));
  return a;
}

template <typename T>
std::vector<T> Elements(const NDArray& a) {
  const T* p = a->data_as<T>();
  return std::vector<T>(p, p + a->num_elements());
}

absl::Status RunKernel(std::string_view op, const NDArray& a, const NDArray& b, const NDArray& c) {
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(op, {}, 2, 1);
  if (!k.ok()) return k.status();
  NDArrayObj* args[] = {a.get(), b.get(), c.get()};
  return k->Call(args, ThreadPool::Default());
}

// ---------------------------------------------------------------------------------------
// The scalar reference: deliberately naive, one output element at a time.

// Integer semantics documented by binary.cc: add, subtract and multiply wrap (two's
// complement); divide truncates toward zero, x / 0 == 0 and MIN / -1 == MIN. The
// builtins compute the exact result and wrap it to T, whatever T's width.
template <typename T>
T RefInt(std::string_view op, T a, T b) {
  T r;
  if (op == "add") {
    __builtin_add_overflow(a, b, &r);
    return r;
  }
  if (op == "subtract") {
    __builtin_sub_overflow(a, b, &r);
    return r;
  }
  if (op == "multiply") {
    __builtin_mul_overflow(a, b, &r);
    return r;
  }
  if (op == "divide") {
    if (b == 0) return 0;
    if (std::is_signed_v<T> && b == static_cast<T>(-1)) {
      __builtin_sub_overflow(T{0}, a, &r);  // -MIN wraps to MIN
      return r;
    }
    return static_cast<T>(a / b);
  }
  if (op == "maximum") return a > b ? a : b;
  if (op == "minimum") return a < b ? a : b;
  ADD_FAILURE() << "unknown op " << op;
  return 0;
}

// Floats: the exact operation in long double, rounded once at the comparison.
long double RefFloat(std::string_view op, long double a, long double b) {
  if (op == "add") return a + b;
  if (op == "subtract") return a - b;
  if (op == "multiply") return a * b;
  if (op == "divide") return a / b;
  if (op == "maximum") return a > b ? a : b;
  if (op == "minimum") return a < b ? a : b;
  ADD_FAILURE() << "unknown op " << op;
  return 0;
}

// Row-major flat index into an operand of `shape` (right-aligned with the output) for
// the output multi-index `out_index`; size-1 axes repeat.
int64_t OperandIndex(const std::vector<int64_t>& shape, const std::vector<int64_t>& out_index) {
  const size_t lead = out_index.size() - shape.size();
  int64_t flat = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    flat = flat * shape[k] + (shape[k] == 1 ? 0 : out_index[lead + k]);
  }
  return flat;
}

template <typename T>
void ExpectMatchesReference(std::string_view op, const std::vector<int64_t>& a_shape,
                            const std::vector<T>& a, const std::vector<int64_t>& b_shape,
                            const std::vector<T>& b, const std::vector<int64_t>& out_shape,
                            const std::vector<T>& got) {
  int64_t count = 1;
  for (int64_t d : out_shape) count *= d;
  ASSERT_EQ(static_cast<int64_t>(got.size()), count);
  std::vector<int64_t> index(out_shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    const T x = a[OperandIndex(a_shape, index)];
    const T y = b[OperandIndex(b_shape, index)];
    if constexpr (std::is_integral_v<T>) {
      ASSERT_EQ(+got[i], +RefInt<T>(op, x, y)) << op << " element " << i << ": " << +x << ", " << +y;
    } else {
      const long double ref = RefFloat(op, x, y);
      const long double tol =
          std::numeric_limits<T>::epsilon() * std::fabs(ref) + std::numeric_limits<T>::min();
      ASSERT_LE(std::fabs(static_cast<long double>(got[i]) - ref), tol)
          << op << " element " << i << ": " << x << ", " << y << " -> " << got[i];
    }
    for (size_t k = out_shape.size(); k-- > 0;) {
      if (++index[k] < out_shape[k]) break;
      index[k] = 0;
    }
  }
}

template <typename T>
std::vector<T> RandomValues(std::mt19937& rng, int64_t n, bool divisor) {
  std::vector<T> v(n);
  if constexpr (std::is_integral_v<T>) {
    // Mostly small values (so that divide has non-trivial quotients), some from the
    // whole range (overflow wraps), and the edge values.
    // (Distributions over 64-bit types: 8-bit ones are not allowed.)
    using Wide = std::conditional_t<std::is_same_v<T, uint64_t>, uint64_t, int64_t>;
    const T edges[] = {0, 1, static_cast<T>(-1), std::numeric_limits<T>::min(),
                       std::numeric_limits<T>::max()};
    std::uniform_int_distribution<int64_t> small(std::is_signed_v<T> ? -50 : 0,
                                                 std::is_signed_v<T> ? 50 : 100);
    std::uniform_int_distribution<Wide> any(std::numeric_limits<T>::min(),
                                            std::numeric_limits<T>::max());
    for (T& x : v) {
      const int pick = static_cast<int>(rng() % 10);
      x = static_cast<T>(pick < 6 ? small(rng) : pick < 9 ? any(rng) : edges[rng() % 5]);
    }
  } else {
    std::uniform_real_distribution<T> dist(-10, 10);
    for (T& x : v) {
      x = dist(rng);
      if (divisor && std::fabs(x) < T(0.5)) x += x < 0 ? T(-0.5) : T(0.5);
    }
  }
  return v;
}

template <typename T>
void CheckCase(std::mt19937& rng, const std::vector<int64_t>& a_shape,
               const std::vector<int64_t>& b_shape, const std::vector<int64_t>& out_shape) {
  SCOPED_TRACE(absl::StrFormat("%s %s x %s -> %s", DTypeName(DTypeOf<T>()), ShapeToString(a_shape),
                               ShapeToString(b_shape), ShapeToString(out_shape)));
  auto count = [](const std::vector<int64_t>& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
  };
  for (const char* op : kOps) {
    SCOPED_TRACE(op);
    const bool divide = std::string_view(op) == "divide";
    std::vector<T> a = RandomValues<T>(rng, count(a_shape), false);
    std::vector<T> b = RandomValues<T>(rng, count(b_shape), divide);
    NDArray x = MakeArray<T>(a_shape, a);
    NDArray y = MakeArray<T>(b_shape, b);
    NDArray z = *NDArrayObj::Empty(out_shape, DTypeOf<T>(), Alloc());
    const absl::Status status = RunKernel(op, x, y, z);
    ASSERT_TRUE(status.ok()) << status;
    ExpectMatchesReference<T>(op, a_shape, a, b_shape, b, out_shape, Elements<T>(z));
    // The inputs are untouched.
    EXPECT_EQ(Elements<T>(x), a);
    EXPECT_EQ(Elements<T>(y), b);
  }
}

struct Case {
  std::vector<int64_t> a, b, out;
};

// Every broadcasting pattern, written out.
const Case kCases[] = {
    {{}, {}, {}},          // rank 0
    {{}, {3, 5}, {3, 5}},  // scalar with tensor
    {{3, 5}, {}, {3, 5}},  // tensor with scalar
    {{1}, {13}, {13}},     // size-1 with vector
    {{13}, {13}, {13}},    // same shape, not a multiple of 8
    {{3, 17}, {3, 17}, {3, 17}},
    {{4, 1}, {1, 6}, {4, 6}},  // outer product [n,1] x [1,m]
    {{1, 6}, {4, 1}, {4, 6}},
    {{4, 3}, {2, 4, 3}, {2, 4, 3}},  // different ranks
    {{7, 1, 3}, {4, 3}, {7, 4, 3}},
    {{2, 1, 5}, {2, 3, 5}, {2, 3, 5}},  // middle axis broadcast
    {{2, 3, 5}, {1, 3, 1}, {2, 3, 5}},  // inner and outer broadcast
    {{3, 1}, {3, 1}, {3, 1}},           // both inner strides 0
    {{2, 1, 3}, {1, 4, 1}, {2, 4, 3}},  // neither operand contiguous over out
    {{5, 1, 1}, {1, 1, 9}, {5, 1, 9}},
    {{1, 1, 1}, {1}, {1, 1, 1}},  // all ones
    {{0, 3}, {1, 3}, {0, 3}},     // zero extents
    {{0}, {}, {0}},
    {{2, 0, 1}, {1, 0, 5}, {2, 0, 5}},
    {{1}, {0}, {0}},
    {{2, 1, 2, 1, 2, 1, 2, 1}, {1, 2, 1, 2, 1, 2, 1, 3}, {2, 2, 2, 2, 2, 2, 2, 3}},  // rank 8
    {{9, 1, 11}, {10, 1}, {9, 10, 11}},
};

template <typename T>
class BinaryKernelTest : public ::testing::Test {};
using KernelTypes = ::testing::Types<float, double, int32_t, int64_t, int16_t, int8_t, uint8_t,
                                     uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(BinaryKernelTest, KernelTypes);

TYPED_TEST(BinaryKernelTest, BroadcastPatterns) {
  std::mt19937 rng(7);
  for (const Case& c : kCases) CheckCase<TypeParam>(rng, c.a, c.b, c.out);
}

// Two operand shapes that broadcast together, and their broadcast: a random output
// shape (extents 0 and 1 among them), from which each operand drops leading axes and
// turns some axes into 1.
Case RandomCase(std::mt19937& rng, int max_rank = 6) {
  const int rank = static_cast<int>(rng() % max_rank);
  std::vector<int64_t> out(rank);
  for (int64_t& d : out) {
    const int r = static_cast<int>(rng() % 20);
    d = r == 0 ? 0 : r < 4 ? 1 : 1 + static_cast<int64_t>(rng() % 11);
  }
  auto derive = [&] {
    const size_t drop = rank == 0 ? 0 : rng() % (rank + 1);
    std::vector<int64_t> s(out.begin() + drop, out.end());
    for (int64_t& d : s) {
      if (rng() % 3 == 0) d = 1;
    }
    return s;
  };
  Case c{derive(), derive(), {}};
  // The broadcast may have fewer axes, or 1s where `out` had an extent both dropped.
  const size_t r = std::max(c.a.size(), c.b.size());
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + c.a.size() < r ? 1 : c.a[i + c.a.size() - r];
    const int64_t db = i + c.b.size() < r ? 1 : c.b[i + c.b.size() - r];
    c.out.push_back(da == 1 ? db : da);
  }
  return c;
}

TYPED_TEST(BinaryKernelTest, RandomShapes) {
  std::mt19937 rng(20240611);
  for (int iter = 0; iter < 60; ++iter) {
    const Case c = RandomCase(rng);
    CheckCase<TypeParam>(rng, c.a, c.b, c.out);
  }
}

TYPED_TEST(BinaryKernelTest, LongInnerLoopsNotAMultipleOfEight) {
  std::mt19937 rng(3);
  for (int64_t n : {1, 7, 9, 15, 31, 63, 65, 257, 1023}) {
    CheckCase<TypeParam>(rng, {n}, {n}, {n});
    CheckCase<TypeParam>(rng, {2, n}, {1}, {2, n});
    CheckCase<TypeParam>(rng, {}, {3, n}, {3, n});
  }
  // Large enough to be split over the pool, in chunks that start mid-row.
  CheckCase<TypeParam>(rng, {300, 1000}, {1000}, {300, 1000});
  CheckCase<TypeParam>(rng, {1000, 1}, {1, 301}, {1000, 301});
}

TYPED_TEST(BinaryKernelTest, OutputMayAliasAnInput) {
  // In-place update c = a + b with c == a is an ordinary call for the VM.
  std::vector<TypeParam> a = {1, 2, 3, 4, 5, 6};
  std::vector<TypeParam> b = {10, 20, 30};
  NDArray x = MakeArray<TypeParam>({2, 3}, a);
  NDArray y = MakeArray<TypeParam>({3}, b);
  ASSERT_TRUE(RunKernel("add", x, y, x).ok());
  EXPECT_EQ(Elements<TypeParam>(x), (std::vector<TypeParam>{11, 22, 33, 14, 25, 36}));
}

// ---------------------------------------------------------------------------------------
// Integer edge cases: nothing traps (this binary runs under UBSan with
// -fno-sanitize-recover, so undefined behaviour would end it).

template <typename T>
class IntegerEdgeTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int32_t, int64_t, int16_t, int8_t>;
TYPED_TEST_SUITE(IntegerEdgeTest, IntTypes);

TYPED_TEST(IntegerEdgeTest, DivisionEdges) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T kMax = std::numeric_limits<T>::max();
  NDArray a = MakeArray<T>({6}, {kMin, 5, 0, kMin, -7, kMax});
  NDArray b = MakeArray<T>({6}, {-1, 0, 0, 0, 2, -1});
  NDArray c = MakeArray<T>({6}, {9, 9, 9, 9, 9, 9});
  ASSERT_TRUE(RunKernel("divide", a, b, c).ok());
  // MIN / -1 yields MIN (the wrapped quotient); x / 0 yields 0; otherwise C++
  // truncation toward zero (-7 / 2 == -3, not numpy's floor -4).
  EXPECT_EQ(Elements<T>(c), (std::vector<T>{kMin, 0, 0, 0, -3, -kMax}));
}

TYPED_TEST(IntegerEdgeTest, ArithmeticWraps) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T kMax = std::numeric_limits<T>::max();
  NDArray a = MakeArray<T>({3}, {kMax, kMin, kMax});
  NDArray b = MakeArray<T>({3}, {1, 1, 2});
  NDArray c = *NDArrayObj::Empty({3}, DTypeOf<T>(), Alloc());
  ASSERT_TRUE(RunKernel("add", a, b, c).ok());
  EXPECT_EQ(Elements<T>(c), (std::vector<T>{kMin, kMin + 1, kMin + 1}));
  ASSERT_TRUE(RunKernel("subtract", b, a, c).ok());  // 1 - MAX, 1 - MIN (wraps), 2 - MAX
  EXPECT_EQ(Elements<T>(c), (std::vector<T>{kMin + 2, kMin + 1, kMin + 3}));
  ASSERT_TRUE(RunKernel("multiply", a, b, c).ok());
  EXPECT_EQ(Elements<T>(c), (std::vector<T>{kMax, kMin, -2}));
  NDArray m1 = MakeArray<T>({}, {-1});
  NDArray d = *NDArrayObj::Empty({3}, DTypeOf<T>(), Alloc());
  ASSERT_TRUE(RunKernel("multiply", a, m1, d).ok());  // -MIN wraps to MIN
  EXPECT_EQ(Elements<T>(d), (std::vector<T>{-kMax, kMin, -kMax}));
}

TEST(NarrowIntegerTest, UnsignedEightBit) {
  // u8 wraps modulo 256 and divides plainly; x / 0 == x % 0 == 0.
  NDArray a = MakeArray<uint8_t>({5}, {255, 0, 200, 7, 16});
  NDArray b = MakeArray<uint8_t>({5}, {1, 1, 2, 0, 16});
  NDArray c = *NDArrayObj::Empty({5}, DType::kU8, Alloc());
  const std::pair<const char*, std::vector<uint8_t>> want[] = {
      {"add", {0, 1, 202, 7, 32}},         {"subtract", {254, 255, 198, 7, 0}},
      {"multiply", {255, 0, 144, 0, 0}},   {"divide", {255, 0, 100, 0, 1}},
      {"maximum", {255, 1, 200, 7, 16}},   {"minimum", {1, 0, 2, 0, 16}},
      {"mod", {0, 0, 0, 0, 0}},            {"floor_mod", {0, 0, 0, 0, 0}},
  };
  for (const auto& [op, values] : want) {
    ASSERT_TRUE(RunKernel(op, a, b, c).ok()) << op;
    EXPECT_EQ(Elements<uint8_t>(c), values) << op;
  }
  NDArray seven = MakeArray<uint8_t>({}, {7});
  NDArray d = MakeArray<uint8_t>({4}, {3, 255, 7, 2});
  NDArray e = *NDArrayObj::Empty({4}, DType::kU8, Alloc());
  ASSERT_TRUE(RunKernel("floor_mod", seven, d, e).ok());
  EXPECT_EQ(Elements<uint8_t>(e), (std::vector<uint8_t>{1, 7, 0, 1}));
}

TEST(NarrowIntegerTest, SignedRemaindersAndProducts) {
  // Products that overflow int when 16-bit values promote to it must wrap, not trap.
  constexpr int16_t kMin = std::numeric_limits<int16_t>::min();
  constexpr int16_t kMax = std::numeric_limits<int16_t>::max();
  NDArray a = MakeArray<int16_t>({4}, {kMin, kMax, -1, kMin});
  NDArray c = *NDArrayObj::Empty({4}, DType::kI16, Alloc());
  ASSERT_TRUE(RunKernel("multiply", a, a, c).ok());
  EXPECT_EQ(Elements<int16_t>(c), (std::vector<int16_t>{0, 1, 1, 0}));
  constexpr int8_t kMin8 = std::numeric_limits<int8_t>::min();
  NDArray x = MakeArray<int8_t>({6}, {kMin8, kMin8, 7, -7, 7, -7});
  NDArray y = MakeArray<int8_t>({6}, {-1, 0, -2, 2, 0, -2});
  NDArray z = *NDArrayObj::Empty({6}, DType::kI8, Alloc());
  ASSERT_TRUE(RunKernel("mod", x, y, z).ok());
  EXPECT_EQ(Elements<int8_t>(z), (std::vector<int8_t>{0, 0, 1, -1, 0, -1}));
  ASSERT_TRUE(RunKernel("floor_mod", x, y, z).ok());
  EXPECT_EQ(Elements<int8_t>(z), (std::vector<int8_t>{0, 0, -1, 1, 0, -1}));
}

// Integer power: squaring with wrapping products; a negative exponent truncates the real
// result (1, +/-1 by parity for -1, else 0); 0 ** 0 == 1.
template <typename T>
class IntegerPowerTest : public ::testing::Test {};
using PowerIntTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(IntegerPowerTest, PowerIntTypes);

TYPED_TEST(IntegerPowerTest, Edges) {
  using T = TypeParam;
  constexpr T kMin = std::numeric_limits<T>::min();
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr T kBits = sizeof(T) * 8;
  const std::vector<std::pair<T, T>> in = {
      {0, 0},    {5, 0},     {kMin, 0}, {0, 3},     {0, -1},   {0, kMin}, {1, -5},
      {1, kMin}, {-1, -3},   {-1, -4},  {-1, kMin}, {-1, kMax}, {2, -1},  {-2, -1},
      {kMin, -1}, {kMax, -2}, {2, kBits - 1}, {2, kBits}, {2, kMax}, {-2, kBits - 1},
      {3, 4},    {-3, 3},    {kMin, 1}, {kMin, 2},  {kMax, 2},  {1, kMax}, {0, kMax}};
  const std::vector<T> want = {1, 1, 1, 0, 0, 0, 1, 1, -1, 1, 1, -1, 0, 0,
                               0, 0, kMin, 0, 0, kMin, 81, -27, kMin, 0, 1, 1, 0};
  std::vector<T> a, b;
  for (const auto& [x, y] : in) a.push_back(x), b.push_back(y);
  const int64_t n = static_cast<int64_t>(in.size());
  NDArray c = *NDArrayObj::Empty({n}, DTypeOf<T>(), Alloc());
  ASSERT_TRUE(RunKernel("power", MakeArray<T>({n}, a), MakeArray<T>({n}, b), c).ok());
  const std::vector<T> got = Elements<T>(c);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(got[i], want[i]) << a[i] << " ** " << b[i];
  // 3 ** 40 wraps: the product of forty 3s modulo 2^bits.
  using U = std::make_unsigned_t<T>;
  U wrapped = 1;
  for (int i = 0; i < 40; ++i) wrapped *= 3;
  NDArray d = *NDArrayObj::Empty({}, DTypeOf<T>(), Alloc());
  ASSERT_TRUE(RunKernel("power", MakeArray<T>({}, {3}), MakeArray<T>({}, {40}), d).ok());
  EXPECT_EQ(Elements<T>(d)[0], static_cast<T>(wrapped));
}

TEST(FloatEdgeTest, DivisionByZeroIsInfinite) {
  NDArray a = MakeArray<float>({3}, {1.0f, -1.0f, 0.0f});
  NDArray b = MakeArray<float>({}, {0.0f});
  NDArray c = *NDArrayObj::Empty({3}, DType::kF32, Alloc());
  ASSERT_TRUE(RunKernel("divide", a, b, c).ok());
  std::vector<float> got = Elements<float>(c);
  EXPECT_EQ(got[0], std::numeric_limits<float>::infinity());
  EXPECT_EQ(got[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(got[2]));
}

// ---------------------------------------------------------------------------------------
// Wrapper errors.

void ExpectInvalid(const absl::Status& status, std::string_view substr) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(substr)));
}

TEST(FloatEdgeTest, MaximumAndMinimumPropagateNan) {
  NDArray a = MakeArray<float>({4}, {1.0f, NAN, NAN, -2.0f});
  NDArray b = MakeArray<float>({4}, {NAN, 3.0f, NAN, -1.0f});
  NDArray c = *NDArrayObj::Empty({4}, DType::kF32, Alloc());
  for (const char* op : {"maximum", "minimum"}) {
    ASSERT_TRUE(RunKernel(op, a, b, c).ok());
    const std::vector<float> got = Elements<float>(c);
    EXPECT_TRUE(std::isnan(got[0]) && std::isnan(got[1]) && std::isnan(got[2])) << op;
    EXPECT_EQ(got[3], std::string_view(op) == "maximum" ? -1.0f : -2.0f);
  }
}

// ---------------------------------------------------------------------------------------
// power, mod, floor_mod, comparisons and logical operations on every dtype they take,
// through RunKernel (shape function first, as the VM calls them).

using LD = long double;

using testing::ElementExact;

// Integer remainders by definition, in 128 bits: x % 0 == 0, the sign of a (mod) or of b
// (floor_mod).
LD IntMod(LD a, LD b, bool floored) {
  const __int128 x = static_cast<__int128>(a), y = static_cast<__int128>(b);
  if (y == 0) return 0;
  __int128 r = x - (x / y) * y;
  if (floored && r != 0 && ((r < 0) != (y < 0))) r += y;
  return static_cast<LD>(r);
}

// Integer a ** b by repeated multiplication, wrapped to `dtype` (i32 or i64) at the end
// (wrapping commutes with products); a negative b truncates the real result, 0 for 0.
LD IntPowerRef(LD a, LD b, DType dtype) {
  if (b < 0) return a == 0 ? 0 : std::trunc(std::pow(a, b));
  unsigned __int128 p = 1;
  for (LD k = 0; k < b; ++k) p *= static_cast<unsigned __int128>(static_cast<__int128>(a));
  return dtype == DType::kI32 ? static_cast<LD>(static_cast<int32_t>(static_cast<uint32_t>(p)))
                              : static_cast<LD>(static_cast<int64_t>(static_cast<uint64_t>(p)));
}

// The exact result of `op` on element values a and b of a tensor of `dtype`.
LD RefOp(std::string_view op, LD a, LD b, DType dtype) {
  const bool integral = dtype != DType::kF32 && dtype != DType::kF64;
  if (op == "equal") return a == b;
  if (op == "not_equal") return a != b;
  if (op == "less") return a < b;
  if (op == "less_equal") return a <= b;
  if (op == "greater") return a > b;
  if (op == "greater_equal") return a >= b;
  if (op == "logical_and") return a != 0 && b != 0;
  if (op == "logical_or") return a != 0 || b != 0;
  if (op == "logical_xor") return (a != 0) != (b != 0);
  if (op == "power" && integral) return IntPowerRef(a, b, dtype);
  if (op == "power") return std::pow(a, b);
  const bool floored = op == "floor_mod";
  if (integral) return IntMod(a, b, floored);
  // Floats: the remainder is exact; floor_mod's correction rounds once, in the dtype.
  const LD r = std::fmod(a, b);
  if (!floored || r == 0 || (r < 0) == (b < 0)) return r;
  return dtype == DType::kF32 ? static_cast<float>(r + b) : static_cast<double>(r + b);
}

// Random values of `dtype` for `op`: few distinct small values (ties and zero divisors
// are common), a few extremes for integers, NaN and infinities among floats.
NDArray RandomOperand(std::string_view op, const std::vector<int64_t>& shape, DType dtype,
                      std::mt19937& rng) {
  NDArray t = testing::RandomTensor(shape, dtype, rng, -4.0, 4.0);
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    const uint32_t r = rng() % 64;
    if (dtype == DType::kF32 && r < 3) {
      t->data_as<float>()[i] = r == 0 ? NAN : r == 1 ? INFINITY : -0.0f;
    } else if (dtype == DType::kI64 && r == 0 && op != "power") {
      t->data_as<int64_t>()[i] = std::numeric_limits<int64_t>::min();
    } else if (dtype == DType::kI32 && r == 0) {
      t->data_as<int32_t>()[i] = rng() % 2 ? -1 : std::numeric_limits<int32_t>::min();
    } else if ((dtype == DType::kI8 || dtype == DType::kI16 || dtype == DType::kU8) && r < 2) {
      // The extremes, where 8- and 16-bit arithmetic promoted to int leaves the type.
      if (dtype == DType::kU8) t->data_as<uint8_t>()[i] = r == 0 ? 0 : UINT8_MAX;
      if (dtype == DType::kI8) t->data_as<int8_t>()[i] = r == 0 ? INT8_MIN : INT8_MAX;
      if (dtype == DType::kI16) t->data_as<int16_t>()[i] = r == 0 ? INT16_MIN : INT16_MAX;
    }
  }
  return t;
}

void CheckOp(std::string_view op, DType dtype, std::mt19937& rng) {
  const bool bool_out = op != "power" && op != "mod" && op != "floor_mod";
  for (int iter = 0; iter < 12; ++iter) {
    const Case c = iter == 0 ? Case{{300, 1000}, {1000}, {300, 1000}} : RandomCase(rng, 5);
    SCOPED_TRACE(absl::StrFormat("%s on %s: %s x %s", op, DTypeName(dtype), ShapeToString(c.a),
                                 ShapeToString(c.b)));
    NDArray a = RandomOperand(op, c.a, dtype, rng);
    NDArray b = RandomOperand(op, c.b, dtype, rng);
    absl::StatusOr<std::vector<NDArray>> out =
        testing::RunKernel(op, {}, {a, b}, {bool_out ? DType::kBool : dtype});
    ASSERT_TRUE(out.ok()) << out.status();
    const NDArrayObj& z = *(*out)[0];
    ASSERT_EQ(std::vector<int64_t>(z.shape().begin(), z.shape().end()), c.out);
    std::vector<int64_t> index(c.out.size(), 0);
    for (int64_t i = 0; i < z.num_elements(); ++i) {
      const LD x = ElementExact(*a, OperandIndex(c.a, index));
      const LD y = ElementExact(*b, OperandIndex(c.b, index));
      const LD want = RefOp(op, x, y, dtype);
      const LD got = ElementExact(z, i);
      if (op == "power" && std::isfinite(want)) {
        const LD eps = dtype == DType::kF32 ? 0x1p-23L : 0x1p-52L;
        ASSERT_LE(std::fabs(got - want), 2 * eps * std::fabs(want) + 1e-300L) << x << " ** " << y;
      } else if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << x << ", " << y;
      } else {
        ASSERT_EQ(got, want) << x << ", " << y << " (element " << i << ")";
      }
      for (size_t k = c.out.size(); k-- > 0;) {
        if (++index[k] < c.out[k]) break;
        index[k] = 0;
      }
    }
  }
}

TEST(BinaryOpsTest, PowerAndRemainders) {
  std::mt19937 rng(8);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI32, DType::kI64}) {
    CheckOp("power", dtype, rng);
  }
  for (const char* op : {"mod", "floor_mod"}) {
    for (DType dtype : {DType::kF32, DType::kF64, DType::kU8, DType::kI8, DType::kI16,
                        DType::kI32, DType::kI64, DType::kU16, DType::kU32, DType::kU64}) {
      CheckOp(op, dtype, rng);
    }
  }
}

TEST(BinaryOpsTest, ComparisonsOnEveryDType) {
  std::mt19937 rng(9);
  for (const char* op : {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"}) {
    for (int d = 0; d < kNumDTypes; ++d) {
      if (static_cast<DType>(d) != DType::kString) CheckOp(op, static_cast<DType>(d), rng);
    }
  }
}

TEST(BinaryOpsTest, LogicalOperations) {
  std::mt19937 rng(10);
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) {
    CheckOp(op, DType::kBool, rng);
  }
}

TEST(BinaryOpsTest, IntegerRemainderEdges) {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  NDArray a = MakeArray<int32_t>({5}, {kMin, 7, -7, 7, -7});
  NDArray b = MakeArray<int32_t>({5}, {-1, 0, 2, -2, -2});
  NDArray c = *NDArrayObj::Empty({5}, DType::kI32, Alloc());
  ASSERT_TRUE(RunKernel("mod", a, b, c).ok());
  EXPECT_EQ(Elements<int32_t>(c), (std::vector<int32_t>{0, 0, -1, 1, -1}));
  ASSERT_TRUE(RunKernel("floor_mod", a, b, c).ok());
  EXPECT_EQ(Elements<int32_t>(c), (std::vector<int32_t>{0, 0, 1, -1, -1}));
}

// Shifts: in range as C++ computes them on the unsigned bits (left wraps, right is
// arithmetic for signed values); out of range (negative, or at least the width) 0, or
// -1 for a negative value shifted right.
TEST(BinaryOpsTest, ShiftsDefineEveryAmount) {
  NDArray a = MakeArray<uint8_t>({5}, {0x81, 0x81, 1, 255, 16});
  NDArray b = MakeArray<uint8_t>({5}, {1, 7, 8, 200, 4});
  NDArray c = *NDArrayObj::Empty({5}, DType::kU8, Alloc());
  ASSERT_TRUE(RunKernel("left_shift", a, b, c).ok());
  EXPECT_EQ(Elements<uint8_t>(c), (std::vector<uint8_t>{0x02, 0x80, 0, 0, 0}));
  ASSERT_TRUE(RunKernel("right_shift", a, b, c).ok());
  EXPECT_EQ(Elements<uint8_t>(c), (std::vector<uint8_t>{0x40, 0x01, 0, 0, 1}));

  NDArray s = MakeArray<int32_t>({5}, {-8, -8, 8, -1, 1});
  NDArray t = MakeArray<int32_t>({5}, {1, 40, -1, 31, 31});
  NDArray u = *NDArrayObj::Empty({5}, DType::kI32, Alloc());
  ASSERT_TRUE(RunKernel("right_shift", s, t, u).ok());
  EXPECT_EQ(Elements<int32_t>(u), (std::vector<int32_t>{-4, -1, 0, -1, 0}));
  ASSERT_TRUE(RunKernel("left_shift", s, t, u).ok());
  EXPECT_EQ(Elements<int32_t>(u),
            (std::vector<int32_t>{-16, 0, 0, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::min()}));

  NDArray f = MakeArray<float>({1}, {1.0f});
  NDArray g = *NDArrayObj::Empty({1}, DType::kF32, Alloc());
  const absl::Status status = RunKernel("left_shift", f, f, g);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(status.message()).find("unsupported dtype f32"), std::string::npos) << status;
}

// ---------------------------------------------------------------------------------------
// where.

TEST(WhereTest, EveryDTypeWithThreeWayBroadcasting) {
  std::mt19937 rng(12);
  for (int iter = 0; iter < 40; ++iter) {
    // Every dtype but string, which only cast takes (cast_test.cc).
    const DType dtype = static_cast<DType>(iter % (kNumDTypes - 1));
    static_assert(static_cast<int>(DType::kString) == kNumDTypes - 1);
    // Three shapes broadcasting together: two random pairs sharing an output.
    Case c = iter == 0 ? Case{{1, 1000}, {300, 1}, {300, 1000}} : RandomCase(rng, 5);
    std::vector<int64_t> cond_shape = c.out;
    for (int64_t& d : cond_shape) {
      if (rng() % 2) d = 1;
    }
    if (!cond_shape.empty() && rng() % 2) cond_shape.erase(cond_shape.begin());
    SCOPED_TRACE(absl::StrFormat("%s: %s ? %s : %s", DTypeName(dtype), ShapeToString(cond_shape),
                                 ShapeToString(c.a), ShapeToString(c.b)));
    NDArray cond = testing::RandomTensor(cond_shape, DType::kBool, rng);
    NDArray x = testing::RandomTensor(c.a, dtype, rng, -100, 100);
    NDArray y = testing::RandomTensor(c.b, dtype, rng, -100, 100);
    absl::StatusOr<std::vector<NDArray>> out =
        testing::RunKernel("where", {}, {cond, x, y}, {dtype});
    ASSERT_TRUE(out.ok()) << out.status();
    const NDArrayObj& z = *(*out)[0];
    ASSERT_EQ(std::vector<int64_t>(z.shape().begin(), z.shape().end()), c.out);
    const size_t size = DTypeSize(dtype);
    std::vector<int64_t> index(c.out.size(), 0);
    for (int64_t i = 0; i < z.num_elements(); ++i) {
      const bool pick_x = cond->data_as<uint8_t>()[OperandIndex(cond_shape, index)] != 0;
      const NDArray& src = pick_x ? x : y;
      const int64_t at = OperandIndex(pick_x ? c.a : c.b, index);
      ASSERT_EQ(std::memcmp(z.data_as<char>() + i * size, src->data_as<char>() + at * size, size),
                0)
          << "element " << i;
      for (size_t k = c.out.size(); k-- > 0;) {
        if (++index[k] < c.out[k]) break;
        index[k] = 0;
      }
    }
  }
}

TEST(WhereTest, Errors) {
  NDArray cond = MakeArray<int32_t>({2}, {1, 0});
  NDArray f = *NDArrayObj::Empty({2}, DType::kF32, Alloc());
  NDArray d = *NDArrayObj::Empty({2}, DType::kF64, Alloc());
  NDArray b = testing::TensorOf<bool>({2}, {true, false});
  NDArray three = *NDArrayObj::Empty({3}, DType::kF32, Alloc());
  auto where = [](const NDArray& c, const NDArray& x, const NDArray& y) {
    return testing::RunKernel("where", {}, {c, x, y}, {x->dtype()}).status();
  };
  ExpectInvalid(where(cond, f, f), "where: condition has dtype i32, expected bool");
  ExpectInvalid(where(b, f, d), "where: x and y dtypes differ: f32 and f64");
  ExpectInvalid(where(b, f, three), "shapes [2] and [3] do not broadcast");
  ExpectInvalid(DefaultRegistry().Bind("where", {}, 2, 1).status(),
                "kernel 'where' takes 3 inputs and 1 outputs, not 2 and 1");
}

TEST(BinaryOpsTest, Errors) {
  NDArray f = *NDArrayObj::Empty({2}, DType::kF32, Alloc());
  NDArray i = *NDArrayObj::Empty({2}, DType::kI32, Alloc());
  NDArray b = testing::TensorOf<bool>({2}, {true, false});
  auto run = [](const char* op, const NDArray& x, const NDArray& y, DType out) {
    return testing::RunKernel(op, {}, {x, y}, {out}).status();
  };
  ExpectInvalid(run("equal", f, f, DType::kF32), "equal: output 0 has dtype f32, expected bool");
  ExpectInvalid(run("less", f, i, DType::kBool), "less: input dtypes differ: f32 and i32");
  ExpectInvalid(run("logical_and", f, f, DType::kBool),
                "unsupported dtype f32 for logical_and input: expected bool");
  NDArray i16 = *NDArrayObj::Empty({2}, DType::kI16, Alloc());
  ExpectInvalid(run("power", i16, i16, DType::kI16),
                "unsupported dtype i16 for power input: expected f32, f64, i32 or i64");
  ExpectInvalid(run("mod", b, b, DType::kBool),
                "unsupported dtype bool for mod input: expected f32, f64, f16, bf16, i8, i16, i32, "
                "i64, u8, u16, u32 or u64");
  ExpectInvalid(DefaultRegistry().Bind("equal", {{"axis", int64_t{0}}}, 2, 1).status(),
                "kernel 'equal' takes no attributes, got 'axis'");
}

// ---------------------------------------------------------------------------------------
// The broadcasting loop driver.

TEST(BroadcastLoopTest, MergesAxes) {
  const BroadcastLoop<2> same =
      MakeBroadcastLoop<2>({Shape{4, 5, 6}, Shape{4, 5, 6}}, Shape{4, 5, 6});
  EXPECT_EQ(same.rank, 1);
  EXPECT_EQ(same.extents[0], 120);
  EXPECT_EQ(same.inner_strides(), (std::array<int64_t, 2>{1, 1}));
  const BroadcastLoop<2> bias =
      MakeBroadcastLoop<2>({Shape{384, 768}, Shape{768}}, Shape{384, 768});
  EXPECT_EQ(bias.rank, 2);
  EXPECT_EQ(bias.strides[1][0], 0);
  EXPECT_EQ(bias.inner_strides(), (std::array<int64_t, 2>{1, 1}));
  // Axes of extent 1 vanish; [2,1,3] with [3] merges into one run of 6 for a.
  const BroadcastLoop<2> ones =
      MakeBroadcastLoop<2>({Shape{2, 1, 3}, Shape{1, 1, 3}}, Shape{2, 1, 3});
  EXPECT_EQ(ones.rank, 2);
  const BroadcastLoop<3> scalar =
      MakeBroadcastLoop<3>({Shape{}, Shape{1}, Shape{1, 1}}, Shape{1, 1});
  EXPECT_EQ(scalar.rank, 1);
  EXPECT_EQ(scalar.extents[0], 1);
  EXPECT_EQ(scalar.num_elements, 1);
}

TEST(BroadcastLoopTest, RunsCoverAnyRange) {
  // [3, 1, 4] x [5, 1] -> [3, 5, 4]: runs of 4 along the last axis.
  const BroadcastLoop<2> loop = MakeBroadcastLoop<2>({Shape{3, 1, 4}, Shape{5, 1}}, Shape{3, 5, 4});
  ASSERT_EQ(loop.num_elements, 60);
  for (int64_t begin = 0; begin <= 60; begin += 7) {
    for (int64_t end = begin; end <= 60; end += 11) {
      int64_t next = begin;
      ForEachBroadcastRun(loop, begin, end,
                          [&](const std::array<int64_t, 2>& in, int64_t out, int64_t n) {
                            ASSERT_EQ(out, next);
                            ASSERT_GT(n, 0);
                            for (int64_t k = 0; k < n; ++k) {
                              const int64_t o = out + k, i = o / 20, j = o / 4 % 5, l = o % 4;
                              EXPECT_EQ(in[0] + k * loop.inner_strides()[0], i * 4 + l);
                              EXPECT_EQ(in[1] + k * loop.inner_strides()[1], j);
                            }
                            next += n;
                          });
      EXPECT_EQ(next, end);
    }
  }
}

TEST(BinaryErrorTest, ShapesDoNotBroadcast) {
  NDArray a = MakeArray<float>({2, 3}, std::vector<float>(6, 1.0f));
  NDArray b = MakeArray<float>({3, 2}, std::vector<float>(6, 1.0f));
  NDArray c = MakeArray<float>({2, 3}, std::vector<float>(6, -1.0f));
  for (const char* op : kOps) {
    ExpectInvalid(RunKernel(op, a, b, c),
                  "shapes [2, 3] and [3, 2] do not broadcast (axis 0: 2 vs 3)");
  }
  EXPECT_EQ(Elements<float>(c), std::vector<float>(6, -1.0f));  // untouched
}

TEST(BinaryErrorTest, WrongOutputShape) {
  NDArray a = MakeArray<int32_t>({2, 3}, std::vector<int32_t>(6, 1));
  NDArray b = MakeArray<int32_t>({3}, std::vector<int32_t>(3, 1));
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{2, 2}, std::vector<int64_t>{3, 2}, std::vector<int64_t>{6},
        std::vector<int64_t>{1, 2, 3}, std::vector<int64_t>{}}) {
    NDArray c = *NDArrayObj::Empty(shape, DType::kI32, Alloc());
    ExpectInvalid(
        RunKernel("add", a, b, c),
        absl::StrFormat("add: output 0 has shape %s, expected [2, 3]", ShapeToString(shape)));
  }
  // The output must be the broadcast, not merely broadcastable to it.
  NDArray one = *NDArrayObj::Empty({1, 3}, DType::kI32, Alloc());
  ExpectInvalid(RunKernel("add", a, b, one), "add: output 0 has shape [1, 3], expected [2, 3]");
}

TEST(BinaryErrorTest, MixedDTypes) {
  NDArray f = *NDArrayObj::Empty({2}, DType::kF32, Alloc());
  NDArray d = *NDArrayObj::Empty({2}, DType::kF64, Alloc());
  NDArray i = *NDArrayObj::Empty({2}, DType::kI32, Alloc());
  ExpectInvalid(RunKernel("add", f, d, f), "add: input dtypes differ: f32 and f64");
  ExpectInvalid(RunKernel("multiply", f, f, d), "multiply: output 0 has dtype f64, expected f32");
  ExpectInvalid(RunKernel("divide", i, f, i), "divide: input dtypes differ: i32 and f32");
}

TEST(BinaryErrorTest, UnsupportedDTypes) {
  NDArray a = *NDArrayObj::Empty({4}, DType::kBool, Alloc());
  std::memset(a->data(), 0, a->nbytes());
  for (const char* op : kOps) {
    ExpectInvalid(RunKernel(op, a, a, a),
                  absl::StrFormat("unsupported dtype bool for %s input: expected f32, f64, f16, "
                                  "bf16, i8, i16, i32, i64, u8, u16, u32 or u64",
                                  op));
  }
}

// f16 and bf16 arithmetic computes in f32 and rounds once: for these operations that is
// the exact result rounded to nearest even in the dtype (f32 holds more than twice their
// precision, so the double rounding cannot differ).
TEST(BinaryOpsTest, HalfAndBFloat16RoundTheExactResultOnce) {
  std::mt19937 rng(12);
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "mod"}) {
      SCOPED_TRACE(absl::StrFormat("%s on %s", op, DTypeName(dtype)));
      NDArray a = testing::RandomTensor({7, 33}, dtype, rng, -50.0, 50.0);
      NDArray b = testing::RandomTensor({33}, dtype, rng, -3.0, 3.0);
      absl::StatusOr<std::vector<NDArray>> out = testing::RunKernel(op, {}, {a, b}, {dtype});
      ASSERT_TRUE(out.ok()) << out.status();
      for (int64_t i = 0; i < 7 * 33; ++i) {
        const double x = static_cast<double>(ElementExact(*a, i)), y = static_cast<double>(ElementExact(*b, i % 33));
        const std::string_view name(op);
        const double exact = name == "add" ? x + y : name == "subtract" ? x - y : name == "multiply" ? x * y
                           : name == "divide" ? x / y : name == "maximum" ? std::max(x, y)
                           : name == "minimum" ? std::min(x, y) : std::fmod(x, y);
        const uint16_t want = dtype == DType::kF16 ? DoubleToHalfBits(exact) : DoubleToBFloat16Bits(exact);
        const uint16_t got = (*out)[0]->data_as<uint16_t>()[i];
        if (std::isnan(exact)) continue;  // x / 0 with x == 0, fmod by 0
        ASSERT_EQ(got, want) << x << " " << op << " " << y << " = " << exact;
      }
    }
  }
}

TEST(BinaryErrorTest, EmptyTensorsStillHaveTheirDTypesChecked) {
  // The shape function checks dtypes too, so a kernel's errors do not depend on sizes.
  NDArray a = *NDArrayObj::Empty({0}, DType::kBool, Alloc());
  ExpectInvalid(RunKernel("add", a, a, a), "unsupported dtype bool for add input");
}

// ---------------------------------------------------------------------------------------
// Broadcasting helpers.

TEST(BroadcastShapesTest, Cases) {
  EXPECT_EQ(*BroadcastShapes({7, 1, 3}, {4, 3}), (Shape{7, 4, 3}));
  EXPECT_EQ(*BroadcastShapes({4, 3}, {7, 1, 3}), (Shape{7, 4, 3}));
  EXPECT_EQ(*BroadcastShapes({}, {}), Shape{});
  EXPECT_EQ(*BroadcastShapes({}, {2, 5}), (Shape{2, 5}));
  EXPECT_EQ(*BroadcastShapes({5, 1}, {1, 6}), (Shape{5, 6}));
  EXPECT_EQ(*BroadcastShapes({0, 1}, {1, 3}), (Shape{0, 3}));
  EXPECT_EQ(*BroadcastShapes({1}, {0}), (Shape{0}));
  EXPECT_EQ(*BroadcastShapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
}

TEST(BroadcastShapesTest, Errors) {
  ExpectInvalid(BroadcastShapes({2, 3}, {4}).status(),
                "shapes [2, 3] and [4] do not broadcast (axis 1: 3 vs 4)");
  ExpectInvalid(BroadcastShapes({5, 2, 3}, {7, 1, 3}).status(), "(axis 0: 5 vs 7)");
  ExpectInvalid(BroadcastShapes({0}, {2}).status(), "axis 0: 0 vs 2");  // 0 is not 1
}

TEST(BroadcastStridesTest, Cases) {
  EXPECT_EQ(BroadcastStrides({2, 3, 4}, {2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(BroadcastStrides({3, 4}, {2, 3, 4}), (Shape{0, 4, 1}));
  EXPECT_EQ(BroadcastStrides({3, 1}, {2, 3, 4}), (Shape{0, 1, 0}));
  EXPECT_EQ(BroadcastStrides({2, 1, 4}, {2, 3, 4}), (Shape{4, 0, 1}));
  EXPECT_EQ(BroadcastStrides({}, {5, 6}), (Shape{0, 0}));
  EXPECT_EQ(BroadcastStrides({}, {}), Shape{});
  EXPECT_EQ(BroadcastStrides({1, 1}, {1, 1}), (Shape{0, 0}));
}

// ---------------------------------------------------------------------------------------
// KernelRegistry.

absl::Status NoOp(const KernelCall&) { return absl::OkStatus(); }

TEST(KernelRegistryTest, DefaultRegistryHasTheBinaryKernels) {
  for (const char* op : kOps) {
    EXPECT_TRUE(DefaultRegistry().Contains(op)) << op;
    absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind(op, {}, 2, 1);
    ASSERT_TRUE(k.ok()) << k.status();
    EXPECT_EQ(k->name(), op);
    EXPECT_EQ(k->num_inputs(), 2);
    EXPECT_EQ(k->num_outputs(), 1);
  }
  EXPECT_FALSE(DefaultRegistry().Contains("conv2d"));
  EXPECT_FALSE(DefaultRegistry().Contains(""));
  EXPECT_EQ(&DefaultRegistry(), &DefaultRegistry());
}

TEST(KernelRegistryTest, RegisterCpuKernelsTwiceFails) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterCpuKernels(registry).ok());
  absl::Status again = RegisterCpuKernels(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.message(), HasSubstr("kernel 'add' registered twice"));
}

TEST(KernelRegistryTest, RegisterRejectsDuplicatesAndIncompleteDefs) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.Register(KernelDef{.name = "k", .num_inputs = 1, .fn = NoOp}).ok());
  absl::Status dup = registry.Register(KernelDef{.name = "k", .num_inputs = 2, .fn = NoOp});
  EXPECT_EQ(dup.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(dup.message(), HasSubstr("kernel 'k' registered twice"));
  // The first definition is kept.
  EXPECT_TRUE(registry.Bind("k", {}, 1, 1).ok());
  EXPECT_FALSE(registry.Bind("k", {}, 2, 1).ok());

  EXPECT_EQ(registry.Register(KernelDef{.name = "", .fn = NoOp}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Register(KernelDef{.name = "nofn"}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(registry.Contains("nofn"));
}

TEST(KernelRegistryTest, BindUnknownIsNotFound) {
  absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind("nope", {}, 2, 1);
  EXPECT_EQ(k.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(k.status().message(), HasSubstr("no kernel named 'nope'"));
}

TEST(KernelRegistryTest, BindWrongArity) {
  for (auto [in, out] : {std::pair{3, 1}, std::pair{1, 1}, std::pair{2, 0}, std::pair{2, 2}}) {
    absl::StatusOr<BoundKernel> k = DefaultRegistry().Bind("add", {}, in, out);
    ExpectInvalid(k.status(), absl::StrFormat("kernel 'add' takes 2 inputs and 1 outputs, not "
                                              "%d and %d",
                                              in, out));
  }
}

TEST(KernelRegistryTest, VariadicArity) {
  KernelRegistry registry;
  ASSERT_TRUE(registry
                  .Register(KernelDef{
                      .name = "concat", .num_inputs = kVariadic, .num_outputs = 1, .fn = NoOp})
                  .ok());
  for (int n : {0, 1, 5, 100}) EXPECT_TRUE(registry.Bind("concat", {}, n, 1).ok()) << n;
  ExpectInvalid(registry.Bind("concat", {}, 2, 3).status(),
                "kernel 'concat' takes any number of inputs and 1 outputs, not 2 and 3");
  ExpectInvalid(registry.Bind("concat", {}, -1, 1).status(), "not -1 and 1");
}

TEST(KernelRegistryTest, AttributesToAKernelWithoutBind) {
  Attrs attrs;
  attrs["axis"] = int64_t{1};
  ExpectInvalid(DefaultRegistry().Bind("add", attrs, 2, 1).status(),
                "kernel 'add' takes no attributes, got 'axis'");
}

struct ScaleState {
  int64_t factor;
};

absl::StatusOr<std::shared_ptr<const void>> BindScale(const Attrs& attrs) {
  absl::StatusOr<int64_t> factor = GetIntAttr(attrs, "factor");
  if (!factor.ok()) return factor.status();
  return std::shared_ptr<const void>(std::make_shared<ScaleState>(ScaleState{*factor}));
}

// out = in * factor, for i64; reads its bound state.
absl::Status Scale(const KernelCall& call) {
  const auto* state = static_cast<const ScaleState*>(call.state);
  const NDArrayObj& in = *call.inputs()[0];
  NDArrayObj& out = *call.outputs()[0];
  for (int64_t i = 0; i < in.num_elements(); ++i) {
    out.data_as<int64_t>()[i] = in.data_as<int64_t>()[i] * state->factor;
  }
  return absl::OkStatus();
}

TEST(KernelRegistryTest, BindParsesAttributesOnce) {
  KernelRegistry registry;
  ASSERT_TRUE(
      registry
          .Register(KernelDef{
              .name = "scale", .num_inputs = 1, .num_outputs = 1, .fn = Scale, .bind = BindScale})
          .ok());
  Attrs attrs;
  attrs["factor"] = int64_t{3};
  absl::StatusOr<BoundKernel> k = registry.Bind("scale", attrs, 1, 1);
  ASSERT_TRUE(k.ok()) << k.status();
  NDArray in = MakeArray<int64_t>({3}, {1, 2, -4});
  NDArray out = *NDArrayObj::Empty({3}, DType::kI64, Alloc());
  NDArrayObj* args[] = {in.get(), out.get()};
  ASSERT_TRUE(k->Call(args, ThreadPool::Default()).ok());
  EXPECT_EQ(Elements<int64_t>(out), (std::vector<int64_t>{3, 6, -12}));

  // Bind errors are InvalidArgument prefixed with the kernel's name.
  ExpectInvalid(registry.Bind("scale", {}, 1, 1).status(),
                "kernel 'scale': missing int attribute 'factor'");
  Attrs wrong;
  wrong["factor"] = 2.5;
  ExpectInvalid(registry.Bind("scale", wrong, 1, 1).status(),
                "kernel 'scale': attribute 'factor' must be an int");
}

TEST(GetIntAttrTest, TypedAccess) {
  Attrs attrs;
  attrs["axis"] = int64_t{-2};
  attrs["eps"] = 1e-5;
  attrs["mode"] = std::string("same");
  attrs["perm"] = std::vector<int64_t>{1, 0};
  attrs["scales"] = std::vector<double>{0.5};
  EXPECT_EQ(*GetIntAttr(attrs, "axis"), -2);
  EXPECT_EQ(*GetIntAttr(attrs, "axis", 7), -2);
  EXPECT_EQ(*GetIntAttr(attrs, "missing", 7), 7);
  ExpectInvalid(GetIntAttr(attrs, "missing").status(), "missing int attribute 'missing'");
  for (const char* name : {"eps", "mode", "perm", "scales"}) {
    ExpectInvalid(GetIntAttr(attrs, name).status(),
                  absl::StrFormat("attribute '%s' must be an int", name));
    // A present attribute of the wrong type is an error even with a fallback.
    ExpectInvalid(GetIntAttr(attrs, name, 0).status(), "must be an int");
  }
}

// nn.bias_add adds the bias along the axis, at every axis (negative ones counted from
// the end) and rank, for floats and integers; exact, as it is one add per element.
TEST(BiasAddTest, AddsAlongTheAxis) {
  std::mt19937 rng(45);
  const std::vector<int64_t> shape = {2, 3, 4, 5};
  for (DType dtype : {DType::kF32, DType::kI32}) {
    for (int64_t axis = -4; axis < 4; ++axis) {
      const int64_t at = axis < 0 ? axis + 4 : axis;
      const NDArray data = testing::RandomTensor(shape, dtype, rng);
      const NDArray bias = testing::RandomTensor({shape[at]}, dtype, rng);
      absl::StatusOr<std::vector<NDArray>> out = testing::RunKernel("nn.bias_add", {{"axis", axis}}, {data, bias});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0]->shape(), data->shape());
      int64_t inner = 1;
      for (int64_t d = at + 1; d < 4; ++d) inner *= shape[d];
      for (int64_t i = 0; i < data->num_elements(); ++i) {
        const long double want =
            testing::ElementExact(*data, i) + testing::ElementExact(*bias, (i / inner) % shape[at]);
        const long double got = testing::ElementExact(*(*out)[0], i);
        if (dtype == DType::kF32) {
          EXPECT_EQ(static_cast<float>(got), static_cast<float>(want)) << "axis " << axis << " at " << i;
        } else {
          EXPECT_EQ(static_cast<int32_t>(got), static_cast<int32_t>(want)) << "axis " << axis << " at " << i;
        }
      }
    }
  }
  // Without an axis, Relay's default: 1.
  const NDArray m = testing::TensorOf<float>({2, 2}, {1, 2, 3, 4});
  absl::StatusOr<std::vector<NDArray>> out = testing::RunKernel("nn.bias_add", {}, {m, testing::TensorOf<float>({2}, {10, 20})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0]->data_as<float>()[1], 22.0f);
  EXPECT_EQ((*out)[0]->data_as<float>()[2], 13.0f);
}

// Wrong inputs are errors naming what was expected.
TEST(BiasAddTest, RefusesWhatDoesNotFit) {
  const NDArray m = testing::TensorOf<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto error = [&](const Attrs& attrs, const NDArray& bias) {
    absl::StatusOr<std::vector<NDArray>> out = testing::RunKernel("nn.bias_add", attrs, {m, bias});
    EXPECT_FALSE(out.ok());
    return out.ok() ? std::string() : std::string(out.status().message());
  };
  EXPECT_THAT(error({}, testing::TensorOf<float>({2}, {1, 2})), ::testing::HasSubstr("bias has shape [2], expected [3]"));
  EXPECT_THAT(error({{"axis", int64_t{0}}}, testing::TensorOf<float>({1, 2}, {1, 2})),
              ::testing::HasSubstr("bias has shape [1, 2], expected [2]"));
  EXPECT_THAT(error({{"axis", int64_t{2}}}, testing::TensorOf<float>({3}, {1, 2, 3})), ::testing::HasSubstr("axis"));
  EXPECT_THAT(error({}, testing::TensorOf<int32_t>({3}, {1, 2, 3})), ::testing::HasSubstr("expected one dtype"));
}

}  // namespace
}  // namespace dynvm::kernels
