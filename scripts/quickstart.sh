#!/usr/bin/env bash
# README quick start, first command: install what is missing, build (Release), and run
# the main job on the bundled example: assemble examples/dynamic_add.s into an
# executable and run it with vm_run on a sample input.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
build/bin/vm_as examples/dynamic_add.s -o build/dynamic_add.fbs
build/bin/vm_dis build/dynamic_add.fbs
build/bin/vm_run build/dynamic_add.fbs \
  --input=x=2x4xf32=1,2,3,4,5,6,7,8 --input=y=2x4xf32=0.5,0.5,0.5,0.5,1,1,1,1
build/bin/vm_run build/dynamic_add.fbs --function=count --input=i=0 --input=n=1000000 \
  --benchmark=10
