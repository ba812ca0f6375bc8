"""The baseline every reader benchmark compares against, in the same run: a bare `json.loads` loop.

`BARE_SUM` is the loop issue 37 names: `json.loads` on every line of the file (or its first N, for a
reader that reads no more) and a sum of one field (the reward), nothing else; `bare_sum` is the same loop
in-process. `baseline_scripts(ref)` unpacks the skill's scripts of another commit, to measure before and
after in one run. `measure(cmd)` runs one command as a process and gives its wall time, taken
by this parent (interpreter start and imports included, as a user sees them) and its CPU time (its own and
that of the children it waited for: a reader's worker processes; `os.wait4`).
`compare(sides, repeats)` runs the commands (ours, the bare loop, perhaps an older tree's) in turn
`repeats` rounds, so all see the same machine load, and gives the medians and the ratios of each to the
bare loop (below 1: faster than it).

Not a benchmark itself (`run_all.py` runs the files named `bench_*.py`); imported by them.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The environment as the benchmark started: importing vlab in-process exports PYTHONPYCACHEPREFIX, which would
# send every measured child to a bytecode cache it may not write (PYTHONDONTWRITEBYTECODE): all compiled anew.
# Import this module before vlab.
START_ENV = dict(os.environ)

BARE_SUM = """\
import itertools, json, sys
total, rows = 0.0, 0
with open(sys.argv[1], "rb") as f:
    for line in itertools.islice(f, int(sys.argv[3]) if len(sys.argv) > 3 else None):
        value = json.loads(line).get(sys.argv[2])
        if isinstance(value, (int, float)):
            total += value
        rows += 1
print(rows, total)
"""


def bare_command(path, field: str = "reward", rows: int | None = None) -> list[str]:
    """The bare loop over ``path`` (its first ``rows`` lines, or all), summing ``field``, as a command line."""
    return [sys.executable, "-c", BARE_SUM, str(path), field, *([str(rows)] if rows is not None else [])]


def bare_sum(path, field: str = "reward", rows: int | None = None) -> tuple[int, float]:
    """The same loop in this process (for readers timed in-process)."""
    import itertools
    import json

    total, n = 0.0, 0
    with open(path, "rb") as f:
        for line in itertools.islice(f, rows):
            value = json.loads(line).get(field)
            if isinstance(value, (int, float)):
                total += value
            n += 1
    return n, total


def baseline_scripts(ref: str, folder) -> Path:
    """The skill's scripts folder at commit ``ref``, unpacked under ``folder`` (``git archive``: nothing is
    checked out, the working tree is untouched). Its scripts import their own ``vlab`` (their folder comes
    first on ``sys.path``)."""
    scripts = "skills/verifiers-lab/scripts"
    archive = subprocess.run(["git", "archive", ref, scripts], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return Path(folder) / scripts


def measure(cmd: list[str], cwd=None, env=None) -> dict:
    """One run of ``cmd``: wall seconds, CPU seconds (with its reaped children), exit code, stdout. (No peak
    memory: Linux counts a child's RSS before its exec, so a large parent's shows up in every child's.)"""
    t = time.perf_counter()
    env = START_ENV if env is None else env
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, cwd=cwd, env=env
    )
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.stdout.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit_code": proc.returncode,
        "stdout": out,
    }


def compare(sides: dict[str, list[str]], repeats: int = 3, cwd=None, check=None) -> dict:
    """Each command of ``sides`` (one named "bare": the baseline) run in turn, ``repeats`` rounds (the order reversed
    every other round): per side the
    medians, and each other side's ratios to "bare". ``check(name, result)`` is called on every other side's run
    (raise to stop: a failed run is not a measurement)."""
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    for r in range(repeats):
        order = list(sides.items())
        for name, cmd in order if r % 2 == 0 else order[::-1]:  # alternate the order: no side always runs first
            result = measure(cmd, cwd=cwd)
            if name == "bare":
                if result["exit_code"] != 0:
                    raise SystemExit(f"the bare loop failed (exit {result['exit_code']})")
            elif check is not None:
                check(name, result)
            runs[name].append(result)
    out: dict = {"repeats": repeats}
    for name, rs in runs.items():
        out[name] = {key: round(statistics.median(r[key] for r in rs), 3) for key in ("wall_s", "cpu_s")}
        out[name]["walls_s"] = [round(r["wall_s"], 3) for r in rs]
    bare = out["bare"]
    # below 1: faster than the bare loop (wall: what a user waits; CPU: what it costs on a busy machine)
    out["wall_ratio_to_bare"] = {n: round(out[n]["wall_s"] / bare["wall_s"], 3) for n in sides if n != "bare"}
    out["cpu_ratio_to_bare"] = {n: round(out[n]["cpu_s"] / bare["cpu_s"], 3) for n in sides if n != "bare"}
    return out


def time_in_process(fn, *args, repeats: int = 3) -> float:
    """Median seconds of ``fn(*args)`` in this process."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)
