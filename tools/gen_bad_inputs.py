#!/usr/bin/python3
"""Deterministically write the corpus of bad inputs into tests/data/bad/.

    /usr/bin/python3 tools/gen_bad_inputs.py [--out tests/data/bad]

One small file per case plus MANIFEST.tsv with the columns

    file <TAB> expected_exit <TAB> message_substring

`modelstat analyze FILE` must exit with expected_exit (2: invalid input) and
its error message, lowercased, must contain message_substring. Models are
built by hand as ModelProtos (most of them deliberately fail
onnx.checker); nothing here depends on randomness except random_bytes.onnx,
which comes from a seeded RNG, so every run writes the same bytes.

Not in the corpus, create it at test time: a directory passed as the model
path (e.g. `modelstat analyze tests/data/bad`), expected exit 2.
"""

import argparse
import os
import random

import onnx
from onnx import TensorProto, helper

IR_VERSION = 8
OPSET = 13
F = TensorProto.FLOAT

CASES = []  # (file, expected_exit, substring, builder, pending_note)


def case(file, substring, exit_code=2, pending=None):
    """pending: the file is written but its MANIFEST row is commented out
    ('#' lines are skipped by tests/tools/cli_bad_input_test.cc) until
    modelstat implements the check; the note says what is missing."""
    def deco(fn):
        CASES.append((file, exit_code, substring, fn, pending))
        return fn
    return deco


def model(nodes, inputs, outputs, initializers=(), opsets=(("", OPSET),), name="bad"):
    g = helper.make_graph(list(nodes), name, list(inputs), list(outputs),
                          initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="modelstat/gen_bad_inputs.py", producer_version="1")
    m.ir_version = IR_VERSION
    return m


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def tiny_valid_model():
    w = helper.make_tensor("W", F, [4, 4], [float(i % 7) / 7.0 for i in range(16)])
    return model([helper.make_node("MatMul", ["X", "W"], ["H"], name="mm"),
                  helper.make_node("Relu", ["H"], ["Y"], name="relu")],
                 [vi("X", [1, 4])], [vi("Y", [1, 4])], [w], name="tiny")


def write_bytes(path, data):
    with open(path, "wb") as fh:
        fh.write(data)


def parses(data):
    try:
        m = onnx.ModelProto()
        m.ParseFromString(data)
        return True
    except Exception:
        return False


# --- cases -------------------------------------------------------------------

@case("empty.onnx", "empty")
def _(path):
    write_bytes(path, b"")


@case("random_bytes.onnx", "not a valid onnx")
def _(path):
    rng = random.Random(20240601)
    data = bytes(rng.getrandbits(8) for _ in range(4096))
    assert not parses(data), "seeded random bytes happen to parse; change the seed"
    write_bytes(path, data)


@case("truncated.onnx", "not a valid onnx")
def _(path):
    # A valid model cut roughly in half. Protobuf cannot tell "truncated" from
    # "garbage" in general, so the expected message is the generic one. The
    # cut is moved back until the prefix really fails to parse (a cut that
    # lands on a field boundary would still parse).
    data = tiny_valid_model().SerializeToString()
    cut = len(data) // 2
    while parses(data[:cut]):
        cut -= 1
    write_bytes(path, data[:cut])


@case("cycle.onnx", "cycle")
def _(path):
    m = model([helper.make_node("Add", ["X", "B"], ["A"], name="add_a"),
               helper.make_node("Add", ["A", "X"], ["B"], name="add_b")],
              [vi("X", [1, 4])], [vi("B", [1, 4])])
    onnx.save(m, path)


@case("undefined_input.onnx", "undefined")
def _(path):
    m = model([helper.make_node("Add", ["X", "ghost"], ["Y"], name="add")],
              [vi("X", [1, 4])], [vi("Y", [1, 4])])
    onnx.save(m, path)


@case("negative_dim.onnx", "negative")
def _(path):
    m = model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [1, -3, 4])], [vi("Y", [1, -3, 4])])
    onnx.save(m, path)


@case("overflow_dims.onnx", "overflow")
def _(path):
    d = 2 ** 40  # 2^120 elements: the element count overflows int64
    m = model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [d, d, d])], [vi("Y", [d, d, d])])
    onnx.save(m, path)


@case("huge_dim_conv.onnx", "overflow")
def _(path):
    # Every tensor fits in int64 elements (X, Y: 2^56; W: 9*2^32) but the
    # Conv's MACs, 2^56 * 65536 * 3 * 3 ~ 2^75.2, do not.
    c, hw = 65536, 2 ** 20
    m = model([helper.make_node("Conv", ["X", "W"], ["Y"], name="conv",
                                kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
              [vi("X", [1, c, hw, hw]), vi("W", [c, c, 3, 3])],
              [vi("Y", [1, c, hw, hw])])
    onnx.save(m, path)


@case("unknown_opset.onnx", "opset")
def _(path):
    m = model([helper.make_node("Relu", ["X"], ["Y"], name="relu")],
              [vi("X", [1, 4])], [vi("Y", [1, 4])], opsets=(("", 999),))
    onnx.save(m, path)


@case("unknown_domain.onnx", "domain")
def _(path):
    m = model([helper.make_node("FancyOp", ["X"], ["Y"], name="fancy",
                                domain="com.example.custom")],
              [vi("X", [1, 4])], [vi("Y", [1, 4])],
              opsets=(("", OPSET), ("com.example.custom", 1)))
    onnx.save(m, path)


def _external_model(location, length=16, offset=0):
    w = TensorProto()
    w.name = "W"
    w.data_type = F
    w.dims.extend([4])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = w.external_data.add()
        e.key, e.value = k, v
    return model([helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
                 [vi("X", [4])], [vi("Y", [4])], [w])


@case("escaping_external.onnx", "escapes")
def _(path):
    onnx.save(_external_model("../../etc/passwd"), path)


@case("absolute_external.onnx", "escapes")
def _(path):
    onnx.save(_external_model("/etc/passwd"), path)


@case("truncated_external.onnx", "truncated")
def _(path):
    # W needs 16 bytes at offset 8 of truncated_external.onnx.data, which has 12.
    onnx.save(_external_model("truncated_external.onnx.data", length=16, offset=8), path)
    write_bytes(path + ".data", bytes(range(12)))


@case("deep_nesting.onnx", "nest")
def _(path):
    # If inside If ... 200 levels deep (then-branch nests, else-branch is an
    # Identity). Each level adds 3 protobuf message levels (Graph -> Node ->
    # Attribute -> Graph), ~600 in all: past protobuf's default recursion limit
    # of 100, so a default parser rejects the file before any graph check.
    depth = 200
    inner = helper.make_graph(
        [helper.make_node("Identity", ["X"], [f"out_{depth}"], name=f"id_{depth}")],
        f"then_{depth}", [], [vi(f"out_{depth}", [1, 4])])
    for level in range(depth - 1, -1, -1):
        other = helper.make_graph(
            [helper.make_node("Identity", ["X"], [f"else_out_{level}"], name=f"else_id_{level}")],
            f"else_{level}", [], [vi(f"else_out_{level}", [1, 4])])
        node = helper.make_node("If", ["cond"], [f"out_{level}"], name=f"if_{level}",
                                then_branch=inner, else_branch=other)
        if level == 0:
            break
        inner = helper.make_graph([node], f"then_{level}", [], [vi(f"out_{level}", [1, 4])])
    m = model([node], [vi("cond", [], TensorProto.BOOL), vi("X", [1, 4])],
              [vi("out_0", [1, 4])])
    write_bytes(path, m.SerializeToString())


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "bad"))
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    rows = ["file\texpected_exit\tmessage_substring"]
    for file, exit_code, substring, fn, pending in CASES:
        path = os.path.join(out, file)
        fn(path)
        row = f"{file}\t{exit_code}\t{substring}"
        if pending:
            rows.append(f"# pending: {pending}")
            row = "# " + row
        rows.append(row)
        print(f"{file:<28} {os.path.getsize(path):>6} bytes  exit {exit_code}  '{substring}'"
              + ("  (pending, row commented out)" if pending else ""))
    with open(os.path.join(out, "MANIFEST.tsv"), "w") as fh:
        fh.write("\n".join(rows) + "\n")
    print(f"wrote {len(CASES)} cases + MANIFEST.tsv to {out}")


if __name__ == "__main__":
    main()
