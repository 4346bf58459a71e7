#!/usr/bin/python3
"""Validate `modelstat fit` against measurements: predicted vs measured.

    MODELSTAT_CEILINGS_DIR=DIR /usr/bin/python3 bench/fit_validate.py \
        --modelstat build/tools/modelstat --workdir /tmp/fit_validate \
        [--models tiny_cnn custom_model tiny_bert resnet18 resnet50 mobilenet_v2] \
        [--threads 1] [--optimizer adam] [--md docs/fit_validation.md]
        [--device cpu|cuda] [--ceilings FILE] [--repeats 3]

For each model, at batch 1 and --threads N:
  predicted  `modelstat fit MODEL -f json` (inference) and
             `modelstat fit MODEL --train --optimizer X -f json` (training step),
             priced with the ceilings saved by `modelstat device --threads N`
             (MODELSTAT_CEILINGS_DIR selects the folder);
  measured   `modelstat profile MODEL --threads N --no-layers -f json`:
             whole.median_s (inference latency; --repeats processes, the median
             of their medians), and
             `modelstat profile MODEL --threads N --memory --train-step
             --optimizer X --no-layers -f json`: memory.inference_peak_bytes,
             train_step.time.median_s, train_step.peak_bytes. Inference latency
             comes from the run without --memory, so that nothing but the
             model is timed (the counting allocator adds an atomic add per
             allocation; an A/B on mobilenet_v2 found no consistent cost, see
             docs/FIT.md); the training step is always metered;
  reference  with --torch-reference, for torchvision models, PyTorch's own
             step on the same graph (bench/train_step_reference.py --forms
             folded: BatchNorm folded, as the ONNX export): not metered.
With --device cuda both sides run on the GPU (tools/gpu_check.sh fit does that);
--ceilings names the ceilings file fit prices with.
Sample models come from sample_models/; torchvision names are exported with
tests/e2e/export_torchvision.py (random weights, 1x3x224x224).

--wide runs the latency forecast alone (no training step, no memory pass) over
the wide set below (issue 33: sample models, torchvision CNNs and transformers,
npm-shipped models, QDQ int8 and float16 models; --models picks from it), at
--batch, measured in --repeats rounds over the models (each round profiles every
model once, so a slow spell of the machine lands on one run of many models,
not on every run of one; the median of a model's runs), and adds the accuracy
summary: MdAPE, MAPE, share within +-10% and
+-5%, Spearman rank correlation of the forecast with the measurement and of
FLOPs alone with it (the baseline ranking). --lock FILE takes the bench lock
around each profile (run the script pinned: `taskset -c 1`; children inherit
it). --measured FILE... reuses the medians of earlier --wide --json runs instead
of profiling again (per model the run with the lowest median: interference on
a shared machine only slows a run): the way to compare two binaries or two
ceilings files on one measurement. A model whose file is missing is skipped and said so. None of these
models set any price: `modelstat device` measures op classes on synthetic
shapes (docs/ceilings.md).

Prints one row per model with the signed relative error (predicted/measured - 1)
of each of the four figures and the median absolute error per figure, and with
--md writes the same as a Markdown table. Run on a quiet machine: latency is a
measurement.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAMPLES = ["tiny_cnn", "custom_model", "tiny_bert", "tiny_gpt2", "tiny_yolo"]
# Dims the sample models leave symbolic besides the batch (bound the same for fit and profile).
MODEL_FLAGS = {"tiny_bert": ["--dim", "seq=32"], "tiny_gpt2": ["--dim", "seq=32"]}

# The wide set (--wide). torchvision:NAME is exported by tests/e2e/export_torchvision.py,
# qdq:NAME by bench/make_qdq_model.py, into --workdir; the npm models are where
# bench/wild_models.py fetches them.
B14 = "/tmp/b14"
WILD = "/tmp/wild-inputs"


def sample(name, *flags):
    return (os.path.join(ROOT, "sample_models", name + ".onnx"), list(flags))


def wild(rel, *inputs):
    return (os.path.join(WILD, rel), [a for spec in inputs for a in ("--input", spec)])


# name -> (path, "torchvision:NAME" or "qdq:TORCHVISION_NAME", flags)
MODELS = {
    "tiny_cnn": sample("tiny_cnn"),
    "tiny_bert": sample("tiny_bert", "--dim", "seq=32"),
    "custom_model": sample("custom_model"),
    "tiny_yolo": sample("tiny_yolo"),
    "resnet18": ("torchvision:resnet18", []),
    "resnet34": ("torchvision:resnet34", []),
    "resnet50": (os.path.join(B14, "resnet50.onnx"), []),
    "resnext50_32x4d": (os.path.join(B14, "resnext50_32x4d.onnx"), []),
    "mobilenet_v2": (os.path.join(B14, "mobilenet_v2.onnx"), []),
    "mobilenet_v3_large": ("torchvision:mobilenet_v3_large", []),
    "mobilenet_v3_small": ("torchvision:mobilenet_v3_small", []),
    "efficientnet_b0": (os.path.join(B14, "efficientnet_b0.onnx"), []),
    "mnasnet1_0": (os.path.join(B14, "mnasnet1_0.onnx"), []),
    "shufflenet_v2_x1_0": (os.path.join(B14, "shufflenet_v2_x1_0.onnx"), []),
    "regnet_y_800mf": (os.path.join(B14, "regnet_y_800mf.onnx"), []),
    "regnet_x_400mf": ("torchvision:regnet_x_400mf", []),
    "densenet121": (os.path.join(B14, "densenet121.onnx"), []),
    "squeezenet1_1": ("torchvision:squeezenet1_1", []),
    "googlenet": ("torchvision:googlenet", []),
    "alexnet": ("torchvision:alexnet", []),
    "convnext_tiny": (os.path.join(B14, "convnext_tiny.onnx"), []),
    "vit_b_16": (os.path.join(B14, "vit_b_16.onnx"), []),
    "bert_encoder": (os.path.join(B14, "bert_encoder.onnx"), ["--dim", "seq=128"]),
    "ppocr_cls": wild("gutenye/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", "x:1x3x48x192"),
    "ppocrv4_rec": wild("gutenye/package/assets/ch_PP-OCRv4_rec_infer.onnx", "x:1x3x48x320"),
    "ultraface_rfb320": wild("faceplugin/package/model/fr_detect.onnx", "input:1x3x240x320"),
    "mobilefacenet": wild("faceplugin/package/model/fr_feature.onnx", "input:1x3x112x112"),
    "face_liveness": wild("faceplugin/package/model/fr_liveness.onnx", "input:1x3x128x128"),
    "blazeface_128": wild("blazeface/package/ONNX/face_detection_front_128x128_barracuda.onnx", "input:0:1x128x128x3"),
    "mlsd_320_tiny": wild("mlsd/package/ONNX/mlsd_320x320_tiny.onnx", "input_image_with_alpha:0:1x320x320x4"),
    "oww_embedding": wild("oww/package/models/embedding_model.onnx", "input_1:1x76x32x1"),
    "isnet_int8": wild("imgly/small.onnx", "input:1x3x1024x1024"),
    "isnet_fp16": wild("imgly/medium.onnx", "input:1x3x1024x1024"),
    "qdq_resnet18": ("qdq:resnet18", []),
    "qdq_mobilenet_v2": ("qdq:mobilenet_v2", []),
}
WIDE_SET = list(MODELS)


def model_path(name, workdir):
    if name in SAMPLES:
        return os.path.join(ROOT, "sample_models", name + ".onnx")
    out = os.path.join(workdir, name + ".onnx")
    if not os.path.exists(out):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "e2e", "export_torchvision.py"), name, out],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def resolve_wide(name, workdir, batch=1):
    path, flags = MODELS[name]
    # Above batch 1 a torchvision model (the /tmp/b14 exports fix their batch at 1) is exported
    # again with a symbolic batch dim, NAME.dynamic.onnx in --workdir.
    if batch > 1 and path.startswith(B14 + "/") and name != "bert_encoder":
        path = "torchvision:" + name
    if path.startswith("torchvision:") or path.startswith("qdq:"):
        kind, tv = path.split(":", 1)
        stem = (tv if kind == "torchvision" else name) + (".dynamic" if batch > 1 else "")
        path = os.path.join(workdir, stem + ".onnx")
        if not os.path.exists(path):
            script = (os.path.join(ROOT, "tests", "e2e", "export_torchvision.py") if kind == "torchvision"
                      else os.path.join(HERE, "make_qdq_model.py"))
            extra = ["--dynamic-batch"] if batch > 1 else []
            subprocess.run([sys.executable, script, tv, path, *extra], check=True, stdout=subprocess.DEVNULL)
    return path, flags


def with_batch(flags, batch):
    """The npm models' --input specs (NAME:1xCxHxW) at `batch`: their leading 1 becomes the batch,
    as --default-batch binds a symbolic batch dim. A model whose graph fixes its batch at 1 then
    fails to bind and is reported as skipped, not measured at the wrong batch."""
    if batch == 1:
        return list(flags)
    out = list(flags)
    for i in range(len(out) - 1):
        if out[i] == "--input":
            name, dims = out[i + 1].rsplit(":", 1)
            if dims.startswith("1x"):
                out[i + 1] = f"{name}:{batch}x{dims[2:]}"
    return out


def run_json(cmd, ok_codes=(0, 3)):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in ok_codes:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def rel(pred, meas):
    if pred is None or meas is None or meas == 0:
        return None
    return pred / meas - 1.0


def pct(x):
    return "-" if x is None else f"{100 * x:+.1f}%"


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va and vb else None


def human_bytes(n):
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def human_s(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


def summary(rows):
    errs = [abs(r["err"]) for r in rows]
    n = len(rows)
    return {
        "models": n,
        "mape": statistics.mean(errs) if errs else None,
        "mdape": statistics.median(errs) if errs else None,
        "within_10": sum(e <= 0.10 for e in errs) / n if n else None,
        "within_5": sum(e <= 0.05 for e in errs) / n if n else None,
        "spearman_forecast": spearman([r["forecast_s"] for r in rows], [r["measured_s"] for r in rows]),
        "spearman_flops": spearman([r["flops"] for r in rows], [r["measured_s"] for r in rows]),
    }


def write_outputs(args, md_lines, record):
    """--md gets the table lines (when any), --json the record."""
    if args.md and md_lines is not None:
        with open(args.md, "w") as f:
            f.write("\n".join(md_lines) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)


def wide(args):
    rows, skipped = [], []
    # --measured: the medians of an earlier --wide --json, so that two binaries or two ceilings files are
    # compared on the same measurement (no profile is run).
    measured = {}
    for path in args.measured or []:
        with open(path) as f:
            for r in json.load(f)["rows"]:
                # Several files: each model's run with the lowest median (a busy machine only slows a run).
                if r["model"] not in measured or r["measured_s"] < measured[r["model"]]["measured_s"]:
                    measured[r["model"]] = r
    ceilings = ["--ceilings", args.ceilings] if args.ceilings else []
    # First every model's forecast and analysis, then the measurement in rounds over the models
    # (round r profiles each model once): a slow spell of the machine (this project's VMs have
    # minutes-long ones, 1.4x) then lands on one run of many models, not on all runs of one.
    ready = []
    for name in args.models:
        if args.measured and name not in measured:
            skipped.append((name, "not in " + " ".join(args.measured)))
            continue
        try:
            path, flags = resolve_wide(name, args.workdir, args.batch)
        except Exception as e:  # noqa: BLE001 - a model that cannot be built is reported, not fatal
            skipped.append((name, f"not built: {e}"))
            continue
        if not os.path.exists(path):
            skipped.append((name, f"missing {path}"))
            continue
        bind = with_batch(flags, args.batch) + ["--default-batch", str(args.batch)]
        lock = ["flock", args.lock] if args.lock else []
        try:
            fit = run_json([args.modelstat, "fit", path, *bind, *ceilings, "-f", "json"])
            analysis = run_json([args.modelstat, path, *bind, "-f", "json"])
            if args.batch > 1:
                one = run_json([args.modelstat, path, *flags, "--default-batch", "1", "-f", "json"])
                if one["totals"]["flops"] == analysis["totals"]["flops"]:
                    raise RuntimeError(f"the model fixes its batch: batch {args.batch} has batch 1's FLOPs")
        except Exception as e:  # noqa: BLE001
            skipped.append((name, str(e).splitlines()[0][:300]))
            print(f"{name:22s} skipped: {skipped[-1][1]}", flush=True)
            continue
        ready.append((name, path, bind, lock, fit, analysis, list(measured[name]["runs_s"]) if name in measured else []))
    for r in range(0 if args.measured else args.repeats):
        for name, path, bind, lock, fit, analysis, medians in list(ready):
            try:
                medians.append(run_json(lock + [args.modelstat, "profile", path, *bind, "--threads", str(args.threads),
                                                "--no-layers", "--min-time", args.min_time, "-f", "json"],
                                        ok_codes=(0,))["whole"]["median_s"])
            except Exception as e:  # noqa: BLE001
                skipped.append((name, str(e).splitlines()[0][:300]))
                print(f"{name:22s} skipped: {skipped[-1][1]}", flush=True)
                ready = [x for x in ready if x[0] != name]
        print(f"round {r + 1} of {args.repeats} measured", file=sys.stderr, flush=True)
    for name, path, bind, lock, fit, analysis, medians in ready:
        row = {"model": name, "forecast_s": fit["latency"]["total_seconds"], "measured_s": statistics.median(medians),
               "runs_s": medians, "flops": analysis["totals"]["flops"]}
        row["err"] = row["forecast_s"] / row["measured_s"] - 1
        rows.append(row)
        print(f"{name:22s} forecast {human_s(row['forecast_s']):>9s} measured {human_s(row['measured_s']):>9s} "
              f"{100 * row['err']:+6.1f}%", flush=True)
    s = summary(rows)
    print(json.dumps(s, indent=1))
    for name, why in skipped:
        print(f"skipped {name}: {why}")
    if args.md:
        lines = ["| model | forecast | measured | error |", "| :--- | ---: | ---: | ---: |"]
        for r in rows:
            lines.append(f"| {r['model']} | {human_s(r['forecast_s'])} | {human_s(r['measured_s'])} | "
                         f"{100 * r['err']:+.1f}% |")
        pct = lambda v: "-" if v is None else f"{100 * v:.1f}%"  # noqa: E731
        num = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        lines.append("")
        lines.append(f"{s['models']} models, {args.threads} thread(s), batch {args.batch}: MdAPE {pct(s['mdape'])}, "
                     f"MAPE {pct(s['mape'])}, within +-10% {pct(s['within_10'])}, within +-5% {pct(s['within_5'])}, "
                     f"Spearman forecast {num(s['spearman_forecast'])}, FLOPs alone {num(s['spearman_flops'])}")
    record = {"rows": rows, "summary": s, "skipped": skipped, "threads": args.threads, "batch": args.batch}
    write_outputs(args, lines if args.md else None, record)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--models", nargs="+",
                    default=["tiny_cnn", "custom_model", "tiny_bert", "resnet18", "resnet50", "mobilenet_v2"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                    help="where profile measures and whose saved ceilings fit reads")
    ap.add_argument("--ceilings", help="ceilings JSON for fit (default: the one saved for --device)")
    ap.add_argument("--optimizer", default="adam", choices=["sgd", "momentum", "adam"])
    ap.add_argument("--min-time", default="1.0", help="profile --min-time per pass")
    ap.add_argument("--repeats", type=int, default=3,
                    help="clean inference runs per model, each in its own process; the median of their medians is "
                         "the measurement (one process can sit in a slow or fast mode for all its samples)")
    ap.add_argument("--torch-reference", action="store_true",
                    help="also time PyTorch's own training step of the torchvision models (not metered)")
    ap.add_argument("--md", help="write the error table as Markdown to this file")
    ap.add_argument("--json", help="write every predicted and measured figure to this file")
    ap.add_argument("--wide", action="store_true",
                    help="latency only, over the wide set (or --models from it), with the accuracy summary")
    ap.add_argument("--batch", type=int, default=1, help="--wide: the batch bound by --default-batch")
    ap.add_argument("--lock", help="--wide: flock this file around each profile")
    ap.add_argument("--measured", nargs="+",
                    help="--wide: take the measured medians from these earlier --json files (no profile); "
                         "per model, the file whose median is lowest")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if args.wide:
        if args.models == ap.get_default("models"):
            args.models = WIDE_SET
        return wide(args)

    rows = []
    for name in args.models:
        path = model_path(name, args.workdir)
        flags = MODEL_FLAGS.get(name, [])
        fit_flags = ["--device", args.device] + (["--ceilings", args.ceilings] if args.ceilings else [])
        run_flags = ["--device", args.device] + (["--threads", str(args.threads)] if args.device == "cpu" else [])
        fit_inf = run_json([args.modelstat, "fit", path, *flags, *fit_flags, "-f", "json"])
        fit_train = run_json([args.modelstat, "fit", path, *flags, *fit_flags, "--train", "--optimizer", args.optimizer,
                              "-f", "json"])
        cleans = [run_json([args.modelstat, "profile", path, *flags, *run_flags, "--no-layers",
                            "--min-time", args.min_time, "-f", "json"], ok_codes=(0,)) for _ in range(args.repeats)]
        clean_medians = [c["whole"]["median_s"] for c in cleans]
        prof = run_json([args.modelstat, "profile", path, *flags, *run_flags, "--memory", "--train-step",
                         "--optimizer", args.optimizer, "--no-layers", "--min-time", args.min_time, "-f", "json"],
                        ok_codes=(0,))
        mem = prof.get("memory") or {}
        ts = prof.get("train_step") or {}
        row = {
            "model": name,
            "pred_latency_s": fit_inf["latency"]["total_seconds"],
            "meas_latency_s": statistics.median(clean_medians),
            "meas_latency_runs_s": clean_medians,
            "meas_latency_metered_s": prof["whole"]["median_s"],
            "pred_memory_bytes": fit_inf["memory"]["total_bytes"],
            "meas_memory_bytes": mem.get("inference_peak_bytes"),
            "pred_train_s": fit_train["latency"]["total_seconds"],
            "meas_train_s": (ts.get("time") or {}).get("median_s"),
            "pred_train_fwd_s": fit_train["latency"]["forward_seconds"],
            "pred_train_bwd_s": fit_train["latency"]["backward_seconds"],
            "pred_train_opt_s": fit_train["latency"]["optimizer_seconds"],
            "meas_train_fwd_s": ts.get("forward_s"),
            "meas_train_bwd_s": ts.get("backward_s"),
            "meas_train_opt_s": ts.get("optimizer_s"),
            "pred_train_bytes": fit_train["memory"]["total_bytes"],
            "meas_train_bytes": ts.get("peak_bytes"),
            "pred_weights_bytes": fit_inf["memory"]["weights_bytes"],
            "meas_weights_bytes": mem.get("weights_bytes"),
            "memory_method": mem.get("method"),
            "ceilings": fit_inf["ceilings"],
        }
        if args.torch_reference and name not in SAMPLES:
            ref = subprocess.run([sys.executable, os.path.join(HERE, "train_step_reference.py"), "--model", name,
                                  "--threads", str(args.threads), "--optimizer", args.optimizer, "--forms", "folded"],
                                 stdout=subprocess.PIPE, text=True, check=True)
            row["torch_train_s"] = json.loads(ref.stdout.strip().splitlines()[-1]).get("step_median_s")
        else:
            row["torch_train_s"] = None
        row["err_train_torch"] = rel(row["pred_train_s"], row["torch_train_s"])
        row["err_latency"] = rel(row["pred_latency_s"], row["meas_latency_s"])
        row["err_memory"] = rel(row["pred_memory_bytes"], row["meas_memory_bytes"])
        row["err_train_s"] = rel(row["pred_train_s"], row["meas_train_s"])
        row["err_train_bytes"] = rel(row["pred_train_bytes"], row["meas_train_bytes"])
        rows.append(row)
        print(f"{name:14s} latency {human_s(row['pred_latency_s']):>9s} vs {human_s(row['meas_latency_s']):>9s} "
              f"{pct(row['err_latency']):>7s} | memory {human_bytes(row['pred_memory_bytes']):>10s} vs "
              f"{human_bytes(row['meas_memory_bytes']):>10s} {pct(row['err_memory']):>7s} | train "
              f"{human_s(row['pred_train_s']):>9s} vs {human_s(row['meas_train_s']):>9s} {pct(row['err_train_s']):>7s} | "
              f"train memory {human_bytes(row['pred_train_bytes']):>10s} vs {human_bytes(row['meas_train_bytes']):>10s} "
              f"{pct(row['err_train_bytes']):>7s} | torch step {human_s(row['torch_train_s'])} {pct(row['err_train_torch'])}",
              flush=True)

    def median_abs(key):
        vals = [abs(r[key]) for r in rows if r[key] is not None]
        return statistics.median(vals) if vals else None

    medians = {k: median_abs(k) for k in ("err_latency", "err_memory", "err_train_s", "err_train_bytes",
                                          "err_train_torch")}
    print("median |error|: " + ", ".join(f"{k[4:]} {pct(v)[1:] if v is not None else '-'}" for k, v in medians.items()))

    if args.md:
        c = rows[0]["ceilings"] if rows else {}
        lines = [
            f"Batch 1, {args.threads} thread(s), optimizer {args.optimizer}; ceilings: {c.get('device_name', '?')}, "
            f"{c.get('source', '?')} {c.get('date', '')} ({c.get('peak_flops_per_second', 0) / 1e9:.1f} GFLOP/s fp32 peak, "
            f"{c.get('memory_bandwidth_bytes_per_second', 0) / 1e9:.1f} GB/s, "
            f"{c.get('op_overhead_seconds', 0) * 1e6:.2f} us per op). Error = predicted / measured - 1.",
            "",
            "| model | inference latency pred / meas | err | inference memory pred / meas | err | "
            "train step pred / meas | err | train memory pred / meas | err |",
            "| :--- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in rows:
            lines.append(
                f"| {r['model']} | {human_s(r['pred_latency_s'])} / {human_s(r['meas_latency_s'])} | {pct(r['err_latency'])} "
                f"| {human_bytes(r['pred_memory_bytes'])} / {human_bytes(r['meas_memory_bytes'])} | {pct(r['err_memory'])} "
                f"| {human_s(r['pred_train_s'])} / {human_s(r['meas_train_s'])} | {pct(r['err_train_s'])} "
                f"| {human_bytes(r['pred_train_bytes'])} / {human_bytes(r['meas_train_bytes'])} | {pct(r['err_train_bytes'])} |")
        m = medians
        lines.append(f"| **median abs. error** | | {pct(m['err_latency'])[1:] if m['err_latency'] is not None else '-'} | | "
                     f"{pct(m['err_memory'])[1:] if m['err_memory'] is not None else '-'} | | "
                     f"{pct(m['err_train_s'])[1:] if m['err_train_s'] is not None else '-'} | | "
                     f"{pct(m['err_train_bytes'])[1:] if m['err_train_bytes'] is not None else '-'} |")
    write_outputs(args, lines if args.md else None, {"rows": rows, "median_abs_error": medians})
    return 0


if __name__ == "__main__":
    sys.exit(main())
