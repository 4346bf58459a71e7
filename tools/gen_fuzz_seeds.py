#!/usr/bin/python3
"""Writes fuzz/seeds/: hand-crafted model files aimed at the executor's load
path (the ones tests/profiler/cli_profile_test.cc refuses, as files), small
models that reach weight materialisation by each route (inline raw_data, typed
fields, a stripped payload, a Constant node, a skeleton weight, a subgraph
constant), and a few test-data TensorProtos from ONNX's backend tests.

    /usr/bin/python3 tools/gen_fuzz_seeds.py      (Debian's python3-onnx)
"""
import os
import shutil
import sys

import onnx
from onnx import TensorProto, helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "seeds")
TESTDATA = "/usr/share/libonnx-testdata/data/node"


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field, written by hand."""
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def entry(key, value):
    e = onnx.StringStringEntryProto(key=key, value=value)
    return e


def crafted(name, weight, elements, extra_wire=b""):
    """X[1,n] + W[1,n] -> Y with W appended as raw wire bytes (so it may carry
    what protobuf's API would not write)."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "W"], ["Y"], name="add")], "crafted",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, elements])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, elements])])
    model = onnx.ModelProto(ir_version=8)
    model.opset_import.add().version = 13
    g = graph.SerializeToString() + field(5, weight.SerializeToString() + extra_wire)
    write(name, model.SerializeToString() + field(7, g))


def weight(elements, **kw):
    t = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1, elements])
    t.raw_data = b"\0" * (4 * elements)
    for k, v in kw.items():
        setattr(t, k, v)
    return t


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    big, small = 4096, 8
    for name, key, value, n in [
        ("inband_huge_offset.onnx", "modelstat.payload", "9:9223372036854775800:100", big),
        ("inband_negative_length.onnx", "modelstat.payload", "9:-5:-1", big),
        ("inband_range_over_header.onnx", "modelstat.payload", "9:0:32", small),
        ("inband_marker_on_unstripped.onnx", "modelstat.stripped_payload_bytes", "32", small),
    ]:
        w = weight(n)
        w.external_data.append(entry(key, value))
        crafted(name, w, n)
    for name, key, value in [("external_offset_overflows.onnx", "offset", "9223372036854775800"),
                             ("external_negative_length.onnx", "length", "-7")]:
        w = weight(big)
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        w.external_data.extend([entry("location", "weights.bin"), entry(key, value)])
        crafted(name, w, big)
    w = weight(big)
    w.raw_data = w.raw_data[:-4]
    crafted("raw_data_shorter_than_dims.onnx", w, big)
    w = weight(big)
    w.ClearField("raw_data")
    w.data_type = TensorProto.INT64
    crafted("packed_varint_never_ends.onnx", w, big, field(7, b"\xff" * 2000))
    w = weight(big)
    w.dims[1] = 1 << 40
    crafted("dims_claim_2_to_40_elements.onnx", w, big)
    w = weight(small)
    w.ClearField("raw_data")
    w.float_data.extend([0.5] * small)
    crafted("typed_float_data.onnx", w, small)
    w = weight(small)
    w.ClearField("raw_data")
    crafted("skeleton_weight.onnx", w, small)

    # A Constant node and an If whose branches hold constants of their own.
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["t"], value=helper.make_tensor("tv", TensorProto.FLOAT, [2], [1, 2]))],
        "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    else_g = helper.make_graph([], "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
                               initializer=[helper.make_tensor("e", TensorProto.FLOAT, [2], [3, 4])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value_floats=[1.0, 2.0]),
         helper.make_node("Greater", ["x", "c"], ["gt"]),
         helper.make_node("ReduceMin", ["gt_f"], ["m"], keepdims=0),
         helper.make_node("Cast", ["gt"], ["gt_f"], to=TensorProto.FLOAT),
         helper.make_node("Cast", ["m"], ["cond"], to=TensorProto.BOOL),
         helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
        "constants", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    write("constants_and_if.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
          .SerializeToString())

    # Test-data files as verify reads them.
    for case in ["test_abs", "test_cast_FLOAT_to_FLOAT16", "test_gather_0", "test_equal_bcast",
                 "test_cast_FLOAT_to_BFLOAT16"]:
        src = os.path.join(TESTDATA, case, "test_data_set_0", "input_0.pb")
        if os.path.exists(src):
            shutil.copy(src, os.path.join(OUT, case + ".input_0.pb"))
    print("wrote", len(os.listdir(OUT)), "seeds to", os.path.normpath(OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
