#!/usr/bin/python3
"""BM_Gemm against torch.mm, interleaved: rounds of shared/peers/bench_gemm.py and of
build/bin/bench_kernels' BM_Gemm, BM_GemmPackedB and BM_FmaPeak/2, alternating, so that
all see the same phases of a shared machine's noise. Prints, per shape, the median
GFLOPS of each over the rounds, the median of the per-round ratios (ours / torch) and
the median shares of BM_FmaPeak/2, all on 2 threads. BM_GemmPackedB is the product with
B packed ahead, as a model's constant weights are (nn.contrib_dense_pack).

  /usr/bin/python3 scripts/compare_gemm.py [--rounds 5] [--peers ../shared/peers]

Needs Debian's python3-torch (and libopenblas0-openmp, else torch runs on the
reference BLAS): run it with /usr/bin/python3, not a pyenv python.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SHAPES = [(128, 768, 768), (128, 768, 3072), (384, 768, 3072), (1024, 1024, 1024)]


def torch_round(peers, target_s):
    out = subprocess.run([sys.executable, os.path.join(peers, "bench_gemm.py"),
                          "--target-s", str(target_s)],
                         check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("kind") == "gemm" and rec["threads"] == 2:
            got[(rec["M"], rec["K"], rec["N"])] = rec["gflops_median"]
    return got


def ours_round(bench, min_time):
    names = "|".join(f"{m}/{k}/{n}" for m, k, n in SHAPES)
    out = subprocess.run([bench, f"--benchmark_filter=BM_(Gemm(PackedB)?/({names})|FmaPeak/2)/",
                          f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    got = {}
    for b in json.loads(out)["benchmarks"]:
        # Counters are already in billions per second.
        if b["name"].startswith("BM_FmaPeak"):
            got["peak"] = b["GFLOPS"]
        else:
            parts = b["name"].split("/")
            m, k, n = (int(x) for x in parts[1:4])
            got[(parts[0], (m, k, n))] = b["GFLOPS"]
    return got


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--peers", default=os.path.join(root, "..", "shared", "peers"))
    ap.add_argument("--bench", default=os.path.join(root, "build", "bin", "bench_kernels"))
    ap.add_argument("--seconds", type=float, default=1.0, help="per shape and round")
    args = ap.parse_args()
    torch_runs, our_runs = [], []
    for r in range(args.rounds):
        torch_runs.append(torch_round(args.peers, args.seconds))
        our_runs.append(ours_round(args.bench, args.seconds))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    peak = statistics.median(run["peak"] for run in our_runs)
    print(f"BM_FmaPeak/2: {peak:.1f} GFLOPS (median of {args.rounds} rounds)\n")
    print("| M x K x N | torch.mm | BM_Gemm | ours / torch | share of BM_FmaPeak/2 | "
          "BM_GemmPackedB | packed / torch | share of BM_FmaPeak/2 |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in SHAPES:
        t = [run[shape] for run in torch_runs]
        row = [" x ".join(map(str, shape)), f"{statistics.median(t):.1f}"]
        for name in ("BM_Gemm", "BM_GemmPackedB"):
            o = [run[(name, shape)] for run in our_runs]
            ratio = statistics.median(b / a for a, b in zip(t, o))
            share = statistics.median(run[(name, shape)] / run["peak"] for run in our_runs)
            row += [f"{statistics.median(o):.1f}", f"{ratio:.2f}", f"{100 * share:.0f}%"]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
