#!/usr/bin/env python3
"""Benchmark: the code templates' scorer (tests here, the program in a warm child) against yesterday's
in-process harness (tests/inprocess_harness.py: one fresh child runs the program and the tests and
writes the verdict), in one run, on ROWS HumanEval-shaped rows (default 1,000).

Two figures per harness, both through the template's ``run_tests`` at the template's concurrency:
  * rollouts scored/s: each row's reference program (prompt + canonical body), as training scores a rollout;
  * code probes/s: per row one of test_reward's code probes (``vlab.reward.code``: the reference fenced,
    the wrong and malformed programs, every fast hack), taken in turn so all 1,000 rows are used;
    the slow probes (an infinite loop, the process left behind, and reading the tests from disk, which globs
    /tmp) measure time limits, not speed, and are left out.
The two harnesses alternate in chunks (new, old, new, old, ...) so a change of machine load falls on both.
Every verdict is checked (references pass on both; no probe but the reference passes on the new one).
Prints one JSON line: per harness seconds and runs/s, and the ratios new/old (above 1: the new one is faster).
Usage: bench_code_harness.py [ROWS] [CHUNKS]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "skills" / "verifiers-lab"
sys.path[:0] = [str(SKILL / "scripts"), str(SKILL / "templates" / "environments" / "v1-code"), str(ROOT / "tests")]

import inprocess_harness  # noqa: E402
import v1_code  # noqa: E402

from vlab.reward import code  # noqa: E402
from vlab.reward.kinds import RowKind  # noqa: E402

# Runs into the time limit on a machine with a large /tmp (it globs /tmp recursively): that measures the limit
# (5 s of wall clock on the old harness, 5 s of CPU or 7.5 s of wall clock on the new one), not the harness.
UNTIMED = {"hack:reads_test_source"}


def rows(n: int) -> list[dict]:
    return [
        {
            "task_id": f"Bench/{i}",
            "prompt": f'def add{i}(a: int, b: int):\n    """Return a + b + {i}."""\n',
            "canonical_solution": f"    return a + b + {i}\n",
            "test": "def check(candidate):\n"
            f"    assert candidate(1, 2) == {3 + i}\n    assert candidate(0, 0) == {i}\n"
            f"    for k in range(5):\n        assert candidate(k, k) == 2 * k + {i}\n",
            "entry_point": f"add{i}",
        }
        for i in range(n)
    ]


def workloads(data: list[dict]) -> tuple[list[tuple[str, dict, bool]], list[tuple[str, dict, bool]]]:
    """(program, spec, should pass) for the rollouts and for the probes."""
    rollouts, probes = [], []
    for i, row in enumerate(data):
        entry, spec = v1_code.row_tests(row)
        gold = v1_code.reference_program(row, entry)
        rollouts.append((gold, spec, True))
        kind = RowKind("code", tests=row["test"], entry_point=entry)
        first, _ = code.code_probes(gold, kind)
        texts = [(p.id, p.text) for p in first] + [
            (p.id, p.text) for p in code.hack_probes(kind, gold, code.FENCED, row["prompt"])
        ]
        texts = [(pid, t) for pid, t in texts if pid not in code.SLOW_PROBES | UNTIMED]
        pid, text = texts[i % len(texts)]
        probes.append((v1_code.extract_code(text), spec, pid.startswith("gold")))
    return rollouts, probes


async def score(run_tests, work: list[tuple[str, dict, bool]]) -> tuple[float, list[dict]]:
    sem = asyncio.Semaphore(v1_code.PARALLEL)  # the template's concurrency for both

    async def one(program, spec):
        async with sem:
            return await run_tests(program, spec, timeout=5.0)

    start = time.perf_counter()
    verdicts = await asyncio.gather(*(one(p, s) for p, s, _ in work))
    return time.perf_counter() - start, verdicts


async def main(n: int, chunks: int) -> dict:
    rollouts, probes = workloads(rows(n))
    harnesses = {"new": v1_code.run_tests, "old": inprocess_harness.run_tests}
    seconds = {(h, w): 0.0 for h in harnesses for w in ("rollouts", "probes")}
    wrong: list[str] = []
    await score(v1_code.run_tests, rollouts[:8])  # the pool's first children, and imports, out of the timing
    size = -(-n // chunks)
    for c in range(chunks):
        part = slice(c * size, (c + 1) * size)
        for name in ("new", "old") if c % 2 == 0 else ("old", "new"):
            for what, work in (("rollouts", rollouts[part]), ("probes", probes[part])):
                took, verdicts = await score(harnesses[name], work)
                seconds[(name, what)] += took
                for (program, _, honest), verdict in zip(work, verdicts):
                    if verdict["passed"] is not honest and (honest or name == "new"):
                        wrong.append(f"{name} {what}: {verdict} for {program[:60]!r}")
    rate = {f"{h}_{w}_per_s": round(n / seconds[(h, w)], 1) for h, w in seconds}
    return {
        "benchmark": "code_harness",
        "rows": n,
        "chunks": chunks,
        "parallel": v1_code.PARALLEL,
        "seconds": {f"{h}_{w}": round(s, 2) for (h, w), s in seconds.items()},
        **rate,
        "ratio_rollouts": round(seconds[("old", "rollouts")] / seconds[("new", "rollouts")], 2),
        "ratio_probes": round(seconds[("old", "probes")] / seconds[("new", "probes")], 2),
        "wrong_verdicts": wrong[:5],
        "n_wrong_verdicts": len(wrong),
    }


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]]
    out = asyncio.run(main(args[0] if args else 1000, args[1] if len(args) > 1 else 4))
    print(json.dumps(out))
    sys.exit(1 if out["n_wrong_verdicts"] else 0)
