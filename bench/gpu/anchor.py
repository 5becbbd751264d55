#!/usr/bin/env python3
"""tessel's OpenCL against PyTorch on the same GPU: the anchor a GPU user
compares with (issue 39).

Runs on the GPU machine (PyTorch, torchvision, timm, transformers and onnx
there; tessel a lean build beside it), from the repository root:

  anchor.py --tessel BIN [--baseline BIN] --work DIR [--only NAME,... | --all]
            [--rounds 4] [--repeat 100] [--budget SECONDS] [--profile]
            [--json OUT] [--markdown OUT]

For every zoo model (tests/zoo/zoo.py; TorchScript exports, built and
exported by bench/gpu/zoo_export_torch.py's rules, PyTorch's outputs
expected), and every `onnx:FOLDER` named (a test folder: model.onnx and
test_data_set_0, such as the shared transformer encoder):
  - PyTorch on the GPU, batch 1, fp32 with TF32 off: eager, and replaying a
    CUDA graph of the model (the anchor), also host to host (inputs copied
    in from host tensors, outputs copied back: what `tessel bench` times).
    Where PyTorch cannot capture the model (or for an ONNX folder, where
    there is no model), the CUDA graph is of the exported ONNX graph run by
    PyTorch's kernels node by node (onnx_torch.py), and the row says why;
  - `tessel compile --target opencl --storage auto` (and with --baseline, the
    same with an earlier tessel), then `tessel bench` of each .tsl, a process
    per round, the rounds interleaving the engines; each keeps its best median;
  - with --profile, one `tessel run --profile` of the .tsl: its three slowest
    kernels and their GFLOP/s.
Prints one JSON row per model as it goes, then a table whose last line is the
geometric mean of tessel / CUDA graph. Models past --budget seconds are left
out, and the table says so.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import storage_bench  # noqa: E402  (torch_times, tessel_bench)
import zoo_export_torch  # noqa: E402  (patches the zoo's export for this machine)

export = zoo_export_torch.export

# The shared models' architectures, the zoo's torchvision CNNs and its
# transformers (a set that fits one device session; --only picks others,
# --all every zoo architecture).
DEFAULT = storage_bench.CNNS + [
    "vit_tiny", "swin_t", "bert_encoder", "gpt_decoder", "distilbert_encoder", "t5_encoder",
    "whisper_encoder", "llama_decoder", "qwen2_decoder", "phi_decoder", "dinov2_small",
    "segformer_b0", "eva02_tiny_patch14_224", "pvt_v2_b0", "levit_128s", "mobilevit_xxs",
    "efficientvit_b0", "repvgg_a0", "ghostnet_100", "hgnetv2_b0", "convnextv2_atto"]


def torch_times(model, inputs, rounds, onnx_path):
    """Eager's, the CUDA graph's and the CUDA graph's host to host medians
    (ms), and what stood in for the model in the graph: None (the model
    itself) or the error that stopped its capture; then the graph is of the
    exported ONNX graph run by PyTorch's kernels (onnx_torch), eager's the
    model's own."""
    import onnx_torch
    args = tuple(inputs.values())
    why = "no PyTorch model: its ONNX graph run by PyTorch"
    if model is not None:
        try:
            return storage_bench.torch_times(model, args, rounds, 50, with_copies=True), None
        except Exception as e:  # a model PyTorch cannot capture: say so
            why = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:120])
    try:
        eager = eager_ms(model, args, rounds) if model is not None else None
    except Exception:
        eager = None
    try:
        twin = onnx_torch.OnnxModule(onnx_path, [t.cpu() for t in args])
        _, graph, host = storage_bench.torch_times(twin, args, rounds, 50, with_copies=True)
        return (eager, graph, host), why
    except Exception as e:
        return (eager, None, None), why + "; ONNX twin: %s: %s" % (
            type(e).__name__, str(e).splitlines()[0][:120])


def eager_ms(model, args, rounds, repeat=50):
    """Eager's best median (ms), as storage_bench.torch_times times it."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = model.cuda().eval()
    args = tuple(v.cuda() for v in args)
    best = None
    with torch.no_grad():
        for _ in range(10):
            model(*args)
        for _ in range(rounds):
            times = []
            for _ in range(repeat):
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                model(*args)
                torch.cuda.synchronize()
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            best = min(best or 1e300, times[len(times) // 2])
    return best


def build(name, work):
    """The model, its inputs and its ONNX file: the zoo's export, or for
    the shared models' architectures that the zoo names otherwise
    (mobilenet_v2, squeezenet1_1, shufflenet_v2_x1_0) torchvision's, as
    storage_bench exports them."""
    if name.startswith("onnx:"):
        # A test folder (model.onnx, test_data_set_0): PyTorch runs the ONNX
        # graph itself (there is no PyTorch model to run).
        import onnx_torch
        folder = name[len("onnx:"):]
        args = onnx_torch.load_inputs(folder)
        return None, {"input_%d" % i: t for i, t in enumerate(args)}, os.path.join(
            folder, "model.onnx")
    if name in export.ZOO:
        zoo_export_torch.captured.clear()
        export.export_one(name, work, True)
        captured = zoo_export_torch.captured
        return captured["model"], captured["inputs"], os.path.join(work, name, "model.onnx")
    os.makedirs(os.path.join(work, name), exist_ok=True)
    path = os.path.join(work, name, "model.onnx")
    model, x = storage_bench.export(name, path)
    return model, {"input": x}, path


def compile_auto(binary, onnx_path, out):
    p = subprocess.run([binary, "compile", onnx_path, "--target", "opencl", "--storage", "auto",
                        "-o", out], capture_output=True, text=True)
    if p.returncode != 0:
        return (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return None


def profile(binary, tsl):
    p = subprocess.run([binary, "run", tsl, "--profile", "--repeat", "20"], capture_output=True,
                       text=True)
    lines = (p.stdout + p.stderr).splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("kernel") and "GFLOP/s" in line:
            return [ln.strip() for ln in lines[i + 1:i + 4]]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tessel", required=True)
    ap.add_argument("--baseline")
    ap.add_argument("--work", required=True)
    ap.add_argument("--only")
    ap.add_argument("--all", action="store_true",
                    help="every zoo architecture (TorchScript exports, one opset each)")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--budget", type=float, default=1e9)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else DEFAULT
    if a.all:
        # The _opN entries repeat an architecture at another opset.
        names = DEFAULT + [n for n in export.ZOO if n not in DEFAULT and "_op" not in n]
    os.makedirs(a.work, exist_ok=True)
    start = time.time()
    results, skipped = [], []
    for name in names:
        if time.time() - start > a.budget:
            skipped.append(name)
            continue
        # An ONNX folder's results go under its last component.
        slug = os.path.basename(name.rstrip("/")) if name.startswith("onnx:") else name
        os.makedirs(os.path.join(a.work, slug), exist_ok=True)
        row = {"model": slug}
        try:
            model, inputs, onnx_path = build(name, a.work)
        except Exception as e:
            row["error"] = "export: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:120])
            print(json.dumps(row), flush=True)
            results.append(row)
            continue
        times, err = torch_times(model, inputs, a.rounds, onnx_path)
        row["eager_ms"], row["cuda_graph_ms"], row["cuda_graph_h2h_ms"] = times
        if err:
            row["torch_error"] = err
        engines = []
        for key, binary in (("tessel", a.tessel), ("baseline", a.baseline)):
            if not binary:
                continue
            tsl = os.path.join(a.work, slug, key + ".tsl")
            err = compile_auto(binary, onnx_path, tsl)
            if err:
                row[key + "_error"] = err
            else:
                engines.append((key, binary, tsl))
        best = {}
        for _ in range(a.rounds):
            for key, binary, tsl in engines:
                ms, err = storage_bench.tessel_bench(binary, tsl, a.repeat)
                if ms is None:
                    row[key + "_error"] = err
                else:
                    best[key] = min(best.get(key, 1e300), ms)
        row.update({k + "_ms": v for k, v in best.items()})
        if a.profile and engines:
            row["profile"] = profile(a.tessel, engines[0][2])
        print(json.dumps(row), flush=True)
        results.append(row)
    table = markdown(results, skipped)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table)
    print(table)


def markdown(results, skipped):
    def fmt(v):
        return "-" if v is None else "%.3f" % v
    out = ["| model | eager | CUDA graph | graph h2h | baseline | tessel | tessel / graph "
           "| tessel / graph h2h |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        t, g, h = r.get("tessel_ms"), r.get("cuda_graph_ms"), r.get("cuda_graph_h2h_ms")
        note = "; ".join(r[k] for k in ("error", "torch_error", "tessel_error") if k in r)
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"] + (" (%s)" % note if note else ""), fmt(r.get("eager_ms")), fmt(g),
            fmt(h), fmt(r.get("baseline_ms")), fmt(t), "%.2f" % (t / g) if t and g else "-",
            "%.2f" % (t / h) if t and h else "-"))
    for key, what in (("cuda_graph_ms", "CUDA graph"),
                      ("cuda_graph_h2h_ms", "CUDA graph host to host")):
        rows = [r for r in results if r.get("tessel_ms") and r.get(key)]
        if not rows:
            continue
        ratios = [r["tessel_ms"] / r[key] for r in rows]
        worst = max(range(len(rows)), key=lambda i: ratios[i])
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        out.append("")
        out.append("tessel / %s over %d models: geometric mean %.2f, worst %.2f (%s); "
                   "over 2.0: %d" % (what, len(ratios), geo, ratios[worst],
                                     rows[worst]["model"], sum(x > 2.0 for x in ratios)))
    if skipped:
        out.append("Left out (past --budget): " + ", ".join(skipped))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
