#!/usr/bin/env bash
# The fair races against the driver's stream-ordered pool (issue 27): every
# comparison with `cuMemAllocAsync` / cudarc's `stream.alloc` on a stream of
# its own (never the legacy default stream), the pool warmed, the same
# operations per round on every side, sides taking turns, medians of rounds
# (runtime/examples/support/rounds.rs). Run on a machine with an NVIDIA GPU,
# from the repository root:
#
#   bash benches/fair.sh
#
# Build here, then copy the binaries into .device/ (git-ignored):
#
#   cargo build --release -p gpu-aligned-benches --features cuda --benches
#   cargo build --release -p gpu-aligned --features cuda --examples
#   mkdir -p .device
#   cp target/release/deps/gpu-<hash>       .device/gpu-bench
#   cp target/release/deps/tracking-<hash>  .device/tracking-bench
#   cp target/release/deps/graphs-<hash>    .device/graphs-bench
#   cp target/release/examples/trace_replay .device/trace_replay
#
# (the deps/<name>-<hash> files without an extension; with several hashes,
# the newest). Each output goes to $OUT/<name>.txt ($OUT defaults to
# /tmp/fair-out): gpu-alloc.txt (and gpu_bench.csv), tracking.txt,
# graphs.txt, replay-train.txt, replay-infer.txt. About 2-3 minutes on an
# H100; each command is stopped after LIMIT seconds (default 240).
set -u
OUT=${OUT:-/tmp/fair-out}
LIMIT=${LIMIT:-240}
mkdir -p "$OUT"
cuda_lib=/usr/local/cuda-13.0/targets/x86_64-linux/lib
if [ -d "$cuda_lib" ]; then
    export LD_LIBRARY_PATH="$cuda_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

failed=0
# run NAME COMMAND...: the command's output (both streams) into $OUT/NAME.txt
# and on the terminal, after a header naming the device and the command.
run() {
    local name=$1
    shift
    {
        echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "# $*"
        local began=$SECONDS
        timeout "$LIMIT" "$@"
        local status=$?
        echo "# exit $status after $((SECONDS - began)) s"
        [ "$status" -eq 0 ]
    } 2>&1 | tee -a "$OUT/$name.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failed=$((failed + 1))
}

for bin in gpu-bench tracking-bench graphs-bench trace_replay; do
    if [ ! -x ".device/$bin" ]; then
        echo ".device/$bin is missing: see the top of benches/fair.sh" >&2
        exit 2
    fi
done
rm -f "$OUT"/gpu-alloc.txt "$OUT"/tracking.txt "$OUT"/graphs.txt "$OUT"/replay-*.txt

# Allocation pairs (256 B-16 MiB) against cuMemAllocAsync, cudarc's
# stream.alloc and cuMemAlloc; section 4 of the gpu bench alone.
GPU_BENCH_OUT="$OUT" run gpu-alloc .device/gpu-bench --alloc-only --pairs 100000 --sync-pairs 1000 --rounds 7 --warmup 1
# Per-array tracking against cudarc, then alloc + free pairs against the pool.
run tracking .device/tracking-bench --pairs 100000 --rounds 7 --warmup 1
# Graph replay: the arena's graph, the preallocated one, the pool's nodes.
run graphs .device/graphs-bench --rounds 21 --warmup 3
# The PyTorch traces, three calls each (each a memory pass, then 7 rounds).
for trace in train infer; do
    for call in 1 2 3; do
        echo "=== call $call trace $trace" | tee -a "$OUT/replay-$trace.txt"
        run "replay-$trace" bash -c "gunzip -c docs/traces/$trace.trace.gz | .device/trace_replay --repeat 7 -"
    done
done

echo "fair.sh: $failed command(s) failed; outputs in $OUT"
[ "$failed" -eq 0 ]
