// The command-line parser of the tools (flags.h): one pass over the arguments, each
// flag's value converted and checked as it comes, then the checks of what is missing.
#include "tools/flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/version.h"
#include "kernels/cpu_features.h"

namespace dynvm::tools {
namespace {

// The usage's total width, and the widest flag spelling that still shares its line with
// the help (longer ones put the help on the next line).
constexpr size_t kUsageWidth = 80;
constexpr size_t kMaxSpellingWidth = 24;

bool IsShort(const Flag& flag) { return flag.name.size() == 1; }

// "--name" or "-o".
std::string Dashed(const Flag& flag) {
  return absl::StrFormat("%s%s", IsShort(flag) ? "-" : "--", flag.name);
}

// How the flag is written with its value: "--name=N", "-o FILE", "--switch".
std::string Spelling(const Flag& flag) {
  if (flag.kind == FlagKind::kSwitch) return Dashed(flag);
  return absl::StrFormat("%s%s%s", Dashed(flag), IsShort(flag) ? " " : "=", flag.value_name);
}

Flag MakeFlag(std::string_view name, FlagKind kind, std::string_view value_name,
              decltype(Flag::dest) dest, std::string_view help) {
  Flag flag;
  flag.name = name;
  flag.kind = kind;
  flag.value_name = value_name;
  flag.dest = dest;
  flag.help = help;
  return flag;
}

// `flag`, an integer flag, taking values in [min, max].
Flag WithRange(Flag flag, int64_t min, int64_t max) {
  flag.int_min = min;
  flag.int_max = max;
  return flag;
}

// The error of a flag given without its value, or with an empty one.
absl::Status MissingValue(const Flag& flag) {
  return absl::InvalidArgumentError(
      absl::StrFormat("flag '%s' needs a value: %s", Dashed(flag), Spelling(flag)));
}

// "a, b, c": the values an enum flag may take.
std::string JoinChoices(const Flag& flag) {
  return absl::StrJoin(flag.choices, ", ",
                       [](std::string* out, std::string_view choice) { out->append(choice); });
}

// Sets `out` to `value` as an integer in [flag.int_min, flag.int_max].
absl::Status ParseInt(const Flag& flag, std::string_view value, int64_t& out) {
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc() || ptr != end || out < flag.int_min || out > flag.int_max) {
    return absl::InvalidArgumentError(absl::StrFormat("%s must be an integer in [%d, %d], got '%s'",
                                                      Dashed(flag), flag.int_min, flag.int_max,
                                                      value));
  }
  return absl::OkStatus();
}

// Sets `out` to `value` as a finite number >= flag.number_min.
absl::Status ParseNumber(const Flag& flag, std::string_view value, double& out) {
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, out);
  if (ec != std::errc() || ptr != end || !std::isfinite(out) || out < flag.number_min) {
    return absl::InvalidArgumentError(absl::StrFormat("%s must be a finite number >= %g, got '%s'",
                                                      Dashed(flag), flag.number_min, value));
  }
  return absl::OkStatus();
}

// Stores `value`, the value `flag` was given, in the flag's destination.
absl::Status Store(const Flag& flag, std::string_view value) {
  if (flag.kind != FlagKind::kSwitch && value.empty()) return MissingValue(flag);
  switch (flag.kind) {
    case FlagKind::kSwitch:
      *std::get<bool*>(flag.dest) = true;
      return absl::OkStatus();
    case FlagKind::kString:
      *std::get<std::string*>(flag.dest) = value;
      return absl::OkStatus();
    case FlagKind::kRepeated:
      std::get<std::vector<std::string>*>(flag.dest)->emplace_back(value);
      return absl::OkStatus();
    case FlagKind::kInt: {
      int64_t n = 0;
      DYNVM_RETURN_IF_ERROR(ParseInt(flag, value, n));
      if (int* const* narrow = std::get_if<int*>(&flag.dest)) {
        **narrow = static_cast<int>(n);  // the int overload of IntFlag bounds the range
      } else {
        *std::get<int64_t*>(flag.dest) = n;
      }
      return absl::OkStatus();
    }
    case FlagKind::kNumber:
      return ParseNumber(flag, value, *std::get<double*>(flag.dest));
    case FlagKind::kEnum:
      if (std::find(flag.choices.begin(), flag.choices.end(), value) == flag.choices.end()) {
        return absl::InvalidArgumentError(absl::StrFormat("%s must be one of %s, got '%s'",
                                                          Dashed(flag), JoinChoices(flag), value));
      }
      *std::get<std::string*>(flag.dest) = value;
      return absl::OkStatus();
  }
  return absl::InternalError(absl::StrFormat("flag '%s' has an unknown kind", Dashed(flag)));
}

// The flags and positional arguments of one command line as they are met: what has been
// given so far, to refuse a second of what may come once.
class Parser {
 public:
  explicit Parser(const CommandLine& command_line)
      : command_line_(command_line), given_(command_line.flags.size()) {}

  // Applies `args[i]`, and the value after it for a short flag (advancing `i`).
  absl::Status Apply(absl::Span<const char* const> args, size_t& i) {
    const std::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') return ApplyPositional(arg);
    const bool is_long = arg.starts_with("--");
    const size_t eq = is_long ? arg.find('=') : std::string_view::npos;
    const std::string_view name =
        arg.substr(is_long ? 2 : 1, eq == std::string_view::npos ? eq : eq - 2);
    const auto it =
        std::find_if(command_line_.flags.begin(), command_line_.flags.end(),
                     [&](const Flag& f) { return f.name == name && IsShort(f) != is_long; });
    if (it == command_line_.flags.end()) {
      return absl::InvalidArgumentError(absl::StrFormat("unknown flag '%s'", arg.substr(0, eq)));
    }
    const Flag& flag = *it;
    std::string_view value;
    if (flag.kind == FlagKind::kSwitch) {
      if (eq != std::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrFormat("flag '%s' takes no value, got '%s'", Dashed(flag), arg));
      }
    } else if (!is_long) {
      if (i + 1 == args.size()) return MissingValue(flag);
      value = args[++i];
    } else if (eq == std::string_view::npos) {
      return MissingValue(flag);
    } else {
      value = arg.substr(eq + 1);
    }
    // A flag given again overrides what it was given before (a repeated one adds), so a
    // wrapper's defaults can be overridden after them, as with Docker's ENTRYPOINT.
    given_[it - command_line_.flags.begin()] = value;
    return Store(flag, value);
  }

  // What must have been given and was not.
  absl::Status CheckComplete() const {
    const std::optional<Positional>& positional = command_line_.positional;
    if (positional.has_value() && positional->required && !positional_.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("missing the %s (%s)", positional->noun, positional->name));
    }
    for (size_t i = 0; i < given_.size(); ++i) {
      const Flag& flag = command_line_.flags[i];
      if (flag.required && !given_[i].has_value()) {
        return absl::InvalidArgumentError(absl::StrFormat("missing %s", Spelling(flag)));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ApplyPositional(std::string_view arg) {
    const std::optional<Positional>& positional = command_line_.positional;
    if (!positional.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unexpected argument '%s': %s takes none", arg, command_line_.tool));
    }
    if (positional_.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("more than one %s: '%s' and '%s'", positional->noun, *positional_, arg));
    }
    positional_ = arg;
    *positional->dest = arg;
    return absl::OkStatus();
  }

  const CommandLine& command_line_;
  std::vector<std::optional<std::string_view>> given_;  // per flag, its last value
  std::optional<std::string_view> positional_;
};

// Appends to `out` one usage entry: `spelling`, then `help` wrapped at kUsageWidth
// from column `column`.
void AppendEntry(std::string_view spelling, std::string_view help, size_t column,
                 std::string& out) {
  std::string line = "  ";
  line.append(spelling);
  const std::string indent(column, ' ');
  if (line.size() + 2 > column) {
    out.append(line).append("\n");
    line = indent;
  } else {
    line.resize(column, ' ');
  }
  bool first = true;  // the first word of `line`
  while (!help.empty()) {
    const std::string_view word = help.substr(0, help.find(' '));
    help.remove_prefix(std::min(help.size(), word.size() + 1));
    if (word.empty()) continue;
    if (!first && line.size() + 1 + word.size() > kUsageWidth) {
      out.append(line).append("\n");
      line = indent;
      first = true;
    }
    if (!first) line.push_back(' ');
    line.append(word);
    first = false;
  }
  out.append(line).append("\n");
}

}  // namespace

Flag Switch(std::string_view name, bool* dest, std::string_view help) {
  return MakeFlag(name, FlagKind::kSwitch, "", dest, help);
}

Flag TrustNativeSwitch(bool* dest) {
  return Switch("trust-native", dest,
                "runs the executable's native code (machine code for its fused programs, which "
                "the verifier cannot check: only for executables you trust as much as this "
                "program); without it they run on the portable evaluator");
}

void PrintNativeCodeNotice(std::string_view tool) {
  std::fprintf(stderr,
               "%s: notice: the executable's native code is not trusted, its fused programs run on the "
               "portable evaluator (--trust-native runs it)\n",
               std::string(tool).c_str());
}

Flag StringFlag(std::string_view name, std::string_view value_name, std::string* dest,
                std::string_view help) {
  return MakeFlag(name, FlagKind::kString, value_name, dest, help);
}

Flag RepeatedFlag(std::string_view name, std::string_view value_name,
                  std::vector<std::string>* dest, std::string_view help) {
  return MakeFlag(name, FlagKind::kRepeated, value_name, dest, help);
}

Flag IntFlag(std::string_view name, std::string_view value_name, int64_t* dest, int64_t min,
             int64_t max, std::string_view help) {
  return WithRange(MakeFlag(name, FlagKind::kInt, value_name, dest, help), min, max);
}

Flag IntFlag(std::string_view name, std::string_view value_name, int* dest, int min, int max,
             std::string_view help) {
  return WithRange(MakeFlag(name, FlagKind::kInt, value_name, dest, help), min, max);
}

Flag NumberFlag(std::string_view name, std::string_view value_name, double* dest, double min,
                std::string_view help) {
  Flag flag = MakeFlag(name, FlagKind::kNumber, value_name, dest, help);
  flag.number_min = min;
  return flag;
}

Flag EnumFlag(std::string_view name, std::string_view value_name, std::string* dest,
              std::vector<std::string_view> choices, std::string_view help) {
  Flag flag = MakeFlag(name, FlagKind::kEnum, value_name, dest, help);
  flag.choices = std::move(choices);
  return flag;
}

Flag Required(Flag flag) {
  flag.required = true;
  return flag;
}

absl::StatusOr<ParseResult> ParseCommandLine(const CommandLine& command_line,
                                             absl::Span<const char* const> args) {
  for (const std::string_view arg : args) {
    if (arg == "--help" || arg == "-h") return ParseResult::kHelp;
  }
  for (const std::string_view arg : args) {
    if (arg == "--version") return ParseResult::kVersion;
  }
  Parser parser(command_line);
  for (size_t i = 0; i < args.size(); ++i) DYNVM_RETURN_IF_ERROR(parser.Apply(args, i));
  DYNVM_RETURN_IF_ERROR(parser.CheckComplete());
  if (command_line.after_parse) DYNVM_RETURN_IF_ERROR(command_line.after_parse());
  return ParseResult::kRun;
}

std::string Synopsis(const CommandLine& command_line) {
  std::string synopsis(command_line.tool);
  if (const std::optional<Positional>& positional = command_line.positional) {
    if (positional->required) {
      absl::StrAppendFormat(&synopsis, " %s", positional->name);
    } else {
      absl::StrAppendFormat(&synopsis, " [%s]", positional->name);
    }
  }
  bool optional_flags = false;
  for (const Flag& flag : command_line.flags) {
    if (flag.required) absl::StrAppendFormat(&synopsis, " %s", Spelling(flag));
    optional_flags |= !flag.required;
  }
  if (optional_flags) synopsis.append(" [flags]");
  return synopsis;
}

std::string Usage(const CommandLine& command_line) {
  constexpr std::string_view kHelpSpelling = "--help, -h";
  constexpr std::string_view kVersionSpelling = "--version";
  size_t widest = kHelpSpelling.size();
  if (command_line.positional) widest = std::max(widest, command_line.positional->name.size());
  for (const Flag& flag : command_line.flags) {
    const size_t width = Spelling(flag).size();
    if (width <= kMaxSpellingWidth) widest = std::max(widest, width);
  }
  const size_t column = 2 + widest + 2;
  std::string usage = absl::StrFormat("usage: %s\n\n", Synopsis(command_line));
  if (const std::optional<Positional>& positional = command_line.positional) {
    AppendEntry(positional->name, positional->help, column, usage);
  }
  for (const Flag& flag : command_line.flags) {
    const std::string help = flag.kind == FlagKind::kEnum
                                 ? absl::StrFormat("%s (one of %s)", flag.help, JoinChoices(flag))
                                 : std::string(flag.help);
    AppendEntry(Spelling(flag), help, column, usage);
  }
  AppendEntry(kVersionSpelling, "the version, this CPU and the kernels it runs", column, usage);
  AppendEntry(kHelpSpelling, "this text", column, usage);
  return usage;
}

std::string VersionText(std::string_view tool) {
  return absl::StrCat(std::string(tool), " (dynvm) ", DYNVM_VERSION_STRING, "\n", kernels::CpuReport());
}

std::optional<int> ParseOrExitCode(const CommandLine& command_line, int argc, char** argv) {
  // argv[0] is the program; an exec with an empty argv has none.
  const absl::Span<const char* const> args =
      argc < 1 ? absl::Span<const char* const>() : absl::Span<const char* const>(argv + 1, argc - 1);
  const absl::StatusOr<ParseResult> parsed = ParseCommandLine(command_line, args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s (usage: %s; see --help)\n", std::string(command_line.tool).c_str(),
                 std::string(parsed.status().message()).c_str(), Synopsis(command_line).c_str());
    return kExitUsage;
  }
  if (*parsed == ParseResult::kHelp) {
    std::fputs(Usage(command_line).c_str(), stdout);
    return 0;
  }
  if (*parsed == ParseResult::kVersion) {
    std::fputs(VersionText(command_line.tool).c_str(), stdout);
    return 0;
  }
  return std::nullopt;
}

}  // namespace dynvm::tools
