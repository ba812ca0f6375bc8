"""A CPU hog on every core, for `make test-load` and the load tests: each child spins until --seconds pass
or it is killed (the parent's SIGTERM ends them all)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from multiprocessing import Process


def spin(until: float) -> None:
    while time.time() < until:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=600.0, help="how long the hog runs at most")
    parser.add_argument("--cores", type=int, default=0, help="how many spinning processes (default: every core)")
    args = parser.parse_args()
    cores = args.cores or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    until = time.time() + args.seconds
    children = [Process(target=spin, args=(until,), daemon=True) for _ in range(cores)]
    for child in children:
        child.start()

    def stop(signum, frame):
        for child in children:
            child.kill()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for child in children:
        child.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
