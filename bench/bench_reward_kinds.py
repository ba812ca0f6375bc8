#!/usr/bin/env python3
"""Benchmark: test_reward's probes of the numeric and code kinds on a 1,000-row set, against a plain loop.

numeric: classic-numeric (math-verify through vf.MathRubric) on ROWS GSM8K-shaped rows; per
row the probes test_reward adds for a number (the gold in \\boxed{}, its other spellings,
the near misses: ``reward.numbers``). code: classic-code on ROWS HumanEval-shaped rows; per
row the reference program, as test_reward's pass over every row scores it (each probe is a
child process running the tests). Each side scores the same (row, completion) pairs with
the same reward:
  * test_reward's path: ``env.score_sync`` (instrumented, rows scored concurrently; code
    programs run in parallel child processes), and
  * test_reward's path since issue 22 (numeric): ``ScoringPool`` over the child worker test_reward
    loads, siblings on the other cores started inside the timed call (pooled_*), and
  * a plain sequential loop of ``await rubric.score_rollout(state)`` on a separately loaded,
    un-instrumented copy.
Prints one JSON line with probes/s of both and their ratio. Needs the classic API (the
verifiers 0.3.1 venv). Usage: bench_reward_kinds.py [ROWS] [numeric|code ...]
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "skills" / "verifiers-lab"
sys.path[:0] = [str(SKILL / "scripts"), str(ROOT / "demo")]

from make_data import make_rows  # noqa: E402

from vlab.core.installed import verifiers_info  # noqa: E402
from vlab.env import compat, load_env  # noqa: E402
from vlab.env import pool as pool_module  # noqa: E402
from vlab.env.pool import ScoringPool  # noqa: E402
from vlab.env.remote import RemoteEnvironment  # noqa: E402
from vlab.reward import numbers  # noqa: E402
from vlab.reward import probes as rp  # noqa: E402

TEMPLATES = SKILL / "templates" / "environments"


def code_rows(n: int) -> list[dict]:
    return [
        {
            "prompt": f'def add{i}(a, b):\n    """Return a + b + {i}."""\n',
            "canonical_solution": f"    return a + b + {i}\n",
            "test": f"def check(candidate):\n    assert candidate(1, 2) == {3 + i}\n    assert candidate(0, 0) == {i}\n",
            "entry_point": f"add{i}",
        }
        for i in range(n)
    ]


def items_for(kind: str, env) -> list:
    out = []
    template = rp.CONVENTIONS[0][1]  # \boxed{}: what the numeric template's gold earned the reward with
    for row in env.rows(-1):
        gold = rp.gold_value(row.answer)
        if kind == "numeric":
            texts = [rp.fill(template, gold)] + [p.text for p in numbers.number_probes(gold, template)]
        else:
            texts = ["```python\n" + gold.strip() + "\n```"]
        out += [(row, t) for t in texts]
    return out


async def plain_loop(module, data: str, items) -> tuple[float, list[float]]:
    env = module.load_environment(dataset_path=data)
    dataset = env.get_dataset()
    rewards = []
    t = time.perf_counter()
    for row, text in items:
        state = compat.scoring_state(dataset[row.index], [{"role": "assistant", "content": text}])
        await env.rubric.score_rollout(state)
        rewards.append(state["reward"])
    return time.perf_counter() - t, rewards


def measure(kind: str, rows: int, folder: Path) -> dict:
    data = folder / f"{kind}.jsonl"
    made = make_rows(rows) if kind == "numeric" else code_rows(rows)
    data.write_text("".join(json.dumps(r) + "\n" for r in made))
    template = TEMPLATES / ("classic-numeric" if kind == "numeric" else "classic-code")
    env = load_env(str(template), {"dataset_path": str(data)})
    items = items_for(kind, env)
    concurrency = 32 if kind == "numeric" else 4  # test_reward's: code rows a few at a time
    t = time.perf_counter()
    ours = env.score_sync(items, timeout=30.0, concurrency=concurrency)
    ours_s = time.perf_counter() - t
    pooled = {}
    if kind == "numeric":  # test_reward's path since issue 22: a worker per core, siblings started in the timing
        remote = RemoteEnvironment(str(template), {"dataset_path": str(data)})
        pool = ScoringPool(remote)
        remote_items = items_for(kind, remote)
        pool.score_sync(
            remote_items[: pool_module.MIN_ITEMS - 1], timeout=30.0, concurrency=concurrency
        )  # the probes before
        t = time.perf_counter()
        pooled_scores = pool.score_sync(remote_items, timeout=30.0, concurrency=concurrency)
        pooled_s = time.perf_counter() - t
        workers = 1 + len(pool.siblings or [])
        pool.close()
        remote.close()
        pooled = {"pooled_probes_per_s": round(len(items) / pooled_s, 1), "workers": workers}
    sys.path.insert(0, str(template))
    module = __import__(template.name.replace("-", "_"))
    base_s, base_rewards = asyncio.run(plain_loop(module, str(data), items))
    same = [s.total for s in ours] == base_rewards
    if pooled:
        same = same and [s.total for s in pooled_scores] == base_rewards
        pooled["pooled_ratio"] = round(base_s / pooled_s, 2)
        pooled["seconds_pooled"] = round(pooled_s, 2)
    return pooled | {
        "kind": kind,
        "rows": rows,
        "probes": len(items),
        "test_reward_probes_per_s": round(len(items) / ours_s, 1),
        "plain_loop_probes_per_s": round(len(items) / base_s, 1),
        "ratio": round(base_s / ours_s, 2),
        "same_rewards": same,
        "seconds": {"test_reward": round(ours_s, 2), "plain_loop": round(base_s, 2)},
    }


def main() -> int:
    args = sys.argv[1:]
    rows = int(args.pop(0)) if args and args[0].isdigit() else 1000
    kinds = args or ["numeric", "code"]
    if not verifiers_info().classic:
        print(json.dumps({"benchmark": "reward_kinds", "skipped": "needs the classic API (verifiers 0.3.1)"}))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(kind, rows, Path(tmp)) for kind in kinds]
    print(json.dumps({"benchmark": "reward_kinds", "results": results}))
    return 0 if all(r["same_rewards"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
