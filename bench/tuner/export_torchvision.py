#!/usr/bin/env python3
"""Exports torchvision models with random weights to ONNX for bench/tuner.

Usage: export_torchvision.py OUT_DIR NAME[@BATCH[@SIZE]]...

Each NAME is a torchvision classification model (224x224 unless SIZE) or a
segmentation one (deeplabv3_*, lraspp_*, fcn_*: 520x520, its "out" output).
OUT_DIR/NAME.onnx (NAME_bBATCH[_sSIZE].onnx with a batch) is written by the
TorchScript exporter at opset 17. Tuning does not depend on weight values,
so they are torchvision's random initialisation, unseeded.
"""
import os
import sys

import torch
import torchvision

torch.set_grad_enabled(False)


class SegmentationOut(torch.nn.Module):
    """A segmentation model's "out" tensor, as the only output."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for spec in sys.argv[2:]:
        parts = spec.split("@")
        name = parts[0]
        batch = int(parts[1]) if len(parts) > 1 else 1
        seg = name.startswith(("deeplab", "lraspp", "fcn"))
        size = int(parts[2]) if len(parts) > 2 else (520 if seg else 224)
        if seg:
            model = getattr(torchvision.models.segmentation, name)(
                weights=None, weights_backbone=None)
            model = SegmentationOut(model)
        else:
            model = getattr(torchvision.models, name)(weights=None)
        model.eval()
        x = torch.randn(batch, 3, size, size)
        path = os.path.join(out, spec.replace("@", "_b", 1).replace("@", "_s") + ".onnx")
        try:
            torch.onnx.export(model, (x,), path, opset_version=17, dynamo=False)
            print("exported", spec, os.path.getsize(path))
        except Exception as e:  # report and go on with the others
            print("failed", spec, type(e).__name__, str(e)[:300])


if __name__ == "__main__":
    main()
