#!/bin/sh
# Load test of vm_serve (docs/serving.md): tiny BERT on a loopback port, wrk at
# concurrency 1, 8 and 32 with requests of mixed lengths, then 100,000 requests with
# the server's resident memory (VmRSS) read before and after.
#
#   bench/serve_load.sh [BUILD_DIR]      # default: build
#   DURATION=10s WORKERS=2 THREADS_PER_WORKER=1 bench/serve_load.sh
#
# Prints, per concurrency, requests/s, p50 and p99 latency and the count of non-2xx
# answers (bench/serve_load.lua), then the memory line. Needs wrk, curl, python3 and
# awk. TIMEOUT (seconds, default 600) bounds the wait for the TOTAL requests.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
DURATION=${DURATION:-10s}
WORKERS=${WORKERS:-2}
THREADS_PER_WORKER=${THREADS_PER_WORKER:-1}
MAX_BATCH=${MAX_BATCH:-8}
BATCH_DELAY_US=${BATCH_DELAY_US:-200}
TOTAL=${TOTAL:-100000}
TIMEOUT=${TIMEOUT:-600}
WRK_THREADS=2

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

EXE=$BUILD/testdata/bert_mini.fbs
if [ ! -f "$EXE" ]; then
  EXE=$WORK/bert_mini.fbs
  "$BUILD/bin/vm_compile" "$ROOT/tests/models/bert/bert_mini.onnx" -o "$EXE" >/dev/null
fi

# Bodies of batch 1 at lengths 8 to 128, random token ids (vocabulary 1000), fixed seed.
python3 - "$WORK" <<'PY'
import json, random, sys
random.seed(0)
for i, n in enumerate([8, 16, 24, 32, 48, 64, 96, 128]):
    ids = [random.randrange(1000) for _ in range(n)]
    body = {"inputs": [
        {"name": "input_ids", "datatype": "INT64", "shape": [1, n], "data": ids},
        {"name": "attention_mask", "datatype": "INT64", "shape": [1, n], "data": [1] * n},
        {"name": "token_type_ids", "datatype": "INT64", "shape": [1, n], "data": [0] * n}],
        "outputs": [{"name": "pooler_output"}]}
    with open(f"{sys.argv[1]}/body_{i}.json", "w") as f:
        json.dump(body, f)
PY

"$BUILD/bin/vm_serve" "$EXE" --trust-native --port=0 --workers="$WORKERS" --threads-per-worker="$THREADS_PER_WORKER" \
  --max-batch="$MAX_BATCH" --batch-delay-us="$BATCH_DELAY_US" \
  --pad=input_ids:1:0 --pad=attention_mask:1:0 --pad=token_type_ids:1:0 \
  >"$WORK/stdout" 2>"$WORK/stderr" &
SERVER_PID=$!
for _ in $(seq 100); do
  grep -q listening "$WORK/stdout" 2>/dev/null && break
  sleep 0.05
done
URL=$(sed -n 's/^vm_serve: listening on //p' "$WORK/stdout")
[ -n "$URL" ] || { cat "$WORK/stderr"; exit 1; }
URL=$URL/v2/models/bert_mini/infer
rss() { awk '/^VmRSS/ {print $2 " " $3}' "/proc/$SERVER_PID/status"; }

head -1 "$WORK/stderr"
grep '^vm_serve: packing' "$WORK/stderr"
echo "machine: $(nproc) cores; wrk -t$WRK_THREADS -d$DURATION; bodies: batch 1, lengths 8..128, pooler_output only"
RSS_START=$(rss)
for c in 1 8 32; do
  t=$WRK_THREADS
  [ "$c" -lt "$t" ] && t=$c
  printf 'concurrency %-3s ' "$c"
  SERVE_BODIES_DIR=$WORK wrk -t"$t" -c"$c" -d"$DURATION" --timeout 10s -s "$ROOT/bench/serve_load.lua" "$URL" \
    | sed -n 's/^RESULT //p'
done
RSS_BEFORE=$(rss)
# wrk has no request count: each thread stops after its share (bench/serve_load.lua),
# and wrk is interrupted (which prints its summary) once the server has answered them.
answered() {
  curl -s "${URL%/v2/*}/metrics" | awk '/^dynvm_infer_requests_total/ {n += $2} END {print n + 0}'
}
GOAL=$(( $(answered) + TOTAL ))
printf 'then %s requests at concurrency 8: ' "$TOTAL"
SERVE_BODIES_DIR=$WORK SERVE_MAX_REQUESTS=$TOTAL SERVE_WRK_THREADS=$WRK_THREADS \
  wrk -t$WRK_THREADS -c8 -d1h --timeout 10s -s "$ROOT/bench/serve_load.lua" "$URL" >"$WORK/wrk_total" &
WRK_PID=$!
START=$(date +%s%N)
polls=0
while [ "$(answered)" -lt "$GOAL" ]; do
  polls=$((polls + 1))
  if [ "$polls" -gt $((TIMEOUT * 5)) ]; then
    kill -INT "$WRK_PID" 2>/dev/null || true
    echo "timed out after ${TIMEOUT}s with $(( GOAL - $(answered) )) of $TOTAL requests unanswered" >&2
    exit 1
  fi
  sleep 0.2
done
END=$(date +%s%N)
kill -INT "$WRK_PID"
wait "$WRK_PID" || true
sed -n 's/^RESULT //p' "$WORK/wrk_total" | sed 's/ seconds=[^ ]* rps=[^ ]*//'
echo "  ($TOTAL answered in $(awk -v ns=$((END - START)) 'BEGIN {printf "%.1f", ns / 1e9}') s)"
RSS_AFTER=$(rss)
echo "VmRSS: at start $RSS_START; before the $TOTAL requests $RSS_BEFORE; after them $RSS_AFTER"
# How the requests ran: invocations, and of them the packed ones (real tokens per batch).
curl -s "${URL%/v2/*}/metrics" | awk '/^dynvm_batch_size_(count|sum)|^dynvm_batch_tokens_(count|sum)/ {printf "%s=%s ", $1, $2} END {print ""}'
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" && echo "vm_serve exited 0 after SIGTERM"
SERVER_PID=
