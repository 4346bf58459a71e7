#!/usr/bin/python3
"""Independent reference parameter count for an ONNX model.

    /usr/bin/python3 tools/count_initializers.py MODEL.onnx [--include-scalar-constants]

Prints one JSON object:

    {"params": N, "initializer_params": I, "constant_params": C,
     "initializer_elements": M, "constant_elements": K,
     "by_dtype": {"FLOAT": ..., "INT64": ...}, "tensors": T}

params counts the elements of every floating-point (FLOAT, FLOAT16, BFLOAT16,
DOUBLE) or INT8/UINT8 tensor that is a graph initializer, or the "value"
attribute of a Constant node holding more than one element, in the main graph
and in every subgraph (If/Loop/Scan bodies). Single-element Constants are
literals, not weights (exporters emit GELU's 0.5 and sqrt(2), ReLU6's Clip
bounds, attention scales ... as scalar Constants); this matches modelstat's
convention ("float and 8-bit initializers and non-scalar Constant tensors").
--include-scalar-constants counts them too. Each tensor is counted once, however many nodes use
it. Element counts come from the tensor dims; the model is read with
load_external_data=False and no weight bytes are ever read, so skeleton
models whose external data files are absent work too.

initializer_params:   the part of params that comes from initializers.
constant_params:      the part that comes from Constant nodes.
scalar_constant_elements: float/8-bit elements of single-element Constants
                      (excluded from params unless --include-scalar-constants).
initializer_elements: elements of all initializers, any dtype.
constant_elements:    elements of all Constant-node "value" tensors, any dtype.
by_dtype:             elements per dtype over initializers and Constant values.
"""

import json
import sys

import onnx
from onnx import AttributeProto, TensorProto

PARAM_DTYPES = {
    TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE,
    TensorProto.INT8, TensorProto.UINT8,
}


def numel(t):
    n = 1
    for d in t.dims:
        n *= d
    return n


def iter_graphs(g):
    yield g
    for node in g.node:
        for a in node.attribute:
            if a.type == AttributeProto.GRAPH:
                yield from iter_graphs(a.g)
            elif a.type == AttributeProto.GRAPHS:
                for sg in a.graphs:
                    yield from iter_graphs(sg)


def count(model, include_scalar_constants=False):
    by_dtype = {}
    init_elems = const_elems = tensors = 0
    params = {"init": 0, "const": 0, "scalar": 0}

    def add(t, kind):
        nonlocal tensors
        n = numel(t)
        name = TensorProto.DataType.Name(t.data_type)
        by_dtype[name] = by_dtype.get(name, 0) + n
        tensors += 1
        if t.data_type in PARAM_DTYPES:
            if kind == "const" and n <= 1:
                params["scalar"] += n
                if include_scalar_constants:
                    params["const"] += n
            else:
                params[kind] += n
        return n

    for g in iter_graphs(model.graph):
        for t in g.initializer:
            init_elems += add(t, "init")
        for node in g.node:
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                for a in node.attribute:
                    if a.name == "value" and a.type == AttributeProto.TENSOR:
                        const_elems += add(a.t, "const")
    return {
        "params": params["init"] + params["const"],
        "initializer_params": params["init"],
        "constant_params": params["const"],
        "scalar_constant_elements": params["scalar"],
        "initializer_elements": init_elems,
        "constant_elements": const_elems,
        "by_dtype": dict(sorted(by_dtype.items())),
        "tensors": tensors,
    }


def count_file(path, include_scalar_constants=False):
    return count(onnx.load(path, load_external_data=False), include_scalar_constants)


def main(argv):
    args = argv[1:]
    scalars = "--include-scalar-constants" in args
    args = [a for a in args if a != "--include-scalar-constants"]
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print(json.dumps(count_file(args[0], scalars)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
