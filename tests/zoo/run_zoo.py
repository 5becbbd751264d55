#!/usr/bin/env python3
"""Runs the zoo: `tessel check` on every target, then latency and memory
against ONNX Runtime and OpenVINO, and writes the table.

Usage: run_zoo.py TESSEL MODELS_DIR [--only NAME,...]
                  [--targets cpu,opencl,opencl-texture]
                  [--threads 2] [--rounds 3] [--no-bench] [--markdown FILE]
                  [--json FILE]

MODELS_DIR holds one folder per model in the ONNX test format (export.py
writes them). For each model and target, `tessel check DIR --target T
--json` at the model's tolerance (zoo.TOLERANCES, default rtol 1e-3, atol
1e-4); a model that does not compile is listed with tessel's one-line
reason. Latency: every engine in its own process, interleaved over
`rounds` rounds (tessel bench, bench/peers/driver.py); each engine's best
round (lowest median) is kept, since a 2-vCPU machine swings by +-30% from
run to run. Memory: peak RSS minus RSS before the model was loaded, in the
same runs. Exit status 1 when a model fails a target, else 0.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))

import zoo  # noqa: E402  (the model list, without importing torch)

CHECK_TIMEOUT_S = 900


def onnx_summary(model_path):
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 0)
    return {"nodes": len(m.graph.node), "ops": ops, "opset": opset,
            "mib": os.path.getsize(model_path) / 2**20}


def target_args(target):
    """A zoo target name as tessel options: opencl-texture is the OpenCL
    target with activations and weights in 2D images (--storage texture)."""
    if target == "opencl-texture":
        return ["--target", "opencl", "--storage", "texture"]
    return ["--target", target]


def check(tessel, model_dir, target, threads, rtol, atol):
    cmd = [tessel, "check", model_dir] + target_args(target) + [
        "--json", "--threads", str(threads), "--rtol", str(rtol), "--atol", str(atol)]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "reason": f"no answer in {CHECK_TIMEOUT_S} s"}
    seconds = time.time() - t0
    if p.returncode in (0, 1):
        try:
            report = json.loads(p.stdout)
        except json.JSONDecodeError:
            return {"status": "error", "reason": "unreadable JSON from tessel check"}
        results = report.get("results", [])
        return {"status": "pass" if p.returncode == 0 else "mismatch",
                "max_abs_error": max((r["max_abs_error"] for r in results), default=0.0),
                "max_rel_error": max((r["max_rel_error"] for r in results), default=0.0),
                "mismatches": sum(r["mismatches"] for r in results), "seconds": seconds}
    lines = [ln for ln in (p.stderr or p.stdout).strip().splitlines() if ln.strip()]
    reason = lines[-1] if lines else f"exit status {p.returncode}"
    if reason.startswith("tessel: error: "):
        reason = reason[len("tessel: error: "):]
    status = "error" if p.returncode == 2 else "crash"
    return {"status": status, "reason": reason, "exit_code": p.returncode}


def bench(tessel, model_path, threads, rounds):
    import compare  # bench/peers/compare.py: one engine, one process
    best = {}
    for _ in range(rounds):
        for engine in compare.ENGINES:
            try:
                r = compare.measure(engine, tessel, model_path, threads, warmup=3, repeat=10)
            except subprocess.CalledProcessError as e:
                best.setdefault(engine, {"error": (e.stderr or "").strip().splitlines()[-1:]})
                continue
            ms = r["latency_ms"]["median"]
            if "ms" not in best.get(engine, {}) or ms < best[engine]["ms"]:
                best[engine] = {"ms": ms, "rss_mib": r["rss_delta_bytes"] / 2**20,
                                "version": r.get("version", "")}
    return best


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def isa():
    forced = os.environ.get("DNNL_MAX_CPU_ISA") or os.environ.get("ONEDNN_MAX_CPU_ISA")
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        flags = ""
    native = "AVX-512" if " avx512f" in flags else "AVX2" if " avx2" in flags else "SSE"
    return f"{native}, forced to {forced}" if forced else native


def fmt_check(c):
    if c is None:
        return "not run"
    if c["status"] == "pass":
        return f"pass ({c['max_abs_error']:.1e})"
    if c["status"] == "mismatch":
        return f"**FAIL** ({c['max_abs_error']:.1e}, {c['mismatches']} off)"
    return f"**{c['status']}**"


def peer_summary(results):
    """The best peer's latency over tessel's per timed model: its geometric
    mean, and the models under 0.80, as lines of markdown."""
    ratios = {}
    for r in results:
        b = r.get("bench", {})
        peers = [b[e]["ms"] for e in ("onnxruntime", "openvino") if "ms" in b.get(e, {})]
        if peers and "ms" in b.get("tessel", {}):
            ratios[r["name"]] = min(peers) / b["tessel"]["ms"]
    if not ratios:
        return []
    geo = math.exp(sum(math.log(v) for v in ratios.values()) / len(ratios))
    low = sorted((v, n) for n, v in ratios.items() if v < 0.80)
    lines = [f"Best peer / tessel over the {len(ratios)} timed models: geometric mean "
             f"{geo:.2f}, ahead on {sum(v >= 1 for v in ratios.values())}; under 0.80: "
             + (", ".join(f"`{n}` {v:.2f}" for v, n in low) if low else "none") + ".", ""]
    return lines


def markdown(results, args, started):
    targets = args.targets.split(",")
    out = []
    out.append("# The model zoo\n")
    out.append("Generated by `make zoo` (`tests/zoo/make_zoo.sh`); do not edit by hand.\n")
    out.append(f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}")
    out.append(f"- Machine: {cpu_name()}, {os.cpu_count()} vCPUs, ISA {isa()}")
    versions = {}
    for r in results:
        for e, b in r.get("bench", {}).items():
            if b.get("version"):
                versions[e] = b["version"]
    if versions:
        out.append("- Peers: " + ", ".join(f"{e} {v}" for e, v in sorted(versions.items())))
    out.append(f"- Latency: ONNX Runtime as users get it (spinning threads); median of {10} "
               f"runs at {args.threads} threads, best of "
               f"{args.rounds} interleaved rounds per engine; memory: peak RSS growth from "
               f"loading the model (the same runs).")
    out.append("- Check: `tessel check DIR --target T` against ONNX Runtime's outputs at rtol "
               "1e-3, atol 1e-4 unless the model's tolerance below says otherwise; the number "
               "in brackets is the largest absolute error.")
    out.append("- Exports: `NAME` by PyTorch's TorchScript exporter at the opset shown; "
               "`NAME.dynamo` by its default exporter today (torch.export) at its default "
               "opset, checked but not timed.\n")
    head = (["model", "opset", "nodes", "ops"] + [f"{t}" for t in targets] +
            ["tessel ms", "ORT ms", "OpenVINO ms", "ORT / tessel", "OpenVINO / tessel",
             "tessel MiB", "ORT MiB"])
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join("---" if i < 4 + len(targets) else "---:"
                              for i in range(len(head))) + "|")
    for r in results:
        s = r.get("summary", {})
        row = [r["name"], str(s.get("opset", "")), str(s.get("nodes", "")),
               str(len(s.get("ops", {})))]
        row += [fmt_check(r["checks"].get(t)) for t in targets]
        b = r.get("bench", {})

        def ms(e):
            return f"{b[e]['ms']:.2f}" if "ms" in b.get(e, {}) else "-"

        def ratio(e):
            if "ms" in b.get(e, {}) and "ms" in b.get("tessel", {}):
                return f"{b[e]['ms'] / b['tessel']['ms']:.2f}"
            return "-"

        def mib(e):
            return f"{b[e]['rss_mib']:.1f}" if "ms" in b.get(e, {}) else "-"

        row += [ms("tessel"), ms("onnxruntime"), ms("openvino"), ratio("onnxruntime"),
                ratio("openvino"), mib("tessel"), mib("onnxruntime")]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.extend(peer_summary(results))
    failures = [(r["name"], t, c) for r in results for t, c in r["checks"].items()
                if c and c["status"] != "pass"]
    out.append("## Models that do not pass\n")
    if not failures:
        out.append("None: every model passes on every target above.")
    for name, t, c in failures:
        why = c.get("reason") or (f"{c['mismatches']} elements off, max abs error "
                                  f"{c['max_abs_error']:.2e}")
        out.append(f"- `{name}` on `{t}`: {why}")
    out.append("")
    tol = [(n, t) for n, t in zoo.TOLERANCES.items()
           if any(zoo.base_name(r["name"]) == n for r in results)]
    if tol:
        out.append("## Models checked at another tolerance\n")
        for name, t in tol:
            out.append(f"- `{name}`: rtol {t['rtol']:g}, atol {t['atol']:g}. {t['why']}")
        out.append("")
    out.append("## What each model exercises\n")
    for r in results:
        out.append(f"- `{r['name']}`: {zoo.ZOO[zoo.base_name(r['name'])].what}; ops: " +
                   ", ".join(f"{k} {v}" for k, v in sorted(r.get("summary", {}).get("ops", {})
                                                              .items())))
    out.append("")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("tessel")
    p.add_argument("models_dir")
    p.add_argument("--only", default="")
    p.add_argument("--targets", default="cpu,opencl,opencl-texture")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-bench", action="store_true")
    p.add_argument("--markdown", default="")
    p.add_argument("--json", default="")
    a = p.parse_args()
    started = time.time()
    names = [n for n in a.only.split(",") if n] or zoo.all_names()
    results = []
    failed = False
    for i, name in enumerate(names):
        d = os.path.join(a.models_dir, name)
        r = {"name": name, "checks": {}}
        if not os.path.exists(os.path.join(d, "model.onnx")):
            r["checks"] = {t: {"status": "missing", "reason": "not exported (see export.py's "
                               "output)"} for t in a.targets.split(",")}
            failed = True
            results.append(r)
            print(f"[{i + 1}/{len(names)}] {name}: not exported", flush=True)
            continue
        r["summary"] = onnx_summary(os.path.join(d, "model.onnx"))
        tol = zoo.TOLERANCES.get(zoo.base_name(name), {"rtol": 1e-3, "atol": 1e-4})
        for t in a.targets.split(","):
            r["checks"][t] = check(a.tessel, d, t, a.threads, tol["rtol"], tol["atol"])
            failed = failed or r["checks"][t]["status"] != "pass"
        # Latency is measured on the TorchScript exports (the table's peers
        # run the same file); the dynamo rows are checked, not timed.
        if (not a.no_bench and zoo.exporter_of(name) == "torchscript" and
                r["checks"].get("cpu", {}).get("status") == "pass"):
            r["bench"] = bench(a.tessel, os.path.join(d, "model.onnx"), a.threads, a.rounds)
        line = ", ".join(f"{t} {fmt_check(c)}" + (f": {c['reason']}" if c.get("reason") else "")
                         for t, c in r["checks"].items())
        if "bench" in r and "ms" in r["bench"].get("tessel", {}):
            line += ", " + ", ".join(f"{e} {b['ms']:.1f} ms" for e, b in r["bench"].items()
                                     if "ms" in b)
        print(f"[{i + 1}/{len(names)}] {name}: {line}", flush=True)
        results.append(r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if a.markdown:
        tmp = a.markdown + ".tmp"
        with open(tmp, "w") as f:
            f.write(markdown(results, a, started))
        os.replace(tmp, a.markdown)
        print(f"wrote {a.markdown}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
