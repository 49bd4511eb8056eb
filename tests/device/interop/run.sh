#!/usr/bin/env bash
# Device checks of the CUDA interop (header, accessors, coalescing model) on a machine
# with an NVIDIA GPU and nvcc; README.md beside this file says how to make its inputs.
set -u
cd "$(dirname "$0")"
OUT=${OUT:-/tmp/interop-out}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
echo "== device"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -n 2
echo "== nvcc"
nvcc -O3 -arch=sm_90 -std=c++17 -o interop interop.cu || exit 1
nvcc -O2 -std=c++17 -o nvrtc_check nvrtc_check.cpp -lnvrtc || echo "nvrtc_check did not build"
echo "== SASS: global loads/stores per kernel (one element per thread)"
cuobjdump -sass interop > "$OUT/sass.txt"
cu++filt < "$OUT/sass.txt" > "$OUT/sass-demangled.txt"
awk '/Function :/ { fn = $0; sub(/.*Function : /, "", fn); names[fn] = 1 }
     /LDG/ { ld[fn]++ } /STG/ { st[fn]++ }
     END { for (f in names) printf "%-60s LDG %d  STG %d\n", f, ld[f], st[f] }' "$OUT/sass-demangled.txt" | sort
echo "== SASS lines (LDG/STG) of the element kernels"
grep -E "Function :|LDG|STG" "$OUT/sass-demangled.txt" | grep -v "pattern<" | sed -E 's/^ +//; s/ *\/\* 0x[0-9a-f]+ \*\/ *$//'
echo "== nvcc with a tampered offset (must fail)"
sed 's/GPU_ALIGNED_OFFSETOF(Sample, time) == 8/GPU_ALIGNED_OFFSETOF(Sample, time) == 12/' gpu_types.cuh > tampered.cuh
printf '#include "tampered.cuh"\n' > tampered.cu
if nvcc -arch=sm_90 -c -o /dev/null tampered.cu 2> tampered.err; then echo "COMPILED (wrong)"; else echo "rejected:"; grep -m1 -A1 error tampered.err; fi
echo "== results on the device"
./interop check
echo "== NVRTC"
[ -x nvrtc_check ] && ./nvrtc_check
echo "== ncu: model sectors vs l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
M=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
ncu --metrics $M --csv --log-file "$OUT/ncu.csv" ./interop patterns model.txt > /dev/null
python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, rows = rows[0], rows[1:]
col = {name: i for i, name in enumerate(head)}
by_launch = {}
for r in rows:
    by_launch.setdefault(r[col["ID"]], {})[r[col["Metric Name"]]] = r[col["Metric Value"]].replace(",", "")
model = [l.split() for l in open("model.txt").read().splitlines()[1:]]
model.append(["sample-gpu_load", "16", "0", "16", "16", "-"])
bad = 0
print(f"{'pattern':<18} {'width':>5} {'offset':>6} {'stride':>7} {'model':>6} {'ncu':>6} {'requests':>8}")
for m, launch in zip(model, sorted(by_launch, key=int)):
    got = by_launch[launch]
    sectors = got["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
    reqs = got["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    ok = int(float(sectors)) == int(m[4])
    bad += not ok
    print(f"{m[0]:<18} {m[1]:>5} {m[2]:>6} {m[3]:>7} {m[4]:>6} {sectors:>6} {reqs:>8} {'' if ok else 'MISMATCH'}")
print("launches profiled:", len(by_launch), "patterns:", len(model))
print("MODEL MATCHES NCU" if bad == 0 and len(by_launch) == len(model) else "MODEL DIFFERS")
PY
