#!/usr/bin/env python3
"""Benchmark: diagnose_run on a generated 100,000-step local_train metrics file, against a plain
`json.loads` loop over the same file, measured in the same run.

The file has local_train's keys (vlab.train.trainer writes ~20 per step) and an eval line every
100 steps; the reward rises, then collapses at 80% of the run (so every check has work to do).
Measured in this process, median of 3 each (interleaved): the baseline parses every line into a dict and keeps
the rewards; the tool reads, normalises, runs every signature, the deltas and the stop conditions
(`vlab.diagnose.diagnose`). The script's own wall time (a subprocess, imports included) is
reported too. Target (issue 16): the diagnosis under 1 s.

The reader comparison (issue 37, as bench_check_reward_distribution.py): the script as a user runs it
(`diagnose_run.py --run FOLDER --json`, a fresh process, imports included) against the bare loop
(`bare_loop.BARE_SUM`: `json.loads` on every line of the same metrics file, summing `reward_mean`, a fresh
process too), in turn --repeats times (default 3): medians and ratios to the bare loop (below 1: faster);
with --baseline REF the script of commit REF in the same rounds (before and after in one run).

usage: python bench/bench_diagnose_run.py [STEPS] [--repeats N] [--baseline REF]
Prints one JSON line.
"""

from __future__ import annotations

import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bare_loop import START_ENV, bare_command, baseline_scripts, compare

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "skills" / "verifiers-lab" / "scripts"))


def generate(path: Path, steps: int) -> None:
    rng = random.Random(16)
    lines = []
    for t in range(1, steps + 1):
        u = t / steps
        p = 0.15 + 0.6 / (1 + math.exp(-(u - 0.3) * 12)) if u < 0.8 else 0.1
        r = min(1.0, max(0.0, p + rng.gauss(0, 0.04)))
        row = {
            "step": t,
            "reward_mean": r,
            "reward_std": math.sqrt(max(1e-6, r * (1 - r))),
            "zero_adv_group_frac": min(1.0, max(0.0, 0.2 + rng.gauss(0, 0.05))),
            "num_rollouts": 128,
            "num_train_sequences": 100,
            "errors": 0,
            "truncated_frac": max(0.0, 0.03 + rng.gauss(0, 0.01)),
            "completion_len_mean": 220 + rng.gauss(0, 8),
            "entropy": 1.1 - 0.3 * u + rng.gauss(0, 0.02),
            "gen_tokens": 28000,
            "gen_s": 2.0 + rng.random() * 0.1,
            "gen_tokens_per_s": 14000 + rng.gauss(0, 300),
            "train_s": 0.9,
            "metrics/correct/mean": r,
            "metrics/correct/std": 0.4,
            "loss": rng.gauss(0, 0.01),
            "grad_norm": abs(rng.gauss(0.3, 0.05)),
            "lr": 1e-6,
            "train_tokens": 30000,
            "ratio_mean": 1.0,
            "clipped_frac": 0.01,
            "kl": 0.001,
        }
        lines.append(json.dumps(row))
        if t % 100 == 0:
            lines.append(json.dumps({"step": t, "eval/reward_mean": r - 0.05, "eval/num_rollouts": 64}))
    path.write_text("\n".join(lines) + "\n")


def baseline(path: Path) -> float:
    rewards = []
    with path.open("rb") as f:
        for line in f:
            row = json.loads(line)
            if "reward_mean" in row:
                rewards.append(row["reward_mean"])
    return sum(rewards) / len(rewards)


def tool(folder: Path) -> dict:
    from vlab.core.result import Result
    from vlab.diagnose import DiagnoseRequest, diagnose

    result = Result("diagnose_run")
    diagnose(DiagnoseRequest(run=str(folder)), result)
    return {"findings": [c.id for c in result.checks if c.status == "fail"], "steps": result.data["run"]["steps"]}


def median_time(fn, *args, runs: int = 3):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


SCRIPT = ROOT / "skills" / "verifiers-lab" / "scripts" / "diagnose_run.py"


def reader_comparison(folder: Path, path: Path, steps: int, repeats: int, baseline: Path | None = None) -> dict:
    """The script against the bare json.loads loop over the same metrics file (and the baseline commit's
    script), in turn, same run."""

    def check(name: str, run: dict) -> None:
        result = json.loads(run["stdout"])
        if result["status"] == "error" or result["data"]["run"]["steps"] != steps:
            raise SystemExit(f"{name}: diagnose_run failed: {result['summary']}")

    def script(at: Path) -> list[str]:
        return [sys.executable, str(at), "--run", str(folder), "--json"]

    sides = {"ours": script(SCRIPT), "bare": bare_command(path, "reward_mean")}
    if baseline is not None:
        sides["baseline"] = script(baseline)
    return compare(sides, repeats, cwd=ROOT, check=check)


def main() -> int:
    args = sys.argv[1:]
    options = {}
    for flag in ("--repeats", "--baseline"):
        if flag in args:
            options[flag] = args[args.index(flag) + 1]
            del args[args.index(flag) : args.index(flag) + 2]
    repeats = int(options.get("--repeats", 3))
    steps = int(args[0]) if args else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        (folder / "logs").mkdir(parents=True)
        path = folder / "logs" / "metrics.jsonl"
        generate(path, steps)
        import io
        from contextlib import redirect_stderr

        with redirect_stderr(io.StringIO()):
            tool(folder)  # warm the imports once: the first call pays numpy/tomlkit imports
            base_t, tool_t = [], []
            for _ in range(3):  # interleaved, so both see the same machine load
                t, found = median_time(tool, folder, runs=1)
                tool_t.append(t)
                base_t.append(median_time(baseline, path, runs=1)[0])
            base_s, tool_s = statistics.median(base_t), statistics.median(tool_t)
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "skills" / "verifiers-lab" / "scripts" / "diagnose_run.py"),
                "--run",
                str(folder),
                "--json",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=START_ENV,  # as the benchmark started (vlab, imported here, exports a bytecode prefix)
        )
        cli_s = time.perf_counter() - t
        before = None
        if "--baseline" in options:
            (Path(tmp) / "baseline").mkdir()
            before = baseline_scripts(options["--baseline"], Path(tmp) / "baseline") / SCRIPT.name
        reader = reader_comparison(folder, path, steps, repeats, before)
        size_mb = path.stat().st_size / 1e6
    result = {
        "bench": "diagnose_run",
        "steps": steps,
        "file_mb": round(size_mb, 1),
        "json_loads_loop_s": round(base_s, 3),
        "diagnose_s": round(tool_s, 3),
        "ratio_to_json_loads": round(tool_s / base_s, 2),
        "script_wall_s": round(cli_s, 3),
        "reader": reader,
        **({"baseline": options["--baseline"]} if "--baseline" in options else {}),
        "findings": found["findings"],
        "target_s": 1.0,
        "ok": tool_s < 1.0,
    }
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
