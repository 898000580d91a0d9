"""BERT latency of dynvm, ONNX Runtime and PyTorch eager, side by side in one run.

    /usr/bin/python3 bench/compare_bert.py [--config base] [--lengths 8 32 128 384]
                                           [--rounds 3] [--target-s 3] [--threads 2]

Builds the peers' BERT (../shared/peers: bert_model.py, exported by export_onnx.py with
dynamic batch and sequence axes) if its .onnx is missing, compiles it once with
build/bin/vm_compile, checks the executable against the peers' PyTorch reference outputs
(max |diff| 1e-4), then times batch 1 at each length: dynvm with `vm_run --benchmark`, ONNX
Runtime with the peers' bench_ort.js and PyTorch eager with their bench_torch.py, all on
the same token ids (bert_model.token_ids). Each round runs the three one after the other
at each length in turn, so that the host's slow spells fall on all three alike, and
each waits for a quiet machine first and measures again if it was not (the peers'
common.timeit; peer_util.time_dynvm for dynvm); the table gives, per length, the median
over rounds of each one's median latency, and the ratios dynvm/ORT and dynvm/PyTorch. Needs what the peers'
setup.sh installs (python3-torch, python3-onnx, libopenblas0-openmp, onnxruntime-node).
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

from peer_util import PEERS, check, compile_model, json_records, run, time_dynvm
from bert_model import CONFIGS, bert_flops, token_ids  # the peers' own

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUTS = ("last_hidden_state", "pooler_output")


def build(config, work):
    """The peers' export (made if missing) compiled once."""
    onnx_path = os.path.join(PEERS, f"bert_{config}.onnx")
    if not os.path.exists(onnx_path):
        run(["/usr/bin/python3", os.path.join(PEERS, "export_onnx.py"), "--configs", config])
    exe = os.path.join(work, f"bert_{config}.fbs")
    compile_model(onnx_path, exe)
    return exe


def check_reference(exe, config):
    """The executable against the peers' PyTorch outputs (export_onnx.py writes them)."""
    ref = os.path.join(PEERS, "out", "ref")
    cases = sorted({f.rsplit("_", 2)[0] for f in os.listdir(ref)
                    if f.startswith(f"bert_{config}_") and f.endswith("_input_ids.npy")}) \
        if os.path.isdir(ref) else []
    for case in cases:
        prefix = os.path.join(ref, case)
        check(exe, {n: f"{prefix}_{n}.npy" for n in INPUTS}, [f"{prefix}_{n}.npy" for n in OUTPUTS])
        print(f"# {case}: dynvm matches PyTorch within 1e-4", file=sys.stderr)


def write_inputs(work, seq):
    """The inputs the peers time at `seq`: LCG token ids, an all-ones mask, token type 0."""
    ids = token_ids(seq).numpy()
    prefix = os.path.join(work, f"s{seq}")
    for name, value in zip(INPUTS, (ids, np.ones_like(ids), np.zeros_like(ids))):
        np.save(f"{prefix}_{name}.npy", value)
    return prefix


def time_ort(config, lengths, threads, target_s):
    out = run(["node", os.path.join(PEERS, "bench_ort.js"), "--model", f"bert_{config}.onnx",
               "--lengths", *map(str, lengths), "--threads", str(threads), "--target-s", str(target_s)])
    return {r["seq"]: r["median_ms"] for r in json_records(out) if r.get("peer") == "ort"}


def time_torch(config, lengths, threads, target_s):
    out = run(["/usr/bin/python3", os.path.join(PEERS, "bench_torch.py"), "--config", config,
               "--modes", "eager", "--lengths", *map(str, lengths), "--threads", str(threads),
               "--target-s", str(target_s)])
    return {r["seq"]: r["median_ms"] for r in json_records(out) if r.get("peer") == "torch_eager"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="base", choices=list(CONFIGS))
    ap.add_argument("--lengths", type=int, nargs="+", default=[8, 32, 128, 384])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=3.0, help="seconds of timing per length and runtime")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as work:
        exe = build(args.config, work)
        check_reference(exe, args.config)
        prefixes = {seq: write_inputs(work, seq) for seq in args.lengths}
        samples = {peer: {seq: [] for seq in args.lengths} for peer in ("dynvm", "ort", "torch")}
        for r in range(args.rounds):
            for seq in args.lengths:
                inputs = {n: f"{prefixes[seq]}_{n}.npy" for n in INPUTS}
                samples["dynvm"][seq].append(time_dynvm(exe, inputs, args.threads, args.target_s))
                for peer, fn in (("ort", time_ort), ("torch", time_torch)):
                    samples[peer][seq].append(fn(args.config, [seq], args.threads, args.target_s)[seq])
                print(f"# round {r + 1}: seq {seq}: " +
                      ", ".join(f"{p} {samples[p][seq][-1]:.2f}" for p in samples), file=sys.stderr)

    print(f"BERT-{args.config}, batch 1, {args.threads} threads; median over {args.rounds} rounds "
          "of each runtime's median latency (ms)\n")
    print("| seq | dynvm | ONNX Runtime | PyTorch eager | dynvm/ORT | dynvm/PyTorch | dynvm GFLOP/s |")
    print("|---|---|---|---|---|---|---|")
    for seq in args.lengths:
        d, o, t = (statistics.median(samples[p][seq]) for p in ("dynvm", "ort", "torch"))
        gflops = bert_flops(CONFIGS[args.config], seq) / d / 1e6
        print(f"| {seq} | {d:.2f} | {o:.2f} | {t:.2f} | {d / o:.2f} | {d / t:.2f} | {gflops:.1f} |")


if __name__ == "__main__":
    main()
