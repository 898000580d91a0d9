#!/usr/bin/env bash
# Regenerates the seed corpora of tests/fuzz/corpus from the repository's own valid
# inputs, with the tools of a Release build (default build/). Run it after a change to
# the executable format or the protocol, and commit the result:
#
#   tests/fuzz/make_corpus.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-build}/bin
out=tests/fuzz/corpus
rm -rf "$out"
mkdir -p "$out"/{executable,npy,npz,relay,onnx,infer_request}

# executable: hand-written bytecode, and compiled models (bytecode only, as --target-cpu=none
# gives, plus one with native kernels for the ELF loader).
for s in tests/vm/programs/*.s; do
  "$bin/vm_as" "$s" -o "$out/executable/$(basename "$s" .s).fbs"
done
for r in tests/compiler/e2e/{tree,lists,mutual_recursion,nonzero,attention}.relay examples/mlp.relay; do
  "$bin/vm_compile" "$r" --target-cpu=none -o "$out/executable/$(basename "$r" .relay).fbs"
done
for m in tests/models/rnn/{lstm,gru}_mini.onnx; do
  "$bin/vm_compile" "$m" --target-cpu=none -o "$out/executable/$(basename "$m" .onnx).fbs"
done
"$bin/vm_compile" examples/mlp.relay --target-cpu=x86-64-v3 -o "$out/executable/mlp_native.fbs"

# npy: every dtype, byte order, version and layout the reader's tests use.
cp tests/serializer/testdata/*.npy "$out/npy/"
# npz: numpy's stored, deflated and empty archives.
cp tests/serializer/testdata/*.npz "$out/npz/"

# relay: the Relay programs of the tests, examples and benchmarks.
for r in examples/mlp.relay tests/compiler/e2e/*.relay tests/compiler/relay_text/*.relay \
         tests/python/programs.relay bench/models/treelstm.relay; do
  cp "$r" "$out/relay/$(basename "$(dirname "$r")")_$(basename "$r")"
done

# onnx: ONNX's own node tests for the operators the real models use, control flow and
# sequences, plus the small LSTM and GRU.
node=/usr/share/libonnx-testdata/data/node
for t in test_add_bcast test_matmul_4d test_gemm_default_no_bias test_softmax_axis_1 \
         test_layer_normalization_4d_axis1 test_gather_0 test_reshape_reordered_all_dims \
         test_transpose_all_permutations_0 test_slice test_concat_2d_axis_0 test_where_example \
         test_cast_FLOAT_to_DOUBLE test_conv_with_strides_padding test_maxpool_2d_pads \
         test_reduce_mean_keepdims_example test_expand_dim_changed test_shape test_unsqueeze_axis_0 \
         test_if test_loop11 test_scan9_sum test_sequence_insert_at_back test_split_equal_parts_1d \
         test_range_float_type_positive_delta test_constantofshape_int_zeros test_erf test_tanh \
         test_lstm_defaults test_gru_defaults test_einsum_batch_matmul \
         test_resize_upsample_scales_linear test_pow test_layer_normalization_4d_axis1_expanded; do
  if [ -f "$node/$t/model.onnx" ]; then cp "$node/$t/model.onnx" "$out/onnx/$t.onnx"; fi
done
cp tests/models/rnn/{lstm,gru}_mini.onnx "$out/onnx/"

# infer_request: two bytes of Inference-Header-Content-Length (little-endian, 0: none),
# then the body, JSON or JSON plus binary tensors.
req() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8)))"; printf '%s' "$2"; }
req 0 '{"id":"1","inputs":[{"name":"input_ids","datatype":"INT64","shape":[1,4],"data":[101,7592,2088,102]}]}' \
  > "$out/infer_request/json_int64.bin"
req 0 '{"inputs":[{"name":"x","datatype":"FP32","shape":[2,2],"data":[[1.5,-2],[3e-3,4]]}],"outputs":[{"name":"y","parameters":{"binary_data":true}}]}' \
  > "$out/infer_request/json_nested_fp32.bin"
req 0 '{"inputs":[{"name":"m","datatype":"BOOL","shape":[3],"data":[true,false,true]},{"name":"h","datatype":"FP16","shape":[1],"data":[0.5]},{"name":"b","datatype":"BF16","shape":[],"data":[2]}],"parameters":{"binary_data_output":true}}' \
  > "$out/infer_request/json_bool_fp16_bf16.bin"
json='{"inputs":[{"name":"x","datatype":"INT32","shape":[2],"parameters":{"binary_data_size":8}},{"name":"y","datatype":"UINT8","shape":[3],"parameters":{"binary_data_size":3}}]}'
{ req ${#json} "$json"; printf '\x01\x00\x00\x00\x02\x00\x00\x00\x07\x08\x09'; } \
  > "$out/infer_request/binary_int32_uint8.bin"
echo "corpora written to $out:"
for d in "$out"/*; do echo "  $(basename "$d"): $(ls "$d" | wc -l) files, $(du -sh "$d" | cut -f1)"; done
