#!/usr/bin/env bash
# Everything that needs a GPU, in one call of a lent GPU machine (CUDA 13, nvcc, CMake, ninja,
# Python with a CUDA PyTorch; no apt, no network). Prepare here first: `bash tools/gpu_deps.sh`
# fetches the Debian packages the build needs into .gpu_deps/ (carried along, unpacked into a
# private prefix there). Then, on the GPU machine, `bash tools/gpu_check.sh`:
#   1. configure against PyTorch's CUDA LibTorch (torch.utils.cmake_prefix_path), build the CLI and
#      the profiler's tests (keep-going, so one call shows every compile error), run the CUDA tests
#      and the profiler tests beside them (a skip counts against the CUDA ones)
#   2. resnet50 (batch 1, 32) and seed 001's CustomModel (batch 32) in fp32, tf32, fp16 and bf16:
#      `modelstat profile --device cuda` next to PyTorch's own CUDA-event timing of the same
#      architecture and seeded weights (bench/torch_reference.py, BatchNorm folded as the export
#      folds it), interleaved per dtype; layer sum vs whole
#   3. modelstat device --device cuda (ceilings), resnet50 --max-batch (out-of-memory path),
#      the joined report with HTML and trace, a training step vs PyTorch's, seed 001's timer
#      comparison (pipeline), GPT-2 generation, fit --device cuda against the measurements
# Steps run in order of importance under one time budget (GPU_CHECK_BUDGET_S, default 540 s):
# a step that would not finish in what is left is skipped and says so. Each step's log, JSON and
# the summary go to $OUT/gpu_results.tgz (refreshed after every step) and $OUT/summary.md.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu_out}
W=/tmp/gpu_check_work
rm -rf "$W"; mkdir -p "$OUT" "$W"
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET_S:-540}
left() { echo $(( BUDGET - ($(date +%s) - START) )); }
pack() { tar czf "$OUT/gpu_results.tgz.partial" -C "$W" . 2>/dev/null && mv "$OUT/gpu_results.tgz.partial" "$OUT/gpu_results.tgz"; }
echo "| step | exit | seconds | at |" > "$W/steps.md"; echo "|---|---:|---:|---:|" >> "$W/steps.md"
# step NAME MAX_SECONDS CMD... : runs CMD with its output in $W/NAME.log, capped by what is left
step() {
  local name=$1 limit=$2; shift 2
  local l; l=$(left)
  if (( l < 15 )); then echo "| $name | skipped: budget spent | | |" >> "$W/steps.md"; echo "[skip] $name"; return 99; fi
  (( limit > l - 5 )) && limit=$(( l - 5 ))
  local t0; t0=$(date +%s)
  if declare -F "$1" > /dev/null; then  # a function of this script: in a shell of its own
    timeout -k 5 "$limit" bash -c "$(declare -f "$1"); $(printf '%q ' "$@")" > "$W/$name.log" 2>&1
  else
    timeout -k 5 "$limit" "$@" > "$W/$name.log" 2>&1
  fi
  local rc=$?
  local dt=$(( $(date +%s) - t0 ))
  (( rc == 124 || rc == 137 )) && rc="$rc (time-out at ${limit} s)"
  echo "| $name | $rc | $dt | $(( $(date +%s) - START )) |" >> "$W/steps.md"
  echo "[$(( $(date +%s) - START ))s] $name: exit $rc, ${dt} s"
  pack
  [[ "$rc" == 0 ]]
}

PREFIX=/tmp/modelstat_deps
mkdir -p "$PREFIX"
for deb in .gpu_deps/*.deb; do [ -f "$deb" ] && dpkg -x "$deb" "$PREFIX"; done
PY=$(command -v python3)
TORCH_PREFIX=$($PY -c 'import torch; print(torch.utils.cmake_prefix_path)')
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export CMAKE_PREFIX_PATH="$TORCH_PREFIX:$PREFIX/usr:$PREFIX/usr/lib/x86_64-linux-gnu/cmake"
export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
export MODELSTAT_CEILINGS_DIR=$W/ceilings MODELSTAT_CACHE_DIR=$W/cache W PY NVCC
{
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  $PY -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
  $NVCC --version | tail -2; cmake --version | head -1; g++ --version | head -1; nproc
} > "$W/machine.txt" 2>&1
cat "$W/machine.txt"

pipeline_check() {
  build-gpu/tools/modelstat pipeline sample_models/custom_model_part0.onnx sample_models/custom_model_part1.onnx \
    --device cuda --dim batch=32 --host-busy-ms 10 --timer-comparison --in-flight 2 \
    -f md -o "$W/pipeline_seed001_b32.md" --json "$W/pipeline_seed001_b32.json" \
    --trace "$W/pipeline_seed001_b32.trace.json" --html "$W/pipeline_seed001_b32.html" && cat "$W/pipeline_seed001_b32.md"
}

# --- 1. configure, build, test ---------------------------------------------------------------
if command -v ninja > /dev/null; then GEN=Ninja KEEP="-k 0"; else GEN="Unix Makefiles" KEEP=-k; fi
export GEN
configure() {
  cmake -S . -B build-gpu -G "$GEN" -DCMAKE_BUILD_TYPE=Release -DMODELSTAT_CUDA=ON -DMODELSTAT_WERROR=OFF \
    -DMODELSTAT_PYTHON_MODULE=OFF -DMODELSTAT_PYTHON="$PY" -DCMAKE_CUDA_COMPILER="$NVCC" \
    -DCMAKE_CUDA_ARCHITECTURES=90 "$@"
}
if ! step configure 120 configure; then
  # cuDNN from PyTorch's own wheel, where LibTorch's CMake did not find it
  CUDNN_DIR=$($PY -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' 2>/dev/null || true)
  rm -rf build-gpu
  step configure_cudnn_hint 120 configure -DCUDNN_INCLUDE_DIR="$CUDNN_DIR/include" \
    -DCUDNN_LIBRARY="$(ls "$CUDNN_DIR"/lib/libcudnn.so* 2>/dev/null | head -1)" || { tail -n 40 "$W"/configure*.log; pack; exit 1; }
fi
grep -E "modelstat:|Torch|CUDA|cuDNN" "$W"/configure*.log | tail -12
if ! step build 420 cmake --build build-gpu -j "$(nproc)" --target modelstat modelstat_profiler_tests -- $KEEP; then
  grep -E "error|Error" "$W/build.log" | head -60
  cp "$W/steps.md" "$OUT/summary.md"; pack; exit 1
fi
M=build-gpu/tools/modelstat
# The CUDA tests first, alone, then every other profiler test in 16 gtest shards beside them
# (CliDevice and CeilingsProbe, the CPU calibrations, left out: minutes of CPU, nothing of CUDA).
CUDA_TESTS='Cuda*:*Cuda*:*CUDA*:MemoryMeterTest.*:ExecutorTest.*:CliProfile.*:CliPipeline.*:TrainStep*'
step cuda_tests 120 build-gpu/tests/modelstat_profiler_tests --gtest_filter="$CUDA_TESTS"
grep -E "^\[  (SKIPPED|FAILED|PASSED) |tests ran" "$W/cuda_tests.log" | head -30
profiler_tests() {
  local n
  n=$(nproc)
  for i in $(seq 0 $(( n - 1 ))); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i build-gpu/tests/modelstat_profiler_tests \
      --gtest_filter="-CliDevice.*:CeilingsProbe.*:$CUDA_TESTS" > "$W/shard_$i.txt" 2>&1 &
  done
  wait
  grep -h -E "^\[  (FAILED|SKIPPED) |^\[  PASSED" "$W"/shard_*.txt | sort | uniq -c
  ! grep -q -E "^\[  FAILED  \]" "$W"/shard_*.txt
}
export CUDA_TESTS
step profiler_tests 150 profiler_tests
head -40 "$W/profiler_tests.log"

# --- 2. modelstat vs PyTorch, four dtypes ------------------------------------------------------
step export_resnet50 120 $PY tests/e2e/export_torchvision.py resnet50 "$W/resnet50.onnx" --opset 17 --dynamic-batch
for dt in fp32 tf32 fp16 bf16; do
  step "torch_ref_$dt" 60 $PY bench/torch_reference.py --device cuda --fuse --dtypes "$dt" --min-time 1 \
    --out "$W/torch_reference_$dt.json"
  for b in 1 32; do
    step "resnet50_b${b}_$dt" 40 $M profile "$W/resnet50.onnx" --device cuda --dtype "$dt" --dim batch=$b \
      --max-time 4 -f json -o "$W/resnet50_b${b}_$dt.json"
  done
  step "custom_b32_$dt" 40 $M profile sample_models/custom_model.onnx --device cuda --dtype "$dt" --dim batch=32 \
    --max-time 4 -f json -o "$W/custom_b32_$dt.json"
done
$PY bench/compare_gpu.py "$W" > "$W/summary_compare.md" 2>&1; cat "$W/summary_compare.md"; pack

# --- 3. ceilings, max batch, report, training, pipeline, generation, fit -----------------------
step ceilings 150 $M device --device cuda -f json -o "$W/ceilings_cuda.json" --save "$W/ceilings/ceilings-cuda.json"
step max_batch 90 $M profile "$W/resnet50.onnx" --device cuda --dim batch=1 --max-batch --no-layers --max-time 2 \
  -f json -o "$W/resnet50_maxbatch.json"
step report 60 $M report "$W/resnet50.onnx" --device cuda --dim batch=32 --ceilings "$W/ceilings/ceilings-cuda.json" \
  --max-time 4 -f md -o "$W/report_resnet50_b32.md" --html "$W/report_resnet50_b32.html" \
  --trace "$W/trace_resnet50_b32.json"
step export_resnet18 60 $PY tests/e2e/export_torchvision.py resnet18 "$W/resnet18.onnx" --opset 17
for opt in sgd adam; do
  step "train_$opt" 40 $M profile "$W/resnet18.onnx" --device cuda --no-layers --memory --train-step --optimizer $opt \
    --max-time 4 -f json -o "$W/resnet18_train_$opt.json"
  step "torch_train_$opt" 40 $PY bench/train_step_reference.py --device cuda --model resnet18 --batch 1 --optimizer $opt
  cp "$W/torch_train_$opt.log" "$W/torch_train_$opt.json" 2>/dev/null
done
step pipeline 60 pipeline_check
step export_gpt2 90 $PY bench/transformer_models.py "$W/tm" --no-ort --layers 12
step generate 60 $M profile "$W/tm/gpt2.onnx" --device cuda --generate 128:128 --dim batch=1 --no-layers \
  --max-time 4 -f json -o "$W/gpt2_generate_128_128.json"
step fit 150 $PY bench/fit_validate.py --modelstat $M --device cuda --ceilings "$W/ceilings/ceilings-cuda.json" \
  --workdir "$W/fit_validate" --models custom_model resnet18 mobilenet_v2 resnet50 --repeats 1 \
  --json "$W/fit_cuda.json" --md "$W/fit_cuda.md"
$PY bench/compare_gpu.py "$W" > "$W/summary_compare.md" 2>&1
cat "$W/steps.md" "$W/summary_compare.md" > "$OUT/summary.md"
cat "$OUT/summary.md"
pack
