#!/usr/bin/python3
"""OpenMP wait policy at --threads 2: `modelstat profile --no-layers` with
libgomp's default (spin, then sleep), OMP_WAIT_POLICY=PASSIVE and
GOMP_SPINCOUNT=10000, interleaved model by model and round by round.

    POLICIES=default,PASSIVE,spin10k /usr/bin/python3 bench/openmp_wait_policy.py [THREADS] [ROUNDS]

"default" is libgomp's own default: OMP_WAIT_POLICY unset and
MODELSTAT_OMP_WAIT_POLICY=libgomp, which stops modelstat from setting PASSIVE
(its default since this comparison).
Models: sample_models/custom_model_part1.onnx and torchvision mobilenet_v2 and
resnet50 exported to /tmp/b14 (tests/e2e/export_torchvision.py NAME PATH --opset 13).
"""
import json, os, subprocess, sys
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
M = os.path.join(ROOT, "build/tools/modelstat")
models = [("part1", os.path.join(ROOT, "sample_models/custom_model_part1.onnx"), []),
          ("mobilenet_v2", "/tmp/b14/mobilenet_v2.onnx", []),
          ("resnet50", "/tmp/b14/resnet50.onnx", [])]
POLICIES = os.environ.get("POLICIES", "default,PASSIVE").split(",")
threads = sys.argv[1] if len(sys.argv) > 1 else "2"
res = {}
for rnd in range(int(sys.argv[2]) if len(sys.argv) > 2 else 2):
    for name, path, extra in models:
        for pol in POLICIES:
            env = dict(os.environ)
            for k in ("OPENBLAS_CORETYPE", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
                env.pop(k, None)
            env["MODELSTAT_OMP_WAIT_POLICY"] = "libgomp"
            if pol == "spin10k":
                env["GOMP_SPINCOUNT"] = "10000"
            elif pol != "default":
                env["OMP_WAIT_POLICY"] = pol
            out = subprocess.run([M, "profile", path, "--no-layers", "--threads", threads, "-f", "json"] + extra,
                                 capture_output=True, text=True, env=env)
            if out.returncode: print(name, out.stderr[-500:]); continue
            j = json.loads(out.stdout)
            res.setdefault((name, pol), []).append(j["whole"]["median_s"] * 1e3)
for (name, pol), v in sorted(res.items()):
    print(f"{name:14s} {pol:8s} " + " ".join(f"{x:8.2f}" for x in v))
