#!/usr/bin/env bash
# One entry point for the README's quick start and for CI.
#   bash tools/dev.sh demo   install what is missing, build, analyse a bundled sample model
#   bash tools/dev.sh test   install what is missing, build, run the whole test suite
#   bash tools/dev.sh build  install what is missing and build
# Environment: BUILD_DIR (default build), JOBS (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
# Debian 12 packages the build, the tests and the sample-model scripts need.
PACKAGES=(cmake g++ make libtorch-dev libdnnl-dev libopenblas0-pthread libonnx-testdata libonnx-dev libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev
          libcli11-dev nlohmann-json3-dev python3-onnx python3-torch python3-torchvision python3-numpy
          pybind11-dev python3-dev python3-pytest python3-pandas
          libyaml-cpp-dev libsqlite3-dev slurm-wlm munge chromium)

install_missing() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return; fi
  echo "==> installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
  install_missing
  # The CUDA toolkit (no GPU needed) lets the CUDA timers and the LibTorch CUDA
  # back-end compile here too; their tests skip without a device.
  local cuda=()
  if [ -x /usr/local/cuda/bin/nvcc ]; then cuda=(-DMODELSTAT_CUDA=ON -DCUDAToolkit_ROOT=/usr/local/cuda); fi
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${cuda[@]}"
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

case "${1:-demo}" in
  demo)
    build
    "$BUILD_DIR/tools/modelstat" sample_models/custom_model.onnx --dim batch=32 --top 5
    # Measured per layer and joined with the static cost on this machine's roofline (quick
    # ceilings unless `modelstat device` saved some); the HTML page lands beside the build.
    "$BUILD_DIR/tools/modelstat" report sample_models/custom_model.onnx --dim batch=1 --max-time 3 --top 5 \
      --no-nodes --html "$BUILD_DIR/custom_model.report.html"
    echo "HTML report: $BUILD_DIR/custom_model.report.html"
    ;;
  test)
    build
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
    ;;
  build)
    build
    ;;
  *)
    echo "usage: bash tools/dev.sh demo|test|build" >&2
    exit 2
    ;;
esac
