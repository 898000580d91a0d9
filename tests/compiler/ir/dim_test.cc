// Tests of Dim (compiler/ir/dim.h): the canonical form's rules one by one, its text,
// evaluation with checked arithmetic, substitution, and a randomized check that
// simplification never changes an expression's value.
#include "compiler/ir/dim.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace dynvm::compiler {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

const Dim n = Dim::Symbol("n");
const Dim m = Dim::Symbol("m");

TEST(DimTest, ConstantsSymbolsAndAny) {
  EXPECT_TRUE(Dim(768).is_const());
  EXPECT_EQ(Dim(768).const_value(), 768);
  EXPECT_EQ(Dim().const_value(), 0);
  EXPECT_TRUE(n.is_symbol());
  EXPECT_EQ(n.symbol_name(), "n");
  EXPECT_FALSE(n.is_const());
  EXPECT_TRUE(Dim::Any().is_any());
  EXPECT_EQ(Dim::Any(), Dim::Any());
  EXPECT_EQ(Dim::Symbol("n"), n);
  EXPECT_NE(n, m);
  EXPECT_NE(n, Dim(1));
}

TEST(DimTest, LinearFormsCombineAndOrder) {
  EXPECT_EQ(n + n, n * 2);
  EXPECT_EQ(n * 12 + 1, 1 + 12 * n);
  EXPECT_EQ(n + m, m + n);
  EXPECT_EQ(n - n, Dim(0));
  EXPECT_TRUE((n - n).is_const());
  EXPECT_EQ((n + 3) * 4 - n * 4, Dim(12));
  EXPECT_EQ(n * 1, n);
  EXPECT_TRUE((n * 1).is_symbol());
  EXPECT_EQ(n * 0, Dim(0));
  EXPECT_EQ(-(-n), n);
  EXPECT_EQ(Dim(2) + 3, Dim(5));
}

TEST(DimTest, Text) {
  EXPECT_EQ(Dim(768).ToString(), "768");
  EXPECT_EQ(Dim(-3).ToString(), "-3");
  EXPECT_EQ(Dim::Any().ToString(), "?");
  EXPECT_EQ((n * 12).ToString(), "n*12");
  EXPECT_EQ((n + 1).ToString(), "n + 1");
  EXPECT_EQ((n - 1).ToString(), "n - 1");
  EXPECT_EQ((m * 2 - n).ToString(), "m*2 - n");
  EXPECT_EQ((-n).ToString(), "-n");
  EXPECT_EQ((1 - n * 3).ToString(), "-n*3 + 1");
  EXPECT_EQ(FloorDiv(n + 7, 8).ToString(), "(n + 7) / 8");
  EXPECT_EQ(FloorMod(n, 8).ToString(), "n % 8");
  EXPECT_EQ((n * m).ToString(), "m*n");
  EXPECT_EQ((FloorDiv(n + 7, 8) * 8).ToString(), "((n + 7) / 8)*8");
  EXPECT_EQ(Min(n, 512).ToString(), "min(512, n)");
  EXPECT_EQ(Max(n + 1, m).ToString(), "max(m, n + 1)");
}

TEST(DimTest, DivisionAndRemainderByConstants) {
  EXPECT_EQ(FloorDiv(n * 12, 4), n * 3);
  EXPECT_EQ(FloorDiv(n * 8 + 7, 8), n);          // floor((8n + 7) / 8) = n
  EXPECT_EQ(FloorDiv(n * 8 - 1, 8), n - 1);      // floor division, not truncation
  EXPECT_EQ(FloorDiv(n, 1), n);
  EXPECT_EQ(FloorDiv(Dim(-7), 2), Dim(-4));
  EXPECT_EQ(FloorMod(Dim(-7), 2), Dim(1));
  EXPECT_EQ(FloorMod(Dim(7), -2), Dim(-1));
  EXPECT_EQ(FloorMod(n * 8 + 3, 4), Dim(3));
  EXPECT_EQ(FloorMod(n * 8 - 1, 8), Dim(7));
  // Not reducible: kept as terms of their own.
  EXPECT_FALSE(FloorDiv(n + 7, 8).is_const());
  EXPECT_EQ(FloorDiv(n + 7, 8), FloorDiv(7 + n, 8));
  EXPECT_NE(FloorDiv(n + 7, 8), FloorDiv(n + 7, 4));
  EXPECT_EQ(FloorDiv(n, m).ToString(), "n / m");
}

TEST(DimTest, MinMax) {
  EXPECT_EQ(Min(Dim(3), Dim(5)), Dim(3));
  EXPECT_EQ(Max(Dim(3), Dim(5)), Dim(5));
  EXPECT_EQ(Min(n, n), n);
  EXPECT_EQ(Min(n, 512), Min(512, n));
  EXPECT_NE(Min(n, 512), Max(n, 512));
}

TEST(DimTest, MayEqual) {
  EXPECT_TRUE(MayEqual(n, n));
  EXPECT_TRUE(MayEqual(n, m));
  EXPECT_TRUE(MayEqual(n, 3));
  EXPECT_TRUE(MayEqual(Dim::Any(), 3));
  EXPECT_FALSE(MayEqual(Dim(3), 4));
  EXPECT_FALSE(MayEqual(n, n + 1));
  EXPECT_TRUE(MayEqual(n * 2, n + n));
}

TEST(DimTest, AnyAbsorbsArithmetic) {
  const Dim any = Dim::Any();
  EXPECT_TRUE((any + 1).is_any());
  EXPECT_TRUE((n * any).is_any());
  EXPECT_TRUE((any - any).is_any());
  EXPECT_TRUE(FloorDiv(n, any).is_any());
  EXPECT_TRUE(FloorMod(any, 2).is_any());
  EXPECT_TRUE(Min(any, 3).is_any());
  EXPECT_TRUE(Max(n, any).is_any());
}

TEST(DimTest, Evaluate) {
  const absl::flat_hash_map<std::string, int64_t> env = {{"n", 13}, {"m", -4}};
  EXPECT_EQ(*(n * 12 + 1).Evaluate(env), 157);
  EXPECT_EQ(*FloorDiv(n + 7, 8).Evaluate(env), 2);
  EXPECT_EQ(*FloorDiv(n, m).Evaluate(env), -4);  // floor(13 / -4)
  EXPECT_EQ(*FloorMod(n, m).Evaluate(env), -3);  // 13 - (-4)(-4)
  EXPECT_EQ(*Min(n, m).Evaluate(env), -4);
  EXPECT_EQ(*(n * m).Evaluate(env), -52);
  EXPECT_EQ(Dim::Symbol("k").Evaluate(env).status().message(), "symbol k has no value");
  EXPECT_EQ(Dim::Any().Evaluate(env).status().message(),
            "dimension ? has no value before run time");
  const absl::Status by_zero = FloorDiv(n, m + 4).Evaluate(env).status();
  EXPECT_EQ(by_zero.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(by_zero.message(), "dimension n / (m + 4) divides by zero");
  EXPECT_EQ(FloorMod(n, 0).Evaluate(env).status().message(), "dimension n % 0 divides by zero");
}

TEST(DimTest, OverflowIsKeptAndReportedNotFolded) {
  // Folding these constants would overflow: the expression is kept as written.
  const Dim big = Dim(kMax) + 1;
  EXPECT_FALSE(big.is_const());
  EXPECT_EQ(big.Evaluate({}).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ((Dim(kMax) * 2).Evaluate({}).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ((Dim(kMin) - 1).Evaluate({}).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(FloorDiv(Dim(kMin), -1).Evaluate({}).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(*FloorMod(Dim(kMin), -1).Evaluate({}), 0);
  EXPECT_EQ(*FloorDiv(n * kMax, kMax).Evaluate({{"n", 5}}), 5);
  // Overflow that only the values reveal.
  const absl::StatusOr<int64_t> v = (n * 4).Evaluate({{"n", kMax / 2}});
  EXPECT_EQ(v.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(v.status().message(), "dimension n*4 overflows int64");
}

TEST(DimTest, SubstituteAndSymbols) {
  const Dim d = FloorDiv(n * 2 + m, 4) + n;
  EXPECT_EQ(d.Symbols(), (std::vector<std::string>{"m", "n"}));  // "(m + n*2) / 4 + n"
  EXPECT_EQ(d.Substitute({{"m", Dim(2)}}), FloorDiv(n * 2 + 2, 4) + n);
  EXPECT_EQ(d.Substitute({{"n", Dim(3)}, {"m", Dim(2)}}), Dim(5));
  EXPECT_EQ((n * 12).Substitute({{"n", m + 1}}), m * 12 + 12);
  EXPECT_TRUE((n + 1).Substitute({{"n", Dim::Any()}}).is_any());
  EXPECT_TRUE(Dim(7).Symbols().empty());
}

// Random expressions over n and m: the canonical form evaluates to what the expression
// means, computed here in plain integers, whenever no step overflows or divides by 0.
TEST(DimTest, SimplificationPreservesValues) {
  std::mt19937 rng(1);
  struct Pair {
    Dim dim;
    std::function<std::optional<int64_t>(int64_t, int64_t)> value;
  };
  const auto floor_div = [](int64_t a, int64_t b) -> std::optional<int64_t> {
    if (b == 0 || (a == kMin && b == -1)) return std::nullopt;
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  };
  const std::function<Pair(int)> random_expr = [&](int depth) -> Pair {
    std::uniform_int_distribution<int> pick(0, depth <= 0 ? 2 : 8);
    const int choice = pick(rng);
    if (choice == 0) return {n, [](int64_t x, int64_t) { return x; }};
    if (choice == 1) return {m, [](int64_t, int64_t y) { return y; }};
    if (choice == 2) {
      const int64_t c = std::uniform_int_distribution<int64_t>(-9, 9)(rng);
      return {Dim(c), [c](int64_t, int64_t) { return c; }};
    }
    const Pair a = random_expr(depth - 1), b = random_expr(depth - 1);
    const auto both = [a, b](auto op) {
      return [a, b, op](int64_t x, int64_t y) -> std::optional<int64_t> {
        const auto va = a.value(x, y), vb = b.value(x, y);
        if (!va || !vb) return std::nullopt;
        return op(*va, *vb);
      };
    };
    switch (choice) {
      case 3: return {a.dim + b.dim, both([](int64_t p, int64_t q) { return std::optional(p + q); })};
      case 4: return {a.dim - b.dim, both([](int64_t p, int64_t q) { return std::optional(p - q); })};
      case 5: return {a.dim * b.dim, both([](int64_t p, int64_t q) { return std::optional(p * q); })};
      case 6: return {FloorDiv(a.dim, b.dim), both(floor_div)};
      case 7:
        return {FloorMod(a.dim, b.dim), both([&](int64_t p, int64_t q) -> std::optional<int64_t> {
                  const auto d = floor_div(p, q);
                  if (!d) return std::nullopt;
                  return p - *d * q;
                })};
      default:
        return {Max(a.dim, b.dim), both([](int64_t p, int64_t q) { return std::optional(std::max(p, q)); })};
    }
  };
  for (int iter = 0; iter < 2000; ++iter) {
    const Pair e = random_expr(3);  // 8 leaves of at most 16: no int64 overflow here
    for (int64_t x : {-5, 0, 1, 7, 12}) {
      for (int64_t y : {-3, 1, 2, 16}) {
        const std::optional<int64_t> want = e.value(x, y);
        const absl::StatusOr<int64_t> got = e.dim.Evaluate({{"n", x}, {"m", y}});
        if (want) {
          ASSERT_TRUE(got.ok()) << e.dim.ToString() << " at n=" << x << " m=" << y << ": "
                                << got.status();
          ASSERT_EQ(*got, *want) << e.dim.ToString() << " at n=" << x << " m=" << y;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dynvm::compiler
