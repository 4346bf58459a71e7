#!/usr/bin/env bash
# Run HERE (Debian 12, with apt): downloads the Debian packages the build needs
# that the GPU machine lacks (it has CUDA, CMake and PyTorch, but no apt and no
# network) into .gpu_deps/, to be carried there and unpacked by
# tools/gpu_check.sh. .gpu_deps/ is git-ignored.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu_deps
cd .gpu_deps
apt-get download libonnx-dev libonnx1 libprotobuf-dev libprotobuf32 libprotobuf-lite32 libfmt-dev libfmt9 \
  libcli11-dev nlohmann-json3-dev libgtest-dev googletest libabsl-dev libyaml-cpp-dev libyaml-cpp0.7 \
  libsqlite3-dev libsqlite3-0 libonnxifi 2>&1 | tail -3 || true
ls -la
