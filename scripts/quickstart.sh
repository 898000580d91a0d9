#!/usr/bin/env bash
# README quick start, first command: install what is missing, build (Release), and run
# the main job: compile the bundled tiny BERT (tests/models/bert/bert_mini.onnx, dynamic
# batch and sequence) with vm_compile and run it with vm_run on a sample input, checked
# against PyTorch's outputs. Then the smaller examples: examples/mlp.relay (a model
# over a batch of any size) compiled and run at two batch sizes, and
# examples/dynamic_add.s assembled and run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2

build/bin/vm_compile tests/models/bert/bert_mini.onnx -o build/bert_mini.fbs
sample=tests/models/bert/golden/b2_s7   # batch 2, sequence 7; row 1 padded
build/bin/vm_run build/bert_mini.fbs --trust-native --input=input_ids=@${sample}_input_ids.npy \
  --input=attention_mask=@${sample}_attention_mask.npy \
  --input=token_type_ids=@${sample}_token_type_ids.npy \
  --expected_output=@${sample}_last_hidden_state.npy --expected_output=@${sample}_pooler_output.npy \
  --atol=1e-4 --rtol=0

build/bin/vm_compile examples/mlp.relay -o build/mlp.fbs --dump-ir=fused
weights=(--input=w1=3x4xf32=1,0,0,0,0,1,0,0,0,0,1,-1 --input=b1=3xf32=0,0,-1
         --input=w2=2x3xf32=1,1,1,1,-1,0 --input=b2=2xf32=0.5,0)
build/bin/vm_run build/mlp.fbs --trust-native --input=x=2x4xf32=1,2,3,4,-1,-2,5,1 "${weights[@]}"
build/bin/vm_run build/mlp.fbs --trust-native --input=x=1x4xf32=1,1,1,1 "${weights[@]}"
build/bin/vm_as examples/dynamic_add.s -o build/dynamic_add.fbs
build/bin/vm_dis build/dynamic_add.fbs
build/bin/vm_run build/dynamic_add.fbs \
  --input=x=2x4xf32=1,2,3,4,5,6,7,8 --input=y=2x4xf32=0.5,0.5,0.5,0.5,1,1,1,1
build/bin/vm_run build/dynamic_add.fbs --function=count --input=i=0 --input=n=1000000 \
  --benchmark=10
