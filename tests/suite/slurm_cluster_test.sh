#!/usr/bin/env bash
# The issue's 8-cell suite (custom_model and tiny_bert at seq 16, batch 1 and 2,
# threads 1 and 2) on a real one-node Slurm cluster: started here
# (tools/slurm_local_cluster.sh, as root), the suite submitted as a packed job
# array (`suite slurm --wait`, 2 cells per task, 2 tasks at once), its result
# files collected, every cell's row checked against the cells `suite run
# --dry-run` lists, and the cluster stopped whatever happens. Prints how long
# the array took from submission to its last result file.
#   slurm_cluster_test.sh MODELSTAT SOURCE_DIR WORK_DIR PYTHON
set -euo pipefail
modelstat=$1
src=$2
work=$3
python=$4

rm -rf "$work"
mkdir -p "$work"
cluster="$work/cluster"
stop_cluster() { bash "$src/tools/slurm_local_cluster.sh" stop "$cluster" || true; }
trap stop_cluster EXIT
bash "$src/tools/slurm_local_cluster.sh" start "$cluster" >/dev/null
export SLURM_CONF="$cluster/slurm.conf"

cat >"$work/suite.yaml" <<EOF
name: issue-28
models:
  - path: $src/sample_models/custom_model.onnx
  - path: $src/sample_models/tiny_bert.onnx
    bindings: {seq: 16}
axes:
  batch: [1, 2]
  threads: [1, 2]
profile: {min_time: 0.2, max_time: 0.5}
fit: {ceilings: $src/tests/data/suite/ceilings-cpu.json}
EOF

start=$(date +%s.%N)
"$modelstat" suite slurm "$work/suite.yaml" --results "$work/results" --max-parallel 2 --cells-per-task 2 --wait \
  | tee "$work/submit.txt"
grep -q -- "--array=0-3%2" "$work"/results/slurm/*.sbatch || { echo "FAIL: not an array of 4 tasks, 2 at once"; cat "$work"/results/slurm/*.sbatch; exit 1; }
last=$(find "$work/results" -name 'cell-*.json' -printf '%T@\n' | sort -n | tail -1)
"$python" -c "import sys; print('array: submission to the last result file: %.1f s' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$last"

"$modelstat" suite collect "$work/results" --into "$work/results.db"
"$modelstat" suite collect "$work/results" --into "$work/results.db" | grep -q ": 0 added to .*, 8 already there" \
  || { echo "FAIL: a second collect added rows"; exit 1; }
"$modelstat" results "$work/results.db" -f json -o "$work/results.json"
"$modelstat" results "$work/results.db"
"$modelstat" suite run "$work/suite.yaml" --dry-run -f json >"$work/cells.json"

"$python" - "$work/results.json" "$work/cells.json" "$(hostname)" <<'EOF'
import json, statistics, sys
results = json.load(open(sys.argv[1]))["results"]
cells = {c["key"]: c for c in json.load(open(sys.argv[2]))}
host = sys.argv[3]
assert len(results) == 8, "expected 8 rows, got %d" % len(results)
seen = set()
for r in results:
    c = r["cell"]
    assert c["key"] in cells, "a row of a cell the suite does not define: %s" % c["key"]
    want = cells[c["key"]]
    for k in ("model", "batch", "threads", "bindings", "index"):
        assert c[k] == want[k], (k, c[k], want[k])
    assert r["status"] == "ok", (c["model"], r["error_type"], r["error"])
    m = r["measurement"]["latency"]
    assert m["count"] == len(m["samples_s"]) > 0
    assert m["median_s"] == statistics.median(m["samples_s"]), "median"
    assert abs(r["measurement"]["fps"] - c["batch"] / m["median_s"]) < 1e-9 * r["measurement"]["fps"]
    assert r["context"]["threads"] == c["threads"] and r["context"]["batch"] == c["batch"]
    assert r["machine"]["host"] == host and r["suite"]["run_id"].startswith("slurm-")
    assert r["totals"]["macs"] > 0
    f = r["forecast"]
    assert f["latency_s"] is not None and abs(f["error"] - (f["latency_s"] / m["median_s"] - 1)) < 1e-9, f
    if c["model"] == "tiny_bert":
        assert r["measurement"]["tokens"] == c["batch"] * 16
    seen.add(c["key"])
assert seen == set(cells), "cells without a row: %s" % (set(cells) - seen)
print("slurm cluster: 8 cells submitted, collected, every row checked")
EOF
