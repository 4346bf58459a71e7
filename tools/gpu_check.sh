#!/usr/bin/env bash
# Everything that needs a GPU, in one call (see tools/gpu_deps.sh and the README):
#   1. unpack the carried Debian packages (.gpu_deps/*.deb) into a private prefix
#   2. configure against PyTorch's CUDA LibTorch (torch.utils.cmake_prefix_path)
#   3. build, run the test suites (GPU tests included)
#   4. measure: modelstat device ceilings, resnet50 (batch 1 and 32) and the
#      seeds/001 CustomModel (batch 32) with modelstat vs PyTorch's own CUDA-event
#      timing of the same architecture, max batch
#   `tools/gpu_check.sh pipeline` (after the first call has built build-gpu/; the first call runs it too):
#      seed 001's comparison by `modelstat pipeline`: part0 -> 10 ms of busy host work -> part1
#      at batch 32 on CUDA, timed with a host timer and no sync, a sync after every stage, and
#      events between stages (--timer-comparison), plus 2 frames in flight (a stream per frame)
#   `tools/gpu_check.sh fit` (a second call, after the first has built build-gpu/):
#      modelstat fit's forecast against measured memory, latency and training step on
#      CUDA (bench/fit_validate.py --device cuda) with freshly measured CUDA ceilings
# Output: a summary table last; logs and JSON under $OUT (or ./gpu_out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
PREFIX=/tmp/modelstat_deps
mkdir -p "$PREFIX"
for deb in .gpu_deps/*.deb; do [ -f "$deb" ] && dpkg -x "$deb" "$PREFIX"; done
export CMAKE_PREFIX_PATH="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'):$PREFIX/usr:$PREFIX/usr/lib/x86_64-linux-gnu/cmake"
export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/nvidia_smi.txt"

# Issue 15: the seed's numbers were 57.07 ms end to end with syncs vs 47.97 ms with events
# (host work ~9 ms hidden behind model 1), per-model times nearly equal, 0.23 ms enqueue-only.
pipeline_check() {
  build-gpu/tools/modelstat pipeline sample_models/custom_model_part0.onnx sample_models/custom_model_part1.onnx \
    --device cuda --dim batch=32 --host-busy-ms 10 --timer-comparison --in-flight 2 \
    -f md -o "$OUT/pipeline_seed001_b32.md" --json "$OUT/pipeline_seed001_b32.json" \
    --trace "$OUT/pipeline_seed001_b32.trace.json" --html "$OUT/pipeline_seed001_b32.html"
  cat "$OUT/pipeline_seed001_b32.md"
}
if [ "${1:-}" = pipeline ]; then
  pipeline_check
  exit $?
fi

if [ "${1:-}" = fit ]; then
  M=build-gpu/tools/modelstat
  $M device --device cuda --save "$OUT/ceilings_cuda.json" > "$OUT/device_cuda.txt"
  python3 bench/fit_validate.py --modelstat $M --device cuda --ceilings "$OUT/ceilings_cuda.json" \
    --workdir /tmp/fit_validate --models custom_model tiny_bert resnet18 mobilenet_v2 resnet50 \
    --json "$OUT/fit_cuda.json" --md "$OUT/fit_cuda.md"
  exit $?
fi

set -e
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DMODELSTAT_CUDA=ON \
  -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc 2>&1 | tee "$OUT/configure.log" | tail -5
cmake --build build-gpu -j "$(nproc)" 2>&1 | tee "$OUT/build.log" | tail -5
ctest --test-dir build-gpu --output-on-failure -j 8 2>&1 | tee "$OUT/ctest.log" | tail -15
set +e

M=build-gpu/tools/modelstat
python3 tests/e2e/export_torchvision.py resnet50 /tmp/resnet50.onnx --opset 17 --dynamic-batch > /dev/null
# the committed CustomModel is a skeleton: the profiler fills its absent weights from the seed (same cost)
for b in 1 32; do
  $M profile /tmp/resnet50.onnx --device cuda --dim batch=$b -f json -o "$OUT/resnet50_b$b.json"
done
$M profile sample_models/custom_model.onnx --device cuda --dim batch=32 -f json -o "$OUT/custom_b32.json"
$M profile /tmp/resnet50.onnx --device cuda --dim batch=1 --max-batch --no-layers -f json -o "$OUT/resnet50_maxbatch.json"
python3 bench/torch_reference.py --device cuda --out "$OUT/torch_reference.json"
# measured memory and a training step (caching-allocator statistics, CUDA events per part) vs PyTorch's own step
python3 tests/e2e/export_torchvision.py resnet18 /tmp/resnet18.onnx --opset 17 > /dev/null
for opt in sgd adam; do
  $M profile /tmp/resnet18.onnx --device cuda --no-layers --memory --train-step --optimizer $opt -f json \
    -o "$OUT/resnet18_train_$opt.json"
  python3 bench/train_step_reference.py --device cuda --model resnet18 --batch 1 --optimizer $opt \
    > "$OUT/torch_train_$opt.json"
done
# issue 4 on the GPU: measured ceilings, the joined report (HTML + trace) of resnet50 at batch 32
$M device --device cuda -f json -o "$OUT/ceilings_cuda.json"
$M report /tmp/resnet50.onnx --device cuda --dim batch=32 --ceilings "$OUT/ceilings_cuda.json" -f md \
  -o "$OUT/report_resnet50_b32.md" --html "$OUT/report_resnet50_b32.html" --trace "$OUT/trace_resnet50_b32.json"
pipeline_check > "$OUT/pipeline_check.log" 2>&1 || echo "pipeline check failed: $OUT/pipeline_check.log"
python3 bench/compare_gpu.py "$OUT" | tee "$OUT/summary.md"
