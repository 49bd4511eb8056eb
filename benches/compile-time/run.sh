#!/usr/bin/env bash
# Compile-time cost of #[derive(GpuAligned)] against bytemuck's derive.
#
# Generates a throwaway workspace under target/compile-time-bench/ with two
# library crates holding the same 1,000 structs: `ours` derives
# `Clone, Copy, GpuAligned`, `peer` derives `Clone, Copy, bytemuck::Pod,
# bytemuck::Zeroable`. After a warm-up build it edits one line of each
# crate's lib.rs (so cargo must recompile it, re-running every derive) and
# times `cargo build` of that crate alone, alternating ours/peer ROUNDS times
# so that load from other processes hits both alike. Two modes:
#   incremental  the default dev profile (what an edit-compile loop sees)
#   full         CARGO_INCREMENTAL=0 (the whole crate type-checked again)
# Prints the median wall and CPU time of each and the ratios ours / peer.
# Target: <= 1.0x (issue 18).
#
# Usage: benches/compile-time/run.sh [ROUNDS] [STRUCTS]   (defaults 7, 1000)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
ROUNDS=${1:-7}
STRUCTS=${2:-1000}
DIR=$ROOT/target/compile-time-bench
mkdir -p "$DIR/ours/src" "$DIR/peer/src"

cat > "$DIR/Cargo.toml" <<TOML
[workspace]
resolver = "2"
members = ["ours", "peer"]
TOML
cat > "$DIR/ours/Cargo.toml" <<TOML
[package]
name = "ours"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
gpu-aligned = { path = "$ROOT/runtime" }
bytemuck = { version = "1.16", features = ["derive", "min_const_generics"] }
TOML
sed 's/^name = "ours"/name = "peer"/' "$DIR/ours/Cargo.toml" > "$DIR/peer/Cargo.toml"
# Same dependency versions as the workspace, without touching the network.
[ -f "$DIR/Cargo.lock" ] || cp "$ROOT/Cargo.lock" "$DIR/Cargo.lock"

# The generated structs cycle through shapes both derives accept: 1 to 16
# bytes, aligned to their size, no holes, scalar, array and nested fields.
generate() { # $1 = crate, $2 = generation (the edited line)
    local derives
    if [ "$1" = ours ]; then
        derives="Clone, Copy, gpu_aligned::GpuAligned"
    else
        derives="Clone, Copy, bytemuck::Pod, bytemuck::Zeroable"
    fi
    python3 - "$STRUCTS" "$derives" "$2" > "$DIR/$1/src/lib.rs" <<'PY'
import sys
count, derives, generation = int(sys.argv[1]), sys.argv[2], sys.argv[3]
shapes = [
    ("C, align(8)", "a: f32, b: f32"),
    ("C", "value: u32"),
    ("C, align(4)", "lo: u16, hi: u16"),
    ("C, align(16)", "x: f32, y: f32, z: f32, w: f32"),
    ("C, align(16)", "a: u64, b: [u32; 2]"),
    ("C, align(2)", "a: u8, b: i8"),
    ("C", "wide: f64"),
    ("C, align(8)", "rgba: [u8; 4], count: i32"),
]
print("#![allow(dead_code)]")
print(f"pub const GENERATION: u32 = {generation};")
for i in range(count):
    repr, fields = shapes[i % len(shapes)]
    print(f"#[derive({derives})]\n#[repr({repr})]\npub struct S{i} {{ {fields} }}")
PY
}

# Prints "WALL CPU" seconds of one `cargo build -p $1`; CPU (user + system of
# cargo and rustc) is the steadier number on a machine shared with others.
build() {
    (cd "$DIR" && python3 -c '
import resource, subprocess, sys, time
start = time.time()
subprocess.run(["cargo", "build", "-q", "-p", sys.argv[1]], check=True)
wall = time.time() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{wall:.3f} {usage.ru_utime + usage.ru_stime:.3f}")' "$1")
}
median() { python3 -c "import sys, statistics; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }

echo "compile-time benchmark: $STRUCTS structs per crate, $ROUNDS rounds, $(rustc --version)"
for mode in incremental full; do
    if [ "$mode" = full ]; then export CARGO_INCREMENTAL=0; else unset CARGO_INCREMENTAL; fi
    generate ours 0
    generate peer 0
    build ours > /dev/null
    build peer > /dev/null
    ours_wall=(); ours_cpu=(); peer_wall=(); peer_cpu=()
    for round in $(seq 1 "$ROUNDS"); do
        generate ours "$round"
        read -r wall cpu < <(build ours)
        ours_wall+=("$wall"); ours_cpu+=("$cpu")
        generate peer "$round"
        read -r wall cpu < <(build peer)
        peer_wall+=("$wall"); peer_cpu+=("$cpu")
    done
    for kind in wall cpu; do
        declare -n ours_times="ours_$kind" peer_times="peer_$kind"
        ours_median=$(median "${ours_times[@]}")
        peer_median=$(median "${peer_times[@]}")
        echo "$mode rebuild, $kind time: GpuAligned median ${ours_median}s [${ours_times[*]}]"
        echo "$mode rebuild, $kind time: bytemuck   median ${peer_median}s [${peer_times[*]}]"
        echo "$mode rebuild, $kind time: ratio GpuAligned / bytemuck = $(ratio "$ours_median" "$peer_median")x (target <= 1.0x)"
        unset -n ours_times peer_times
    done
done
