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

Prints one row per model with the signed relative error (predicted/measured - 1)
of each of the four figures and the median absolute error per figure, and with
--md writes the same as a Markdown table. Run on a quiet machine: latency is a
measurement.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAMPLES = ["tiny_cnn", "custom_model", "tiny_bert", "tiny_gpt2", "tiny_yolo"]
# Dims the sample models leave symbolic besides the batch (bound the same for fit and profile).
MODEL_FLAGS = {"tiny_bert": ["--dim", "seq=32"], "tiny_gpt2": ["--dim", "seq=32"]}


def model_path(name, workdir):
    if name in SAMPLES:
        return os.path.join(ROOT, "sample_models", name + ".onnx")
    out = os.path.join(workdir, name + ".onnx")
    if not os.path.exists(out):
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "e2e", "export_torchvision.py"), name, out],
                       check=True, stdout=subprocess.DEVNULL)
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


def human_bytes(n):
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def human_s(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.3g} ms" if s >= 1e-3 else f"{s * 1e6:.3g} us"


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
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)

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
        with open(args.md, "w") as f:
            f.write("\n".join(lines) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "median_abs_error": medians}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
