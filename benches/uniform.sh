#!/usr/bin/env bash
# Runs the uniform-read benchmark (benches/uniform.rs) on a machine with an
# NVIDIA GPU, from the repository root:
#
#   bash benches/uniform.sh [BINARY]
#
# BINARY is the bench built by
#   cargo build --release -p gpu-aligned-benches --features cuda --benches
# (target/release/deps/uniform-<hash>), copied where the GPU machine sees it;
# by default .device/uniform. The output is printed and kept in
# $OUT/uniform.txt ($OUT defaults to /tmp/uniform-out).
#
# Two tables: 485 spheres (15.5 KB, the path tracer of issue 28; it stays in
# L1) and 16384 (512 KB: more than an SM's L1, so it is served from L2).
set -eu
BIN=${1:-.device/uniform}
OUT=${OUT:-/tmp/uniform-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/uniform.txt") 2>&1
echo "== device"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
for spheres in 485 16384; do
    echo "== $spheres spheres"
    "$BIN" --spheres "$spheres" --threads 1048576 --rounds 21
done
