#!/usr/bin/python3
"""Benchmark modelstat against onnx's Python shape inference.

    /usr/bin/python3 bench/bench_analyzer.py --modelstat BIN \
        [--models vgg16 resnet50] [--workdir DIR] [--repeat 5] [--out FILE]

For every model (torchvision exports, cached in --workdir exactly like
tests/e2e/check_torchvision.py does, plus a synthetic 100,000-node graph)
it runs, each time in a fresh child process:

  onnx:      python3 -c "import onnx; onnx.shape_inference.infer_shapes(onnx.load(p))"
  modelstat: BIN analyze FILE --format json -o /dev/null

--repeat times each, and reports the median wall time, the median CPU time
(user + system: the figure to compare on a busy machine) and the maximum peak
RSS (GNU /usr/bin/time %M of that one child; os.wait4 fallback), the file
size, the speed-up (onnx median / modelstat median) and peak RSS / file size.
A "python + import onnx" row gives the fixed interpreter start-up cost included in every onnx
number. Prints a Markdown table to stdout (and to --out FILE).
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "e2e"))

ONNX_SNIPPET = ("import sys, onnx; "
                "onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]))")
IMPORT_SNIPPET = "import onnx"


TIME_BIN = "/usr/bin/time"


def measure(cmd):
    """Run cmd once in a fresh child; returns (wall_s, peak_rss_bytes, rc, stderr_tail, cpu_s).

    cpu_s is the child's user + system CPU time: on a busy machine the wall
    time is mostly waiting for a CPU, and the CPU time is the figure to compare.

    Peak RSS comes from GNU time (/usr/bin/time -f %M), which forks the
    command from its own tiny process. Reading ru_maxrss of a child forked
    straight from this (large) Python process would be wrong: Linux carries
    the pre-exec high-water mark of the forked copy of the parent into the
    child's ru_maxrss. Without /usr/bin/time we fall back to os.wait4 and
    the numbers are only upper bounds (noted in the report).
    """
    if os.access(TIME_BIN, os.X_OK):
        rfd, wfd = os.pipe()
        full = [TIME_BIN, "-f", "%U %S %M %x", "-o", f"/dev/fd/{wfd}", "--"] + list(cmd)
        t0 = time.perf_counter()
        proc = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                pass_fds=(wfd,))
        os.close(wfd)
        err = proc.stderr.read()
        proc.wait()
        wall = time.perf_counter() - t0
        with os.fdopen(rfd) as fh:
            report = fh.read().split()
        tail = "\n".join(err.decode("utf-8", "replace").strip().splitlines()[-3:])
        try:
            cpu = float(report[-4]) + float(report[-3])
            rss_kib, rc = int(report[-2]), int(report[-1])
        except (IndexError, ValueError):
            return wall, 0, proc.returncode or 1, tail or "no report from /usr/bin/time", 0.0
        return wall, rss_kib * 1024, rc, tail, cpu
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Read stderr before waiting so a chatty child cannot block on a full pipe.
    err = proc.stderr.read()
    proc.stderr.close()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss = ru.ru_maxrss * 1024  # Linux: KiB
    tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
    return wall, rss, proc.returncode, "\n".join(tail), ru.ru_utime + ru.ru_stime


def bench(cmd, repeat):
    walls, rsss, cpus, failure = [], [], [], None
    for _ in range(repeat):
        wall, rss, rc, tail, cpu = measure(cmd)
        if rc != 0:
            failure = f"exit {rc}: {tail}"
            break
        walls.append(wall)
        rsss.append(rss)
        cpus.append(cpu)
    if failure:
        return {"error": failure}
    return {"median_s": statistics.median(walls), "min_s": min(walls),
            "median_cpu_s": statistics.median(cpus), "max_rss": max(rsss), "runs": len(walls)}


def cached(path, nodes):
    """Whether path holds a model of `nodes` nodes already (a synthetic graph made before)."""
    import onnx
    if not os.path.exists(path):
        return False
    try:
        return len(onnx.load(path, load_external_data=False).graph.node) == nodes
    except Exception:
        return False


def synthetic_chain(path, nodes):
    """nodes/2 x (Add with a shared 64-float initializer, Relu) on a [1,64] tensor."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    if cached(path, nodes):
        return path
    c = numpy_helper.from_array(np.linspace(-1, 1, 64, dtype=np.float32).reshape(1, 64), "c")
    node_list = []
    prev = "x"
    for i in range(nodes):
        out = f"t{i}" if i < nodes - 1 else "y"
        if i % 2 == 0:
            node_list.append(helper.make_node("Add", [prev, "c"], [out], name=f"add_{i}"))
        else:
            node_list.append(helper.make_node("Relu", [prev], [out], name=f"relu_{i}"))
        prev = out
    g = helper.make_graph(node_list, "synthetic_chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
                          initializer=[c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="modelstat/bench_analyzer.py")
    m.ir_version = 8
    onnx.save(m, path)
    return path


def synthetic_branched(path, nodes, skip=8):
    """A graph of the shape a network has, not a chain: nodes/6 blocks of
    MatMul (a shared 64x64 weight) -> Relu, Sigmoid of the block input, their
    Mul, an Add of a skip from `skip` blocks back (long-lived tensors, reads
    far from their producer), and a Reshape to a constant shape (a value the
    loader folds); names as exporters write them ("/blocks.12/mlp/MatMul",
    "/blocks.12/mlp/MatMul_output_0"), longer than a short-string buffer."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    if cached(path, nodes):
        return path
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), "w"),
             numpy_helper.from_array(np.array([1, 64], dtype=np.int64), "shape")]
    node_list, outputs = [], ["x"]
    block = 0
    while len(node_list) < nodes:
        p = f"/blocks.{block}"
        x = outputs[-1]
        skip_from = outputs[max(0, len(outputs) - 1 - skip)]
        steps = [("MatMul", f"{p}/mlp/MatMul", [x, "w"]),
                 ("Relu", f"{p}/mlp/act/Relu", [f"{p}/mlp/MatMul_output_0"]),
                 ("Sigmoid", f"{p}/gate/Sigmoid", [x]),
                 ("Mul", f"{p}/gate/Mul", [f"{p}/mlp/act/Relu_output_0", f"{p}/gate/Sigmoid_output_0"]),
                 ("Add", f"{p}/skip/Add", [f"{p}/gate/Mul_output_0", skip_from]),
                 ("Reshape", f"{p}/Reshape", [f"{p}/skip/Add_output_0", "shape"])]
        for op, name, ins in steps[:nodes - len(node_list)]:
            node_list.append(helper.make_node(op, ins, [name + "_output_0"], name=name))
        outputs.append(node_list[-1].output[0])
        block += 1
    node_list[-1].output[0] = "y"
    g = helper.make_graph(node_list, "synthetic_branched",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="modelstat/bench_analyzer.py")
    m.ir_version = 8
    onnx.save(m, path)
    return path


def node_count(path):
    import onnx
    return len(onnx.load(path, load_external_data=False).graph.node)


def fmt_s(r):
    return f"{r['median_s']:.3f}" if "median_s" in r else "error"


def fmt_cpu(r):
    return f"{r['median_cpu_s']:.3f}" if "median_cpu_s" in r else "error"


def fmt_mb(r):
    return f"{r['max_rss'] / 2**20:.0f}" if "max_rss" in r else "-"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", required=True, help="path to the modelstat binary")
    ap.add_argument("--models", nargs="*", default=["vgg16", "resnet50"],
                    help="torchvision model names (default: vgg16 resnet50)")
    ap.add_argument("--workdir", default=os.path.join(REPO, "build", "bench_models"),
                    help="where exported / generated models are cached")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--synthetic-nodes", type=int, default=100000,
                    help="nodes in the synthetic Add/Relu chain; 0 to skip it")
    ap.add_argument("--synthetic-branched-nodes", type=int, default=0,
                    help="nodes in a synthetic branched graph (MatMul, Relu, Sigmoid, Mul, a skip Add, "
                         "Reshape per block; exporter-style names); 0 (default) to skip it")
    ap.add_argument("--out", help="also write the Markdown report to FILE")
    args = ap.parse_args(argv)
    if not os.access(args.modelstat, os.X_OK):
        print(f"bench_analyzer: {args.modelstat} is not an executable file", file=sys.stderr)
        return 2
    os.makedirs(args.workdir, exist_ok=True)

    from check_torchvision import cached_export  # tests/e2e, same cache format

    files = []
    for name in args.models:
        path, _, cached = cached_export(name, args.workdir, args.opset)
        print(f"# {'cached' if cached else 'exported'} {name}: {path}", file=sys.stderr)
        files.append((name, path))
    if args.synthetic_nodes > 0:
        n = args.synthetic_nodes
        label = f"synthetic chain ({n // 1000}k nodes)" if n % 1000 == 0 else f"synthetic chain ({n} nodes)"
        path = synthetic_chain(os.path.join(args.workdir, f"synthetic_chain_{n}.onnx"), n)
        files.append((label, path))
    if args.synthetic_branched_nodes > 0:
        n = args.synthetic_branched_nodes
        path = synthetic_branched(os.path.join(args.workdir, f"synthetic_branched_{n}.onnx"), n)
        files.append((f"synthetic branched ({n} nodes)", path))

    py = sys.executable
    baseline = bench([py, "-c", IMPORT_SNIPPET], args.repeat)
    rows = []
    for label, path in files:
        print(f"# measuring {label} ({args.repeat} runs each)", file=sys.stderr)
        ref = bench([py, "-c", ONNX_SNIPPET, path], args.repeat)
        ms = bench([args.modelstat, "analyze", path, "--format", "json", "-o", "/dev/null"],
                   args.repeat)
        rows.append((label, path, ref, ms))

    import onnx
    lines = [
        f"modelstat `analyze --format json -o /dev/null` vs `onnx.shape_inference.infer_shapes(onnx.load(p))`; "
        f"median wall time and CPU time (user + system) of {args.repeat} fresh processes each, peak RSS = max over those runs "
        + ("(GNU time %M)." if os.access(TIME_BIN, os.X_OK)
           else "(os.wait4 ru_maxrss; /usr/bin/time missing, so RSS includes this script's own "
                "pre-exec footprint: upper bounds only)."),
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}, onnx {onnx.__version__}.",
        "",
        "| model | file MB | nodes | onnx s | onnx CPU s | onnx peak RSS MB | modelstat s | modelstat CPU s "
        "| modelstat peak RSS MB | speed-up | onnx RSS / file | modelstat RSS / file |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, path, ref, ms in rows:
        size = os.path.getsize(path)
        speed = (f"{ref['median_s'] / ms['median_s']:.1f}x"
                 if "median_s" in ref and "median_s" in ms and ms["median_s"] > 0 else "-")
        r_ref = f"{ref['max_rss'] / size:.2f}" if "max_rss" in ref else "-"
        r_ms = f"{ms['max_rss'] / size:.2f}" if "max_rss" in ms else "-"
        lines.append(f"| {label} | {size / 1e6:.1f} | {node_count(path)} | {fmt_s(ref)} | {fmt_cpu(ref)} "
                     f"| {fmt_mb(ref)} | {fmt_s(ms)} | {fmt_cpu(ms)} | {fmt_mb(ms)} | {speed} | {r_ref} | {r_ms} |")
    lines.append(f"| (python + `import onnx` only) | - | - | {fmt_s(baseline)} | {fmt_cpu(baseline)} "
                 f"| {fmt_mb(baseline)} | - | - | - | - | - | - |")
    errors = [(label, which, r["error"]) for label, _, ref, ms in rows
              for which, r in (("onnx", ref), ("modelstat", ms)) if "error" in r]
    if errors:
        lines.append("")
        for label, which, err in errors:
            lines.append(f"- {label}: {which} failed ({err})")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(report)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
