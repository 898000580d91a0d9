#!/usr/bin/python3
"""One BERT-base encoder layer (bench/models/bert_layer.relay) compiled with and without
operator fusion, run by vm_run on the same seeded inputs, interleaved: rounds alternate
the two executables so both see the same phases of a shared machine's noise. Prints per
sequence length the median latency of each over the rounds, the median of the per-round
ratios (fused / unfused), and the largest difference between their outputs; and what
vm_compile --stats says of each.

  /usr/bin/python3 scripts/compare_fusion.py [--rounds 3] [--runs 30] [--lengths 128 384]

Needs numpy (Debian's python3-numpy) for the inputs and a Release build in build/.
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
MODEL = os.path.join(ROOT, "bench", "models", "bert_layer.relay")
WEIGHTS = {"wq": (768, 768), "wk": (768, 768), "wv": (768, 768), "wo": (768, 768),
           "w1": (3072, 768), "w2": (768, 3072), "gamma": (768,), "beta": (768,),
           "b1": (3072,), "b2": (768,)}


def compile_model(out, extra):
    stats = subprocess.run([os.path.join(BIN, "vm_compile"), MODEL, "-o", out, "--stats"] + extra,
                           check=True, capture_output=True, text=True).stderr.strip()
    return stats.replace("\n", "; ")


def run(exe, inputs, runs, output):
    args = [os.path.join(BIN, "vm_run"), exe, f"--benchmark={runs}", f"--output=@{output}"]
    args += [f"--input={name}=@{path}" for name, path in inputs]
    last = subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[-1]
    return float(re.search(r"median=([0-9.]+)", last).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 384])
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        exes = {"unfused": os.path.join(tmp, "unfused.fbs"), "fused": os.path.join(tmp, "fused.fbs")}
        for name, exe in exes.items():
            print(f"{name}: {compile_model(exe, ['--no-fuse'] if name == 'unfused' else [])}")
        weights = []
        for name, shape in WEIGHTS.items():
            path = os.path.join(tmp, f"{name}.npy")
            np.save(path, (rng.standard_normal(shape) * 0.05).astype(np.float32))
            weights.append((name, path))
        print("\n| n | unfused ms | fused ms | fused / unfused | max abs difference |")
        print("|---|---|---|---|---|")
        for n in args.lengths:
            h0 = os.path.join(tmp, f"h0_{n}.npy")
            np.save(h0, (rng.standard_normal((n, 768)) * 0.5).astype(np.float32))
            inputs = [("h0", h0)] + weights
            times = {name: [] for name in exes}
            for _ in range(args.rounds):
                for name, exe in exes.items():
                    times[name].append(run(exe, inputs, args.runs, os.path.join(tmp, f"{name}.npy")))
            ratio = statistics.median(f / u for f, u in zip(times["fused"], times["unfused"]))
            diff = np.abs(np.load(os.path.join(tmp, "fused.npy")) - np.load(os.path.join(tmp, "unfused.npy"))).max()
            print(f"| {n} | {statistics.median(times['unfused']):.2f} | {statistics.median(times['fused']):.2f} "
                  f"| {ratio:.3f} | {diff:.3g} |")


if __name__ == "__main__":
    main()
