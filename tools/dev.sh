#!/usr/bin/env bash
# One entry point for the README's quick start and for CI.
#   bash tools/dev.sh demo   install what is missing, build the command line only, profile a bundled sample
#   bash tools/dev.sh test   install what is missing, build everything, run the whole test suite (CI)
#   bash tools/dev.sh build  install what is missing and build everything
# Environment: BUILD_DIR (default build), JOBS (default: nproc), MODELSTAT_WERROR=1 (warnings are
# errors: .ci/run sets it), VERBOSE=1 (the compiler's full output instead of one progress line).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
# Debian 12 packages: what building the command line needs (the demo), then what the tests and the
# sample-model scripts need on top (test, build).
BUILD_PACKAGES=(cmake g++ make libtorch-dev libdnnl-dev libopenblas0-pthread libonnx-dev libprotobuf-dev
                protobuf-compiler libfmt-dev libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev)
TEST_PACKAGES=(libgtest-dev libonnx-testdata python3-onnx python3-torch python3-torchvision python3-numpy
               pybind11-dev python3-dev python3-pytest python3-pandas slurm-wlm munge chromium)

started=$SECONDS
elapsed() { local s=$((SECONDS - started)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

# install_missing PACKAGE...: apt-get installs the ones dpkg does not list as installed.
install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return; fi
  echo "==> installing ${#missing[@]} Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "==> packages installed ($(elapsed))"
}

# make's output to one progress line: "[ 42%] Building ..." becomes the
# percentage (rewritten in place on a terminal, every 20% otherwise); warnings
# and errors pass through. Line by line in the shell: awk would buffer.
progress() {
  local line pct shown=0 next_pct=0 tty=0
  [ -t 1 ] && tty=1
  while IFS= read -r line; do
    if [[ $line =~ ^\[\ *([0-9]+)%\] ]]; then
      pct=${BASH_REMATCH[1]}
      if [ "$tty" = 1 ]; then
        printf '\r==> building: %3d%%' "$pct"
        shown=1
      elif [ "$pct" -ge "$next_pct" ]; then
        echo "==> building: $pct%"
        next_pct=$((pct - pct % 20 + 20))
      fi
    elif [[ $line == *warning:* || $line == *error:* ]]; then
      if [ "$shown" = 1 ]; then echo; shown=0; fi
      echo "$line"
    fi
  done
  if [ "$shown" = 1 ]; then echo; fi
}

# Runs a build step with its output in LOG; prints one progress line (make's
# percentage, the warnings and errors as they come) and, on failure, the log's
# tail. VERBOSE=1 prints everything instead.
logged() {
  local log=$1
  shift
  if [ "${VERBOSE:-0}" = 1 ]; then
    "$@" 2>&1 | tee "$log"
    return "${PIPESTATUS[0]}"
  fi
  set +e
  "$@" 2>&1 | tee "$log" | progress
  local rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "==> failed; the last lines of $log:" >&2
    tail -n 30 "$log" >&2
  fi
  return "$rc"
}

# build [TARGET...]: configure, then build the targets (default: all, the tests included).
# Named targets need only the build packages, and configure without the tests (no GoogleTest needed).
build() {
  local flags=(-DCMAKE_BUILD_TYPE=Release)
  if [ $# -gt 0 ]; then
    install_missing "${BUILD_PACKAGES[@]}"
    flags+=(-DMODELSTAT_BUILD_TESTS=OFF)
  else
    install_missing "${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}"
    flags+=(-DMODELSTAT_BUILD_TESTS=ON)
  fi
  # The CUDA toolkit (no GPU needed) lets the CUDA timers and the LibTorch CUDA
  # back-end compile here too; their tests skip without a device.
  if [ -x /usr/local/cuda/bin/nvcc ]; then flags+=(-DMODELSTAT_CUDA=ON -DCUDAToolkit_ROOT=/usr/local/cuda); fi
  if [ "${MODELSTAT_WERROR:-0}" = 1 ]; then flags+=(-DMODELSTAT_WERROR=ON); fi
  # A build from scratch: unity batches and precompiled headers (cmake/build_speed.cmake).
  flags+=(-DMODELSTAT_UNITY=ON)
  mkdir -p "$BUILD_DIR"
  echo "==> configuring ($BUILD_DIR/configure.log)"
  logged "$BUILD_DIR/configure.log" cmake -S . -B "$BUILD_DIR" "${flags[@]}"
  local targets=()
  for t in "$@"; do targets+=(--target "$t"); done
  echo "==> building ${*:-everything} with $JOBS jobs ($BUILD_DIR/build.log)"
  logged "$BUILD_DIR/build.log" cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
  echo "==> built ($(elapsed))"
}

case "${1:-demo}" in
  demo)
    # The command line only (modelstat and the modelstat-profiler it runs), no test binaries.
    build modelstat modelstat-profiler
    ms="$BUILD_DIR/tools/modelstat"
    echo "==> $ms sample_models/custom_model.onnx --dim batch=32 --top 5 --no-nodes"
    "$ms" sample_models/custom_model.onnx --dim batch=32 --top 5 --no-nodes
    # Measured per layer and joined with the static cost on this machine's roofline (quick
    # ceilings unless `modelstat device` saved some); the HTML page lands beside the build.
    echo "==> $ms report sample_models/custom_model.onnx --dim batch=1 --max-time 3 --top 5 --no-nodes --html $BUILD_DIR/custom_model.report.html"
    "$ms" report sample_models/custom_model.onnx --dim batch=1 --max-time 3 --top 5 --no-nodes \
      --html "$BUILD_DIR/custom_model.report.html"
    echo "==> HTML report: $BUILD_DIR/custom_model.report.html (demo done in $(elapsed))"
    ;;
  test)
    build
    echo "==> testing (ctest -j $JOBS)"
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
    echo "==> tests passed ($(elapsed))"
    ;;
  build)
    build
    ;;
  *)
    echo "usage: bash tools/dev.sh demo|test|build" >&2
    exit 2
    ;;
esac
