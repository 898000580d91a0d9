#!/usr/bin/python3
"""Writes unet_mini.onnx and its PyTorch goldens (golden/*.npy): a U-Net-like image
model, a test fixture of the ONNX front end's convolution and resizing operators.

An encoder of Conv2d + BatchNorm2d + ReLU and MaxPool2d, a decoder that upsamples with
ConvTranspose2d (stride 2), nearest and bilinear F.interpolate (scale factor 2), joined
with the encoder's features by concatenation and residual adds, and a 1x1 head. Small and
seeded: 3 input channels, 8 and 16 features, 2 output channels. Exported at opset 14
with dynamic batch, height and width (each a multiple of 2), so one executable serves
every image size.

    /usr/bin/python3 tests/models/unet/make_unet_mini.py

Needs Debian's python3-torch, python3-onnx and python3-numpy.
"""
import os
import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fixture_util import export, seed_weights  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# (batch, height, width): tags n{batch}_h{height}_w{width}; models_test.cc lists the same.
CASES = [(1, 16, 16), (2, 32, 24), (1, 8, 40), (3, 2, 2)]


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.enc2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.dec = nn.Sequential(nn.Conv2d(16, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        d = self.dec(torch.cat([self.up(e2), e1], dim=1))
        nearest = F.interpolate(e2[:, :8], scale_factor=2.0, mode="nearest")
        bilinear = F.interpolate(e2[:, 8:], scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.head(d + nearest + bilinear)


def main():
    torch.manual_seed(0)
    model = seed_weights(UNet()).eval()
    with torch.no_grad():  # BatchNorm statistics of a trained model, not the identity
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.num_features) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features) + 0.5)

    path = os.path.join(HERE, "unet_mini.onnx")
    export(model, (torch.randn(2, 3, 16, 16),), path, ["x"], ["y"],
           {"x": {0: "batch", 2: "height", 3: "width"}, "y": {0: "batch", 2: "height", 3: "width"}})

    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    for i, (batch, h, w) in enumerate(CASES):
        x = torch.randn(batch, 3, h, w, generator=torch.Generator().manual_seed(100 + i))
        with torch.inference_mode():
            y = model(x)
        tag = f"n{batch}_h{h}_w{w}"
        np.save(os.path.join(out, f"{tag}_x.npy"), x.numpy())
        np.save(os.path.join(out, f"{tag}_y.npy"), y.numpy())
    print(f"wrote {path} ({os.path.getsize(path)} bytes) and {len(CASES)} golden cases in {out}")


if __name__ == "__main__":
    main()
