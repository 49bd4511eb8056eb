#!/usr/bin/env bash
# What recording the arena's history costs, in instructions per allocate + drop and allocate + free
# pair of a 4 KiB array (callgrind, as .ci/instructions counts them: two runs of different lengths,
# the difference over the difference in pairs), on a host arena and on the stand-in device, off and
# on, and the ratio. benches/arena.rs (ARENA_PAIRS) runs the pairs. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
bench=$(cargo build --release -q -p gpu-aligned-benches --bench arena --message-format=json |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["executable"])')
collected() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
per_pair() {
  local a b
  a=$(ARENA_PAIRS="$1,4096,100000" collected "$bench")
  b=$(ARENA_PAIRS="$1,4096,200000" collected "$bench")
  python3 -c "print(round(($b - $a) / 100000, 1))"
}
for side in host-drop host-free device-drop device-free; do
  spec=${side%-drop}
  off=$(per_pair "$spec")
  on=$(per_pair "$spec-recorded")
  printf '%-12s off %7s  on %7s  (%sx)\n' "$side" "$off" "$on" "$(python3 -c "print(round($on / $off, 2))")"
done
