// End-to-end tests of the vm_run binary: program.s is assembled with vm_as, then
// vm_run is run as a user would (through the shell) and its exit code, stdout and
// stderr are checked. Every failure is one line on stderr starting "vm_run: ", with
// exit code 1 for errors, 2 for a malformed command line, 3 for a difference from
// --expected_output.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serializer/npy.h"
#include "objects/element_codec.h"
#include "tools/run/input_parser.h"

namespace dynvm::tools {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Runs `command` through the shell, capturing stdout and stderr.
Outcome Shell(const std::string& command, const std::string& err_path) {
  Outcome outcome;
  FILE* pipe = popen((command + " 2>'" + err_path + "'").c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) outcome.out.append(buf, n);
  const int status = pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  outcome.err = ReadAll(err_path);
  return outcome;
}

class VmRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(::testing::TempDir() + "/vm_run_cli_test_" + std::to_string(getpid()));
    ASSERT_EQ(std::system(("mkdir -p '" + *dir_ + "'").c_str()), 0);
    const Outcome assembled = Shell(
        std::string(DYNVM_VM_AS) + " '" + DYNVM_RUN_PROGRAM + "' -o '" + Path("program.fbs") + "'",
        Path("vm_as.err"));
    ASSERT_EQ(assembled.exit_code, 0) << assembled.err;
  }
  static void TearDownTestSuite() {
    std::system(("rm -rf '" + *dir_ + "'").c_str());
    delete dir_;
  }

  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }

  // Runs vm_run on program.fbs with `args` (shell words).
  static Outcome Run(const std::string& args) {
    return Shell(std::string(DYNVM_VM_RUN) + " '" + Path("program.fbs") + "' " + args,
                 Path("vm_run.err"));
  }

  static void WriteNpy(const std::string& name, std::string_view inline_tensor) {
    absl::StatusOr<NDArray> t = ParseInlineTensor(inline_tensor, MakeNaiveAllocator());
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_TRUE(serializer::WriteNpyFile(Path(name), *t).ok());
  }

  // Expects `outcome` to have failed with exit code `code` and one line on stderr that
  // starts with "vm_run: " and contains `message`.
  static void ExpectError(const Outcome& outcome, const std::string& message, int code = 1) {
    EXPECT_EQ(outcome.exit_code, code) << outcome.err;
    EXPECT_THAT(outcome.err, StartsWith("vm_run: "));
    EXPECT_THAT(outcome.err, HasSubstr(message));
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
    EXPECT_THAT(outcome.err, EndsWith("\n"));
  }

  static std::string* dir_;
};

std::string* VmRunTest::dir_ = nullptr;

constexpr char kX[] = "--input=2x3xf32=1,2,3,4,5,6";
constexpr char kY[] = "--input=y=2x3xf32=0.5,0,0,0,0,0.25";
constexpr char kSum[] =
    "tensor<f32>[2, 3]\n"
    "[[1.5 , 2.  , 3.  ],\n"
    " [4.  , 5.  , 6.25]]\n";

TEST_F(VmRunTest, InlineInputs) {
  const Outcome outcome = Run(std::string(kX) + " " + kY);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, kSum);
  EXPECT_EQ(outcome.err, "");
}

TEST_F(VmRunTest, NpyInputsByNameAndPosition) {
  WriteNpy("x.npy", "2x3xf32=1,2,3,4,5,6");
  WriteNpy("y.npy", "2x3xf32=0.5,0,0,0,0,0.25");
  Outcome outcome = Run("--input=y=@" + Path("y.npy") + " --input=@" + Path("x.npy"));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, kSum);
  outcome = Run("--input=@" + Path("x.npy") + " --input=@" + Path("y.npy") + " --function=main");
  EXPECT_EQ(outcome.out, kSum);
}

TEST_F(VmRunTest, ScalarsTuplesAndClosures) {
  Outcome outcome =
      Run("--function=mixed --input=3xi32=1,-2,3 --input=k=5 --input=f=2 "
          "--input=b=true");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out,
            "tuple(\n"
            "  tensor<i32>[3]\n"
            "  [1, 4, 9],\n"
            "  5,\n"
            "  2.0,\n"
            "  true\n"
            ")\n");
  outcome = Run("--function=closure --input=3");
  EXPECT_EQ(outcome.out, "closure<@scale>\n");
  outcome = Run("--function=half --input=3xf16=0.1,65504,70000 --input=2xbf16=0.1,3");
  EXPECT_EQ(outcome.out,
            "tuple(\n"
            "  tensor<f16>[3]\n"
            "  [1.00e-01, 6.55e+04,      inf],\n"
            "  tensor<bf16>[2]\n"
            "  [0.1, 3. ]\n"
            ")\n");
}

TEST_F(VmRunTest, OutputsWriteNpyFilesThatCompareEqual) {
  const std::string a = Path("out_a.npy"), b = Path("out_b.npy");
  Outcome outcome = Run("--function=twice --input=2xf32=1.5,-2 --output=@" + a + " --output=@" + b);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_THAT(outcome.out, EndsWith("wrote output 0 (tensor<f32>[2]) to " + a + "\n" +
                                    "wrote output 1 (tensor<f32>[2]) to " + b + "\n"));
  absl::StatusOr<NDArray> written = serializer::ReadNpyFile(a, MakeNaiveAllocator());
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(ElementAsDouble(**written, 1), -2);
  outcome = Run("--function=twice --input=2xf32=1.5,-2 --expected_output=@" + a +
                " --expected_output=@" + b);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
}

TEST_F(VmRunTest, ExpectedOutputs) {
  Outcome outcome = Run(std::string(kX) + " " + kY + " --expected_output=2x3xf32=1.5,2,3,4,5,6.25");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  outcome = Run(std::string(kX) + " " + kY + " --expected_output=2x3xf32=1.5,2,3,4,5,7");
  ExpectError(outcome,
              "vm_run: output 0: 1 of 6 elements differ (atol=1e-06, rtol=1e-05); first at "
              "[1, 2]: expected 7.0, got 6.25; max |got - expected| = 0.75\n",
              /*code=*/3);
  outcome =
      Run(std::string(kX) + " " + kY + " --expected_output=2x3xf32=1.5,2,3,4,5,6.3 --atol=0.1");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  outcome =
      Run("--function=mixed --input=1xi32=3 --input=k=5 --input=f=2 --input=b=true "
          "--expected_output=1xi32=9 --expected_output=5 --expected_output=2 "
          "--expected_output=false");
  ExpectError(outcome, "output 3: expected bool false, got bool true", 3);
  outcome =
      Run("--function=mixed --input=1xi32=3 --input=k=5 --input=f=2 --input=b=true "
          "--expected_output=1xi32=8 --expected_output=5 --expected_output=3 "
          "--expected_output=false");
  ExpectError(outcome,
              "vm_run: output 0: 1 of 1 elements differ; first at [0]: expected 8, got 9 "
              "(3 of 4 outputs differ)\n",
              3);
  outcome = Run(std::string(kX) + " " + kY + " --expected_output=2x3xi32=1,2,3,4,5,6");
  ExpectError(outcome, "output 0: expected tensor<i32>[2, 3], got tensor<f32>[2, 3]: wrong dtype",
              3);
}

TEST_F(VmRunTest, InputErrors) {
  ExpectError(Run(kX), "missing input for 'main': 'y' (argument 1, tensor f32[n, 3])");
  ExpectError(Run(std::string(kX) + " --input=z=2x3xf32=1,2,3,4,5,6"),
              "unknown input name 'z': 'main' has parameters x, y");
  ExpectError(Run(std::string(kX) + " --input=y=2x3xi32=1,2,3,4,5,6"),
              "argument 1 ('y') of 'main': expected tensor f32[n, 3], got i32[2, 3]: wrong dtype");
  ExpectError(Run(std::string(kX) + " --input=y=3x3xf32=1,2,3,4,5,6,7,8,9"),
              "argument 1 ('y') of 'main': expected tensor f32[n, 3], got f32[3, 3]");
  ExpectError(Run(std::string(kX) + " --input=y=@" + Path("missing.npy")),
              "input 'y' (argument 1 of 'main'): cannot open '" + Path("missing.npy") + "'");
  ExpectError(Run(std::string(kX) + " " + kY + " --expected_output=2xf32=1"),
              "--expected_output '2xf32=1': 2xf32 needs 2 elements, got 1");
  ExpectError(Run(std::string(kX) + " --input=y=2x3xf32=1,2,3"),
              "input 'y' (argument 1 of 'main'): 2x3xf32 needs 6 elements, got 3");
  ExpectError(Run(std::string(kX) + " --input=y=2x3xf32=1,2,3,4,5,x"),
              "bad f32 element 'x' at index 5: not a number");
  ExpectError(Run(std::string(kX) + " " + kX + " " + kX),
              "too many inputs: 'main' takes 2 (x, y) but input 2 ('2x3xf32=1,2,3,4,5,6') would "
              "be argument 2");
  ExpectError(Run(std::string(kX) + " " + kY + " " + kX),
              "input 'y' (argument 1 of 'main') given twice (again by input 2");
  ExpectError(Run(std::string(kX) + " " + kY + " --input=x=2x3xf32=1,2,3,4,5,6"),
              "input 'x' (argument 0 of 'main') given twice");
}

TEST_F(VmRunTest, CountMismatchesAndBadOutputs) {
  ExpectError(Run("--function=twice --input=2xf32=1,2 --output=@" + Path("only.npy")),
              "--output given 1 times but 'twice' returned 2 tensor outputs");
  ExpectError(Run(std::string(kX) + " " + kY + " --expected_output=f32=1 --expected_output=f32=1"),
              "--expected_output given 2 times but 'main' returned 1 outputs");
  ExpectError(Run(std::string(kX) + " " + kY + " --output=@/nonexistent_dir/out.npy"),
              "/nonexistent_dir/out.npy");
  ExpectError(Run(std::string(kX) + " " + kY + " --output=" + Path("no_at.npy")),
              "--output must be @file.npy", /*code=*/2);
}

TEST_F(VmRunTest, CommandLineAndRunTimeErrors) {
  constexpr int kUsage = 2;
  ExpectError(Run("--frobnicate=1"), "unknown flag '--frobnicate'", kUsage);
  ExpectError(Run("-x"), "unknown flag '-x'", kUsage);
  ExpectError(Run("--input"), "flag '--input' needs a value: --input=SPEC", kUsage);
  ExpectError(Run("--benchmark=0"), "--benchmark must be an integer in [1, 2147483647], got '0'",
              kUsage);
  ExpectError(Run("--threads=0"), "--threads must be an integer in [1, 4096], got '0'", kUsage);
  ExpectError(Run("--rtol=-1"), "--rtol must be a finite number >= 0, got '-1'", kUsage);
  ExpectError(Run("other.fbs"), "more than one executable", kUsage);
  // A later value wins: the second --function names the function that is missing.
  ExpectError(Run("--function=main --function=nope"), "no function 'nope'");
  ExpectError(Run("--trace="), "flag '--trace' needs a value: --trace=trace.json", kUsage);
  ExpectError(Run("--profile=yes"), "flag '--profile' takes no value, got '--profile=yes'", kUsage);
  ExpectError(Shell(std::string(DYNVM_VM_RUN), Path("e")), "missing the executable file", kUsage);
  ExpectError(Run("--function=nope"), "no function 'nope' in '" + Path("program.fbs") + "'");
  ExpectError(Run("--function=fail"), "function 'fail', instruction 0 (fatal): fatal: boom");
  ExpectError(Run("--function=depth --input=100 --max_call_depth=50"), "call depth limit 50");
  ExpectError(Shell(std::string(DYNVM_VM_RUN) + " '" + Path("nothing.fbs") + "'", Path("e")),
              "cannot open '" + Path("nothing.fbs") + "'");
}

TEST_F(VmRunTest, FlagsThatChangeNothingVisible) {
  const Outcome outcome = Run(std::string(kX) + " " + kY + " --threads=4 --max_call_depth=3");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_EQ(outcome.out, kSum);
  const Outcome deep = Run("--function=depth --input=100 --max_call_depth=101");
  EXPECT_EQ(deep.exit_code, 0) << deep.err;
  EXPECT_EQ(deep.out, "0\n");
}

TEST_F(VmRunTest, BenchmarkPrintsLatenciesLast) {
  const Outcome outcome = Run(std::string(kX) + " " + kY + " --benchmark=5");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.err;
  EXPECT_THAT(outcome.out, StartsWith(kSum));
  const std::string last = outcome.out.substr(outcome.out.rfind('\n', outcome.out.size() - 2) + 1);
  EXPECT_TRUE(std::regex_match(
      last, std::regex(R"(latency_ms median=\d+\.\d{3} p10=\d+\.\d{3} p90=\d+\.\d{3} )"
                       R"(min=\d+\.\d{3} runs=5\n)")))
      << last;
}

TEST_F(VmRunTest, Help) {
  const Outcome outcome = Shell(std::string(DYNVM_VM_RUN) + " --help", Path("e"));
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_THAT(outcome.out, StartsWith("usage: vm_run exe.fbs"));
  EXPECT_THAT(outcome.out, HasSubstr("--threads=N"));
}

}  // namespace
}  // namespace dynvm::tools
