"""BERT-base serving offline: dynvm packed, dynvm padded and one at a time, ONNX Runtime's
padded configurations and PyTorch's, on the same request traces, in one run.

    /usr/bin/python3 bench/compare_serving.py --offline [--trace zipf uniform long]
                                              [--requests 64] [--target-s 8]

Per trace (the peers' make_trace.py, all requests at t = 0, written to
../shared/peers/out/trace_NAME.json): dynvm runs build/bin/bench_serving (vm_serve's
batcher in process, one worker of 2 threads: packed by tokens through main_packed within
64, 128 (vm_serve's default, the headline) and 256 tokens and 8 rows, padded in batches
of 8 rows with vm_serve's padding budget, and one request at a time; every answer checked against the request's own run first); ONNX
Runtime runs the peers' bench_bert_batched_ort.js one request at a time, in padded
batches of 8 in arrival order and sorted by length; PyTorch eager the peers'
bench_bert_batched_torch.py one at a time and in padded batches of 8. Each figure is real
tokens per second (the trace's tokens over the wall time of answering all of it, median
over passes). The last line per trace:

    offline TRACE: packed/ort_best=X packed/ort_padded=Y packed/dynvm_padded=Z

ort_best is the fastest ONNX Runtime configuration, ort_padded its batches of 8 in
arrival order. The online mode (Poisson arrivals over HTTP) is not written yet.
"""
import argparse
import json
import os
import sys
import tempfile

from compare_bert import build
from peer_util import BIN, PEERS, json_records, run


PACKED = "packed 128"  # vm_serve's default --max-batch-tokens
LABELS = {
    "packed 64": "packed by tokens (<= 64 tokens, <= 8 rows)",
    "packed 128": "packed by tokens (<= 128 tokens, <= 8 rows; vm_serve's default)",
    "packed 256": "packed by tokens (<= 256 tokens, <= 8 rows)",
    "padded": "padded batches of <= 8 (padding budget 2x)",
    "alone": "one at a time",
    "batch 1": "one at a time",
    "batch 8": "padded batches of 8, arrival order",
    "batch 8 sorted": "padded batches of 8, sorted by length",
}


def trace_file(name, requests):
    run(["/usr/bin/python3", os.path.join(PEERS, "make_trace.py"), name, "--n", str(requests), "--closed"])
    return os.path.join(PEERS, "out", f"trace_{name}.json")


def time_dynvm(exe, trace, target_s):
    out = run(["env", f"DYNVM_SERVING_EXE={exe}", f"DYNVM_SERVING_TRACE={trace}",
               os.path.join(BIN, "bench_serving"), "--benchmark_format=json", f"--benchmark_min_time={target_s}"])
    rates = {}
    for b in json.loads(out)["benchmarks"]:
        if "error_message" in b:
            sys.exit(f"bench_serving: {b['name']}: {b['error_message']}")
        mode, tokens = b["name"].split("mode:")[1].split("/")[0], b["name"].split("tokens:")[1].split("/")[0]
        rates[f"packed {tokens}" if mode == "0" else {"1": "padded", "2": "alone"}[mode]] = b["tokens_per_s"]
    return rates


def time_ort(trace, target_s):
    rel = os.path.relpath(trace, PEERS)
    common = ["node", os.path.join(PEERS, "bench_bert_batched_ort.js"), "--trace", rel, "--model", "bert_base.onnx",
              "--threads", "2", "--target-s", str(target_s)]
    rates = {}
    for r in json_records(run(common + ["--max-batch", "1", "8"])):
        rates[f"batch {r['max_batch']}"] = r["tokens_per_s"]
    for r in json_records(run(common + ["--max-batch", "8", "--sorted"])):
        rates["batch 8 sorted"] = r["tokens_per_s"]
    return rates


def time_torch(trace, target_s):
    out = run(["/usr/bin/python3", os.path.join(PEERS, "bench_bert_batched_torch.py"), "--trace", trace,
               "--max-batch", "1", "8", "--threads", "2", "--target-s", str(target_s)])
    return {f"batch {r['max_batch']}": r["tokens_per_s"] for r in json_records(out) if r.get("kind") == "bert_batched"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--offline", action="store_true", required=True, help="all requests queued at once")
    ap.add_argument("--trace", nargs="+", default=["zipf", "uniform", "long"], choices=["zipf", "uniform", "long"])
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--target-s", type=float, default=8.0)
    args = ap.parse_args()
    lines = []
    with tempfile.TemporaryDirectory() as work:
        exe = build("base", work)
        for name in args.trace:
            trace = trace_file(name, args.requests)
            dynvm = time_dynvm(exe, trace, args.target_s)
            ort = time_ort(trace, args.target_s)
            torch = time_torch(trace, args.target_s)
            print(f"# {name}: dynvm {dynvm} ort {ort} torch {torch}", file=sys.stderr)
            print(f"\n{name} trace, {args.requests} requests, BERT-base, 2 threads: real tokens/s\n")
            print("| runtime | configuration | real tokens/s | packed / this |")
            print("|---|---|---|---|")
            rows = [("dynvm", LABELS[k], v) for k, v in dynvm.items()]
            rows += [("ONNX Runtime", LABELS[k], v) for k, v in ort.items()]
            rows += [("PyTorch eager", LABELS[k], v) for k, v in torch.items()]
            for runtime, config, rate in rows:
                print(f"| {runtime} | {config} | {rate:.0f} | {dynvm[PACKED] / rate:.2f} |")
            lines.append(f"offline {name}: packed/ort_best={dynvm[PACKED] / max(ort.values()):.2f} "
                         f"packed/ort_padded={dynvm[PACKED] / ort['batch 8']:.2f} "
                         f"packed/dynvm_padded={dynvm[PACKED] / dynvm['padded']:.2f}")
    print()
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
