#!/bin/sh
# End-to-end test of vm_as and vm_dis (docs/cli.md):
#   asm_cli_test.sh path/to/vm_as path/to/vm_dis tests/tools/testdata
# The key property: `vm_dis x.fbs | vm_as - -o y.fbs` writes a file identical to x.fbs.
set -u
VM_AS=$1
VM_DIS=$2
DATA=$3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# Runs "$@" expecting exit status $WANT_STATUS and exactly one line on stderr that
# contains $WANT_ERROR.
expect_error() {
  "$@" > "$TMP/out" 2> "$TMP/err"
  status=$?
  [ "$status" -eq "$WANT_STATUS" ] || fail "$* exited with $status, expected $WANT_STATUS"
  [ "$(wc -l < "$TMP/err")" -eq 1 ] || fail "$* printed more than one line: $(cat "$TMP/err")"
  grep -qF -- "$WANT_ERROR" "$TMP/err" || fail "$* said '$(cat "$TMP/err")', expected '$WANT_ERROR'"
}

# Assemble, disassemble, reassemble: byte-identical, and the text is a fixpoint.
"$VM_AS" "$DATA/program.s" -o "$TMP/a.fbs" || fail "vm_as program.s"
"$VM_DIS" "$TMP/a.fbs" > "$TMP/a.s" || fail "vm_dis a.fbs"
"$VM_DIS" "$TMP/a.fbs" | "$VM_AS" - -o "$TMP/b.fbs" || fail "vm_dis | vm_as -"
cmp "$TMP/a.fbs" "$TMP/b.fbs" || fail "vm_dis | vm_as - changed the file"
"$VM_DIS" "$TMP/b.fbs" | cmp - "$TMP/a.s" || fail "the text is not a fixpoint"

# No input argument reads stdin, with npy paths relative to the current directory.
(cd "$DATA" && "$VM_AS" -o "$TMP/c.fbs" < program.s) || fail "vm_as from stdin"
cmp "$TMP/a.fbs" "$TMP/c.fbs" || fail "stdin and file input differ"

# The opcode table names every opcode of program.s.
"$VM_DIS" --opcodes > "$TMP/opcodes" || fail "vm_dis --opcodes"
grep -q "alloc_tensor_reg %dst" "$TMP/opcodes" || fail "vm_dis --opcodes lacks alloc_tensor_reg"

# Errors: one line, exit status 1 (2 for a bad command line).
printf '.func @f()\n  frobnicate %%0\n.end\n' > "$TMP/bad.s"
WANT_STATUS=1 WANT_ERROR="vm_as: $TMP/bad.s:2:3: unknown instruction 'frobnicate'" \
  expect_error "$VM_AS" "$TMP/bad.s" -o "$TMP/bad.fbs"
[ ! -e "$TMP/bad.fbs" ] || fail "vm_as wrote a file despite the error"
printf '.func @f() regs 1\n  ret %%3\n.end\n' > "$TMP/unverified.s"
WANT_STATUS=1 WANT_ERROR="register 3 out of range: frame has 1" \
  expect_error "$VM_AS" "$TMP/unverified.s" -o "$TMP/u.fbs"
"$VM_AS" --no-verify "$TMP/unverified.s" -o "$TMP/u.fbs" || fail "vm_as --no-verify"
WANT_STATUS=1 WANT_ERROR="cannot open '$TMP/none.s'" \
  expect_error "$VM_AS" "$TMP/none.s" -o "$TMP/x.fbs"
WANT_STATUS=2 WANT_ERROR="missing -o exe.fbs" expect_error "$VM_AS" "$DATA/program.s"
WANT_STATUS=1 WANT_ERROR="vm_dis: cannot open '$TMP/none.fbs'" \
  expect_error "$VM_DIS" "$TMP/none.fbs"
WANT_STATUS=1 WANT_ERROR="vm_dis: $DATA/program.s: " expect_error "$VM_DIS" "$DATA/program.s"
WANT_STATUS=2 WANT_ERROR="usage: vm_dis" expect_error "$VM_DIS"
WANT_STATUS=2 WANT_ERROR="--opcodes takes no executable file, got '$TMP/a.fbs'" \
  expect_error "$VM_DIS" --opcodes "$TMP/a.fbs"
WANT_STATUS=2 WANT_ERROR="unknown flag '--frobnicate'" expect_error "$VM_DIS" --frobnicate
WANT_STATUS=2 WANT_ERROR="flag '-o' needs a value: -o exe.fbs" expect_error "$VM_AS" "$DATA/program.s" -o
WANT_STATUS=2 WANT_ERROR="more than one input: '$DATA/program.s' and 'x.s'" \
  expect_error "$VM_AS" "$DATA/program.s" x.s -o "$TMP/x.fbs"
"$VM_AS" --help | grep -q "^usage: vm_as \[input.s\] -o exe.fbs \[flags\]" || fail "vm_as --help"
"$VM_DIS" -h | grep -q "^  --opcodes " || fail "vm_dis -h"
echo PASS
