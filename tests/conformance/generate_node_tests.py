#!/usr/bin/env python3
"""Writes the ONNX backend node tests of the installed onnx package to disk.

Usage: generate_node_tests.py OUT_DIR

The onnx wheel no longer ships the node test data, only the case
definitions (onnx.backend.test.case.node); this writes every case to
OUT_DIR/node-<MAJOR.MINOR>/<name>/ (node-1.23 for onnx 1.23.x, which
`tessel conformance` reports as its own suite) in the ONNX test format (model.onnx,
test_data_set_N/input_M.pb and output_M.pb), as the wheel's own
`backend-test-tools generate-data` does for model cases. Inputs that are
sequences or optionals are written with numpy_helper's from_list and
from_optional. Prints how many cases it wrote.
"""
import os
import shutil
import sys
import warnings

warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx.backend.test.case import node as node_cases  # noqa: E402


def serialize(value, type_proto, name):
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    return numpy_helper.from_array(np.asarray(value), name).SerializeToString()


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    release = ".".join(onnx.__version__.split(".")[:2])
    out = os.path.join(sys.argv[1], f"node-{release}")
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    cases = node_cases.collect_testcases(None)
    for case in cases:
        d = os.path.join(tmp, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(ds)
            for j, value in enumerate(inputs):
                with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                    f.write(serialize(value, graph.input[j].type, graph.input[j].name))
            for j, value in enumerate(outputs):
                with open(os.path.join(ds, f"output_{j}.pb"), "wb") as f:
                    f.write(serialize(value, graph.output[j].type, graph.output[j].name))
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    print(f"wrote {len(cases)} node tests of onnx {onnx.__version__} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
