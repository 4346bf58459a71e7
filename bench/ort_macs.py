#!/usr/bin/python3
"""An independent MAC count of a model: the shapes ONNX Runtime observed while
running it (its profile records every node's input and output shapes,
subgraph nodes included), with the textbook count of each contraction, beside
`modelstat`'s total for the same bound inputs.

    /usr/bin/python3 bench/ort_macs.py MODEL SEED NAME=DIMS|NAME=iVALUE ... [--modelstat BIN] [--ort NODE_MODULES]
                                       [-- MODELSTAT FLAGS, e.g. --branch If_0=then]

Contractions counted (MACs): Conv, ConvInteger, QLinearConv (N x Cout x output
positions x Cin/group x kernel elements, from the weight's shape), ConvTranspose (input positions x
the weight's elements per input channel), MatMul / MatMulInteger / QLinearMatMul / Gemm (output elements x
K), LSTM / GRU / RNN (steps x batch x directions x gates*H x (input + H)).
Everything else: 0 MACs (modelstat's convention, docs/COST_MODEL.md).
"""
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ort_case  # noqa: E402


def shapes(entries):
    out = []
    for e in entries or []:
        for _, dims in e.items():
            out.append([int(d) for d in dims])
    return out


def macs(op, ins, outs):
    prod = lambda v: math.prod(v) if v else 1  # noqa: E731
    if not outs:
        return 0
    y = outs[0]
    if op in ("Conv", "FusedConv", "ConvInteger") and len(ins) >= 2:
        w = ins[1]
        return prod(y) * prod(w[1:])  # each output element: Cin/group x kernel
    if op == "QLinearConv" and len(ins) >= 4:
        w = ins[3]  # x, x_scale, x_zero_point, w, ...
        return prod(y) * prod(w[1:])
    if op == "ConvTranspose" and len(ins) >= 2:
        x, w = ins[0], ins[1]
        return prod(x) * prod(w[1:])  # each input element meets Cout/group x kernel weights
    # ORT's profile may leave initializer inputs out (MatMul's B): A and the
    # output are enough for MatMul and Gemm.
    if op in ("MatMul", "FusedMatMul", "MatMulInteger", "QLinearMatMul") and len(ins) >= 1:
        a = ins[0]
        k = a[-1] if a else 1
        return prod(y) * k
    if op in ("Gemm", "FusedGemm") and len(ins) >= 1:
        m = y[0] if y else 1
        k = prod(ins[0]) // max(m, 1)
        return prod(y) * k
    if op in ("LSTM", "GRU", "RNN") and len(ins) < 3:
        raise SystemExit(f"{op}: ONNX Runtime's profile does not give W and R shapes; no independent count")
    if op in ("LSTM", "GRU", "RNN"):
        x, w, r = ins[0], ins[1], ins[2]
        seq, batch = x[0], x[1]
        dirs, gates_h, inp = w[0], w[1], w[2]
        hidden = r[2]
        return seq * batch * dirs * gates_h * (inp + hidden)
    return 0


def constant_dims(node):
    """The dims of a Constant node's value (paddle2onnx and older tf2onnx /
    keras2onnx store weights so): its tensor attribute's, or a scalar / list
    attribute's; None when it has none of them."""
    import onnx
    for a in node.attribute:
        if a.name in ("value", "sparse_value") and a.type == onnx.AttributeProto.TENSOR:
            return list(a.t.dims)
        if a.name == "sparse_value" and a.type == onnx.AttributeProto.SPARSE_TENSOR:
            return list(a.sparse_tensor.dims)
        if a.name in ("value_float", "value_int", "value_string"):
            return []
        if a.name == "value_floats":
            return [len(a.floats)]
        if a.name == "value_ints":
            return [len(a.ints)]
        if a.name == "value_strings":
            return [len(a.strings)]
    return None


def graph_index(model_path):
    """Every node of the model (subgraphs included) by name, and the dims of
    every constant: initializers and Constant nodes' values. ORT's profile
    lists the shapes of the inputs that are not constants only (a
    ConvTranspose whose weight is a Constant node would otherwise be counted
    on its input's shape alone)."""
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    nodes, inits = {}, {}

    def walk(g):
        for t in g.initializer:
            inits[t.name] = list(t.dims)
        for n in g.node:
            nodes.setdefault(n.name, n)
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1:
                dims = constant_dims(n)
                if dims is not None:
                    inits[n.output[0]] = dims
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sub in a.graphs:
                    walk(sub)
    walk(m.graph)
    return nodes, inits


def full_inputs(node, observed, inits):
    """The node's input shapes in input order: initializers from the file,
    the others from the profile, in order."""
    if node is None:
        return observed
    out, k = [], 0
    for name in node.input:
        if not name:
            out.append([])
        elif name in inits:
            out.append(inits[name])
        elif k < len(observed):
            out.append(observed[k])
            k += 1
    return out


def observed_macs(model, seed, specs, ort_modules):
    """(total MACs, MACs by op type) over the shapes ONNX Runtime observed
    running `model` on the inputs bench/ort_case.py draws from `seed`."""
    nodes, inits = graph_index(model)
    case = tempfile.mkdtemp(prefix="ort_macs_")
    ort_case.main([model, case, str(seed)] + specs + ["--ort", ort_modules, "--profile"])
    events = []
    for path in glob.glob(os.path.join(case, "ort_profile*.json")):
        with open(path) as f:
            events += json.load(f)
    shutil.rmtree(case, ignore_errors=True)
    total, by_op = 0, {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        args = e.get("args", {})
        op = args.get("op_name", "")
        node = nodes.get(e["name"][: -len("_kernel_time")])
        ins = full_inputs(node, shapes(args.get("input_type_shape")), inits)
        n = macs(op, ins, shapes(args.get("output_type_shape")))
        total += n
        by_op[op] = by_op.get(op, 0) + n
    return total, by_op


def main(argv):
    binary = os.path.join(HERE, "..", "build", "tools", "modelstat")
    if "--modelstat" in argv:
        k = argv.index("--modelstat")
        binary = argv[k + 1]
        del argv[k:k + 2]
    ort_modules = "/tmp/ortnode/node_modules"
    if "--ort" in argv:
        k = argv.index("--ort")
        ort_modules = argv[k + 1]
        del argv[k:k + 2]
    extra = []  # after "--": passed to modelstat (e.g. --branch If_0=then)
    if "--" in argv:
        k = argv.index("--")
        extra = argv[k + 1:]
        del argv[k:]
    model, seed, specs = argv[0], argv[1], argv[2:]
    total, by_op = observed_macs(model, seed, specs, ort_modules)
    bind = []
    for spec in specs:
        name, value = spec.split("=", 1)
        if not value.startswith("i"):
            bind += ["--input", f"{name}:{value}"]
    doc = json.loads(subprocess.run([binary, model, "-f", "json"] + bind + extra, capture_output=True, text=True,
                                    check=True).stdout)
    ours = doc["totals"]["macs"]
    print(f"{os.path.basename(model)}: ONNX Runtime's observed shapes {total:,} MACs "
          f"({', '.join(f'{k} {v:,}' for k, v in sorted(by_op.items()) if v)}); modelstat {ours:,} "
          f"({'equal' if ours == total else f'{(ours - total) / max(total, 1):+.2%}'}); "
          f"coverage {doc['totals']['nodes_exact']}/{doc['totals']['nodes']}")
    return 0 if ours == total else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
