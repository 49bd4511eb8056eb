#!/usr/bin/env bash
# Reproduces docs/history-infer.png, the crate's own page (History::to_html) for the recorded
# inference trace replayed on a growing host arena (the memory_history example), as headless
# Chromium draws it. Needs Debian's chromium (apt-get install -y chromium); CI does not run it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/history}
cargo run --release -q --example memory_history -- docs/traces/infer.trace.gz "$out"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$(mktemp -d)" \
  --screenshot=docs/history-infer.png --window-size=1400,1150 "file://$(pwd)/$out/infer.html"
