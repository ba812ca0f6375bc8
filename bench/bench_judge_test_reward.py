#!/usr/bin/env python3
"""Benchmark: test_reward --judge stub on a judge-scored environment (the v1-judge template on a TruthfulQA-shaped
dataset made here: a question, a best answer, lists of correct and incorrect answers), correct and with one
defect each, as a user runs it (a fresh process), against the same runs of another commit in the same rounds.

Issue 52: a correct TruthfulQA environment took 173-181 s and copies with one defect 497-656 s at load 2-6 (most
of it waiting on time limits); target: under a minute at load 4. Each environment is run --repeats times (default
1) in turn with the baseline's; the figures are wall seconds, the load average at the start, the exit code (the
verdict must not change: correct 0, each defect 1) and the ratio ours / baseline.

Defects: ``no_time_limit`` (the judge call without asyncio.wait_for: a judge that never answers holds the
reward), ``swallows_errors`` (a failed judge call scored 0.0 instead of erroring the rollout).

usage: python bench/bench_judge_test_reward.py [--baseline REF] [--repeats N] [--rows N]
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bare_loop import baseline_scripts, measure

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "skills" / "verifiers-lab" / "scripts"
TEMPLATE = ROOT / "skills" / "verifiers-lab" / "templates" / "environments" / "v1-judge"

DEFECTS = {
    "correct": [],
    "no_time_limit": [
        (
            "            result = await asyncio.wait_for(  # a judge that never answers errors the rollout, never stalls it\n",
            "            result = await asyncio.wait_for(  # planted: no time limit\n",
        ),
        (
            "                self.config.judge_timeout_seconds,\n            )\n",
            "                None,\n            )\n",
        ),
    ],
    "swallows_errors": [
        (
            '            trace.record_metric("judge_error", 1.0)  # the rollout errors; the metric says the judge failed\n'
            "            raise\n",
            '            trace.record_metric("judge_error", 1.0)\n            return 0.0  # planted: a failed call scores 0\n',
        )
    ],
}
EXPECT = {"correct": 0, "no_time_limit": 1, "swallows_errors": 1}


WORDS = (
    "river mountain copper violin lantern orchard glacier harbor saddle falcon meadow quartz tunnel beacon canvas "
    "thunder pepper marble anchor compass velvet ember cobalt prairie walnut harvest comet ivory lagoon summit"
).split()


def _phrase(rng: random.Random, n: int) -> str:
    return " ".join(rng.sample(WORDS, n))


def write_data(path: Path, rows: int) -> None:
    """TruthfulQA's columns (Type, Category, Question, Best Answer, Correct Answers, Incorrect Answers, Source), each
    row its own words: the stub judge grades by word overlap, so rows must not share their answers' words."""
    rng = random.Random(0)
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["Type", "Category", "Question", "Best Answer", "Correct Answers", "Incorrect Answers", "Source"])
        for i in range(rows):
            best = _phrase(rng, 6)
            out.writerow(
                [
                    "Adversarial",
                    "Misconceptions",
                    f"Question {i}: what do people wrongly believe about the {_phrase(rng, 3)}?",
                    best,
                    f"{best}; {_phrase(rng, 5)}",
                    f"{_phrase(rng, 5)}; {_phrase(rng, 5)}",
                    "https://example.org",
                ]
            )


def make_env(project: Path, name: str, edits: list[tuple[str, str]]) -> Path:
    folder = project / "environments" / name
    shutil.copytree(TEMPLATE, folder)
    module = folder / "v1_judge.py"
    text = module.read_text()
    text = text.replace('QUESTION_COLUMN = "question"', 'QUESTION_COLUMN = "Question"')
    text = text.replace('ANSWER_COLUMN = "answer"', 'ANSWER_COLUMN = "Best Answer"')
    text = text.replace('CORRECT_ANSWERS_COLUMN = "correct_answers"', 'CORRECT_ANSWERS_COLUMN = "Correct Answers"')
    text = text.replace(
        'INCORRECT_ANSWERS_COLUMN = "incorrect_answers"', 'INCORRECT_ANSWERS_COLUMN = "Incorrect Answers"'
    )
    for old, new in edits:
        if old not in text:
            raise SystemExit(f"the template changed: cannot plant {name} ({old.strip()[:60]!r})")
        text = text.replace(old, new)
    module.write_text(text)
    return folder


def run(scripts: Path, env: Path, project: Path) -> dict:
    cmd = [sys.executable, str(scripts / "test_reward.py"), str(env), "--judge", "stub", "--json"]
    cmd += ["--env-args", json.dumps({"dataset_path": str(project / "data" / "TruthfulQA.csv")})]
    load = os.getloadavg()[0]
    got = measure(cmd, cwd=project, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return {
        "wall_s": round(got["wall_s"], 1),
        "cpu_s": round(got["cpu_s"], 1),
        "exit_code": got["exit_code"],
        "load": round(load, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--baseline", help="a commit whose scripts run in the same rounds")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--rows", type=int, default=817)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / "data").mkdir(parents=True)
        write_data(project / "data" / "TruthfulQA.csv", args.rows)
        envs = {name: make_env(project, name, edits) for name, edits in DEFECTS.items()}
        sides = {"ours": SCRIPTS}
        if args.baseline:
            (Path(tmp) / "baseline").mkdir()
            sides["baseline"] = baseline_scripts(args.baseline, Path(tmp) / "baseline")
        out: dict = {"bench": "judge_test_reward", "rows": args.rows, "baseline": args.baseline, "envs": {}}
        t0 = time.perf_counter()
        for name, env in envs.items():
            runs: dict[str, list] = {side: [] for side in sides}
            for _ in range(args.repeats):
                for side, scripts in sides.items():
                    runs[side].append(run(scripts, env, project))
            entry = {side: found for side, found in runs.items()}
            entry["verdict_ok"] = all(r["exit_code"] == EXPECT[name] for r in runs["ours"])
            if args.baseline:
                ours = sorted(r["wall_s"] for r in runs["ours"])[len(runs["ours"]) // 2]
                base = sorted(r["wall_s"] for r in runs["baseline"])[len(runs["baseline"]) // 2]
                entry["wall_ratio"] = round(ours / base, 2) if base else None
            out["envs"][name] = entry
        out["seconds"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out))
    return 0 if all(e["verdict_ok"] for e in out["envs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
