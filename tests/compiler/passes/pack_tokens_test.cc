// Tests of the packed entry (compiler/passes/pack_tokens.h): tiny BERT
// (tests/models/bert/bert_mini.onnx) compiled with @main_packed, whose results for
// sequences of mixed lengths packed together equal @main's for each sequence run alone
// and for the sequences padded into one batch with an attention mask; the function's
// text; the executable storing each weight once; its run-time errors; and the reasons
// given when a function has no packed form.
//
// Tolerance: @main_packed runs the same kernels on the same rows as @main (attention per
// sequence, without the padded keys whose weights are exactly 0), so the results agree
// to float rounding; 1e-4 absolute is the bound the serving issue states.
#include "compiler/passes/pack_tokens.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "gtest/gtest.h"
#include "objects/adt.h"
#include "objects/allocator.h"
#include "tests/compiler/compile_and_load.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

constexpr double kTolerance = 1e-4;

NDArray I64(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
  NDArray t = *NDArrayObj::Empty(std::move(shape), DType::kI64, MakeNaiveAllocator());
  std::memcpy(t->data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

// Token ids (tiny BERT's vocabulary of 1000) and token types of each sequence.
struct Sequence {
  std::vector<int64_t> ids, types;
};

std::vector<Sequence> RandomSequences(const std::vector<int64_t>& lengths, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> id(0, 999), type(0, 1);
  std::vector<Sequence> out;
  for (int64_t len : lengths) {
    Sequence& s = out.emplace_back();
    for (int64_t i = 0; i < len; ++i) {
      s.ids.push_back(id(rng));
      s.types.push_back(type(rng));
    }
  }
  return out;
}

std::vector<const NDArrayObj*> Tensors(const Value& v) {
  std::vector<const NDArrayObj*> out;
  if (const ADTObj* t = v.As<ADTObj>()) {
    for (const Value& f : t->fields()) out.push_back(f.As<NDArrayObj>());
  } else {
    out.push_back(v.As<NDArrayObj>());
  }
  return out;
}

// Expects `rows` rows of `width` floats at `got` to equal those at `want` within kTolerance.
void ExpectRowsNear(const float* got, const float* want, int64_t rows, int64_t width, const std::string& what) {
  double max_diff = 0;
  for (int64_t i = 0; i < rows * width; ++i) max_diff = std::max(max_diff, std::fabs(double(got[i]) - want[i]));
  EXPECT_LE(max_diff, kTolerance) << what;
}

class BertMiniTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<Module> mod =
        onnx_frontend::ImportOnnxFile(std::string(DYNVM_MODELS_DIR) + "/bert/bert_mini.onnx");
    ASSERT_TRUE(mod.ok()) << mod.status();
    CompileOptions options;
    options.packed_entry = &outcome_;
    options.after_pass = [](std::string_view pass, const Module& m) {
      if (pass == "packed_entry") packed_text_ = PrintModule(m).text;
    };
    spec_ = std::make_unique<vm::ExecutableSpec>(*CompileModule(*mod, options));
    exe_ = *serializer::ReloadExecutable(*spec_, kernels::DefaultRegistry());
  }
  static void TearDownTestSuite() {
    exe_.reset();
    spec_.reset();
  }

  // @main_packed on `seqs` packed: last_hidden_state [tokens, 64], pooler_output [n, 64].
  static absl::StatusOr<Value> RunPacked(const std::vector<Sequence>& seqs) {
    std::vector<int64_t> ids, types, offsets = {0};
    for (const Sequence& s : seqs) {
      ids.insert(ids.end(), s.ids.begin(), s.ids.end());
      types.insert(types.end(), s.types.begin(), s.types.end());
      offsets.push_back(offsets.back() + static_cast<int64_t>(s.ids.size()));
    }
    const int64_t tokens = offsets.back();
    return RunPackedInputs(I64({tokens}, ids), I64({tokens}, types),
                           I64({static_cast<int64_t>(offsets.size())}, offsets));
  }
  static absl::StatusOr<Value> RunPackedInputs(NDArray ids, NDArray types, NDArray offsets) {
    vm::VirtualMachine machine(exe_);
    return machine.Invoke("main_packed", {Value(ids), Value(types), Value(offsets)});
  }

  // @main on `seqs` padded to the longest, with the attention mask.
  static absl::StatusOr<Value> RunPadded(const std::vector<Sequence>& seqs) {
    int64_t longest = 0;
    for (const Sequence& s : seqs) longest = std::max<int64_t>(longest, s.ids.size());
    const int64_t batch = static_cast<int64_t>(seqs.size());
    std::vector<int64_t> ids(batch * longest, 0), mask(batch * longest, 0), types(batch * longest, 0);
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t i = 0; i < seqs[b].ids.size(); ++i) {
        ids[b * longest + i] = seqs[b].ids[i];
        types[b * longest + i] = seqs[b].types[i];
        mask[b * longest + i] = 1;
      }
    }
    vm::VirtualMachine machine(exe_);
    return machine.Invoke("main", {Value(I64({batch, longest}, ids)), Value(I64({batch, longest}, mask)),
                                   Value(I64({batch, longest}, types))});
  }

  static PackedEntryOutcome outcome_;
  static std::string packed_text_;
  static std::unique_ptr<vm::ExecutableSpec> spec_;
  static std::shared_ptr<const vm::Executable> exe_;
};

PackedEntryOutcome BertMiniTest::outcome_;
std::string BertMiniTest::packed_text_;
std::unique_ptr<vm::ExecutableSpec> BertMiniTest::spec_;
std::shared_ptr<const vm::Executable> BertMiniTest::exe_;

TEST_F(BertMiniTest, PackedEqualsEachSequenceAloneAndThePaddedBatch) {
  ASSERT_TRUE(outcome_.derived) << outcome_.detail;
  const std::vector<int64_t> lengths = {1, 7, 16, 3, 40, 2};
  const std::vector<Sequence> seqs = RandomSequences(lengths, 5);
  absl::StatusOr<Value> packed = RunPacked(seqs);
  ASSERT_TRUE(packed.ok()) << packed.status();
  const std::vector<const NDArrayObj*> out = Tensors(*packed);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0]->shape(), (Shape{69, 64}));
  ASSERT_EQ(out[1]->shape(), (Shape{6, 64}));

  absl::StatusOr<Value> padded = RunPadded(seqs);
  ASSERT_TRUE(padded.ok()) << padded.status();
  const std::vector<const NDArrayObj*> pad = Tensors(*padded);
  int64_t row = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const int64_t len = lengths[s];
    absl::StatusOr<Value> alone = RunPadded({seqs[s]});
    ASSERT_TRUE(alone.ok()) << alone.status();
    const std::vector<const NDArrayObj*> one = Tensors(*alone);
    const std::string what = "sequence " + std::to_string(s) + " of " + std::to_string(len) + " tokens";
    ExpectRowsNear(out[0]->data_as<float>() + row * 64, one[0]->data_as<float>(), len, 64, what + ", alone");
    ExpectRowsNear(out[1]->data_as<float>() + s * 64, one[1]->data_as<float>(), 1, 64, what + ", pooled alone");
    ExpectRowsNear(out[0]->data_as<float>() + row * 64, pad[0]->data_as<float>() + s * 40 * 64, len, 64,
                   what + ", padded");
    ExpectRowsNear(out[1]->data_as<float>() + s * 64, pad[1]->data_as<float>() + s * 64, 1, 64,
                   what + ", pooled padded");
    row += len;
  }
}

TEST_F(BertMiniTest, TheFunctionReadsPackedTokensAndOffsets) {
  EXPECT_EQ(outcome_.detail, "@main_packed: 2 attention layers over packed sequences");
  const std::string text = packed_text_.substr(packed_text_.find("def @main_packed"));
  EXPECT_TRUE(absl::StrContains(text, "(%input_ids_1: Tensor[(tokens), int64], %token_type_ids_1: "
                                      "Tensor[(tokens), int64], %offsets: Tensor[(sequences + 1), int64])"))
      << text;
  EXPECT_EQ(text.find("nn.attention("), std::string::npos) << text;
  EXPECT_EQ(text.find("attention_mask"), std::string::npos) << text;
  size_t varlen = 0;
  for (size_t at = 0; (at = text.find("nn.varlen_attention(", at)) != std::string::npos; ++at) ++varlen;
  EXPECT_EQ(varlen, 2u);
  EXPECT_TRUE(absl::StrContains(text, "sequence_positions(%offsets, %input_ids_1)")) << text;
  EXPECT_TRUE(absl::StrContains(text, "sequence_rows(%offsets, row=0)")) << text;
  // The signature: the inputs by their ONNX names, the results named as @main's.
  const vm::Function* fn = nullptr;
  for (const vm::Function& f : spec_->functions) {
    if (f.name == "main_packed") fn = &f;
  }
  ASSERT_NE(fn, nullptr);
  ASSERT_EQ(fn->params.size(), 3u);
  EXPECT_EQ(fn->params[0].name, "input_ids");
  EXPECT_EQ(fn->params[1].name, "token_type_ids");
  EXPECT_EQ(fn->params[2].name, "offsets");
  const std::vector<const vm::ValueSpec*> outputs = fn->outputs();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(outputs[0]->name, "last_hidden_state");
  EXPECT_EQ(outputs[1]->name, "pooler_output");
}

// Both functions read the same packed weights: one constant each in the executable.
TEST_F(BertMiniTest, EachWeightIsStoredOnce) {
  std::vector<const NDArrayObj*> large;
  for (const Value& c : spec_->constants) {
    const NDArrayObj* t = c.As<NDArrayObj>();
    if (t != nullptr && t->nbytes() >= 1024) large.push_back(t);
  }
  ASSERT_GT(large.size(), 10u);
  for (size_t i = 0; i < large.size(); ++i) {
    for (size_t j = i + 1; j < large.size(); ++j) {
      const bool same = large[i]->shape() == large[j]->shape() && large[i]->dtype() == large[j]->dtype() &&
                        std::memcmp(large[i]->data(), large[j]->data(), large[i]->nbytes()) == 0;
      EXPECT_FALSE(same) << "constants " << i << " and " << j << " are equal";
    }
  }
}

TEST_F(BertMiniTest, BadOffsetsAndSequencesAreErrors) {
  const NDArray ids = I64({5}, {1, 2, 3, 4, 5}), types = I64({5}, {0, 0, 0, 0, 0});
  absl::StatusOr<Value> out = RunPackedInputs(ids, types, I64({3}, {0, 4, 2}));
  EXPECT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "offsets[2] is 2 after 4")) << out.status();
  out = RunPackedInputs(ids, types, I64({3}, {0, 5, 5}));  // sequence 1 is empty
  EXPECT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "sequence 1 has 0 rows, but row 0 of each is read"))
      << out.status();
  // Longer than the position table (512 positions).
  const std::vector<Sequence> long_one = RandomSequences({513}, 6);
  out = RunPacked(long_one);
  EXPECT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "out of range")) << out.status();
  // The next run is fine.
  EXPECT_TRUE(RunPacked(RandomSequences({4, 9}, 7)).ok());
}

// A small encoder in Relay text: token values as features, one attention layer with a
// padding mask, and variants that have no packed form.
std::string Encoder(std::string_view mask_use, std::string_view layout = "BSHD", std::string_view result = "%r") {
  return absl::StrFormat(R"(#[version = "0.0.5"]
def @main(%%input_ids: Tensor[(b, s), int64], %%attention_mask: Tensor[(b, s), int64]) {
  %%0 = expand_dims(cast(%%input_ids, dtype="float32"), axis=2);
  %%1 = multiply(%%0, full(0.25f, shape=[4], dtype="float32"));
  %%q = reshape(%%1, newshape=[0, 0, 2, 2]);
  %%m0 = cast(expand_dims(%%attention_mask, axis=1, num_newaxis=2), dtype="float32");
  %%m = multiply(subtract(1f, %%m0), -10000f);
  %%a = nn.attention(%%q, %%q, %%q, %s, layout="%s");
  %%r = reshape(%%a, newshape=[0, 0, 4]);
  %s
}
)",
                         mask_use, layout, result);
}

PackedEntryOutcome Outcome(const std::string& text) {
  absl::StatusOr<Module> mod = ParseModule(text);
  EXPECT_TRUE(mod.ok()) << mod.status();
  PackedEntryOutcome outcome;
  CompileOptions options;
  options.packed_entry = &outcome;
  options.target_cpu = "";
  EXPECT_TRUE(CompileModule(*mod, options).ok());
  return outcome;
}

TEST(PackTokensTest, RelayEncoderPacksAndAgrees) {
  const PackedEntryOutcome outcome = Outcome(Encoder("%m"));
  EXPECT_TRUE(outcome.derived) << outcome.detail;
  absl::StatusOr<Module> mod = ParseModule(Encoder("%m"));
  ASSERT_TRUE(mod.ok());
  const std::shared_ptr<const vm::Executable> exe = testing::CompileAndLoad(*mod);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  // Two sequences of 3 and 1 tokens: padded with a mask, and packed.
  absl::StatusOr<Value> padded = machine.Invoke(
      "main", {Value(I64({2, 3}, {1, 2, 3, 4, 0, 0})), Value(I64({2, 3}, {1, 1, 1, 1, 0, 0}))});
  ASSERT_TRUE(padded.ok()) << padded.status();
  absl::StatusOr<Value> packed =
      machine.Invoke("main_packed", {Value(I64({4}, {1, 2, 3, 4})), Value(I64({3}, {0, 3, 4}))});
  ASSERT_TRUE(packed.ok()) << packed.status();
  const float* p = packed->As<NDArrayObj>()->data_as<float>();
  const float* q = padded->As<NDArrayObj>()->data_as<float>();
  ExpectRowsNear(p, q, 3, 4, "sequence 0");
  ExpectRowsNear(p + 12, q + 12, 1, 4, "sequence 1");
}

TEST(PackTokensTest, ReasonsWhenThereIsNoPackedForm) {
  PackedEntryOutcome o = Outcome(Encoder("%m", "BSHD", "add(%r, expand_dims(cast(%attention_mask, dtype=\"float32\"), axis=2))"));
  EXPECT_FALSE(o.derived);
  EXPECT_TRUE(absl::StartsWith(o.detail, "`add` (<input>:")) << o.detail;
  EXPECT_TRUE(absl::StrContains(o.detail, "): the attention mask mixed with token values")) << o.detail;

  o = Outcome(absl::StrReplaceAll(Encoder("%m"), {{"layout=\"BSHD\"", "layout=\"BHSD\""}}));
  EXPECT_TRUE(absl::StrContains(o.detail, "attention in the BHSD layout")) << o.detail;

  o = Outcome(R"(#[version = "0.0.5"]
def @main(%input_ids: Tensor[(b, s), int64]) { cast(%input_ids, dtype="float32") }
)");
  EXPECT_EQ(o.detail, "no attention to pack: the function has no nn.attention");

  o = Outcome(R"(#[version = "0.0.5"]
def @main(%x: Tensor[(b, s, 4), float32]) { %x }
)");
  EXPECT_EQ(o.detail, "input %x is not [batch, seq] like the others");

  o = Outcome(R"(#[version = "0.0.5"]
def @main(%input_ids: Tensor[(b, s), int64]) { sum(cast(%input_ids, dtype="float32"), axis=[1]) }
)");
  EXPECT_TRUE(absl::StrContains(o.detail, "`sum` (<input>:2:48): no packed form is known")) << o.detail;

  // split's default axis is the batch axis.
  o = Outcome(R"(#[version = "0.0.5"]
def @main(%input_ids: Tensor[(b, s), int64]) { split(cast(%input_ids, dtype="float32"), indices_or_sections=2).0 }
)");
  EXPECT_TRUE(absl::StrContains(o.detail, "`split` (<input>:2:48): along the batch or sequence axis")) << o.detail;

  absl::StatusOr<Module> distil =
      onnx_frontend::ImportOnnxFile(std::string(DYNVM_MODELS_DIR) + "/distilbert/distilbert_mini.onnx");
  ASSERT_TRUE(distil.ok()) << distil.status();
  PackedEntryOutcome outcome;
  CompileOptions options;
  options.packed_entry = &outcome;
  ASSERT_TRUE(CompileModule(*distil, options).ok());
  EXPECT_FALSE(outcome.derived);
  EXPECT_TRUE(absl::StrContains(outcome.detail, "`transpose` (ONNX node '/layer.0/attention/Transpose' "
                                                "(Transpose)): a transpose that moves the batch or sequence axis"))
      << outcome.detail;
}

}  // namespace
}  // namespace dynvm::compiler
