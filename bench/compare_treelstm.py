"""Child-Sum Tree-LSTM latency per tree of dynvm and PyTorch eager, side by side.

    /usr/bin/python3 bench/compare_treelstm.py [--leaves 16 64 256] [--rounds 3] [--target-s 2]

dynvm runs bench/models/treelstm.relay (a Tree ADT and recursion) through
build/bin/bench_treelstm, which checks the root's h against PyTorch's (1e-4) on the
peers' trees and weights (bench/treelstm_data.py); PyTorch runs the peers'
bench_treelstm.py (recursive Python over the same trees, 2 threads). Each round runs
both; the table gives per tree size the median over rounds of each one's figure
(dynvm: Google Benchmark's time per call; PyTorch: the peers' median) and PyTorch / dynvm.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from peer_util import BIN, PEERS, ROOT, json_records, run


def time_dynvm(data, leaves, target_s):
    out = run(["env", f"DYNVM_TREELSTM_DATA={data}", os.path.join(BIN, "bench_treelstm"),
               "--benchmark_format=json", f"--benchmark_min_time={target_s}",
               "--benchmark_filter=BM_TreeLstm/(" + "|".join(map(str, leaves)) + ")/"])
    times = {}
    for b in json.loads(out)["benchmarks"]:
        if "error_message" in b:
            sys.exit(f"bench_treelstm: {b['name']}: {b['error_message']}")
        times[int(b["name"].split("/")[1])] = b["real_time"]  # ms
    return times


def time_torch(leaves, target_s):
    out = run(["/usr/bin/python3", os.path.join(PEERS, "bench_treelstm.py"), "--leaves", *map(str, leaves),
               "--target-s", str(target_s)])
    return {r["leaves"]: (r["median_ms"], r["nodes"]) for r in json_records(out) if r.get("kind") == "treelstm"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--leaves", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=2.0)
    args = ap.parse_args()
    dynvm, torch, nodes = {n: [] for n in args.leaves}, {n: [] for n in args.leaves}, {}
    with tempfile.TemporaryDirectory() as data:
        run(["/usr/bin/python3", os.path.join(ROOT, "bench", "treelstm_data.py"), data, "--leaves",
             *map(str, args.leaves)])
        for r in range(args.rounds):
            for n, ms in time_dynvm(data, args.leaves, args.target_s).items():
                dynvm[n].append(ms)
            for n, (ms, count) in time_torch(args.leaves, args.target_s).items():
                torch[n].append(ms)
                nodes[n] = count
            print(f"# round {r + 1}: dynvm {dynvm} torch {torch}", file=sys.stderr)
    print("Child-Sum Tree-LSTM (input 300, hidden 150), one tree per call; median over "
          f"{args.rounds} rounds of each runtime's latency per tree (ms)\n")
    print("| leaves | nodes | dynvm | PyTorch eager | PyTorch/dynvm | dynvm us/node | PyTorch us/node |")
    print("|---|---|---|---|---|---|---|")
    for n in args.leaves:
        d, t = statistics.median(dynvm[n]), statistics.median(torch[n])
        print(f"| {n} | {nodes[n]} | {d:.3f} | {t:.3f} | {t / d:.1f} | {d * 1e3 / nodes[n]:.1f} | "
              f"{t * 1e3 / nodes[n]:.1f} |")


if __name__ == "__main__":
    main()
