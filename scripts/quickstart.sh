#!/usr/bin/env bash
# README quick start, first command: install what is missing, build (Release), and run
# the main job on the bundled examples: compile examples/mlp.relay (a model over a batch
# of any size) with vm_compile and run it at two batch sizes; assemble
# examples/dynamic_add.s into an executable and run it with vm_run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
build/bin/vm_compile examples/mlp.relay -o build/mlp.fbs --dump-ir=fused
weights=(--input=w1=3x4xf32=1,0,0,0,0,1,0,0,0,0,1,-1 --input=b1=3xf32=0,0,-1
         --input=w2=2x3xf32=1,1,1,1,-1,0 --input=b2=2xf32=0.5,0)
build/bin/vm_run build/mlp.fbs --input=x=2x4xf32=1,2,3,4,-1,-2,5,1 "${weights[@]}"
build/bin/vm_run build/mlp.fbs --input=x=1x4xf32=1,1,1,1 "${weights[@]}"
build/bin/vm_as examples/dynamic_add.s -o build/dynamic_add.fbs
build/bin/vm_dis build/dynamic_add.fbs
build/bin/vm_run build/dynamic_add.fbs \
  --input=x=2x4xf32=1,2,3,4,5,6,7,8 --input=y=2x4xf32=0.5,0.5,0.5,0.5,1,1,1,1
build/bin/vm_run build/dynamic_add.fbs --function=count --input=i=0 --input=n=1000000 \
  --benchmark=10
