#!/usr/bin/env python3
"""Layering check: nothing includes upward, no production source file over 800 lines.

The layers (ARCHITECTURE.md, STYLE.md, analyzer/README.md), lowest first:

  include/modelstat   public API: the standard library, fmt and other public headers only
  analyzer/           ONNX + protobuf, never LibTorch, never profiler/ or tools/;
                      inside it, in layer order: the analyzer library (loader/, cost/,
                      fusion/, top level) -> stats/ -> measurements/ -> fit/ -> suite/
  profiler/           LibTorch; may include analyzer/, never tools/
  tools/              the command line and the writers; tools/writers/ and the
                      LibTorch-free commands never include profiler/ or LibTorch
  tests/, bench/, fuzz/, python/   may include anything

A rule is (which files it applies to, forbidden include prefix, why); every rule
that applies to a file is checked. Includes are read as written, #if'd or not.

Usage: check_layering.py [--root DIR]   exit 0 when clean, 1 with one line per violation
       check_layering.py --self-test    builds a small tree with one violation per rule
                                        and checks that each is reported
"""
import argparse
import os
import re
import sys
import tempfile

MAX_LINES = 800
SOURCE_EXTENSIONS = (".cc", ".cpp", ".hpp", ".h", ".cu", ".cuh", ".py")
# Production code: what ships in the binaries, the libraries and the Python module.
PRODUCTION_FOLDERS = ("include", "analyzer", "profiler", "tools", "python")

LIBTORCH = ("<torch/", "<ATen/", "<c10/", "<caffe2/")
ONNX_PROTOBUF = ("<onnx/", "<google/protobuf/", "\"onnx/")

# The analyzer's libraries in layer order (analyzer/CMakeLists.txt); each folder
# may include the ones before it, never the ones after it.
ANALYZER_LAYERS = [
    ("analyzer/stats/", "stats"),
    ("analyzer/measurements/", "measurements"),
    ("analyzer/fit/", "fit"),
    ("analyzer/suite/", "suite"),
]
# The modelstat_analyzer library itself (the lowest analyzer layer).
ANALYZER_CORE = ("analyzer/loader/", "analyzer/cost/", "analyzer/fusion/")

# The tools/ files the LibTorch-free `modelstat` binary is built from
# (tools/CMakeLists.txt: modelstat_writers, modelstat_cli, modelstat_suite_cli).
TOOLS_WITHOUT_TORCH = ("tools/writers/", "tools/cli_common.", "tools/analyze_command.cc",
                       "tools/fit_command.cc", "tools/compare_command.cc", "tools/completion.",
                       "tools/suite_command", "tools/results_command.cc", "tools/modelstat_main.cc",
                       "tools/profile_commands_unavailable.cc")


def rules():
    """(applies_to(path) -> bool, forbidden include prefix, why)."""
    out = []

    def under(prefix):
        return lambda path: path.startswith(prefix)

    def any_of(prefixes):
        return lambda path: any(path.startswith(p) for p in prefixes)

    public = under("include/modelstat/")
    for inc in LIBTORCH + ONNX_PROTOBUF:
        out.append((public, inc, "public headers never include protobuf, ONNX or LibTorch"))
    for inc in ("\"analyzer/", "\"profiler/", "\"tools/", "\"python/"):
        out.append((public, inc, "public headers include only public headers"))

    analyzer = under("analyzer/")
    for inc in LIBTORCH:
        out.append((analyzer, inc, "the analyzer never includes LibTorch"))
    for inc in ("\"profiler/", "\"tools/", "\"python/"):
        out.append((analyzer, inc, "the analyzer never includes the profiler or the tools"))

    def analyzer_core(path):
        return (path.startswith(ANALYZER_CORE) or
                (path.startswith("analyzer/") and path.count("/") == 1))
    for i, (folder, name) in enumerate(ANALYZER_LAYERS):
        # The core and every layer before this one may not include `folder`.
        earlier = tuple(f for f, _ in ANALYZER_LAYERS[:i])
        lower = (lambda e: lambda path: analyzer_core(path) or path.startswith(e))(earlier)
        out.append((lower, "\"" + folder,
                    f"analyzer/{name} sits above this library (analyzer/README.md's layer order)"))

    profiler = under("profiler/")
    out.append((profiler, "\"tools/", "the profiler never includes the tools"))
    out.append((profiler, "\"python/", "the profiler never includes the Python module"))

    no_torch_tools = any_of(TOOLS_WITHOUT_TORCH)
    for inc in LIBTORCH + ("\"profiler/",):
        out.append((no_torch_tools, inc,
                    "the writers and the LibTorch-free commands are linked into `modelstat`, which never links LibTorch"))

    everywhere = lambda path: True
    out.append((everywhere, "<torch/torch.h>", "include <ATen/ATen.h>, never <torch/torch.h>"))
    return out


INCLUDE = re.compile(r'^\s*#\s*include\s*([<"][^>"]+[>"])')


def source_files(root):
    for top in PRODUCTION_FOLDERS + ("tests", "bench", "fuzz"):
        base = os.path.join(root, top)
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "node_modules") and not d.startswith("build"))
            for name in sorted(files):
                if name.endswith(SOURCE_EXTENSIONS):
                    full = os.path.join(folder, name)
                    yield os.path.relpath(full, root).replace(os.sep, "/"), full


def check(root):
    violations = []
    all_rules = rules()
    for rel, full in source_files(root):
        with open(full, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        production = rel.split("/", 1)[0] in PRODUCTION_FOLDERS
        if production and len(lines) > MAX_LINES:
            violations.append(f"{rel}: {len(lines)} lines, over the {MAX_LINES} a production source file may have: split it by what its parts do")
        if not rel.endswith(".py"):
            for number, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                for applies, forbidden, why in all_rules:
                    if applies(rel) and target.startswith(forbidden):
                        violations.append(f"{rel}:{number}: includes {target}: {why}")
    return violations


def self_test():
    """One violating file per kind of rule, plus files that must pass."""
    cases = {
        "include/modelstat/bad_torch.hpp": ("#include <ATen/ATen.h>\n", True),
        "include/modelstat/bad_onnx.hpp": ("#include <onnx/onnx_pb.h>\n", True),
        "include/modelstat/bad_private.hpp": ('#include "analyzer/op_traits.hpp"\n', True),
        "include/modelstat/good.hpp": ('#include <vector>\n#include "modelstat/graph.hpp"\n', False),
        "analyzer/cost/bad_profiler.cc": ('#include "profiler/executor.hpp"\n', True),
        "analyzer/bad_tools.cc": ('  #  include "tools/cli_common.hpp"\n', True),
        "analyzer/loader/bad_torch.cc": ("#include <c10/core/Device.h>\n", True),
        "analyzer/loader/bad_measurements.cc": ('#include "analyzer/measurements/json_input.hpp"\n', True),
        "analyzer/stats/bad_fit.cc": ('#include "analyzer/fit/latency.hpp"\n', True),
        "analyzer/measurements/bad_suite.cc": ('#include "analyzer/suite/hash.hpp"\n', True),
        "analyzer/fit/good.cc": ('#include "analyzer/measurements/json_input.hpp"\n#include "analyzer/fusion/fusion_plan.hpp"\n', False),
        "analyzer/suite/good.cc": ('#include "analyzer/measurements/atomic_file.hpp"\n', False),
        "profiler/bad_tools.cc": ('#include "tools/writers/writers.hpp"\n', True),
        "profiler/ops/good.cc": ('#include <ATen/ATen.h>\n#include "analyzer/op_traits.hpp"\n', False),
        "profiler/bad_torch_h.cc": ("#include <torch/torch.h>\n", True),
        "tools/writers/bad_profiler.cc": ('#include "profiler/session.hpp"\n', True),
        "tools/profile_commands.cc": ('#include "profiler/session.hpp"\n', False),
        "tools/results_command.cc": ("#include <ATen/ATen.h>\n", True),
        "tests/anything.cc": ('#include "profiler/executor.hpp"\n#include "tools/cli_common.hpp"\n', False),
        "profiler/too_long.cc": ("// x\n" * (MAX_LINES + 1), True),
        "tests/long_test.cc": ("// x\n" * (MAX_LINES + 1), False),
        "profiler/just_fits.cc": ("// x\n" * MAX_LINES, False),
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, (text, _) in cases.items():
            path = os.path.join(root, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        reported = {v.split(":", 1)[0] for v in check(root)}
    failures = []
    for rel, (_, bad) in cases.items():
        if bad and rel not in reported:
            failures.append(f"self-test: {rel} breaks a rule and was not reported")
        if not bad and rel in reported:
            failures.append(f"self-test: {rel} breaks no rule and was reported")
    for f in failures:
        print(f)
    if not failures:
        print(f"self-test: {len(cases)} cases, each judged as expected")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                        help="the source tree to check (default: this script's repository)")
    parser.add_argument("--self-test", action="store_true", help="check the checker on a small tree of its own")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    violations = check(os.path.abspath(args.root))
    for v in violations:
        print(v)
    if violations:
        print(f"check_layering: {len(violations)} violation(s); the layers are listed in ARCHITECTURE.md")
        return 1
    print("check_layering: no upward include, no production source file over 800 lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
