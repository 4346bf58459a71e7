#!/usr/bin/python3
"""`modelstat profile --generate`'s greedy tokens against PyTorch eager.

    /usr/bin/python3 tests/e2e/check_generate_torch.py --modelstat BIN --workdir DIR

A 2-layer GPT-2-style decoder (bench/transformer_models.py's GPT2: d 64, 4
heads, vocabulary 256, 128 positions) with fixed random weights, its linear
layers scaled up so that the next token depends on the whole context (at
GPT-2's init scale the residual stream is the input token's own embedding and
the tied head repeats it), exported with its KV cache as the bench exports it.
modelstat generates 16 tokens after its own 12-token prompts, batch 2, through
its cache loop (the present tensors fed back as past); PyTorch recomputes the
whole sequence at every step with no cache at all (an empty past), in eager
mode, and takes the argmax of the last position. The tokens must be equal; the
gap between the two largest logits at every step is printed and must exceed
1e-3, so that equal tokens are a comparison and not a coin toss between near
ties (fp32 differences between two implementations are ~1e-6 here).

Exit status: 0 equal, 1 a token differs (or a gap is too small to compare), 2 bad usage.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PROMPT, GENERATE, BATCH = 12, 16, 2


def load_bench_module():
    spec = importlib.util.spec_from_file_location(
        "transformer_models", os.path.join(HERE, "..", "..", "bench", "transformer_models.py"))
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)
    return tm


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--modelstat", required=True)
    ap.add_argument("--workdir", required=True)
    a = ap.parse_args(argv)
    os.makedirs(a.workdir, exist_ok=True)
    tm = load_bench_module()
    torch.manual_seed(11)
    model = tm.GPT2(layers=2, d=64, heads=4, vocab=256, positions=128)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, tm.Conv1D):
                m.weight.mul_(8.0)
    path = os.path.join(a.workdir, "gpt2_tiny_generate.onnx")
    tm.export_gpt2(path, layers=2, positions=128, d=64, heads=4, vocab=256, model=model)

    cmd = [a.modelstat, "profile", path, "--generate", f"{PROMPT}:{GENERATE}", "--dim", f"batch={BATCH}",
           "--threads", "1", "--warmup", "0", "--iters", "1", "--max-time", "0.1", "--no-layers", "-f", "json"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        return 1
    doc = json.loads(run.stdout)
    prompts, generated = doc["tokens"]["prompt"], doc["tokens"]["generated"]
    if len(prompts) != BATCH or any(len(p) != PROMPT for p in prompts):
        print("unexpected prompt shape in modelstat's output", file=sys.stderr)
        return 1

    model.eval()
    failures = 0
    smallest_gap = float("inf")
    with torch.no_grad():
        for b in range(BATCH):
            sequence = list(prompts[b])
            expected = []
            for _ in range(GENERATE):
                ids = torch.tensor([sequence], dtype=torch.long)
                empty = [torch.zeros(1, 4, 0, 16) for _ in range(4)]
                logits = model(ids, *empty)[0][0, -1]
                top = torch.topk(logits, 2).values
                smallest_gap = min(smallest_gap, float(top[0] - top[1]))
                token = int(torch.argmax(logits))
                expected.append(token)
                sequence.append(token)
            status = "equal" if expected == generated[b] else "DIFFERENT"
            failures += expected != generated[b]
            print(f"sequence {b}: prompt {prompts[b]}\n  modelstat {generated[b]}\n  PyTorch   {expected}  {status}")
    print(f"smallest gap between the two largest logits: {smallest_gap:.4g}")
    distinct = len({t for row in generated for t in row})
    print(f"distinct generated tokens: {distinct}")
    if smallest_gap <= 1e-3:
        print("the comparison is not meaningful: a step's two largest logits are within 1e-3", file=sys.stderr)
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
