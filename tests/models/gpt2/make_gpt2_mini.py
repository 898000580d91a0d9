#!/usr/bin/python3
"""Writes gpt2_mini.onnx and its PyTorch goldens (golden/*.npy): a GPT-2-style decoder,
a test fixture of the ONNX front end.

HuggingFace GPT2Model's structure in plain PyTorch: learned token and position
embeddings, pre-LayerNorm blocks of causal self-attention (the causal mask a buffer
sliced to the length, as GPT-2 keeps it) and a tanh-GELU MLP, a final LayerNorm, and
logits from the token embedding tied as the output layer. Small and seeded: vocabulary
256, hidden 64, 2 layers of 4 heads, 512 positions. Exported at opset 14 with dynamic
batch and sequence axes.

    /usr/bin/python3 tests/models/gpt2/make_gpt2_mini.py

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
C = dict(vocab=256, hidden=64, layers=2, heads=4, max_pos=512)
CASES = [(1, 1), (2, 7), (1, 64), (3, 128), (1, 384), (2, 512), (8, 2)]


def gelu_new(x):  # GPT-2's tanh approximation
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        h = C["hidden"]
        self.heads, self.d = C["heads"], h // C["heads"]
        self.c_attn = nn.Linear(h, 3 * h)
        self.c_proj = nn.Linear(h, h)
        n = C["max_pos"]
        self.register_buffer("bias", torch.tril(torch.ones(n, n, dtype=torch.bool)).view(1, 1, n, n),
                             persistent=False)

    def split(self, x):
        return x.view(x.size(0), x.size(1), self.heads, self.d).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.c_attn(x).split(C["hidden"], dim=2)
        q, k, v = self.split(q), self.split(k), self.split(v)
        w = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d)
        s = x.size(1)
        causal = self.bias[:, :, :s, :s]
        w = torch.where(causal, w, torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
        a = torch.matmul(torch.softmax(w, dim=-1), v).permute(0, 2, 1, 3).contiguous()
        return self.c_proj(a.view(a.size(0), a.size(1), C["hidden"]))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        h = C["hidden"]
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(h), Attention(), nn.LayerNorm(h)
        self.c_fc, self.c_proj = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(gelu_new(self.c_fc(self.ln_2(x))))


class GPT2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(C["vocab"], C["hidden"])
        self.wpe = nn.Embedding(C["max_pos"], C["hidden"])
        self.h = nn.ModuleList([Block() for _ in range(C["layers"])])
        self.ln_f = nn.LayerNorm(C["hidden"])

    def forward(self, input_ids):
        pos = torch.arange(input_ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        x = self.ln_f(x)
        return torch.matmul(x, self.wte.weight.t())  # tied embeddings


def main():
    torch.manual_seed(0)
    model = seed_weights(GPT2().eval())

    path = os.path.join(HERE, "gpt2_mini.onnx")
    export(model, (torch.randint(0, C["vocab"], (2, 16)),), path, ["input_ids"], ["logits"],
           {"input_ids": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}})

    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, seq) in enumerate(CASES):
        ids = torch.randint(0, C["vocab"], (batch, seq), generator=torch.Generator().manual_seed(100 + i))
        with torch.inference_mode():
            logits = model(ids)
        tag = f"b{batch}_s{seq}"
        np.save(os.path.join(out, f"{tag}_input_ids.npy"), ids.numpy())
        np.save(os.path.join(out, f"{tag}_logits.npy"), logits.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases in {out}")


if __name__ == "__main__":
    main()
