#!/bin/sh
# End-to-end test of vm_compile (docs/cli.md) with vm_run:
#   compile_cli_test.sh path/to/vm_compile path/to/vm_run tests/tools/testdata
# A Relay program with a constant from an .npy compiles at every optimisation level to
# an executable that vm_run runs to the same result; --dump-ir shows the passes'
# effect; bad command lines exit 2 and bad programs 1, naming the position.
set -u
VM_COMPILE=$1
VM_RUN=$2
DATA=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# relu(x · wᵀ + x · wᵀ) for x = ones(2, 4), w = arange(12).reshape(3, 4) / 10, to vm_run's
# default tolerance (1e-6 + 1e-5 relative): the portable kernels (DYNVM_ISA=scalar) round
# a sum of products differently from the FMA ones, e.g. 7.6000004 for 7.6.
for level in 0 1 2 3; do
  "$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/mlp$level.fbs" --const="$DATA/mlp_w.npy" \
    --opt-level=$level || fail "vm_compile --opt-level=$level"
  "$VM_RUN" "$TMP/mlp$level.fbs" --input=x=2x4xf32=1,1,1,1,1,1,1,1 \
    --expected_output=2x3xf32=1.2,4.4,7.6,1.2,4.4,7.6 > "$TMP/got" \
    || fail "opt-level $level: $(cat "$TMP/got")"
done

# Native code (vm_compile's default, --target-cpu=native) runs only with --trust-native;
# without it the fused programs run on the evaluator, to the same result, and vm_run
# says so in one line; an executable without native code needs no notice.
"$VM_RUN" "$TMP/mlp2.fbs" --input=x=2x4xf32=1,1,1,1,1,1,1,1 \
  --expected_output=2x3xf32=1.2,4.4,7.6,1.2,4.4,7.6 > /dev/null 2> "$TMP/err" || fail "untrusted run"
grep -q "^vm_run: notice: the executable's native code is not trusted" "$TMP/err" ||
  fail "untrusted run said: $(cat "$TMP/err")"
[ "$(wc -l < "$TMP/err")" -eq 1 ] || fail "the notice is not one line: $(cat "$TMP/err")"
"$VM_RUN" "$TMP/mlp2.fbs" --trust-native --input=x=2x4xf32=1,1,1,1,1,1,1,1 \
  --expected_output=2x3xf32=1.2,4.4,7.6,1.2,4.4,7.6 > /dev/null 2> "$TMP/err" || fail "trusted run"
[ -s "$TMP/err" ] && fail "trusted run said: $(cat "$TMP/err")"
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/portable.fbs" --const="$DATA/mlp_w.npy" --target-cpu=none ||
  fail "--target-cpu=none"
"$VM_RUN" "$TMP/portable.fbs" --input=x=2x4xf32=1,1,1,1,1,1,1,1 > /dev/null 2> "$TMP/err" || fail "portable run"
[ -s "$TMP/err" ] && fail "a run without native code said: $(cat "$TMP/err")"

# vm_run's budgets: past one, the run fails with exit 1 and a line naming the limit; a
# budget the run fits in changes nothing.
"$VM_RUN" "$TMP/mlp2.fbs" --input=x=2x4xf32=1,1,1,1,1,1,1,1 --max_memory_bytes=16 \
  > /dev/null 2> "$TMP/err"
[ $? -eq 1 ] || fail "--max_memory_bytes=16 should exit 1"
grep -q "memory limit of 16 bytes for this invocation exceeded" "$TMP/err" ||
  fail "--max_memory_bytes said $(cat "$TMP/err")"
"$VM_RUN" "$TMP/mlp2.fbs" --input=x=2x4xf32=1,1,1,1,1,1,1,1 --max_memory_bytes=1048576 \
  --max_steps=1000 --timeout_ms=60000 --expected_output=2x3xf32=1.2,4.4,7.6,1.2,4.4,7.6 \
  > "$TMP/got" || fail "within the budgets: $(cat "$TMP/got")"
"$VM_RUN" "$TMP/mlp2.fbs" --input=x=2x4xf32=1,1,1,1,1,1,1,1 --timeout_ms=-1 2> "$TMP/err"
[ $? -eq 2 ] || fail "--timeout_ms=-1 should exit 2"

# After CSE and DCE: one dense, no exp.
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/mlp.fbs" --const="$DATA/mlp_w.npy" --dump-ir=dce \
  > "$TMP/ir" || fail "--dump-ir=dce"
[ "$(grep -c 'nn.dense' "$TMP/ir")" -eq 1 ] || fail "dce dump has $(grep -c nn.dense "$TMP/ir") dense calls"
grep -q 'exp(' "$TMP/ir" && fail "dce dump still computes the unused exp"

# Fusion: the add and the relu after the (one, after CSE) dense become one
# fused_elementwise, unless --no-fuse; --dump-ir=fused needs fusion.
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/mlp.fbs" --const="$DATA/mlp_w.npy" --dump-ir=fused \
  --stats > "$TMP/ir" 2> "$TMP/stats" || fail "--dump-ir=fused"
grep -qF 'fused_elementwise(%0, program="t0 = add(i0, i0); t1 = nn.relu(t0)")' "$TMP/ir" \
  || fail "fused dump: $(cat "$TMP/ir")"
grep -q 'registers: [0-9]* values in [0-9]* registers' "$TMP/stats" || fail "--stats printed $(cat "$TMP/stats")"
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/mlp.fbs" --const="$DATA/mlp_w.npy" --no-fuse --dump-ir=anf \
  > "$TMP/ir" || fail "--no-fuse --dump-ir=anf"
grep -q 'nn.relu(' "$TMP/ir" || fail "--no-fuse dump lost nn.relu: $(cat "$TMP/ir")"
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/mlp.fbs" --const="$DATA/mlp_w.npy" --no-fuse --dump-ir=fused \
  > /dev/null 2> "$TMP/err"
[ $? -eq 2 ] || fail "--dump-ir=fused with --no-fuse should exit 2"
grep -qF -- "--dump-ir=fused: expected all, parsed or a pass run at --opt-level=2 --no-fuse" "$TMP/err" \
  || fail "--dump-ir=fused with --no-fuse said $(cat "$TMP/err")"

# Bad command lines exit 2 with one line naming the flag (docs/cli.md).
expect_usage_error() {
  want=$1
  shift
  "$VM_COMPILE" "$@" > /dev/null 2> "$TMP/err"
  [ $? -eq 2 ] || fail "vm_compile $* should exit 2"
  [ "$(wc -l < "$TMP/err")" -eq 1 ] || fail "vm_compile $* printed more than one line: $(cat "$TMP/err")"
  grep -qF -- "$want" "$TMP/err" || fail "vm_compile $* said $(cat "$TMP/err"), expected $want"
}
expect_usage_error "--opt-level must be an integer in [0, 3], got '5'" "$DATA/mlp.relay" -o x --opt-level=5
expect_usage_error "--dump-ir must be one of all, parsed, " "$DATA/mlp.relay" -o x --dump-ir=nope
expect_usage_error "flag '--target-cpu' needs a value: --target-cpu=CPU" "$DATA/mlp.relay" -o x --target-cpu=
expect_usage_error "unknown flag '--fuse'" "$DATA/mlp.relay" -o x --fuse
"$VM_COMPILE" --help > "$TMP/help" || fail "vm_compile --help"
grep -q "^usage: vm_compile model.relay|model.onnx -o exe.fbs \[flags\]" "$TMP/help" \
  || fail "--help printed $(cat "$TMP/help")"
grep -q "^  --opt-level=N " "$TMP/help" || fail "--help lacks --opt-level: $(cat "$TMP/help")"

# The dataflow drawing: one dense box, the input tensor with its type.
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/mlp.fbs" --const="$DATA/mlp_w.npy" --dot="$TMP/main.dot" \
  || fail "--dot"
grep -q 'digraph "main"' "$TMP/main.dot" || fail "--dot wrote $(cat "$TMP/main.dot")"
grep -qF 'label="%x\nTensor[(n, 4), float32]"' "$TMP/main.dot" || fail "--dot lacks the input: $(cat "$TMP/main.dot")"
# (the weight is a constant: the dense reads it packed)
[ "$(grep -Ec 'label="nn\.(dense|contrib_dense_pack)' "$TMP/main.dot")" -eq 1 ] ||
  fail "--dot after CSE has other than one dense"

# Errors.
"$VM_COMPILE" "$DATA/mlp.relay" > /dev/null 2> "$TMP/err"
[ $? -eq 2 ] || fail "missing -o should exit 2"
grep -qF "missing -o exe.fbs" "$TMP/err" || fail "missing -o said $(cat "$TMP/err")"
"$VM_COMPILE" "$DATA/mlp.relay" -o "$TMP/x.fbs" > /dev/null 2> "$TMP/err"
[ $? -eq 1 ] || fail "a missing constant should exit 1"
grep -qF "meta[relay.Constant][0] is out of range: 0 constants given" "$TMP/err" \
  || fail "missing constant said $(cat "$TMP/err")"
printf 'def @main(%%x: Tensor[(2), float8]) {\n  %%x\n}\n' > "$TMP/bad.relay"
"$VM_COMPILE" "$TMP/bad.relay" -o "$TMP/x.fbs" > /dev/null 2> "$TMP/err"
[ $? -eq 1 ] || fail "a bad dtype should exit 1"
head -1 "$TMP/err" | grep -qF "bad.relay:1:27: unknown dtype 'float8'" || fail "bad dtype said $(cat "$TMP/err")"
# An .npz's arrays: arr_0, arr_1, ... in order, then its keyword arrays (numpy stores
# `w` first).
printf 'def @main() {\n  (meta[relay.Constant][0], meta[relay.Constant][3])\n}\n' > "$TMP/npz.relay"
"$VM_COMPILE" "$TMP/npz.relay" -o "$TMP/npz.fbs" --const="$DATA/../../serializer/testdata/deflated.npz" \
  || fail "compiling with an .npz"
"$VM_RUN" "$TMP/npz.fbs" > "$TMP/out" || fail "running with .npz constants"
tr -d ' \n' < "$TMP/out" | grep -qF '[[0.,1.,2.],[3.,4.,5.]],tensor<f64>[]2.5' || fail ".npz constants gave $(cat "$TMP/out")"
# A type error names its place and shows the line.
printf 'def @main(%%x: int32) {\n  %%x + 1f\n}\n' > "$TMP/types.relay"
"$VM_COMPILE" "$TMP/types.relay" -o "$TMP/x.fbs" > /dev/null 2> "$TMP/err"
[ $? -eq 1 ] || fail "a type error should exit 1"
head -1 "$TMP/err" | grep -qF "types.relay:2:6: in @main: add: operands have dtypes int32 and float32" \
  || fail "type error said $(cat "$TMP/err")"
sed -n 3p "$TMP/err" | grep -qx '       ^' || fail "type error caret: $(cat "$TMP/err")"
echo "PASS"
