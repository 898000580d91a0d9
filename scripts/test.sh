#!/usr/bin/env bash
# README quick start, second command (and what CI runs): install what is missing, build
# twice — Release, and Debug with AddressSanitizer + UndefinedBehaviorSanitizer — and
# run the whole test suite on both (on Release also with the portable kernels forced,
# DYNVM_ISA=scalar). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
jobs=${DYNVM_JOBS:-2}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
# Again on the portable kernels, as a CPU without AVX2 runs them (kernels/cpu_features.h).
DYNVM_ISA=scalar ctest --test-dir build --output-on-failure -j"$jobs"

# Sanitizers: -O1 keeps the run fast; UBSan aborts on the first report. A corrupted or
# hostile program may ask for more memory than the machine has: ASan then returns null
# as the system allocator would (allocator_may_return_null), so the tests see the
# runtime's own ResourceExhausted rather than ASan's abort.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DDYNVM_SANITIZE=ON \
  -DDYNVM_BUILD_BENCHMARKS=OFF -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g"
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
