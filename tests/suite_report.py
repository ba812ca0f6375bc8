"""After ``make test``: the 20 slowest tests over every run, each run's time, and the suite's wall time.

Usage: python tests/suite_report.py REPORT_DIR STARTED_EPOCH_SECONDS
Reads the JUnit XML files the runs wrote into REPORT_DIR (pytest --junitxml) and names every test that took
longer than SLOWEST_LIMIT seconds (issue 37). It never fails the build: a verdict must not depend on the
machine's speed, and CI machines differ.
"""

from __future__ import annotations

import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

SLOWEST = 20
SLOWEST_LIMIT = 60.0  # seconds one test may take on the 2-core machine


def main(argv: list[str]) -> int:
    folder, started = Path(argv[1]), float(argv[2])
    cases, runs = [], []
    for report in sorted(folder.glob("*.xml")):
        root = ET.parse(report).getroot()
        suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
        runs.append((report.stem, sum(float(s.get("time", 0)) for s in suites)))
        for case in root.iter("testcase"):
            if case.find("skipped") is None:
                cases.append((float(case.get("time", 0)), report.stem, f"{case.get('classname')}::{case.get('name')}"))
    cases.sort(reverse=True)
    print(f"\n== {SLOWEST} slowest tests (seconds, run, test) ==")
    for seconds, run, name in cases[:SLOWEST]:
        print(f"{seconds:8.1f}  {run:<10} {name}")
    print("== runs (seconds of pytest each, side by side) ==")
    for name, seconds in runs:
        print(f"{seconds:8.1f}  {name}")
    print(f"== suite wall time: {time.time() - started:.0f} s ({len(cases)} tests run) ==")
    over = [c for c in cases if c[0] > SLOWEST_LIMIT]
    if over:
        print(f"note: {len(over)} test(s) took longer than {SLOWEST_LIMIT:g} s: shrink their data or share fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
