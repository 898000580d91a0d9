// The ONNX importer on models built here as protos: inputs and their symbolic dims,
// shape arithmetic folded into static reshapes, and every kind of malformed or
// unsupported model giving one clear error (never a crash).
#include "compiler/frontend/onnx/importer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/printer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/element_codec.h"
#include "objects/string_tensor.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/compile_and_load.h"
#include "tests/compiler/frontend/onnx/model_builder.h"
#include "vm/executable.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using ::dynvm::compiler::testing::CompileAndLoad;
using ::testing::HasSubstr;
using ::dynvm::compiler::onnx_frontend::testing::AddIntAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddIntsAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddIntsConstant;
using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddSequenceValue;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::Counting;
using ::dynvm::compiler::onnx_frontend::testing::ExpectError;
using ::dynvm::compiler::onnx_frontend::testing::ExpectErrorMentions;
using ::dynvm::compiler::onnx_frontend::testing::F32Vector;
using ::dynvm::compiler::onnx_frontend::testing::Import;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::MainText;
using ::dynvm::compiler::onnx_frontend::testing::Model;


TEST(OnnxImporterTest, InputsKeepNamesAndShareSymbolicDims) {
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "input.ids", onnx::TensorProto::FLOAT, {"batch size", "seq", "8"});
  AddValue(g->mutable_input(), "other", onnx::TensorProto::FLOAT, {"batch size", "", "8"});
  AddNode(g, "Add", {"input.ids", "other"}, {"sum"});
  AddValue(g->mutable_output(), "sum", onnx::TensorProto::FLOAT, {"batch size", "", "8"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  absl::StatusOr<Expr> main = mod->Function("main");
  ASSERT_TRUE(main.ok());
  ASSERT_EQ(main->params().size(), 2u);
  EXPECT_EQ(main->params()[0].name(), "input.ids");
  EXPECT_EQ(main->params()[0].annotation()->ToString(), "Tensor[(batch_size, seq, 8), float32]");
  EXPECT_EQ(main->params()[1].annotation()->ToString(), "Tensor[(batch_size, ?, 8), float32]");
}

TEST(OnnxImporterTest, OutputsKeepTheirNames) {
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  AddNode(g, "Relu", {"x"}, {"relu out"});
  AddNode(g, "Neg", {"x"}, {"neg"});
  AddValue(g->mutable_output(), "relu out", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_output(), "neg", onnx::TensorProto::FLOAT, {"n"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->ResultNames("main"), (std::vector<std::string>{"relu out", "neg"}));
  // ... and the compiled signature carries them.
  absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(*mod, CompileOptions{});
  ASSERT_TRUE(spec.ok()) << spec.status();
  const vm::ValueSpec& result = spec->functions[0].results[0];
  EXPECT_EQ(vm::ValueSpecToString(result), "tuple(tensor f32[n], tensor f32[n])");
  ASSERT_EQ(result.fields.size(), 2u);
  EXPECT_EQ(result.fields[0].name, "relu out");
  EXPECT_EQ(result.fields[1].name, "neg");
}

TEST(OnnxImporterTest, ShapeArithmeticFoldsIntoStaticReshapes) {
  // x [b, s, 8] reshaped to [Shape(x)[0], Shape(x)[1], 2, 4]: the exporters' view().
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"b", "s", "8"});
  AddIntsConstant(g, "i0", {0});
  AddIntsConstant(g, "i1", {1});
  AddIntsConstant(g, "tail", {2, 4});
  AddNode(g, "Shape", {"x"}, {"shape"});
  AddNode(g, "Gather", {"shape", "i0"}, {"d0"}, "g0");
  AddNode(g, "Gather", {"shape", "i1"}, {"d1"}, "g1");
  AddIntAttr(AddNode(g, "Concat", {"d0", "d1", "tail"}, {"target"}), "axis", 0);
  AddNode(g, "Reshape", {"x", "target"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"b", "s", "2", "4"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = MainText(*mod);
  EXPECT_THAT(text, HasSubstr("reshape(%x, allowzero=0, newshape=[0, 0, 2, 4])"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("dyn.reshape")));
}

TEST(OnnxImporterTest, ShapeWithARangeOfSymbolicExtentsIsOneShapeOf) {
  // Shape(x, start=1) of x [b, s, 8]: [s, 8], known only at run time, read by shape_of
  // with opset 15's range.
  onnx::ModelProto m = Model(15);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"b", "s", "8"});
  AddIntAttr(AddNode(g, "Shape", {"x"}, {"tail"}), "start", 1);
  AddValue(g->mutable_output(), "tail", onnx::TensorProto::INT64, {"2"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_THAT(MainText(*mod), HasSubstr("shape_of(%x, start=1)"));
}

TEST(OnnxImporterTest, IfBranchesReadTheEnclosingGraph) {
  // y = cond ? x + x : relu(x), the branches subgraphs that read x from outside.
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "cond", onnx::TensorProto::BOOL, {});
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  onnx::NodeProto* node = AddNode(g, "If", {"cond"}, {"y"}, "choose");
  for (const std::string branch : {"then_branch", "else_branch"}) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* b = a->mutable_g();
    b->set_name(branch);
    if (branch == "then_branch") {
      AddNode(b, "Add", {"x", "x"}, {"out_then"});
      AddValue(b->mutable_output(), "out_then", onnx::TensorProto::FLOAT, {"n"});
    } else {
      AddNode(b, "Relu", {"x"}, {"out_else"});
      AddValue(b->mutable_output(), "out_else", onnx::TensorProto::FLOAT, {"n"});
    }
  }
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const std::string text = MainText(*mod);
  EXPECT_THAT(text, HasSubstr("if (%cond)"));
  EXPECT_THAT(text, HasSubstr("add(%x, %x)"));
  EXPECT_THAT(text, HasSubstr("nn.relu(%x)"));
}

TEST(OnnxImporterTest, ExternalDataIsReadBesideTheModel) {
  // y = x + w, w's four floats in weights.bin next to model.onnx.
  const std::string dir = ::testing::TempDir() + "/onnx_external";
  std::filesystem::create_directories(dir);
  const float w[4] = {1.5f, -2.0f, 0.25f, 8.0f};
  std::ofstream(dir + "/weights.bin", std::ios::binary).write(reinterpret_cast<const char*>(w), sizeof(w));
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"4"});
  onnx::TensorProto* t = g->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto* location = t->add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  AddNode(g, "Add", {"x", "w"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"4"});
  std::ofstream(dir + "/model.onnx", std::ios::binary) << m.SerializeAsString();

  absl::StatusOr<Module> mod = ImportOnnxFile(dir + "/model.onnx");
  ASSERT_TRUE(mod.ok()) << mod.status();
  const auto printed = PrintModule(*mod);
  ASSERT_EQ(printed.constants.size(), 1u);
  const NDArray& c = printed.constants[0];
  ASSERT_EQ(c->num_elements(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c->data_as<float>()[i], w[i]);

  // The weights file gone: an error naming it.
  std::filesystem::remove(dir + "/weights.bin");
  ExpectErrorMentions(ImportOnnxFile(dir + "/model.onnx"), "weights.bin");
}

TEST(OnnxImporterErrorTest, BytesThatAreNoModel) {
  ExpectError(ImportOnnxBytes("\xff\xff\xff garbage", ".", "junk.onnx"),
              absl::StatusCode::kInvalidArgument, "junk.onnx: not an ONNX model");
  ExpectError(ImportOnnxBytes("", ".", "empty.onnx"), absl::StatusCode::kInvalidArgument,
              "empty.onnx: invalid ONNX model");
  ExpectError(ImportOnnxFile("/nonexistent/model.onnx"), absl::StatusCode::kInvalidArgument,
              "cannot read '/nonexistent/model.onnx'");
}

TEST(OnnxImporterErrorTest, TruncatedFile) {
  std::ifstream in(std::string(DYNVM_MODELS_DIR) + "/bert/bert_mini.onnx", std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  ASSERT_GT(bytes.size(), 1000u);
  for (const size_t keep : {bytes.size() / 2, bytes.size() - 7, size_t{100}}) {
    absl::StatusOr<Module> got = ImportOnnxBytes(std::string_view(bytes).substr(0, keep), ".", "cut.onnx");
    ASSERT_FALSE(got.ok()) << keep;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("cut.onnx:"));
  }
}

TEST(OnnxImporterErrorTest, DanglingInputAndCycle) {
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "Add", {"x", "nowhere"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  ExpectError(Import(m), absl::StatusCode::kInvalidArgument, "nowhere");

  onnx::ModelProto c = Model();
  g = c.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "Add", {"x", "b"}, {"a"}, "first");
  AddNode(g, "Relu", {"a"}, {"b"}, "second");
  AddValue(g->mutable_output(), "b", onnx::TensorProto::FLOAT, {"2"});
  ExpectError(Import(c), absl::StatusCode::kInvalidArgument, "invalid ONNX model");
}

TEST(OnnxImporterErrorTest, WrongTypesNameTheNodeAndTheTypes) {
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  AddValue(g->mutable_input(), "i", onnx::TensorProto::INT64, {"2"});
  AddNode(g, "Add", {"x", "i"}, {"y"}, "mixed");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  absl::StatusOr<Module> got = Import(m);
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("node 'mixed' (Add, opset 14)"));
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("float32 and int64"));
}

TEST(OnnxImporterErrorTest, UnsupportedOperatorsAttributesAndOpsets) {
  onnx::ModelProto m = Model(16);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "1", "4", "4"});
  AddNode(g, "GlobalLpPool", {"x"}, {"y"}, "pool");
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"1", "1", "1", "1"});
  ExpectError(Import(m), absl::StatusCode::kUnimplemented,
              "node 'pool' (GlobalLpPool, opset 16): operator GlobalLpPool is not supported");

  // Opset 6 broadcasting along an axis: B must fit A's axes from that axis on.
  onnx::ModelProto old = Model(6);
  g = old.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::FLOAT, {"2", "3"});
  onnx::NodeProto* add = AddNode(g, "Add", {"x", "b"}, {"y"}, "legacy");
  for (const auto& [name, value] : {std::pair{"broadcast", 1}, std::pair{"axis", 1}}) {
    AddIntAttr(add, name, value);
  }
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2", "3"});
  ExpectError(Import(old), absl::StatusCode::kInvalidArgument,
              "node 'legacy' (Add, opset 6): B Tensor[(2, 3), float32] does not fit A Tensor[(2, 3), float32] from axis 1");

  onnx::ModelProto future = Model(18);
  g = future.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "Relu", {"x"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  ExpectError(Import(future), absl::StatusCode::kUnimplemented, "opset 18");
}

TEST(OnnxImporterErrorTest, HostileShapes) {
  // A negative extent in an initializer, and a graph input of 2^62 x 2^62 elements:
  // errors, not allocations.
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(-3);
  AddNode(g, "Add", {"x", "w"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2"});
  absl::StatusOr<Module> got = Import(m);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();

  onnx::ModelProto huge = Model();
  g = huge.mutable_graph();
  onnx::TensorProto* big = g->add_initializer();
  big->set_name("big");
  big->set_data_type(onnx::TensorProto::FLOAT);
  big->add_dims(int64_t{1} << 31);
  big->add_dims(int64_t{1} << 31);
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "Add", {"x", "big"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {});
  got = Import(huge);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << got.status();
}

// Sizes a hostile model asks for at run time: a model that compiles (nothing is folded
// past compiler::kMaxFoldedElements) and whose run asks for 2^31 floats (8 GiB), 2^40
// (4 TiB) or 2^62, whose byte count overflows int64. Each run ends with an error naming
// the size, in bounded time and memory: the VM's memory budget (1 GiB here) refuses the
// first two before allocating, the checked shape arithmetic the third.
TEST(OnnxImporterErrorTest, HostileSizesAtRunTimeAreErrors) {
  struct Case {
    std::string name;
    std::vector<int64_t> shape;    // ConstantOfShape's shape input
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"2^31 floats", {int64_t{1} << 31}, absl::StatusCode::kResourceExhausted},
      {"2^40 floats", {int64_t{1} << 20, int64_t{1} << 20}, absl::StatusCode::kResourceExhausted},
      {"2^62 floats", {int64_t{1} << 31, int64_t{1} << 31}, absl::StatusCode::kOutOfRange},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    // y = ConstantOfShape(shape) + x, where shape is a graph input so that nothing folds.
    onnx::ModelProto m = Model();
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "shape", onnx::TensorProto::INT64, {std::to_string(c.shape.size())});
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1"});
    AddNode(g, "ConstantOfShape", {"shape"}, {"zeros"});
    AddNode(g, "Add", {"zeros", "x"}, {"y"});
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT,
             std::vector<std::string>(c.shape.size(), ""));
    absl::StatusOr<Module> mod = Import(m);
    ASSERT_TRUE(mod.ok()) << mod.status();
    const std::shared_ptr<const vm::Executable> exe = CompileAndLoad(*mod);
    ASSERT_NE(exe, nullptr);

    auto allocator = MakePooledAllocator();
    absl::StatusOr<NDArray> shape =
        NDArrayObj::Empty({static_cast<int64_t>(c.shape.size())}, DType::kI64, allocator);
    absl::StatusOr<NDArray> x = NDArrayObj::Empty({1}, DType::kF32, allocator);
    ASSERT_TRUE(shape.ok() && x.ok());
    std::copy(c.shape.begin(), c.shape.end(), (*shape)->data_as<int64_t>());
    (*x)->data_as<float>()[0] = 1;
    vm::VmOptions options;
    options.max_memory_bytes = int64_t{1} << 30;
    vm::VirtualMachine machine(exe, options);
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(*shape), Value(*x)});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    // The VM is still usable: a small shape runs.
    (*shape)->data_as<int64_t>()[0] = 3;
    if (c.shape.size() > 1) (*shape)->data_as<int64_t>()[1] = 2;
    EXPECT_TRUE(machine.Invoke("main", {Value(*shape), Value(*x)}).ok());
  }
}

// torch.tril as GPT exports build their causal mask: over a sequence whose length is
// known only at run time, from extents read when the model runs.
TEST(OnnxImporterTest, TriluOverExtentsKnownAtRunTime) {
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"batch", "seq", "seq"});
  AddValue(g->mutable_input(), "k", onnx::TensorProto::INT64, {});
  AddIntAttr(AddNode(g, "Trilu", {"x", "k"}, {"y"}), "upper", 0);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"batch", "seq", "seq"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const auto& [batch, seq, k] : {std::tuple{1, 1, 0}, {2, 5, 0}, {1, 7, -2}, {3, 4, 1}}) {
    SCOPED_TRACE(absl::StrFormat("batch %d, seq %d, k %d", batch, seq, k));
    const NDArray x = Counting({batch, seq, seq}, allocator);
    absl::StatusOr<NDArray> kt = NDArrayObj::Empty({}, DType::kI64, allocator);
    ASSERT_TRUE(kt.ok());
    (*kt)->data_as<int64_t>()[0] = k;
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(x), Value(*kt)});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), (std::vector<int64_t>{batch, seq, seq}));
    for (int64_t e = 0; e < y.num_elements(); ++e) {
      const int64_t i = (e / seq) % seq, j = e % seq;
      ASSERT_EQ(y.data_as<float>()[e], j - i <= k ? static_cast<float>(e + 1) : 0.0f) << "element " << e;
    }
  }
}

// OneHot's depth arrives as a tensor at run time and decides the result's extent.
TEST(OnnxImporterTest, OneHotDepthKnownAtRunTime) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "indices", onnx::TensorProto::INT64, {"n"});
  AddValue(g->mutable_input(), "depth", onnx::TensorProto::INT64, {});
  AddValue(g->mutable_input(), "values", onnx::TensorProto::FLOAT, {"2"});
  AddNode(g, "OneHot", {"indices", "depth", "values"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "d"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const std::vector<int64_t> indices = {0, 2, -1, 7, -9};
  absl::StatusOr<NDArray> idx = NDArrayObj::Empty({5}, DType::kI64, allocator);
  absl::StatusOr<NDArray> values = NDArrayObj::Empty({2}, DType::kF32, allocator);
  ASSERT_TRUE(idx.ok() && values.ok());
  std::copy(indices.begin(), indices.end(), (*idx)->data_as<int64_t>());
  (*values)->data_as<float>()[0] = -1.0f;
  (*values)->data_as<float>()[1] = 5.0f;
  for (const int64_t depth : {3, 8}) {
    SCOPED_TRACE(depth);
    absl::StatusOr<NDArray> d = NDArrayObj::Empty({}, DType::kI64, allocator);
    ASSERT_TRUE(d.ok());
    (*d)->data_as<int64_t>()[0] = depth;
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(*idx), Value(*d), Value(*values)});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), (std::vector<int64_t>{5, depth}));
    for (int64_t r = 0; r < 5; ++r) {
      // Negative indices wrap once; what is still outside [0, depth) is all off.
      const int64_t hot = indices[r] < 0 ? indices[r] + depth : indices[r];
      for (int64_t c = 0; c < depth; ++c) {
        EXPECT_EQ(y.data_as<float>()[r * depth + c], c == hot ? 5.0f : -1.0f) << r << ", " << c;
      }
    }
  }
}

// Einsum against a brute-force reference: every assignment of the labels, products
// summed into the output. Explicit and implicit outputs, repeated labels, three
// operands, an outer product, and attention's scores over a sequence length known only
// at run time (the matmul path); f32 sums of a few products: 1e-5 relative.
TEST(OnnxImporterTest, EinsumMatchesBruteForce) {
  struct Case {
    std::string equation;
    std::vector<std::string> terms;                // each input's labels, one per axis
    std::string output;                            // the output's labels
    std::vector<std::vector<std::string>> dims;    // each input's declared dims
    std::map<char, std::vector<int64_t>> extents;  // per label, the extents to run at
  };
  const std::vector<Case> cases = {
      {"bhqd,bhkd->bhqk", {"bhqd", "bhkd"}, "bhqk", {{"2", "3", "q", "4"}, {"2", "3", "k", "4"}},
       {{'b', {2}}, {'h', {3}}, {'q', {1, 5}}, {'k', {6, 2}}, {'d', {4}}}},
      {"ij,jk", {"ij", "jk"}, "ik", {{"3", "4"}, {"4", "5"}}, {{'i', {3}}, {'j', {4}}, {'k', {5}}}},
      {"i,j->ij", {"i", "j"}, "ij", {{"3"}, {"4"}}, {{'i', {3}}, {'j', {4}}}},
      {"ii->", {"ii"}, "", {{"4", "4"}}, {{'i', {4}}}},
      {"iij->ji", {"iij"}, "ji", {{"3", "3", "2"}}, {{'i', {3}}, {'j', {2}}}},
      {"ij,jk,kl->li", {"ij", "jk", "kl"}, "li", {{"2", "3"}, {"3", "4"}, {"4", "2"}},
       {{'i', {2}}, {'j', {3}}, {'k', {4}}, {'l', {2}}}},
      {"bij,bjk->bki", {"bij", "bjk"}, "bki", {{"2", "3", "2"}, {"2", "2", "3"}},
       {{'b', {2}}, {'i', {3}}, {'j', {2}}, {'k', {3}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.equation);
    onnx::ModelProto m = Model(12);
    onnx::GraphProto* g = m.mutable_graph();
    std::vector<std::string> names;
    for (size_t i = 0; i < c.terms.size(); ++i) {
      names.push_back(absl::StrCat("x", i));
      AddValue(g->mutable_input(), names.back(), onnx::TensorProto::FLOAT, c.dims[i]);
    }
    onnx::NodeProto* n = AddNode(g, "Einsum", names, {"y"});
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("equation");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(c.equation);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT,
             std::vector<std::string>(c.output.size(), ""));
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    auto allocator = MakePooledAllocator();
    vm::VirtualMachine machine(exe);
    for (size_t run = 0; run < 2; ++run) {  // the extents' first and last options
      std::map<char, int64_t> extent;
      for (const auto& [label, options] : c.extents) extent[label] = options[run % options.size()];
      std::vector<Value> args;
      std::vector<NDArray> inputs;
      for (const std::string& term : c.terms) {
        std::vector<int64_t> shape;
        for (char label : term) shape.push_back(extent[label]);
        inputs.push_back(Counting(shape, allocator));
        for (int64_t e = 0; e < inputs.back()->num_elements(); ++e) {
          inputs.back()->data_as<float>()[e] = std::sin(static_cast<float>(e) + 0.5f * static_cast<float>(args.size()));
        }
        args.push_back(Value(inputs.back()));
      }
      absl::StatusOr<Value> got = machine.Invoke("main", args);
      ASSERT_TRUE(got.ok()) << got.status();
      const NDArrayObj& y = *got->As<NDArrayObj>();
      std::vector<int64_t> out_shape;
      for (char label : c.output) out_shape.push_back(extent[label]);
      ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), out_shape);
      // The reference: every assignment of the labels, in odometer order.
      std::vector<char> labels;
      for (const auto& [label, e] : extent) labels.push_back(label);
      std::vector<double> want(y.num_elements(), 0.0);
      std::map<char, int64_t> at;
      for (char label : labels) at[label] = 0;
      const auto flat = [&](const std::string& term) {
        int64_t f = 0;
        for (char label : term) f = f * extent[label] + at[label];
        return f;
      };
      for (bool done = false; !done;) {
        double product = 1.0;
        for (size_t i = 0; i < c.terms.size(); ++i) product *= inputs[i]->data_as<float>()[flat(c.terms[i])];
        want[flat(c.output)] += product;
        done = true;
        for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
          if (++at[*it] < extent[*it]) {
            done = false;
            break;
          }
          at[*it] = 0;
        }
      }
      for (int64_t e = 0; e < y.num_elements(); ++e) {
        ASSERT_NEAR(y.data_as<float>()[e], want[e], 1e-5 * (1 + std::fabs(want[e]))) << "element " << e;
      }
    }
  }
}

// ConvTranspose by its definition — each input element scatters kernel * x into the
// output at stride * i + dilation * k - pad_begin — with groups, strides, dilations,
// pads and output_padding at once, a constant kernel (flipped and regrouped when the
// model compiles) and batch and image extents known only at run time. f32 sums of a few products:
// 1e-5 relative.
TEST(OnnxImporterTest, ConvTransposeMatchesItsDefinition) {
  const int64_t cin = 4, cout_per_group = 3, group = 2, kh = 2, kw = 2;
  const std::vector<int64_t> strides = {2, 1}, dilations = {1, 2}, pads = {1, 0, 0, 1}, output_padding = {1, 0};
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "4", "h", "w"});
  onnx::TensorProto* kernel = g->add_initializer();
  kernel->set_name("k");
  kernel->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {cin, cout_per_group, kh, kw}) kernel->add_dims(d);
  std::vector<float> weights(cin * cout_per_group * kh * kw);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = std::cos(0.7f * static_cast<float>(i));
  for (float v : weights) kernel->add_float_data(v);
  onnx::NodeProto* node = AddNode(g, "ConvTranspose", {"x", "k"}, {"y"});
  AddIntAttr(node, "group", group);
  for (const auto& [name, values] : {std::pair{"strides", strides}, {"dilations", dilations}, {"pads", pads},
                                     {"output_padding", output_padding}}) {
    onnx::AttributeProto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "6", "", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const auto& [batch, h, w] : {std::tuple<int64_t, int64_t, int64_t>{1, 3, 4}, {2, 5, 2}}) {
    SCOPED_TRACE(absl::StrFormat("batch %d, %d x %d", batch, h, w));
    const int64_t oh = strides[0] * (h - 1) + output_padding[0] + (kh - 1) * dilations[0] + 1 - pads[0] - pads[2];
    const int64_t ow = strides[1] * (w - 1) + output_padding[1] + (kw - 1) * dilations[1] + 1 - pads[1] - pads[3];
    const NDArray x = Counting({batch, cin, h, w}, allocator);
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()),
              (std::vector<int64_t>{batch, group * cout_per_group, oh, ow}));
    std::vector<double> want(y.num_elements(), 0.0);
    const int64_t cin_per_group = cin / group;
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t c = 0; c < cin; ++c) {
        for (int64_t i = 0; i < h; ++i) {
          for (int64_t j = 0; j < w; ++j) {
            for (int64_t co = 0; co < cout_per_group; ++co) {
              for (int64_t a = 0; a < kh; ++a) {
                for (int64_t b = 0; b < kw; ++b) {
                  const int64_t r = i * strides[0] + a * dilations[0] - pads[0];
                  const int64_t q = j * strides[1] + b * dilations[1] - pads[1];
                  if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
                  const int64_t out_c = (c / cin_per_group) * cout_per_group + co;
                  want[((n * group * cout_per_group + out_c) * oh + r) * ow + q] +=
                      x->data_as<float>()[((n * cin + c) * h + i) * w + j] *
                      weights[((c * cout_per_group + co) * kh + a) * kw + b];
                }
              }
            }
          }
        }
      }
    }
    for (int64_t e = 0; e < y.num_elements(); ++e) {
      ASSERT_NEAR(y.data_as<float>()[e], want[e], 1e-5 * (1 + std::fabs(want[e]))) << "element " << e;
    }
  }
}

TEST(OnnxImporterErrorTest, LossesCheckTheirOperands) {
  const auto loss_model = [](const std::vector<std::string>& target_dims, const std::string& reduction) {
    onnx::ModelProto m = Model(13);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"3", "5", "2"});
    AddValue(g->mutable_input(), "t", onnx::TensorProto::INT64, target_dims);
    onnx::NodeProto* n = AddNode(g, "NegativeLogLikelihoodLoss", {"x", "t"}, {"y"}, "nll");
    onnx::AttributeProto* a = n->add_attribute();
    a->set_name("reduction");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(reduction);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {});
    return m;
  };
  EXPECT_TRUE(Import(loss_model({"3", "2"}, "mean")).ok());
  // ONNX's shape inference sees a target of the wrong rank before the converter does.
  ExpectError(Import(loss_model({"3"}, "mean")), absl::StatusCode::kInvalidArgument,
              "Target rank must be 1 less than the input rank");
  ExpectError(Import(loss_model({"3", "2"}, "average")), absl::StatusCode::kInvalidArgument,
              "node 'nll' (NegativeLogLikelihoodLoss, opset 13): attribute 'reduction' must be \"none\", \"sum\" or \"mean\", got \"average\"");
}

TEST(OnnxImporterTest, SequenceInputsAndOutputsAreLists) {
  // y = SequenceAt(seq, i); out = SequenceInsert(seq, y) appends element i again.
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddSequenceValue(g->mutable_input(), "seq", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_input(), "i", onnx::TensorProto::INT64, {});
  AddNode(g, "SequenceAt", {"seq", "i"}, {"y"});
  AddNode(g, "SequenceInsert", {"seq", "y"}, {"out"});
  AddSequenceValue(g->mutable_output(), "out", onnx::TensorProto::FLOAT, {"n"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(mod->Function("main")->params()[0].annotation()->ToString(),
            "List[Tensor[(?), float32]]");
  std::shared_ptr<const vm::Executable> exe = CompileAndLoad(*mod);
  ASSERT_NE(exe, nullptr);

  auto tensor = [](std::vector<float> values) { return Value(F32Vector(values)); };
  const Value nil = ADTObj::Create(kListNilTag, {});
  const Value second[] = {tensor({3, 4, 5}), nil};
  const Value first[] = {tensor({1, 2}), ADTObj::Create(kListConsTag, second)};
  const Value list = ADTObj::Create(kListConsTag, first);
  NDArray i = *NDArrayObj::Empty({}, DType::kI64, MakeNaiveAllocator());
  *i->data_as<int64_t>() = 1;
  vm::VirtualMachine machine(exe);
  absl::StatusOr<Value> got = machine.Invoke("main", {list, Value(i)});
  ASSERT_TRUE(got.ok()) << got.status();
  // [1, 2], [3, 4, 5], [3, 4, 5]
  std::vector<std::vector<float>> elements;
  for (const ADTObj* cell = got->As<ADTObj>(); cell != nullptr && cell->tag() == kListConsTag;
       cell = cell->fields()[1].As<ADTObj>()) {
    const NDArrayObj* t = cell->fields()[0].As<NDArrayObj>();
    ASSERT_NE(t, nullptr);
    elements.emplace_back(t->data_as<float>(), t->data_as<float>() + t->num_elements());
  }
  EXPECT_EQ(elements, (std::vector<std::vector<float>>{{1, 2}, {3, 4, 5}, {3, 4, 5}}));
}

// SequenceMap over a list of tensors of different lengths, with a tensor input: the
// body adds the scalar to each element and returns each element's shape too, so that
// two output sequences are collected, in order; an empty list maps to empty lists.
TEST(OnnxImporterTest, SequenceMapOverElementsOfDifferentLengths) {
  onnx::ModelProto m = Model(17);
  onnx::GraphProto* g = m.mutable_graph();
  AddSequenceValue(g->mutable_input(), "seq", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_input(), "c", onnx::TensorProto::FLOAT, {});
  onnx::NodeProto* map = AddNode(g, "SequenceMap", {"seq", "c"}, {"sums", "shapes"});
  onnx::AttributeProto* body_attr = map->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = body_attr->mutable_g();
  body->set_name("body");
  AddValue(body->mutable_input(), "x", onnx::TensorProto::FLOAT, {"k"});
  AddValue(body->mutable_input(), "y", onnx::TensorProto::FLOAT, {});
  AddNode(body, "Add", {"x", "y"}, {"sum"});
  AddNode(body, "Shape", {"x"}, {"shape"});
  AddValue(body->mutable_output(), "sum", onnx::TensorProto::FLOAT, {"k"});
  AddValue(body->mutable_output(), "shape", onnx::TensorProto::INT64, {"1"});
  AddSequenceValue(g->mutable_output(), "sums", onnx::TensorProto::FLOAT, {""});
  AddSequenceValue(g->mutable_output(), "shapes", onnx::TensorProto::INT64, {""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto tensor = [](std::vector<float> values) { return Value(F32Vector(values)); };
  auto list_of = [](const Value& v) {  // the elements of a List value, as doubles
    std::vector<std::vector<double>> out;
    for (const ADTObj* cell = v.As<ADTObj>(); cell != nullptr && cell->tag() == kListConsTag;
         cell = cell->fields()[1].As<ADTObj>()) {
      const NDArrayObj& t = *cell->fields()[0].As<NDArrayObj>();
      std::vector<double> e;
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        e.push_back(t.dtype() == DType::kF32 ? t.data_as<float>()[i] : t.data_as<int64_t>()[i]);
      }
      out.push_back(std::move(e));
    }
    return out;
  };
  const Value nil = ADTObj::Create(kListNilTag, {});
  const Value third[] = {tensor({}), nil};
  const Value second[] = {tensor({3, 4, 5}), ADTObj::Create(kListConsTag, third)};
  const Value first[] = {tensor({1}), ADTObj::Create(kListConsTag, second)};
  NDArray c = *NDArrayObj::Empty({}, DType::kF32, MakeNaiveAllocator());
  *c->data_as<float>() = 10;
  vm::VirtualMachine machine(exe);
  for (const bool empty : {false, true}) {
    SCOPED_TRACE(empty);
    absl::StatusOr<Value> got =
        machine.Invoke("main", {empty ? nil : Value(ADTObj::Create(kListConsTag, first)), Value(c)});
    ASSERT_TRUE(got.ok()) << got.status();
    const ADTObj& outs = *got->As<ADTObj>();
    using Lists = std::vector<std::vector<double>>;
    EXPECT_EQ(list_of(outs.fields()[0]), empty ? Lists{} : (Lists{{11}, {13, 14, 15}, {}}));
    EXPECT_EQ(list_of(outs.fields()[1]), empty ? Lists{} : (Lists{{1}, {3}, {0}}));
  }
}

// Adam of ONNX's training domain at a step T > 0 (bias-corrected rate) with run-time
// extents, against its formulas in double (f32 arithmetic: 1e-5 relative allowed).
TEST(OnnxImporterTest, AdamStepWithBiasCorrection) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  onnx::OperatorSetIdProto* id = m.add_opset_import();
  id->set_domain("ai.onnx.preview.training");
  id->set_version(1);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("g");
  AddValue(g->mutable_input(), "R", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_input(), "T", onnx::TensorProto::INT64, {});
  for (const char* name : {"X", "G", "V", "H"}) AddValue(g->mutable_input(), name, onnx::TensorProto::FLOAT, {"n"});
  onnx::NodeProto* adam = AddNode(g, "Adam", {"R", "T", "X", "G", "V", "H"}, {"X_new", "V_new", "H_new"});
  adam->set_domain("ai.onnx.preview.training");
  const std::pair<const char*, float> attrs[] = {{"alpha", 0.9f}, {"beta", 0.99f}, {"epsilon", 1e-3f},
                                                 {"norm_coefficient", 0.01f}, {"norm_coefficient_post", 0.001f}};
  for (const auto& [name, value] : attrs) {
    onnx::AttributeProto* a = adam->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }
  for (const char* name : {"X_new", "V_new", "H_new"}) AddValue(g->mutable_output(), name, onnx::TensorProto::FLOAT, {"n"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  auto scalar = [&](DType dtype, double v) {
    NDArray t = *NDArrayObj::Empty({}, dtype, allocator);
    if (dtype == DType::kF32) *t->data_as<float>() = static_cast<float>(v);
    else *t->data_as<int64_t>() = static_cast<int64_t>(v);
    return Value(t);
  };
  const NDArray x = Counting({3}, allocator), grad = Counting({3}, allocator), v = Counting({3}, allocator),
                h = Counting({3}, allocator);
  absl::StatusOr<Value> got =
      machine.Invoke("main", {scalar(DType::kF32, 0.1), scalar(DType::kI64, 3), Value(x), Value(grad), Value(v), Value(h)});
  ASSERT_TRUE(got.ok()) << got.status();
  const ADTObj& outs = *got->As<ADTObj>();
  for (int i = 0; i < 3; ++i) {
    const double xi = i + 1, gr = 0.01f * xi + xi;
    const double v_new = 0.9f * xi + (1 - 0.9f) * gr, h_new = 0.99f * xi + (1 - 0.99f) * gr * gr;
    const double rate = 0.1f * std::sqrt(1 - std::pow(0.99f, 3)) / (1 - std::pow(0.9f, 3));
    const double x_new = (1 - 0.001f) * (xi - rate * v_new / (std::sqrt(h_new) + 1e-3f));
    const double want[] = {x_new, v_new, h_new};
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(outs.fields()[k].As<NDArrayObj>()->data_as<float>()[i], want[k], 1e-5 * std::fabs(want[k]))
          << "output " << k << ", element " << i;
    }
  }
}

// Opset 6's broadcast=1 with an axis lines B's axes up with A's from that axis on: here
// b [2] along axis 0 of x [2, 3], so y[i][j] = x[i][j] + b[i] (numpy's rule would align
// b with the last axis instead).
TEST(OnnxImporterTest, LegacyBroadcastAlongAnAxis) {
  onnx::ModelProto m = Model(6);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2", "3"});
  AddValue(g->mutable_input(), "b", onnx::TensorProto::FLOAT, {"2"});
  onnx::NodeProto* add = AddNode(g, "Add", {"x", "b"}, {"y"});
  AddIntAttr(add, "broadcast", 1);
  AddIntAttr(add, "axis", 0);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  absl::StatusOr<Value> got = machine.Invoke("main", {Value(Counting({2, 3}, allocator)), Value(Counting({2}, allocator))});
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj& y = *got->As<NDArrayObj>();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(y.data_as<float>()[i * 3 + j], (i * 3 + j + 1) + (i + 1.0f));
  }
}

// float16 through operators whose kernels compute f32 only (Exp, a reduction, Softmax):
// widened to f32, computed, and stored back in f16. Exact against the same steps done
// here: f16 -> f32 is exact, and each result is rounded to f16 once.
TEST(OnnxImporterTest, HalfFloatsComputeInF32AndStoreInF16) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT16, {"2", "n"});
  AddNode(g, "Exp", {"x"}, {"e"});
  AddIntAttr(AddNode(g, "ReduceMean", {"x"}, {"mean"}), "keepdims", 0);
  AddIntAttr(AddNode(g, "Softmax", {"x"}, {"soft"}), "axis", -1);
  AddValue(g->mutable_output(), "e", onnx::TensorProto::FLOAT16, {"2", "n"});
  AddValue(g->mutable_output(), "mean", onnx::TensorProto::FLOAT16, {});
  AddValue(g->mutable_output(), "soft", onnx::TensorProto::FLOAT16, {"2", "n"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const int n = 3;
  NDArray x = *NDArrayObj::Empty({2, n}, DType::kF16, allocator);
  std::vector<float> xf;
  for (int i = 0; i < 2 * n; ++i) {
    x->data_as<uint16_t>()[i] = FloatToHalfBits(0.37f * static_cast<float>(i) - 1.1f);
    xf.push_back(HalfBitsToFloat(x->data_as<uint16_t>()[i]));
  }
  absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
  ASSERT_TRUE(got.ok()) << got.status();
  const ADTObj& outs = *got->As<ADTObj>();
  const NDArrayObj& e = *outs.fields()[0].As<NDArrayObj>();
  const NDArrayObj& mean = *outs.fields()[1].As<NDArrayObj>();
  const NDArrayObj& soft = *outs.fields()[2].As<NDArrayObj>();
  ASSERT_EQ(e.dtype(), DType::kF16);
  ASSERT_EQ(mean.dtype(), DType::kF16);
  double sum = 0;
  for (int i = 0; i < 2 * n; ++i) {
    // exp within 1 f16 ulp of the f32 exp rounded (the f32 kernel's own error is < 1 f32 ulp).
    const float want = HalfBitsToFloat(FloatToHalfBits(std::exp(xf[i])));
    EXPECT_NEAR(HalfBitsToFloat(e.data_as<uint16_t>()[i]), want, std::fabs(want) * 0x1p-10) << i;
    sum += xf[i];
  }
  const float want_mean = HalfBitsToFloat(FloatToHalfBits(static_cast<float>(sum / (2 * n))));
  EXPECT_NEAR(HalfBitsToFloat(mean.data_as<uint16_t>()[0]), want_mean, std::fabs(want_mean) * 0x1p-10);
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int j = 0; j < n; ++j) z += std::exp(static_cast<double>(xf[r * n + j]));
    for (int j = 0; j < n; ++j) {
      const double want = std::exp(static_cast<double>(xf[r * n + j])) / z;
      EXPECT_NEAR(HalfBitsToFloat(soft.data_as<uint16_t>()[r * n + j]), want, want * 0x1p-10) << r << " " << j;
    }
  }
}

// Conv and ConvTranspose in 3-D run as 2-D convolutions per depth tap. Conv against a
// direct reference over the box, with a batch known at run time, depth padding, strides,
// dilations and two groups (f32 sums of at most 36 products: within 1e-5 relative).
TEST(OnnxImporterTest, ThreeDimensionalConvolution) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n", "4", "5", "6", "4"});
  AddValue(g->mutable_input(), "w", onnx::TensorProto::FLOAT, {"2", "2", "3", "2", "3"});
  onnx::NodeProto* conv = AddNode(g, "Conv", {"x", "w"}, {"y"});
  AddIntsAttr(conv, "strides", {2, 1, 1});
  AddIntsAttr(conv, "dilations", {1, 2, 1});
  AddIntsAttr(conv, "pads", {1, 0, 1, 2, 1, 0});
  AddIntAttr(conv, "group", 2);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n", "2", "", "", ""});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const int64_t C = 4, D = 5, H = 6, W = 4, M = 2, KD = 3, KH = 2, KW = 3;
  const int64_t pads[6] = {1, 0, 1, 2, 1, 0}, stride[3] = {2, 1, 1}, dil[3] = {1, 2, 1};
  const int64_t OD = (D + pads[0] + pads[3] - dil[0] * (KD - 1) - 1) / stride[0] + 1;
  const int64_t OH = (H + pads[1] + pads[4] - dil[1] * (KH - 1) - 1) / stride[1] + 1;
  const int64_t OW = (W + pads[2] + pads[5] - dil[2] * (KW - 1) - 1) / stride[2] + 1;
  const NDArray w = Counting({M, C / 2, KD, KH, KW}, allocator);
  for (int64_t i = 0; i < w->num_elements(); ++i) w->data_as<float>()[i] = std::cos(0.3f * i);
  for (const int64_t n : {1, 2}) {
    SCOPED_TRACE(n);
    const NDArray x = Counting({n, C, D, H, W}, allocator);
    for (int64_t i = 0; i < x->num_elements(); ++i) x->data_as<float>()[i] = std::sin(0.7f * i);
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(x), Value(w)});
    ASSERT_TRUE(got.ok()) << got.status();
    const NDArrayObj& y = *got->As<NDArrayObj>();
    ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), (std::vector<int64_t>{n, M, OD, OH, OW}));
    const float* xs = x->data_as<float>();
    const float* ws = w->data_as<float>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t o = 0; o < M; ++o) {
        for (int64_t od = 0; od < OD; ++od) {
          for (int64_t oh = 0; oh < OH; ++oh) {
            for (int64_t ow = 0; ow < OW; ++ow) {
              double want = 0, scale = 0;
              for (int64_t c = 0; c < C / 2; ++c) {
                const int64_t ci = (o / (M / 2)) * (C / 2) + c;  // the group's input channel
                for (int64_t kd = 0; kd < KD; ++kd) {
                  for (int64_t kh = 0; kh < KH; ++kh) {
                    for (int64_t kw = 0; kw < KW; ++kw) {
                      const int64_t d = od * stride[0] - pads[0] + kd * dil[0];
                      const int64_t h = oh * stride[1] - pads[1] + kh * dil[1];
                      const int64_t q = ow * stride[2] - pads[2] + kw * dil[2];
                      if (d < 0 || d >= D || h < 0 || h >= H || q < 0 || q >= W) continue;
                      const double term = double{xs[(((b * C + ci) * D + d) * H + h) * W + q]} *
                                          ws[(((o * (C / 2) + c) * KD + kd) * KH + kh) * KW + kw];
                      want += term;
                      scale += std::fabs(term);
                    }
                  }
                }
              }
              EXPECT_NEAR(y.data_as<float>()[(((b * M + o) * OD + od) * OH + oh) * OW + ow], want, 1e-5 * scale + 1e-6)
                  << b << " " << o << " " << od << " " << oh << " " << ow;
            }
          }
        }
      }
    }
  }
}

// Scan of opset 8 over a batch of 2, a sequence known at run time: each batch element
// scans on its own (state += x_t, output the state), results stacked along the batch.
TEST(OnnxImporterTest, BatchedScanOfOpset8) {
  onnx::ModelProto m = Model(8);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "init", onnx::TensorProto::FLOAT, {"2", "3"});
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"2", "t", "3"});
  onnx::NodeProto* scan = AddNode(g, "Scan", {"", "init", "x"}, {"final", "ys"});
  AddIntAttr(scan, "num_scan_inputs", 1);
  onnx::AttributeProto* body_attr = scan->add_attribute();
  body_attr->set_name("body");
  body_attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = body_attr->mutable_g();
  body->set_name("body");
  AddValue(body->mutable_input(), "s", onnx::TensorProto::FLOAT, {"3"});
  AddValue(body->mutable_input(), "xt", onnx::TensorProto::FLOAT, {"3"});
  AddNode(body, "Add", {"s", "xt"}, {"s_next"});
  AddNode(body, "Identity", {"s_next"}, {"y"});
  AddValue(body->mutable_output(), "s_next", onnx::TensorProto::FLOAT, {"3"});
  AddValue(body->mutable_output(), "y", onnx::TensorProto::FLOAT, {"3"});
  AddValue(g->mutable_output(), "final", onnx::TensorProto::FLOAT, {"2", "3"});
  AddValue(g->mutable_output(), "ys", onnx::TensorProto::FLOAT, {"2", "t", "3"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  for (const int64_t t : {1, 4}) {
    SCOPED_TRACE(t);
    const NDArray init = Counting({2, 3}, allocator), x = Counting({2, t, 3}, allocator);
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(init), Value(x)});
    ASSERT_TRUE(got.ok()) << got.status();
    const ADTObj& outs = *got->As<ADTObj>();
    const NDArrayObj& final_state = *outs.fields()[0].As<NDArrayObj>();
    const NDArrayObj& ys = *outs.fields()[1].As<NDArrayObj>();
    ASSERT_EQ(std::vector<int64_t>(ys.shape().begin(), ys.shape().end()), (std::vector<int64_t>{2, t, 3}));
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t c = 0; c < 3; ++c) {
        float acc = init->data_as<float>()[b * 3 + c];
        for (int64_t i = 0; i < t; ++i) {
          acc += x->data_as<float>()[(b * t + i) * 3 + c];
          EXPECT_EQ(ys.data_as<float>()[(b * t + i) * 3 + c], acc) << b << " " << i << " " << c;
        }
        EXPECT_EQ(final_state.data_as<float>()[b * 3 + c], acc) << b << " " << c;
      }
    }
  }
}

TEST(OnnxImporterTest, StringTensorsCastToAndFromNumbers) {
  // y = Cast(Cast(x, FLOAT), STRING): text to numbers and back, shortest form.
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::STRING, {"n"});
  AddIntAttr(AddNode(g, "Cast", {"x"}, {"f"}), "to", onnx::TensorProto::FLOAT);
  AddIntAttr(AddNode(g, "Cast", {"f"}, {"y"}, "back"), "to", onnx::TensorProto::STRING);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::STRING, {"n"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  std::shared_ptr<const vm::Executable> exe = CompileAndLoad(*mod);
  ASSERT_NE(exe, nullptr);
  const std::vector<std::string> text = {"0.50", "+INF", "1e-3", "-2"};
  NDArray x = *MakeStringTensor({4}, text, MakeNaiveAllocator());
  vm::VirtualMachine machine(exe);
  absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj* y = got->As<NDArrayObj>();
  ASSERT_NE(y, nullptr);
  ASSERT_EQ(y->dtype(), DType::kString);
  std::vector<std::string> back;
  for (int64_t k = 0; k < 4; ++k) back.emplace_back(StringElement(*y, k).value_or("?"));
  EXPECT_EQ(back, (std::vector<std::string>{"0.5", "inf", "0.001", "-2"}));

  // Text that is no number stops the run with the element and the text.
  const std::vector<std::string> bad = {"1", "one"};
  absl::StatusOr<Value> error =
      machine.Invoke("main", {Value(*MakeStringTensor({2}, bad, MakeNaiveAllocator()))});
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(std::string(error.status().message()), HasSubstr("element 1: 'one' is not a number"));
}

TEST(OnnxImporterTest, ACastOfAConstantToStringsIsNotFolded) {
  // Executables hold no string constants: cast(constant) -> string stays a call.
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddIntsConstant(g, "c", {7, -1});
  AddIntAttr(AddNode(g, "Cast", {"c"}, {"y"}), "to", onnx::TensorProto::STRING);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::STRING, {"2"});
  absl::StatusOr<Module> mod = Import(m);
  ASSERT_TRUE(mod.ok()) << mod.status();
  std::shared_ptr<const vm::Executable> exe = CompileAndLoad(*mod);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  absl::StatusOr<Value> got = machine.Invoke("main", {});
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj* y = got->As<NDArrayObj>();
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(StringElement(*y, 0).value_or("?"), "7");
  EXPECT_EQ(StringElement(*y, 1).value_or("?"), "-1");
}

// Dropout whose training_mode arrives at run time: in training, numpy's draws from the
// seed decide the mask (seed 0: 0.5488, 0.7152, 0.6028, 0.5449, so ratio 0.6 keeps
// elements 1 and 2) and kept elements are scaled by 1 / (1 - ratio); outside training
// the data passes and the mask is all true. Exact: x * (1 / (1 - r)) in f32 both ways.
TEST(OnnxImporterTest, DropoutTrainingModeAtRunTime) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_input(), "r", onnx::TensorProto::FLOAT, {});
  AddValue(g->mutable_input(), "t", onnx::TensorProto::BOOL, {});
  AddIntAttr(AddNode(g, "Dropout", {"x", "r", "t"}, {"y", "mask"}), "seed", 0);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_output(), "mask", onnx::TensorProto::BOOL, {"n"});
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  auto allocator = MakePooledAllocator();
  vm::VirtualMachine machine(exe);
  const NDArray x = Counting({4}, allocator);
  absl::StatusOr<NDArray> r = NDArrayObj::Empty({}, DType::kF32, allocator);
  absl::StatusOr<NDArray> t = NDArrayObj::Empty({}, DType::kBool, allocator);
  ASSERT_TRUE(r.ok() && t.ok());
  (*r)->data_as<float>()[0] = 0.6f;
  for (const bool training : {true, false}) {
    SCOPED_TRACE(training);
    (*t)->data_as<bool>()[0] = training;
    absl::StatusOr<Value> got = machine.Invoke("main", {Value(x), Value(*r), Value(*t)});
    ASSERT_TRUE(got.ok()) << got.status();
    const auto& outs = *got->As<ADTObj>();
    const NDArrayObj& y = *outs.fields()[0].As<NDArrayObj>();
    const NDArrayObj& mask = *outs.fields()[1].As<NDArrayObj>();
    const bool keep[] = {false, true, true, false};
    for (int i = 0; i < 4; ++i) {
      const bool kept = !training || keep[i];
      EXPECT_EQ(mask.data_as<bool>()[i], kept) << i;
      const float scale = 1.0f / (1.0f - 0.6f);  // in f32, as numpy's reference
      EXPECT_EQ(y.data_as<float>()[i], !training ? i + 1.0f : kept ? (i + 1.0f) * scale : 0.0f) << i;
    }
  }
}

TEST(OnnxImporterErrorTest, DropoutThatMayTrainNeedsASeed) {
  onnx::ModelProto m = Model(13);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"n"});
  AddValue(g->mutable_input(), "t", onnx::TensorProto::BOOL, {});
  AddNode(g, "Dropout", {"x", "", "t"}, {"y"});
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"n"});
  ExpectError(Import(m), absl::StatusCode::kUnimplemented, "(Dropout, opset 13): training without a seed");
}

// 3-D pooling runs as two 2-D pools (over H and W, then over D). Against a direct
// reference over the box at depth, height and width known only at run time, with
// padding, strides, ceil_mode and count_include_pad, where the taps a window counts
// are the product of those along each axis (the 2-D kernels' rule). The max is exact;
// the average divides twice, so it may differ by a few ulp (2e-6 relative allowed).
TEST(OnnxImporterTest, ThreeDimensionalPoolingAtRunTimeExtents) {
  const std::vector<int64_t> kernel = {2, 3, 2}, strides = {2, 1, 2}, pads = {1, 0, 1, 0, 1, 1};
  for (const bool max : {true, false}) {
    SCOPED_TRACE(max ? "MaxPool" : "AveragePool");
    onnx::ModelProto m = Model(13);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {"1", "2", "d", "h", "w"});
    onnx::NodeProto* pool = AddNode(g, max ? "MaxPool" : "AveragePool", {"x"}, {"y"});
    AddIntsAttr(pool, "kernel_shape", kernel);
    AddIntsAttr(pool, "strides", strides);
    AddIntsAttr(pool, "pads", pads);
    AddIntAttr(pool, "ceil_mode", 1);
    if (!max) AddIntAttr(pool, "count_include_pad", 1);
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"1", "2", "", "", ""});
    const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
    ASSERT_NE(exe, nullptr);
    auto allocator = MakePooledAllocator();
    vm::VirtualMachine machine(exe);
    for (const std::vector<int64_t>& in : {std::vector<int64_t>{3, 4, 5}, {1, 3, 1}, {4, 2, 3}}) {
      SCOPED_TRACE(absl::StrFormat("D, H, W = %d, %d, %d", in[0], in[1], in[2]));
      NDArray x = Counting({1, 2, in[0], in[1], in[2]}, allocator);
      for (int64_t i = 0; i < x->num_elements(); ++i) x->data_as<float>()[i] = std::sin(0.7f * i) * 10.0f;
      absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
      ASSERT_TRUE(got.ok()) << got.status();
      const NDArrayObj& y = *got->As<NDArrayObj>();
      std::vector<int64_t> out(3);
      for (int a = 0; a < 3; ++a) {
        out[a] = (in[a] + pads[a] + pads[3 + a] - kernel[a] + strides[a] - 1) / strides[a] + 1;
      }
      ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()),
                (std::vector<int64_t>{1, 2, out[0], out[1], out[2]}));
      int64_t e = 0;
      for (int64_t c = 0; c < 2; ++c) {
        for (int64_t o0 = 0; o0 < out[0]; ++o0) {
          for (int64_t o1 = 0; o1 < out[1]; ++o1) {
            for (int64_t o2 = 0; o2 < out[2]; ++o2, ++e) {
              const int64_t o[3] = {o0, o1, o2};
              double best = std::numeric_limits<float>::lowest(), sum = 0, padded = 1;
              for (int a = 0; a < 3; ++a) {  // taps inside [-pad_before, in + pad_after)
                const int64_t start = o[a] * strides[a] - pads[a], last = in[a] + pads[3 + a] - 1;
                padded *= std::max<int64_t>(0, std::min(kernel[a], last - start + 1));
              }
              for (int64_t k0 = 0; k0 < kernel[0]; ++k0) {
                for (int64_t k1 = 0; k1 < kernel[1]; ++k1) {
                  for (int64_t k2 = 0; k2 < kernel[2]; ++k2) {
                    const int64_t p[3] = {o0 * strides[0] - pads[0] + k0, o1 * strides[1] - pads[1] + k1,
                                          o2 * strides[2] - pads[2] + k2};
                    if (p[0] < 0 || p[0] >= in[0] || p[1] < 0 || p[1] >= in[1] || p[2] < 0 || p[2] >= in[2]) continue;
                    const double v = x->data_as<float>()[((c * in[0] + p[0]) * in[1] + p[1]) * in[2] + p[2]];
                    best = std::max(best, v);
                    sum += v;
                  }
                }
              }
              const double want = max ? best : padded == 0 ? 0.0 : sum / padded;
              EXPECT_NEAR(y.data_as<float>()[e], want, max ? 0.0 : 2e-6 * std::max(1.0, std::fabs(want)))
                  << "output " << e;
            }
          }
        }
      }
    }
  }
}

TEST(OnnxImporterErrorTest, StringTensorsOnlyCast) {
  // Strings reach no kernel but cast: Concat of string inputs is a type error.
  onnx::ModelProto m = Model();
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "a", onnx::TensorProto::STRING, {"2"});
  AddNode(g, "Identity", {"a"}, {"b"});
  AddIntAttr(AddNode(g, "Concat", {"a", "b"}, {"c"}), "axis", 0);
  AddValue(g->mutable_output(), "c", onnx::TensorProto::STRING, {"4"});
  ExpectErrorMentions(Import(m), "concatenate: input 0 is a string tensor: concatenate takes "
                                 "none (only cast converts strings)");
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
