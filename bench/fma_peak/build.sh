#!/bin/sh
# Builds the independent FMA peak loop with its own compiler flags, none of modelstat's
# (-mavx512f only lets the asm name zmm16-31; the C around it is scalar).
set -e
cd "$(dirname "$0")"
out=${1:-/tmp/modelstat_fma_peak}
cc -O2 -std=c11 -mavx512f -pthread -o "$out" fma_peak.c
echo "$out"
