"""One dynamic executable against executables compiled for one static length.

    /usr/bin/python3 bench/compare_static.py [--config base] [--lengths 8 32 128 384]
                                             [--rounds 3] [--target-s 2] [--threads 2]

The question of the Nimble paper: what does serving every length from one executable
cost against compiling for each length? The peers' BERT (with dynamic batch and sequence
axes, as compare_bert.py builds it) is compiled once; for each length, a copy of the ONNX
model whose inputs are fixed at [1, length] is compiled too, so that every shape in it
is static (constant folding, static memory planning, no shape functions). Each round
times, per length, the dynamic then the static executable with `vm_run --benchmark` on
the same inputs. The table gives the medians over rounds and dynamic/static.
"""
import argparse
import os
import statistics
import sys
import tempfile

import onnx

from compare_bert import INPUTS, build, write_inputs
from peer_util import PEERS, compile_model, time_dynvm


def static_model(config, seq, work):
    """The peers' ONNX model with every input fixed at [1, seq], compiled."""
    model = onnx.load(os.path.join(PEERS, f"bert_{config}.onnx"))
    for graph_input in model.graph.input:
        if graph_input.name not in INPUTS:
            continue
        dims = graph_input.type.tensor_type.shape.dim
        for dim, value in zip(dims, (1, seq)):
            dim.ClearField("dim_param")
            dim.dim_value = value
    path = os.path.join(work, f"bert_{config}_s{seq}.onnx")
    onnx.save(model, path, save_as_external_data=True, location=f"bert_{config}_s{seq}.data")
    exe = os.path.join(work, f"bert_{config}_s{seq}.fbs")
    compile_model(path, exe)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="base")
    ap.add_argument("--lengths", type=int, nargs="+", default=[8, 32, 128, 384])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        dynamic = build(args.config, work)
        static = {seq: static_model(args.config, seq, work) for seq in args.lengths}
        inputs = {}
        for seq in args.lengths:
            prefix = write_inputs(work, seq)
            inputs[seq] = {n: f"{prefix}_{n}.npy" for n in INPUTS}
        times = {seq: ([], []) for seq in args.lengths}
        for r in range(args.rounds):
            for seq in args.lengths:
                d = time_dynvm(dynamic, inputs[seq], args.threads, args.target_s)
                s = time_dynvm(static[seq], inputs[seq], args.threads, args.target_s)
                times[seq][0].append(d)
                times[seq][1].append(s)
                print(f"# round {r + 1}: seq {seq}: dynamic {d:.2f} ms, static {s:.2f} ms",
                      file=sys.stderr)
    print(f"BERT-{args.config}, batch 1, {args.threads} threads; median over {args.rounds} rounds "
          "of each executable's median latency\n")
    print("| seq | dynamic ms | static ms | dynamic/static |\n|---|---|---|---|")
    for seq in args.lengths:
        d, s = (statistics.median(t) for t in times[seq])
        print(f"| {seq} | {d:.2f} | {s:.2f} | {d / s:.3f} |")


if __name__ == "__main__":
    main()
