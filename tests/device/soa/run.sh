#!/usr/bin/env bash
# Device check and benchmark of the structure-of-arrays views; run from the
# repository root on the GPU machine: bash tests/device/soa/run.sh
# (types.cuh is written by the interop test
# views::the_device_benchmark_header_is_what_the_emitter_writes.)
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/soa-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/soa-log.txt") 2>&1
echo "== device"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -n 1
echo "== nvcc"
nvcc -O3 -arch=sm_90 -std=c++17 -o soa_bench soa_bench.cu || exit 1
echo "== SASS: global loads and stores of the probe kernels"
cuobjdump -sass soa_bench | cu++filt > "$OUT/soa-sass.txt"
awk '/Function :/ { fn = $0; sub(/.*Function : /, "", fn); keep = (fn ~ /probe/) }
     keep && /LDG|STG/ { op = $0; sub(/^ *\/\*[0-9a-f]+\*\/ */, "", op); split(op, w, " ");
                         ops[fn] = ops[fn] " " w[1] }
     END { for (f in ops) printf "%-48s%s\n", f, ops[f] }' "$OUT/soa-sass.txt" | sort
echo "== check and benchmark"
./soa_bench "${1:-33554432}" "${2:-11}"
