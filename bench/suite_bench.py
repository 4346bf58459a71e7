#!/usr/bin/env python3
"""The measurements of issue 28 (bench/RESULTS.md, "Suites (issue 28)"):

  suite_bench.py --modelstat BIN --work DIR STEP...   (run as root for the Slurm steps)

  slurm     the issue's 8-cell suite as a packed Slurm array on a one-node cluster
            (tools/slurm_local_cluster.sh): submission to last result file; the same
            suite run locally: the same cells, and `results compare` of the two runs
  resume    the 8-cell suite killed halfway (SIGTERM, then SIGKILL) and resumed:
            every cell exactly once
  models    six real models (--models DIR: resnet18, resnet50, mobilenet_v2,
            efficientnet_b0, convnext_tiny .onnx with a symbolic batch, and
            tf/bert.onnx) x batch 1, 8 x threads 1, 2 x runtime modelstat, ort
            (tools/runners/onnxruntime.mjs; --ort-modules), fit auto; CSV and HTML
  compare   a suite of small models as three "machines": vm-quiet, vm-quiet-again
            (nothing changed) and vm-busy (a busy-loop process on CPU 1), compared
  overhead  20 cells of small models: the suite's wall time against the time its
            cells spent measuring
  scale     100 machines x 10,000 cells of synthetic result files (suite_synthetic.py):
            collect, a filtered query, the HTML page (sizes, Chromium's load time)
  pack      a Slurm submission of 10,000 cells, packed under MaxArraySize
Figures are printed as they come; the machine is shared with other builds.
"""
import argparse
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
A = None


def sh(cmd, check=True, env=None, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})), **kw)
    if check and r.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (r.returncode, " ".join(cmd), r.stdout[-3000:], r.stderr[-3000:]))
    return r


def ms(*args, **kw):
    return sh([A.modelstat] + list(args), **kw)


def ms_peak(*args):
    """Runs modelstat under /usr/bin/time: (output, wall seconds, peak resident MB)."""
    r = sh(["/usr/bin/time", "-f", "TIME %e %M", A.modelstat] + list(args))
    wall, kb = r.stderr.strip().splitlines()[-1].split()[1:3]
    return r, float(wall), int(kb) / 1024


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def rows(db, where="1"):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT cell_key, run_id, status, median_s, wall_s, d.record FROM results JOIN records d USING "
                           "(result_id) WHERE " + where).fetchall()
    finally:
        con.close()


def issue_suite(work):
    return write(os.path.join(work, "issue.yaml"), f"""name: issue-28
models:
  - path: {SRC}/sample_models/custom_model.onnx
  - path: {SRC}/sample_models/tiny_bert.onnx
    bindings: {{seq: 16}}
axes:
  batch: [1, 2]
  threads: [1, 2]
profile: {{min_time: 0.2, max_time: 0.5}}
fit: {{ceilings: {SRC}/tests/data/suite/ceilings-cpu.json}}
""")


class Cluster:
    def __init__(self, work):
        self.dir = os.path.join(work, "cluster")

    def __enter__(self):
        sh(["bash", os.path.join(SRC, "tools/slurm_local_cluster.sh"), "start", self.dir])
        os.environ["SLURM_CONF"] = os.path.join(self.dir, "slurm.conf")
        return self

    def __exit__(self, *exc):
        sh(["bash", os.path.join(SRC, "tools/slurm_local_cluster.sh"), "stop", self.dir], check=False)


def step_slurm(work):
    suite = issue_suite(work)
    results, db = os.path.join(work, "slurm-results"), os.path.join(work, "slurm.db")
    shutil.rmtree(results, ignore_errors=True)
    with Cluster(work):
        start = time.time()
        out, wait = timed(lambda: ms("suite", "slurm", suite, "--results", results, "--max-parallel", "2",
                                     "--cells-per-task", "2", "--wait"))
        print(out.stdout.strip())
        last = max(os.path.getmtime(os.path.join(d, f)) for d, _, fs in os.walk(results) for f in fs if f.startswith("cell-"))
        print("slurm: 8 cells, 4 tasks of 2, 2 at once: submission to the last result file %.1f s; sbatch --wait returned "
              "after %.1f s" % (last - start, wait))
    if os.path.exists(db):
        os.remove(db)
    ms("suite", "collect", results, "--into", db)
    _, local = timed(lambda: ms("suite", "run", suite, "--results", db))
    print("local: the same suite in %.1f s" % local)
    step_slurm_compare(work)


def step_slurm_compare(work):
    """The slurm step's checks on its database: the same cells on both sides, and the two runs compared."""
    db = os.path.join(work, "slurm.db")
    runs = {}
    for key, run, status, median, wall, _ in rows(db):
        runs.setdefault(run.split("-")[0], {})[key] = (status, median)
    print("same cells: %s (slurm %d, local %d, all ok: %s)" % (
        set(runs["slurm"]) == set(runs["run"]), len(runs["slurm"]), len(runs["run"]),
        all(s == "ok" for r in runs.values() for s, _ in r.values())))
    slurm_run = rows(db, "run_id LIKE 'slurm-%'")[0][1]
    local_run = rows(db, "run_id LIKE 'run-%'")[0][1]
    r = ms("results", "compare", db, "--base", "run=" + slurm_run, "--new", "run=" + local_run, check=False)
    print("results compare run=slurm -> run=local (exit %d):\n%s" % (r.returncode, r.stdout))


def kill_resume(suite, db, sig):
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.Popen([A.modelstat, "suite", "run", suite, "--results", db], stderr=subprocess.PIPE, text=True)
    while not os.path.exists(db) or len(rows(db)) < 3:
        time.sleep(0.1)
    time.sleep(1.0)
    p.send_signal(sig)
    code = p.wait()
    before = len(rows(db))
    _, took = timed(lambda: ms("suite", "run", suite, "--results", db, "--resume"))
    after = rows(db)
    keys = [r[0] for r in after]
    print("%s: exit %d with %d of 8 cells recorded; --resume ran the rest in %.1f s: %d rows, %d distinct cells, "
          "%d run(s), all ok: %s" % (signal.Signals(sig).name, code, before, took, len(after), len(set(keys)),
                                     len({r[1] for r in after}), all(r[2] == "ok" for r in after)))


def step_resume(work):
    suite = issue_suite(work)
    kill_resume(suite, os.path.join(work, "term.db"), signal.SIGTERM)
    kill_resume(suite, os.path.join(work, "kill.db"), signal.SIGKILL)


def step_models(work):
    m = A.models
    suite = write(os.path.join(work, "models.yaml"), f"""name: six-models
models:
  - path: {m}/resnet18.onnx
  - path: {m}/resnet50.onnx
  - path: {m}/mobilenet_v2.onnx
  - path: {m}/efficientnet_b0.onnx
  - path: {m}/convnext_tiny.onnx
  - path: {m}/tf/bert.onnx
    name: bert4-base-seq128
    bindings: {{seq: 128}}
axes:
  batch: [1, 8]
  threads: [1, 2]
  runtime: [modelstat, ort]
profile: {{warmup_time: 0.5, min_time: 1.5, max_time: 4}}
fit: auto
runners:
  ort:
    command: [node, "{SRC}/tools/runners/onnxruntime.mjs", "{{model}}", "{{inputs}}", "{{threads}}", "{{requests}}",
              "{{warmup}}", "{{warmup_time}}", "{{iters}}", "{{min_time}}", "{{max_time}}"]
""")
    db = os.path.join(work, "models.db")
    if os.path.exists(db):
        os.remove(db)
    _, took = timed(lambda: ms("suite", "run", suite, "--results", db, env={"NODE_PATH": A.ort_modules}))
    print("six models x 2 batch x 2 threads x 2 runtimes: %.0f s" % took)
    ms("results", db, "-f", "csv", "-o", os.path.join(work, "models.csv"))
    ms("results", db, "-f", "html", "-o", os.path.join(work, "models.html"))
    print(ms("results", db).stdout)


def step_models_one_cpu(work):
    """The six-model suite again on 'a machine of one CPU' (taskset -c 0, recorded as vm-one-cpu), beside the
    models step's results (machine vm): a second column on the page, and the two machines compared."""
    suite, db = os.path.join(work, "models.yaml"), os.path.join(work, "models.db")
    _, took = timed(lambda: sh(["taskset", "-c", "0", A.modelstat, "suite", "run", suite, "--results", db, "--machine",
                                "vm-one-cpu"], env={"NODE_PATH": A.ort_modules}))
    print("six-model suite pinned to CPU 0 as vm-one-cpu: %.0f s" % took)
    for runtime in ("modelstat", "ort"):
        r = ms("results", "compare", db, "--base", "machine=vm", "--new", "machine=vm-one-cpu", "--runtime", runtime,
               check=False)
        print("results compare machine=vm -> machine=vm-one-cpu --runtime %s: exit %d\n%s%s" % (
            runtime, r.returncode, r.stdout, r.stderr))
    ms("results", db, "-f", "csv", "-o", os.path.join(work, "models.csv"))
    ms("results", db, "-f", "html", "-o", os.path.join(work, "models.html"))


def tiny_suite(work, name, cells_note=""):
    models = "".join(f"  - path: {SRC}/sample_models/{x}\n" for x in ("tiny_cnn.onnx", "tiny_yolo.onnx"))
    return write(os.path.join(work, name + ".yaml"), f"""name: {name}
models:
{models}  - path: {SRC}/sample_models/tiny_bert.onnx
    bindings: {{seq: 32}}
  - path: {SRC}/sample_models/tiny_gpt2.onnx
    bindings: {{seq: 32}}
axes:
  threads: [1, 2]
profile: {{warmup_time: 0.2, min_time: 1, max_time: 2}}
fit: off
""")


def step_compare(work):
    suite = tiny_suite(work, "small")
    db = os.path.join(work, "compare.db")
    if os.path.exists(db):
        os.remove(db)
    ms("suite", "run", suite, "--results", db, "--machine", "vm-quiet")
    ms("suite", "run", suite, "--results", db, "--machine", "vm-quiet-again")
    hog = subprocess.Popen(["taskset", "-c", "1", sys.executable, "-c", "while True: pass"])
    try:
        ms("suite", "run", suite, "--results", db, "--machine", "vm-busy")
    finally:
        hog.kill()
    # A machine of one CPU: the same box with the cells pinned to CPU 0 (taskset), so a 2-thread cell's
    # threads share one core: its 2-thread cells should regress, its 1-thread ones not.
    sh(["taskset", "-c", "0", A.modelstat, "suite", "run", suite, "--results", db, "--machine", "vm-one-cpu"])
    for new in ("vm-quiet-again", "vm-busy", "vm-one-cpu"):
        r = ms("results", "compare", db, "--base", "machine=vm-quiet", "--new", "machine=" + new, check=False)
        print("results compare machine=vm-quiet -> machine=%s: exit %d\n%s%s" % (new, r.returncode, r.stdout, r.stderr))


def step_overhead(work):
    models = ["tiny_cnn.onnx", "tiny_yolo.onnx", "tied_weights.onnx", "constant_weights.onnx", "control_flow.onnx"]
    body = "".join(f"  - path: {SRC}/sample_models/{x}\n" for x in models)
    suite = write(os.path.join(work, "overhead.yaml"), f"""name: overhead
models:
{body}axes:
  threads: [1, 2]
  fusion: [on, off]
profile: {{warmup_time: 0.1, min_time: 0.2, max_time: 0.5}}
fit: {{ceilings: {SRC}/tests/data/suite/ceilings-cpu.json}}
""")
    db = os.path.join(work, "overhead.db")
    if os.path.exists(db):
        os.remove(db)
    _, wall = timed(lambda: ms("suite", "run", suite, "--results", db))
    measured = walls = 0.0
    n = 0
    for _, _, status, _, wall_s, record in rows(db):
        r = json.loads(record)
        n += 1
        walls += wall_s
        if r["measurement"]:
            measured += sum(r["measurement"]["latency"]["samples_s"])
    print("overhead: %d cells; suite wall %.1f s; the cells' own wall times %.1f s (%.2f s each); the measured samples "
          "%.2f s in all; so %.1f s (%.0f%%) of the suite is processes, LibTorch and model loads, warm-up, fit and "
          "writes, %.2f s per cell; the suite around its cells (expansion, hashing, database) %.2f s" % (
              n, wall, walls, walls / n, measured, wall - measured, 100 * (wall - measured) / wall,
              (wall - measured) / n, wall - walls))


def step_scale(work):
    syn, db = os.path.join(work, "syn"), os.path.join(work, "scale.db")
    keep = A.keep_db and os.path.exists(db)
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f) and not keep:
            os.remove(f)
    if A.reuse and os.path.isdir(os.path.join(syn, "machine099")):
        gen = float("nan")
    else:
        shutil.rmtree(syn, ignore_errors=True)
        _, gen = timed(lambda: sh([sys.executable, os.path.join(HERE, "suite_synthetic.py"), syn, "--machines", "100",
                                   "--cells", "10000", "--samples", "10"]))
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(syn) for f in fs)
    print("scale: 1,000,000 result files (100 machines x 10,000 cells, 10 samples each), %.2f GB, written in %.0f s%s" %
          (size / 1e9, gen, " (earlier)" if A.reuse else ""))
    if not keep:
        out, took, peak = ms_peak("suite", "collect", syn, "--into", db)
        wal = os.path.getsize(db + "-wal") if os.path.exists(db + "-wal") else 0
        print("collect: %.0f s, peak %.0f MB (%s; %s); database %.2f GB, log %.2f GB" % (
            took, peak, out.stdout.strip(), (out.stderr.strip().splitlines() or [""])[0], os.path.getsize(db) / 1e9, wal / 1e9))
        if not A.collect_once:
            out, took = timed(lambda: ms("suite", "collect", syn, "--into", db))
            print("collect again (nothing new): %.0f s (%s)" % (took, out.stdout.strip()))
    for args in (["--model", "model01*", "--machine", "machine00*", "-f", "csv"], ["--batch", "8", "--threads", "4", "-f", "csv"],
                 ["--status", "failed", "-f", "csv"]):
        out, took = timed(lambda: ms("results", db, *args))
        print("results %s: %.2f s, %d rows" % (" ".join(args), took, out.stdout.count("\n") - 1))
    page = os.path.join(work, "scale.html")
    _, took, peak = ms_peak("results", db, "-f", "html", "-o", page)
    print("results -f html (all 1,000,000): %.0f s, peak %.0f MB, page %.1f MB" % (took, peak, os.path.getsize(page) / 1e6))
    small = os.path.join(work, "scale-filtered.html")
    _, took2 = timed(lambda: ms("results", db, "--model", "model00*", "-f", "html", "-o", small))
    print("results --model 'model00*' -f html: %.1f s, page %.1f MB" % (took2, os.path.getsize(small) / 1e6))
    for p in (page, small):
        profile = tempfile.mkdtemp()
        try:
            r, took = timed(lambda: sh(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                                        "--no-first-run", "--user-data-dir=" + profile, "--virtual-time-budget=60000",
                                        "--dump-dom", "file://" + p + "#page=100&mpage=5&metric=fps"], check=False))
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        ready = 'data-ready="1"' in r.stdout and "data-error" not in r.stdout.split("<body", 1)[-1][:300]
        print("chromium --dump-dom %s (page 100, machines 41-50, FPS): %.1f s, script finished: %s" % (
            os.path.basename(p), took, ready))


def step_pack(work):
    # 10,000 cells on Slurm, packed under MaxArraySize.
    seqs = "".join(f"  - {{path: {SRC}/sample_models/tiny_bert.onnx, name: bert-seq{s}, bindings: {{seq: {s}}}}}\n"
                   for s in range(1, 101))
    suite = write(os.path.join(work, "tenk.yaml"), f"""name: ten-thousand
models:
{seqs}axes:
  batch: [{", ".join(str(b) for b in range(1, 101))}]
  threads: [1]
  runtime: [echo]
profile: {{warmup_time: 0.1, min_time: 0.2, max_time: 0.5}}
fit: off
runners:
  echo: [/bin/echo, '{{{{"runtime": "echo", "version": "0", "samples_s": [0.001], "notes": []}}}}']
""")
    results = os.path.join(work, "tenk-results")
    shutil.rmtree(results, ignore_errors=True)
    with Cluster(work):
        out, took = timed(lambda: ms("suite", "slurm", suite, "--results", results, "--max-parallel", "2"))
        print(out.stdout.strip())
        job = out.stdout.split("submitted job ")[1].split(";")[0]
        show = sh(["scontrol", "show", "job", job]).stdout
        array = [w for w in show.split() if w.startswith("ArrayTaskId=")][:1]
        print("sbatch of 10,000 cells: accepted in %.1f s; job %s %s" % (took, job, array))
        time.sleep(60)
        done = len([f for d, _, fs in os.walk(results) for f in fs if f.startswith("cell-")])
        print("after 60 s: %d result files written" % done)
        sh(["scancel", job], check=False)


def main():
    global A
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modelstat", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="/tmp/suites-models")
    ap.add_argument("--ort-modules", default="/tmp/ortnode/node_modules")
    ap.add_argument("--reuse", action="store_true", help="scale: keep the synthetic files of an earlier run")
    ap.add_argument("--keep-db", action="store_true", help="scale: keep the database an earlier run collected")
    ap.add_argument("--collect-once", action="store_true", help="scale: skip the second (idempotent) collect")
    ap.add_argument("steps", nargs="+", choices=["slurm", "resume", "models", "models_one_cpu", "compare", "overhead", "scale", "pack", "slurm_compare"])
    A = ap.parse_args()
    A.modelstat = os.path.abspath(A.modelstat)
    os.makedirs(A.work, exist_ok=True)
    for s in A.steps:
        print("=== " + s, flush=True)
        globals()["step_" + s](os.path.abspath(A.work))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
