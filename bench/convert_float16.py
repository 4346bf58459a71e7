#!/usr/bin/python3
"""The same graph as a float16 model with every float16 tensor re-typed:
initializers (float32 values, or bfloat16 rounded to nearest even from them),
Cast targets, and declared input/output/value types. A float32 reference of a
float16 model, or a bfloat16 variant of it (bench/RESULTS.md, "Float16 models
on the CPU").

    /usr/bin/python3 bench/convert_float16.py MODEL.onnx OUT.onnx float32|bfloat16
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def bfloat16_bits(values):
    """float32 -> bfloat16 bit patterns, rounded to nearest even."""
    u = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def retype(tensor, target):
    values = numpy_helper.to_array(tensor).astype(np.float32)
    if target == TensorProto.FLOAT:
        tensor.CopyFrom(numpy_helper.from_array(values, tensor.name))
        return
    tensor.ClearField("int32_data")
    tensor.data_type = TensorProto.BFLOAT16
    tensor.raw_data = bfloat16_bits(values).tobytes()


def convert(graph, target):
    for t in graph.initializer:
        if t.data_type == TensorProto.FLOAT16:
            retype(t, target)
    for n in graph.node:
        for a in n.attribute:
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT16:
                a.i = target
            if a.type == onnx.AttributeProto.TENSOR and a.t.data_type == TensorProto.FLOAT16:
                retype(a.t, target)
            if a.type == onnx.AttributeProto.GRAPH:
                convert(a.g, target)
            for g in a.graphs:
                convert(g, target)
    for v in list(graph.value_info) + list(graph.input) + list(graph.output):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT16:
            v.type.tensor_type.elem_type = target


def main(argv):
    if len(argv) != 3 or argv[2] not in ("float32", "bfloat16"):
        print(__doc__, file=sys.stderr)
        return 2
    model = onnx.load(argv[0])
    convert(model.graph, TensorProto.FLOAT if argv[2] == "float32" else TensorProto.BFLOAT16)
    onnx.save(model, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
