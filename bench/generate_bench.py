#!/usr/bin/python3
"""`modelstat report --generate P:G` against the same greedy loop in ONNX
Runtime (bench/ort_generate.mjs, onnxruntime-node) and, for the torch-exported
GPT-2, PyTorch eager (the bench module itself, its own KV cache fed back),
side by side, interleaved: each cell (model, P:G, threads) runs the three in
one order, then in the reverse order, pinned with taskset, the cell holding
flock /tmp/modelstat-bench.lock throughout; the figures are the medians of the
rounds' medians.

  /usr/bin/python3 bench/generate_bench.py --models DIR [--out results.json] [--rounds 2]
      [--settings 128:128,512:128] [--threads 1,2] [--only gpt2,gpt2.extended,gpt2.all,genai] [--first-cpu N]

DIR holds gpt2.onnx, gpt2.extended.onnx, gpt2.all.onnx (bench/transformer_models.py
DIR) and genai.onnx (bench/genai_layout_model.py DIR/genai.onnx). Ceilings for
fit's forecasts are measured once per thread count (`modelstat device --threads
T --save`). Prints a Markdown table per acceptance point and writes every run's
figures to --out.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELSTAT = os.path.join(ROOT, "build", "tools", "modelstat")
LOCK = "/tmp/modelstat-bench.lock"
ORT_MODULES = "/tmp/ortnode/node_modules"


FIRST_CPU = 0  # --first-cpu: a cell of T threads is pinned to CPUs FIRST_CPU .. FIRST_CPU+T-1


def cpus(threads):
    return ",".join(str(FIRST_CPU + c) for c in range(threads))


def bench_env():
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    return env


def locked(cmd, threads):
    """Pinned; the bench lock is held by the cell around it (cell_lock)."""
    return ["taskset", "-c", cpus(threads)] + cmd


class cell_lock:
    """flock /tmp/modelstat-bench.lock around one cell (all its runtimes and rounds), so that no other
    benchmark overlaps it and its side-by-side figures share their conditions."""

    def __enter__(self):
        import fcntl
        self.f = open(LOCK, "a")
        fcntl.flock(self.f, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        import fcntl
        fcntl.flock(self.f, fcntl.LOCK_UN)
        self.f.close()


def kv_spec(model_path, batch=1):
    """The cache pairs of the model's graph inputs (past_key_values.* -> present.*), with their dims."""
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    spec = []
    for vi in m.graph.input:
        if not vi.name.startswith("past_key_values"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else 0 for d in vi.type.tensor_type.shape.dim]
        dims[0] = batch
        spec.append({"past": vi.name, "present": vi.name.replace("past_key_values", "present"), "dims": dims, "axis": 2})
    return spec


def run_modelstat(model, setting, threads, ceilings, max_time):
    cmd = [MODELSTAT, "report", model, "--generate", setting, "--threads", str(threads), "--ceilings", ceilings,
           "--max-time", str(max_time), "-f", "json", "--top", "0"]
    t0 = time.time()
    out = subprocess.run(locked(cmd, threads), capture_output=True, text=True, env=bench_env())
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {out.stderr}")
    doc = json.loads(out.stdout)
    phases = []
    for p in doc["phases"]:
        clean, layers = p["clean_step"], p["layer_sum"]
        phases.append({"name": p["name"], "context": p["context"], "loop_median_s": p["loop_median_s"],
                       "clean_s": clean["median_s"], "layer_sum_s": layers["median_s"],
                       "layer_sum_vs_clean": p["layer_sum_vs_clean"],
                       # the per-node medians added up (the per-node pass's median total is layer_sum_s)
                       "node_median_sum_s": sum(l["time"]["median_s"] for l in p["layers"] if l.get("time")),
                       "forecast_s": p["forecast_s"],
                       "forecast_error": p["forecast_error"]})
    return {"ttft_s": doc["ttft"]["median_s"], "tpot_s": doc["tpot"]["median_s"], "itl_p50_s": doc["itl"]["p50_s"],
            "itl_p99_s": doc["itl"]["p99_s"], "pp_tps": doc["prompt_tokens_per_s"]["mean"],
            "tg_tps": doc["generation_tokens_per_s"]["mean"], "e2e_s": doc["end_to_end"]["median_s"],
            "generations": doc["ttft"]["count"], "slope_s_per_1k": doc["step_slope_s_per_1k_tokens"],
            "peak_bytes": doc["memory"]["peak_bytes"], "kv_bytes": doc["memory"]["kv_cache_bytes"],
            "layout": doc["kv_cache"]["layout"], "prompt": doc["tokens"]["prompt"][0],
            "tokens": doc["tokens"]["generated"][0], "phases": phases, "wall_s": time.time() - t0}


def step_stats(runs_ms):
    """TTFT, TPOT and ITL percentiles from per-generation step times (ms)."""
    import numpy as np
    ttft = [r[0] / 1e3 for r in runs_ms]
    tpot = [sum(r[1:]) / (len(r) - 1) / 1e3 for r in runs_ms]
    itl = np.array([s / 1e3 for r in runs_ms for s in r[1:]])
    return {"ttft_s": statistics.median(ttft), "tpot_s": statistics.median(tpot),
            "itl_p50_s": float(np.percentile(itl, 50)), "itl_p99_s": float(np.percentile(itl, 99))}


def run_ort(model, prompt, generate, threads, shared, iters):
    spec = {"model": model, "prompt": [prompt], "generate": generate, "threads": threads, "warmup": 1,
            "iters": iters, "opt": "all", "cache": kv_spec(model), "shared": shared}
    env = bench_env()
    env["NODE_PATH"] = ORT_MODULES
    out = subprocess.run(locked(["node", os.path.join(HERE, "ort_generate.mjs"), json.dumps(spec)], threads),
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"ort_generate: {out.stderr}")
    doc = json.loads(out.stdout)
    r = step_stats(doc["steps_ms"])
    r["tokens"] = doc["tokens"]
    r["ort_version"] = doc["ort_version"]
    return r


TORCH_SCRIPT = r"""
import json, sys, time, importlib.util
import torch
spec = importlib.util.spec_from_file_location("tm", sys.argv[1]); tm = importlib.util.module_from_spec(spec); spec.loader.exec_module(tm)
a = json.loads(sys.argv[2])
torch.set_num_threads(a["threads"])
torch.manual_seed(0)  # the weights bench/transformer_models.py exported (seed 0, GPT-2 first)
model = tm.GPT2(layers=12, positions=a["positions"]).eval()
def generation():
    steps, tokens = [], []
    past = [torch.zeros(1, 12, 0, 64) for _ in range(24)]
    ids = torch.tensor([a["prompt"]], dtype=torch.long)
    for k in range(a["generate"]):
        t0 = time.perf_counter()
        out = model(ids, *past)
        past = list(out[1:])
        nxt = int(torch.argmax(out[0][0, -1]))
        steps.append((time.perf_counter() - t0) * 1e3)
        tokens.append(nxt)
        ids = torch.tensor([[nxt]], dtype=torch.long)
    return steps, tokens
with torch.inference_mode():
    generation()
    runs, first = [], None
    for i in range(a["iters"]):
        s, t = generation()
        runs.append(s)
        first = first or t
print(json.dumps({"steps_ms": runs, "tokens": first, "torch": torch.__version__}))
"""


def run_torch(prompt, generate, threads, iters, positions):
    args = {"prompt": prompt, "generate": generate, "threads": threads, "iters": iters, "positions": positions}
    out = subprocess.run(locked(["/usr/bin/python3", "-c", TORCH_SCRIPT, os.path.join(HERE, "transformer_models.py"),
                                 json.dumps(args)], threads), capture_output=True, text=True, env=bench_env())
    if out.returncode != 0:
        raise RuntimeError(f"torch: {out.stderr}")
    doc = json.loads(out.stdout)
    r = step_stats(doc["steps_ms"])
    r["tokens"] = doc["tokens"]
    return r


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--out", default="generate_bench.json")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--settings", default="128:128,512:128")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="gpt2,gpt2.extended,gpt2.all,genai")
    ap.add_argument("--iters", type=int, default=3, help="generations per ORT / PyTorch run")
    ap.add_argument("--max-time", type=float, default=3.0)
    ap.add_argument("--first-cpu", type=int, default=0,
                    help="pin a T-thread cell to CPUs N..N+T-1 (e.g. 1 to keep 1-thread cells off CPU 0's builds)")
    a = ap.parse_args(argv)
    global FIRST_CPU
    FIRST_CPU = a.first_cpu
    threads_list = [int(t) for t in a.threads.split(",")]
    ceilings = {}
    for t in threads_list:
        path = os.path.join(os.path.abspath(os.path.dirname(a.out) or "."), f"ceilings-cpu-{t}.json")
        if not os.path.exists(path):
            with cell_lock():
                subprocess.run(locked([MODELSTAT, "device", "--threads", str(t), "--save", path], t), check=True,
                               env=bench_env(), capture_output=True)
        ceilings[t] = path
    results = []
    for name in a.only.split(","):
        model = os.path.join(a.models, name + ".onnx")
        for setting in a.settings.split(","):
            prompt_len, generate = (int(x) for x in setting.split(":"))
            for t in threads_list:
                cell = {"model": name, "setting": setting, "threads": t, "modelstat": [], "ort": [], "torch": []}
                torch_too = name == "gpt2"
                order = ["modelstat", "ort"] + (["torch"] if torch_too else [])
                prompt = None  # modelstat's (a fixed seed), from its first run: round 0 starts with it
                with cell_lock():
                    for rnd in range(a.rounds):
                        for who in (order if rnd % 2 == 0 else list(reversed(order))):
                            print(f"{time.strftime('%H:%M:%S')} {name} {setting} t{t} round {rnd}: {who}", file=sys.stderr, flush=True)
                            if who == "modelstat":
                                r = run_modelstat(model, setting, t, ceilings[t], a.max_time)
                                prompt = prompt or r["prompt"]
                            elif who == "ort":
                                r = run_ort(model, prompt, generate, t, name == "genai", a.iters)
                            else:
                                r = run_torch(prompt, generate, t, a.iters, 1024)
                            cell[who].append(r)
                results.append(cell)
                with open(a.out, "w") as f:
                    json.dump(results, f, indent=1)
    report(results)
    return 0


def fmt_ms(s):
    return "-" if s is None else f"{s * 1e3:.2f}"


def report(results):
    print("| model | P:G | threads | TTFT ms | TPOT ms | ITL p50 ms | ITL p99 ms | pp t/s | tg t/s | ORT TTFT ms | ORT TPOT ms "
          "| TTFT ratio | TPOT ratio | PyTorch TTFT ms | PyTorch TPOT ms | tokens equal |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for c in results:
        m = {k: med([r[k] for r in c["modelstat"]]) for k in ("ttft_s", "tpot_s", "itl_p50_s", "itl_p99_s", "pp_tps", "tg_tps")}
        o = {k: med([r[k] for r in c["ort"]]) for k in ("ttft_s", "tpot_s")} if c["ort"] else {}
        p = {k: med([r[k] for r in c["torch"]]) for k in ("ttft_s", "tpot_s")} if c["torch"] else {}
        same = [c["modelstat"][0]["tokens"] == r["tokens"] for r in c["ort"] + c["torch"]]
        print(f"| {c['model']} | {c['setting']} | {c['threads']} | {fmt_ms(m['ttft_s'])} | {fmt_ms(m['tpot_s'])} | "
              f"{fmt_ms(m['itl_p50_s'])} | {fmt_ms(m['itl_p99_s'])} | {m['pp_tps']:.1f} | {m['tg_tps']:.1f} | "
              f"{fmt_ms(o.get('ttft_s'))} | {fmt_ms(o.get('tpot_s'))} | "
              f"{m['ttft_s'] / o['ttft_s']:.2f} | {m['tpot_s'] / o['tpot_s']:.2f} | "
              f"{fmt_ms(p.get('ttft_s'))} | {fmt_ms(p.get('tpot_s'))} | {'yes' if all(same) else 'NO'} |"
              if o else "| (no ORT run) |")
    print()
    print("| model | P:G | threads | phase | context | in the loop ms | clean step ms | layer sum ms | sum vs clean "
          "| fit forecast ms | forecast error |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for c in results:
        phases = c["modelstat"][0]["phases"]
        for i, ph in enumerate(phases):
            rows = [r["phases"][i] for r in c["modelstat"]]
            vs = med([r["layer_sum_vs_clean"] for r in rows])
            err = med([r["forecast_error"] for r in rows])
            print(f"| {c['model']} | {c['setting']} | {c['threads']} | {ph['name']} | {ph['context']} | "
                  f"{fmt_ms(med([r['loop_median_s'] for r in rows]))} | {fmt_ms(med([r['clean_s'] for r in rows]))} | "
                  f"{fmt_ms(med([r['layer_sum_s'] for r in rows]))} | {'-' if vs is None else f'{vs * 100:+.1f}%'} | "
                  f"{fmt_ms(med([r['forecast_s'] for r in rows]))} | {'-' if err is None else f'{err * 100:+.1f}%'} |")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--report":
        report(json.load(open(sys.argv[2])))
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
