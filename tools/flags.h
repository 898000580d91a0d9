// The command-line parser every tool uses: a tool declares its positional argument and a
// table of flags bound to the fields of its own struct, and gets parsing, error messages
// and --help text from that one table.
//
//   struct Args {
//     std::string input, output;
//     int64_t threads = 1;
//     bool verbose = false;
//   };
//   CommandLine MakeCommandLine(Args& args) {
//     return {.tool = "mytool",
//             .positional = Positional{"in.s", "input", &args.input, /*required=*/true,
//                                      "the text to read"},
//             .flags = {Required(StringFlag("o", "out.fbs", &args.output, "the file to write")),
//                       IntFlag("threads", "N", &args.threads, 1, 64, "threads to use"),
//                       Switch("verbose", &args.verbose, "says more")}};
//   }
//   int main(int argc, char** argv) {
//     Args args;
//     std::optional<int> exit = ParseOrExitCode(MakeCommandLine(args), argc, argv);
//     if (exit.has_value()) return *exit;
//     ...
//   }
//
// Syntax (docs/cli.md): a flag of two or more letters is `--name=VALUE`, or `--name` alone
// for a switch; a one-letter flag is `-o VALUE`, its value the next argument. A value is
// everything after the first '=', so it may hold '=' and ',' itself
// (`--input=x=2x3xf32=1,2,3,4,5,6`). Any other argument, `-` included, is the
// positional one. `--help` or `-h` anywhere asks for the usage, whatever else the line
// holds; `--version` anywhere (but with no --help) for the version and this CPU's report. A flag given again overrides its earlier value (a repeated flag adds one). Every
// error is InvalidArgument with a message naming the flag and what it expected: an
// unknown flag, a missing or empty value, a bad or out-of-range number, a value outside
// an enum's choices, a missing required flag, a missing or second positional argument.
//
// We do not use Abseil's flags library: it keeps flags in global state and exits the
// process on a bad command line, where this parser returns a Status and is tested
// without a process.
#ifndef DYNVM_TOOLS_FLAGS_H_
#define DYNVM_TOOLS_FLAGS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace dynvm::tools {

// The exit status of every tool for a malformed command line (docs/cli.md).
inline constexpr int kExitUsage = 2;

// How a flag takes its value and where it stores it.
enum class FlagKind {
  kSwitch,    // `--name`, no value: sets a bool to true
  kString,    // `--name=VALUE`: a non-empty string
  kRepeated,  // `--name=VALUE`, any number of times: appends each non-empty value
  kInt,       // `--name=N`: a decimal integer in [int_min, int_max]
  kNumber,    // `--name=X`: a finite number >= number_min
  kEnum,      // `--name=VALUE`: one of `choices`
};

// One flag of a tool. Build it with the functions below rather than by hand: they pair
// each kind with the destination it writes. The destination outlives the parse and
// keeps its value when the flag is absent: that value is the default.
struct Flag {
  // Without dashes: "opt-level" is spelled `--opt-level=N`; a one-character name such
  // as "o" is spelled `-o FILE`.
  std::string_view name;
  FlagKind kind = FlagKind::kSwitch;
  // What the value is, in the usage and in messages: "N", "FILE", "@file.npy". Empty
  // for a switch.
  std::string_view value_name;
  // One sentence or a few, without a final period: the usage wraps it.
  std::string_view help;
  // Where the value goes: bool for kSwitch, std::string for kString and kEnum, a vector
  // for kRepeated, int or int64_t for kInt, double for kNumber.
  std::variant<bool*, std::string*, std::vector<std::string>*, int*, int64_t*, double*> dest;
  int64_t int_min = 0;  // kInt's range, inclusive
  int64_t int_max = 0;
  double number_min = 0;                  // kNumber's least value
  std::vector<std::string_view> choices;  // kEnum's values, in the usage's order
  bool required = false;                  // its absence is an error
};

// `--name`: sets `*dest` to true.
Flag Switch(std::string_view name, bool* dest, std::string_view help);
// `--name=VALUE` (the last given): sets `*dest`.
Flag StringFlag(std::string_view name, std::string_view value_name, std::string* dest,
                std::string_view help);
// `--name=VALUE` given any number of times: appends each value to `*dest`, in order.
Flag RepeatedFlag(std::string_view name, std::string_view value_name,
                  std::vector<std::string>* dest, std::string_view help);
// `--name=N` (the last given): sets `*dest` to N, which must be in [min, max].
Flag IntFlag(std::string_view name, std::string_view value_name, int64_t* dest, int64_t min,
             int64_t max, std::string_view help);
Flag IntFlag(std::string_view name, std::string_view value_name, int* dest, int min, int max,
             std::string_view help);
// `--name=X` (the last given): sets `*dest` to X, a finite number >= `min`.
Flag NumberFlag(std::string_view name, std::string_view value_name, double* dest, double min,
                std::string_view help);
// `--name=VALUE` (the last given): sets `*dest` to VALUE, which must be one of
// `choices`. The usage lists them after `help`.
Flag EnumFlag(std::string_view name, std::string_view value_name, std::string* dest,
              std::vector<std::string_view> choices, std::string_view help);
// `flag`, which the command line must then give.
Flag Required(Flag flag);

// A tool's one positional argument (none of the tools takes more than one).
struct Positional {
  std::string_view name;  // in the usage: "exe.fbs"
  std::string_view noun;  // in messages: "executable file"
  std::string* dest;
  bool required = true;   // its absence is an error ("missing the executable file")
  std::string_view help;  // the usage's line for it
};

// A tool's whole command line: what it accepts, and where each value goes.
struct CommandLine {
  std::string_view tool;  // the program's name, prefixed to its usage and errors
  std::optional<Positional> positional = std::nullopt;
  std::vector<Flag> flags;  // in the usage's order
  // Runs after a successful parse (not for --help) for what the table cannot say: one
  // flag constraining another, a value with a syntax of its own, a default derived from
  // other values. Its error is a command-line error like the parser's. May be empty.
  std::function<absl::Status()> after_parse = nullptr;
};

// What a successful parse asks the tool to do.
enum class ParseResult {
  kRun,   // every value is stored: run
  kHelp,     // --help or -h: print Usage() and exit 0; the destinations are untouched
  kVersion,  // --version: print VersionText() and exit 0; the destinations are untouched
};

// Parses `args` (argv without the program's name) into the destinations of
// `command_line`, then runs its `after_parse`. On an error the destinations may hold
// part of the values.
absl::StatusOr<ParseResult> ParseCommandLine(const CommandLine& command_line,
                                             absl::Span<const char* const> args);

// The one-line form: the tool, its positional argument (in brackets when optional),
// its required flags and "[flags]" when it has others: "vm_as [input.s] -o exe.fbs
// [flags]".
std::string Synopsis(const CommandLine& command_line);

// The --help text: "usage: " and the synopsis, then a line per argument and flag with
// its help wrapped to 80 columns, ending with --help's own line.
std::string Usage(const CommandLine& command_line);

// --trust-native, the same for every tool that loads executables: run the executable's
// native code (vm::LoadOptions::trust_native_code); without it, its fused programs run
// on the portable evaluator.
Flag TrustNativeSwitch(bool* dest);
// The one line on stderr saying `tool` ignores an executable's native code (it was not
// trusted) and how to run it.
void PrintNativeCodeNotice(std::string_view tool);

// The --version text: "vm_run (dynvm) 0.1.0", then what this CPU is, has and lacks and
// which level of kernels it runs (kernels::CpuReport), one item per line.
std::string VersionText(std::string_view tool);

// The start of a tool's main: parses `argv` by `command_line`. Returns the status to
// exit with when the tool should not run — 0 after printing the usage to stdout for
// --help or the version for --version, kExitUsage after printing "tool: message (usage: synopsis; see --help)" to
// stderr for an error — and nullopt when it should.
std::optional<int> ParseOrExitCode(const CommandLine& command_line, int argc, char** argv);

}  // namespace dynvm::tools

#endif  // DYNVM_TOOLS_FLAGS_H_
