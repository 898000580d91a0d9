// The indexing converters (GatherND, ScatterND, Scatter, ReverseSequence, MaxUnpool) on
// shapes the conformance cases leave out (extents known only at run time, extents of 0
// and 1, negative indices and axes), against references computed here; bad indices
// must be errors when the model runs, bad attributes errors when it is imported.
// Every check moves or adds a few exact values, so results must match exactly.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/frontend/onnx/model_builder.h"
#include "vm/executable.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using ::dynvm::compiler::onnx_frontend::testing::AddIntAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::Counting;
using ::dynvm::compiler::onnx_frontend::testing::ExpectError;
using ::dynvm::compiler::onnx_frontend::testing::ExpectErrorMentions;
using ::dynvm::compiler::onnx_frontend::testing::Import;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::Model;
using ::testing::HasSubstr;

void AddIntsAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (const int64_t v : values) a->add_ints(v);
}

void AddStringAttr(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

// An int64 tensor of `shape` holding `values`.
NDArray Ints(const std::vector<int64_t>& shape, const std::vector<int64_t>& values,
             const std::shared_ptr<Allocator>& allocator) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty(shape, DType::kI64, allocator);
  EXPECT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->num_elements(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), (*t)->data_as<int64_t>());
  return *t;
}

std::vector<float> Floats(const NDArrayObj& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.num_elements());
}

std::vector<int64_t> ShapeOf(const NDArrayObj& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); }

// Runs main on `inputs`, expecting a float tensor of `shape` holding `want`.
void ExpectRun(vm::VirtualMachine& machine, const std::vector<Value>& inputs, const std::vector<int64_t>& shape,
               const std::vector<float>& want) {
  absl::StatusOr<Value> got = machine.Invoke("main", inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj& y = *got->As<NDArrayObj>();
  ASSERT_EQ(ShapeOf(y), shape);
  EXPECT_EQ(Floats(y), want);
}

// Runs main on `inputs`, expecting an InvalidArgument mentioning `text`.
void ExpectRunError(vm::VirtualMachine& machine, const std::vector<Value>& inputs, const std::string& text) {
  absl::StatusOr<Value> got = machine.Invoke("main", inputs);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
  EXPECT_THAT(std::string(got.status().message()), HasSubstr(text));
}

// GatherND with batch_dims 1 and pairs of indices into data [b, h, w, 2] whose extents
// are all but the last known only at run time; negative indices count from the end.
TEST(IndexingConvertersTest, GatherNDBatchedOverRunTimeExtents) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"b", "h", "w", "2"});
  // The indices' batch extent named apart from the data's, so that a mismatch reaches
  // the converted model.
  AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"c", "n", "2"});
  AddIntAttr(AddNode(g, "GatherND", {"data", "indices"}, {"y"}), "batch_dims", 1);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", "", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const auto& [b, h, w, n] : {std::tuple{2, 3, 4, 5}, {1, 1, 1, 3}, {3, 2, 5, 0}}) {
    SCOPED_TRACE(absl::StrFormat("b %d, h %d, w %d, n %d", b, h, w, n));
    const NDArray data = Counting({b, h, w, 2}, allocator);
    std::vector<int64_t> indices;
    std::vector<float> want;
    for (int64_t e = 0; e < b * n; ++e) {
      const int64_t i = (e * 7) % (2 * h) - h, j = (e * 5 + 1) % (2 * w) - w;  // in [-h, h), [-w, w)
      indices.push_back(i);
      indices.push_back(j);
      const int64_t row = ((e / n) * h + (i < 0 ? i + h : i)) * w + (j < 0 ? j + w : j);
      want.push_back(static_cast<float>(2 * row + 1));
      want.push_back(static_cast<float>(2 * row + 2));
    }
    ExpectRun(machine, {Value(data), Value(Ints({b, n, 2}, indices, allocator))}, {b, n, 2}, want);
  }
  // [0, 5] into [3, 4] would be the element [1, 1] if only the position were checked.
  ExpectRunError(machine, {Value(Counting({1, 3, 4, 2}, allocator)), Value(Ints({1, 1, 2}, {0, 5}, allocator))},
                 "index 5");
  ExpectRunError(machine, {Value(Counting({1, 3, 4, 2}, allocator)), Value(Ints({1, 1, 2}, {-4, 0}, allocator))},
                 "index -4");
  // Batch extents that differ when the model runs.
  ExpectRunError(machine, {Value(Counting({2, 3, 4, 2}, allocator)), Value(Ints({1, 1, 2}, {0, 0}, allocator))},
                 "batch_dims");
}

TEST(IndexingConvertersTest, GatherNDRejectsBadBatchDimsAndTuples) {
  // The output declared of the rank ONNX's shape inference gives it, which runs first.
  const auto model = [](int64_t batch_dims, const std::string& tuple, const std::vector<std::string>& out) {
    onnx::ModelProto m = Model(13);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"2", "3"});
    AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"2", tuple});
    AddIntAttr(AddNode(g, "GatherND", {"data", "indices"}, {"y"}), "batch_dims", batch_dims);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, out);
    return m;
  };
  ExpectError(Import(model(-1, "1", {"", "", ""})), absl::StatusCode::kInvalidArgument,
              "batch_dims -1, expected one in [0, 2)");
  ExpectError(Import(model(0, "k", {""})), absl::StatusCode::kUnimplemented, "known only at run time");
}

// ScatterND with reduction add and single indices into data [n, 3] (n known at run
// time): duplicates accumulate, negative indices count from the end, no index is fine.
TEST(IndexingConvertersTest, ScatterNDAddsRowsOverRunTimeExtents) {
  onnx::ModelProto m = Model(16);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"n", "3"});
  AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"m", "1"});
  AddValue(g->mutable_input(), "updates", onnx::TensorProto::FLOAT, {"m", "3"});
  AddStringAttr(AddNode(g, "ScatterND", {"data", "indices", "updates"}, {"y"}), "reduction", "add");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const auto& [n, indices] : {std::tuple{4, std::vector<int64_t>{0, -1, 2, 0, -4, 3}},
                                   {1, std::vector<int64_t>{0, -1, 0}}, {2, std::vector<int64_t>{}}}) {
    SCOPED_TRACE(absl::StrFormat("n %d, m %d", n, indices.size()));
    const int64_t count = static_cast<int64_t>(indices.size());
    const NDArray data = Counting({n, 3}, allocator);
    const NDArray updates = Counting({count, 3}, allocator);
    std::vector<float> want = Floats(*data);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t row = indices[i] < 0 ? indices[i] + n : indices[i];
      for (int64_t c = 0; c < 3; ++c) want[row * 3 + c] += updates->data_as<float>()[i * 3 + c];
    }
    ExpectRun(machine, {Value(data), Value(Ints({count, 1}, indices, allocator)), Value(updates)}, {n, 3}, want);
  }
  ExpectRunError(machine, {Value(Counting({4, 3}, allocator)), Value(Ints({1, 1}, {4}, allocator)),
                           Value(Counting({1, 3}, allocator))}, "index 4");
}

// ScatterND with pairs of indices (the default reduction) into data [p, q] of extents
// known at run time: each pair replaces one element.
TEST(IndexingConvertersTest, ScatterNDReplacesElementsByPairs) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"p", "q"});
  AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"m", "2"});
  AddValue(g->mutable_input(), "updates", onnx::TensorProto::FLOAT, {"m"});
  AddNode(g, "ScatterND", {"data", "indices", "updates"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"p", "q"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const NDArray data = Counting({3, 4}, allocator);
  std::vector<float> want = Floats(*data);
  want[0 * 4 + 3] = 1;  // [0, -1]
  want[2 * 4 + 1] = 2;  // [-1, 1]
  want[1 * 4 + 0] = 3;  // [1, -4]
  ExpectRun(machine, {Value(data), Value(Ints({3, 2}, {0, -1, -1, 1, 1, -4}, allocator)),
                      Value(Counting({3}, allocator))}, {3, 4}, want);
  // [0, 4] would be the element [1, 0] if only the position were checked.
  ExpectRunError(machine, {Value(data), Value(Ints({1, 2}, {0, 4}, allocator)), Value(Counting({1}, allocator))},
                 "index 4");
}

// One index tuple (indices of rank 1) into data [p, q, 2] of extents known at run time:
// GatherND reads the row [i, j, :], ScatterND multiplies it.
TEST(IndexingConvertersTest, GatherAndScatterNDOfOneTuple) {
  onnx::ModelProto m = Model(16);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"p", "q", "2"});
  AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"2"});
  AddValue(g->mutable_input(), "updates", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "GatherND", {"data", "indices"}, {"row"});
  AddStringAttr(AddNode(g, "ScatterND", {"data", "indices", "updates"}, {"scaled"}), "reduction", "mul");
  AddValue(g->mutable_output(), "row", onnx::TensorProto::FLOAT, {"2"});
  AddValue(g->mutable_output(), "scaled", onnx::TensorProto::FLOAT, {"p", "q", "2"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const NDArray data = Counting({3, 1, 2}, allocator);
  const NDArray updates = Counting({2}, allocator);
  absl::StatusOr<Value> got = machine.Invoke("main", {Value(data), Value(Ints({2}, {-2, 0}, allocator)),
                                                      Value(updates)});
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj& row = *got->As<ADTObj>()->fields()[0].As<NDArrayObj>();
  const NDArrayObj& scaled = *got->As<ADTObj>()->fields()[1].As<NDArrayObj>();
  EXPECT_EQ(ShapeOf(row), (std::vector<int64_t>{2}));
  EXPECT_EQ(Floats(row), (std::vector<float>{3, 4}));
  EXPECT_EQ(ShapeOf(scaled), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(Floats(scaled), (std::vector<float>{1, 2, 3, 8, 5, 6}));
  ExpectRunError(machine, {Value(data), Value(Ints({2}, {0, 1}, allocator)), Value(updates)}, "index 1");
}

TEST(IndexingConvertersTest, ScatterNDRejectsBadReductionAndUpdates) {
  const auto model = [](int64_t opset, const std::string& reduction, const std::string& updates_extent) {
    onnx::ModelProto m = Model(opset);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"4", "3"});
    AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"2", "1"});
    AddValue(g->mutable_input(), "updates", onnx::TensorProto::FLOAT, {"2", updates_extent});
    AddStringAttr(AddNode(g, "ScatterND", {"data", "indices", "updates"}, {"y"}), "reduction", reduction);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"4", "3"});
    return m;
  };
  ExpectError(Import(model(16, "max", "3")), absl::StatusCode::kInvalidArgument,
              "attribute 'reduction' must be \"none\", \"add\" or \"mul\", got \"max\"");
  ExpectError(Import(model(16, "add", "4")), absl::StatusCode::kInvalidArgument, "expected Tensor[(2, 3), float32]");
}

// The deprecated Scatter (opset 10) is ScatterElements: a negative axis, data rows
// known at run time.
TEST(IndexingConvertersTest, ScatterIsScatterElements) {
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "data", onnx::TensorProto::FLOAT, {"n", "3"});
  AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"1", "2"});
  AddValue(g->mutable_input(), "updates", onnx::TensorProto::FLOAT, {"1", "2"});
  AddIntAttr(AddNode(g, "Scatter", {"data", "indices", "updates"}, {"y"}), "axis", -1);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const NDArray updates = Counting({1, 2}, allocator);
  ExpectRun(machine, {Value(Counting({1, 3}, allocator)), Value(Ints({1, 2}, {2, 0}, allocator)), Value(updates)},
            {1, 3}, {2, 2, 1});
  ExpectRunError(machine, {Value(Counting({2, 3}, allocator)), Value(Ints({1, 2}, {3, 0}, allocator)),
                           Value(updates)}, "index 3");

  m.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_i(2);
  ExpectErrorMentions(Import(m), "scatter_elements: axis 2 out of range for rank 2");
}

// ReverseSequence over time-major [t, b, 2] and batch-major [b, t] inputs whose extents
// are known only at run time, with lengths of 0, 1 and the whole sequence.
TEST(IndexingConvertersTest, ReverseSequenceOverRunTimeExtents) {
  for (const bool time_major : {true, false}) {
    SCOPED_TRACE(time_major ? "time major" : "batch major");
    onnx::ModelProto m = Model(10);
    onnx::GraphProto* g = m.mutable_graph();
    const std::vector<std::string> dims = time_major ? std::vector<std::string>{"t", "b", "2"}
                                                     : std::vector<std::string>{"b", "t"};
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, dims);
    AddValue(g->mutable_input(), "lens", onnx::TensorProto::INT64, {"lens"});  // not tied to the batch
    onnx::NodeProto* node = AddNode(g, "ReverseSequence", {"x", "lens"}, {"y"});
    AddIntAttr(node, "time_axis", time_major ? 0 : 1);
    AddIntAttr(node, "batch_axis", time_major ? 1 : 0);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, dims);
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    auto allocator = MakePooledAllocator();
    vm::VirtualMachine machine(exe);
    const int64_t inner = time_major ? 2 : 1;
    for (const auto& [steps, lens] : {std::tuple{5, std::vector<int64_t>{0, 1, 5, 3}},
                                      {1, std::vector<int64_t>{1, 0}}, {3, std::vector<int64_t>{}}}) {
      const int64_t t = steps;  // a variable the lambda below may capture (not a structured binding)
      const int64_t b = static_cast<int64_t>(lens.size());
      SCOPED_TRACE(absl::StrFormat("t %d, b %d", t, b));
      const std::vector<int64_t> shape = time_major ? std::vector<int64_t>{t, b, 2} : std::vector<int64_t>{b, t};
      const NDArray x = Counting(shape, allocator);
      // The element at (time ti, batch bi, c) in either layout.
      const auto at = [&](int64_t ti, int64_t bi, int64_t c) {
        return time_major ? (ti * b + bi) * inner + c : bi * t + ti;
      };
      std::vector<float> want(x->num_elements());
      for (int64_t ti = 0; ti < t; ++ti) {
        for (int64_t bi = 0; bi < b; ++bi) {
          const int64_t src = ti < lens[bi] ? lens[bi] - 1 - ti : ti;
          for (int64_t c = 0; c < inner; ++c) want[at(ti, bi, c)] = x->data_as<float>()[at(src, bi, c)];
        }
      }
      ExpectRun(machine, {Value(x), Value(Ints({b}, lens, allocator))}, shape, want);
    }
    // A length beyond the sequence; lengths for another batch.
    const std::vector<int64_t> shape = time_major ? std::vector<int64_t>{3, 2, 2} : std::vector<int64_t>{2, 3};
    ExpectRunError(machine, {Value(Counting(shape, allocator)), Value(Ints({2}, {1, 4}, allocator))}, "index 3");
    ExpectRunError(machine, {Value(Counting(shape, allocator)), Value(Ints({3}, {1, 1, 1}, allocator))}, "batch_dims");
  }
}

TEST(IndexingConvertersTest, ReverseSequenceRejectsBadAxes) {
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"4", "2", "3"});
  AddValue(g->mutable_input(), "lens", onnx::TensorProto::INT64, {"2"});
  onnx::NodeProto* node = AddNode(g, "ReverseSequence", {"x", "lens"}, {"y"});
  AddIntAttr(node, "time_axis", 2);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"4", "2", "3"});
  ExpectError(Import(m), absl::StatusCode::kInvalidArgument, "batch_axis 1 and time_axis 2, expected 0 and 1");
  node->mutable_attribute(0)->set_i(0);
  AddValue(g->mutable_input(), "lens3", onnx::TensorProto::INT64, {"3"});
  node->set_input(1, "lens3");
  ExpectError(Import(m), absl::StatusCode::kInvalidArgument, "3 sequence lengths for a batch of 2");
}

// MaxUnpool on one spatial axis with kernel 3, stride 2 and pads (1, 0): [n, c, l]
// unpools to [n, c, 2l], n and l known only at run time; the indices are positions in
// the whole output, as MaxPool gives them.
TEST(IndexingConvertersTest, MaxUnpoolOverRunTimeExtents) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "2", "l"});
  AddValue(g->mutable_input(), "i", onnx::TensorProto::INT64, {"n", "2", "l"});
  onnx::NodeProto* node = AddNode(g, "MaxUnpool", {"x", "i"}, {"y"});
  AddIntsAttr(node, "kernel_shape", {3});
  AddIntsAttr(node, "strides", {2});
  AddIntsAttr(node, "pads", {1, 0});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", "", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const auto& [n, l] : {std::pair{2, 4}, {1, 1}, {3, 0}}) {
    SCOPED_TRACE(absl::StrFormat("n %d, l %d", n, l));
    const NDArray x = Counting({n, 2, l}, allocator);
    std::vector<int64_t> indices;
    std::vector<float> want(n * 2 * 2 * l, 0.0f);
    for (int64_t e = 0; e < x->num_elements(); ++e) {
      const int64_t plane = e / l, at = e % l;
      indices.push_back(plane * 2 * l + 2 * at + at % 2);
      want[indices.back()] = x->data_as<float>()[e];
    }
    ExpectRun(machine, {Value(x), Value(Ints({n, 2, l}, indices, allocator))}, {n, 2, 2 * l}, want);
  }
  ExpectRunError(machine, {Value(Counting({1, 2, 1}, allocator)), Value(Ints({1, 2, 1}, {0, 4}, allocator))},
                 "index 4");
}

// MaxUnpool with an output_shape read at run time: the unpooled [n, 1, 4, 4] extended
// with zeros at the end of each axis; a smaller output_shape is an error.
TEST(IndexingConvertersTest, MaxUnpoolExtendsToRunTimeOutputShape) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "1", "2", "2"});
  AddValue(g->mutable_input(), "i", onnx::TensorProto::INT64, {"n", "1", "2", "2"});
  AddValue(g->mutable_input(), "shape", onnx::TensorProto::INT64, {"4"});
  onnx::NodeProto* node = AddNode(g, "MaxUnpool", {"x", "i", "shape"}, {"y"});
  AddIntsAttr(node, "kernel_shape", {2, 2});
  AddIntsAttr(node, "strides", {2, 2});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", "", "", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const NDArray x = Counting({1, 1, 2, 2}, allocator);
  const NDArray i = Ints({1, 1, 2, 2}, {0, 7, 8, 15}, allocator);
  std::vector<float> want(2 * 1 * 5 * 6, 0.0f);
  want[0 * 6 + 0] = 1;  // unpooled [0, 0]
  want[1 * 6 + 3] = 2;  // [1, 3]
  want[2 * 6 + 0] = 3;  // [2, 0]
  want[3 * 6 + 3] = 4;  // [3, 3]
  ExpectRun(machine, {Value(x), Value(i), Value(Ints({4}, {2, 1, 5, 6}, allocator))}, {2, 1, 5, 6}, want);
  ExpectRunError(machine, {Value(x), Value(i), Value(Ints({4}, {1, 1, 3, 6}, allocator))}, "non-negative");
}

TEST(IndexingConvertersTest, MaxUnpoolRejectsBadAttributes) {
  const auto model = [](const std::vector<int64_t>& kernel, const std::vector<int64_t>& pads, bool output_shape) {
    onnx::ModelProto m = Model(11);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "1", "2", "2"});
    AddValue(g->mutable_input(), "i", onnx::TensorProto::INT64, {"1", "1", "2", "2"});
    std::vector<std::string> inputs = {"x", "i"};
    if (output_shape) {
      AddValue(g->mutable_input(), "shape", onnx::TensorProto::INT64, {"4"});
      inputs.push_back("shape");
    }
    onnx::NodeProto* node = AddNode(g, "MaxUnpool", inputs, {"y"});
    AddIntsAttr(node, "kernel_shape", kernel);
    AddIntsAttr(node, "pads", pads);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"", "", "", ""});
    return m;
  };
  ExpectError(Import(model({2, 0}, {0, 0, 0, 0}, false)), absl::StatusCode::kInvalidArgument,
              "attribute 'kernel_shape' is [2, 0]: each value must be 1 or more");
  ExpectError(Import(model({2, 2}, {0, -1, 0, 0}, false)), absl::StatusCode::kInvalidArgument,
              "attribute 'pads' is [0, -1, 0, 0]: each value must be 0 or more");
  ExpectError(Import(model({2, 2}, {1, 1, 0, 0}, true)), absl::StatusCode::kUnimplemented,
              "pads together with output_shape");
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
