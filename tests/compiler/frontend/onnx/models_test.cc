// The ONNX model fixtures of tests/models/ — BERT, GPT-2 and DistilBERT, a 2-layer LSTM
// and a 2-layer bidirectional GRU, in small configurations (and a U-Net-like image model,
// at image sizes), each exported from PyTorch
// with dynamic batch and sequence axes by the script beside it — each compiled once,
// through the same path as vm_compile and vm_run, and run at every (batch, sequence)
// pair of its PyTorch goldens: 1x1, 2x7 (a padded row where the model has a mask), 1x64,
// 3x128, 1x384, 2x512 and 8x2.
//
// Tolerance: max |dynvm - PyTorch| <= 1e-4 on every output (issue 5's bound). Outputs
// are LayerNorm'd hidden states, logits of a 64-wide tied projection of them, or
// recurrent states in (-1, 1), all of order 1; float32 sums of 16-256 products in
// another order than PyTorch's differ by ~1e-6 (the recurrences over 512 steps do not
// amplify it: their states are contracted by the gates).
#include <cmath>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx/importer.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "serializer/api.h"
#include "serializer/npy.h"
#include "tests/compiler/compile_and_load.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

constexpr double kMaxAbs = 1e-4;

struct ModelCase {
  std::string dir, file;
  std::string golden_prefix;  // the goldens are golden/<prefix><tag>_<name>.npy
  std::vector<std::string> inputs;
  std::string input_spec;  // every input's signature
  std::vector<std::string> outputs;
};

// How gtest and ctest show a case: its file.
void PrintTo(const ModelCase& m, std::ostream* os) { *os << m.file; }

// The test names gtest shows (OnnxModels/ModelTest.*/bert_mini).
std::string CaseName(const ::testing::TestParamInfo<ModelCase>& info) {
  return info.param.file.substr(0, info.param.file.find('.'));
}

std::string ModelDir(const ModelCase& m) { return std::string(DYNVM_MODELS_DIR) + "/" + m.dir; }

NDArray Golden(const ModelCase& m, const std::string& tag, const std::string& name) {
  const std::string path =
      absl::StrFormat("%s/golden/%s%s_%s.npy", ModelDir(m), m.golden_prefix, tag, name);
  absl::StatusOr<NDArray> t = serializer::ReadNpyFile(path, MakeNaiveAllocator());
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : NDArray();
}

double MaxAbsDiff(const NDArrayObj& got, const NDArrayObj& want) {
  double worst = 0.0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double d = std::fabs(double{got.data_as<float>()[i]} - double{want.data_as<float>()[i]});
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  return worst;
}

std::shared_ptr<const vm::Executable> Compile(const ModelCase& m) {
  absl::StatusOr<Module> mod = onnx_frontend::ImportOnnxFile(ModelDir(m) + "/" + m.file);
  EXPECT_TRUE(mod.ok()) << mod.status();
  if (!mod.ok()) return nullptr;
  // vm_compile's path: fused groups become native code for this machine.
  CompileOptions options;
  options.target_cpu = "native";
  return testing::CompileAndLoad(*mod, options);
}

// Runs `machine` on the goldens of `m` tagged `tag` and compares every output: floats
// within kMaxAbs, integers (top-k ids) exactly.
void ExpectMatchesGoldens(vm::VirtualMachine& machine, const ModelCase& m, const std::string& tag) {
  std::vector<Value> args;
  for (const std::string& name : m.inputs) args.emplace_back(Golden(m, tag, name));
  absl::StatusOr<Value> result = machine.Invoke("main", args);
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<Value> outputs = {*result};
  if (m.outputs.size() > 1) {
    const ADTObj* tuple = result->As<ADTObj>();
    ASSERT_NE(tuple, nullptr);
    outputs.assign(tuple->fields().begin(), tuple->fields().end());
  }
  ASSERT_EQ(outputs.size(), m.outputs.size());
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const NDArray want = Golden(m, tag, m.outputs[i]);
    const NDArrayObj* got = outputs[i].As<NDArrayObj>();
    ASSERT_NE(got, nullptr) << m.outputs[i];
    ASSERT_EQ(got->shape(), want->shape()) << m.outputs[i];
    if (want->dtype() == DType::kI64) {
      for (int64_t e = 0; e < want->num_elements(); ++e) {
        EXPECT_EQ(got->data_as<int64_t>()[e], want->data_as<int64_t>()[e]) << m.outputs[i] << " " << e;
      }
    } else {
      EXPECT_LE(MaxAbsDiff(*got, *want), kMaxAbs) << m.outputs[i];
    }
  }
}

class ModelTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ModelTest, SignatureKeepsTheOnnxNamesAndSymbolicAxes) {
  const ModelCase& m = GetParam();
  std::shared_ptr<const vm::Executable> exe = Compile(m);
  ASSERT_NE(exe, nullptr);
  const vm::Function& fn = exe->function(*exe->FunctionIndex("main"));
  ASSERT_EQ(fn.params.size(), m.inputs.size());
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    EXPECT_EQ(fn.params[i].name, m.inputs[i]);
    EXPECT_EQ(vm::ValueSpecToString(fn.params[i]), m.input_spec) << m.inputs[i];
  }
}

TEST_P(ModelTest, OneExecutableMatchesPyTorchAtEveryLength) {
  const ModelCase& m = GetParam();
  std::shared_ptr<const vm::Executable> exe = Compile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  for (const auto& [batch, seq] : std::vector<std::pair<int, int>>{
           {1, 1}, {2, 7}, {1, 64}, {3, 128}, {1, 384}, {2, 512}, {8, 2}}) {
    const std::string tag = absl::StrFormat("b%d_s%d", batch, seq);
    SCOPED_TRACE(tag);
    ExpectMatchesGoldens(machine, m, tag);
  }
}

INSTANTIATE_TEST_SUITE_P(
    OnnxModels, ModelTest,
    ::testing::Values(
        ModelCase{"bert", "bert_mini.onnx", "", {"input_ids", "attention_mask", "token_type_ids"},
                  "tensor i64[batch, sequence]", {"last_hidden_state", "pooler_output"}},
        ModelCase{"gpt2", "gpt2_mini.onnx", "", {"input_ids"}, "tensor i64[batch, sequence]", {"logits"}},
        ModelCase{"distilbert", "distilbert_mini.onnx", "", {"input_ids", "attention_mask"},
                  "tensor i64[batch, sequence]", {"last_hidden_state"}},
        ModelCase{"rnn", "lstm_mini.onnx", "lstm_", {"x"}, "tensor f32[sequence, batch, 16]",
                  {"y", "h_n", "c_n"}},
        ModelCase{"rnn", "gru_mini.onnx", "gru_", {"x"}, "tensor f32[batch, sequence, 16]",
                  {"y", "h_n"}}),
    CaseName);

// Compiles `m` once and checks that one executable against its goldens at every tag.
void ExpectMatchesGoldensAt(const ModelCase& m, const std::vector<std::string>& tags) {
  SCOPED_TRACE(m.file);
  std::shared_ptr<const vm::Executable> exe = Compile(m);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  for (const std::string& tag : tags) {
    SCOPED_TRACE(tag);
    ExpectMatchesGoldens(machine, m, tag);
  }
}

// The golden tags n{batch}_h{height}_w{width} of an image model's (batch, height, width).
std::vector<std::string> ImageTags(const std::vector<std::tuple<int, int, int>>& sizes) {
  std::vector<std::string> tags;
  for (const auto& [batch, height, width] : sizes) tags.push_back(absl::StrFormat("n%d_h%d_w%d", batch, height, width));
  return tags;
}

// The U-Net-like image model (tests/models/unet: convolutions with BatchNorm, max
// pooling, ConvTranspose2d, nearest and bilinear F.interpolate, skip concatenations),
// exported with dynamic batch, height and width: one executable at every image size of
// its goldens (make_unet_mini.py's CASES), within the same bound as the sequence models
// (its outputs are of order 0.1-1).
TEST(OnnxImageModelTest, UNetMatchesPyTorchAtEveryImageSize) {
  ExpectMatchesGoldensAt(ModelCase{"unet", "unet_mini.onnx", "", {"x"}, "", {"y"}},
                         ImageTags({{1, 16, 16}, {2, 32, 24}, {1, 8, 40}, {3, 2, 2}}));
}

// A small ResNet-style classifier (tests/models/cnn: Conv2d + BatchNorm2d stems and
// residual blocks, a strided projection shortcut, global average pooling, a linear
// head), exported with dynamic batch, height and width: one executable at every image
// size of its goldens (make_cnn_mini.py's CASES), odd and 1x1 ones included.
TEST(OnnxImageModelTest, ResidualCnnMatchesPyTorchAtEveryImageSize) {
  ExpectMatchesGoldensAt(ModelCase{"cnn", "cnn_mini.onnx", "", {"x"}, "", {"logits"}},
                         ImageTags({{1, 32, 32}, {2, 17, 23}, {1, 8, 64}, {3, 1, 1}}));
}

// Models that build at run time what other exports keep as constants
// (tests/models/decoder): a GPT-style decoder whose causal mask is torch.tril over the
// sequence (Trilu) returning the top-5 logits and ids of the last position (TopK), and
// a RoBERTa-style encoder whose position ids are a cumsum over the mask (CumSum); and
// PyTorch's own nn.TransformerEncoder with a padding mask (tests/models/transformer,
// exported through the layers' ordinary path with every dropout 0, as its script says).
// One executable each, at their scripts' CASES (padded rows included); the top-k ids
// must be equal.
TEST(OnnxRunTimeMaskModelTest, DecoderRobertaAndTransformerEncoderMatchPyTorch) {
  const std::vector<std::string> tags = {"b1_s5", "b2_s7", "b3_s64"};
  ExpectMatchesGoldensAt(
      ModelCase{"decoder", "decoder_mini.onnx", "decoder_mini_", {"input_ids"}, "", {"values", "indices"}}, tags);
  ExpectMatchesGoldensAt(ModelCase{"decoder", "roberta_mini.onnx", "roberta_mini_", {"input_ids", "attention_mask"},
                                   "", {"last_hidden_state"}},
                         tags);
  ExpectMatchesGoldensAt(ModelCase{"transformer", "transformer_mini.onnx", "", {"input_ids", "attention_mask"}, "",
                                   {"last_hidden_state"}},
                         tags);
}

}  // namespace
}  // namespace dynvm::compiler
