#!/usr/bin/python3
"""BM_Gemm against torch.mm, interleaved: rounds of shared/peers/bench_gemm.py and of
build/bin/bench_kernels' BM_Gemm, BM_GemmPackedB and BM_FmaPeak, alternating, so that
all see the same phases of a shared machine's noise. Prints, per shape, the median
GFLOPS of each over the rounds, the median of the per-round ratios (ours / torch) and
the median shares of the FMA peak, all on 2 threads. BM_GemmPackedB is the product with
B packed ahead, as a model's constant weights are (nn.contrib_dense_pack).

The GEMMs run at the highest level of kernels this CPU runs (BM_Gemm/<level>/...,
--level to choose another); the peak is that of the widest FMA units it has
(BM_FmaPeak/avx512/2 where there are 512-bit ones, else BM_FmaPeak/avx2/2), so that a
share of it is a share of what the machine can do.

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


def levels(bench, family):
    """The levels bench_kernels registers `family` (BM_Gemm, BM_FmaPeak) at, lowest first."""
    out = subprocess.run([bench, f"--benchmark_filter=^{family}/", "--benchmark_list_tests"],
                         check=True, capture_output=True, text=True).stdout
    found = []
    for name in out.split():
        level = name.split("/")[1]
        if level not in found:
            found.append(level)
    return found


def ours_round(bench, min_time, level, peak_level):
    names = "|".join(f"{m}/{k}/{n}" for m, k, n in SHAPES)
    out = subprocess.run([bench, f"--benchmark_filter=^BM_(Gemm(PackedB)?/{level}/({names})|"
                                 f"FmaPeak/{peak_level}/2)$",
                          f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    got = {}
    for b in json.loads(out)["benchmarks"]:
        # Counters are already in billions per second.
        if b["name"].startswith("BM_FmaPeak"):
            got["peak"] = b["GFLOPS"]
        else:
            parts = b["name"].split("/")
            m, k, n = (int(x) for x in parts[2:5])
            got[(parts[0], (m, k, n))] = b["GFLOPS"]
    return got


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--peers", default=os.path.join(root, "..", "shared", "peers"))
    ap.add_argument("--bench", default=os.path.join(root, "build", "bin", "bench_kernels"))
    ap.add_argument("--seconds", type=float, default=1.0, help="per shape and round")
    ap.add_argument("--level", help="the kernels' level (default: the highest this CPU runs)")
    args = ap.parse_args()
    gemm_levels, peak_levels = levels(args.bench, "BM_Gemm"), levels(args.bench, "BM_FmaPeak")
    level = args.level or gemm_levels[-1]
    if level not in gemm_levels or not peak_levels:
        sys.exit(f"compare_gemm: bench_kernels has BM_Gemm at {gemm_levels} and BM_FmaPeak at "
                 f"{peak_levels} on this CPU; asked for BM_Gemm at {level}")
    peak_level = peak_levels[-1]
    torch_runs, our_runs = [], []
    for r in range(args.rounds):
        torch_runs.append(torch_round(args.peers, args.seconds))
        our_runs.append(ours_round(args.bench, args.seconds, level, peak_level))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    peak = statistics.median(run["peak"] for run in our_runs)
    peak_name = f"BM_FmaPeak/{peak_level}/2"
    print(f"kernels: {level}; {peak_name}: {peak:.1f} GFLOPS (median of {args.rounds} rounds)\n")
    print(f"| M x K x N | torch.mm | BM_Gemm | ours / torch | share of {peak_name} | "
          f"BM_GemmPackedB | packed / torch | share of {peak_name} |")
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
