"""Writes what bench_treelstm needs to run the peers' Child-Sum Tree-LSTM: the model's
weights as PyTorch initialises them in ../shared/peers/bench_treelstm.py (seed 0), and
per tree size the word vectors, the tree (the merge positions of the peers'
random_binary_tree, same seed) and PyTorch's root h.

    /usr/bin/python3 bench/treelstm_data.py OUT_DIR [--leaves 16 64 256]
"""
import argparse
import os
import random

import numpy as np
import torch

from peer_util import PEERS  # noqa: F401  (puts the peers on the path)
from bench_treelstm import IN, HID, ChildSumTreeLSTM, random_binary_tree  # the peers' own


def merges(leaves, seed):
    """The positions random_binary_tree merges at, in order (the same draws)."""
    rng = random.Random(seed)
    out, count = [], leaves
    while count > 1:
        out.append(rng.randrange(count - 1))
        count -= 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--leaves", type=int, nargs="+", default=[16, 64, 256])
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)  # as the peers' main: the model is built first
    model = ChildSumTreeLSTM().eval()
    weights = {"w_iou": model.W_iou.weight, "b_iou": model.W_iou.bias, "u_iou": model.U_iou.weight,
               "w_f": model.W_f.weight, "b_f": model.W_f.bias, "u_f": model.U_f.weight}
    for name, w in weights.items():
        np.save(os.path.join(args.out, f"{name}.npy"), w.detach().numpy().astype(np.float32))
    for n in args.leaves:
        tree = random_binary_tree(n, seed=n)
        words = torch.randn(n, IN, generator=torch.Generator().manual_seed(n))
        with torch.inference_mode():
            h, _ = model(tree, words, torch.zeros(1, IN), torch.zeros(1, HID))
        np.save(os.path.join(args.out, f"words_{n}.npy"), words.numpy())
        np.save(os.path.join(args.out, f"merges_{n}.npy"), np.array(merges(n, seed=n), dtype=np.int64))
        np.save(os.path.join(args.out, f"root_h_{n}.npy"), h.numpy())


if __name__ == "__main__":
    main()
