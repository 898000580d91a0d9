#!/bin/sh
# The bundled example end to end: assemble examples/dynamic_add.s, run it with vm_run
# against expected outputs, and run the C++ embedding example on it.
# usage: examples_test.sh VM_AS VM_RUN EMBED_EXAMPLE EXAMPLES_DIR
set -eu
vm_as=$1 vm_run=$2 embed=$3 examples=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$vm_as" "$examples/dynamic_add.s" -o "$dir/exe.fbs"
# z = 2x + y
"$vm_run" "$dir/exe.fbs" --input=x=2x4xf32=1,2,3,4,5,6,7,8 --input=y=2x4xf32=1,1,1,1,2,2,2,2 \
  --expected_output=2x4xf32=3,5,7,9,12,14,16,18 > /dev/null
"$vm_run" "$dir/exe.fbs" --function=count --input=i=0 --input=n=1000000 \
  --expected_output=1000000 > /dev/null

"$embed" "$dir/exe.fbs" > "$dir/out.txt"
grep -q "^n=3: shape \[3, 4\], z\[0\]\[0..3\] = 0.5 2.5 4.5 6.5$" "$dir/out.txt"
grep -q "^wrong shape: INVALID_ARGUMENT: argument 0 ('x') of 'main'" "$dir/out.txt"
grep -q "^count(0, 1000000) = 1000000$" "$dir/out.txt"
echo "examples ok"
