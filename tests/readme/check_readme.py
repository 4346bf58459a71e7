#!/usr/bin/env python3
"""Runs the commands the README shows and checks that their output keeps the shape shown.

A block is checked when the line before its opening fence is `<!-- readme-test -->` and the fence is
```console. In it, a line `$ modelstat ARGS` is a command (run from the source folder with the built
binary, ceilings and caches in a private folder; `# exit N` after it: the exit code it must end
with, default 0), and the lines up to the next command are its shown output. A line `...` stands for
any number of lines; the lines between two `...` must appear in that order, one after the other.

Shape, not values: lines are compared after numbers (with their unit of time, SI multiplier or byte
unit), runs of dashes and runs of blanks are normalised, so header lines, column names, row names,
shapes and words must match while timings and machine-dependent figures may differ.

    check_readme.py --modelstat build/tools/modelstat --source . --workdir /tmp/readme
    check_readme.py --self-test      # the matcher on hand-made cases
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

MARKER = "<!-- readme-test -->"

# A number standing alone: not part of a name (/part0.2/Conv, pp32) or a shape (32x3x224x224).
NUMBER = re.compile(r"(?<![A-Za-z_/.\d])\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?(?![A-Za-z_\d])")


def normalise(line):
    s = line.rstrip()
    s = re.sub(r"-{3,}", "---", s)
    s = re.sub(r"(?<![A-Za-z_/.\d])\d+(?:\.\d+)?x(?![\w/])", "#x", s)  # a ratio, 0.63x
    s = NUMBER.sub("#", s)
    s = re.sub(r"#\s*(ns|µs|us|ms|s)(?![\w/])", "#t", s)  # 1.25 s and 980 ms are one shape
    s = re.sub(r"#\s*[KMGT](?![\w/])", "#", s)  # 14.80 G and 980 M likewise
    s = re.sub(r"#\s*(B|KiB|MiB|GiB|TiB)(?![\w/])", "#B", s)
    s = re.sub(r"<#%", "#%", s)  # a share below 0.1% prints as <0.1%
    # An efficiency past a roof measured low (quick ceilings under load) prints as "above roof".
    s = re.sub(r"(?<![\w])above roof(?![\w])", "#%", s)
    s = re.sub(r"(?<![\w/#.])[+-](#)", r"\1", s)  # a signed figure (+1.2%, -37.7%): the sign is a value too
    s = re.sub(r"\s+", " ", s).strip()
    return s


def match(expected, actual):
    """Returns "" when `actual` (lines) has the shape of `expected` (lines, with `...`), else why not."""
    segments, current = [], []
    for line in expected:
        if line.strip() == "...":
            segments.append(current)
            current = []
        else:
            current.append(normalise(line))
    segments.append(current)
    got = [normalise(line) for line in actual]
    anchored_start = bool(segments[0])
    anchored_end = bool(segments[-1])
    pos = 0
    for i, seg in enumerate(segments):
        if not seg:
            continue
        if i == 0 and anchored_start:
            starts = [0]
        else:
            starts = range(pos, len(got) - len(seg) + 1)
        found = None
        for start in starts:
            if got[start:start + len(seg)] == seg:
                found = start
                break
        if found is None:
            # The first line of the segment that no run of the output matches, for the message.
            best, best_len = None, -1
            for start in range(pos, len(got)):
                n = 0
                while n < len(seg) and start + n < len(got) and got[start + n] == seg[n]:
                    n += 1
                if n > best_len:
                    best, best_len = start, n
            missing = seg[best_len] if best_len < len(seg) else seg[0]
            return "no output line has the shape of: %r" % missing
        pos = found + len(seg)
        if i == len(segments) - 1 and anchored_end and pos != len(got):
            return "output goes on past the last line shown: %r" % actual[pos]
    return ""


def blocks(readme_text):
    """Yields (line number, [(command, exit code, [shown output lines])]) for each marked block."""
    lines = readme_text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == MARKER:
            j = i + 1
            if j >= len(lines) or lines[j].strip() != "```console":
                raise SystemExit("README line %d: %s must be followed by a ```console block" % (i + 1, MARKER))
            j += 1
            commands = []
            while j < len(lines) and lines[j].strip() != "```":
                line = lines[j]
                if line.startswith("$ "):
                    text = line[2:]
                    code = 0
                    m = re.search(r"\s+#\s*exit (\d+)\b.*$", text)
                    if m:
                        code = int(m.group(1))
                        text = text[:m.start()]
                    commands.append([text.strip(), code, []])
                elif commands:
                    commands[-1][2].append(line)
                else:
                    raise SystemExit("README line %d: output before the first '$ ' command" % (j + 1))
                j += 1
            if not commands:
                raise SystemExit("README line %d: a marked block without a command" % (i + 1))
            yield i + 1, commands
            i = j
        i += 1


def run_readme(args):
    readme = os.path.join(args.source, "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    os.makedirs(args.workdir, exist_ok=True)
    env = dict(os.environ)
    # A first-time user's machine: no saved ceilings, no cached kernel choices, no colour.
    for name in ("MODELSTAT_CEILINGS_DIR", "MODELSTAT_CACHE_DIR"):
        env[name] = os.path.join(args.workdir, name.lower())
        os.makedirs(env[name], exist_ok=True)
    env["NO_COLOR"] = "1"
    failures, count = [], 0
    for line_no, commands in blocks(text):
        for command, code, shown in commands:
            count += 1
            words = shlex.split(command)
            if not words or words[0] != "modelstat":
                failures.append("README line %d: '%s' is not a modelstat command" % (line_no, command))
                continue
            argv = [args.modelstat] + words[1:]
            p = subprocess.run(argv, cwd=args.source, env=env, capture_output=True, text=True, timeout=600)
            print("$ %s  (exit %d)" % (command, p.returncode), flush=True)
            if p.returncode != code:
                failures.append("README line %d: '%s' exited %d, the README says %d\n%s%s" %
                                (line_no, command, p.returncode, code, p.stdout[-2000:], p.stderr[-2000:]))
                continue
            actual = (p.stdout + p.stderr).rstrip("\n").split("\n")
            why = match(shown, actual)
            if why:
                failures.append("README line %d: '%s': %s\n--- its output:\n%s" %
                                (line_no, command, why, "\n".join(actual)))
    if count == 0:
        failures.append("no command in a block marked %s: nothing was checked" % MARKER)
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    print("%d README commands run, %d failed" % (count, len(failures)))
    return 1 if failures else 0


def self_test():
    shown = ["Report: model.onnx", "...", "Totals", "  nodes   39", "  time    1.25 s", "...",
             "  name        op     time  %time", "  ------------------------",
             "  /a/part0.2/Conv  Conv  1.25 s  87.5%", "..."]
    same = ["Report: model.onnx", "context", "Totals", "  nodes   41", "  time    980 ms", "x",
            "  name    op   time  %time", "  -----------", "  /a/part0.2/Conv  Conv   12.5 µs  <0.1%", "tail"]
    cases = [
        ("other numbers, units and widths", shown, same, True),
        ("a renamed column", shown, [l.replace("%time", "share") for l in same], False),
        ("another row name", shown, [l.replace("part0.2", "part0.3") for l in same], False),
        ("a missing row", shown, [l for l in same if "Conv" not in l], False),
        ("another first line", shown, ["Profile: model.onnx"] + same[1:], False),
        ("lines out of order", shown, [same[0], same[1], same[3], same[2]] + same[4:], False),
        ("a shape changed", ["  x: float32 32x3x224x224"], ["  x: float32 32x3x224x225"], False),
        ("output past the last line shown", ["a", "b"], ["a", "b", "c"], False),
        ("a word inside a segment", ["...", "a", "b", "..."], ["a", "x", "b"], False),
        ("a signed figure with the other sign", ["  fit 199 ms (-37.7% vs x)"], ["  fit 318 ms (+1.2% vs x)"], True),
        ("a word after a dash is not a figure", ["--dim batch"], ["--dim batch2"], False),
        ("an efficiency above its roof", ["  compute  43.7%    190 ms"], ["  compute  above roof    201 ms"], True),
        ("a word that only ends like it", ["  compute  43.7%"], ["  compute  xabove roof"], False),
    ]
    bad = 0
    for name, expected, actual, ok in cases:
        why = match(expected, actual)
        if (why == "") != ok:
            bad += 1
            print("FAIL %s: expected %s, got %r" % (name, "a match" if ok else "a mismatch", why or "a match"))
    # The README's own parser: the exit-code comment and the blocks' commands.
    parsed = list(blocks("x\n%s\n```console\n$ modelstat a b   # exit 3: over budget\nout\n...\n```\n" % MARKER))
    if parsed != [(2, [["modelstat a b", 3, ["out", "..."]]])]:
        bad += 1
        print("FAIL block parsing: %r" % parsed)
    print("%d matcher cases, %d wrong" % (len(cases) + 1, bad))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--modelstat")
    ap.add_argument("--source")
    ap.add_argument("--workdir")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not (args.modelstat and args.source and args.workdir):
        ap.error("--modelstat, --source and --workdir are required")
    return run_readme(args)


if __name__ == "__main__":
    sys.exit(main())
