#!/usr/bin/env python3
"""Benchmark (issue 52): how long test_reward takes to name a hang, idle and beside a CPU hog, in one run.

Each hang case of ``tests/hang_cases.py`` (a sync sleep that ignores SIGALRM, ``time.sleep`` in an async reward of
either generation, a never-returning CPU loop in a sync and in an async reward) runs through test_reward as a user
runs it (``--json --timeout T --num-examples 1``), first on the machine as it is, then beside ``tests/cpu_hog.py``
on every core. The figure is the wall time of the whole run (load, probes, the hang named, the report) as a ratio
against the timeout; the same environment with a ``bad`` that returns at once (``clean``) is measured the same
way, as the run's own cost (``extra``: a run's time beyond it, against the timeout). Also
``slow_but_finishing``: a first call that spends 0.8x the timeout in CPU time and returns, beside the hog: it
must not be called a hang. Classic cases run in .venv/vf031, v1 in .venv/vf040
(this interpreter when those are missing). Prints one JSON line.

With ``--baseline DIR`` (another checkout's ``skills/verifiers-lab/scripts``, e.g. ``git archive`` of an earlier
commit) every measurement is taken for that checkout too, right after this one's, so both see the same machine.

Usage: bench_hang_verdicts.py [--timeout 5] [--cases a,b] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import hang_cases as hc  # noqa: E402


def python_for(generation: str) -> str:
    venv = ROOT / ".venv" / ("vf031" if generation == "classic" else "vf040") / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def one(name: str, timeout: float, scripts: Path, body: str | None = None) -> dict:
    case = hc.CASES.get(name) or hc.Case("classic", False, "", None)
    with tempfile.TemporaryDirectory(prefix="bench-hang-") as tmp:
        folder = Path(tmp)
        if name == hc.SLOW_BUT_FINISHING:
            body = hc.slow_body(0.8 * timeout, folder / "called")
        env, data = hc.build(folder, name, body)
        obj, seconds, _ = hc.run_test_reward(env, data, timeout, python_for(case.generation), scripts)
    out = {"seconds": round(seconds, 1), "ratio": round(seconds / timeout, 2), "exit_code": obj.get("exit_code")}
    out["load_seconds"] = (obj.get("data", {}).get("environment") or {}).get("load_seconds")
    if case.check:
        out["named"] = hc.named(obj, case.check) is not None
    else:
        out["timed_out"] = any(c["id"] in ("speed", "worker_timeout") and c["status"] == "fail" for c in obj["checks"])
    load = obj.get("data", {}).get("machine_load") or {}
    out["retried_probes"] = (load.get("timeout_retries") or {}).get("probes")
    out["fresh_workers"] = load.get("fresh_workers")
    return out


def measure(name: str, timeout: float, scripts: Path) -> dict:
    """The case idle, then beside a hog on every core (started for this run alone, stopped after it)."""
    body = "return 0.0" if name == "clean" else None
    idle = None if name == hc.SLOW_BUT_FINISHING else one(name, timeout, scripts, body)
    hog = hc.start_hog()
    try:
        time.sleep(2)  # the hog spins on every core before test_reward starts
        loaded = one(name, timeout, scripts, body)
    finally:
        hc.stop_hog(hog)
    return {"idle": idle, "beside_hog": loaded}


def over_clean(figures: dict, timeout: float) -> None:
    """Each run's time beyond the clean run's in the same conditions, as a ratio against the timeout (``extra``):
    the hang's own cost, without the load of the environment and the other checks, which the machine's load
    stretches alike."""
    clean = figures.get("clean")
    if not clean:
        return
    for name, fig in figures.items():
        for side, base in ((fig, clean), (fig.get("baseline") or {}, clean.get("baseline") or {})):
            for where in ("idle", "beside_hog"):
                run, ref = side.get(where), base.get(where)
                if run and ref and name != "clean":
                    run["extra"] = round((run["seconds"] - ref["seconds"]) / timeout, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--cases", default=",".join(["clean", *hc.HANGS, hc.SLOW_BUT_FINISHING]))
    parser.add_argument("--baseline", type=Path, help="another checkout's scripts folder, measured alongside")
    args = parser.parse_args()
    names = [n for n in args.cases.split(",") if n]
    figures: dict[str, dict] = {}
    for name in names:
        figures[name] = measure(name, args.timeout, hc.SCRIPTS)
        if args.baseline:
            figures[name]["baseline"] = measure(name, args.timeout, args.baseline)
        print(f"{name}: {figures[name]}", file=sys.stderr, flush=True)
    over_clean(figures, args.timeout)
    print(
        json.dumps(
            {
                "benchmark": "hang_verdicts",
                "timeout": args.timeout,
                "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
                "load_at_end": round(os.getloadavg()[0], 2),
                "baseline": str(args.baseline) if args.baseline else None,
                "cases": figures,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
