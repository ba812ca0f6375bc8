#!/usr/bin/env python3
"""Benchmark: the code templates' scorer (tests here, the program in a warm child) against yesterday's
in-process harness (tests/inprocess_harness.py: one fresh child runs the program and the tests and
writes the verdict), in one run, on ROWS HumanEval-shaped rows (default 1,000).

Two figures per harness, both through the template's ``run_tests`` at the template's concurrency:
  * rollouts scored/s: each row's reference program (prompt + canonical body), as training scores a rollout;
  * code probes/s: per row one of test_reward's code probes (``vlab.kinds.code.probes``: the reference fenced,
    the wrong and malformed programs, every fast hack), taken in turn so all 1,000 rows are used;
    the slow probes (an infinite loop, the process left behind, and reading the tests from disk, which globs
    /tmp) measure time limits, not speed, and are left out.
The two harnesses alternate in chunks (new, old, new, old, ...) so a change of machine load falls on both.
Every verdict is checked (references pass on both; no probe but the reference passes on the new one).
Prints one JSON line: per harness seconds and runs/s, and the ratios new/old (above 1: the new one is faster).
Usage: bench_code_harness.py [ROWS] [CHUNKS]

With --baseline REF (e.g. d9fed8a, the commit before the fenced harness): the old side is the v1-code template
itself (v1_code.py + v1_code_harness.py) as it was at REF, read with `git show REF:path` into a temporary folder.
Both versions have the same module names, so each side scores its chunks in its own subprocess (this script with
--worker DIR WORKFILE START STOP: DIR first on sys.path, its v1_code builds the specs, reads the replies and scores;
it prints seconds and verdict counts as JSON); the chunks alternate (current, baseline, current, baseline, ...) so
a change of machine load falls on both. Same two figures (rollouts: the reference programs; probes: the fast code
probes). Prints one JSON line: per side seconds, rollouts/s, probes/s, verdict counts, the ratios current/baseline
(above 1: the current one is faster), and whether every reference passed on both sides. The current harness fences
the candidate with Landlock, so the baseline may pass hacks that read files: counted per probe, not an error.
Target (issue 34): the current harness keeps at least 1/1.2 of the baseline's rollouts per second
(ratio_rollouts >= 0.83).
Usage: bench_code_harness.py [ROWS] [CHUNKS] --baseline REF
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
TEMPLATE = "skills/verifiers-lab/templates/environments/v1-code"
if sys.argv[1:2] == ["--worker"]:  # a baseline's (or the current) v1_code from the folder named
    sys.path.insert(0, sys.argv[2])

import inprocess_harness  # noqa: E402
import v1_code  # noqa: E402

from vlab.kinds.base import RowKind  # noqa: E402
from vlab.reward import code  # noqa: E402

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
    for item in probe_texts(data):
        _, spec = v1_code.row_tests(item["row"])
        rollouts.append((item["gold"], spec, True))
        probes.append((v1_code.extract_code(item["probe"]), spec, item["honest"]))
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


# -- --baseline REF: each side in its own subprocess ----------------------------------------------------


async def worker(workfile: str, start: int, stop: int) -> dict:
    """Score rows [start, stop) of the work file with the v1_code first on sys.path: seconds and verdict counts."""
    items = json.loads(Path(workfile).read_text())
    specs = [v1_code.row_tests(item["row"])[1] for item in items]
    warm = [(items[i]["gold"], specs[i], True) for i in range(min(8, len(items)))]
    await score(v1_code.run_tests, warm)  # the pool's first children, and imports, out of the timing
    part = range(start, stop)
    rollouts = [(items[i]["gold"], specs[i], True) for i in part]
    probes = [(v1_code.extract_code(items[i]["probe"]), specs[i], items[i]["honest"]) for i in part]
    out: dict = {"module": v1_code.__file__, "rollouts_passed": 0, "probes_passed_honest": 0, "probes_honest": 0}
    out["probes_passed_dishonest"] = {}
    out["rollouts_seconds"], verdicts = await score(v1_code.run_tests, rollouts)
    out["rollouts_passed"] = sum(bool(v["passed"]) for v in verdicts)
    out["rollout_failures"] = [v["reason"][:200] for v in verdicts if not v["passed"]][:3]
    out["probes_seconds"], verdicts = await score(v1_code.run_tests, probes)
    for i, (_, _, honest), verdict in zip(part, probes, verdicts):
        if honest:
            out["probes_honest"] += 1
            out["probes_passed_honest"] += bool(verdict["passed"])
        elif verdict["passed"]:
            pid = items[i]["probe_id"]
            out["probes_passed_dishonest"][pid] = out["probes_passed_dishonest"].get(pid, 0) + 1
    return out


def probe_texts(data: list[dict]) -> list[dict]:
    """Per row: the row, its reference program, and one fast probe's raw reply (its id, whether it should pass)."""
    items = []
    for i, row in enumerate(data):
        entry, _ = v1_code.row_tests(row)
        gold = v1_code.reference_program(row, entry)
        kind = RowKind("code", tests=row["test"], entry_point=entry)
        first, _ = code.code_probes(gold, kind)
        texts = [(p.id, p.text) for p in first] + [
            (p.id, p.text) for p in code.hack_probes(kind, gold, code.FENCED, row["prompt"])
        ]
        texts = [(pid, t) for pid, t in texts if pid not in code.SLOW_PROBES | UNTIMED]
        pid, text = texts[i % len(texts)]
        items.append({"row": row, "gold": gold, "probe_id": pid, "probe": text, "honest": pid.startswith("gold")})
    return items


def against_baseline(n: int, chunks: int, ref: str) -> dict:
    """The current template against the template at REF, chunk by chunk in alternating subprocesses."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        base = Path(tmp) / "baseline"
        base.mkdir()
        for name in ("v1_code.py", "v1_code_harness.py"):
            text = subprocess.run(
                ["git", "show", f"{ref}:{TEMPLATE}/{name}"], cwd=ROOT, check=True, capture_output=True, text=True
            ).stdout
            (base / name).write_text(text)
        workfile = Path(tmp) / "work.json"
        workfile.write_text(json.dumps(probe_texts(rows(n))))
        sides = {"current": str(ROOT / TEMPLATE), "baseline": str(base)}
        totals = {
            side: {
                "rollouts_seconds": 0.0,
                "probes_seconds": 0.0,
                "rollouts_passed": 0,
                "probes_passed_honest": 0,
                "probes_honest": 0,
                "probes_passed_dishonest": {},
                "rollout_failures": [],
            }
            for side in sides
        }
        size = -(-n // chunks)
        for c in range(chunks):
            start, stop = c * size, min(n, (c + 1) * size)
            for side in ("current", "baseline") if c % 2 == 0 else ("baseline", "current"):
                cmd = [sys.executable, __file__, "--worker", sides[side], str(workfile), str(start), str(stop)]
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode:
                    raise SystemExit(f"{side} worker failed ({done.returncode}):\n{done.stderr[-2000:]}")
                got, total = json.loads(done.stdout.strip().splitlines()[-1]), totals[side]
                assert Path(got["module"]).parent == Path(sides[side]), got["module"]  # that side's v1_code
                for key in (
                    "rollouts_seconds",
                    "probes_seconds",
                    "rollouts_passed",
                    "probes_passed_honest",
                    "probes_honest",
                ):
                    total[key] += got[key]
                for pid, k in got["probes_passed_dishonest"].items():
                    total["probes_passed_dishonest"][pid] = total["probes_passed_dishonest"].get(pid, 0) + k
                total["rollout_failures"] = (total["rollout_failures"] + got["rollout_failures"])[:3]
    out: dict = {
        "benchmark": "code_harness",
        "baseline_ref": ref,
        "rows": n,
        "chunks": chunks,
        "parallel": v1_code.PARALLEL,
    }
    for side, total in totals.items():
        out[side] = {
            "rollouts_per_s": round(n / total["rollouts_seconds"], 1),
            "probes_per_s": round(n / total["probes_seconds"], 1),
            **{k: round(v, 2) if isinstance(v, float) else v for k, v in total.items()},
        }
    out["ratio_rollouts"] = round(totals["baseline"]["rollouts_seconds"] / totals["current"]["rollouts_seconds"], 2)
    out["ratio_probes"] = round(totals["baseline"]["probes_seconds"] / totals["current"]["probes_seconds"], 2)
    out["target_ratio_rollouts"] = round(1 / 1.2, 2)
    out["within_target"] = out["ratio_rollouts"] >= 1 / 1.2
    out["every_reference_passed"] = all(t["rollouts_passed"] == n for t in totals.values())
    return out


if __name__ == "__main__":
    argv = sys.argv[1:]
    if argv[:1] == ["--worker"]:
        print(json.dumps(asyncio.run(worker(argv[2], int(argv[3]), int(argv[4])))))
        sys.exit(0)
    ref = None
    if "--baseline" in argv:
        at = argv.index("--baseline")
        ref = argv[at + 1]
        del argv[at : at + 2]
    args = [int(a) for a in argv[:2]]
    n, chunks = (args[0] if args else 1000), (args[1] if len(args) > 1 else 4)
    if ref:
        out = against_baseline(n, chunks, ref)
        print(json.dumps(out))
        sys.exit(0 if out["every_reference_passed"] else 1)
    out = asyncio.run(main(n, chunks))
    print(json.dumps(out))
    sys.exit(1 if out["n_wrong_verdicts"] else 0)
