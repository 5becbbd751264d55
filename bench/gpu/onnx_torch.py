"""An ONNX graph run by PyTorch's own kernels, node by node: the anchor's
PyTorch twin of a model that has no capturable PyTorch module (the shared
transformer encoder is an ONNX file alone; Hugging Face's BERT and GPT-2 and
timm's EdgeNeXt copy a CPU tensor to the GPU inside forward, which a CUDA
graph cannot capture).

`OnnxModule(path, inputs)` evaluates the graph once on the CPU with the
given inputs to learn which values depend on a graph input. The others
(initializers, constants, shape arithmetic: the graph's shapes are static)
are folded then; forward runs only the nodes that depend on an input, with
the folded values on the device for data and as Python numbers where the op
takes a shape, axes or a count. Nothing in forward copies between host and
device, so a CUDA graph captures it.

The ops are those the anchored models use; another raises NotImplementedError
naming it.
"""
import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import numpy_helper

# ONNX TensorProto element types to torch dtypes.
DTYPES = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16, 6: torch.int32,
          7: torch.int64, 9: torch.bool, 10: torch.float16, 11: torch.float64}


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _ints(t):
    """A folded shape/axes/count operand as Python ints."""
    return [int(v) for v in t.reshape(-1).tolist()]


def _axes(node, a, ins, position):
    """Axes from the attribute (older opsets) or the input at `position`."""
    if "axes" in a:
        return list(a["axes"])
    if len(ins) > position and ins[position] is not None:
        return _ints(ins[position])
    return None


def _conv(x, w, b, a):
    rank = x.dim() - 2
    pads = list(a.get("pads", [0] * (2 * rank)))
    if a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise NotImplementedError("Conv auto_pad")
    stride = a.get("strides", [1] * rank)
    dilation = a.get("dilations", [1] * rank)
    if pads[:rank] != pads[rank:]:
        # F.pad takes the last axis first.
        x = F.pad(x, [p for i in reversed(range(rank)) for p in (pads[i], pads[i + rank])])
        pads = [0] * (2 * rank)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]
    return fn(x, w, b, stride, pads[:rank], dilation, a.get("group", 1))


def _slice(x, starts, ends, axes, steps):
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)
    index = [slice(None)] * x.dim()
    for s, e, ax, st in zip(starts, ends, axes, steps):
        if st <= 0:
            raise NotImplementedError("Slice with step %d" % st)
        n = x.shape[ax]
        index[ax] = slice(max(min(s, n), -n), max(min(e, n), -n - 1), st)
    return x[tuple(index)]


def _gather(x, idx, axis):
    n = x.shape[axis]
    idx = torch.where(idx < 0, idx + n, idx)
    flat = torch.index_select(x, axis, idx.reshape(-1))
    return flat.reshape(x.shape[:axis] + idx.shape + x.shape[axis + 1:])


def run_node(node, ins, a, opset):
    """The node's outputs (a list) from its inputs (tensors or None)."""
    op = node.op_type
    x = ins[0] if ins else None
    binary = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Pow": torch.pow,
              "Equal": torch.eq, "Less": torch.lt, "LessOrEqual": torch.le,
              "Greater": torch.gt, "GreaterOrEqual": torch.ge, "And": torch.logical_and,
              "Or": torch.logical_or, "MatMul": torch.matmul}
    unary = {"Sqrt": torch.sqrt, "Erf": torch.erf, "Tanh": torch.tanh, "Sin": torch.sin,
             "Cos": torch.cos, "Exp": torch.exp, "Relu": torch.relu, "Sigmoid": torch.sigmoid,
             "Neg": torch.neg, "Not": torch.logical_not, "Reciprocal": torch.reciprocal,
             "Identity": lambda t: t}
    if op in binary:
        return [binary[op](x, ins[1])]
    if op in unary:
        return [unary[op](x)]
    if op == "Div":
        floating = x.is_floating_point() or ins[1].is_floating_point()
        return [torch.div(x, ins[1], rounding_mode=None if floating else "trunc")]
    if op == "Mod":
        return [torch.fmod(x, ins[1]) if a.get("fmod", 0) else torch.remainder(x, ins[1])]
    if op == "Where":
        return [torch.where(x, ins[1], ins[2])]
    if op == "Softmax":
        return [torch.softmax(x, a.get("axis", -1))]
    if op == "Gemm":
        m, w = ins[0], ins[1]
        m = m.t() if a.get("transA", 0) else m
        w = w.t() if a.get("transB", 0) else w
        y = a.get("alpha", 1.0) * (m @ w)
        if len(ins) > 2 and ins[2] is not None:
            y = y + a.get("beta", 1.0) * ins[2]
        return [y]
    if op == "LayerNormalization":
        axis = a.get("axis", -1) % x.dim()
        bias = ins[2] if len(ins) > 2 else None
        return [F.layer_norm(x, x.shape[axis:], ins[1], bias, a.get("epsilon", 1e-5))]
    if op == "Cast":
        return [x.to(DTYPES[a["to"]])]
    if op == "Reshape":
        shape = _ints(ins[1])
        if not a.get("allowzero", 0):
            shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
        return [x.reshape(shape)]
    if op == "Flatten":
        axis = a.get("axis", 1)
        axis = axis + x.dim() if axis < 0 else axis  # axis == rank: (all, 1)
        return [x.reshape(int(np.prod(x.shape[:axis])), -1)]
    if op == "Transpose":
        return [x.permute(a.get("perm", list(reversed(range(x.dim())))))]
    if op == "Slice":
        if opset < 10:
            return [_slice(x, a["starts"], a["ends"], a.get("axes"), None)]
        opt = [(_ints(ins[i]) if len(ins) > i and ins[i] is not None else None) for i in (3, 4)]
        return [_slice(x, _ints(ins[1]), _ints(ins[2]), *opt)]
    if op == "Concat":
        return [torch.cat([t for t in ins if t is not None], a["axis"])]
    if op == "Unsqueeze":
        for ax in sorted(v % (x.dim() + len(_axes(node, a, ins, 1))) for v in _axes(node, a, ins, 1)):
            x = x.unsqueeze(ax)
        return [x]
    if op == "Squeeze":
        axes = _axes(node, a, ins, 1)
        return [x.squeeze() if axes is None else x.squeeze(tuple(v % x.dim() for v in axes))]
    if op == "Gather":
        return [_gather(x, ins[1], a.get("axis", 0) % x.dim())]
    if op == "GatherElements":
        axis = a.get("axis", 0) % x.dim()
        idx = ins[1]
        return [torch.gather(x, axis, torch.where(idx < 0, idx + x.shape[axis], idx))]
    if op == "Expand":
        shape = torch.broadcast_shapes(tuple(x.shape), tuple(_ints(ins[1])))
        return [x.expand(shape)]
    if op == "ConstantOfShape":
        v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
        return [torch.full(_ints(x), v.reshape(-1)[0].item(), dtype=torch.from_numpy(v.copy()).dtype)]
    if op == "Split":
        axis = a.get("axis", 0) % x.dim()
        sizes = a.get("split") or (_ints(ins[1]) if len(ins) > 1 and ins[1] is not None else None)
        if sizes is None:
            parts = len(node.output)
            sizes = [-(-x.shape[axis] // parts)] * parts
            sizes[-1] = x.shape[axis] - sum(sizes[:-1])
        return list(torch.split(x, sizes, axis))
    if op == "Conv":
        return [_conv(x, ins[1], ins[2] if len(ins) > 2 else None, a)]
    if op == "CumSum":
        if a.get("exclusive", 0) or a.get("reverse", 0):
            raise NotImplementedError("CumSum exclusive/reverse")
        return [torch.cumsum(x, _ints(ins[1])[0])]
    if op == "ReduceL2":
        axes = _axes(node, a, ins, 1) or list(range(x.dim()))
        return [torch.linalg.vector_norm(x, 2, dim=axes, keepdim=bool(a.get("keepdims", 1)))]
    if op == "ReduceMean":
        axes = _axes(node, a, ins, 1) or list(range(x.dim()))
        return [x.mean(dim=axes, keepdim=bool(a.get("keepdims", 1)))]
    if op == "Clip":
        lo = ins[1] if len(ins) > 1 else None
        hi = ins[2] if len(ins) > 2 else None
        return [torch.clamp(x, lo, hi)]
    if op == "GlobalAveragePool":
        return [x.mean(dim=tuple(range(2, x.dim())), keepdim=True)]
    if op == "Shape":
        return [torch.tensor(x.shape, dtype=torch.int64)]
    if op == "Constant":
        return [torch.from_numpy(numpy_helper.to_array(a["value"]).copy())]
    raise NotImplementedError("onnx_torch: op %s" % op)


class OnnxModule(torch.nn.Module):
    def __init__(self, path, inputs):
        """`inputs`: the graph inputs' example tensors (CPU), in graph order."""
        super().__init__()
        m = onnx.load(path)
        self.opset = next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
        init = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
                for t in m.graph.initializer}
        self.input_names = [i.name for i in m.graph.input if i.name not in init]
        self.output_names = [o.name for o in m.graph.output]
        env = dict(init)
        env.update(zip(self.input_names, inputs))
        live = set(self.input_names)  # values that depend on a graph input
        self.nodes = []
        for node in m.graph.node:
            a = _attrs(node)
            ins = [env[n] if n else None for n in node.input]
            outs = run_node(node, ins, a, self.opset)
            env.update(zip(node.output, outs))
            # Shape's result is static (the graph's shapes are): folded.
            if node.op_type != "Shape" and any(n in live for n in node.input):
                live.update(node.output)
                self.nodes.append((node, a))
        folded = {k: v for k, v in env.items() if k not in live}
        self.folded_host = folded
        self.folded = {}  # on the device, filled by _to_device

    def _apply(self, fn, *args, **kwargs):
        # Module.to/cuda: move the folded values with the module.
        self.folded = {k: fn(v) for k, v in self.folded_host.items()}
        return super()._apply(fn, *args, **kwargs)

    def forward(self, *inputs):
        env = dict(zip(self.input_names, inputs))
        for node, a in self.nodes:
            ins = []
            for k, n in enumerate(node.input):
                if not n:
                    ins.append(None)
                elif n in env:
                    ins.append(env[n])
                elif SHAPE_OPERANDS.get(node.op_type, lambda k: False)(k):
                    ins.append(self.folded_host[n])  # read as Python numbers
                else:
                    ins.append(self.folded.get(n, self.folded_host[n]))
            env.update(zip(node.output, run_node(node, ins, a, self.opset)))
        outs = tuple(env[n] for n in self.output_names)
        return outs[0] if len(outs) == 1 else outs


# Operand positions an op reads as Python numbers (shapes, axes, counts).
SHAPE_OPERANDS = {
    "Reshape": lambda k: k == 1, "Expand": lambda k: k == 1, "Slice": lambda k: k >= 1,
    "Unsqueeze": lambda k: k == 1, "Squeeze": lambda k: k == 1, "Split": lambda k: k == 1,
    "ConstantOfShape": lambda k: k == 0, "CumSum": lambda k: k == 1,
    "ReduceL2": lambda k: k == 1, "ReduceMean": lambda k: k == 1,
}


def load_inputs(folder):
    """A test folder's inputs (test_data_set_0/input_N.pb) as CPU tensors."""
    import glob
    import os
    files = sorted(glob.glob(os.path.join(folder, "test_data_set_0", "input_*.pb")),
                   key=lambda p: int(p.rsplit("_", 1)[1].split(".")[0]))
    out = []
    for f in files:
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        out.append(torch.from_numpy(numpy_helper.to_array(t).copy()))
    return out
