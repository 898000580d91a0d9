#!/usr/bin/python3
"""Writes distilbert_mini.onnx and its PyTorch goldens (golden/*.npy): a DistilBERT-style
encoder, a test fixture of the ONNX front end.

HuggingFace DistilBertModel's structure in plain PyTorch: word and position embeddings
(no token types) and a LayerNorm; post-LayerNorm blocks of self-attention, whose padding
mask is applied as DistilBERT does (mask == 0, viewed and expanded to the scores' shape,
then masked_fill with the float minimum), and an erf-GELU feed-forward layer. Small and
seeded: vocabulary 1000, hidden 64, 2 layers of 4 heads, FFN 128, 512 positions. Exported
at opset 14 with dynamic batch and sequence axes.

    /usr/bin/python3 tests/models/distilbert/make_distilbert_mini.py

Needs Debian's python3-torch, python3-onnx and python3-numpy.
"""
import math
import os

import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fixture_util import export, seed_weights  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
C = dict(vocab=1000, dim=64, layers=2, heads=4, hidden=128, max_pos=512)
CASES = [(1, 1), (2, 7), (1, 64), (3, 128), (1, 384), (2, 512), (8, 2)]


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        d = C["dim"]
        self.n_heads, self.dh = C["heads"], d // C["heads"]
        self.q_lin, self.k_lin, self.v_lin, self.out_lin = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x, mask):
        bs, k_len = x.size(0), x.size(1)

        def shape(t):
            return t.view(bs, -1, self.n_heads, self.dh).transpose(1, 2)

        q = shape(self.q_lin(x)) / math.sqrt(self.dh)
        k, v = shape(self.k_lin(x)), shape(self.v_lin(x))
        scores = torch.matmul(q, k.transpose(2, 3))
        m = (mask == 0).view(bs, 1, 1, k_len).expand_as(scores)
        scores = scores.masked_fill(m, torch.tensor(torch.finfo(scores.dtype).min))
        ctx = torch.matmul(nn.functional.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * self.dh)
        return self.out_lin(ctx)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        d = C["dim"]
        self.attention, self.sa_layer_norm = Attention(), nn.LayerNorm(d, eps=1e-12)
        self.lin1, self.lin2 = nn.Linear(d, C["hidden"]), nn.Linear(C["hidden"], d)
        self.output_layer_norm = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, mask):
        x = self.sa_layer_norm(self.attention(x, mask) + x)
        return self.output_layer_norm(self.lin2(nn.functional.gelu(self.lin1(x))) + x)


class DistilBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(C["vocab"], C["dim"])
        self.position_embeddings = nn.Embedding(C["max_pos"], C["dim"])
        self.LayerNorm = nn.LayerNorm(C["dim"], eps=1e-12)
        self.register_buffer("position_ids", torch.arange(C["max_pos"]).expand((1, -1)), persistent=False)
        self.layer = nn.ModuleList([Block() for _ in range(C["layers"])])

    def forward(self, input_ids, attention_mask):
        pos = self.position_ids[:, : input_ids.size(1)]
        x = self.LayerNorm(self.word_embeddings(input_ids) + self.position_embeddings(pos))
        for block in self.layer:
            x = block(x, attention_mask)
        return x


def inputs(batch, seq, seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, C["vocab"], (batch, seq), generator=g)
    mask = torch.ones(batch, seq, dtype=torch.int64)
    if batch > 1 and seq > 4:
        mask[1, seq // 2:] = 0
    return ids, mask


def main():
    torch.manual_seed(0)
    model = seed_weights(DistilBert().eval())

    path = os.path.join(HERE, "distilbert_mini.onnx")
    axes = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
            "last_hidden_state": {0: "batch", 1: "sequence"}}
    export(model, inputs(2, 16, 0), path, ["input_ids", "attention_mask"], ["last_hidden_state"], axes)

    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, seq) in enumerate(CASES):
        ids, mask = inputs(batch, seq, seed=100 + i)
        with torch.inference_mode():
            h = model(ids, mask)
        tag = f"b{batch}_s{seq}"
        for name, t in (("input_ids", ids), ("attention_mask", mask), ("last_hidden_state", h)):
            np.save(os.path.join(out, f"{tag}_{name}.npy"), t.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases in {out}")


if __name__ == "__main__":
    main()
