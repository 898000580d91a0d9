"""2-layer LSTM latency of dynvm, ONNX Runtime and PyTorch, side by side in one run.

    /usr/bin/python3 bench/compare_lstm.py [--lengths 16 64 256] [--rounds 3] [--target-s 2]
                                           [--threads 2]

The peers' bench_lstm.py (../shared/peers: nn.LSTM, input 256, hidden 512, batch 1)
exports lstm.onnx with a dynamic sequence axis and writes its PyTorch outputs; this
compiles it once, checks every length against those outputs (max |diff| 1e-4), then per
round times dynvm (`vm_run --benchmark`) and runs bench_lstm.py, which times nn.LSTM, a
Python loop over LSTMCell, and ONNX Runtime on the same inputs. The table gives per
length the median over rounds of each one's median latency and the ratios.
"""
import argparse
import os
import statistics
import sys
import tempfile

from peer_util import PEERS, check, compile_model, json_records, run, time_dynvm

PEER_NAMES = {"ort": "ONNX Runtime", "torch_nn_lstm": "PyTorch nn.LSTM",
              "torch_cell_loop": "PyTorch LSTMCell loop"}


def peer_round(lengths, threads, target_s):
    """One run of the peers' script: median ms per (peer, seq)."""
    out = run(["/usr/bin/python3", os.path.join(PEERS, "bench_lstm.py"), "--lengths", *map(str, lengths),
               "--threads", str(threads), "--target-s", str(target_s)])
    return {(r["peer"], r["seq"]): r["median_ms"] for r in json_records(out)
            if r.get("kind") == "lstm" and r.get("peer") in PEER_NAMES}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lengths", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=2.0, help="seconds of timing per length and runtime")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    samples = {}
    with tempfile.TemporaryDirectory() as work:
        for r in range(args.rounds):
            # The peers' script writes lstm.onnx and the reference data on its first run.
            for key, ms in peer_round(args.lengths, args.threads, args.target_s).items():
                samples.setdefault(key, []).append(ms)
            exe = os.path.join(work, "lstm.fbs")
            if r == 0:
                compile_model(os.path.join(PEERS, "lstm.onnx"), exe)
            for seq in args.lengths:
                ref = os.path.join(PEERS, "out", "ref", f"lstm_s{seq}")
                inputs = {"x": f"{ref}_x.npy"}
                if r == 0:
                    check(exe, inputs, [f"{ref}_{n}.npy" for n in ("y", "h_n", "c_n")])
                samples.setdefault(("dynvm", seq), []).append(time_dynvm(exe, inputs, args.threads, args.target_s))
            print(f"# round {r + 1}: {samples}", file=sys.stderr)

    peers = [p for p in PEER_NAMES if all((p, s) in samples for s in args.lengths)]
    print(f"2-layer LSTM (input 256, hidden 512), batch 1, {args.threads} threads; median over "
          f"{args.rounds} rounds of each runtime's median latency (ms)\n")
    print("| seq | dynvm | " + " | ".join(PEER_NAMES[p] for p in peers) + " | " +
          " | ".join(f"dynvm/{PEER_NAMES[p]}" for p in peers) + " |")
    print("|---" * (2 + 2 * len(peers)) + "|")
    for seq in args.lengths:
        d = statistics.median(samples[("dynvm", seq)])
        others = [statistics.median(samples[(p, seq)]) for p in peers]
        print(f"| {seq} | {d:.2f} | " + " | ".join(f"{o:.2f}" for o in others) + " | " +
              " | ".join(f"{d / o:.2f}" for o in others) + " |")


if __name__ == "__main__":
    main()
