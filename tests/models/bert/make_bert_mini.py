#!/usr/bin/python3
"""Writes bert_mini.onnx and its PyTorch goldens (golden/*.npy), the test fixture of the
ONNX front end and the quick start's model.

The model is ../shared/peers/bert_model.py's BertModel (HuggingFace BertModel's
structure) in a small configuration, exported as the peers export BERT: opset 14,
dynamic batch and sequence axes. Weights are seeded; biases and LayerNorm parameters are
random too (the peers' init leaves them 0 and 1, which would hide a dropped bias).

    /usr/bin/python3 tests/models/bert/make_bert_mini.py [--peers ../shared/peers]

Needs Debian's python3-torch, python3-onnx and python3-numpy. Re-running it rewrites
the same files (PyTorch 1.13.1 on this machine; another version may differ in the last
bits of the goldens).
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = dict(vocab=1000, hidden=64, layers=2, heads=4, intermediate=128, max_pos=512, type_vocab=2)
IN_NAMES = ["input_ids", "attention_mask", "token_type_ids"]
OUT_NAMES = ["last_hidden_state", "pooler_output"]
# (batch, sequence) pairs the tests run from one executable; case b2_s7 pads row 1.
CASES = [(1, 1), (2, 7), (1, 64), (3, 128), (1, 384), (2, 512), (8, 2)]


def inputs(batch, seq, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, CONFIG["vocab"], (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    types = torch.zeros(batch, seq, dtype=torch.int64)
    if batch > 1 and seq > 4:
        mask[1, seq // 2:] = 0
        types[1, seq // 3:] = 1
    return ids, mask, types


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", default=os.path.join(HERE, "../../../../shared/peers"))
    args = ap.parse_args()
    sys.path.insert(0, os.path.abspath(args.peers))
    from bert_model import BertModel, init_weights

    model = init_weights(BertModel(CONFIG), seed=0).eval()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, torch.nn.Linear):
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.02)
            elif isinstance(mod, torch.nn.LayerNorm):
                mod.weight.copy_(1 + torch.randn(mod.weight.shape, generator=g) * 0.1)
                mod.bias.copy_(torch.randn(mod.bias.shape, generator=g) * 0.1)

    path = os.path.join(HERE, "bert_mini.onnx")
    axes = {n: {0: "batch", 1: "sequence"} for n in IN_NAMES + ["last_hidden_state"]}
    axes["pooler_output"] = {0: "batch"}
    with torch.no_grad():
        torch.onnx.export(model, inputs(2, 16, 0), path, opset_version=14, input_names=IN_NAMES,
                          output_names=OUT_NAMES, dynamic_axes=axes, do_constant_folding=True)
    import onnx
    onnx.checker.check_model(path)

    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, seq) in enumerate(CASES):
        tensors = inputs(batch, seq, seed=100 + i)
        with torch.inference_mode():
            results = model(*tensors)
        tag = f"b{batch}_s{seq}"
        for name, t in list(zip(IN_NAMES, tensors)) + list(zip(OUT_NAMES, results)):
            np.save(os.path.join(out, f"{tag}_{name}.npy"), t.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases in {out}")


if __name__ == "__main__":
    main()
