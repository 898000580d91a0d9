// The end-to-end programs of tests/compiler/e2e/*.relay: each compiled by the pipeline
// (compiler/driver/compile.h), written as an executable file and loaded back, then run
// by the VM and checked against references computed here in double precision.
// Tolerances: float32 sums of at most 64 products of values in [-1, 1] against double,
// 1e-4 absolute (and relative where values grow), stated per test.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "serializer/api.h"
#include "tests/compiler/compile_and_load.h"
#include "tests/compiler/reference_math.h"
#include "tools/file_util.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

using Matrix = std::vector<double>;  // row-major
using testing::MatMul;
using testing::SoftmaxRows;

// The pipelines every program runs through: each optimisation level, and the default
// without fusion.
struct Pipeline {
  int opt_level;
  bool fuse;
};

class EndToEndTest : public ::testing::TestWithParam<Pipeline> {};

std::shared_ptr<const vm::Executable> CompileFile(const std::string& name, const Pipeline& pipeline) {
  const std::string path = std::string(DYNVM_E2E_DIR) + "/" + name;
  absl::StatusOr<std::string> text = tools::ReadFileOrStdin(path);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return nullptr;
  CompileOptions options;
  options.opt_level = pipeline.opt_level;
  options.fuse = pipeline.fuse;
  return testing::ParseCompileAndLoad(*text, path, options);
}

NDArray F32(const Shape& shape, std::mt19937& rng) {
  NDArray t = *NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < t->num_elements(); ++i) t->data_as<float>()[i] = dist(rng);
  return t;
}

NDArray I64(int64_t v) {
  NDArray t = *NDArrayObj::Empty({}, DType::kI64, MakeNaiveAllocator());
  *t->data_as<int64_t>() = v;
  return t;
}

Matrix Values(const NDArrayObj& t) {
  return Matrix(t.data_as<float>(), t.data_as<float>() + t.num_elements());
}

void ExpectNear(const NDArrayObj& got, const Matrix& want, double tolerance) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got.data_as<float>()[i], want[i], tolerance * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

TEST_P(EndToEndTest, MutualRecursionInTailPosition) {
  const auto exe = CompileFile("mutual_recursion.relay", GetParam());
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  for (int64_t n : {0, 1, 10, 100001}) {  // 100001 frames would pass the depth limit
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(I64(n))});
    ASSERT_TRUE(out.ok()) << n << ": " << out.status();
    EXPECT_EQ(*out->As<NDArrayObj>()->data_as<uint8_t>(), n % 2 == 0) << n;
  }
}

TEST_P(EndToEndTest, HigherOrderFunctions) {
  const auto exe = CompileFile("higher_order.relay", GetParam());
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(3);
  for (int64_t len : {0, 1, 5}) {
    for (int32_t n : {0, 3, 7}) {
      const NDArray x = F32({len}, rng);
      NDArray count = *NDArrayObj::Empty({}, DType::kI32, MakeNaiveAllocator());
      *count->data_as<int32_t>() = n;
      absl::StatusOr<Value> out = machine.Invoke("main", {Value(x), Value(count)});
      ASSERT_TRUE(out.ok()) << out.status();
      const ADTObj& r = *out->As<ADTObj>();
      Matrix folded, powered, applied;
      for (int64_t i = 0; i < len; ++i) {
        const double v = x->data_as<float>()[i];
        folded.push_back(17 * v);
        powered.push_back(v * std::ldexp(1.0, n));
        applied.push_back((v + 1) * v);
      }
      ExpectNear(*r.fields()[0].As<NDArrayObj>(), folded, 1e-6);
      EXPECT_EQ(*r.fields()[1].As<NDArrayObj>()->data_as<uint8_t>(), n % 2 == 0) << n;
      ExpectNear(*r.fields()[2].As<NDArrayObj>(), powered, 1e-6);
      ExpectNear(*r.fields()[3].As<NDArrayObj>(), applied, 1e-6);
    }
  }
}

TEST_P(EndToEndTest, ListsOfTensors) {
  const auto exe = CompileFile("lists.relay", GetParam());
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(1);
  for (int64_t n : {1, 5}) {
    const NDArray x = F32({n}, rng);
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
    ASSERT_TRUE(out.ok()) << out.status();
    const ADTObj& r = *out->As<ADTObj>();
    EXPECT_EQ(*r.fields()[0].As<NDArrayObj>()->data_as<int64_t>(), 3);
    Matrix last, sum, alternating;
    for (int64_t i = 0; i < n; ++i) {
      const double v = x->data_as<float>()[i];
      last.push_back(-2 * v);
      sum.push_back(v + std::exp(v) - v);
      alternating.push_back(v - (std::exp(v) - (-v - 0)));
    }
    // Two or three float32 additions of values below e: 1e-6.
    ExpectNear(*r.fields()[1].As<NDArrayObj>(), last, 1e-6);
    ExpectNear(*r.fields()[2].As<NDArrayObj>(), sum, 1e-6);
    ExpectNear(*r.fields()[3].As<NDArrayObj>(), alternating, 1e-6);
  }
}

// Random trees of 1 to 15 nodes with [1, 8] tensors; the cell computed here in double.
TEST_P(EndToEndTest, TreeSizeAndRecursiveCell) {
  const auto exe = CompileFile("tree.relay", GetParam());
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(2);
  const NDArray w = F32({8, 8}, rng), u = F32({8, 8}, rng);
  const Matrix wv = Values(*w), uv = Values(*u);
  struct Built {
    Value value;
    Matrix state;
    int64_t size;
  };
  // Leaf is tag 0, Node tag 1 (their order in the type definition).
  const std::function<Built(int)> build = [&](int depth) -> Built {
    const NDArray x = F32({1, 8}, rng);
    Matrix h = MatMul(Values(*x), wv, 1, 8, 8, /*transpose_b=*/true);
    if (depth == 0 || std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      for (double& v : h) v = std::tanh(v);
      return {Value(ADTObj::Create(0, {Value(x)})), h, 1};
    }
    const Built l = build(depth - 1), r = build(depth - 1);
    Matrix children(8);
    for (int i = 0; i < 8; ++i) children[i] = l.state[i] + r.state[i];
    const Matrix uc = MatMul(children, uv, 1, 8, 8, /*transpose_b=*/true);
    for (int i = 0; i < 8; ++i) h[i] = std::tanh(h[i] + uc[i]);
    return {Value(ADTObj::Create(1, {Value(x), l.value, r.value})), h, l.size + r.size + 1};
  };
  for (int trial = 0; trial < 10; ++trial) {
    const Built tree = build(3);
    absl::StatusOr<Value> out = machine.Invoke("main", {tree.value, Value(w), Value(u)});
    ASSERT_TRUE(out.ok()) << out.status();
    const ADTObj& r = *out->As<ADTObj>();
    EXPECT_EQ(*r.fields()[0].As<NDArrayObj>()->data_as<int64_t>(), tree.size);
    // tanh of sums of 8 products per level, a few levels deep: 1e-5.
    ExpectNear(*r.fields()[1].As<NDArrayObj>(), tree.state, 1e-5);
  }
}

TEST_P(EndToEndTest, AttentionAtEveryLengthFromOneExecutable) {
  const auto exe = CompileFile("attention.relay", GetParam());
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(3);
  const NDArray wq = F32({64, 64}, rng), wk = F32({64, 64}, rng), wv = F32({64, 64}, rng),
                wo = F32({64, 64}, rng);
  for (int64_t n : {1, 7, 128, 384}) {
    SCOPED_TRACE(n);
    const NDArray x = F32({n, 64}, rng);
    const Matrix xv = Values(*x);
    const Matrix q = MatMul(xv, Values(*wq), n, 64, 64, true), k = MatMul(xv, Values(*wk), n, 64, 64, true),
                 v = MatMul(xv, Values(*wv), n, 64, 64, true);
    // Single head.
    Matrix s = MatMul(q, k, n, 64, n, true);
    for (double& e : s) e *= 0.125;
    SoftmaxRows(s, n, n);
    absl::StatusOr<Value> single = machine.Invoke("single_head", {Value(x), Value(wq), Value(wk), Value(wv)});
    ASSERT_TRUE(single.ok()) << single.status();
    // Sums of 64 products of values up to ~8 in float32: 1e-4 relative.
    ExpectNear(*single->As<NDArrayObj>(), MatMul(s, v, n, n, 64, false), 1e-4);
    // Four heads of 16.
    Matrix concat(n * 64);
    for (int h = 0; h < 4; ++h) {
      Matrix qh(n * 16), kh(n * 16), vh(n * 16);
      for (int64_t i = 0; i < n; ++i) {
        for (int c = 0; c < 16; ++c) {
          qh[i * 16 + c] = q[i * 64 + h * 16 + c];
          kh[i * 16 + c] = k[i * 64 + h * 16 + c];
          vh[i * 16 + c] = v[i * 64 + h * 16 + c];
        }
      }
      Matrix sh = MatMul(qh, kh, n, 16, n, true);
      for (double& e : sh) e *= 0.25;
      SoftmaxRows(sh, n, n);
      const Matrix oh = MatMul(sh, vh, n, n, 16, false);
      for (int64_t i = 0; i < n; ++i) {
        for (int c = 0; c < 16; ++c) concat[i * 64 + h * 16 + c] = oh[i * 16 + c];
      }
    }
    absl::StatusOr<Value> multi =
        machine.Invoke("multi_head", {Value(x), Value(wq), Value(wk), Value(wv), Value(wo)});
    ASSERT_TRUE(multi.ok()) << multi.status();
    ExpectNear(*multi->As<NDArrayObj>(), MatMul(concat, Values(*wo), n, 64, 64, true), 1e-4);
  }
}

TEST_P(EndToEndTest, DataDependentShapes) {
  const auto exe = CompileFile("nonzero.relay", GetParam());
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::mt19937 rng(4);
  for (int64_t n : {0, 1, 9, 100}) {
    const NDArray x = F32({n}, rng);
    absl::StatusOr<Value> out = machine.Invoke("main", {Value(x)});
    ASSERT_TRUE(out.ok()) << out.status();
    Matrix want;
    for (int64_t i = 0; i < n; ++i) {
      if (x->data_as<float>()[i] > 0) want.push_back(x->data_as<float>()[i]);
    }
    ExpectNear(*out->As<NDArrayObj>(), want, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Pipelines, EndToEndTest,
                         ::testing::Values(Pipeline{0, true}, Pipeline{1, true}, Pipeline{2, true},
                                           Pipeline{2, false}),
                         [](const ::testing::TestParamInfo<Pipeline>& info) {
                           return absl::StrCat("O", info.param.opt_level, info.param.fuse ? "" : "NoFuse");
                         });

}  // namespace
}  // namespace dynvm::compiler
