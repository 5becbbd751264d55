#!/usr/bin/env python3
"""Exports the model zoo to the ONNX test format, with random weights.

Usage: export.py OUT_DIR [--only NAME,...] [--list] [--force]

Every entry of ZOO becomes OUT_DIR/NAME/ (the TorchScript exporter, at the
entry's opset) and, for each architecture once, OUT_DIR/NAME.dynamo/ (the
default exporter of today's PyTorch, torch.export, at its default opset),
each with model.onnx and test_data_set_0/{input_N,output_N}.pb; the
expected outputs are ONNX Runtime's on the exported model. Nothing is downloaded: architectures come
from torchvision and transformers, weights are seeded random ones.

Random weights are made to prove something:
  - batch-norm statistics are calibrated on random inputs (a few forward
    passes in training mode with a cumulative average), so activations stay
    of order 1 through deep networks;
  - norm layers get random scales and shifts, and every weight or bias that
    torchvision initialises to a constant (zero classifier heads, ConvNeXt's
    1e-6 layer scale) gets random values instead, so no branch of the model
    is silently multiplied by zero.
A model directory exported by the same export.py, zoo.py and pinned
packages (its .stamp says so) is kept unless --force.
"""
import argparse
import hashlib
import os
import sys
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

from zoo import ZOO, all_names, base_name, exporter_of

warnings.filterwarnings("ignore")
torch.set_grad_enabled(False)

MAX_MODEL_BYTES = 120 * 2**20
HERE = os.path.dirname(os.path.abspath(__file__))


def stamp(name):
    """What a model's export depends on: this script, the zoo, the packages."""
    h = hashlib.sha256(name.encode())
    for f in ("export.py", "zoo.py", "requirements.txt"):
        with open(os.path.join(HERE, f), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


# ---------------------------------------------------------------------------
# Random weights that prove something.

NORMS = (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d, torch.nn.LayerNorm, torch.nn.GroupNorm)


def randomize(model, gen):
    for module in model.modules():
        if isinstance(module, NORMS):
            if getattr(module, "weight", None) is not None:
                module.weight.copy_(torch.empty_like(module.weight).uniform_(0.5, 1.5, generator=gen))
            if getattr(module, "bias", None) is not None:
                module.bias.copy_(torch.empty_like(module.bias).normal_(0, 0.1, generator=gen))
    for name, p in model.named_parameters():
        if p.numel() < 2 or float(p.std()) > 0:
            continue
        leaf = name.rsplit(".", 1)[-1]
        if p.dim() >= 2:
            # A constant matrix or kernel (a zero classifier head): fan-in scaled normal.
            fan_in = p[0].numel()
            p.copy_(torch.empty_like(p).normal_(0, fan_in ** -0.5, generator=gen))
        elif leaf == "bias" or float(p.abs().max()) == 0:
            p.copy_(torch.empty_like(p).normal_(0, 0.05, generator=gen))
        else:
            # A constant scale (ConvNeXt's layer scale of 1e-6): of order 1 instead.
            p.copy_(torch.empty_like(p).uniform_(0.2, 0.6, generator=gen))


def calibrate_batch_norm(model, inputs, gen):
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average
    model.train()
    for _ in range(3):
        batch = {k: (torch.randn(4, *v.shape[1:], generator=gen) if v.is_floating_point() else
                     v.repeat(4, *([1] * (v.dim() - 1))))
                 for k, v in inputs.items()}
        model(*batch.values())
    model.eval()


# ---------------------------------------------------------------------------

def write_tensor(path, array, name):
    t = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export_one(name, out_dir, force):
    entry = ZOO[base_name(name)]
    builder, opset = entry.build, entry.opset
    dynamo = exporter_of(name) == "dynamo"
    d = os.path.join(out_dir, name)
    model_path = os.path.join(d, "model.onnx")
    data = os.path.join(d, "test_data_set_0")
    stamp_path = os.path.join(d, ".stamp")
    if not force and os.path.exists(stamp_path) and open(stamp_path).read() == stamp(name):
        return "kept"
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    model, inputs = builder()
    model.eval()
    randomize(model, gen)
    calibrate_batch_norm(model, inputs, gen)
    os.makedirs(data, exist_ok=True)
    tmp = model_path + ".tmp"
    if dynamo:
        # Today's default exporter (torch.export), at its own default opset.
        program = torch.onnx.export(model, tuple(inputs.values()),
                                     input_names=list(inputs.keys()), dynamo=True)
        program.save(tmp)
    else:
        torch.onnx.export(model, tuple(inputs.values()), tmp, input_names=list(inputs.keys()),
                          opset_version=opset, dynamo=False, do_constant_folding=True)
    size = os.path.getsize(tmp)
    if size > MAX_MODEL_BYTES:
        os.remove(tmp)
        raise RuntimeError(f"{name}: {size / 2**20:.0f} MiB, over the zoo's 120 MiB")
    proto = onnx.load(tmp)
    onnx.checker.check_model(proto)
    sess = ort.InferenceSession(tmp, providers=["CPUExecutionProvider"])
    feeds = {k: v.numpy() for k, v in inputs.items()}
    outputs = sess.run(None, feeds)
    for i, (k, v) in enumerate(feeds.items()):
        write_tensor(os.path.join(data, f"input_{i}.pb"), v, k)
    for i, (o, v) in enumerate(zip(sess.get_outputs(), outputs)):
        if not np.all(np.isfinite(v)):
            raise RuntimeError(f"{name}: ONNX Runtime's output '{o.name}' is not finite")
        write_tensor(os.path.join(data, f"output_{i}.pb"), v, o.name)
    os.replace(tmp, model_path)
    with open(stamp_path, "w") as f:
        f.write(stamp(name))
    opset = next(o.version for o in proto.opset_import if o.domain in ("", "ai.onnx"))
    return (f"{size / 2**20:.1f} MiB, IR {proto.ir_version}, opset {opset}, "
            f"{len(proto.graph.node)} nodes")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--only", default="", help="comma-separated model names")
    p.add_argument("--list", action="store_true", help="list the zoo and exit")
    p.add_argument("--force", action="store_true", help="export again even if present")
    a = p.parse_args()
    if a.list:
        for name in all_names():
            m = ZOO[base_name(name)]
            opset = "default" if exporter_of(name) == "dynamo" else m.opset
            print(f"{name}\t{exporter_of(name)}\topset {opset}\t{m.what}")
        return 0
    names = [n for n in a.only.split(",") if n] or all_names()
    unknown = [n for n in names if n not in all_names()]
    if unknown:
        print(f"export.py: unknown model(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    torch.set_num_threads(os.cpu_count() or 1)
    failed = 0
    for i, name in enumerate(names):
        t0 = time.time()
        try:
            what = export_one(name, a.out_dir, a.force)
        except Exception as e:  # one model's failure is reported, the others go on
            failed += 1
            what = f"FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        print(f"[{i + 1}/{len(names)}] {name}: {what} ({time.time() - t0:.1f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
