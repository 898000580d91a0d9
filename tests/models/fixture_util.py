"""What the model fixture scripts of tests/models/ share: seeded weights and the export
(opset 14, dynamic axes, checked by onnx.checker)."""
import torch
from torch import nn


def seed_weights(model, seed=0):
    """Every parameter normal with std 0.05 (matrices) or 0.1 (vectors: biases and
    LayerNorm parameters, which are then centred on 1 for the LayerNorm weights), so that
    no bias is zero and no LayerNorm is the identity."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape) * (0.1 if p.dim() == 1 else 0.05))
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.add_(1.0)
    return model


def export(model, args, path, input_names, output_names, dynamic_axes):
    """torch.onnx.export at opset 14 with constant folding, then onnx.checker."""
    with torch.no_grad():
        torch.onnx.export(model, args, path, opset_version=14, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes, do_constant_folding=True)
    import onnx
    onnx.checker.check_model(path)
