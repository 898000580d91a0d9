// Tests of compiler/llvm: generated fused_elementwise kernels against the unfused
// library kernels (each operator run alone through the registry) on random chains and
// random broadcast shapes, for four targets; prologues and epilogues of other kernels
// running native code against the same kernels without it; the executable's kernel
// table after codegen, the round trip through the file format, and the loader's checks.
//
// Tolerance. The generated code is the library's AVX2+FMA math operation for operation
// (compiler/llvm/vector_ir.h), so on an FMA target, while the library itself runs its
// AVX2 table, results are compared bit for bit (any NaN equals any NaN). Otherwise —
// x86-64 and -v2 have no FMA, and DYNVM_ISA=scalar puts the library on its portable
// table —
// the two differ by the math functions' rounding: each operator alone is compared
// within 4e-6 relative plus 1e-6 absolute where both are finite (NaN and infinities
// must agree). Longer chains are compared only bit for bit: through floor_mod, sign or
// a pole, a rounding difference of one step may change the next step's result by any
// amount, so no tolerance bounds a chain.
#include "compiler/llvm/native_codegen.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/api.h"
#include "kernels/cpu_features.h"
#include "kernels/elementwise/native_elementwise.h"
#include "objects/allocator.h"
#include "serializer/executable_file.h"
#include "tests/kernels/fused_chain_util.h"
#include "tests/kernels/kernel_test_util.h"
#include "vm/bytecode.h"
#include "vm/executable.h"
#include "vm/native/native_code.h"

namespace dynvm::compiler {
namespace {

using ::dynvm::kernels::testing::Chain;
using ::dynvm::kernels::testing::ExpectSameBits;
using ::dynvm::kernels::testing::Input;
using ::dynvm::kernels::testing::kFusedOps;
using ::dynvm::kernels::testing::Literal;
using ::dynvm::kernels::testing::OpInfo;
using ::dynvm::kernels::testing::ProgramText;
using ::dynvm::kernels::testing::RandomChain;
using ::dynvm::kernels::testing::RandomInputs;
using ::dynvm::kernels::testing::RandomShape;
using ::dynvm::kernels::testing::RandomTensor;
using ::dynvm::kernels::testing::RunUnfused;
using ::dynvm::kernels::testing::Temp;
using ::dynvm::kernels::testing::TensorOf;
using ::testing::HasSubstr;

// These tests run the native code they make: it is trusted (vm/executable.h).
const vm::LoadOptions kTrusted{.trust_native_code = true};

// An executable whose kernel table is one fused_elementwise entry per program.
vm::ExecutableSpec SpecWith(const std::vector<std::pair<std::string, int>>& programs) {
  vm::ExecutableSpec spec;
  vm::Function main;
  main.name = "main";
  main.num_registers = 1;
  EXPECT_TRUE(
      vm::EncodeInstruction(vm::Instruction{vm::Opcode::kLoadConsti, {0, 0}, {}}, &main.code).ok());
  EXPECT_TRUE(vm::EncodeInstruction(vm::Instruction{vm::Opcode::kRet, {0}, {}}, &main.code).ok());
  spec.functions.push_back(main);
  for (const auto& [program, inputs] : programs) {
    spec.kernels.push_back(
        vm::KernelEntry{"fused_elementwise", {{"program", program}}, static_cast<uint32_t>(inputs), 1});
  }
  return spec;
}

// `spec` compiled for `cpu` and loaded, or null (with a test failure).
std::shared_ptr<const vm::Executable> Build(vm::ExecutableSpec spec, const std::string& cpu) {
  absl::StatusOr<NativeCodegenStats> stats = GenerateNativeKernels(spec, {cpu});
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (!stats.ok()) return nullptr;
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      vm::Executable::Create(std::move(spec), kernels::DefaultRegistry(), kTrusted);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *exe : nullptr;
}

absl::StatusOr<NDArray> Call(const vm::Executable& exe, int entry,
                             const std::vector<NDArray>& inputs) {
  const kernels::BoundKernel& k = exe.kernel(entry);
  std::vector<NDArrayObj*> in;
  for (const NDArray& x : inputs) in.push_back(x.get());
  Shape shape;
  if (absl::Status s = k.InferShapes(in.data(), &shape); !s.ok()) return s;
  absl::StatusOr<NDArray> out = NDArrayObj::Empty(shape, DType::kF32, MakeNaiveAllocator());
  if (!out.ok()) return out.status();
  in.push_back(out->get());
  static kernels::ThreadPool pool(2);
  if (absl::Status s = k.Call(in.data(), pool); !s.ok()) return s;
  return out;
}

// Whether results must equal the library's bit for bit (see the file comment).
bool BitExact(const std::string& cpu) {
  return kernels::SelectedIsa() >= kernels::Isa::kAvx2 && cpu != "x86-64" && cpu != "x86-64-v2";
}

void ExpectClose(const NDArray& got, const NDArray& want, const std::string& what) {
  ASSERT_EQ(got->shape(), want->shape()) << what;
  const float* g = got->data_as<float>();
  const float* w = want->data_as<float>();
  int reported = 0;
  for (int64_t i = 0; i < got->num_elements() && reported < 5; ++i) {
    const bool same = std::isnan(g[i]) ? std::isnan(w[i])
                      : std::isfinite(w[i])
                          ? std::fabs(g[i] - w[i]) <= 4e-6f * std::fabs(w[i]) + 1e-6f
                          : g[i] == w[i];
    if (!same) {
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", expected " << w[i];
      ++reported;
    }
  }
}

// The targets: this machine; x86-64 (SSE2: rounding through libm) and x86-64-v2
// without FMA (4 lanes); with AVX2+FMA (8 lanes); and with AVX-512 (16 lanes). A CPU without AVX-512 cannot run the last:
// there the test checks that loading it is refused instead.
class NativeCodegenTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Whether this CPU runs GetParam()'s code; if not, expects `spec`'s code compiled for
  // it to be refused at load, naming the missing feature.
  bool Runnable(vm::ExecutableSpec spec) const {
    if (GetParam() != "x86-64-v4" || kernels::CpuHasFeature("avx512f")) return true;
    EXPECT_TRUE(GenerateNativeKernels(spec, {GetParam()}).ok());
    absl::Status status = vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(status.message(), HasSubstr("lacks avx512f"));
    return false;
  }
};

TEST_P(NativeCodegenTest, RandomChainsMatchTheUnfusedKernels) {
  std::mt19937 rng(7);
  std::vector<Chain> chains;
  std::vector<std::pair<std::string, int>> programs;
  for (int round = 0; round < 3; ++round) {
    for (const OpInfo& op : kFusedOps) {
      int num_inputs = 0;
      chains.push_back(RandomChain(op, round == 0 ? 1 : 1 + static_cast<int>(rng() % 6), 4,
                                   &num_inputs, rng));
      programs.emplace_back(ProgramText(chains.back()), num_inputs);
    }
  }
  if (!Runnable(SpecWith(programs))) return;
  std::shared_ptr<const vm::Executable> exe = Build(SpecWith(programs), GetParam());
  ASSERT_NE(exe, nullptr);
  for (size_t c = 0; c < chains.size(); ++c) {
    ASSERT_EQ(exe->kernel(c).name(), kernels::kNativeElementwiseKernel);
    for (int shapes = 0; shapes < 4; ++shapes) {
      const std::vector<NDArray> inputs =
          RandomInputs(shapes == 0 ? std::vector<int64_t>{37, 611} : RandomShape(rng),
                       programs[c].second, rng);
      std::vector<std::string> dims;
      for (const NDArray& x : inputs) dims.push_back(ShapeToString(x->shape()));
      const std::string what = absl::StrCat(programs[c].first, " on ", absl::StrJoin(dims, ", "));
      absl::StatusOr<NDArray> want = RunUnfused(chains[c], inputs);
      ASSERT_TRUE(want.ok()) << what << ": " << want.status();
      absl::StatusOr<NDArray> got = Call(*exe, static_cast<int>(c), inputs);
      ASSERT_TRUE(got.ok()) << what << ": " << got.status();
      if (BitExact(GetParam())) {
        ExpectSameBits(*got, *want, what);
      } else if (chains[c].size() == 1) {
        ExpectClose(*got, *want, what);
      }
    }
  }
}

TEST_P(NativeCodegenTest, SpecialValuesMatchTheUnfusedKernels) {
  // NaN, infinities, signed zeros, subnormals, the edges of exp and erf's clamps, and
  // sin/cos arguments beyond the reduction (libm's lanes, mixed with reduced ones).
  const std::vector<float> specials = {
      NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, 88.8f, 89.0f, -104.0f,
      -105.0f, 3.92f, -3.92f, 0.625f, -0.625f, 8192.0f, 8193.0f, -1e6f, 1e30f, 2.5f,
      -2.5f, 0.5f, 1.5f, 1e-3f, -7.0f, 12345.678f, 3.0e38f, 1.0f, -1.0f};
  std::vector<std::pair<std::string, int>> programs;
  std::vector<Chain> chains;
  std::mt19937 rng(11);
  for (const OpInfo& op : kFusedOps) {
    int num_inputs = 0;
    chains.push_back(RandomChain(op, 1, 2, &num_inputs, rng));
    programs.emplace_back(ProgramText(chains.back()), num_inputs);
  }
  // tan: LLVM merges the libm calls of sin and cos of one value into sincosf.
  chains.push_back({{"sin", {Input(0)}}, {"cos", {Input(0)}}, {"divide", {Temp(0), Temp(1)}}});
  programs.emplace_back(ProgramText(chains.back()), 1);
  // Powers LLVM would rewrite if it saw pow (exp2, sqrt, a division): each stays powf.
  for (const auto& [base, exponent] :
       std::vector<std::pair<kernels::testing::Arg, kernels::testing::Arg>>{
           {Literal(2.0f), Input(0)}, {Literal(0.5f), Input(0)}, {Input(0), Literal(0.5f)},
           {Input(0), Literal(-1.0f)}, {Input(0), Literal(3.0f)}}) {
    chains.push_back({{"power", {base, exponent}}});
    programs.emplace_back(ProgramText(chains.back()), 1);
  }
  if (!Runnable(SpecWith(programs))) return;
  std::shared_ptr<const vm::Executable> exe = Build(SpecWith(programs), GetParam());
  ASSERT_NE(exe, nullptr);
  const int64_t n = static_cast<int64_t>(specials.size());
  std::vector<float> a, b;  // every pair of specials
  for (float x : specials) {
    for (float y : specials) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  const NDArray x = TensorOf<float>({n, n}, a);
  const NDArray y = TensorOf<float>({n, n}, b);
  for (size_t c = 0; c < chains.size(); ++c) {
    std::vector<NDArray> inputs = {x, y};
    inputs.resize(programs[c].second);
    absl::StatusOr<NDArray> want = RunUnfused(chains[c], inputs);
    absl::StatusOr<NDArray> got = Call(*exe, static_cast<int>(c), inputs);
    ASSERT_TRUE(want.ok() && got.ok()) << programs[c].first;
    if (BitExact(GetParam())) {
      ExpectSameBits(*got, *want, programs[c].first);
    } else if (chains[c].size() == 1) {
      ExpectClose(*got, *want, programs[c].first);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, NativeCodegenTest,
                         ::testing::Values("native", "x86-64", "x86-64-v2", "x86-64-v3",
                                           "x86-64-v4"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(NativeCodegen, RewritesTheKernelTableAndSharesKernelsOfOneProgram) {
  vm::ExecutableSpec spec = SpecWith({{"t0 = add(i0, i1); t1 = tanh(t0)", 2},
                                      {"t0 = exp(i0)", 1},
                                      {"t0 = add(i0, i1); t1 = tanh(t0)", 2}});
  spec.kernels.push_back(vm::KernelEntry{"add", {}, 2, 1});
  absl::StatusOr<NativeCodegenStats> stats = GenerateNativeKernels(spec, {"x86-64-v3"});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, 3);
  EXPECT_EQ(stats->kernels, 2);
  EXPECT_EQ(stats->vector_width, 8);
  EXPECT_EQ(stats->cpu, "x86-64-v3");
  EXPECT_THAT(stats->features, ::testing::IsSupersetOf({"avx2", "fma", "avx"}));
  EXPECT_EQ(spec.native.features, stats->features);
  EXPECT_EQ(spec.kernels[0].name, kernels::kNativeElementwiseKernel);
  EXPECT_EQ(std::get<std::string>(spec.kernels[0].attrs.at("program")),
            "t0 = add(i0, i1); t1 = tanh(t0)");
  EXPECT_EQ(spec.kernels[0].attrs.size(), 1u);  // the program only
  ASSERT_EQ(spec.native.programs.size(), 2u);
  EXPECT_TRUE(spec.native.programs.contains("t0 = exp(i0)"));
  EXPECT_TRUE(spec.native.programs.contains("t0 = add(i0, i1); t1 = tanh(t0)"));
  EXPECT_EQ(spec.kernels[3].name, "add");
  EXPECT_EQ(spec.native.object.substr(0, 4), "\x7f" "ELF");
  // Twice is an error, not a second object.
  EXPECT_EQ(GenerateNativeKernels(spec, {"x86-64-v3"}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// AVX-512 targets get 16-lane (512-bit) vectors and record the AVX-512 features the
// loader checks; whether this CPU can run the code is NativeCodegenTest's matter.
TEST(NativeCodegen, Avx512TargetsUseSixteenLanes) {
  for (const char* cpu : {"x86-64-v4", "skylake-avx512", "sapphirerapids"}) {
    SCOPED_TRACE(cpu);
    vm::ExecutableSpec spec = SpecWith({{"t0 = add(i0, i1); t1 = tanh(t0)", 2}});
    absl::StatusOr<NativeCodegenStats> stats = GenerateNativeKernels(spec, {cpu});
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->vector_width, 16);
    EXPECT_THAT(stats->features,
                ::testing::IsSupersetOf({"avx512f", "avx512bw", "avx512vl", "avx512dq"}));
    // AMX is never generated, so never required.
    EXPECT_THAT(stats->features, ::testing::Not(::testing::Contains("amx-tile")));
  }
}

TEST(NativeCodegen, AnExecutableWithoutFusedGroupsGetsNoCode) {
  vm::ExecutableSpec spec = SpecWith({});
  absl::StatusOr<NativeCodegenStats> stats = GenerateNativeKernels(spec, {"native"});
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->entries, 0);
  EXPECT_TRUE(spec.native.object.empty());
}

TEST(NativeCodegen, UnknownCpuIsAnError) {
  vm::ExecutableSpec spec = SpecWith({{"t0 = exp(i0)", 1}});
  absl::Status status = GenerateNativeKernels(spec, {"pentium-9000"}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("unknown target cpu 'pentium-9000'"));
  EXPECT_EQ(spec.kernels[0].name, "fused_elementwise");
}

TEST(NativeCodegen, SurvivesTheFileFormat) {
  vm::ExecutableSpec spec = SpecWith({{"t0 = multiply(i0, i1); t1 = sigmoid(t0)", 2}});
  ASSERT_TRUE(GenerateNativeKernels(spec, {"native"}).ok());
  absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
      serializer::ReloadExecutable(spec, kernels::DefaultRegistry());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->spec().native, spec.native);
  std::mt19937 rng(3);
  const std::vector<NDArray> inputs = {RandomTensor({5, 77}, DType::kF32, rng),
                                       RandomTensor({77}, DType::kF32, rng)};
  absl::StatusOr<NDArray> got = Call(**exe, 0, inputs);
  ASSERT_TRUE(got.ok()) << got.status();
  const float* g = (*got)->data_as<float>();
  const float* a = inputs[0]->data_as<float>();
  const float* b = inputs[1]->data_as<float>();
  for (int i = 0; i < 5 * 77; ++i) {
    EXPECT_NEAR(g[i], 1.0 / (1.0 + std::exp(-double{a[i]} * b[i % 77])), 1e-6) << i;
  }
}

TEST(NativeCodegen, CallErrorsAreTheFusedKernelsWithTheNativeName) {
  std::shared_ptr<const vm::Executable> exe = Build(SpecWith({{"t0 = add(i0, i1)", 2}}), "native");
  ASSERT_NE(exe, nullptr);
  absl::Status status = Call(*exe, 0, {TensorOf<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                                       TensorOf<float>({4}, {1, 2, 3, 4})})
                            .status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("native.fused_elementwise: input i1"));
  status = Call(*exe, 0, {TensorOf<float>({2}, {1, 2}), TensorOf<int32_t>({2}, {1, 2})}).status();
  EXPECT_THAT(status.message(), HasSubstr("input i1 has dtype i32, expected f32"));
}

TEST(NativeCodegen, TheLoaderRefusesCodeForAnotherCpu) {
  vm::NativeCode code{"sapphirerapids", {"avx2", "fma", "avx512f"}, "\x7f" "ELF", {}};
  const auto no_avx512 = [](std::string_view f) { return f != "avx512f"; };
  absl::Status status = vm::CheckNativeCodeRuns(code, no_avx512);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("generated for cpu 'sapphirerapids'"));
  EXPECT_THAT(status.message(), HasSubstr("this CPU lacks avx512f"));
  EXPECT_TRUE(vm::CheckNativeCodeRuns(code, [](std::string_view) { return true; }).ok());
  code.features.push_back("quantum");
  status = vm::CheckNativeCodeRuns(code, [](std::string_view) { return true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("CPU feature 'quantum'"));
  // Create runs the check with this CPU's answers, before loading anything.
  vm::ExecutableSpec spec = SpecWith({});
  spec.native = vm::NativeCode{"future", {"avx512f"}, "not an object", {}};
  if (!kernels::CpuHasFeature("avx512f")) {
    EXPECT_EQ(vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted).status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
}

// Native code is loaded only when trusted. Untrusted, the native.fused_elementwise
// entries bind fused_elementwise and run the same programs on the evaluator, with the
// results of the trusted run (within the float rounding the native rows may differ
// by); the native code is not even checked, so code for a CPU this one is not loads.
TEST(NativeCodegen, UntrustedNativeCodeRunsOnTheEvaluator) {
  std::mt19937 rng(29);
  vm::ExecutableSpec spec = SpecWith({{"t0 = tanh(i0); t1 = multiply(t0, i1); t2 = exp(t1)", 2}});
  ASSERT_TRUE(GenerateNativeKernels(spec, {"native"}).ok());
  ASSERT_EQ(spec.kernels[0].name, kernels::kNativeElementwiseKernel);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> trusted =
      vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted);
  absl::StatusOr<std::shared_ptr<const vm::Executable>> untrusted =
      vm::Executable::Create(spec, kernels::DefaultRegistry());
  ASSERT_TRUE(trusted.ok()) << trusted.status();
  ASSERT_TRUE(untrusted.ok()) << untrusted.status();
  EXPECT_FALSE((*trusted)->native_code_ignored());
  EXPECT_TRUE((*untrusted)->native_code_ignored());
  EXPECT_EQ((*trusted)->kernel(0).name(), kernels::kNativeElementwiseKernel);
  EXPECT_EQ((*untrusted)->kernel(0).name(), "fused_elementwise");
  const std::vector<NDArray> inputs = {RandomTensor({37, 19}, DType::kF32, rng), RandomTensor({37, 19}, DType::kF32, rng)};
  absl::StatusOr<NDArray> native = Call(**trusted, 0, inputs), evaluated = Call(**untrusted, 0, inputs);
  ASSERT_TRUE(native.ok()) << native.status();
  ASSERT_TRUE(evaluated.ok()) << evaluated.status();
  ExpectClose(*evaluated, *native, "untrusted against trusted");

  spec.native = vm::NativeCode{"future", {"quantum"}, "not an object", {}};
  EXPECT_FALSE(vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted).ok());
  absl::StatusOr<std::shared_ptr<const vm::Executable>> ignored =
      vm::Executable::Create(spec, kernels::DefaultRegistry());
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  EXPECT_TRUE((*ignored)->native_code_ignored());
}

TEST(NativeCodegen, NativeEntriesNeedNativeCodeForTheirProgram) {
  vm::ExecutableSpec spec = SpecWith({{"t0 = tanh(i0)", 1}});
  ASSERT_TRUE(GenerateNativeKernels(spec, {"native"}).ok());
  spec.kernels.push_back(
      vm::KernelEntry{kernels::kNativeElementwiseKernel, {{"program", std::string("t0 = exp(i0)")}}, 1, 1});
  absl::Status status = vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("kernel table entry 1: kernel 'native.fused_elementwise': the executable "
                        "has no native code for program \"t0 = exp(i0)\""));
  spec.native.programs["t0 = exp(i0)"] = "missing";  // a program without functions
  status = vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("missing_contiguous"));
}

// Kernels that evaluate a fused program inside them (a softmax's or layer norm's
// prologue, a reduction's prologue and epilogue) against the same kernels bound
// without native code, on broadcasting inputs.
TEST(NativeCodegen, ProloguesAndEpiloguesRunNativeCode) {
  struct Case {
    std::string kernel;
    kernels::Attrs attrs;
    std::vector<std::vector<int64_t>> shapes;
  };
  const std::vector<Case> cases = {
      {"nn.softmax",
       {{"axis", int64_t{-1}}, {"prologue", std::string("t0 = multiply(i0, 0.125); t1 = add(t0, i1)")}},
       {{2, 3, 37, 37}, {2, 1, 1, 37}}},
      {"nn.layer_norm",
       {{"prologue", std::string("t0 = add(i0, i1); t1 = gelu(t0)")}},
       {{5, 77}, {77}, {77}, {77}}},
      {"sum",
       {{"axis", int64_t{1}},
        {"prologue", std::string("t0 = subtract(i0, i1); t1 = multiply(t0, t0)")},
        {"epilogue", std::string("t0 = sqrt(i0)")}},
       {{6, 300}, {6, 1}}},
  };
  std::mt19937 rng(5);
  for (const Case& c : cases) {
    std::vector<NDArray> inputs;
    for (const auto& shape : c.shapes) inputs.push_back(RandomTensor(shape, DType::kF32, rng));
    vm::ExecutableSpec spec = SpecWith({});
    spec.kernels.push_back(vm::KernelEntry{c.kernel, c.attrs,
                                           static_cast<uint32_t>(inputs.size()), 1});
    absl::StatusOr<NativeCodegenStats> stats = GenerateNativeKernels(spec, {"native"});
    ASSERT_TRUE(stats.ok()) << stats.status();
    EXPECT_EQ(stats->entries, 1) << c.kernel;
    EXPECT_EQ(stats->kernels, c.kernel == "sum" ? 2 : 1) << c.kernel;
    EXPECT_EQ(spec.kernels[0].name, c.kernel);  // only fused_elementwise is renamed
    absl::StatusOr<std::shared_ptr<const vm::Executable>> exe =
        vm::Executable::Create(spec, kernels::DefaultRegistry(), kTrusted);
    ASSERT_TRUE(exe.ok()) << exe.status();
    absl::StatusOr<NDArray> got = Call(**exe, 0, inputs);
    ASSERT_TRUE(got.ok()) << c.kernel << ": " << got.status();
    absl::StatusOr<std::vector<NDArray>> want = kernels::testing::RunKernel(c.kernel, c.attrs, inputs);
    ASSERT_TRUE(want.ok()) << c.kernel << ": " << want.status();
    if (BitExact("native")) {
      ExpectSameBits(*got, (*want)[0], c.kernel);
    } else {
      ExpectClose(*got, (*want)[0], c.kernel);
    }
  }
}

}  // namespace
}  // namespace dynvm::compiler
