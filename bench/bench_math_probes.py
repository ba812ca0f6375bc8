#!/usr/bin/env python3
"""Benchmark: test_reward on ROWS competition-math rows against a baseline commit, in the same run.

The rows (default 500) come from tests/math_fixtures.py: MATH-shaped golds of every shape
(integers, fractions, decimals, radicals, pi, tuples, intervals, sets, roots, \\pm, degrees,
percent, complex, base-n, matrices, lettered choices, expressions), the shapes taken in turn so
that the rows test_reward probes in full (the first 5, or --num-examples N) cover several of
them. The problem is in ``question`` and the gold in ``answer`` (the numeric template's
QUESTION_COLUMN and ANSWER_COLUMN); the other MATH columns stay.

Each side runs ``skills/verifiers-lab/scripts/test_reward.py TEMPLATE --env-args
'{"dataset_path": FILE}' --json`` as a subprocess with its own tree's scripts and template
(classic-numeric under .venv/vf031; v1-numeric under .venv/vf040 when that venv is
installed), PYTHONDONTWRITEBYTECODE=1, from a temporary project folder outside the repo. The
baseline (--baseline REF, default d9fed8a) is checked out with ``git worktree add --detach``
into a temporary folder, removed at the end. The two sides alternate (which one goes first
swaps every round) and each keeps its best of ROUNDS wall times: the machine is shared, so a
single pair of runs can be skewed by a neighbour's load. Each side's exit code, summary and
probe count (data.probes.probes) and failed checks are recorded.

Target: the new probes keep test_reward on 500 math rows within 1.5x of the baseline's time
(ratio = current / baseline <= 1.5 for every template measured, both sides producing a report).
Prints one JSON line. Usage: bench_math_probes.py [--baseline REF] [--rounds N] [--rows N]
[--kind classic|v1 ...] [--num-examples N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from math_fixtures import MATH_GOLDS, SHAPES, math_rows, write_jsonl  # noqa: E402

ROUNDS = 2
ROWS = 500
BASELINE = "d9fed8a"
TARGET = 1.5
SCRIPT = Path("skills/verifiers-lab/scripts/test_reward.py")
TEMPLATES = Path("skills/verifiers-lab/templates/environments")
# kind -> (template folder, venv): the venv must be fully installed (vf040 may still be installing).
KINDS = {"classic": ("classic-numeric", ROOT / ".venv/vf031"), "v1": ("v1-numeric", ROOT / ".venv/vf040")}


def venv_ready(venv: Path) -> bool:
    return (venv / "bin/python").exists() and (venv != ROOT / ".venv/vf040" or (venv / ".installed").exists())


def shapes_in_turn(rows: int) -> list[dict]:
    """math_rows(rows) reordered so that the shapes take turns (row k: the k-th shape in SHAPES)."""
    by_shape: dict[str, list[dict]] = {s: [] for s in SHAPES}
    for i, row in enumerate(math_rows(rows, prompt_column="question")):
        by_shape[MATH_GOLDS[i % len(MATH_GOLDS)][1]].append(row)
    out = []
    for k in range(max(len(v) for v in by_shape.values())):
        out += [v[k] for v in by_shape.values() if k < len(v)]
    return out


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def run_once(tree: Path, kind: str, data: Path, project: Path, extra: list[str], timeout: float) -> dict:
    template, venv = KINDS[kind]
    cmd = [
        str(venv / "bin/python"),
        str(tree / SCRIPT),
        str(tree / TEMPLATES / template),
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--json",
        *extra,
    ]
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {
            "s": time.perf_counter() - t,
            "rc": None,
            "probes": None,
            "summary": f"timed out after {timeout:g} s",
            "failed": [],
        }
    seconds = time.perf_counter() - t
    try:
        report = json.loads(proc.stdout)
        probes, summary = (report.get("data") or {}).get("probes", {}).get("probes"), report.get("summary")
        failed = [c.get("id") for c in report.get("checks", []) if c.get("status") == "fail"]
    except (json.JSONDecodeError, AttributeError):
        probes, summary, failed = None, (proc.stderr.strip().splitlines() or ["no JSON report"])[-1][:300], []
    return {"s": seconds, "rc": proc.returncode, "probes": probes, "summary": summary, "failed": failed}


def measure(kind: str, trees: dict[str, Path], data: Path, project: Path, args) -> dict:
    extra = [] if args.num_examples is None else ["--num-examples", str(args.num_examples)]
    runs: dict[str, list[dict]] = {side: [] for side in trees}
    for r in range(args.rounds):
        for side in trees if r % 2 == 0 else reversed(trees):
            runs[side].append(run_once(trees[side], kind, data, project, extra, args.timeout))
    out: dict = {"template": KINDS[kind][0], "venv": KINDS[kind][1].name}
    for side, rs in runs.items():
        last = rs[-1]
        out[f"{side}_s"] = round(min(x["s"] for x in rs), 3)
        out[f"{side}_rounds_s"] = [round(x["s"], 3) for x in rs]
        out[f"{side}_rc"] = last["rc"]
        out[f"{side}_probes"] = last["probes"]
        out[f"{side}_summary"] = last["summary"]
        out[f"{side}_failed"] = last["failed"]
    out["ratio"] = round(out["current_s"] / out["baseline_s"], 3)
    out["reported"] = all(x["probes"] is not None for rs in runs.values() for x in rs)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default=BASELINE, metavar="REF", help=f"git ref to compare with (default {BASELINE})")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds per side, best kept (default {ROUNDS})")
    ap.add_argument("--rows", type=int, default=ROWS, help=f"rows in the dataset (default {ROWS})")
    ap.add_argument(
        "--kind",
        action="append",
        choices=sorted(KINDS),
        help="template to measure (repeatable; default: every one whose venv is installed)",
    )
    ap.add_argument("--num-examples", type=int, help="passed to test_reward as --num-examples (default: its own, 5)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds one test_reward run may take (default 900)")
    args = ap.parse_args()
    kinds = args.kind or [k for k, (_, venv) in KINDS.items() if venv_ready(venv)]
    missing = [k for k in kinds if not venv_ready(KINDS[k][1])]
    if missing:
        print(f"no installed venv for {missing}: {[str(KINDS[k][1]) for k in missing]}", file=sys.stderr)
        return 2
    commit = git("rev-parse", "--verify", f"{args.baseline}^{{commit}}")
    out: dict = {
        "bench": "math_probes",
        "rows": args.rows,
        "rounds": args.rounds,
        "num_examples": args.num_examples,
        "baseline": args.baseline,
        "baseline_commit": commit[:12],
    }
    with tempfile.TemporaryDirectory(prefix="bench_math_probes_") as tmp:
        base_tree, project = Path(tmp) / "baseline", Path(tmp) / "project"
        project.mkdir()
        data = write_jsonl(project / "math.jsonl", shapes_in_turn(args.rows))
        git("worktree", "add", "--detach", str(base_tree), commit)
        try:
            trees = {"current": ROOT, "baseline": base_tree}
            for kind in kinds:
                out[kind] = measure(kind, trees, data, project, args)
        finally:
            try:
                git("worktree", "remove", "--force", str(base_tree))
            except subprocess.CalledProcessError:
                shutil.rmtree(base_tree, ignore_errors=True)
                git("worktree", "prune")
    results = [out[k] for k in kinds]
    out["ok"] = bool(results) and all(r["reported"] and r["ratio"] <= TARGET for r in results)
    print(json.dumps(out))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
