#!/usr/bin/python3
"""Writes transformer_mini.onnx and its PyTorch goldens (golden/*.npy): a PyTorch
`nn.TransformerEncoder` with a padding mask, a test fixture of the ONNX front end.

Token and learned position embeddings, then `nn.TransformerEncoder` of 2
`nn.TransformerEncoderLayer`s (d_model 32, 4 heads, FFN 64, ReLU, post-norm, batch
first) with `src_key_padding_mask = attention_mask == 0`, then a LayerNorm. Small and
seeded: vocabulary 64.

torch 1.13 has no ONNX export of the encoder's eval-mode fast path (a fused kernel), so
the model is exported, and its goldens computed, in training mode with every dropout 0:
the layers' ordinary path, which computes exactly what inference does (the Dropout
nodes carry ratio 0). Exported at opset 14 with dynamic batch and sequence axes.

    /usr/bin/python3 tests/models/transformer/make_transformer_mini.py

Needs Debian's python3-torch, python3-onnx and python3-numpy.
"""
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fixture_util import seed_weights  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, HIDDEN, MAX_POS = 64, 32, 128
# (batch, sequence): tags b{batch}_s{sequence}; models_test.cc lists the same.
CASES = [(1, 5), (2, 7), (3, 64)]


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, HIDDEN)
        self.positions = nn.Embedding(MAX_POS, HIDDEN)
        layer = nn.TransformerEncoderLayer(d_model=HIDDEN, nhead=4, dim_feedforward=64, dropout=0.0,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
        x = self.tokens(input_ids) + self.positions(positions)
        return self.norm(self.encoder(x, src_key_padding_mask=attention_mask == 0))


def ids_and_mask(batch, seq, gen):
    mask = torch.ones(batch, seq, dtype=torch.long)
    if batch > 1:
        mask[1:, seq // 2:] = 0  # padded rows
    return torch.randint(0, VOCAB, (batch, seq), generator=gen) * mask, mask


def main():
    model = seed_weights(Encoder()).train()  # dropout 0: the ordinary path, see above
    path = os.path.join(HERE, "transformer_mini.onnx")
    dyn = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(model, ids_and_mask(2, 16, torch.Generator()), path, opset_version=14,
                          input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                          dynamic_axes={"input_ids": dyn, "attention_mask": dyn, "last_hidden_state": dyn},
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    onnx.checker.check_model(path)
    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, seq) in enumerate(CASES):
        input_ids, mask = ids_and_mask(batch, seq, torch.Generator().manual_seed(300 + i))
        with torch.no_grad():
            y = model(input_ids, mask)
        tag = f"b{batch}_s{seq}"
        for name, t in (("input_ids", input_ids), ("attention_mask", mask), ("last_hidden_state", y)):
            np.save(os.path.join(out, f"{tag}_{name}.npy"), t.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases in {out}")


if __name__ == "__main__":
    main()
