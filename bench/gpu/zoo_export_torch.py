#!/usr/bin/env python3
"""The zoo (tests/zoo) exported on a machine without ONNX Runtime, such as
the GPU machine: exactly as export.py does, but the expected outputs are
PyTorch's own (the model in eval mode, fp32 on the CPU) instead of ONNX
Runtime's on the exported file.

Usage: zoo_export_torch.py OUT_DIR [--only NAME,...]   (from the repository root)
"""
import os
import sys
import types

import onnx
import torch

# export.py imports onnxruntime; a stand-in lets it, and leaves again so that
# no other library takes it for the real one.
_had_ort = "onnxruntime" in sys.modules
sys.modules.setdefault("onnxruntime", types.ModuleType("onnxruntime"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "zoo"))
import export  # noqa: E402

if not _had_ort:
    del sys.modules["onnxruntime"]

captured = {}
_calibrate = export.calibrate_batch_norm


def _capture(model, inputs, gen):
    """export_one calls this last before exporting: the model as exported."""
    _calibrate(model, inputs, gen)
    captured["model"], captured["inputs"] = model, inputs


class TorchSession:
    """Stands in for onnxruntime.InferenceSession: runs the captured model."""

    def __init__(self, path, providers=None):
        self.names = [o.name for o in onnx.load(path, load_external_data=False).graph.output]

    def get_outputs(self):
        return [types.SimpleNamespace(name=n) for n in self.names]

    def run(self, _, feeds):
        with torch.no_grad():
            y = captured["model"](*captured["inputs"].values())
        ys = y if isinstance(y, (tuple, list)) else [y]
        return [t.detach().float().numpy() for t in ys]


export.calibrate_batch_norm = _capture
export.ort.InferenceSession = TorchSession

if __name__ == "__main__":
    sys.exit(export.main())
