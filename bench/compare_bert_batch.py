"""BERT at a batch above 1: dynvm, ONNX Runtime and PyTorch eager in one run.

    /usr/bin/python3 bench/compare_bert_batch.py [--config base] [--batch 8] [--lengths 128]
                                                 [--rounds 3] [--target-s 2] [--threads 2]

The peers time batch 1 only; issue 6 also asks for batch 8 at 128 tokens. The inputs are
the peers' (bert_model.make_inputs: LCG token ids, all-ones mask, token type 0) at the
given batch, written as .npy. Each round times, per length: dynvm (`vm_run --benchmark`
on the executable compare_bert.py builds, dynamic axes), ONNX Runtime (bench/ort_time.js,
the peers' session options) and PyTorch eager (the peers' model under inference_mode,
timed by their common.timeit). The table gives medians over rounds and the ratios.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

import numpy as np

from compare_bert import INPUTS, build
from peer_util import PEERS, json_records, run, time_dynvm

sys.path.insert(0, PEERS)
import torch  # noqa: E402  (Debian's python3-torch)
from bert_model import CONFIGS, bert_flops, make_inputs  # noqa: E402
from bert_model import build as build_torch  # noqa: E402
from common import timeit  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="base", choices=list(CONFIGS))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lengths", type=int, nargs="+", default=[128])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=2.0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model = build_torch(args.config)
    onnx_path = os.path.join(PEERS, f"bert_{args.config}.onnx")
    with tempfile.TemporaryDirectory() as work:
        exe = build(args.config, work)
        inputs, files = {}, {}
        for seq in args.lengths:
            inputs[seq] = make_inputs(seq, args.batch)
            files[seq] = {}
            for name, value in zip(INPUTS, inputs[seq]):
                files[seq][name] = os.path.join(work, f"b{args.batch}_s{seq}_{name}.npy")
                np.save(files[seq][name], value.numpy())
        times = {seq: {"dynvm": [], "ort": [], "torch": []} for seq in args.lengths}
        for r in range(args.rounds):
            for seq in args.lengths:
                t = times[seq]
                t["dynvm"].append(time_dynvm(exe, files[seq], args.threads, args.target_s))
                out = run(["node", os.path.join(HERE, "ort_time.js"), "--model", onnx_path,
                           "--threads", str(args.threads), "--target-s", str(args.target_s),
                           *[a for n, p in files[seq].items() for a in ("--input", f"{n}={p}")]])
                t["ort"].append(json_records(out)[0]["median_ms"])
                with torch.inference_mode():
                    st = timeit(lambda: model(*inputs[seq]), target_s=args.target_s)
                t["torch"].append(st["median_ms"])
                print(f"# round {r + 1}: seq {seq}: " + json.dumps({k: v[-1] for k, v in t.items()}),
                      file=sys.stderr)
    print(f"BERT-{args.config}, batch {args.batch}, {args.threads} threads; median over "
          f"{args.rounds} rounds of each runtime's median latency (ms)\n")
    print("| seq | dynvm | ONNX Runtime | PyTorch eager | dynvm/ORT | dynvm/PyTorch | dynvm GFLOP/s |")
    print("|---|---|---|---|---|---|---|")
    for seq in args.lengths:
        d, o, p = (statistics.median(times[seq][k]) for k in ("dynvm", "ort", "torch"))
        gflops = bert_flops(CONFIGS[args.config], seq, args.batch) / d / 1e6
        print(f"| {seq} | {d:.2f} | {o:.2f} | {p:.2f} | {d / o:.2f} | {d / p:.2f} | {gflops:.1f} |")


if __name__ == "__main__":
    main()
