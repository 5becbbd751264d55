#!/usr/bin/env python3
"""Writes attention blocks of the zoo's shapes as ONNX models, for compare.py.

    bench/peers/attention_models.py OUT_DIR

Each model is the scaled dot-product attention as torch.onnx exports
F.scaled_dot_product_attention (q and k^T each scaled by the root of the
scale, MatMul, + mask, Softmax, NaN -> 0, MatMul), with grouped-query heads
repeated by Unsqueeze / Expand / Reshape where the shape has them: what
tessel's fuse-attention stage makes one FusedAttention node, and what
OpenVINO's SDPA fusion and ONNX Runtime's graph see. Inputs q, k, v; the
mask a constant (causal for the decoder). Then, e.g.:

    bench/peers/compare.py build/tessel OUT_DIR/*.onnx --threads 2 --rounds 5
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name: (heads, kv_heads, queries, keys, head size, mask)
SHAPES = {
    "attn_vit_197x64x3": (3, 3, 197, 197, 64, None),
    "attn_bert_128x64x12": (12, 12, 128, 128, 64, "padding"),
    "attn_llama_gqa_256x64x8": (8, 2, 256, 256, 64, "causal"),
    "attn_whisper_1500x64x6": (6, 6, 1500, 1500, 64, None),
    "attn_swin_49x32x96": (96, 96, 49, 49, 32, "bias"),
}


def model(heads, kv_heads, sq, skv, d, mask):
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    inputs = [
        helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, heads, sq, d]),
        helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, kv_heads, skv, d]),
        helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, kv_heads, skv, d]),
    ]
    k, v = "k", "v"
    if kv_heads != heads:  # Llama's repeat_kv
        rep = heads // kv_heads
        for x in ("k", "v"):
            nodes.append(helper.make_node("Unsqueeze", [x, const(x + "_axis", np.array([2]))],
                                          [x + "_u"]))
            nodes.append(helper.make_node(
                "Expand", [x + "_u", const(x + "_to", np.array([1, kv_heads, rep, skv, d]))],
                [x + "_e"]))
            nodes.append(helper.make_node(
                "Reshape", [x + "_e", const(x + "_heads", np.array([1, heads, skv, d]))],
                [x + "_r"]))
        k, v = "k_r", "v_r"
    root = const("root", np.array(d ** -0.25, np.float32))
    nodes += [
        helper.make_node("Transpose", [k], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("Mul", ["q", root], ["qs"]),
        helper.make_node("Mul", ["kt", root], ["ks"]),
        helper.make_node("MatMul", ["qs", "ks"], ["s"]),
    ]
    scores = "s"
    rng = np.random.default_rng(0)
    if mask == "causal":
        m = np.triu(np.full((sq, skv), -np.inf, np.float32), 1)[None, None]
    elif mask == "padding":
        m = np.zeros((1, 1, 1, skv), np.float32)
        m[..., skv * 3 // 4:] = np.finfo(np.float32).min
    elif mask == "bias":  # Swin's relative position bias, per head
        m = rng.standard_normal((1, heads, sq, skv)).astype(np.float32)
    else:
        m = None
    if m is not None:
        nodes.append(helper.make_node("Add", ["s", const("mask", m)], ["sm"]))
        scores = "sm"
    nodes += [
        helper.make_node("Softmax", [scores], ["p"], axis=-1),
        helper.make_node("IsNaN", ["p"], ["nan"]),
        helper.make_node("Where", ["nan", const("zero", np.array(0, np.float32)), "p"], ["p0"]),
        helper.make_node("MatMul", ["p0", v], ["y"]),
    ]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, heads, sq, d])
    graph = helper.make_graph(nodes, "attention", inputs, [out], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, shape in SHAPES.items():
        path = os.path.join(sys.argv[1], name + ".onnx")
        m = model(*shape)
        onnx.checker.check_model(m)
        onnx.save(m, path)
        print(path)


if __name__ == "__main__":
    main()
