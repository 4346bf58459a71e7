#!/usr/bin/python3
"""fit's training-step memory against a measured step, fp32 and bf16 mixed precision.

    /usr/bin/python3 bench/fit_train_validate.py --modelstat build/tools/modelstat \\
        --workdir /tmp/fit_train [--models tiny_bert tiny_gpt2 bert_small] [--md FILE]

For each model and precision: `modelstat fit MODEL --train --precision P -f json`
(memory.total_bytes; priced with hand ceilings written here: memory does not
depend on the ceilings' figures, only on their device kind, cpu) against
`modelstat profile MODEL --train-step --precision P --memory --threads 1`
(train_step.peak_bytes: LibTorch's CPU allocator counted; bf16 runs the
forward under LibTorch's CPU autocast, docs/FIT.md). Adam. The goal: within 15%.

bert_medium is tiny_bert's model (tools/gen_sample_models.py) scaled up to
hidden 256, 4 layers, 128 tokens, batch 2; bert_small is generated here with Debian's torch (4 nn.TransformerEncoderLayer
blocks, d_model 256, 4 heads, feed-forward 1024, 128 tokens, batch 2, and a
linear head) and exported to ONNX; the sample models come from sample_models/.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SAMPLES = {"tiny_bert": ["--dim", "seq=32"], "tiny_gpt2": ["--dim", "seq=64"]}


def export_bert_small(path):
    script = r'''
import sys, torch
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True)
        s.enc = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        s.head = torch.nn.Linear(256, 256)
    def forward(s, x):
        return s.head(s.enc(x))
m = M().eval()
torch.onnx.export(m, torch.randn(2, 128, 256), sys.argv[1], input_names=["x"], output_names=["y"], opset_version=17)
'''
    subprocess.run(["/usr/bin/python3", "-c", script, path], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def export_bert_medium(path):
    # tiny_bert's classes (tools/gen_sample_models.py), scaled up: hidden 256,
    # 4 heads, feed-forward 1024, 4 layers, 2048-token vocabulary, 128 positions.
    script = r'''
import sys, torch
sys.path.insert(0, sys.argv[2])
import gen_sample_models as g
torch.manual_seed(5)
model = g.TinyBert(vocab=2048, max_pos=128, hidden=256, heads=4, ffn=1024, layers=4)
ids = torch.zeros(2, 128, dtype=torch.int64)
m = g._torch_export(model, (ids,), sys.argv[1], 17, ["input_ids"], ["last_hidden_state", "pooled"],
                    dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "last_hidden_state": {0: "batch", 1: "seq"},
                                  "pooled": {0: "batch"}})
g._save(m, sys.argv[1])
'''
    subprocess.run(["/usr/bin/python3", "-c", script, path, os.path.join(ROOT, "tools")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def model(name, workdir):
    if name in SAMPLES:
        return os.path.join(ROOT, "sample_models", name + ".onnx"), SAMPLES[name]
    if name == "bert_small":
        path = os.path.join(workdir, "bert_small.onnx")
        if not os.path.exists(path):
            export_bert_small(path)
        return path, []
    if name == "bert_medium":
        path = os.path.join(workdir, "bert_medium.onnx")
        if not os.path.exists(path):
            export_bert_medium(path)
        return path, ["--dim", "batch=2", "--dim", "seq=128"]
    raise SystemExit(f"unknown model {name}")


def run_json(cmd, ok=(0, 3)):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode not in ok:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def hand_ceilings(path):
    # A CPU with round figures: fit's memory reads only the device kind and threads.
    json.dump({"schema_version": "1.2", "device_kind": "cpu", "device_name": "hand cpu", "source": "measured",
               "threads": 1, "date": "", "memory_bandwidth_bytes_per_second": 1e10, "op_overhead_seconds": 1e-6,
               "matmul": [{"dtype": "fp32", "flops_per_second": 1e11, "best_size": 1024, "curve": []}],
               "notes": []}, open(path, "w"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", default=os.path.join(ROOT, "build", "tools", "modelstat"))
    ap.add_argument("--workdir", default="/tmp/fit_train_validate")
    ap.add_argument("--models", nargs="+", default=["tiny_bert", "tiny_gpt2", "bert_medium", "bert_small"])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    ap.add_argument("--md", help="write the table as Markdown to this file")
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    ceilings = os.path.join(args.workdir, "hand_ceilings.json")
    hand_ceilings(ceilings)
    lines = ["| model | precision | fit total | measured peak | error | fit: weights / grads at peak / optimizer / "
             "activations (16-bit weight copies) / workspace |",
             "| :--- | :--- | ---: | ---: | ---: | :--- |"]
    worst = 0.0
    for name in args.models:
        path, flags = model(name, args.workdir)
        for precision in args.precisions:
            fit = run_json([args.modelstat, "fit", path, *flags, "--ceilings", ceilings, "--train", "--precision",
                            precision, "-f", "json"])["memory"]
            prof = run_json([args.modelstat, "profile", path, *flags, "--threads", "1", "--train-step", "--memory",
                             "--precision", precision, "--no-layers", "--warmup", "1", "--warmup-time", "0",
                             "--iters", "3", "--min-time", "0", "--max-time", "5", "-f", "json"], ok=(0,))
            measured = prof["train_step"]["peak_bytes"]
            err = fit["total_bytes"] / measured - 1.0
            worst = max(worst, abs(err))
            copies = fit.get("training", {}).get("low_precision_weight_bytes_at_peak", 0)
            lines.append(f"| {name} | {precision} | {fit['total_bytes']:,} | {measured:,} | {err:+.1%} | "
                         f"{fit['weights_bytes']:,} / {fit['gradient_bytes_at_peak']:,} / "
                         f"{fit['optimizer_state_bytes']:,} / {fit['activation_peak_bytes']:,} ({copies:,}) / "
                         f"{fit['workspace_bytes']:,} |")
            print(lines[-1], flush=True)
    lines.append(f"\nlargest absolute error: {worst:.1%} (goal: 15%)")
    print(lines[-1])
    if args.md:
        open(args.md, "w").write("\n".join(lines) + "\n")
    return 0 if worst <= 0.15 else 1


if __name__ == "__main__":
    sys.exit(main())
