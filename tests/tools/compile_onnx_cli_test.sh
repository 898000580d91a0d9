#!/bin/sh
# End-to-end test of vm_compile on an ONNX model (docs/onnx.md, docs/cli.md) with vm_run:
#   compile_onnx_cli_test.sh path/to/vm_compile path/to/vm_run tests/models/bert
# bert_mini.onnx compiles once; vm_run feeds it by input name at two lengths and checks
# both outputs against PyTorch's (max |diff| 1e-4, issue 5's bound); malformed files
# and misuse exit 1 or 2 with one line naming the problem.
set -u
VM_COMPILE=$1
VM_RUN=$2
DIR=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

"$VM_COMPILE" "$DIR/bert_mini.onnx" -o "$TMP/bert.fbs" || fail "vm_compile bert_mini.onnx"
for case in b2_s7 b1_s384; do
  G="$DIR/golden/$case"
  "$VM_RUN" "$TMP/bert.fbs" --input=token_type_ids=@"${G}_token_type_ids.npy" \
    --input=input_ids=@"${G}_input_ids.npy" --input=attention_mask=@"${G}_attention_mask.npy" \
    --expected_output=@"${G}_last_hidden_state.npy" --expected_output=@"${G}_pooler_output.npy" \
    --atol=1e-4 --rtol=0 > "$TMP/out" 2>&1 || fail "$case: $(tail -3 "$TMP/out")"
done

# Outputs print and compare under their ONNX names.
grep -q "^pooler_output: tensor<f32>\[1, 64\]" "$TMP/out" || fail "no named output in: $(head -c 300 "$TMP/out")"
G="$DIR/golden/b2_s7"
"$VM_RUN" "$TMP/bert.fbs" --input=token_type_ids=@"${G}_token_type_ids.npy" \
  --input=input_ids=@"${G}_input_ids.npy" --input=attention_mask=@"${G}_attention_mask.npy" \
  --expected_output=@"${G}_pooler_output.npy" --expected_output=@"${G}_last_hidden_state.npy" \
  > /dev/null 2> "$TMP/err"
[ $? -eq 3 ] || fail "swapped outputs should exit 3"
grep -q "output 0 ('last_hidden_state'): expected tensor<f32>\[2, 64\]" "$TMP/err" ||
  fail "the mismatch does not name the output: $(cat "$TMP/err")"

# --profile and --trace: a table row per kernel, GFLOP/s for the (packed) dense layers, and a
# Chrome trace of the two timed runs.
"$VM_RUN" "$TMP/bert.fbs" --input=token_type_ids=@"${G}_token_type_ids.npy" \
  --input=input_ids=@"${G}_input_ids.npy" --input=attention_mask=@"${G}_attention_mask.npy" \
  --benchmark=2 --profile --trace="$TMP/trace.json" > "$TMP/out" 2>&1 || fail "--profile: $(tail -3 "$TMP/out")"
grep -q "^2 invocation(s)" "$TMP/out" || fail "--profile: no summary in: $(tail -30 "$TMP/out")"
grep -Eq "^nn\.contrib_dense_pack +[0-9]+ +[0-9]+ .* [0-9]+\.[0-9]$" "$TMP/out" ||
  fail "--profile: no dense row with GFLOP/s"
grep -q "^shape arithmetic" "$TMP/out" || fail "--profile: no instruction kinds"
head -c 60 "$TMP/trace.json" | grep -q '{"displayTimeUnit": "ms", "traceEvents": \[' || fail "--trace: not a trace"
[ "$(grep -c '"cat": "invocation"' "$TMP/trace.json")" -eq 2 ] || fail "--trace: expected 2 invocations"

# A truncated model: exit 1, one line naming the file.
head -c 5000 "$DIR/bert_mini.onnx" > "$TMP/cut.onnx"
"$VM_COMPILE" "$TMP/cut.onnx" -o "$TMP/cut.fbs" 2> "$TMP/err"
[ $? -eq 1 ] || fail "a truncated model should exit 1"
[ "$(wc -l < "$TMP/err")" -eq 1 ] || fail "expected one line, got: $(cat "$TMP/err")"
grep -q "cut.onnx" "$TMP/err" || fail "the error does not name the file: $(cat "$TMP/err")"
[ -e "$TMP/cut.fbs" ] && fail "a failed compile left an output file"

# --const is for Relay text.
"$VM_COMPILE" "$DIR/bert_mini.onnx" -o "$TMP/x.fbs" --const=w.npy 2> "$TMP/err"
[ $? -eq 2 ] || fail "--const with an ONNX model should exit 2"
grep -q "ONNX model carries its weights" "$TMP/err" || fail "unexpected: $(cat "$TMP/err")"
echo "PASS"
