#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz, each for SECONDS, from a build configured
# with -DDYNVM_FUZZ=ON (clang-14); prints per target the executions, the coverage
# reached (libFuzzer's `cov`: edges, `ft`: features) and the crashes found. Exits
# non-zero if any target found a crash, leaving the input under BUILD/fuzz/crashes/.
#
#   scripts/fuzz.sh [-t SECONDS] [-b BUILD] [TARGET...]    (default: 30 s, build-asan, all)
#
# New inputs libFuzzer finds go to BUILD/fuzz/corpus/TARGET (kept between runs); the
# committed seeds in tests/fuzz/corpus/TARGET are read, never written.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=30
build=build-asan
while getopts "t:b:" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: $0 [-t SECONDS] [-b BUILD] [TARGET...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(executable npy npz relay onnx infer_request)

# ASan returns null for impossible allocations, as the test suite runs (scripts/test.sh),
# so that hostile sizes reach the runtime's own checks.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
printf '%-14s %10s %8s %8s %7s %8s %s\n' target executions exec/s cov ft corpus crashes
for t in "${targets[@]}"; do
  bin=$build/bin/fuzz_$t
  [ -x "$bin" ] || { echo "$bin missing: configure $build with -DDYNVM_FUZZ=ON" >&2; exit 2; }
  work=$build/fuzz/corpus/$t
  crashes=$build/fuzz/crashes
  log=$build/fuzz/$t.log
  mkdir -p "$work" "$crashes"
  rm -f "$crashes/$t-"*  # what an earlier run found was reported then
  dict=()
  [ -f "tests/fuzz/dict/$t.dict" ] && dict=(-dict="tests/fuzz/dict/$t.dict")
  status=0
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
    -print_final_stats=1 -artifact_prefix="$crashes/$t-" "${dict[@]}" \
    "$work" "tests/fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  # No `cov:` line when the target failed while loading the corpus.
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
  corpus=$(ls "$work" | wc -l)
  found=$(ls "$crashes" | grep -c "^$t-" || true)
  printf '%-14s %10s %8s %8s %7s %8s %s\n' "$t" "${runs:-?}" "${speed:-?}" "${cov:-?}" \
    "${ft:-?}" "$corpus" "$found"
  if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
    failed=1
    echo "fuzz_$t failed (exit $status): see $log" >&2
    grep -m1 -A30 "ERROR\|==ERROR\|runtime error\|deadly signal" "$log" >&2 || tail -30 "$log" >&2
  fi
done
exit $failed
