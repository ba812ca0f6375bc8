#!/usr/bin/env python3
"""Benchmark: the hosted rehearsal (submit_training's default), first run and cached run.

A v1-numeric environment made by new_env with a GSM8K-shaped dataset (200 rows) shipped in
data/; then submit_training's offline dry run three ways, in the same run: with --no-rehearse
(the baseline: the dry run as it was), the first rehearsal with an empty rehearsal cache
(build, a fresh venv with verifiers 0.4.0 from uv's cache, load, score 20 golds) and the
second one (the venv reused: build, load, score), and the time the cached venv's Python takes to
load verifiers.v1 and datasets (the floor of any load). Target: a cached rehearsal within ~30 s
of the baseline on a 2-core machine. Prints one JSON line. uv's own package cache is used
as it is (run once before, the first rehearsal here downloads nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "skills" / "verifiers-lab" / "scripts"


def rows(n: int) -> list[dict]:
    out = []
    for i in range(n):
        a, b = 3 + i % 17, 5 + i % 11
        out.append(
            {
                "question": f"Ada has {a} boxes with {b} shells in each box. How many shells does she have?",
                "answer": f"{a} boxes of {b} is {a}*{b}=<<{a}*{b}={a * b}>>{a * b} shells.\n#### {a * b}",
            }
        )
    return out


def run(cwd: Path, env: dict, *extra: str) -> tuple[float, dict]:
    argv = [sys.executable, str(SCRIPTS / "submit_training.py"), "--model", "Qwen/Qwen3-4B-Instruct-2507"]
    argv += ["--env", "me/gsm-bench", "--env-arg", 'dataset_path="train.jsonl"', "--offline", "--json", *extra]
    t = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t, json.loads(proc.stdout)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        data = project / "gsm.jsonl"
        data.write_text("".join(json.dumps(r) + "\n" for r in rows(200)))
        env = {**os.environ, "VLAB_REHEARSE_CACHE": str(project / "cache")}
        inspect = subprocess.run(
            [sys.executable, str(SCRIPTS / "inspect_dataset.py"), str(data), "--json"], capture_output=True, text=True
        )
        (project / "inspect.json").write_text(inspect.stdout)
        subprocess.run(
            [sys.executable, str(SCRIPTS / "new_env.py"), "gsm-bench", "--from-inspect", "inspect.json", "--json"],
            cwd=project,
            capture_output=True,
            check=True,
        )
        shipped = project / "environments" / "gsm_bench" / "data"
        shipped.mkdir()
        (shipped / "train.jsonl").write_text(data.read_text())
        base_s, base = run(project, env, "--no-rehearse", "--output", "configs/base.toml")
        first_s, first = run(project, env, "--output", "configs/first.toml")
        second_s, second = run(project, env, "--output", "configs/second.toml")
        # the floor of any load: importing verifiers.v1 and datasets in the cached venv
        python = Path(second["data"]["rehearsal"]["sources"][0]["venv"]) / "bin" / "python"
        t = time.perf_counter()
        subprocess.run([str(python), "-c", "import verifiers.v1, datasets"], check=True, capture_output=True)
        import_s = time.perf_counter() - t
    figures = {
        "benchmark": "rehearse",
        "baseline_no_rehearse_s": round(base_s, 2),
        "first_s": round(first_s, 2),
        "cached_s": round(second_s, 2),
        "first_rehearsal_s": first["data"]["rehearsal"]["seconds"],
        "cached_rehearsal_s": second["data"]["rehearsal"]["seconds"],
        "cached_over_first": round(second_s / first_s, 2),
        "venv_import_verifiers_datasets_s": round(import_s, 2),
        "exit_codes": [base["exit_code"], first["exit_code"], second["exit_code"]],
        "cached": [s["cached"] for s in second["data"]["rehearsal"]["sources"]],
        "load_avg": round(os.getloadavg()[0], 1),
    }
    print(json.dumps(figures))
    return 0 if figures["exit_codes"] == [0, 0, 0] and all(figures["cached"]) else 1


if __name__ == "__main__":
    sys.exit(main())
