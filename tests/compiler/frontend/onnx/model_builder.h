// Building ONNX models as protos in tests, and importing, compiling and loading them:
// what the importer's and the converters' tests share.
#ifndef DYNVM_TESTS_COMPILER_FRONTEND_ONNX_MODEL_BUILDER_H_
#define DYNVM_TESTS_COMPILER_FRONTEND_ONNX_MODEL_BUILDER_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/relay_text/printer.h"
#include "compiler/ir/module.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/compile_and_load.h"
#include "vm/executable.h"

namespace dynvm::compiler::onnx_frontend::testing {

// A model of opset `opset` whose graph is filled by the caller.
inline onnx::ModelProto Model(int64_t opset = 14) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  onnx::OperatorSetIdProto* id = m.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

// A graph input or output `name` of `elem_type` with dims: a number, a name, or "" for
// an unnamed dynamic dim.
inline void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* to, const std::string& name,
              int elem_type, const std::vector<std::string>& dims) {
  onnx::ValueInfoProto* v = to->Add();
  v->set_name(name);
  onnx::TypeProto::Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = t->mutable_shape();
  for (const std::string& d : dims) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d.empty()) continue;
    if (d[0] >= '0' && d[0] <= '9') {
      dim->set_dim_value(std::stoll(d));
    } else {
      dim->set_dim_param(d);
    }
  }
}

inline onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs, const std::string& name = "") {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_node" : name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

// A graph input or output `name` that is a sequence of tensors of `elem_type` with
// `dims` (as AddValue's).
inline void AddSequenceValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* to, const std::string& name,
                             int elem_type, const std::vector<std::string>& dims) {
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> tensor;
  AddValue(&tensor, name, elem_type, dims);
  onnx::ValueInfoProto* v = to->Add();
  v->set_name(name);
  *v->mutable_type()->mutable_sequence_type()->mutable_elem_type() = tensor[0].type();
}

// A 1-D f32 tensor holding `values`.
inline NDArray F32Vector(const std::vector<float>& values) {
  NDArray t = *NDArrayObj::Empty({static_cast<int64_t>(values.size())}, DType::kF32, MakeNaiveAllocator());
  std::copy(values.begin(), values.end(), t->data_as<float>());
  return t;
}

// Gives `node` the int attribute `name`.
inline void AddIntAttr(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

// Gives `node` the ints attribute `name`.
inline void AddIntsAttr(onnx::NodeProto* node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

inline void AddIntsConstant(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

inline void ExpectErrorMentions(const absl::StatusOr<Module>& got, const std::string& text) {
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr(text));
}

inline absl::StatusOr<Module> Import(const onnx::ModelProto& m) {
  return ImportOnnxBytes(m.SerializeAsString(), ".", "test.onnx");
}

inline std::string MainText(const Module& m) { return PrintModule(m).text; }

inline void ExpectError(const absl::StatusOr<Module>& got, absl::StatusCode code, const std::string& text) {
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), code) << got.status();
  EXPECT_THAT(std::string(got.status().message()), ::testing::HasSubstr(text));
}
// `m` imported, compiled and loaded; null (with a test failure) on an error.
inline std::shared_ptr<const vm::Executable> ImportAndCompile(const onnx::ModelProto& m) {
  absl::StatusOr<Module> mod = Import(m);
  EXPECT_TRUE(mod.ok()) << mod.status();
  return mod.ok() ? compiler::testing::CompileAndLoad(*mod) : nullptr;
}

// A float tensor of `shape` holding 1, 2, 3, ...
inline NDArray Counting(const std::vector<int64_t>& shape, const std::shared_ptr<Allocator>& allocator) {
  absl::StatusOr<NDArray> t = NDArrayObj::Empty(shape, DType::kF32, allocator);
  EXPECT_TRUE(t.ok()) << t.status();
  for (int64_t i = 0; i < (*t)->num_elements(); ++i) (*t)->data_as<float>()[i] = static_cast<float>(i + 1);
  return *t;
}

}  // namespace dynvm::compiler::onnx_frontend::testing

#endif  // DYNVM_TESTS_COMPILER_FRONTEND_ONNX_MODEL_BUILDER_H_
