// The Relay text corpus of tests/compiler/relay_text/: programs written as TVM 0.19
// prints them (the version header, graph-form %N bindings, /* ty=... */ comments,
// None attributes), one per grammar feature and a few whole models. For every program:
//
// - it is compiled at every optimisation level and at level 2 without fusion, written
//   as an executable file and loaded back (testing::CompileAndLoad), and run at several
//   shapes against references computed in double (corpus_features.cc,
//   corpus_models.cc, which state their tolerances);
// - printing it, parsing the printed text and printing again gives the same text, and
//   the printed program runs the same;
// - the directory is listed, so a program without a run case fails the suite.
//
// And a tail-recursive loop (a global, and a let-bound closure) runs 100,000 steps in
// the space it runs 1,000 in: the same
// register stack, the same peak of tensor memory, within a frame-depth limit of 4, and
// no more operator new calls than 1,000 steps make; the same measures see a loop that
// is not a tail call grow.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/testing/heap_counter.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/frontend/relay_text/printer.h"
#include "gtest/gtest.h"
#include "objects/allocator.h"
#include "tests/compiler/compile_and_load.h"
#include "tests/compiler/relay_text/corpus_util.h"
#include "tools/file_util.h"
#include "vm/virtual_machine.h"

namespace dynvm::compiler {
namespace {

using corpus::Case;

// The pipelines every program runs through: each optimisation level, and the default
// level without fusion.
struct Pipeline {
  int opt_level;
  bool fuse;
};
constexpr Pipeline kPipelines[] = {{0, true}, {1, true}, {2, true}, {3, true}, {2, false}};

std::string PipelineName(const Pipeline& p) { return absl::StrCat("O", p.opt_level, p.fuse ? "" : "NoFuse"); }
void PrintTo(const Pipeline& p, std::ostream* os) { *os << PipelineName(p); }

const std::vector<Case>& AllCases() {
  static const std::vector<Case>* const cases = [] {
    auto* all = new std::vector<Case>(corpus::FeatureCases());
    for (const Case& c : corpus::ModelCases()) all->push_back(c);
    return all;
  }();
  return *cases;
}

std::string CorpusPath(std::string_view file) { return std::string(DYNVM_RELAY_TEXT_DIR) + "/" + std::string(file); }

// The names of the .relay files in the corpus directory, sorted.
std::vector<std::string> CorpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(DYNVM_RELAY_TEXT_DIR)) {
    if (entry.is_regular_file() && entry.path().extension() == ".relay") {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadCorpusFile(std::string_view file) {
  absl::StatusOr<std::string> text = tools::ReadFileOrStdin(CorpusPath(file));
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : std::string();
}

// `text` parsed, compiled through `pipeline`, serialized and loaded back; null (with a
// test failure) on an error.
std::shared_ptr<const vm::Executable> Compile(const std::string& text, std::string_view source_name,
                                              absl::Span<const NDArray> constants, const Pipeline& pipeline) {
  CompileOptions options;
  options.opt_level = pipeline.opt_level;
  options.fuse = pipeline.fuse;
  return testing::ParseCompileAndLoad(text, source_name, options, constants);
}

TEST(RelayTextCorpusTest, EveryProgramHasARunCase) {
  const std::vector<std::string> files = CorpusFiles();
  EXPECT_GE(files.size(), 40u);
  std::set<std::string> registered;
  for (const Case& c : AllCases()) {
    EXPECT_TRUE(registered.insert(std::string(c.file)).second) << c.file << " is registered twice";
  }
  for (const std::string& file : files) EXPECT_TRUE(registered.count(file)) << file << " has no run case";
  for (const std::string& file : registered) {
    EXPECT_TRUE(std::binary_search(files.begin(), files.end(), file)) << "no file for the run case " << file;
  }
}

// Print, parse the printed text with the printed constants, print again: the same text.
TEST(RelayTextCorpusTest, PrintParsePrintIsAFixedPoint) {
  for (const std::string& file : CorpusFiles()) {
    SCOPED_TRACE(file);
    absl::StatusOr<Module> mod = ParseModule(ReadCorpusFile(file), {}, file);
    ASSERT_TRUE(mod.ok()) << mod.status();
    const RelayText first = PrintModule(*mod);
    absl::StatusOr<Module> again = ParseModule(first.text, first.constants, "printed " + file);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << first.text;
    const RelayText second = PrintModule(*again);
    EXPECT_EQ(second.text, first.text);
    EXPECT_EQ(second.constants.size(), first.constants.size());
  }
}

class CorpusRunTest : public ::testing::TestWithParam<std::tuple<Case, Pipeline>> {};

TEST_P(CorpusRunTest, MatchesTheReference) {
  const auto& [c, pipeline] = GetParam();
  const std::shared_ptr<const vm::Executable> exe = Compile(ReadCorpusFile(c.file), c.file, {}, pipeline);
  ASSERT_NE(exe, nullptr);
  vm::VirtualMachine machine(exe);
  c.run(machine);
}

// "model_mlp" for model_mlp.relay.
std::string CaseName(const Case& c) { return std::string(c.file.substr(0, c.file.find('.'))); }

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRunTest,
                         ::testing::Combine(::testing::ValuesIn(AllCases()), ::testing::ValuesIn(kPipelines)),
                         [](const ::testing::TestParamInfo<std::tuple<Case, Pipeline>>& info) {
                           return absl::StrCat(CaseName(std::get<0>(info.param)), "_",
                                               PipelineName(std::get<1>(info.param)));
                         });

// What the printer writes is the same program: it runs the same at the default pipeline.
class CorpusPrintedRunTest : public ::testing::TestWithParam<Case> {};

TEST_P(CorpusPrintedRunTest, MatchesTheReference) {
  const Case& c = GetParam();
  absl::StatusOr<Module> mod = ParseModule(ReadCorpusFile(c.file), {}, c.file);
  ASSERT_TRUE(mod.ok()) << mod.status();
  const RelayText printed = PrintModule(*mod);
  const std::shared_ptr<const vm::Executable> exe =
      Compile(printed.text, "printed " + std::string(c.file), printed.constants, Pipeline{2, true});
  ASSERT_NE(exe, nullptr) << printed.text;
  vm::VirtualMachine machine(exe);
  c.run(machine);
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusPrintedRunTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return CaseName(info.param); });

// What one run of a loop `n` steps deep took.
struct Footprint {
  size_t registers;            // the VM's register stack: it grows with the frames' depth
  int64_t peak_tensor_bytes;   // the most tensor memory live at once (the VM's allocator)
  int64_t live_tensor_bytes;   // tensor memory still live once the result is dropped
  int64_t heap_allocations;    // operator new calls during the run
};

// Runs @main(n, acc) of `exe` on a fresh VM with its own pooled allocator, frames limited
// to `max_call_depth`, and checks that it returns acc + n.
Footprint RunLoop(const std::shared_ptr<const vm::Executable>& exe, int64_t n, uint32_t max_call_depth) {
  std::shared_ptr<Allocator> pool = MakePooledAllocator();
  vm::VmOptions options;
  options.max_call_depth = max_call_depth;
  options.allocator = pool;
  vm::VirtualMachine machine(exe, options);
  const corpus::Values acc = {0, 0.5, -1, 2};
  const std::vector<Value> args = {Value(corpus::I64(n)), Value(corpus::Tensor(DType::kF32, {4}, acc))};
  Footprint f{};
  const int64_t heap_before = dynvm::testing::HeapAllocations();
  {
    absl::StatusOr<Value> out = machine.Invoke("main", args);
    f.heap_allocations = dynvm::testing::HeapAllocations() - heap_before;
    EXPECT_TRUE(out.ok()) << n << " steps: " << out.status();
    if (out.ok()) {
      corpus::ExpectTensor(*out, DType::kF32, {4}, corpus::Map(acc, [n](double v) { return v + n; }));
    }
  }
  f.registers = machine.register_stack_capacity();
  f.peak_tensor_bytes = pool->stats().peak_bytes_live;
  f.live_tensor_bytes = pool->stats().bytes_live;
  return f;
}

class TailLoopTest : public ::testing::TestWithParam<Pipeline> {
 protected:
  // `file` at 1,000 and at 100,000 steps with frames limited to 4 deep (main and the
  // loop need 2: a loop that kept its frames would fail at the fifth step).
  void ExpectConstantMemory(const std::string& file) {
    const std::shared_ptr<const vm::Executable> exe = Compile(ReadCorpusFile(file), file, {}, GetParam());
    ASSERT_NE(exe, nullptr);
    RunLoop(exe, 10, 4);  // warms the object caches of this thread
    const Footprint small = RunLoop(exe, 1000, 4);
    const Footprint large = RunLoop(exe, 100000, 4);
    EXPECT_EQ(large.registers, small.registers);
    EXPECT_EQ(large.peak_tensor_bytes, small.peak_tensor_bytes);
    EXPECT_LE(large.peak_tensor_bytes, 1024);  // a few 16-byte tensors in 64-byte classes
    EXPECT_EQ(large.live_tensor_bytes, 0);
    EXPECT_EQ(small.live_tensor_bytes, 0);
    // Every step's objects come back from the caches: 99,000 more steps, no more calls.
    EXPECT_EQ(large.heap_allocations, small.heap_allocations);
  }
};

// A global calling itself in tail position.
TEST_P(TailLoopTest, RunsInConstantMemory) { ExpectConstantMemory("tail_loop.relay"); }

// A let-bound closure calling itself in tail position: after lambda lifting, a global.
TEST_P(TailLoopTest, ClosureLoopRunsInConstantMemory) { ExpectConstantMemory("closure_loop.relay"); }

// The same measures see a loop that is not a tail call grow: its frames stack up.
TEST_P(TailLoopTest, TheMeasureSeesANonTailLoopGrow) {
  const std::string text = R"(#[version = "0.0.5"]
def @loop(%i: int64, %acc: Tensor[(4), float32]) -> Tensor[(4), float32] {
  if (%i == 0i64) {
    %acc
  } else {
    %0 = @loop(%i - 1i64, %acc);
    %0 + 1f
  }
}

def @main(%n: int64, %acc: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @loop(%n, %acc)
}
)";
  const std::shared_ptr<const vm::Executable> exe = Compile(text, "non_tail_loop.relay", {}, GetParam());
  ASSERT_NE(exe, nullptr);
  const Footprint small = RunLoop(exe, 1000, 10000), large = RunLoop(exe, 2000, 10000);
  EXPECT_GT(large.registers, small.registers);
  EXPECT_GT(large.peak_tensor_bytes, small.peak_tensor_bytes);
  vm::VmOptions options;
  options.max_call_depth = 4;
  vm::VirtualMachine limited(exe, options);
  EXPECT_FALSE(limited.Invoke("main", {Value(corpus::I64(10)), Value(corpus::Tensor(DType::kF32, {4}, {0, 0, 0, 0}))})
                   .ok());
}

INSTANTIATE_TEST_SUITE_P(Pipelines, TailLoopTest, ::testing::ValuesIn(kPipelines),
                         [](const ::testing::TestParamInfo<Pipeline>& info) { return PipelineName(info.param); });

}  // namespace
}  // namespace dynvm::compiler
