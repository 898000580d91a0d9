// onnx_conformance: runs ONNX backend test cases through the whole of dynvm and says
// which pass.
//
//   onnx_conformance /usr/share/libonnx-testdata/data/node [--filter=SUBSTR] [--verbose]
//
// DIR holds one directory per case, laid out as ONNX's backend test data:
//
//   DIR/test_abs/model.onnx
//   DIR/test_abs/test_data_set_0/input_0.pb ... output_0.pb ...   (serialized TensorProtos)
//
// (DIR may also be a single case, a directory with model.onnx.) Each case goes the way a
// model goes through vm_compile and vm_run: ImportOnnxFile, CompileModule with
// vm_compile's default options (native code for this CPU), the executable serialized to bytes and loaded back; then for each
// test_data_set_* (in order), @main runs on input_i.pb as its i-th argument and its
// output i (the result, or field i of the tuple of several) is compared with
// output_i.pb. A file is a TensorProto, or a SequenceProto of tensors or an OptionalProto
// where the graph declares a sequence or an optional, which pass as the List and
// Optional ADTs (importer.h) and compare field by field.
//
// stdout has one line per case, cases in sorted order, and a summary as the last line:
//
//   PASS test_abs
//   FAIL test_add_bcast test_data_set_0: output 0: 3 of 60 elements differ (...)
//   UNSUPPORTED test_bitshift_left_uint8 import: node 0 (BitShift): ...
//   passed=1 failed=1 unsupported=1 total=3
//
// An import that fails with Unimplemented (an operator, attribute or dtype the importer
// does not support), a data set holding a tensor of an unsupported element type, or an
// output that is not a tensor, a sequence of them or an optional (its data sets are
// files this tool does not read) is UNSUPPORTED;
// every other failure is FAIL. Each case runs in a
// child process, so a crash or a hang (killed after kCaseTimeoutSeconds) fails that case
// and the others still run. --verbose adds, under each case, every data set's result
// and the whole of each error message (the case line keeps one line of it).
// Exit codes: 0 when no case failed (and at least --min_passed passed), 1 when one did
// (or fewer passed) or DIR cannot be listed, 2 for a bad command line.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/onnx/importer.h"
#include "compiler/frontend/onnx/tensor_proto.h"
#include "kernels/api.h"
#include "kernels/kernel.h"
#include "onnx/onnx-data_pb.h"
#include "onnx/onnx_pb.h"
#include "serializer/api.h"
#include "tools/flags.h"
#include "tools/run/compare.h"
#include "vm/virtual_machine.h"

namespace dynvm::tools {
namespace {

namespace fs = std::filesystem;

constexpr int kExitFailed = 1;

// A case still running after this long is killed and fails.
constexpr unsigned kCaseTimeoutSeconds = 300;
// Case lines keep at most this much of an error message; --verbose prints all of it.
constexpr size_t kMaxReasonChars = 400;

// ONNX's runner compares with numpy.testing.assert_allclose, |got - expected| <= atol +
// rtol * |expected|, at rtol 1e-3 and atol 1e-7 (onnx/backend/test/case/node/__init__.py
// in 1.12). We keep its rtol and loosen atol to 1e-5: float32 results near zero, whose
// rounding depends on the order of operations, would otherwise fail on noise.
constexpr CompareOptions kDefaultTolerance{.atol = 1e-5, .rtol = 1e-3};

// A case that needs other tolerances, and why (in a comment beside its entry).
struct ToleranceOverride {
  std::string_view case_name;
  CompareOptions tolerance;
};
// ONNX 1.12's reference casts float32 to bfloat16 by truncation; the kernels round to
// nearest even, as PyTorch does and ONNX's reference does from 1.13. The two are one
// bfloat16 ulp apart at most: 2^-7 of the value.
constexpr CompareOptions kBFloat16Rounding{.atol = 0, .rtol = 1.0 / 128};
// Grow the array's size with each entry: {"test_name", {.atol = .., .rtol = ..}}.
constexpr std::array<ToleranceOverride, 1> kToleranceOverrides = {{
    {"test_cast_FLOAT_to_BFLOAT16", kBFloat16Rounding},
}};

// Cases whose expected outputs ONNX computed from a node other than the one in their
// model, and the evidence: they are reported UNSUPPORTED with this reason, not run.
struct ContradictedCase {
  std::string_view case_name;
  std::string_view reason;
};
constexpr std::array<ContradictedCase, 1> kContradictedCases = {{
    {"test_adam_multiple",
     "the expected outputs contradict the model: ONNX 1.12's adam.py computes them with "
     "epsilon = 1e-2, which the node does not carry (the default is 0); X1_new = "
     "1 - 0.1 * 1.85005 / (sqrt(0.5747) + 0.01) = 0.75914 as expected, and 0.75596 with the "
     "node's epsilon"},
}};

CompareOptions ToleranceFor(std::string_view case_name) {
  for (const ToleranceOverride& entry : kToleranceOverrides) {
    if (entry.case_name == case_name) return entry.tolerance;
  }
  return kDefaultTolerance;
}

// The command line's values, with their defaults.
struct Flags {
  std::string dir;
  std::string filter;
  bool verbose = false;
  int64_t min_passed = 0;
};

// onnx_conformance's command line (docs/cli.md), storing into `flags`.
CommandLine MakeCommandLine(Flags& flags) {
  return {
      .tool = "onnx_conformance",
      .positional = Positional{"DIR", "directory of test cases", &flags.dir, /*required=*/true,
                               "a directory of ONNX backend test cases (each a directory with "
                               "model.onnx and test_data_set_*/input_N.pb, output_N.pb), or one "
                               "case"},
      .flags = {StringFlag("filter", "SUBSTR", &flags.filter,
                           "runs only the cases whose name contains SUBSTR"),
                Switch("verbose", &flags.verbose, "prints each data set's result and whole error messages"),
                IntFlag("min_passed", "N", &flags.min_passed, 0, 1 << 20,
                        "fails (exit 1) when fewer than N cases pass, so that a case that "
                        "regresses to UNSUPPORTED is caught (default 0)")},
  };
}

// ---------------------------------------------------------------------------------
// One case

enum class Outcome : char { kPass = 'P', kFail = 'F', kUnsupported = 'U' };

struct CaseResult {
  Outcome outcome = Outcome::kPass;
  std::string reason;                // empty for kPass; may span lines
  std::vector<std::string> details;  // --verbose lines, without indentation
};

CaseResult Failed(Outcome outcome, std::string_view stage, const absl::Status& status) {
  return {outcome, absl::StrFormat("%s: %s", stage, status.message()), {}};
}

// The files `prefix`N.pb in `dir`, by N, which must run 0, 1, ... without a gap.
absl::StatusOr<std::vector<fs::path>> NumberedFiles(const fs::path& dir, std::string_view prefix) {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || !name.ends_with(".pb")) continue;
    const std::string_view digits =
        std::string_view(name).substr(prefix.size(), name.size() - prefix.size() - 3);
    int n = -1;
    const auto [ptr, err] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (err != std::errc() || ptr != digits.data() + digits.size() || n < 0) continue;
    found.emplace_back(n, entry.path());
  }
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot list '%s': %s", dir.string(), ec.message()));
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> files;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i].first != static_cast<int>(i)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "'%s' has %s%d.pb but no %s%d.pb", dir.string(), prefix, found[i].first, prefix, i));
    }
    files.push_back(found[i].second);
  }
  return files;
}

// What the graph declares for one of its inputs (initializers aside) or outputs.
struct DeclaredValue {
  std::string name;
  onnx::TypeProto type;
};

struct DeclaredValues {
  std::vector<DeclaredValue> inputs;
  std::vector<DeclaredValue> outputs;
};

// Whether this tool reads values of `type` (their data set files): tensors, and
// sequences of tensors and optionals of either, which pass as the importer's ADTs.
bool Readable(const onnx::TypeProto& type) {
  if (type.has_tensor_type()) return true;
  if (type.has_sequence_type()) return type.sequence_type().elem_type().has_tensor_type();
  if (type.has_optional_type()) {
    const onnx::TypeProto& held = type.optional_type().elem_type();
    return !held.has_optional_type() && Readable(held);
  }
  return false;
}

// Marks the status of a case whose data contradicts its model.
constexpr char kBrokenCase[] = "dynvm.onnx_conformance/broken_case";

// FailedPrecondition when a data set's input cannot be what the model declares: a few
// of ONNX 1.12's cases (test_castlike_*BFLOAT16*) declare `like` as [3, 4] and supply
// [1]. Such a case is broken rather than failed: a runtime that checks its inputs
// (ONNX Runtime does too) must refuse it.
absl::Status CheckDeclaredShapes(absl::Span<const DeclaredValue> declared,
                                 absl::Span<const Value> inputs) {
  for (size_t i = 0; i < inputs.size() && i < declared.size(); ++i) {
    const NDArrayObj* t = inputs[i].As<NDArrayObj>();
    const onnx::TypeProto& type = declared[i].type;
    if (t == nullptr || !type.has_tensor_type() || !type.tensor_type().has_shape()) continue;
    std::vector<int64_t> dims;
    for (const onnx::TensorShapeProto::Dimension& d : type.tensor_type().shape().dim()) {
      dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    }
    bool fits = static_cast<size_t>(t->ndim()) == dims.size();
    for (size_t d = 0; fits && d < dims.size(); ++d) fits = dims[d] < 0 || dims[d] == t->shape()[d];
    if (!fits) {
      absl::Status broken = absl::FailedPreconditionError(absl::StrFormat(
          "the data set contradicts the model: input %d is declared %s but holds %s", i,
          ShapeToString(dims), ShapeToString(t->shape())));
      broken.SetPayload(kBrokenCase, absl::Cord());
      return broken;
    }
  }
  return absl::OkStatus();
}

// `status` with "`context`: " before its message.
absl::Status Prefixed(std::string_view context, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrFormat("%s: %s", context, status.message()));
}

// The tensors of `sequence`, whose data is relative to `base_dir`, as a List ADT value
// (importer.h).
absl::StatusOr<Value> ListOf(const onnx::SequenceProto& sequence, const std::string& base_dir) {
  if ((sequence.elem_type() != onnx::SequenceProto::TENSOR &&
       sequence.elem_type() != onnx::SequenceProto::UNDEFINED) ||
      sequence.sequence_values_size() > 0 || sequence.map_values_size() > 0 ||
      sequence.optional_values_size() > 0 || sequence.sparse_tensor_values_size() > 0) {
    return absl::UnimplementedError(absl::StrFormat(
        "a sequence of element type %d: only sequences of tensors are read", sequence.elem_type()));
  }
  Value list = ADTObj::Create(compiler::onnx_frontend::kListNilTag, {});
  for (int i = sequence.tensor_values_size() - 1; i >= 0; --i) {
    absl::StatusOr<NDArray> t =
        compiler::onnx_frontend::TensorFromProto(sequence.tensor_values(i), base_dir);
    if (!t.ok()) return Prefixed(absl::StrFormat("element %d", i), t.status());
    const Value fields[] = {Value(*std::move(t)), std::move(list)};
    list = ADTObj::Create(compiler::onnx_frontend::kListConsTag, fields);
  }
  return list;
}

// The value in the data set file `path` of the graph's type `type`: a TensorProto, or a
// SequenceProto (a List) or OptionalProto (an Optional) where the graph says so.
absl::StatusOr<Value> ReadValue(const fs::path& path, const onnx::TypeProto& type) {
  namespace onnx_frontend = compiler::onnx_frontend;
  const std::string base_dir = path.parent_path().string();
  if (type.has_sequence_type()) {
    onnx::SequenceProto sequence;
    DYNVM_RETURN_IF_ERROR(onnx_frontend::ReadProtoFile(path.string(), "SequenceProto", sequence));
    absl::StatusOr<Value> list = ListOf(sequence, base_dir);
    if (!list.ok()) return Prefixed(absl::StrFormat("'%s'", path.string()), list.status());
    return list;
  }
  if (type.has_optional_type()) {
    onnx::OptionalProto optional;
    DYNVM_RETURN_IF_ERROR(onnx_frontend::ReadProtoFile(path.string(), "OptionalProto", optional));
    absl::StatusOr<Value> held;
    if (optional.has_tensor_value()) {
      absl::StatusOr<NDArray> t = onnx_frontend::TensorFromProto(optional.tensor_value(), base_dir);
      if (t.ok()) {
        held = Value(*std::move(t));
      } else {
        held = t.status();
      }
    } else if (optional.has_sequence_value()) {
      held = ListOf(optional.sequence_value(), base_dir);
    } else if (optional.has_sparse_tensor_value() || optional.has_map_value() ||
               optional.has_optional_value()) {
      return absl::UnimplementedError(absl::StrFormat(
          "'%s' holds an optional of element type %d: only tensors and sequences are read",
          path.string(), optional.elem_type()));
    } else {  // no value, whatever elem_type says: empty
      return Value(ADTObj::Create(onnx_frontend::kOptionalNoneTag, {}));
    }
    if (!held.ok()) return Prefixed(absl::StrFormat("'%s'", path.string()), held.status());
    const Value fields[] = {*std::move(held)};
    return Value(ADTObj::Create(onnx_frontend::kOptionalSomeTag, fields));
  }
  std::optional<int32_t> elem_type;
  if (type.has_tensor_type()) elem_type = type.tensor_type().elem_type();
  DYNVM_ASSIGN_OR_RETURN(NDArray tensor, onnx_frontend::ReadTensorProtoFile(path.string(), elem_type));
  return Value(std::move(tensor));
}

// Reads the numbered values `prefix`N.pb of `dir`, each as `declared` types it (a
// tensor where it says nothing).
absl::StatusOr<std::vector<Value>> ReadValues(const fs::path& dir, std::string_view prefix,
                                              absl::Span<const DeclaredValue> declared) {
  DYNVM_ASSIGN_OR_RETURN(const std::vector<fs::path> files, NumberedFiles(dir, prefix));
  std::vector<Value> values;
  for (size_t i = 0; i < files.size(); ++i) {
    DYNVM_ASSIGN_OR_RETURN(Value v, ReadValue(files[i], i < declared.size() ? declared[i].type
                                                                             : onnx::TypeProto()));
    values.push_back(std::move(v));
  }
  return values;
}

// How `got` differs from `expected`: tensors as CompareValue compares them, ADTs (lists,
// optionals) by tag and then field by field; nothing if they match.
std::optional<std::string> CompareOutput(const Value& expected, const Value& got,
                                         const CompareOptions& tolerance) {
  const ADTObj* want = expected.As<ADTObj>();
  if (want == nullptr) return CompareValue(expected, got, tolerance);
  const ADTObj* have = got.As<ADTObj>();
  if (have == nullptr || have->tag() != want->tag() || have->size() != want->size()) {
    return absl::StrFormat("expected an ADT of tag %d with %d fields, got %s", want->tag(),
                           want->size(), DescribeValue(got));
  }
  for (uint32_t i = 0; i < want->size(); ++i) {
    if (std::optional<std::string> diff = CompareOutput(want->fields()[i], have->fields()[i], tolerance)) {
      return absl::StrFormat("field %d: %s", i, *diff);
    }
  }
  return std::nullopt;
}

// Runs @main on one data set. Returns how the outputs differ from the expected ones,
// if they do; errors otherwise.
absl::StatusOr<std::optional<std::string>> RunDataSet(vm::VirtualMachine& machine, uint32_t main,
                                                      const fs::path& set,
                                                      const DeclaredValues& declared,
                                                      const CompareOptions& tolerance) {
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Value> inputs, ReadValues(set, "input_", declared.inputs));
  DYNVM_ASSIGN_OR_RETURN(const std::vector<Value> expected,
                         ReadValues(set, "output_", declared.outputs));
  DYNVM_RETURN_IF_ERROR(CheckDeclaredShapes(declared.inputs, inputs));
  const uint32_t params = machine.executable().function(main).num_params();
  if (inputs.size() != params) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d inputs for the %d parameters of @main", inputs.size(), params));
  }
  DYNVM_ASSIGN_OR_RETURN(const Value result, machine.Invoke(main, inputs));
  // The graph's only output, or a tuple of them (importer.h).
  std::vector<Value> outputs = {result};
  if (declared.outputs.size() != 1) {
    const ADTObj* tuple = result.As<ADTObj>();
    if (tuple == nullptr || tuple->tag() != 0) {
      return std::optional<std::string>(
          absl::StrFormat("@main returned %s, expected a tuple of %d outputs",
                          DescribeValue(result), declared.outputs.size()));
    }
    outputs.assign(tuple->fields().begin(), tuple->fields().end());
  }
  if (outputs.size() != expected.size()) {
    return std::optional<std::string>(
        absl::StrFormat("@main returned %d outputs, expected %d", outputs.size(), expected.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (std::optional<std::string> diff = CompareOutput(expected[i], outputs[i], tolerance)) {
      return std::optional<std::string>(absl::StrFormat("output %d: %s", i, *diff));
    }
  }
  return std::optional<std::string>();
}

// The data set directories of the case in `dir`, sorted.
std::vector<fs::path> DataSets(const fs::path& dir) {
  std::vector<fs::path> sets;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().starts_with("test_data_set_") && entry.is_directory(ec)) {
      sets.push_back(entry.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  return sets;
}

// What the graph of `model` declares for its values, read once the import has accepted
// the model.
DeclaredValues ReadDeclaredValues(const fs::path& model) {
  DeclaredValues out;
  std::ifstream in(model, std::ios::binary);
  onnx::ModelProto proto;
  if (!in || !proto.ParseFromIstream(&in)) return out;
  absl::flat_hash_set<std::string> initializers;
  for (const onnx::TensorProto& t : proto.graph().initializer()) initializers.insert(t.name());
  for (const onnx::ValueInfoProto& input : proto.graph().input()) {
    if (!initializers.contains(input.name())) out.inputs.push_back({input.name(), input.type()});
  }
  for (const onnx::ValueInfoProto& output : proto.graph().output()) {
    out.outputs.push_back({output.name(), output.type()});
  }
  return out;
}

// Runs the case in `dir` in this process.

CaseResult RunCase(const fs::path& dir, const std::string& name) {
  for (const ContradictedCase& entry : kContradictedCases) {
    if (entry.case_name == name) return {Outcome::kUnsupported, std::string(entry.reason), {}};
  }
  const fs::path model = dir / "model.onnx";
  absl::StatusOr<compiler::Module> module = compiler::onnx_frontend::ImportOnnxFile(model.string());
  if (!module.ok()) {
    const bool unsupported = module.status().code() == absl::StatusCode::kUnimplemented;
    return Failed(unsupported ? Outcome::kUnsupported : Outcome::kFail, "import", module.status());
  }
  const DeclaredValues declared = ReadDeclaredValues(model);
  for (const DeclaredValue& output : declared.outputs) {
    if (!Readable(output.type)) {
      return {Outcome::kUnsupported,
              absl::StrFormat("output '%s' is not a tensor, a sequence of tensors or an optional "
                              "of one: its expected values are files this tool does not read",
                              output.name),
              {}};
    }
  }
  compiler::CompileOptions options;
  options.target_cpu = "native";
  absl::StatusOr<vm::ExecutableSpec> spec = compiler::CompileModule(*module, options);
  if (!spec.ok()) return Failed(Outcome::kFail, "compile", spec.status());
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(*spec, kernels::DefaultRegistry());
  if (!exe.ok()) return Failed(Outcome::kFail, "serialize and load", exe.status());
  const std::optional<uint32_t> main = (*exe)->FunctionIndex("main");
  if (!main.has_value()) return {Outcome::kFail, "load: the executable has no @main", {}};

  const std::vector<fs::path> sets = DataSets(dir);
  if (sets.empty()) return {Outcome::kFail, "no test_data_set_* directory", {}};
  vm::VirtualMachine machine(*exe);
  const CompareOptions tolerance = ToleranceFor(name);
  CaseResult result;
  for (const fs::path& set : sets) {
    const std::string set_name = set.filename().string();
    absl::StatusOr<std::optional<std::string>> diff =
        RunDataSet(machine, *main, set, declared, tolerance);
    if (!diff.ok() && (diff.status().code() == absl::StatusCode::kUnimplemented ||
                       diff.status().GetPayload(kBrokenCase).has_value())) {
      // The data set holds a tensor the runtime has no dtype for, or contradicts the
      // model: the case cannot be run, as if its model were unsupported.
      return Failed(Outcome::kUnsupported, set_name, diff.status());
    }
    std::string problem;
    if (!diff.ok()) {
      problem = std::string(diff.status().message());
    } else if (diff->has_value()) {
      problem = **diff;
    }
    result.details.push_back(
        absl::StrFormat("%s: %s", set_name, problem.empty() ? "pass" : problem));
    if (!problem.empty() && result.outcome == Outcome::kPass) {
      result.outcome = Outcome::kFail;
      result.reason = absl::StrFormat("%s: %s", set_name, problem);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------
// Isolation: each case in a child process

// The result as bytes for the pipe: the outcome, the reason's length, a newline, the
// reason, then the details one per line (a detail's own newlines become spaces).
std::string Encode(const CaseResult& result) {
  std::string out = absl::StrFormat("%c%d\n%s", static_cast<char>(result.outcome),
                                    result.reason.size(), result.reason);
  for (std::string detail : result.details) {
    std::replace(detail.begin(), detail.end(), '\n', ' ');
    out += detail + "\n";
  }
  return out;
}

std::optional<CaseResult> Decode(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  CaseResult result;
  result.outcome = static_cast<Outcome>(bytes[0]);
  if (result.outcome != Outcome::kPass && result.outcome != Outcome::kFail &&
      result.outcome != Outcome::kUnsupported) {
    return std::nullopt;
  }
  const size_t newline = bytes.find('\n');
  if (newline == std::string_view::npos) return std::nullopt;
  size_t length = 0;
  const auto [ptr, ec] = std::from_chars(bytes.data() + 1, bytes.data() + newline, length);
  if (ec != std::errc() || ptr != bytes.data() + newline || length > bytes.size() - newline - 1) {
    return std::nullopt;
  }
  result.reason = std::string(bytes.substr(newline + 1, length));
  std::string_view rest = bytes.substr(newline + 1 + length);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    result.details.emplace_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  return result;
}

// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

// The child's side: runs the case, writes the result to `fd` and exits.
[[noreturn]] void RunChild(int fd, const fs::path& dir, const std::string& name) {
  ::alarm(kCaseTimeoutSeconds);
  CaseResult result;
  try {
    result = RunCase(dir, name);
  } catch (const std::exception& e) {
    result = {Outcome::kFail, absl::StrFormat("uncaught exception: %s", e.what()), {}};
  } catch (...) {
    result = {Outcome::kFail, "uncaught exception of an unknown type", {}};
  }
  WriteAll(fd, Encode(result));
  ::close(fd);
  std::fflush(stderr);
  ::_exit(0);  // no static destructors or atexit handlers of the parent's copy
}

// Runs the case in `dir` in a child process; a crash, a hang or an exception there is
// this case's failure.
CaseResult RunIsolated(const fs::path& dir, const std::string& name) {
  int fds[2];
  if (::pipe(fds) != 0) {
    return {Outcome::kFail, absl::StrFormat("cannot make a pipe: %s", std::strerror(errno)), {}};
  }
  std::fflush(stdout);  // or the child's copy of the buffer could be written twice
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return {Outcome::kFail, absl::StrFormat("cannot fork: %s", std::strerror(error)), {}};
  }
  if (pid == 0) {
    ::close(fds[0]);
    RunChild(fds[1], dir, name);
  }
  ::close(fds[1]);
  std::string bytes;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    if (signal == SIGALRM) {
      return {Outcome::kFail, absl::StrFormat("timed out after %d s", kCaseTimeoutSeconds), {}};
    }
    return {
        Outcome::kFail, absl::StrFormat("crashed: signal %d (%s)", signal, strsignal(signal)), {}};
  }
  std::optional<CaseResult> result = Decode(bytes);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !result.has_value()) {
    return {Outcome::kFail,
            absl::StrFormat("the case's process exited with code %d without a result",
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1),
            {}};
  }
  return *std::move(result);
}

// ---------------------------------------------------------------------------------
// All cases

// The name of the case in `dir`: its last component ("test_abs" for "data/test_abs/").
std::string CaseName(const fs::path& dir) {
  std::error_code ec;
  fs::path path = fs::absolute(dir, ec).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path.filename().string();
}

// The cases under `dir` whose names contain `filter`, sorted by name: `dir` itself if
// it has model.onnx, else its subdirectories.
absl::StatusOr<std::vector<fs::path>> ListCases(const std::string& dir, const std::string& filter) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrFormat("'%s' is not a directory", dir));
  }
  std::vector<fs::path> cases;
  if (fs::exists(fs::path(dir) / "model.onnx", ec)) {
    cases.push_back(fs::path(dir));
  } else {
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_directory(ec)) cases.push_back(entry.path());
    }
    if (ec) {
      return absl::InvalidArgumentError(absl::StrFormat("cannot list '%s': %s", dir, ec.message()));
    }
  }
  std::erase_if(cases,
                [&](const fs::path& c) { return CaseName(c).find(filter) == std::string::npos; });
  std::sort(cases.begin(), cases.end());
  return cases;
}

std::string_view OutcomeWord(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kUnsupported:
      return "UNSUPPORTED";
  }
  return "FAIL";
}

// `reason` on one line, cut to kMaxReasonChars.
std::string OneLine(std::string reason) {
  std::replace(reason.begin(), reason.end(), '\n', ' ');
  if (reason.size() > kMaxReasonChars) reason = reason.substr(0, kMaxReasonChars) + "...";
  return reason;
}

void PrintResult(const std::string& name, const CaseResult& result, bool verbose) {
  std::string line = absl::StrFormat("%s %s", OutcomeWord(result.outcome), name);
  if (!result.reason.empty()) absl::StrAppend(&line, " ", OneLine(result.reason));
  std::printf("%s\n", line.c_str());
  if (!verbose) return;
  if (result.details.empty() && OneLine(result.reason) != result.reason) {
    std::string indented = "  " + result.reason;
    for (size_t i = indented.find('\n'); i != std::string::npos; i = indented.find('\n', i + 1)) {
      indented.insert(i + 1, "  ");
    }
    std::printf("%s\n", indented.c_str());
  }
  for (const std::string& detail : result.details) std::printf("  %s\n", detail.c_str());
}

// Runs every case; returns the exit code.
int Run(const Flags& flags) {
  absl::StatusOr<std::vector<fs::path>> cases = ListCases(flags.dir, flags.filter);
  if (!cases.ok()) {
    std::fprintf(stderr, "onnx_conformance: %s\n", std::string(cases.status().message()).c_str());
    return kExitFailed;
  }
  int passed = 0, failed = 0, unsupported = 0;
  for (const fs::path& dir : *cases) {
    const std::string name = CaseName(dir);
    const CaseResult result = RunIsolated(dir, name);
    PrintResult(name, result, flags.verbose);
    std::fflush(stdout);
    switch (result.outcome) {
      case Outcome::kPass:
        ++passed;
        break;
      case Outcome::kFail:
        ++failed;
        break;
      case Outcome::kUnsupported:
        ++unsupported;
        break;
    }
  }
  std::printf("passed=%d failed=%d unsupported=%d total=%d\n", passed, failed, unsupported,
              static_cast<int>(cases->size()));
  if (passed < flags.min_passed) {
    std::fprintf(stderr, "onnx_conformance: %d cases passed, expected at least %ld (--min_passed)\n",
                 passed, static_cast<long>(flags.min_passed));
    return kExitFailed;
  }
  return failed == 0 ? 0 : kExitFailed;
}

}  // namespace
}  // namespace dynvm::tools

int main(int argc, char** argv) {
  dynvm::tools::Flags flags;
  if (const std::optional<int> exit = dynvm::tools::ParseOrExitCode(
          dynvm::tools::MakeCommandLine(flags), argc, argv)) {
    return *exit;
  }
  return dynvm::tools::Run(flags);
}
