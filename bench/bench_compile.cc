// Compile times: Relay text through the whole pipeline (parse, type inference,
// constant folding, CSE, DCE, code generation, verification) to an ExecutableSpec.
//
//   build/bin/bench_compile
//
// BM_CompileAttention compiles tests/compiler/e2e/attention.relay (single- and
// four-head attention); BM_CompileTransformer/L compiles an L-layer BERT-base-shaped
// encoder (hidden 768, 12 heads, FFN 3072, dynamic sequence length) whose weights are
// parameters, generated here. Counter "ops": operator calls compiled per second.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "compiler/driver/compile.h"
#include "compiler/frontend/relay_text/parser.h"
#include "compiler/ir/rewrite.h"
#include "tools/file_util.h"

namespace dynvm::compiler {
namespace {

// One encoder layer over %h{i} [n, 768], returning its output as the block's result.
std::string Layer(int i) {
  const std::string in = absl::StrCat("%h", i);
  const auto w = [i](std::string_view name) { return absl::StrCat("%l", i, "_", std::string(name)); };
  return absl::StrFormat(R"(
  %%q%1$d = transpose(reshape(nn.dense(%2$s, %3$s), newshape=[0, 12, 64]), axes=[1, 0, 2]);
  %%k%1$d = transpose(reshape(nn.dense(%2$s, %4$s), newshape=[0, 12, 64]), axes=[1, 0, 2]);
  %%v%1$d = transpose(reshape(nn.dense(%2$s, %5$s), newshape=[0, 12, 64]), axes=[1, 0, 2]);
  %%p%1$d = nn.softmax(multiply(nn.batch_matmul(%%q%1$d, %%k%1$d), 0.125f), axis=-1);
  %%c%1$d = reshape(transpose(nn.batch_matmul(%%p%1$d, %%v%1$d, transpose_b=False), axes=[1, 0, 2]), newshape=[0, -1]);
  %%a%1$d = nn.layer_norm(add(nn.dense(%%c%1$d, %6$s), %2$s), %7$s, %8$s);
  %%f%1$d = nn.dense(gelu(nn.dense(%%a%1$d, %9$s)), %10$s);
  let %%h%11$d = nn.layer_norm(add(%%f%1$d, %%a%1$d), %7$s, %8$s);)",
                         i, in, w("wq"), w("wk"), w("wv"), w("wo"), w("gamma"), w("beta"),
                         w("w1"), w("w2"), i + 1);
}

std::string Transformer(int layers) {
  std::string params = "%h0: Tensor[(n, 768), float32]";
  for (int i = 0; i < layers; ++i) {
    for (const char* name : {"wq", "wk", "wv", "wo"}) {
      absl::StrAppend(&params, ", %l", i, "_", name, ": Tensor[(768, 768), float32]");
    }
    absl::StrAppend(&params, ", %l", i, "_w1: Tensor[(3072, 768), float32]");
    absl::StrAppend(&params, ", %l", i, "_w2: Tensor[(768, 3072), float32]");
    absl::StrAppend(&params, ", %l", i, "_gamma: Tensor[(768), float32], %l", i,
                    "_beta: Tensor[(768), float32]");
  }
  std::string body;
  for (int i = 0; i < layers; ++i) body += Layer(i);
  return absl::StrCat("def @main(", params, ") {", body, "\n  %h", layers, "\n}\n");
}

// The operator calls of `text`, counted once.
int CountOperatorCalls(const std::string& text) {
  absl::StatusOr<Module> mod = ParseModule(text);
  int calls = 0;
  if (!mod.ok()) return calls;
  for (const std::string& name : mod->function_names()) {
    (void)RewriteBottomUp(*mod->Function(name), [&calls](const Expr& e) -> absl::StatusOr<Expr> {
      calls += e.is(ExprKind::kCall) && e.callee().is(ExprKind::kOp);
      return e;
    });
  }
  return calls;
}

void CompileText(benchmark::State& state, const std::string& text) {
  const int ops = CountOperatorCalls(text);
  for (auto _ : state) {
    absl::StatusOr<Module> mod = ParseModule(text);
    if (!mod.ok()) {
      state.SkipWithError(std::string(mod.status().message()).c_str());
      return;
    }
    absl::StatusOr<vm::ExecutableSpec> spec = CompileModule(*mod, CompileOptions{});
    if (!spec.ok()) {
      state.SkipWithError(std::string(spec.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(spec->functions.size());
  }
  state.counters["ops"] = benchmark::Counter(ops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_CompileAttention(benchmark::State& state) {
  absl::StatusOr<std::string> text =
      tools::ReadFileOrStdin(std::string(DYNVM_SOURCE_DIR) + "/tests/compiler/e2e/attention.relay");
  if (!text.ok()) {
    state.SkipWithError(std::string(text.status().message()).c_str());
    return;
  }
  CompileText(state, *text);
}
BENCHMARK(BM_CompileAttention)->Unit(benchmark::kMillisecond);

void BM_CompileTransformer(benchmark::State& state) {
  const int layers = static_cast<int>(state.range(0));
  CompileText(state, Transformer(layers));
}
BENCHMARK(BM_CompileTransformer)->Arg(1)->Arg(12)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dynvm::compiler
