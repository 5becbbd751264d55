#!/usr/bin/env python3
"""Texture against buffer on one GPU, side by side, with PyTorch as the anchor.

Runs on the GPU machine (PyTorch, torchvision and onnx there; tessel a lean
build beside it):

  storage_bench.py --tessel BIN [--baseline BIN] --work DIR [--rounds 5]
                   [--repeat 200] [--only NAME,...] [--json OUT] [--markdown OUT]
                   [--no-profile]

For every model (torchvision CNNs with random weights, and single
convolutions at MobileNet and ResNet shapes), exported to ONNX once into
DIR:
  - PyTorch on the same GPU, batch 1, fp32 with TF32 off: eager, and
    replaying a CUDA graph (the anchor);
  - `tessel compile --target opencl --storage buffer|texture|auto` once
    each (what auto chose, and whether its .tsl is byte for byte the one
    that storage compiles to: then it runs exactly as that one does), then
    `tessel bench` of each .tsl and of the ONNX file on the baseline binary
    (--baseline: an earlier tessel, with buffers), each a process per
    round, the rounds interleaving the engines; each engine keeps its best
    median;
  - one `--profile` run per storage: the three slowest kernels (why),
    unless --no-profile.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# The shared models' architectures and every CNN of the zoo (tests/zoo/zoo.py).
CNNS = ["mobilenet_v2", "squeezenet1_1", "shufflenet_v2_x1_0", "resnet18", "efficientnet_b0",
        "densenet121", "mobilenet_v3_small", "mobilenet_v3_large", "resnet50", "regnet_y_800mf",
        "resnext50_32x4d", "regnet_x_400mf", "regnet_y_400mf", "efficientnet_v2_s", "mnasnet1_0",
        "shufflenet_v2_x0_5", "squeezenet1_0", "googlenet", "inception_v3", "convnext_tiny",
        "lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large"]
# Constructor arguments and input sizes where the zoo's differ from the defaults.
KWARGS = {"googlenet": {"aux_logits": False, "init_weights": True},
          "inception_v3": {"aux_logits": False, "init_weights": True}}
SIZES = {"inception_v3": 299}


class SegmentationOut(object):
    """torchvision's segmentation models return a dict; the zoo exports its "out"."""

    def __new__(cls, model):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]
        return Wrapped(model)
# name: (in channels, out channels, kernel, stride, groups, size)
CONVS = {
    "conv3x3_64_56": (64, 64, 3, 1, 1, 56),        # ResNet-18 layer1
    "conv3x3_128_28": (128, 128, 3, 1, 1, 28),     # ResNet-18 layer2
    "conv3x3_256_14": (256, 256, 3, 1, 1, 14),     # ResNet-18 layer3
    "conv3x3_512_7": (512, 512, 3, 1, 1, 7),       # ResNet-18 layer4
    "conv1x1_24_144_56": (24, 144, 1, 1, 1, 56),   # MobileNetV2 expand
    "conv1x1_144_24_56": (144, 24, 1, 1, 1, 56),   # MobileNetV2 project
    "conv1x1_320_1280_7": (320, 1280, 1, 1, 1, 7),  # MobileNetV2 head
    "dw3x3_144_56": (144, 144, 3, 1, 144, 56),     # MobileNetV2 depthwise
    "dw3x3_s2_96_112": (96, 96, 3, 2, 96, 112),
    "dw3x3_960_7": (960, 960, 3, 1, 960, 7),
}


def export(name, path):
    import torch
    import torchvision
    torch.manual_seed(0)
    if name in CONVS:
        cin, cout, k, s, g, size = CONVS[name]
        model = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, k, s, k // 2, groups=g),
                                    torch.nn.ReLU())
        x = torch.randn(1, cin, size, size)
    elif name.startswith(("lraspp", "deeplabv3")):
        model = SegmentationOut(getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None))
        x = torch.randn(1, 3, 224, 224)
    else:
        model = getattr(torchvision.models, name)(weights=None, **KWARGS.get(name, {}))
        size = SIZES.get(name, 224)
        x = torch.randn(1, 3, size, size)
    model.eval()
    torch.onnx.export(model, (x,), path, opset_version=17, dynamo=False,
                      input_names=["input"], output_names=["output"])
    return model, x


def tensors_of(out):
    """Every tensor of a model's output (a tensor, or tuples, lists, dicts of them)."""
    if hasattr(out, "data_ptr"):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    return [t for o in (out if isinstance(out, (tuple, list)) else []) for t in tensors_of(o)]


def torch_times(model, x, rounds, repeat, with_copies=False):
    """Eager's and the CUDA graph's best medians (ms); x one input or a tuple.
    with_copies: a third, the CUDA graph host to host: the inputs copied in
    from (pageable) host tensors, the replay, the outputs copied back, as
    `tessel bench` times a run."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = model.cuda().eval()
    args = tuple(v.cuda() for v in (x if isinstance(x, tuple) else (x,)))
    with torch.no_grad():
        for _ in range(10):
            model(*args)
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                model(*args)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = tensors_of(model(*args))
        host_args = tuple(a.cpu() for a in args)

        def host_to_host():
            for device, host in zip(args, host_args):
                device.copy_(host)
            graph.replay()
            return [t.cpu() for t in outs]
        engines = [lambda: model(*args), graph.replay] + ([host_to_host] if with_copies else [])
        times_of = [[] for _ in engines]
        for _ in range(rounds):
            for fn, out in zip(engines, times_of):
                times = []
                for _ in range(repeat):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    fn()
                    torch.cuda.synchronize()
                    times.append((time.perf_counter() - t0) * 1e3)
                times.sort()
                out.append(times[len(times) // 2])
    return tuple(min(t) for t in times_of)


def tessel_compile(binary, model, storage, out):
    p = subprocess.run([binary, "compile", model, "--target", "opencl", "--storage", storage,
                        "-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        return (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    notes = [ln for ln in p.stderr.splitlines() if "auto on" in ln or "auto:" in ln]
    return notes[-1] if notes else ""


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def tessel_bench(binary, model, repeat):
    cmd = [binary, "bench", model, "--json", "--warmup", "20", "--repeat", str(repeat)]
    if model.endswith(".onnx"):
        cmd += ["--target", "opencl"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return json.loads(p.stdout)["latency_ms"]["median"], p.stderr.strip()


def tessel_profile(binary, model, storage):
    p = subprocess.run([binary, "run", model, "--target", "opencl", "--storage", storage,
                        "--profile", "--repeat", "20"], capture_output=True, text=True)
    text = p.stdout + p.stderr
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("kernel") and "GFLOP/s" in line:
            return [ln.strip() for ln in lines[i + 1:i + 4]]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--work", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--only")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--no-profile", action="store_true")
    a = ap.parse_args()
    names = list(CONVS) + CNNS
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    os.makedirs(a.work, exist_ok=True)
    results = []
    for name in names:
        path = os.path.join(a.work, name + ".onnx")
        model, x = export(name, path)
        row = {"model": name}
        row["eager_ms"], row["cuda_graph_ms"] = torch_times(model, x, a.rounds, 50)
        engines = []
        for storage in ("buffer", "texture", "auto"):
            tsl = os.path.join(a.work, "%s.%s.tsl" % (name, storage))
            note = tessel_compile(a.tessel, path, storage, tsl)
            if not os.path.exists(tsl):
                row[storage + "_error"] = note
                continue
            if storage == "auto":
                row["auto_note"] = note
                for other in ("buffer", "texture"):
                    o = os.path.join(a.work, "%s.%s.tsl" % (name, other))
                    if os.path.exists(o) and same_bytes(tsl, o):
                        row["auto_same_as"] = other
            engines.append((storage, a.tessel, tsl))
        if a.baseline:
            engines.append(("baseline", a.baseline, path))
        best = {}
        for _ in range(a.rounds):
            for key, binary, model_file in engines:
                ms, err = tessel_bench(binary, model_file, a.repeat)
                if ms is None:
                    row[key + "_error"] = err
                    continue
                best[key] = min(best.get(key, 1e300), ms)
        row.update({k + "_ms": v for k, v in best.items()})
        for storage in ("buffer", "texture") if not a.no_profile else ():
            row[storage + "_profile"] = tessel_profile(a.tessel, path, storage)
        print(json.dumps(row), flush=True)
        results.append(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(markdown(results))
    print(markdown(results))


def markdown(results):
    def fmt(v):
        return "-" if v is None else "%.3f" % v
    out = ["| model | eager | CUDA graph | baseline | buffer | texture | auto (its .tsl) |"
           " auto's storage / faster | texture/buffer | best/CUDA graph |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        b, t = r.get("buffer_ms"), r.get("texture_ms")
        best = min(v for v in (b, t) if v is not None) if (b or t) else None
        same = r.get("auto_same_as")
        chosen = r.get(same + "_ms") if same else None
        out.append("| %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s |" % (
            r["model"], fmt(r.get("eager_ms")), fmt(r.get("cuda_graph_ms")),
            fmt(r.get("baseline_ms")), fmt(b), fmt(t), fmt(r.get("auto_ms")),
            "= " + same if same else "differs", fmt(chosen / best) if chosen and best else "-",
            fmt(t / b) if b and t else "-",
            fmt(best / r["cuda_graph_ms"]) if best else "-"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
