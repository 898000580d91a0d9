#!/usr/bin/python3
"""Writes lstm_mini.onnx and gru_mini.onnx and their PyTorch goldens (golden/*.npy): the
recurrent fixtures of the ONNX front end.

lstm_mini: a 2-layer torch.nn.LSTM (input 16, hidden 32), time-major as the peers' LSTM
benchmark (../shared/peers/bench_lstm.py) exports it, returning y, h_n and c_n.
gru_mini: a 2-layer bidirectional torch.nn.GRU (input 16, hidden 24), batch first,
returning y and h_n. Both exported at opset 14 with dynamic batch and sequence axes;
seeded weights.

    /usr/bin/python3 tests/models/rnn/make_rnn_mini.py

Needs Debian's python3-torch, python3-onnx and python3-numpy.
"""
import os

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
# (batch, sequence) pairs; the goldens of every case are written.
CASES = [(1, 1), (2, 7), (1, 64), (3, 128), (1, 384), (2, 512), (8, 2)]


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, num_layers=2)

    def forward(self, x):  # x [seq, batch, 16]
        y, (h, c) = self.lstm(x)
        return y, h, c


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(16, 24, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x):  # x [batch, seq, 16]
        y, h = self.gru(x)
        return y, h


def export(model, name, x, outputs, axes):
    path = os.path.join(HERE, f"{name}.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, opset_version=14, input_names=["x"], output_names=outputs,
                          dynamic_axes=axes, do_constant_folding=True)
    import onnx
    onnx.checker.check_model(path)
    return path


def main():
    torch.manual_seed(0)
    lstm, gru = Lstm().eval(), Gru().eval()
    out = os.path.join(HERE, "golden")
    os.makedirs(out, exist_ok=True)
    export(lstm, "lstm_mini", torch.randn(5, 2, 16), ["y", "h_n", "c_n"],
           {"x": {0: "sequence", 1: "batch"}, "y": {0: "sequence", 1: "batch"},
            "h_n": {1: "batch"}, "c_n": {1: "batch"}})
    export(gru, "gru_mini", torch.randn(2, 5, 16), ["y", "h_n"],
           {"x": {0: "batch", 1: "sequence"}, "y": {0: "batch", 1: "sequence"}, "h_n": {1: "batch"}})
    for i, (batch, seq) in enumerate(CASES):
        g = torch.Generator().manual_seed(100 + i)
        tag = f"b{batch}_s{seq}"
        x = torch.randn(seq, batch, 16, generator=g)
        with torch.inference_mode():
            y, h, c = lstm(x)
        for name, t in (("x", x), ("y", y), ("h_n", h), ("c_n", c)):
            np.save(os.path.join(out, f"lstm_{tag}_{name}.npy"), t.numpy())
        x = torch.randn(batch, seq, 16, generator=g)
        with torch.inference_mode():
            y, h = gru(x)
        for name, t in (("x", x), ("y", y), ("h_n", h)):
            np.save(os.path.join(out, f"gru_{tag}_{name}.npy"), t.numpy())
    print(f"wrote lstm_mini.onnx, gru_mini.onnx and {len(CASES)} golden cases each in {out}")


if __name__ == "__main__":
    main()
