#!/usr/bin/python3
"""Two modelstat builds side by side, interleaved, in fresh processes.

    /usr/bin/python3 bench/before_after.py --before OLD_BIN --after NEW_BIN \
        [--models vgg16] [--synthetic-nodes 100000] [--synthetic-branched-nodes N] [--repeat 7] [--profile vgg16] [--out FILE]

For every model (torchvision exports cached like bench_analyzer.py does, plus
the synthetic chain of --synthetic-nodes nodes) it runs
`BIN analyze FILE --format json -o /dev/null` --repeat times per binary,
alternating before / after so that drift on a shared machine hits both alike,
and reports the median wall time and the maximum peak RSS (GNU time %M).
With --profile NAME it also runs `BIN profile FILE` (one thread, a short
budget, no per-layer pass) a few times per binary and reports its peak RSS
beside the model's weight bytes: weights held once means RSS ~ weights + the
runtime's own footprint. OPENBLAS_CORETYPE is unset for the children.
"""

import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))

from bench_analyzer import measure, synthetic_branched, synthetic_chain  # noqa: E402


def interleaved(cmds, repeat):
    """cmds: {label: argv}. Returns {label: {"walls": [...], "rss": [...], "error": str|None}}."""
    out = {k: {"walls": [], "rss": [], "error": None} for k in cmds}
    for _ in range(repeat):
        for label, cmd in cmds.items():
            wall, rss, rc, tail = measure(cmd)
            if rc != 0:
                out[label]["error"] = f"exit {rc}: {tail}"
                continue
            out[label]["walls"].append(wall)
            out[label]["rss"].append(rss)
    return out


ERRORS = []


def cell(r):
    if r["error"]:
        ERRORS.append(r["error"])
    if r["error"] and not r["walls"]:
        return "failed", "-"
    return f"{statistics.median(r['walls']):.3f}", f"{max(r['rss']) / 2**20:.0f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--models", nargs="*", default=["vgg16"])
    ap.add_argument("--synthetic-nodes", type=int, default=100000)
    ap.add_argument("--synthetic-branched-nodes", type=int, default=0,
                    help="nodes in bench_analyzer.py's synthetic branched graph; 0 (default) to skip it")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--profile", nargs="*", default=[], help="models to profile (peak RSS)")
    ap.add_argument("--profile-repeat", type=int, default=3)
    ap.add_argument("--workdir", default=os.path.join(HERE, "..", "build", "bench_models"))
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    os.environ.pop("OPENBLAS_CORETYPE", None)
    os.makedirs(args.workdir, exist_ok=True)
    from check_torchvision import cached_export

    files = []
    for name in sorted(set(args.models) | set(args.profile)):
        path, _, _ = cached_export(name, args.workdir, 13)
        files.append((name, path))
    if args.synthetic_nodes > 0:
        n = args.synthetic_nodes
        files.append((f"synthetic chain ({n} nodes)",
                      synthetic_chain(os.path.join(args.workdir, f"synthetic_chain_{n}.onnx"), n)))
    if args.synthetic_branched_nodes > 0:
        n = args.synthetic_branched_nodes
        files.append((f"synthetic branched ({n} nodes)",
                      synthetic_branched(os.path.join(args.workdir, f"synthetic_branched_{n}.onnx"), n)))
    bins = {"before": args.before, "after": args.after}
    lines = ["| model | file MB | before s | after s | change | before peak RSS MB | after peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, path in files:
        if label in args.profile and label not in args.models:
            continue
        print(f"# analyze {label}", file=sys.stderr)
        r = interleaved({k: [b, "analyze", path, "--format", "json", "-o", "/dev/null"] for k, b in bins.items()},
                        args.repeat)
        (bs, brss), (as_, arss) = cell(r["before"]), cell(r["after"])
        change = (f"{(float(as_) / float(bs) - 1) * 100:+.1f}%" if "failed" not in (bs, as_) else "-")
        lines.append(f"| {label} | {os.path.getsize(path) / 1e6:.1f} | {bs} | {as_} | {change} | {brss} | {arss} |")
    if args.profile:
        lines += ["", "| profile | weights MB | before peak RSS MB | after peak RSS MB | before s | after s |",
                  "|---|---:|---:|---:|---:|---:|"]
        import onnx
        for label, path in files:
            if label not in args.profile:
                continue
            m = onnx.load(path, load_external_data=False)
            weights = sum(len(t.raw_data) or 4 * len(t.float_data) for t in m.graph.initializer)
            print(f"# profile {label}", file=sys.stderr)
            r = interleaved({k: [b, "profile", path, "--threads", "1", "--warmup", "1", "--warmup-time", "0",
                                 "--iters", "3", "--min-time", "0", "--max-time", "1", "--no-layers",
                                 "-f", "json", "-o", "/dev/null"] for k, b in bins.items()},
                            args.profile_repeat)
            (bs, brss), (as_, arss) = cell(r["before"]), cell(r["after"])
            lines.append(f"| {label} | {weights / 2**20:.0f} | {brss} | {arss} | {bs} | {as_} |")
    lines += [f"- failed: {e}" for e in ERRORS]
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as fh:
            print("\n".join(lines), file=fh)
    return 1 if ERRORS else 0


if __name__ == "__main__":
    sys.exit(main())
