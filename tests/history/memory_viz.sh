#!/usr/bin/env bash
# Checks that PyTorch's own memory viewer takes the arena's PyTorch-format export: on a machine with
# PyTorch (`python3 -c 'import torch'`), for each snapshot given (default: every *.pickle in
# $GPU_ALIGNED_HISTORY_DIR, default $TMPDIR/gpu-aligned-history, where the GPU test
# `history::the_ledger_closes_at_every_event_of_a_trace_on_the_device` and
# `trace_replay --history DIR` write theirs), runs
#   python3 -m torch.cuda._memory_viz trace_plot <file> -o <file>.html   (the Active Memory Timeline page)
#   python3 -m torch.cuda._memory_viz stats <file>                       (asserts every segment's blocks sum up)
#   python3 -m torch.cuda._memory_viz trace <file>                       (walks the device trace)
# and tests/history/check_pickle.py; fails on the first that fails. Usage: memory_viz.sh [SNAPSHOT.pickle...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python3 -c 'import torch; print("torch", torch.__version__)'
if [ $# -eq 0 ]; then
  dir=${GPU_ALIGNED_HISTORY_DIR:-${TMPDIR:-/tmp}/gpu-aligned-history}
  set -- "$dir"/*.pickle
fi
for file in "$@"; do
  [ -f "$file" ] || { echo "no snapshot $file" >&2; exit 1; }
  python3 "$here/check_pickle.py" "$file"
  python3 -m torch.cuda._memory_viz trace_plot "$file" -o "$file.html"
  # The page embeds the snapshot and draws it with PyTorch's MemoryViz.js.
  grep -q 'add_local_files' "$file.html" && [ "$(stat -c %s "$file.html")" -gt "$(stat -c %s "$file")" ]
  python3 -m torch.cuda._memory_viz stats "$file" | tail -n 4
  python3 -m torch.cuda._memory_viz trace "$file" | tail -n 1
  echo "ok: $file -> $file.html"
done
