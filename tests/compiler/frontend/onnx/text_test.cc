// The text converters (StringNormalizer, TfIdfVectorizer, Unique of strings) on what the conformance cases
// leave out: lengths and batches known only at run time, the types the importer gives
// them, string lists that must survive the executable file, the locales accepted, and
// errors at import.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/passes/type_infer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "objects/ndarray.h"
#include "objects/string_tensor.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/frontend/onnx/model_builder.h"
#include "vm/executable.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler::onnx_frontend {
namespace {

using ::dynvm::compiler::onnx_frontend::testing::AddIntAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddIntsAttr;
using ::dynvm::compiler::onnx_frontend::testing::AddNode;
using ::dynvm::compiler::onnx_frontend::testing::AddValue;
using ::dynvm::compiler::onnx_frontend::testing::ExpectError;
using ::dynvm::compiler::onnx_frontend::testing::Import;
using ::dynvm::compiler::onnx_frontend::testing::ImportAndCompile;
using ::dynvm::compiler::onnx_frontend::testing::Model;

using Strings = std::vector<std::string>;

void AddStringAttr(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}
void AddStringsAttr(onnx::NodeProto* node, const std::string& name, const Strings& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& v : values) a->add_strings(v);
}

NDArray StringTensor(std::vector<int64_t> shape, const Strings& values) {
  return *MakeStringTensor(shape, values, MakeNaiveAllocator());
}

// The type of main's result, inferred.
std::string ResultType(const absl::StatusOr<Module>& mod) {
  if (!mod.ok()) return std::string(mod.status().message());
  absl::StatusOr<Module> typed = InferTypes(*mod);
  if (!typed.ok()) return std::string(typed.status().message());
  absl::StatusOr<Expr> main = typed->Function("main");
  if (!main.ok() || !main->body().checked_type()) return "<untyped>";
  return main->body().checked_type()->ToString();
}

// A StringNormalizer of X [n] (or [1, n]) dropping `stopwords`, upper-casing the rest.
onnx::ModelProto NormalizerModel(const Strings& stopwords, const std::string& locale, bool two_d = false) {
  onnx::ModelProto m = Model(10);
  onnx::GraphProto* g = m.mutable_graph();
  const std::vector<std::string> dims = two_d ? std::vector<std::string>{"1", "n"} : std::vector<std::string>{"n"};
  AddValue(g->mutable_input(), "x", onnx::TensorProto::STRING, dims);
  onnx::NodeProto* node = AddNode(g, "StringNormalizer", {"x"}, {"y"});
  AddStringAttr(node, "case_change_action", "UPPER");
  if (!stopwords.empty()) AddStringsAttr(node, "stopwords", stopwords);
  if (!locale.empty()) AddStringAttr(node, "locale", locale);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::STRING, two_d ? std::vector<std::string>{"1", ""}
                                                                     : std::vector<std::string>{""});
  return m;
}

// The strings main returns for `x`.
absl::StatusOr<Strings> RunStrings(vm::VirtualMachine& machine, const NDArray& x, std::vector<int64_t>* shape) {
  absl::StatusOr<Value> got = machine.Invoke("main", {Value(x)});
  if (!got.ok()) return got.status();
  const NDArrayObj& y = *got->As<NDArrayObj>();
  *shape = std::vector<int64_t>(y.shape().begin(), y.shape().end());
  Strings out;
  for (int64_t i = 0; i < y.num_elements(); ++i) out.emplace_back(StringElement(y, i).value_or("<unreadable>"));
  return out;
}

// Stopwords found when the model runs, at any length; a stopword with ':' (the attribute
// encoding's separator) survives the executable file.
TEST(TextConvertersTest, StringNormalizerOverRunTimeLengths) {
  const onnx::ModelProto m = NormalizerModel({"Monday", "a:b"}, "en_US.UTF-8");
  EXPECT_EQ(ResultType(Import(m)), "Tensor[(?), string]");
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  std::vector<int64_t> shape;
  absl::StatusOr<Strings> y = RunStrings(machine, StringTensor({4}, {"monday", "a:b", "Friday", "A:B"}), &shape);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(*y, (Strings{"FRIDAY"}));
  y = RunStrings(machine, StringTensor({2}, {"MONDAY", "a:b"}), &shape);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(shape, (std::vector<int64_t>{1}));
  EXPECT_EQ(*y, (Strings{""}));
  y = RunStrings(machine, StringTensor({0}, {}), &shape);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, (Strings{""}));
}

// Without stopwords the length is the input's (at least 1); [1, n] stays two-dimensional.
TEST(TextConvertersTest, StringNormalizerTypes) {
  EXPECT_EQ(ResultType(Import(NormalizerModel({}, ""))), "Tensor[(max(1, n)), string]");
  EXPECT_EQ(ResultType(Import(NormalizerModel({"x"}, "C", /*two_d=*/true))), "Tensor[(1, ?), string]");
  // ASCII case mapping only: another locale's rules are not ours.
  ExpectError(Import(NormalizerModel({}, "tr_TR")), absl::StatusCode::kUnimplemented,
              "locale 'tr_TR': only English and C locales");
}

// TfIdfVectorizer over strings, batch and length at run time, with IDF weights.
TEST(TextConvertersTest, TfIdfVectorizerOverStrings) {
  onnx::ModelProto m = Model(9);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::STRING, {"b", "n"});
  onnx::NodeProto* node = AddNode(g, "TfIdfVectorizer", {"x"}, {"y"});
  AddStringAttr(node, "mode", "IDF");
  AddIntAttr(node, "min_gram_length", 1);
  AddIntAttr(node, "max_gram_length", 2);
  AddIntAttr(node, "max_skip_count", 1);
  AddIntsAttr(node, "ngram_counts", {0, 2});
  AddIntsAttr(node, "ngram_indexes", {2, 0, 1});
  AddStringsAttr(node, "pool_strings", {"the", "cat", "the", "cat"});
  onnx::AttributeProto* weights = node->add_attribute();
  weights->set_name("weights");
  weights->set_type(onnx::AttributeProto::FLOATS);
  for (float w : {0.5f, 2.0f, 4.0f}) weights->add_floats(w);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"b", "3"});
  EXPECT_EQ(ResultType(Import(m)), "Tensor[(b, 3), float32]");
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  // Row 0: "the" (coordinate 2), "cat" (0), "the _ cat" (1, one skipped); row 1: "cat".
  absl::StatusOr<Value> got =
      machine.Invoke("main", {Value(StringTensor({2, 3}, {"the", "a", "cat", "dog", "cat", "cat"}))});
  ASSERT_TRUE(got.ok()) << got.status();
  const NDArrayObj& y = *got->As<NDArrayObj>();
  ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(std::vector<float>(y.data_as<float>(), y.data_as<float>() + 6),
            (std::vector<float>{0.5f, 2.0f, 4.0f, 0.5f, 0.0f, 0.0f}));
}

// X must be of the pool's kind; a bad attribute fails at import with the kernel's message
// (Unimplemented: the importer's code for a node it cannot convert).
TEST(TextConvertersTest, TfIdfVectorizerErrors) {
  const auto model = [](int elem_type, const std::string& mode) {
    onnx::ModelProto m = Model(9);
    onnx::GraphProto* g = m.mutable_graph();
    AddValue(g->mutable_input(), "x", elem_type, {"n"});
    onnx::NodeProto* node = AddNode(g, "TfIdfVectorizer", {"x"}, {"y"});
    AddStringAttr(node, "mode", mode);
    AddIntAttr(node, "min_gram_length", 1);
    AddIntAttr(node, "max_gram_length", 1);
    AddIntAttr(node, "max_skip_count", 0);
    AddIntsAttr(node, "ngram_counts", {0});
    AddIntsAttr(node, "ngram_indexes", {0, 1});
    AddIntsAttr(node, "pool_int64s", {4, 5});
    AddValue(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {"2"});
    return m;
  };
  EXPECT_EQ(ResultType(Import(model(onnx::TensorProto::INT32, "TF"))), "Tensor[(2), float32]");
  ExpectError(Import(model(onnx::TensorProto::STRING, "TF")), absl::StatusCode::kUnimplemented,
              "unsupported dtype string for X: expected int32 or int64");
  ExpectError(Import(model(onnx::TensorProto::INT64, "BM25")), absl::StatusCode::kUnimplemented,
              "mode 'BM25': expected TF, IDF or TFIDF");
}

// Unique of a [b, n] string tensor, flattened (no axis), in order of first occurrence:
// all four outputs, the batch and length known only at run time.
TEST(TextConvertersTest, UniqueOfStrings) {
  onnx::ModelProto m = Model(11);
  onnx::GraphProto* g = m.mutable_graph();
  AddValue(g->mutable_input(), "x", onnx::TensorProto::STRING, {"b", "n"});
  onnx::NodeProto* node = AddNode(g, "Unique", {"x"}, {"y", "indices", "inverse", "counts"});
  AddIntAttr(node, "sorted", 0);
  AddValue(g->mutable_output(), "y", onnx::TensorProto::STRING, {""});
  for (const char* name : {"indices", "inverse", "counts"}) {
    AddValue(g->mutable_output(), name, onnx::TensorProto::INT64, {""});
  }
  EXPECT_EQ(ResultType(Import(m)),
            "(Tensor[(?), string], Tensor[(?), int64], Tensor[(b*n), int64], Tensor[(?), int64])");
  const std::shared_ptr<const vm::Executable> exe = ImportAndCompile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  absl::StatusOr<Value> got =
      machine.Invoke("main", {Value(StringTensor({2, 3}, {"to", "be", "or", "not", "to", "be"}))});
  ASSERT_TRUE(got.ok()) << got.status();
  const absl::Span<const Value> outs = got->As<ADTObj>()->fields();
  const NDArrayObj& y = *outs[0].As<NDArrayObj>();
  Strings values;
  for (int64_t i = 0; i < y.num_elements(); ++i) values.emplace_back(StringElement(y, i).value_or("<unreadable>"));
  EXPECT_EQ(values, (Strings{"to", "be", "or", "not"}));
  const auto ints = [&](int i) {
    const NDArrayObj& t = *outs[i].As<NDArrayObj>();
    return std::vector<int64_t>(t.data_as<int64_t>(), t.data_as<int64_t>() + t.num_elements());
  };
  EXPECT_EQ(ints(1), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(ints(2), (std::vector<int64_t>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(ints(3), (std::vector<int64_t>{2, 2, 1, 1}));
}

}  // namespace
}  // namespace dynvm::compiler::onnx_frontend
