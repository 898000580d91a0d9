#!/bin/sh
# The bundled examples end to end: compile examples/mlp.relay and run it at two batch
# sizes, assemble examples/dynamic_add.s, run both with vm_run against expected outputs
# (the quick start's inputs), and run the C++ and C embedding examples on dynamic_add.
# usage: examples_test.sh VM_AS VM_RUN EMBED_EXAMPLE EXAMPLES_DIR VM_COMPILE EMBED_C_EXAMPLE
set -eu
vm_as=$1 vm_run=$2 embed=$3 examples=$4 vm_compile=$5 embed_c=$6
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$vm_compile" "$examples/mlp.relay" -o "$dir/mlp.fbs"
w="--input=w1=3x4xf32=1,0,0,0,0,1,0,0,0,0,1,-1 --input=b1=3xf32=0,0,-1"
w="$w --input=w2=2x3xf32=1,1,1,1,-1,0 --input=b2=2xf32=0.5,0"
# relu(x·w1ᵀ + b1)·w2ᵀ + b2, worked by hand: rows [1,2,0] and [0,0,3] after the relu.
"$vm_run" "$dir/mlp.fbs" --input=x=2x4xf32=1,2,3,4,-1,-2,5,1 $w \
  --expected_output=2x2xf32=3.5,-1,3.5,0 > /dev/null
"$vm_run" "$dir/mlp.fbs" --input=x=1x4xf32=1,1,1,1 $w --expected_output=1x2xf32=2.5,0 > /dev/null

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
"$embed_c" "$dir/exe.fbs" > "$dir/out_c.txt"
grep -q "^function main(x: tensor f32\[n, 4\], y: tensor f32\[n, 4\]) -> tensor f32\[n, 4\]$" "$dir/out_c.txt"
grep -q "^z: shape \[3, 4\], z\[2\]\[0..3\] = 16.5 18.5 20.5 22.5$" "$dir/out_c.txt"
grep -q "^inputs released: 1 1$" "$dir/out_c.txt"
grep -q "^wrong argument: INVALID_ARGUMENT: argument 1 ('y') of 'main'" "$dir/out_c.txt"
grep -q "^count(0, 1000) = 1000$" "$dir/out_c.txt"
echo "examples ok"
