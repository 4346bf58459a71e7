#!/usr/bin/env bash
# Builds the libFuzzer target with clang (ASan + UBSan) and fuzzes loading +
# analysis for SECONDS (default 600), seeded with the sample models and the
# bad-input corpus. Crashing inputs land in fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN=${1:-600}
command -v clang++ >/dev/null || { echo "needs clang: apt-get install clang libclang-rt-14-dev" >&2; exit 2; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMODELSTAT_FUZZ=ON \
  -DMODELSTAT_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target fuzz_analyze
mkdir -p fuzz/corpus-run fuzz/artifacts
cp -n sample_models/*.onnx tests/data/bad/*.onnx fuzz/corpus-run/ 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
  build-fuzz/fuzz/fuzz_analyze fuzz/corpus-run -max_total_time="$SECONDS_TO_RUN" -rss_limit_mb=4096 \
  -max_len=65536 -timeout=10 -artifact_prefix=fuzz/artifacts/ -print_final_stats=1
