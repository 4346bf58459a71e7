#!/usr/bin/python3
"""Per-node overhead (issue 32 item 6): two modelstat binaries and ONNX
Runtime on the small models of bench/wild_models.py, interleaved at 1 thread.

    /usr/bin/python3 bench/overhead_ab.py --before BIN --after BIN [--names "silero_v5 16k,ppocr cls"]
        [--dir /tmp/wild-inputs] [--ort /tmp/ortnode/node_modules] [--rounds 3] [--seconds 1.0]
        [--cpu 1] [--lock /tmp/modelstat-bench.lock]

Per round and model: `modelstat profile` of BEFORE, of AFTER, then ONNX
Runtime (bench/ort_time.mjs, all graph optimisations), each on the inputs
ONNX Runtime's case holds (bench/ort_case.py, seed 1), each command under
`flock LOCK taskset -c CPU` (the lock per command, so that other 1-thread
benchmarks interleave with it rather than wait for all of it). Prints one
row per model: the median of the round medians of each, and the ratios.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wild_models as wild  # noqa: E402
from bench_common import clean_env, parse_flags  # noqa: E402

DEFAULT_NAMES = ("silero_v5 16k,silero_v5 8k,silero_legacy 16k,silero_legacy 8k,silero op18 16k,silero op18 8k,"
                 "silero 16k op15,silero half,silero_v6 16k,silero_v6 8k,blazeface 128,mobilefacenet,ppocr cls,"
                 "ultraface rfb320,owwjs hello_deepa,ppocrv4 en rec")


def main(argv):
    f = parse_flags(argv, {"before": None, "after": None, "names": DEFAULT_NAMES.split(","), "dir": "/tmp/wild-inputs",
                           "ort": "/tmp/ortnode/node_modules", "rounds": 3, "seconds": 1.0, "cpu": "1",
                           "lock": "/tmp/modelstat-bench.lock"}, __doc__)
    if not f["before"] or not f["after"]:
        raise SystemExit(__doc__)
    env = clean_env({"NODE_PATH": f["ort"]})
    prefix = ["flock", f["lock"], "taskset", "-c", f["cpu"]]
    models = {m[0]: m for m in wild.MODELS}
    unknown = [n for n in f["names"] if n not in models]
    if unknown:
        raise SystemExit("unknown model name(s): " + ", ".join(unknown))
    print("| model | before | after | ONNX Runtime | before / ORT | after / ORT | after / before |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in f["names"]:
        _, key, path, specs, flags = models[name]
        model = os.path.join(wild.fetch(f["dir"], key), path)
        bind = [x for s in specs if not s.split("=", 1)[1].startswith("i")
                for x in ("--input", s.replace("=", ":", 1))]
        case = tempfile.mkdtemp(prefix="overhead_case_")
        subprocess.run(["/usr/bin/python3", os.path.join(HERE, "ort_case.py"), model, case, "1"] + specs +
                       ["--ort", f["ort"]], env=env, capture_output=True, check=True)
        times = {"before": [], "after": [], "ort": []}
        for _ in range(f["rounds"]):
            for which in ("before", "after"):
                code, doc, why = wild.modelstat_profile(f[which], model, case, bind, flags, env, f["seconds"],
                                                        os.path.join(case, "profile.json"), prefix)
                if code != 0:
                    raise SystemExit(f"{name}: {which} profile exit {code}: {why}")
                times[which].append(doc["whole"]["median_s"] * 1e3)
            t = wild.ort_median_ms(model, specs, f["ort"], env, f["seconds"], prefix)
            if t is not None:
                times["ort"].append(t)
        shutil.rmtree(case, ignore_errors=True)
        b, a = wild.median(times["before"]), wild.median(times["after"])
        o = wild.median(times["ort"]) if times["ort"] else None
        ratio = (lambda x: f"{x / o:.2f}x") if o else (lambda x: "-")
        print(f"| {name} | {b:.3f} ms | {a:.3f} ms | {f'{o:.3f} ms' if o else '-'} | {ratio(b)} | {ratio(a)} "
              f"| {a / b:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
