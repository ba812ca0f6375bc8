#!/usr/bin/env python3
"""Run every benchmark in bench/ (files named bench_*.py) and print their JSON lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    names = sys.argv[1:] or [p.stem for p in sorted(HERE.glob("bench_*.py"))]
    worst = 0
    for name in names:
        print(f"== {name}", file=sys.stderr, flush=True)
        proc = subprocess.run([sys.executable, str(HERE / f"{name}.py")], cwd=HERE.parent)
        worst = max(worst, proc.returncode)
    return worst


if __name__ == "__main__":
    sys.exit(main())
