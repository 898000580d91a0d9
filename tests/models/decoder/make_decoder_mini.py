#!/usr/bin/python3
"""Writes decoder_mini.onnx and roberta_mini.onnx with their PyTorch goldens
(golden/*.npy): two small transformers that build at run time what GPT-2 and BERT
exports keep as constants, test fixtures of the ONNX front end.

- decoder_mini: a GPT-style decoder whose causal mask is `torch.tril` of ones over the
  sequence (Trilu over extents known only at run time), returning the top-5 logits
  and token ids of the last position (TopK).
- roberta_mini: a RoBERTa-style encoder whose position ids are
  `cumsum(attention_mask) * attention_mask + padding_idx` (CumSum), its attention
  masked by the padding. (nn.TransformerEncoder itself does not export from torch 1.13
  in eval mode: its fused fast path has no ONNX symbolic.)

Small and seeded: vocabulary 128, hidden 32, 2 layers of 4 heads. Exported at opset 14
with dynamic batch and sequence axes.

    /usr/bin/python3 tests/models/decoder/make_decoder_mini.py

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
C = dict(vocab=128, hidden=32, layers=2, heads=4, max_pos=256, pad=1)
# (batch, sequence): tags b{batch}_s{sequence}; models_test.cc lists the same.
CASES = [(1, 5), (2, 7), (3, 64)]


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        h = C["hidden"]
        self.embed = nn.Embedding(C["vocab"], h)
        self.pos = nn.Embedding(C["max_pos"], h)
        self.qkv = nn.ModuleList([nn.Linear(h, 3 * h) for _ in range(C["layers"])])
        self.out = nn.ModuleList([nn.Linear(h, h) for _ in range(C["layers"])])
        self.norm = nn.ModuleList([nn.LayerNorm(h) for _ in range(C["layers"])])
        self.head = nn.Linear(h, C["vocab"])

    def forward(self, input_ids):
        b, s = input_ids.shape
        x = self.embed(input_ids) + self.pos(torch.arange(s).unsqueeze(0))
        causal = torch.tril(torch.ones(s, s))  # built per call: Trilu
        bias = (1.0 - causal) * -1e4
        heads, d = C["heads"], C["hidden"] // C["heads"]
        for qkv, out, norm in zip(self.qkv, self.out, self.norm):
            q, k, v = qkv(norm(x)).view(b, s, 3, heads, d).permute(2, 0, 3, 1, 4)
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
            x = x + out((w @ v).transpose(1, 2).reshape(b, s, C["hidden"]))
        logits = self.head(x[:, -1])
        return torch.topk(logits, 5, dim=-1)


class Roberta(nn.Module):
    def __init__(self):
        super().__init__()
        h = C["hidden"]
        self.embed = nn.Embedding(C["vocab"], h, padding_idx=C["pad"])
        self.pos = nn.Embedding(C["max_pos"], h, padding_idx=C["pad"])
        self.qkv = nn.ModuleList([nn.Linear(h, 3 * h) for _ in range(C["layers"])])
        self.out = nn.ModuleList([nn.Linear(h, h) for _ in range(C["layers"])])
        self.norm = nn.ModuleList([nn.LayerNorm(h) for _ in range(C["layers"])])

    def forward(self, input_ids, attention_mask):
        b, s = input_ids.shape
        keep = attention_mask.long()
        positions = torch.cumsum(keep, dim=1) * keep + C["pad"]  # RoBERTa's: CumSum
        x = self.embed(input_ids) + self.pos(positions)
        bias = (1.0 - attention_mask[:, None, None, :].float()) * -1e4  # the padding mask
        heads, d = C["heads"], C["hidden"] // C["heads"]
        for qkv, out, norm in zip(self.qkv, self.out, self.norm):
            q, k, v = qkv(x).view(b, s, 3, heads, d).permute(2, 0, 3, 1, 4)
            w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
            x = norm(x + out((w @ v).transpose(1, 2).reshape(b, s, C["hidden"])))
        return x


def write(name, model, example, inputs, outputs, axes, make_inputs):
    path = os.path.join(HERE, f"{name}.onnx")
    export(model, example, path, inputs, outputs, axes)
    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, seq) in enumerate(CASES):
        args = make_inputs(batch, seq, torch.Generator().manual_seed(100 + i))
        with torch.inference_mode():
            results = model(*args)
        results = results if isinstance(results, tuple) else (results,)
        tag = f"{name}_b{batch}_s{seq}"
        for n, t in list(zip(inputs, args)) + list(zip(outputs, results)):
            np.save(os.path.join(out, f"{tag}_{n}.npy"), t.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases")


def ids(batch, seq, gen):
    return torch.randint(2, C["vocab"], (batch, seq), generator=gen)


def ids_and_mask(batch, seq, gen):
    mask = torch.ones(batch, seq, dtype=torch.long)
    if batch > 1:
        mask[1:, seq // 2:] = 0  # padded rows
    x = ids(batch, seq, gen) * mask + C["pad"] * (1 - mask)
    return x, mask


def main():
    torch.manual_seed(0)
    dyn = {0: "batch", 1: "sequence"}
    write("decoder_mini", seed_weights(Decoder()).eval(), (ids(2, 16, torch.Generator()),),
          ["input_ids"], ["values", "indices"], {"input_ids": dyn, "values": {0: "batch"}, "indices": {0: "batch"}},
          lambda b, s, g: (ids(b, s, g),))
    write("roberta_mini", seed_weights(Roberta()).eval(), ids_and_mask(2, 16, torch.Generator()),
          ["input_ids", "attention_mask"], ["last_hidden_state"],
          {"input_ids": dyn, "attention_mask": dyn, "last_hidden_state": dyn}, ids_and_mask)


if __name__ == "__main__":
    main()
