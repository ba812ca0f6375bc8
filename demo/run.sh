#!/usr/bin/env bash
# SKILL.md's v1 road, end to end and offline (demo/demo.py runs the steps and writes the page).
# Run through `make demo`, which creates the virtual environments first: the steps run in the
# verifiers 0.4.0 venv, migrate_env's classic side in the 0.3.1 one.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/vf040/bin/python demo/demo.py --classic-python .venv/vf031/bin/python "$@"
