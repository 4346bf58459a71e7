#!/usr/bin/env bash
# Fuzzes one of the two libFuzzer targets (clang, ASan + UBSan) for SECONDS
# (default 600):
#   bash tools/fuzz.sh [analyze|executor] [SECONDS]
#   analyze   loading + static analysis of a model (fuzz_analyze)
#   executor  the executor's load path as profile and verify take it: weights
#             materialised from the file, binding, inputs, verify's test-data
#             reader; no kernels run (fuzz_executor_load)
# Seeds: sample_models/, the bad-input corpus, the crafted models and the
# earlier findings (tests/data/fuzz_regressions/), and fuzz/seeds/ (written by
# tools/gen_fuzz_seeds.py). Crashing inputs land in fuzz/artifacts/; keep each
# finding, once fixed, in tests/data/fuzz_regressions/.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=analyze
if [ $# -gt 0 ] && [[ "$1" =~ ^[a-z]+$ ]]; then TARGET=$1; shift; fi
SECONDS_TO_RUN=${1:-600}
case "$TARGET" in
  analyze) BIN=fuzz_analyze ;;
  executor) BIN=fuzz_executor_load ;;
  *) echo "usage: bash tools/fuzz.sh [analyze|executor] [SECONDS]" >&2; exit 2 ;;
esac
command -v clang++ >/dev/null || { echo "needs clang: apt-get install clang libclang-rt-14-dev" >&2; exit 2; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMODELSTAT_FUZZ=ON \
  -DMODELSTAT_BUILD_TESTS=OFF -DMODELSTAT_CUDA=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "$BIN"
CORPUS=fuzz/corpus-$TARGET
mkdir -p "$CORPUS" fuzz/artifacts
cp -n sample_models/*.onnx tests/data/bad/*.onnx "$CORPUS"/ 2>/dev/null || true
cp -n tests/data/fuzz_regressions/* "$CORPUS"/ 2>/dev/null || true
[ -d fuzz/seeds ] && cp -n fuzz/seeds/* "$CORPUS"/ 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
  "build-fuzz/fuzz/$BIN" "$CORPUS" -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=4096 \
  -max_len=65536 -timeout=10 -artifact_prefix=fuzz/artifacts/ -print_final_stats=1
