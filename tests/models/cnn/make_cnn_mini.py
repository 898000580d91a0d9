#!/usr/bin/python3
"""Writes cnn_mini.onnx and its PyTorch goldens (golden/*.npy): a small ResNet-style
classifier, a test fixture of the ONNX front end's image operators over any image size.

A stem of Conv2d + BatchNorm2d + ReLU, then two residual blocks (Conv2d + BatchNorm2d +
ReLU + Conv2d + BatchNorm2d, added to the block's input: the first through a strided 1x1
projection, the second the identity), global average pooling, flatten and a linear head.
Small and seeded: 3 input channels, 8 and 16 features, 5 classes; BatchNorm statistics
those of a trained model, not the identity. Exported at opset 14 with dynamic batch,
height and width, so one executable serves every image size, odd ones included.

    /usr/bin/python3 tests/models/cnn/make_cnn_mini.py

Needs Debian's python3-torch, python3-onnx and python3-numpy.
"""
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fixture_util import export, seed_weights  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# (batch, height, width): tags n{batch}_h{height}_w{width}; models_test.cc lists the same.
CASES = [(1, 32, 32), (2, 17, 23), (1, 8, 64), (3, 1, 1)]


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout))
        self.shortcut = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.blocks = nn.Sequential(Block(8, 16, 2), Block(16, 16, 1))
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        features = self.blocks(self.stem(x))
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(features, 1), 1))


def main():
    torch.manual_seed(0)
    model = seed_weights(Cnn()).eval()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features) + 0.5)

    path = os.path.join(HERE, "cnn_mini.onnx")
    export(model, (torch.randn(2, 3, 16, 16),), path, ["x"], ["logits"],
           {"x": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}})

    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, h, w) in enumerate(CASES):
        x = torch.randn(batch, 3, h, w, generator=torch.Generator().manual_seed(200 + i))
        with torch.inference_mode():
            y = model(x)
        tag = f"n{batch}_h{h}_w{w}"
        np.save(os.path.join(out, f"{tag}_x.npy"), x.numpy())
        np.save(os.path.join(out, f"{tag}_logits.npy"), y.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases in {out}")


if __name__ == "__main__":
    main()
