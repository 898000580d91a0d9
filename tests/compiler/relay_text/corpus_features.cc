// The run cases of the corpus programs that exercise one grammar feature each: every
// program's main at several shapes, against references computed here in double.
// Tolerances, as |got - want| <= tol * (1 + |want|): 1e-6 for a few float32 roundings
// of values of magnitude below ~10; 1e-5 where exp, tanh, sigmoid or a sum of up to 64
// values is involved; float16 results one float16 ulp (5e-4); integers and bools exact.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "objects/element_codec.h"
#include "tests/compiler/relay_text/corpus_util.h"

namespace dynvm::compiler::corpus {
namespace {

constexpr double kTight = 1e-6;
constexpr double kLoose = 1e-5;

double Sum(const Values& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double Half(double v) { return HalfBitsToFloat(FloatToHalfBits(static_cast<float>(v))); }

// Integers drawn uniformly from [lo, hi], as doubles.
Values RandomInts(int64_t count, int64_t lo, int64_t hi, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  Values v(count);
  for (double& e : v) e = static_cast<double>(dist(rng));
  return v;
}

// A float32 vector of n elements whose sum is at least 1e-3 away from 0, so that its
// sign is the same in float32 and in double.
NDArray RandomAwayFromZeroSum(int64_t n, std::mt19937& rng) {
  for (;;) {
    NDArray x = Random({n}, rng);
    if (std::fabs(Sum(ValuesOf(x))) > 1e-3) return x;
  }
}

// Lists of `length` random [n] tensors, and their values.
std::vector<Value> RandomTensors(int64_t length, int64_t n, std::mt19937& rng, std::vector<Values>& values) {
  std::vector<Value> items;
  values.clear();
  for (int64_t i = 0; i < length; ++i) {
    NDArray t = Random({n}, rng);
    values.push_back(ValuesOf(t));
    items.push_back(Value(t));
  }
  return items;
}

void LiteralFloat32(vm::VirtualMachine& machine) {
  std::mt19937 rng(1);
  for (int64_t n : {0, 1, 7, 64}) {
    const NDArray x = Random({n}, rng);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    ExpectTensor(*out, DType::kF32, {n}, Map(ValuesOf(x), [](double v) { return 2 * v + 0.125; }), kTight);
  }
}

void LiteralFloat16(vm::VirtualMachine& machine) {
  std::mt19937 rng(2);
  for (int64_t n : {0, 1, 9}) {
    const NDArray x = Random({n}, rng);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    ExpectTensor(r[0], DType::kF32, {n}, Map(ValuesOf(x), [](double v) { return Half(Half(Half(v) * 0.5) + 1.5); }),
                 5e-4);
    ExpectTensor(r[1], DType::kF32, {n}, Map(ValuesOf(x), [](double v) { return v * 0.5; }), kTight);
  }
}

void LiteralFloat64(vm::VirtualMachine& machine) {
  std::mt19937 rng(3);
  for (int64_t n : {0, 2, 11}) {
    const NDArray x = Random({n}, rng);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    const Values want = Map(ValuesOf(x), [](double v) { return v * 2 - 0.25; });
    ExpectTensor(r[0], DType::kF32, {n}, want, kTight);
    ExpectTensor(r[1], DType::kF64, {n}, want, 1e-15);
  }
}

void LiteralInt64(vm::VirtualMachine& machine) {
  std::mt19937 rng(4);
  for (int64_t n : {int64_t{-5}, int64_t{0}, int64_t{7}, int64_t{1} << 40}) {
    for (int64_t m : {0, 3}) {
      for (int32_t k : {-3, 0, 100}) {
        const Values v = RandomInts(m, -1000, 1000, rng);
        const auto out = Invoke(machine, {Value(I64(n)), Value(Tensor(DType::kI64, {m}, v)),
                                          Value(Scalar(DType::kI32, k))});
        ASSERT_TRUE(out);
        const std::vector<Value> r = Fields(*out, 3);
        ExpectScalar(r[0], DType::kI64, static_cast<double>(n * 3 + 1));
        ExpectTensor(r[1], DType::kI64, {m}, Map(v, [](double e) { return e - 2; }));
        ExpectScalar(r[2], DType::kI32, k * 3 - 7);
      }
    }
  }
}

void LiteralUint8(vm::VirtualMachine& machine) {
  std::mt19937 rng(5);
  for (int64_t n : {0, 5, 300}) {
    const Values x = RandomInts(n, 0, 255, rng);
    const auto out = Invoke(machine, {Value(Tensor(DType::kU8, {n}, x))});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    ExpectTensor(r[0], DType::kU8, {n}, Map(x, [](double v) { return std::fmod(v + 7, 256); }));
    ExpectTensor(r[1], DType::kU8, {n}, Map(x, [](double v) { return std::fmod(v * 2, 256); }));
    ExpectTensor(r[2], DType::kBool, {n}, Map(x, [](double v) { return v > 7 ? 1.0 : 0.0; }));
    ExpectTensor(r[3], DType::kF32, {n}, Map(x, [](double v) { return v * 2; }));
  }
}

void LiteralSmallInts(vm::VirtualMachine& machine) {
  for (int64_t n : {int64_t{-34}, int64_t{0}, int64_t{1} << 50}) {
    const auto out = Invoke(machine, {Value(I64(n))});
    ASSERT_TRUE(out);
    ExpectScalar(*out, DType::kI64, static_cast<double>(n + 34));
  }
}

void LiteralBool(vm::VirtualMachine& machine) {
  std::mt19937 rng(6);
  for (bool c : {true, false}) {
    for (int64_t n : {0, 3}) {
      const NDArray x = Random({n}, rng);
      const auto out = Invoke(machine, {Value(Bool(c)), Value(x)});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 5);
      ExpectScalar(r[0], DType::kBool, c);
      ExpectScalar(r[1], DType::kBool, c);
      ExpectScalar(r[2], DType::kBool, !c);
      ExpectTensor(r[3], DType::kF32, {n}, Map(ValuesOf(x), [c](double v) { return c ? v : -v; }));
      ExpectScalar(r[4], DType::kBool, !c);
    }
  }
}

void AttrsNone(vm::VirtualMachine& machine) {
  std::mt19937 rng(7);
  const NDArray w = Random({4, 3}, rng);
  for (int64_t n : {0, 1, 4, 9}) {
    const NDArray x = Random({n, 3}, rng);
    const auto out = Invoke(machine, {Value(x), Value(w)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    const Values dense = MatMul(ValuesOf(x), ValuesOf(w), n, 3, 4, /*transpose_b=*/true);
    ExpectTensor(r[0], DType::kF32, {n, 4}, dense, kTight);
    ExpectTensor(r[1], DType::kF32, {n, 2}, Columns(dense, n, 4, 1, 3), kTight);
  }
}

void AttrsNestedList(vm::VirtualMachine& machine) {
  std::mt19937 rng(8);
  for (int64_t n : {0, 1, 5}) {
    const NDArray x = Random({n, 3}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    Values padded, flat(3 * n);
    for (int64_t i = 0; i < n; ++i) {
      padded.insert(padded.end(), {0.5, xv[i * 3], xv[i * 3 + 1], xv[i * 3 + 2], 0.5, 0.5});
      for (int64_t j = 0; j < 3; ++j) flat[j * n + i] = xv[i * 3 + j];
    }
    ExpectTensor(r[0], DType::kF32, {n, 6}, padded);
    ExpectTensor(r[1], DType::kF32, {3 * n}, flat);
  }
}

void InfixPrecedence(vm::VirtualMachine& machine) {
  std::mt19937 rng(9);
  for (int64_t n : {1, 6, 40}) {
    const NDArray a = Random({n}, rng), b = Random({n}, rng), c = Random({n}, rng);
    const Values av = ValuesOf(a), bv = ValuesOf(b), cv = ValuesOf(c);
    const auto out = Invoke(machine, {Value(a), Value(b), Value(c)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    Values w0, w1, w2, w3;
    for (int64_t i = 0; i < n; ++i) {
      w0.push_back(av[i] + bv[i] * cv[i] - av[i] / 2);
      w1.push_back((av[i] + bv[i]) * cv[i]);
      w2.push_back(av[i] - bv[i] - cv[i]);
      w3.push_back(av[i] / (bv[i] * bv[i] + 1) / 4);
    }
    ExpectTensor(r[0], DType::kF32, {n}, w0, kTight);
    ExpectTensor(r[1], DType::kF32, {n}, w1, kTight);
    ExpectTensor(r[2], DType::kF32, {n}, w2, kTight);
    ExpectTensor(r[3], DType::kF32, {n}, w3, kTight);
  }
}

void UnaryMinus(vm::VirtualMachine& machine) {
  std::mt19937 rng(10);
  for (int64_t n : {0, 3, 17}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const Values xv = ValuesOf(x), yv = ValuesOf(y);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 5);
    ExpectTensor(r[0], DType::kF32, {n}, Map(xv, [](double v) { return -v; }));
    ExpectTensor(r[1], DType::kF32, {n}, Map(xv, [](double v) { return v + 1; }), kTight);
    ExpectTensor(r[2], DType::kF32, {n}, Zip(xv, yv, [](double p, double q) { return -p * q; }), kTight);
    ExpectTensor(r[3], DType::kF32, {n}, Map(xv, [](double v) { return v + 1; }), kTight);
    ExpectTensor(r[4], DType::kF32, {n}, Map(xv, [](double v) { return 2 * v; }), kTight);
  }
}

void Comparisons(vm::VirtualMachine& machine) {
  std::mt19937 rng(11);
  for (int64_t n : {0, 8, 50}) {
    const Values a = RandomInts(n, -1, 1, rng), b = RandomInts(n, -1, 1, rng);
    const auto out = Invoke(machine, {Value(Tensor(DType::kF32, {n}, a)), Value(Tensor(DType::kF32, {n}, b))});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 7);
    const std::vector<std::function<bool(double, double)>> ops = {
        std::equal_to<double>(), std::not_equal_to<double>(), std::less<double>(),        std::greater<double>(),
        std::less_equal<double>(), std::greater_equal<double>(), [](double p, double q) { return p + 1 > q * 2; }};
    for (size_t i = 0; i < ops.size(); ++i) {
      SCOPED_TRACE(i);
      ExpectTensor(r[i], DType::kBool, {n}, Zip(a, b, [&](double p, double q) { return ops[i](p, q) ? 1.0 : 0.0; }));
    }
  }
}

void Tuples(vm::VirtualMachine& machine) {
  std::mt19937 rng(12);
  for (int64_t n : {0, 2, 9}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const Values xv = ValuesOf(x), yv = ValuesOf(y);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    ExpectTensor(r[0], DType::kF32, {n}, Zip(xv, yv, std::plus<double>()), kTight);
    ExpectTensor(r[1], DType::kF32, {n}, Zip(xv, yv, std::multiplies<double>()), kTight);
    ExpectTensor(r[2], DType::kF32, {n}, xv);
    Fields(r[3], 0);
  }
}

void TupleTypes(vm::VirtualMachine& machine) {
  std::mt19937 rng(13);
  for (int64_t n : {0, 4}) {
    for (int64_t k : {-1, 41}) {
      const NDArray a = Random({n}, rng), b = Random({n}, rng);
      const Value p = Tuple({Value(a), Tuple({Value(b), Value(I64(k))})});
      const auto out = Invoke(machine, {p});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 2);
      const std::vector<Value> swapped = Fields(r[0], 2);
      ExpectTensor(swapped[0], DType::kF32, {n}, ValuesOf(b));
      ExpectTensor(swapped[1], DType::kF32, {n}, ValuesOf(a));
      ExpectScalar(r[1], DType::kI64, static_cast<double>(k + 1));
    }
  }
}

void FunctionTypes(vm::VirtualMachine& machine) {
  std::mt19937 rng(14);
  for (int64_t n : {0, 3, 20}) {
    const NDArray x = Random({n}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {n}, Map(xv, [](double v) { return 4 * v; }), kTight);
    ExpectTensor(r[1], DType::kF32, {n}, Map(xv, [](double v) { return 2 * v + 1; }), kTight);
    ExpectTensor(r[2], DType::kF32, {n}, Map(xv, [](double v) { return 2 * (v + 1); }), kTight);
  }
}

void TypeParams(vm::VirtualMachine& machine) {
  std::mt19937 rng(15);
  for (int64_t n : {1, 6}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const auto out = Invoke(machine, {Value(x), Value(y), Value(I64(n * 10))});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    ExpectTensor(r[0], DType::kF32, {n}, ValuesOf(x));
    const std::vector<Value> swapped = Fields(r[1], 2);
    ExpectTensor(swapped[0], DType::kF32, {n}, ValuesOf(x));
    ExpectScalar(swapped[1], DType::kI64, static_cast<double>(n * 10));
    ExpectTensor(r[2], DType::kF32, {n}, Zip(ValuesOf(y), ValuesOf(x), std::plus<double>()), kTight);
    ExpectScalar(r[3], DType::kI64, static_cast<double>(n * 10));
  }
}

void AdtListGeneric(vm::VirtualMachine& machine) {
  std::mt19937 rng(16);
  for (int64_t n : {0, 5}) {
    for (int64_t k : {-7, 100}) {
      const NDArray x = Random({n}, rng);
      const auto out = Invoke(machine, {Value(x), Value(I64(k))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 4);
      ExpectScalar(r[0], DType::kI64, 2);
      ExpectScalar(r[1], DType::kI64, static_cast<double>(3 * k + 3));
      ExpectTensor(r[2], DType::kF32, {n}, Map(ValuesOf(x), [](double v) { return 3 * v; }), kTight);
      ExpectScalar(r[3], DType::kI64, 3);
    }
  }
}

void AdtOption(vm::VirtualMachine& machine) {
  std::mt19937 rng(17);
  for (bool full : {true, false}) {
    for (int64_t n : {0, 3}) {
      const NDArray x = Random({n}, rng), d = Random({n}, rng);
      const auto out = Invoke(machine, {Value(x), Value(d), Value(Bool(full))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 3);
      ExpectTensor(r[0], DType::kF32, {n}, ValuesOf(full ? x : d));
      ExpectTensor(r[1], DType::kF32, {n}, Map(ValuesOf(x), [](double v) { return v + 1; }), kTight);
      ExpectScalar(r[2], DType::kBool, 1);
    }
  }
}

// A binary search tree as adt_tree_generic.relay builds it (equal keys go right).
struct SearchTree {
  struct Node {
    int64_t key;
    std::unique_ptr<Node> left, right;
  };
  std::unique_ptr<Node> root;
  void Insert(int64_t k) {
    std::unique_ptr<Node>* at = &root;
    while (*at) at = k < (*at)->key ? &(*at)->left : &(*at)->right;
    *at = std::make_unique<Node>(Node{k, nullptr, nullptr});
  }
  static int64_t Depth(const std::unique_ptr<Node>& t) {
    return t ? 1 + std::max(Depth(t->left), Depth(t->right)) : 0;
  }
};

void AdtTreeGeneric(vm::VirtualMachine& machine) {
  std::mt19937 rng(18);
  for (int trial = 0; trial < 6; ++trial) {
    const Values keys = RandomInts(4, -5, 5, rng);
    SearchTree tree;
    std::vector<Value> args;
    for (double k : keys) {
      tree.Insert(static_cast<int64_t>(k));
      args.push_back(Value(I64(static_cast<int64_t>(k))));
    }
    const auto out = Invoke(machine, args);
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectScalar(r[0], DType::kI64, static_cast<double>(SearchTree::Depth(tree.root)));
    Values sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<Value> in_order = ListItems(r[1]);
    ASSERT_EQ(in_order.size(), sorted.size());
    for (size_t i = 0; i < sorted.size(); ++i) ExpectScalar(in_order[i], DType::kI64, sorted[i]);
    ExpectTensor(r[2], DType::kF32, {1}, {Sum(keys)});
  }
}

void MatchNested(vm::VirtualMachine& machine) {
  std::mt19937 rng(19);
  for (int64_t length : {0, 1, 2, 5}) {
    std::vector<Values> xs;
    const std::vector<Value> items = RandomTensors(length, 3, rng, xs);
    const auto out = Invoke(machine, {MakeList(items)});
    ASSERT_TRUE(out);
    const std::vector<Value> got = ListItems(*out);
    ASSERT_EQ(static_cast<int64_t>(got.size()), (length + 1) / 2);
    for (int64_t i = 0; i < length; i += 2) {
      ExpectTensor(got[i / 2], DType::kF32, {3}, i + 1 < length ? Zip(xs[i], xs[i + 1], std::plus<double>()) : xs[i],
                   kTight);
    }
  }
}

void MatchPartial(vm::VirtualMachine& machine) {
  std::mt19937 rng(20);
  for (int64_t n : {1, 4}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    ExpectTensor(r[0], DType::kF32, {n}, Zip(ValuesOf(x), ValuesOf(y), std::plus<double>()), kTight);
    ExpectTensor(r[1], DType::kF32, {n}, ValuesOf(y));
  }
}

void MatchTuplePattern(vm::VirtualMachine& machine) {
  std::mt19937 rng(21);
  for (int64_t length : {0, 1, 3}) {
    const NDArray x = Random({4}, rng), y = Random({4}, rng);
    std::vector<Values> xs;
    const std::vector<Value> items = RandomTensors(length, 4, rng, xs);
    const auto out = Invoke(machine, {Tuple({Value(x), MakeList(items)}), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    const Values want = length > 0 ? Zip(ValuesOf(x), xs[0], std::plus<double>())
                                   : Map(ValuesOf(x), [](double v) { return 2 * v; });
    ExpectTensor(r[0], DType::kF32, {4}, want, kTight);
    ExpectTensor(r[1], DType::kF32, {4}, ValuesOf(y));
  }
}

void MatchTwoScrutinees(vm::VirtualMachine& machine) {
  std::mt19937 rng(22);
  for (auto [lp, lq] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {2, 3}, {3, 3}, {4, 1}, {0, 2}}) {
    std::vector<Values> ps, qs;
    const std::vector<Value> p = RandomTensors(lp, 2, rng, ps), q = RandomTensors(lq, 2, rng, qs);
    const auto out = Invoke(machine, {MakeList(p), MakeList(q)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    const std::vector<Value> sums = ListItems(r[0]);
    ASSERT_EQ(static_cast<int64_t>(sums.size()), std::min(lp, lq));
    for (size_t i = 0; i < sums.size(); ++i) {
      ExpectTensor(sums[i], DType::kF32, {2}, Zip(ps[i], qs[i], std::plus<double>()), kTight);
    }
    ExpectScalar(r[1], DType::kBool, lp == lq);
  }
}

void MatchWildcard(vm::VirtualMachine& machine) {
  std::mt19937 rng(23);
  for (uint32_t color : {0u, 1u, 2u}) {
    const NDArray x = Random({5}, rng);
    const auto out = Invoke(machine, {Value(ADTObj::Create(color, {})), Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    const double scale = color + 1.0;
    ExpectTensor(r[0], DType::kF32, {5}, Map(ValuesOf(x), [&](double v) { return v * scale; }), kTight);
    ExpectScalar(r[1], DType::kBool, color == 0);
  }
}

void LetAnnotated(vm::VirtualMachine& machine) {
  std::mt19937 rng(24);
  for (int64_t n : {0, 1, 6}) {
    const NDArray x = Random({n}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {n}, Map(xv, [](double v) { return 2 * v + 1; }), kTight);
    Values concat = xv;
    for (double v : xv) concat.push_back(2 * v);
    ExpectTensor(r[1], DType::kF32, {2 * n}, concat, kTight);
    ExpectScalar(r[2], DType::kI64, 1);
  }
}

void LetPlain(vm::VirtualMachine& machine) {
  std::mt19937 rng(25);
  for (int64_t n : {0, 3, 33}) {
    const NDArray x = Random({n}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {n}, Map(xv, [](double v) { return std::exp(v) + 2 * std::exp(2 * v) - 1; }),
                 kLoose);
    ExpectTensor(r[1], DType::kF32, {n}, Map(xv, [](double v) { return std::exp(v); }), kLoose);
    ExpectTensor(r[2], DType::kF32, {n}, Map(xv, [](double v) { return (v + 1) * 2; }), kTight);
  }
}

void LocalRecursion(vm::VirtualMachine& machine) {
  std::mt19937 rng(26);
  for (int64_t n : {0, 4}) {
    for (int64_t k : {0, 1, 5, 12}) {
      const NDArray x = Random({n}, rng);
      const auto out = Invoke(machine, {Value(x), Value(I64(k))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 2);
      ExpectTensor(r[0], DType::kF32, {n}, Map(ValuesOf(x), [k](double v) { return std::pow(v, k); }), kLoose);
      ExpectTensor(r[1], DType::kF32, {n}, Map(ValuesOf(x), [k](double v) {
                     double s = 0;
                     for (int64_t i = 0; i <= k; ++i) s += std::pow(v, i);
                     return s;
                   }),
                   kLoose);
    }
  }
}

void GraphBindings(vm::VirtualMachine& machine) {
  std::mt19937 rng(27);
  for (bool c : {true, false}) {
    for (int64_t n : {0, 7}) {
      const NDArray x = Random({n}, rng);
      const Values xv = ValuesOf(x);
      const auto out = Invoke(machine, {Value(x), Value(Bool(c))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 3);
      ExpectTensor(r[0], DType::kF32, {n}, Map(xv, [](double v) { return 2 * std::exp(2 * v) + std::exp(v); }),
                   kLoose);
      ExpectTensor(r[1], DType::kF32, {n}, Map(xv, [](double v) { return Sigmoid(v + 1) * Sigmoid(v + 1); }), kLoose);
      ExpectTensor(r[2], DType::kF32, {n}, Map(xv, [c](double v) { return c ? std::tanh(v) * std::tanh(v) : -v; }),
                   kLoose);
    }
  }
}

void IfElse(vm::VirtualMachine& machine) {
  std::mt19937 rng(28);
  for (int64_t k : {-3, 0, 4}) {
    for (int64_t n : {1, 5}) {
      const NDArray x = RandomAwayFromZeroSum(n, rng);
      NDArray a = Random({n}, rng), b = Random({n}, rng);
      while (std::fabs(Sum(ValuesOf(a)) - Sum(ValuesOf(b))) < 1e-3) b = Random({n}, rng);
      const auto out = Invoke(machine, {Value(x), Value(I64(k)), Value(a), Value(b)});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 3);
      const double step = Sum(ValuesOf(x)) > 0 ? 1 : -1;
      ExpectTensor(r[0], DType::kF32, {n}, Map(ValuesOf(x), [&](double v) { return v + step; }), kTight);
      ExpectScalar(r[1], DType::kI64, k < 0 ? 0 : k == 0 ? 1 : 2);
      const bool a_first = Sum(ValuesOf(a)) >= Sum(ValuesOf(b));
      const std::vector<Value> ordered = Fields(r[2], 2);
      ExpectTensor(ordered[0], DType::kF32, {n}, ValuesOf(a_first ? a : b));
      ExpectTensor(ordered[1], DType::kF32, {n}, ValuesOf(a_first ? b : a));
    }
  }
}

void MutualRecursion(vm::VirtualMachine& machine) {
  // Hofstadter's sequences, memoised.
  std::map<int64_t, int64_t> f_memo, m_memo;
  std::function<int64_t(int64_t)> female, male;
  female = [&](int64_t n) -> int64_t {
    if (n == 0) return 1;
    if (!f_memo.count(n)) f_memo[n] = n - male(female(n - 1));
    return f_memo[n];
  };
  male = [&](int64_t n) -> int64_t {
    if (n == 0) return 0;
    if (!m_memo.count(n)) m_memo[n] = n - female(male(n - 1));
    return m_memo[n];
  };
  const std::vector<std::pair<int64_t, int64_t>> runs = {{0, 0}, {1, 1}, {2, 2}, {3, 5}, {100000, 12}, {99998, 15}};
  for (auto [n, m] : runs) {
    const auto out = Invoke(machine, {Value(I64(n)), Value(I64(m))});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectScalar(r[0], DType::kI64, static_cast<double>(n % 3));
    ExpectScalar(r[1], DType::kI64, static_cast<double>(female(m)));
    ExpectScalar(r[2], DType::kI64, static_cast<double>(male(m)));
  }
}

void GlobalsAsArguments(vm::VirtualMachine& machine) {
  std::mt19937 rng(29);
  for (int64_t n : {0, 3}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    ExpectTensor(r[0], DType::kF32, {n}, Map(xv, [](double v) { return 2 * v; }), kTight);
    ExpectTensor(r[1], DType::kF32, {n}, Map(xv, [](double v) { return v + 2; }), kTight);
    const std::vector<Value> squares = ListItems(r[2]);
    ASSERT_EQ(squares.size(), 2u);
    ExpectTensor(squares[0], DType::kF32, {n}, Map(xv, [](double v) { return v * v; }), kTight);
    ExpectTensor(squares[1], DType::kF32, {n}, Map(ValuesOf(y), [](double v) { return v * v; }), kTight);
    ExpectTensor(r[3], DType::kF32, {n}, Map(xv, [](double v) { return 2 * (v + 1); }), kTight);
  }
}

void GlobalsReturned(vm::VirtualMachine& machine) {
  std::mt19937 rng(30);
  for (bool c : {true, false}) {
    for (int64_t n : {0, 4}) {
      const NDArray x = Random({n}, rng), y = Random({n + 1}, rng);
      const auto out = Invoke(machine, {Value(Bool(c)), Value(x), Value(y)});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 2);
      ExpectTensor(r[0], DType::kF32, {n}, Map(ValuesOf(x), [c](double v) { return c ? 2 * v : -v; }), kTight);
      ExpectTensor(r[1], DType::kF32, {n + 1}, Map(ValuesOf(y), [c](double v) { return c ? -v : 2 * v; }), kTight);
    }
  }
}

void BiasAdd(vm::VirtualMachine& machine) {
  std::mt19937 rng(44);
  const NDArray w = Random({16, 8}, rng), b = Random({16}, rng), c = Random({3}, rng);
  const Values bv = ValuesOf(b), cv = ValuesOf(c);
  for (const auto& [n, h, wd] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{0, 1, 1}, {1, 2, 3}, {5, 4, 2}}) {
    const NDArray x = Random({n, 8}, rng), img = Random({2, 3, h, wd}, rng), d = Random({wd}, rng);
    Values dense = MatMul(ValuesOf(x), ValuesOf(w), n, 8, 16, /*transpose_b=*/true);
    for (int64_t i = 0; i < n * 16; ++i) dense[i] = std::max(0.0, dense[i] + bv[i % 16]);
    const Values iv = ValuesOf(img), dv = ValuesOf(d);
    Values per_channel, per_column;
    for (int64_t i = 0; i < static_cast<int64_t>(iv.size()); ++i) {
      per_channel.push_back(iv[i] + cv[(i / (h * wd)) % 3]);
      per_column.push_back(iv[i] + dv[i % wd]);
    }
    const auto out = Invoke(machine, {Value(x), Value(w), Value(b), Value(img), Value(c), Value(d)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {n, 16}, dense, 1e-5);
    ExpectTensor(r[1], DType::kF32, {2, 3, h, wd}, per_channel, kTight);
    ExpectTensor(r[2], DType::kF32, {2, 3, h, wd}, per_column, kTight);
  }
}

void ClosureOverParams(vm::VirtualMachine& machine) {
  std::mt19937 rng(31);
  for (int64_t n : {0, 1, 8}) {
    const NDArray x = Random({n}, rng), a = Random({n}, rng), b = Random({n}, rng);
    const Values xv = ValuesOf(x), av = ValuesOf(a), bv = ValuesOf(b);
    const auto out = Invoke(machine, {Value(x), Value(a), Value(b)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    Values w0, w1, w2;
    for (int64_t i = 0; i < n; ++i) {
      w0.push_back(xv[i] + av[i]);
      w1.push_back(av[i] * xv[i] + bv[i]);
      w2.push_back(xv[i] + av[i] + bv[i]);
    }
    ExpectTensor(r[0], DType::kF32, {n}, w0, kTight);
    ExpectTensor(r[1], DType::kF32, {n}, w1, kTight);
    ExpectTensor(r[2], DType::kF32, {n}, w2, kTight);
  }
}

void ClosureOverLets(vm::VirtualMachine& machine) {
  std::mt19937 rng(32);
  for (int64_t n : {0, 2, 16}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const Values xv = ValuesOf(x), yv = ValuesOf(y);
    const double s = Sum(xv);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    ExpectTensor(r[0], DType::kF32, {n}, Zip(yv, xv, [s](double p, double q) { return p * s + 2 * q; }), kLoose);
    ExpectTensor(r[1], DType::kF32, {n}, Zip(xv, yv, [](double p, double q) { return p * (p + 1) + q; }), kTight);
  }
}

void ClosuresInAdts(vm::VirtualMachine& machine) {
  std::mt19937 rng(33);
  for (bool some : {true, false}) {
    for (int64_t n : {0, 5}) {
      const NDArray x = Random({n}, rng), a = Random({n}, rng), y = Random({n}, rng);
      const Values xv = ValuesOf(x), av = ValuesOf(a), yv = ValuesOf(y);
      const auto out = Invoke(machine, {Value(x), Value(a), Value(y), Value(Bool(some))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 2);
      Values w0, w1;
      for (int64_t i = 0; i < n; ++i) {
        w0.push_back((xv[i] + av[i]) * 2 - yv[i]);
        w1.push_back(some ? xv[i] * av[i] : xv[i]);
      }
      ExpectTensor(r[0], DType::kF32, {n}, w0, kTight);
      ExpectTensor(r[1], DType::kF32, {n}, w1, kTight);
    }
  }
}

void ClosuresInTuples(vm::VirtualMachine& machine) {
  std::mt19937 rng(34);
  for (int64_t n : {0, 3, 12}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const Values xv = ValuesOf(x), yv = ValuesOf(y);
    const double s = Sum(xv);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {n}, Zip(xv, yv, std::plus<double>()), kTight);
    ExpectTensor(r[1], DType::kF32, {n}, Zip(xv, yv, std::multiplies<double>()), kTight);
    const std::vector<Value> pair = Fields(r[2], 2);
    ExpectTensor(pair[0], DType::kF32, {n}, Map(yv, [s](double v) { return v + s; }), kLoose);
    ExpectTensor(pair[1], DType::kF32, {n}, Map(yv, [s](double v) { return v * s; }), kLoose);
  }
}

void PartialApplication(vm::VirtualMachine& machine) {
  std::mt19937 rng(35);
  for (int64_t n : {0, 6}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const Values diff = Zip(ValuesOf(x), ValuesOf(y), std::minus<double>());
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    ExpectTensor(r[0], DType::kF32, {n}, diff, kTight);
    ExpectTensor(r[1], DType::kF32, {n}, diff, kTight);
    ExpectTensor(r[2], DType::kF32, {n}, Map(diff, [](double v) { return -v; }), kTight);
  }
}

void SymbolicDims(vm::VirtualMachine& machine) {
  std::mt19937 rng(36);
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}, {3, 5}, {16, 2}}) {
    const NDArray x = Random({n, 4}, rng), y = Random({m, 4}, rng);
    const Values xv = ValuesOf(x), yv = ValuesOf(y);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    Values xy = xv, xx = xv, row_sums;
    xy.insert(xy.end(), yv.begin(), yv.end());
    xx.insert(xx.end(), xv.begin(), xv.end());
    for (int64_t i = 0; i < m; ++i) row_sums.push_back(yv[i * 4] + yv[i * 4 + 1] + yv[i * 4 + 2] + yv[i * 4 + 3]);
    ExpectTensor(r[0], DType::kF32, {n + m, 4}, xy);
    ExpectTensor(r[1], DType::kF32, {2 * n, 4}, xx);
    ExpectTensor(r[2], DType::kF32, {4 * n}, xv);
    ExpectTensor(r[3], DType::kF32, {m}, row_sums, kTight);
  }
}

void AnyDims(vm::VirtualMachine& machine) {
  std::mt19937 rng(37);
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}, {5, 4}, {0, 2}}) {
    const NDArray x = Random({rows, cols}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 3);
    Values t(rows * cols), col_sums(cols, 0.0), scaled(rows * cols);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        t[j * rows + i] = xv[i * cols + j];
        col_sums[j] += xv[i * cols + j];
        scaled[i * cols + j] = xv[i * cols + j] * xv[i * cols];
      }
    }
    ExpectTensor(r[0], DType::kF32, {cols, rows}, t);
    ExpectTensor(r[1], DType::kF32, {cols}, col_sums, kTight);
    ExpectTensor(r[2], DType::kF32, {rows, cols}, scaled, kTight);
  }
}

void FnLiteralApplied(vm::VirtualMachine& machine) {
  std::mt19937 rng(38);
  for (int64_t n : {0, 1, 10}) {
    const NDArray x = Random({n}, rng), y = Random({n}, rng);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 2);
    ExpectTensor(r[0], DType::kF32, {n},
                 Zip(ValuesOf(x), ValuesOf(y), [](double p, double q) { return std::max(0.0, 2 * p + q); }), kTight);
    ExpectTensor(r[1], DType::kF32, {n}, Map(ValuesOf(x), [](double v) { return 2 * std::exp(v); }), kLoose);
  }
}

void SplitConcat(vm::VirtualMachine& machine) {
  std::mt19937 rng(39);
  for (int64_t n : {0, 1, 3}) {
    const NDArray x = Random({n, 6}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    Values rotated;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < 6; ++j) rotated.push_back(xv[i * 6 + (j + 3) % 6]);
    }
    ExpectTensor(r[0], DType::kF32, {n, 6}, rotated);
    ExpectTensor(r[1], DType::kF32, {n, 1}, Columns(xv, n, 6, 0, 1));
    ExpectTensor(r[2], DType::kF32, {n, 3}, Columns(xv, n, 6, 1, 4));
    ExpectTensor(r[3], DType::kF32, {n, 2}, Columns(xv, n, 6, 4, 6));
  }
}

void CastAndCreation(vm::VirtualMachine& machine) {
  std::mt19937 rng(40);
  for (int64_t n : {0, 7}) {
    const NDArray x = Random({n}, rng);
    const Values floors = Map(ValuesOf(x), [](double v) { return std::floor(4 * v); });
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    ExpectTensor(r[0], DType::kI32, {n}, floors);
    ExpectTensor(r[1], DType::kF32, {n}, Map(floors, [](double v) { return v / 4; }));
    ExpectTensor(r[2], DType::kI64, {3}, {2, 2, 2});
    ExpectTensor(r[3], DType::kF32, {2, 2}, {2.5, 2.5, 2.5, 2.5});
  }
}

void Reductions(vm::VirtualMachine& machine) {
  std::mt19937 rng(41);
  for (int64_t n : {1, 2, 7}) {
    const NDArray x = Random({n, 3}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 5);
    Values row_sums, col_sums(3, 0.0), row_max;
    for (int64_t i = 0; i < n; ++i) {
      row_sums.push_back(xv[i * 3] + xv[i * 3 + 1] + xv[i * 3 + 2]);
      row_max.push_back(std::max({xv[i * 3], xv[i * 3 + 1], xv[i * 3 + 2]}));
      for (int j = 0; j < 3; ++j) col_sums[j] += xv[i * 3 + j];
    }
    ExpectTensor(r[0], DType::kF32, {n, 1}, row_sums, kTight);
    ExpectTensor(r[1], DType::kF32, {3}, Map(col_sums, [n](double v) { return v / n; }), kTight);
    ExpectTensor(r[2], DType::kF32, {n}, row_max);
    ExpectTensor(r[3], DType::kF32, {3}, col_sums, kTight);
    ExpectScalar(r[4], DType::kF32, Sum(xv), kTight);
  }
}

void ElementwiseOps(vm::VirtualMachine& machine) {
  std::mt19937 rng(42);
  for (int64_t n : {0, 5, 100}) {
    const NDArray x = Random({n}, rng, -3, 3), y = Random({n}, rng, -3, 3);
    const Values xv = ValuesOf(x), yv = ValuesOf(y);
    const auto out = Invoke(machine, {Value(x), Value(y)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 7);
    ExpectTensor(r[0], DType::kF32, {n}, Map(xv, Sigmoid), kLoose);
    ExpectTensor(r[1], DType::kF32, {n}, Map(xv, [](double v) { return std::tanh(v); }), kLoose);
    ExpectTensor(r[2], DType::kF32, {n}, Map(xv, [](double v) { return std::max(v, 0.0); }));
    ExpectTensor(r[3], DType::kF32, {n}, Map(xv, [](double v) { return std::clamp(v, -0.5, 0.5); }));
    ExpectTensor(r[4], DType::kF32, {n}, Map(xv, [](double v) { return v < 0 ? 0.1 * v : v; }), kTight);
    ExpectTensor(r[5], DType::kF32, {n}, Zip(xv, yv, [](double p, double q) { return std::max(p, q); }));
    ExpectTensor(r[6], DType::kF32, {n}, Zip(xv, yv, [](double p, double q) { return p < q ? p : 2 * q; }));
  }
}

void TailLoop(vm::VirtualMachine& machine) {
  const Values acc = {0, 0.5, -1, 2};
  for (int64_t n : {0, 1, 10, 1000}) {
    const auto out = Invoke(machine, {Value(I64(n)), Value(Tensor(DType::kF32, {4}, acc))});
    ASSERT_TRUE(out);
    ExpectTensor(*out, DType::kF32, {4}, Map(acc, [n](double v) { return v + static_cast<double>(n); }));
  }
}

// The cells' writes happen in order: none is merged with another read or dropped.
void References(vm::VirtualMachine& machine) {
  std::mt19937 rng(43);
  for (int64_t len : {0, 3}) {
    for (int64_t n : {0, 1, 4}) {
      const NDArray x = Random({len}, rng);
      const Values xv = ValuesOf(x);
      const auto out = Invoke(machine, {Value(x), Value(I64(n))});
      ASSERT_TRUE(out);
      const std::vector<Value> r = Fields(*out, 4);
      ExpectTensor(r[0], DType::kF32, {len}, Map(xv, [n](double v) { return v * static_cast<double>(n + 1); }),
                   kTight);
      ExpectScalar(r[1], DType::kI64, 2);
      ExpectScalar(r[2], DType::kI64, 1);
      const std::vector<Value> read_twice = Fields(r[3], 2);
      ExpectScalar(read_twice[0], DType::kI64, 1);
      ExpectScalar(read_twice[1], DType::kI64, 5);
    }
  }
}

void GenericClosures(vm::VirtualMachine& machine) {
  std::mt19937 rng(44);
  for (int64_t k : {0, 1, 3}) {
    const NDArray x = Random({4}, rng);
    const Values xv = ValuesOf(x);
    const auto out = Invoke(machine, {Value(I64(k)), Value(x)});
    ASSERT_TRUE(out);
    const std::vector<Value> r = Fields(*out, 4);
    ExpectScalar(r[0], DType::kI64, static_cast<double>(k));
    ExpectTensor(r[1], DType::kF32, {4}, xv);
    ExpectScalar(r[2], DType::kI64, static_cast<double>(k));
    ExpectTensor(r[3], DType::kF32, {4}, Map(xv, [k](double v) { return std::pow(v, static_cast<double>(k + 1)); }),
                 kTight);
  }
}

}  // namespace

std::vector<Case> FeatureCases() {
  return {
      {"literal_float32.relay", LiteralFloat32},
      {"literal_float16.relay", LiteralFloat16},
      {"literal_float64.relay", LiteralFloat64},
      {"literal_int64.relay", LiteralInt64},
      {"literal_uint8.relay", LiteralUint8},
      {"literal_small_ints.relay", LiteralSmallInts},
      {"literal_bool.relay", LiteralBool},
      {"attrs_none.relay", AttrsNone},
      {"attrs_nested_list.relay", AttrsNestedList},
      {"infix_precedence.relay", InfixPrecedence},
      {"unary_minus.relay", UnaryMinus},
      {"comparisons.relay", Comparisons},
      {"tuples.relay", Tuples},
      {"tuple_types.relay", TupleTypes},
      {"function_types.relay", FunctionTypes},
      {"type_params.relay", TypeParams},
      {"adt_list_generic.relay", AdtListGeneric},
      {"adt_option.relay", AdtOption},
      {"adt_tree_generic.relay", AdtTreeGeneric},
      {"match_nested.relay", MatchNested},
      {"match_partial.relay", MatchPartial},
      {"match_tuple_pattern.relay", MatchTuplePattern},
      {"match_two_scrutinees.relay", MatchTwoScrutinees},
      {"match_wildcard.relay", MatchWildcard},
      {"let_annotated.relay", LetAnnotated},
      {"let_plain.relay", LetPlain},
      {"local_recursion.relay", LocalRecursion},
      {"graph_bindings.relay", GraphBindings},
      {"if_else.relay", IfElse},
      {"mutual_recursion.relay", MutualRecursion},
      {"globals_as_arguments.relay", GlobalsAsArguments},
      {"globals_returned.relay", GlobalsReturned},
      {"bias_add.relay", BiasAdd},
      {"closure_over_params.relay", ClosureOverParams},
      {"closure_over_lets.relay", ClosureOverLets},
      {"closures_in_adts.relay", ClosuresInAdts},
      {"closures_in_tuples.relay", ClosuresInTuples},
      {"partial_application.relay", PartialApplication},
      {"symbolic_dims.relay", SymbolicDims},
      {"any_dims.relay", AnyDims},
      {"fn_literal_applied.relay", FnLiteralApplied},
      {"split_concat.relay", SplitConcat},
      {"cast_and_creation.relay", CastAndCreation},
      {"reductions.relay", Reductions},
      {"elementwise_ops.relay", ElementwiseOps},
      {"tail_loop.relay", TailLoop},
      {"closure_loop.relay", TailLoop},
      {"references.relay", References},
      {"generic_closures.relay", GenericClosures},
  };
}

}  // namespace dynvm::compiler::corpus
