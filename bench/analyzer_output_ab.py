#!/usr/bin/python3
"""Check that two modelstat binaries write the same analysis, byte for byte.

    /usr/bin/python3 bench/analyzer_output_ab.py --before OLD_BIN --after NEW_BIN \
        [--formats table json csv] [--jobs 1] [FILE_OR_DIR ...]

For every .onnx file found (default: sample_models/, every .onnx under
tests/, /tmp/b14, the wild npm models of bench/wild_models.py under
/tmp/wild-inputs, and the 100k-node graphs in /tmp/ba) it runs
`BIN analyze FILE --format F` with each binary and compares stdout, stderr and
the exit status. The one figure that is a measurement, the analysis's own
run time (JSON "analysis_seconds", the table's "analysis time: ..." line, the
CSV's analysis_seconds), is masked before comparing. The wild models also run
with their input bindings (--input NAME:DIMS), as bench/wild_models.py does.
Prints one line per difference and a count of identical file x format pairs;
exits 1 when any pair differs. A speed-up must not change the output: this is
the check of that, not a benchmark (run it unpinned, no lock needed).
"""

import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, ".."))

MASKS = [
    (re.compile(rb'"analysis_seconds": [0-9.e+-]+'), b'"analysis_seconds": X'),
    (re.compile(rb"analysis time: [^\n]*"), b"analysis time: X"),
    (re.compile(rb"analysis_seconds,[0-9.e+-]+"), b"analysis_seconds,X"),
]


def mask(data):
    for pattern, repl in MASKS:
        data = pattern.sub(repl, data)
    return data


def default_cases():
    """(label, file, extra flags) for the default model set."""
    cases = []
    files = sorted(glob.glob(os.path.join(REPO, "sample_models", "*.onnx")))
    files += sorted(glob.glob(os.path.join(REPO, "tests", "**", "*.onnx"), recursive=True))
    files += sorted(glob.glob("/tmp/b14/*.onnx"))
    files += sorted(glob.glob("/tmp/ba/synthetic_*.onnx"))
    cases += [(os.path.relpath(f, REPO) if f.startswith(REPO) else f, f, []) for f in files]
    sys.path.insert(0, HERE)
    try:
        import wild_models  # noqa: E402
        seen = set()
        for name, package, path, inputs, _flags in wild_models.MODELS:
            f = os.path.join("/tmp/wild-inputs", package, path)
            if not os.path.exists(f):
                continue
            if f not in seen:
                seen.add(f)
                cases.append((f, f, []))
            dims = [s for s in inputs if "=i" not in s]
            if dims:
                binds = [s.replace("=", ":", 1) for s in dims]  # wild_models' NAME=DIMS is --input NAME:DIMS
                cases.append((f"{f} ({name})", f, [a for s in binds for a in ("--input", s)]))
    except ImportError:
        pass
    return cases


def run(binary, path, fmt, extra):
    p = subprocess.run([binary, "analyze", path, "--format", fmt] + extra, capture_output=True, timeout=600)
    return p.returncode, mask(p.stdout), mask(p.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="the reference binary (e.g. main's build)")
    ap.add_argument("--after", required=True, help="the binary under test")
    ap.add_argument("--formats", nargs="+", default=["table", "json", "csv"])
    ap.add_argument("paths", nargs="*", help=".onnx files or folders (default: the model set above)")
    args = ap.parse_args()
    if args.paths:
        cases = []
        for p in args.paths:
            found = sorted(glob.glob(os.path.join(p, "**", "*.onnx"), recursive=True)) if os.path.isdir(p) else [p]
            cases += [(f, f, []) for f in found]
    else:
        cases = default_cases()
    same = differ = 0
    for label, path, extra in cases:
        for fmt in args.formats:
            a, b = run(args.before, path, fmt, extra), run(args.after, path, fmt, extra)
            if a == b:
                same += 1
            else:
                differ += 1
                what = [n for n, x, y in zip(("exit status", "stdout", "stderr"), a, b) if x != y]
                print(f"DIFFERS {label} [{fmt}]: {', '.join(what)}")
    print(f"{same} of {same + differ} file x format pairs identical ({len(cases)} files/bindings x "
          f"{len(args.formats)} formats)")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
