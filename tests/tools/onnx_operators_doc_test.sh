#!/bin/sh
# docs/onnx.md's operator table must be onnx_operators's output: the converters' own
# table, so the documentation cannot drift from what the importer converts.
#   onnx_operators_doc_test.sh ONNX_OPERATORS DOC
set -eu
tool=$1
doc=$2
generated=$(mktemp)
documented=$(mktemp)
trap 'rm -f "$generated" "$documented"' EXIT
"$tool" > "$generated"
sed -n '/<!-- onnx_operators:begin -->/,/<!-- onnx_operators:end -->/p' "$doc" | sed '1d;$d' > "$documented"
if ! diff -u "$documented" "$generated"; then
  echo "$doc: the operator table differs from onnx_operators's output (above); paste that output" \
       "between the onnx_operators markers" >&2
  exit 1
fi
