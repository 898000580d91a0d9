// Tests of the tools' command-line parser (tools/flags.h): every kind of flag, the
// short and long spellings, the positional argument, every error, and the usage.
#include "tools/flags.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dynvm::tools {
namespace {

using ::testing::HasSubstr;

// The destinations of one test command line, with their defaults.
struct Values {
  std::string input;
  std::string output;
  std::string function = "main";
  std::vector<std::string> inputs;
  int64_t benchmark = 0;
  int level = 2;
  double atol = 1e-6;
  std::string mode = "fast";
  bool profile = false;
};

CommandLine MakeCommandLine(Values& v, bool input_required = true) {
  return {.tool = "tool",
          .positional =
              Positional{"exe.fbs", "executable file", &v.input, input_required, "the file to run"},
          .flags = {Required(StringFlag("o", "out.fbs", &v.output, "the file to write")),
                    StringFlag("function", "NAME", &v.function, "the function to run"),
                    RepeatedFlag("input", "SPEC", &v.inputs, "one per parameter"),
                    IntFlag("benchmark", "N", &v.benchmark, 1, 1000, "timed runs"),
                    IntFlag("opt-level", "N", &v.level, 0, 3, "how hard to optimise"),
                    NumberFlag("atol", "X", &v.atol, 0, "absolute tolerance"),
                    EnumFlag("mode", "MODE", &v.mode, {"fast", "exact"}, "how to compute"),
                    Switch("profile", &v.profile, "prints where the time went")}};
}

// Parses `args` into a fresh Values; `values` receives them.
absl::StatusOr<ParseResult> Parse(std::vector<const char*> args, Values& values,
                                  bool input_required = true) {
  return ParseCommandLine(MakeCommandLine(values, input_required), args);
}

// The message of the error parsing `args` gives, or "ok".
std::string ErrorOf(std::vector<const char*> args) {
  Values values;
  const absl::StatusOr<ParseResult> parsed = Parse(std::move(args), values);
  if (parsed.ok()) return "ok";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(FlagsTest, EveryKindStoresItsValue) {
  Values v;
  const absl::StatusOr<ParseResult> parsed =
      Parse({"--function=step", "--input=x=2x3xf32=1,2,3,4,5,6", "-o", "out.fbs", "exe.fbs",
             "--input=@y.npy", "--benchmark=10", "--opt-level=3", "--atol=0.5", "--mode=exact",
             "--profile"},
            v);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, ParseResult::kRun);
  EXPECT_EQ(v.input, "exe.fbs");
  EXPECT_EQ(v.output, "out.fbs");
  EXPECT_EQ(v.function, "step");
  EXPECT_EQ(v.inputs, (std::vector<std::string>{"x=2x3xf32=1,2,3,4,5,6", "@y.npy"}));
  EXPECT_EQ(v.benchmark, 10);
  EXPECT_EQ(v.level, 3);
  EXPECT_EQ(v.atol, 0.5);
  EXPECT_EQ(v.mode, "exact");
  EXPECT_TRUE(v.profile);
}

TEST(FlagsTest, AbsentFlagsKeepTheirDefaults) {
  Values v;
  ASSERT_TRUE(Parse({"exe.fbs", "-o", "x"}, v).ok());
  EXPECT_EQ(v.function, "main");
  EXPECT_TRUE(v.inputs.empty());
  EXPECT_EQ(v.benchmark, 0);
  EXPECT_EQ(v.level, 2);
  EXPECT_EQ(v.atol, 1e-6);
  EXPECT_EQ(v.mode, "fast");
  EXPECT_FALSE(v.profile);
}

TEST(FlagsTest, DashAloneIsThePositionalArgument) {
  Values v;
  ASSERT_TRUE(Parse({"-", "-o", "-"}, v).ok());
  EXPECT_EQ(v.input, "-");
  EXPECT_EQ(v.output, "-");
}

TEST(FlagsTest, RangesAreInclusive) {
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--benchmark=1", "--opt-level=0", "--atol=0"}), "ok");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--benchmark=1000", "--opt-level=3", "--atol=1e300"}), "ok");
}

TEST(FlagsTest, HelpWinsOverEverythingElse) {
  for (const char* help : {"--help", "-h"}) {
    Values v;
    const absl::StatusOr<ParseResult> parsed = Parse({"--frobnicate", help, "--benchmark=0"}, v);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, ParseResult::kHelp);
    EXPECT_EQ(v.benchmark, 0);
  }
}

TEST(FlagsTest, VersionStopsTheParseButHelpWins) {
  Values v;
  absl::StatusOr<ParseResult> parsed = Parse({"--frobnicate", "--version", "--benchmark=0"}, v);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, ParseResult::kVersion);
  EXPECT_EQ(v.benchmark, 0);
  parsed = Parse({"--version", "-h"}, v);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, ParseResult::kHelp);
}

TEST(FlagsTest, VersionTextNamesToolVersionAndCpu) {
  const std::string text = VersionText("vm_run");
  EXPECT_TRUE(text.starts_with(absl::StrCat("vm_run (dynvm) ", DYNVM_VERSION_STRING, "\ncpu: ")))
      << text;
  EXPECT_NE(text.find("\nkernels: "), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with(")\n")) << text;
}

TEST(FlagsTest, UnknownFlags) {
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--frobnicate=1"}), "unknown flag '--frobnicate'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "-x"}), "unknown flag '-x'");
  // A long name needs two dashes, a short one one.
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "-profile"}), "unknown flag '-profile'");
  EXPECT_EQ(ErrorOf({"x", "--o=y"}), "unknown flag '--o'");
}

TEST(FlagsTest, MissingAndEmptyValues) {
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--input"}), "flag '--input' needs a value: --input=SPEC");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--function="}),
            "flag '--function' needs a value: --function=NAME");
  EXPECT_EQ(ErrorOf({"x", "-o"}), "flag '-o' needs a value: -o out.fbs");
  EXPECT_EQ(ErrorOf({"x", "-o", ""}), "flag '-o' needs a value: -o out.fbs");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--profile=1"}),
            "flag '--profile' takes no value, got '--profile=1'");
}

TEST(FlagsTest, BadNumbers) {
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--benchmark=0"}),
            "--benchmark must be an integer in [1, 1000], got '0'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--benchmark=1001"}),
            "--benchmark must be an integer in [1, 1000], got '1001'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--benchmark=1.5"}),
            "--benchmark must be an integer in [1, 1000], got '1.5'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--opt-level=two"}),
            "--opt-level must be an integer in [0, 3], got 'two'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--opt-level=99999999999"}),
            "--opt-level must be an integer in [0, 3], got '99999999999'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--atol=-1"}),
            "--atol must be a finite number >= 0, got '-1'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--atol=inf"}),
            "--atol must be a finite number >= 0, got 'inf'");
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--atol=1e-3x"}),
            "--atol must be a finite number >= 0, got '1e-3x'");
}

TEST(FlagsTest, EnumValueOutsideItsChoices) {
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--mode=slow"}),
            "--mode must be one of fast, exact, got 'slow'");
}

// A later value wins, so that a wrapper's defaults can be overridden; a repeated flag
// keeps every value.
TEST(FlagsTest, ALaterValueOverridesAnEarlierOne) {
  Values v;
  ASSERT_TRUE(Parse({"x", "-o", "y", "-o", "z", "--function=a", "--function=b", "--opt-level=1",
                     "--opt-level=3", "--profile", "--profile", "--input=a", "--input=a"},
                    v)
                  .ok());
  EXPECT_EQ(v.output, "z");
  EXPECT_EQ(v.function, "b");
  EXPECT_EQ(v.level, 3);
  EXPECT_TRUE(v.profile);
  EXPECT_EQ(v.inputs, (std::vector<std::string>{"a", "a"}));
  // Each value is still checked.
  EXPECT_EQ(ErrorOf({"x", "-o", "y", "--opt-level=9", "--opt-level=1"}),
            "--opt-level must be an integer in [0, 3], got '9'");
}

TEST(FlagsTest, PositionalArgumentCount) {
  EXPECT_EQ(ErrorOf({"-o", "y"}), "missing the executable file (exe.fbs)");
  EXPECT_EQ(ErrorOf({"a.fbs", "-o", "y", "b.fbs"}),
            "more than one executable file: 'a.fbs' and 'b.fbs'");
  Values v;
  EXPECT_TRUE(Parse({"-o", "y"}, v, /*input_required=*/false).ok());
  EXPECT_EQ(v.input, "");

  CommandLine none = {.tool = "tool", .flags = {Switch("profile", &v.profile, "")}};
  const std::vector<const char*> args = {"x"};
  EXPECT_EQ(ParseCommandLine(none, args).status().message(),
            "unexpected argument 'x': tool takes none");
}

TEST(FlagsTest, MissingRequiredFlag) { EXPECT_EQ(ErrorOf({"x"}), "missing -o out.fbs"); }

TEST(FlagsTest, AfterParseRunsOnSuccessOnly) {
  Values v;
  int runs = 0;
  CommandLine command_line = MakeCommandLine(v);
  command_line.after_parse = [&] {
    ++runs;
    return v.profile ? absl::InvalidArgumentError("--profile is not allowed") : absl::OkStatus();
  };
  const std::vector<const char*> good = {"x", "-o", "y"}, bad = {"x", "-o", "y", "--profile"},
                                 help = {"--help"}, malformed = {"x"};
  EXPECT_TRUE(ParseCommandLine(command_line, good).ok());
  EXPECT_EQ(ParseCommandLine(command_line, help).value(), ParseResult::kHelp);
  EXPECT_FALSE(ParseCommandLine(command_line, malformed).ok());
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ParseCommandLine(command_line, bad).status().message(), "--profile is not allowed");
  EXPECT_EQ(runs, 2);
}

TEST(FlagsTest, SynopsisAndUsageComeFromTheTable) {
  Values v;
  EXPECT_EQ(Synopsis(MakeCommandLine(v)), "tool exe.fbs -o out.fbs [flags]");
  EXPECT_EQ(Synopsis(MakeCommandLine(v, /*input_required=*/false)),
            "tool [exe.fbs] -o out.fbs [flags]");
  EXPECT_EQ(Usage(MakeCommandLine(v)),
            "usage: tool exe.fbs -o out.fbs [flags]\n"
            "\n"
            "  exe.fbs          the file to run\n"
            "  -o out.fbs       the file to write\n"
            "  --function=NAME  the function to run\n"
            "  --input=SPEC     one per parameter\n"
            "  --benchmark=N    timed runs\n"
            "  --opt-level=N    how hard to optimise\n"
            "  --atol=X         absolute tolerance\n"
            "  --mode=MODE      how to compute (one of fast, exact)\n"
            "  --profile        prints where the time went\n"
            "  --version        the version, this CPU and the kernels it runs\n"
            "  --help, -h       this text\n");
}

TEST(FlagsTest, UsageWrapsLongHelpAndLongSpellings) {
  std::string s;
  const CommandLine command_line = {
      .tool = "tool",
      .flags = {StringFlag("a", "X", &s,
                           "one two three four five six seven eight nine ten eleven twelve "
                           "thirteen fourteen fifteen"),
                StringFlag("a-very-long-flag-name", "SOMETHING", &s, "short help")}};
  EXPECT_EQ(Usage(command_line),
            "usage: tool [flags]\n"
            "\n"
            "  -a X        one two three four five six seven eight nine ten eleven twelve\n"
            "              thirteen fourteen fifteen\n"
            "  --a-very-long-flag-name=SOMETHING\n"
            "              short help\n"
            "  --version   the version, this CPU and the kernels it runs\n"
            "  --help, -h  this text\n");
}

}  // namespace
}  // namespace dynvm::tools
