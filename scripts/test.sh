#!/usr/bin/env bash
# README quick start, second command (and what CI runs): install what is missing, check
# the layering of the includes (scripts/check_layering.py), build twice — Release, and
# Debug with AddressSanitizer + UndefinedBehaviorSanitizer — and run the whole test
# suite on both (on Release also at every lower kernel level the CPU runs, DYNVM_ISA);
# then the concurrency tests under ThreadSanitizer, and every fuzz target for a short
# time. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs=${DYNVM_JOBS:-2}
# ccache keys relative to this checkout, so that a clone in another folder (CI's) reuses
# what earlier builds of the same sources compiled.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# The layering of DESIGN.md on every include, before spending time on a build.
scripts/check_layering.py

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
# Again at every lower level of kernels this CPU runs (kernels/cpu_features.h): the
# portable ones, as a CPU without AVX2 runs them, and AVX2 on an AVX-512 machine.
read -r -a levels <<<"$(build/bin/vm_run --version |
  sed -n 's/.*levels this CPU runs: \(.*\))$/\1/p')"
if ((${#levels[@]} == 0)); then
  echo "test.sh: vm_run --version names no kernel levels" >&2
  exit 1
fi
for isa in "${levels[@]:0:${#levels[@]}-1}"; do  # the highest ran above
  echo "== the test suite on the $isa kernels"
  # (Not the install and package tests: they run no kernels of their own.)
  DYNVM_ISA=$isa ctest --test-dir build --output-on-failure -j"$jobs" -E "^(install_test|deb_test)$"
done

# ThreadSanitizer on the concurrency tests: VMs on many threads sharing one executable,
# vm_serve's batcher, the thread pool, the allocators. Only those targets are built (no
# compiler); the tiny BERT executable is the one the Release run's fixture compiled.
tsan_tests=(vm_sharing_test serve_batcher_test serve_token_plan_test kernels_thread_pool_test objects_allocator_test)
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDYNVM_TSAN=ON \
  -DDYNVM_BUILD_BENCHMARKS=OFF
cmake --build build-tsan -j"$jobs" --target "${tsan_tests[@]}"
for t in "${tsan_tests[@]}"; do
  DYNVM_BERT_MINI_EXE="$PWD/build/testdata/bert_mini.fbs" TSAN_OPTIONS=halt_on_error=1 \
    "build-tsan/bin/$t" --gtest_brief=1
done

# Sanitizers, with clang-14: -O1 keeps the run fast, line tables are all the reports
# need, and UBSan aborts on the first report. A corrupted or hostile program may ask for
# more memory than the machine has: ASan then returns null as the system allocator
# would (allocator_may_return_null), so the tests see the runtime's own ResourceExhausted
# rather than ASan's abort. The tree is built with libFuzzer's coverage (DYNVM_FUZZ), so
# it also holds the fuzz targets: after the suite (which replays their seeds and
# regressions), each fuzzes for 30 s.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DDYNVM_FUZZ=ON \
  -DDYNVM_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -gline-tables-only"
cmake --build build-asan -j"$jobs"
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer  # llvm-14, with llvm-14-dev
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
scripts/fuzz.sh -t "${DYNVM_FUZZ_SECONDS:-30}" -b build-asan
