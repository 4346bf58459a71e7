#!/usr/bin/env bash
# The installed modelstat, as a user gets it (ctest install.*):
#   check_install.sh BUILD_DIR SOURCE_DIR WORK_DIR PYTHON WITH_PROFILER(ON|OFF) WITH_PYTHON_MODULE(ON|OFF)
# 1. `cmake --install BUILD_DIR` into a temporary prefix, which is then moved
#    elsewhere, so nothing can come from the build folder or the install path;
# 2. the installed `modelstat` (analyze, --version, and `profile`, which finds
#    modelstat-profiler relative to itself), the man page, the bash completion;
# 3. tests/install/consumer configured with find_package(modelstat) against
#    the prefix: modelstat::analyzer (no LibTorch) and modelstat::profiler;
#    its totals equal the installed CLI's JSON;
# 4. the Python module from the prefix.
set -euo pipefail
build=$1 src=$2 work=$3 python=$4 with_profiler=$5 with_module=$6
model=$src/sample_models/tiny_cnn.onnx
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/staging" > "$work/install.log"
mv "$work/staging" "$work/prefix"
prefix=$work/prefix
for f in bin/modelstat include/modelstat/analysis.hpp include/modelstat/profile.hpp lib/libmodelstat_analyzer.a \
         lib/cmake/modelstat/modelstatConfig.cmake lib/cmake/modelstat/modelstatConfigVersion.cmake \
         share/man/man1/modelstat.1 share/bash-completion/completions/modelstat share/doc/modelstat/README.md \
         share/doc/modelstat/COST_MODEL.md; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
[ ! -e "$prefix/bin/modelstat-profiler" ] || fail "modelstat-profiler is installed in bin/, not libexec/"

# The installed binary, from the moved prefix.
"$prefix/bin/modelstat" --version | grep -Eqx "modelstat [0-9.]+ \(commit ([0-9a-f]+(-dirty)?|unknown)\)" || fail "modelstat --version"
"$prefix/bin/modelstat" "$model" -f json > "$work/analysis.json"
totals() { "$python" -c 'import json, sys; t = json.load(open(sys.argv[1]))["totals"]; print("params %d macs %d flops %d" % (t["params"], t["macs"], t["flops"]))' "$1"; }
cli_totals=$(totals "$work/analysis.json")
[ -n "$cli_totals" ] || fail "no totals"

if [ "$with_profiler" = ON ]; then
  [ -x "$prefix/libexec/modelstat/modelstat-profiler" ] || fail "modelstat-profiler not in libexec/modelstat"
  "$prefix/bin/modelstat" profile "$model" --threads 1 --warmup 1 --warmup-time 0 --iters 3 --min-time 0 \
    --max-time 1 -f json -o "$work/profile.json" || fail "installed modelstat profile"
  "$python" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["kind"] == "profile" and d["whole"]["count"] >= 3 and d["layers"], d["kind"]' \
    "$work/profile.json" || fail "installed profile JSON"
fi

# Man page: every subcommand's section, with the profiler's own flags.
for sub in analyze ops profile verify report device fit compare; do
  grep -q "^\.SH \"modelstat $sub\"" "$prefix/share/man/man1/modelstat.1" || fail "man page lacks $sub"
done
if [ "$with_profiler" = ON ]; then
  grep -q 'max\\-time' "$prefix/share/man/man1/modelstat.1" || fail "man page lacks profile's --max-time"
fi

# Bash completion: what a user gets on TAB.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _modelstat; echo "${COMPREPLY[*]}"' \
    _ "$prefix/share/bash-completion/completions/modelstat" "$@"
}
[[ " $(complete_words modelstat pro) " == *" profile "* ]] || fail "completion: modelstat pro -> profile"
[[ " $(complete_words modelstat fit --lat) " == *" --latency-budget "* ]] || fail "completion: fit --lat"
[[ " $(complete_words modelstat m.onnx --di) " == *" --dim "* ]] || fail "completion: m.onnx --di (analyze's flags)"
[[ " $(complete_words modelstat --ver) " == *" --version "* ]] || fail "completion: --ver"
if [ "$with_profiler" = ON ]; then
  [[ " $(complete_words modelstat profile --max-t) " == *" --max-time "* ]] || fail "completion: profile --max-t"
  [[ " $(complete_words modelstat report --ht) " == *" --html "* ]] || fail "completion: report --ht"
fi

# The consumer project, analyzer only: no LibTorch anywhere.
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  > "$work/consumer.log" || { cat "$work/consumer.log"; fail "consumer configure"; }
cmake --build "$work/consumer" >> "$work/consumer.log" || { cat "$work/consumer.log"; fail "consumer build"; }
if ldd "$work/consumer/consumer_analyze" | grep -q libtorch; then fail "consumer_analyze links LibTorch"; fi
consumer_totals=$("$work/consumer/consumer_analyze" "$model")
[ "$consumer_totals" = "$cli_totals" ] || fail "consumer '$consumer_totals' != CLI '$cli_totals'"

if [ "$with_profiler" = ON ]; then
  cmake -S "$src/tests/install/consumer" -B "$work/consumer_profiler" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release -DCONSUMER_PROFILER=ON > "$work/consumer_profiler.log" \
    || { cat "$work/consumer_profiler.log"; fail "profiler consumer configure"; }
  cmake --build "$work/consumer_profiler" >> "$work/consumer_profiler.log" \
    || { cat "$work/consumer_profiler.log"; fail "profiler consumer build"; }
  out=$("$work/consumer_profiler/consumer_profile" "$model")
  layers=$("$python" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["layers"]))' "$work/profile.json")
  [[ "$out" == "layers $layers median_s "* ]] || fail "consumer_profile '$out', CLI profile has $layers layers"
fi

# The Python module from the prefix.
if [ "$with_module" != ON ]; then echo "install OK (no Python module built): $cli_totals"; exit 0; fi
py_totals=$(PYTHONPATH="$prefix/lib/python3/dist-packages" "$python" -c '
import sys, modelstat
assert modelstat.__file__.startswith(sys.argv[2]), modelstat.__file__
t = modelstat.analyze(sys.argv[1]).totals
print("params %d macs %d flops %d" % (t["params"], t["macs"], t["flops"]))' "$model" "$prefix")
[ "$py_totals" = "$cli_totals" ] || fail "installed Python module '$py_totals' != CLI '$cli_totals'"
echo "install OK: $cli_totals"
