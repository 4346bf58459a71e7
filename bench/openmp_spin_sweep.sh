#!/bin/bash
# OpenMP wait policy sweep at --threads 2 (bench/RESULTS.md, "OpenMP wait policy", session 7).
# usage: bench/openmp_spin_sweep.sh MODEL ROUNDS passive|active|spinN... (MODEL: /tmp/b14/MODEL.onnx) Run from the repository root, after the build.
m=$1; rounds=$2; shift 2
for r in $(seq $rounds); do
 for cfg in "$@"; do
  envs="env -u OPENBLAS_CORETYPE -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT"
  case $cfg in
   passive) envs="$envs OMP_WAIT_POLICY=PASSIVE";;
   active) envs="$envs OMP_WAIT_POLICY=active";;
   spin*) envs="$envs MODELSTAT_OMP_WAIT_POLICY=libgomp GOMP_SPINCOUNT=${cfg#spin} OPENBLAS_THREAD_TIMEOUT=4";;
  esac
  v=$($envs taskset -c 0-1 ./build/tools/modelstat profile /tmp/b14/$m.onnx --threads 2 --no-layers --min-time 1.5 -f json 2>/dev/null | /usr/bin/python3 -c "import json,sys; print(round(json.load(sys.stdin)['whole']['median_s']*1e3,2))")
  echo "$m $cfg $v"
 done
done
