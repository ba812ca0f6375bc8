#!/usr/bin/env python3
"""Benchmark: submit_training's offline dry run, against baselines measured in the same run.

Two figures: (1) in-process build + validate of a 3-environment config vs parsing the same TOML
with tomllib; (2) the whole script (`--offline --json`, a config written to a temp folder) vs
`python -c pass` (interpreter start-up). Target: the offline dry run answers in under 1.5 s on a
2-core machine, so an agent can iterate on a config without waiting. Prints one JSON line.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "skills" / "verifiers-lab" / "scripts"))

from vlab.hosted import SourceSpec, TrainParams, build_document, validate_document  # noqa: E402

TARGET_S = 1.5


def params() -> TrainParams:
    return TrainParams(
        model="Qwen/Qwen3-4B-Instruct-2507",
        max_steps=50,
        batch_size=256,
        group_size=16,
        sources=[
            SourceSpec("primeintellect/alphabet-sort", args={"min_turns": 3}, ratio=0.5),
            SourceSpec("primeintellect/wiki-search", ratio=0.3),
            SourceSpec("primeintellect/gsm8k", ratio=0.2),
        ],
        eval_sources=[SourceSpec("primeintellect/gsm8k", num_examples=64)],
        eval_interval=25,
        lr=1e-5,
        lora=True,
        wandb_project="bench",
    )


def median(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    import tomlkit

    text = tomlkit.dumps(build_document(params()))

    def build_and_validate():
        t = tomlkit.dumps(build_document(params()))
        validate_document(tomllib.loads(t), text=t)

    inproc = median(build_and_validate, runs * 5)
    parse = median(lambda: tomllib.loads(text), runs * 5)
    with tempfile.TemporaryDirectory() as tmp:
        argv = [
            sys.executable,
            str(ROOT / "skills" / "verifiers-lab" / "scripts" / "submit_training.py"),
            "--model",
            "Qwen/Qwen3-4B-Instruct-2507",
            "--env",
            "primeintellect/alphabet-sort",
            "--env",
            "primeintellect/gsm8k",
            "--offline",
            "--no-rehearse",  # Hub environments with no local source: the write path, not the rehearsal
            "--json",
            "--force",
            "--output",
            str(Path(tmp) / "c.toml"),
        ]
        run = lambda a: subprocess.run(
            a,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # noqa: E731
            stdin=subprocess.DEVNULL,
            cwd=tmp,
            check=False,
        )
        script = median(lambda: run(argv), runs)
        startup = median(lambda: run([sys.executable, "-c", "pass"]), runs)
    result = {
        "bench": "submit_training",
        "runs": runs,
        "build_validate_ms": round(inproc * 1000, 2),
        "tomllib_parse_ms": round(parse * 1000, 3),
        "build_validate_vs_parse": round(inproc / parse, 1),
        "dry_run_s": round(script, 3),
        "python_c_pass_s": round(startup, 3),
        "dry_run_vs_startup": round(script / startup, 1),
        "target_s": TARGET_S,
        "ok": script < TARGET_S,
    }
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
