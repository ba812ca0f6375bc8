#!/usr/bin/env bash
# The pack's pipeline, offline, on the project's own example dataset and environments.
# Run through `make demo` (which creates the virtual environment first).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.demo-out
rm -rf "$OUT"; mkdir -p "$OUT"
step() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }

step "1. preflight: is this machine ready?"
python scripts/preflight.py --offline

step "2. the demo dataset (generated)"
python demo/make_data.py "$OUT/arith.jsonl" 200

printf '\n\033[1;32mdemo finished: every step passed\033[0m\n' >&2
