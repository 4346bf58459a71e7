#!/usr/bin/python3
"""What ran is what was counted (issue 32, items 3 and 4), end to end.

    /usr/bin/python3 tests/e2e/check_run_follows_inputs.py --modelstat BIN --workdir DIR

Builds two small models with onnx.helper and profiles them with `BIN profile -f json`:

1. sample_rate_switch.onnx: inputs sr (int64 scalar) and x (float32 1x64);
   y = If(sr == 16000, then: (x @ A) @ B, else: x @ C), A 64x64, B and C
   64x256. MACs by hand: then 64*64 + 64*256 = 20480, else 64*256 = 16384.
   The static analysis cannot know sr, so it counts the costlier branch
   (then). Profiled with --value sr=16000 and --value sr=8000 (and with
   --inputs DIR holding sr = 8000 as input_0.pb): the If takes the branch
   the value selects, a notice and "control_flow" say which, the context
   lists the seed and the values, and the If row's MACs and the totals are
   the taken branch's (20480 or 16384).
2. nonzero_chain.onnx: x (float32 1x16); nz = NonZero(x > 0) (int64 2xK, K
   the count of positive values: data-dependent), y = W @ Cast(nz) with W
   8x2, so MatMul MACs = 8*2*K = 16K. Given x with K = 5 positive values
   (--value), the MatMul row is costed on the observed shapes: status exact,
   "shapes": "observed", 80 MACs, and no "no exact cost" notice remains.

Bad --value / --inputs uses exit 2 with a message naming the flag and the input.
Exit status: 0 all checks passed, 1 a check failed.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        FAILURES.append(what)


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)


def sample_rate_switch(path):
    rng = np.random.default_rng(0)
    mat = lambda name, shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
    then_g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "A"], ["h"], name="then_mm1"),
         helper.make_node("MatMul", ["h", "B"], ["y_then"], name="then_mm2")],
        "then_branch", [], [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, [1, 256])],
        initializer=[mat("A", (64, 64)), mat("B", (64, 256))])
    else_g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "C"], ["y_else"], name="else_mm")],
        "else_branch", [], [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, [1, 256])],
        initializer=[mat("C", (64, 256))])
    graph = helper.make_graph(
        [helper.make_node("Equal", ["sr", "rate"], ["is16k"], name="is16k"),
         helper.make_node("If", ["is16k"], ["y"], name="rate_switch", then_branch=then_g, else_branch=else_g)],
        "sample_rate_switch",
        [helper.make_tensor_value_info("sr", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
        initializer=[numpy_helper.from_array(np.array(16000, dtype=np.int64), "rate")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def nonzero_chain(path):
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(8, 2), "W")
    zero = numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")
    graph = helper.make_graph(
        [helper.make_node("Greater", ["x", "zero"], ["positive"], name="positive"),
         helper.make_node("NonZero", ["positive"], ["nz"], name="nonzero"),
         helper.make_node("Cast", ["nz"], ["nzf"], to=TensorProto.FLOAT, name="to_float"),
         helper.make_node("MatMul", ["W", "nzf"], ["y"], name="project")],
        "nonzero_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, None])], initializer=[w, zero])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


QUICK = ["--warmup", "1", "--warmup-time", "0", "--iters", "3", "--min-time", "0", "--max-time", "0.2",
         "--threads", "1"]


def profile(bin_path, model, *flags):
    cmd = [bin_path, "profile", model, "-f", "json", *QUICK, *flags]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        print(" ".join(cmd) + "\n" + done.stderr)
        check(False, "profile exits 0: " + " ".join(flags))
        return None
    return json.loads(done.stdout)


def node(doc, name):
    for n in doc.get("analysis", doc)["nodes"]:
        if n["name"] == name:
            return n
    return None


def notices(doc):
    return doc["notices"] + doc["analysis"]["notices"]


def check_branch(doc, label, branch, macs):
    if doc is None:
        return
    flow = [c for c in doc["control_flow"] if c["node"] == "rate_switch"]
    check(len(flow) == 1 and set(flow[0]["taken"]) == {branch} and flow[0]["counted"],
          f"{label}: control_flow says rate_switch took {branch} in every input set")
    check(any("If branches taken" in n and f"rate_switch {branch}" in n for n in notices(doc)),
          f"{label}: a notice names the branch rate_switch took ({branch})")
    row = node(doc, "rate_switch")
    check(row is not None and row["macs"] == macs and row["flops"] == 2 * macs,
          f"{label}: the If row counts the {branch} branch: {macs} MACs, {2 * macs} FLOPs "
          f"(got {row and row['macs']}, {row and row['flops']})")
    check(doc["analysis"]["totals"]["macs"] == macs, f"{label}: total MACs {macs} "
          f"(got {doc['analysis']['totals']['macs']})")
    inside = [n["name"] for n in doc["analysis"].get("subgraph_nodes", [])]
    expected = ["rate_switch/then_branch/then_mm1", "rate_switch/then_branch/then_mm2"] if branch == "then" \
        else ["rate_switch/else_branch/else_mm"]
    check(inside == expected, f"{label}: the subgraph rows are the {branch} branch's ({inside})")


def usage_error(bin_path, model, flags, words):
    done = subprocess.run([bin_path, "profile", model, *QUICK, *flags], capture_output=True, text=True)
    message = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    check(done.returncode == 2 and all(w in message for w in words),
          f"{' '.join(flags)}: exit 2 naming {words} (got {done.returncode}: {message})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--modelstat", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    switch = os.path.join(args.workdir, "sample_rate_switch.onnx")
    chain = os.path.join(args.workdir, "nonzero_chain.onnx")
    sample_rate_switch(switch)
    nonzero_chain(chain)

    # Static analysis: sr unknown, the costlier branch (then) is counted.
    static = json.loads(subprocess.run([args.modelstat, switch, "-f", "json"], capture_output=True,
                                       text=True, check=True).stdout)
    check(node(static, "rate_switch")["macs"] == 20480, "analysis alone counts the costlier branch (20480 MACs)")

    fast = profile(args.modelstat, switch, "--value", "sr=16000")
    check_branch(fast, "--value sr=16000", "then", 20480)
    if fast:
        given = fast["context"]["given_inputs"]
        check(fast["context"]["seed"] == 0x5eed, "context.seed is the default seed 24301")
        check(len(given) == 1 and given[0]["name"] == "sr" and given[0]["values"] == "16000"
              and given[0]["source"] == "--value", f"context.given_inputs lists sr = 16000 ({given})")
    slow = profile(args.modelstat, switch, "--value", "sr=8000", "--seed", "7")
    check_branch(slow, "--value sr=8000", "else", 16384)
    if slow:
        check(slow["context"]["seed"] == 7, "context.seed follows --seed")
        check(any("the count follows what ran" in n and "rate_switch" in n for n in notices(slow)),
              "--value sr=8000: a notice says the count changed to the branch that ran")
        check(any(l["name"] == "rate_switch/else_branch/else_mm" for l in slow["subgraph_layers"]),
              "--value sr=8000: the timed subgraph rows are the else branch's")

    # --inputs: a test case's input_N.pb; input_0.pb names sr, so the order of the files does not matter.
    case = os.path.join(args.workdir, "sr8000_case", "test_data_set_0")
    os.makedirs(case, exist_ok=True)
    with open(os.path.join(case, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.array(8000, dtype=np.int64), "sr").SerializeToString())
    with open(os.path.join(case, "input_1.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.ones((1, 64), dtype=np.float32), "x").SerializeToString())
    from_files = profile(args.modelstat, switch, "--inputs", os.path.dirname(case))
    check_branch(from_files, "--inputs (sr = 8000)", "else", 16384)
    if from_files:
        sources = sorted(os.path.basename(g["source"]) for g in from_files["context"]["given_inputs"])
        check(sources == ["input_0.pb", "input_1.pb"], f"context.given_inputs names the files ({sources})")

    usage_error(args.modelstat, switch, ["--value", "sr=fast"], ["--value sr=fast", "not an integer", "sr"])
    usage_error(args.modelstat, switch, ["--value", "sr=1,2"], ["--value sr=1,2", "1 element(s), 2 value(s)"])
    usage_error(args.modelstat, switch, ["--value", "rate=1"], ["--value rate=1", "no graph input 'rate'"])
    usage_error(args.modelstat, switch, ["--value", "x=1"], ["--value x=1", "64 element(s), 1 value(s)"])
    bad = os.path.join(args.workdir, "bad_case")
    os.makedirs(bad, exist_ok=True)
    with open(os.path.join(bad, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.ones((1, 32), dtype=np.float32), "x").SerializeToString())
    usage_error(args.modelstat, switch, ["--value", "sr=1", "--inputs", bad], ["input_0.pb", "disagree", "'x'"])

    # Item 4: shapes seen at run time. x has K = 5 positive values: MatMul MACs = 8 * 2 * 5 = 80.
    x = "-1,2,-3,4,-5,6,-7,8,-9,10,-11,-12,-13,-14,-15,-16"
    static = json.loads(subprocess.run([args.modelstat, chain, "-f", "json"], capture_output=True,
                                       text=True, check=True).stdout)
    check(node(static, "project")["status"] == "unknown_shape",
          "analysis alone cannot size the MatMul after NonZero")
    observed = profile(args.modelstat, chain, "--value", "x=" + x)
    if observed:
        row = node(observed, "project")
        check(row["status"] == "exact" and row.get("shapes") == "observed" and row["macs"] == 80
              and row["flops"] == 160,
              f"MatMul after NonZero costed on the observed shapes: exact, observed, 80 MACs, 160 FLOPs ({row})")
        check(node(observed, "positive").get("shapes") is None, "a node sized statically carries no 'shapes' label")
        totals = observed["analysis"]["totals"]
        check(totals["nodes_exact"] == totals["nodes"] and totals["macs"] == 80,
              f"totals complete: every node exact, 80 MACs ({totals['nodes_exact']}/{totals['nodes']}, "
              f"{totals['macs']})")
        check(not any("no exact cost" in n for n in notices(observed)), "no 'no exact cost' notice remains")
        check(any("counted on the shapes the run observed" in n for n in notices(observed)),
              "a notice says which nodes were counted on observed shapes")
        layer = [l for l in observed["layers"] if l["name"] == "project"]
        check(len(layer) == 1 and layer[0].get("shapes") == "observed", "the timed layer row is labelled too")
        table = subprocess.run([args.modelstat, "profile", chain, *QUICK, "--value", "x=" + x],
                               capture_output=True, text=True).stdout
        check("counted on the shapes the run observed" in table, "the table explains the '*' marker")
    print(f"{len(FAILURES)} check(s) failed" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
