#!/usr/bin/env python3
"""Benchmark: check_reward_distribution on a generated vf-eval results file (default 1,000,000 rows of
1.3 KB), against a bare `json.loads` loop, pandas.read_json(lines=True) and a json.loads loop computing
the group statistics, all in the same run.

The reader comparison (issue 37): the script as a user runs it (`check_reward_distribution.py --results
FILE --json`, a fresh process: interpreter start and imports included) against the bare loop that only
sums the rewards (`bare_loop.BARE_SUM`, a fresh process too), run in turn --repeats times (default 3);
medians of wall and CPU time (the script's reader processes included) and their ratios to the bare loop
(below 1: faster). With --baseline REF the script of the commit REF (its skill folder read with
`git archive`, nothing checked out) runs in the same rounds: before and after in one run, and every run's
JSON must be byte-identical to the baseline's, on the generated file and on each real eval file under
../shared/real-data/verifiers-evals (or --real-data DIR; skipped when absent): the benchmark stops otherwise.

The other approaches each run once in their own subprocess, which reports its own wall time and peak
memory (ru_maxrss). pandas runs under an address-space cap (BENCH_PANDAS_MEM_GB, default 8) so the
baseline cannot exhaust a shared machine (--no-pandas skips it). Those baselines compute the least the
tool does: mean reward and per-example reward std (group signal), on the classic shapes only. Targets: the
tool under 10 s and 500 MB peak on 1,000,000 rows, and faster than both (issue 5); at or under the bare
loop's wall and CPU time on every shape (issues 37, 52).

--shape picks the rows generated: classic (default: verifiers 0.3.1 vf-eval rows, 1.3 KB), legacy2025 (the
2025 writers' rows: `id`, compact JSON, chat prompts fingerprinted on every row, 0.85 KB), text (example_id,
reward, a text prompt and completion, 0.7 KB; read as 2025 rows), v1 (verifiers 0.4 vf-eval traces.jsonl: an
episode of one trace a rollout, 3.4 KB) or validate (verifiers 0.4 vf-validate results.jsonl: a task's gold
and noop checks, 0.5 KB; ROWS counts tasks).

usage: python bench/bench_check_reward_distribution.py [ROWS] [--keep DIR] [--repeats N] [--no-pandas]
                                                       [--baseline REF] [--real-data DIR]
                                                       [--shape classic|legacy2025|text|v1|validate]
Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bare_loop import START_ENV, bare_command, baseline_scripts, compare

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "skills" / "verifiers-lab" / "scripts" / "check_reward_distribution.py"
ROLLOUTS = 4

# A verifiers 0.3.1 vf-eval row (same fields and nesting as save_utils.state_to_output writes).
ROW = (
    '{{"example_id": {ex}, "prompt": [{{"role": "system", "content": "Answer in <answer></answer> tags."}}, '
    '{{"role": "user", "content": "Ada has {b} boxes with {a} marbles in each box. She gives away {c}. '
    'How many marbles does Ada have left?"}}], "completion": [{{"role": "assistant", "content": '
    '"{b} * {a} = {ab}; {ab} - {c} = {ans}. <answer>{out}</answer>", "reasoning_content": null, '
    '"thinking_blocks": null, "tool_calls": null}}], "answer": "{ans}", "reward": {reward}, "error": null, '
    '"timing": {{"start_time": {t}, "setup": {{"start": {t}, "end": {t}, "duration": 3.3e-06}}, "generation": '
    '{{"start": {t}, "end": {t}, "duration": 0.0283}}, "scoring": {{"start": {t}, "end": {t}, "duration": 0.00116}}, '
    '"model": {{"spans": [{{"start": {t}, "end": {t}, "duration": 0.0272}}], "duration": 0.0272}}, "env": '
    '{{"spans": [], "duration": 0}}, "total": 0.0296, "overhead": 0.0012}}, "is_completed": true, '
    '"is_truncated": false, "stop_condition": "max_turns_reached", "metrics": {{"correct_answer": {correct}, '
    '"format_reward_func": 1.0, "num_turns": 1.0}}, "tool_defs": [], "token_usage": {{"input_tokens": 52.0, '
    '"output_tokens": 31.0, "final_output_tokens": 31, "final_input_tokens": 52}}, "correct_answer": {correct}, '
    '"format_reward_func": 1.0, "num_turns": 1.0}}\n'
)

# A 2025 vf-eval row (the real legacy-2025 files' fields and compact separators: `id`, flattened metrics), the
# prompt fingerprinted for every row; and a row of text prompt and completion (read as a 2025 row too).
ROW_2025 = (
    '{{"id":{ex},"prompt":[{{"content":"Solve the problem. Think step by step, then give the final answer as '
    'a number inside \\\\boxed{{}} on the last line. Do not use code.","role":"system"}},{{"content":"Ada has {b} '
    "boxes with {a} marbles in each box. She gives away {c} marbles to her friends at school and keeps the rest "
    "in a drawer next to her bed. Her brother borrows none of them. How many marbles does Ada have left? Count "
    'carefully and show the multiplication and the subtraction you used.","role":"user"}}],"completion":[{{'
    '"content":"Each box holds {a} marbles and there are {b} boxes, so {b} * {a} = {ab}. She gives away {c}, so '
    '{ab} - {c} = {ans}. The answer is \\\\boxed{{{out}}}","role":"assistant","tool_calls":null}}],"task":'
    '"default","reward":{reward},"generation_ms":1234.5,"scoring_ms":0.5,"total_ms":1235.0,"answer":"{ans}",'
    '"correct_answer_reward_func":{correct},"format_reward_func":1.0}}\n'
)
ROW_TEXT = (
    '{{"example_id": {ex}, "reward": {reward}, "prompt": "Ada has {b} boxes with {a} marbles in each box. She '
    "gives away {c}. How many marbles does Ada have left? Think step by step and end with the answer in "
    "<answer></answer> tags. Each box is the same size and no marble is lost or added along the way; the boxes "
    "are never opened twice and Ada counts the marbles she keeps only once, after giving the others away to "
    'her friends.", "completion": "There are {b} boxes of {a} marbles: {b} * {a} = {ab} marbles in all. '
    "Ada gives away {c} of them, which leaves {ab} - {c} = {ans} marbles. Checking: {ans} + {c} = {ab}, which "
    "is {b} boxes of {a}, so the count is consistent with the question. Nothing else changes the number of "
    'marbles she has. <answer>{out}</answer>"}}\n'
)


def _v1_episode_template() -> str:
    """A verifiers 0.4 vf-eval traces.jsonl episode (the real demo-taskset file's fields, nesting and compact
    separators: the agent's config, the nodes with their empty token arrays, the calls, the timing), one trace a
    rollout, as a format string (``{ex}``, ``{reward}``... as the other rows)."""
    data = {
        "idx": "@ex@",
        "prompt": "Ada has @b@ boxes with @a@ marbles in each box. She gives away @c@. How many marbles does Ada have "
        "left?",
        "system_prompt": "Answer inside <answer></answer> tags.",
        "skills": [],
        "network_allow": ["*"],
        "network_block": [],
        "artifacts": [],
        "artifact_max_bytes": 33554432,
        "timeout": {},
        "resources": {},
        "answer": "@ans@",
    }
    task = {"type": "MathTask", "data": data, "key": "@key@", "hash": "@key@"}
    node = {"semantic_parents": [], "sampled": False, "timestamp": "@t@", "token_ids": [], "mask": [],
            "is_content": [], "logprobs": []}  # fmt: skip
    nodes = [
        {**node, "message": {"role": "system", "content": data["system_prompt"]}},
        {"parent": 0, **node, "message": {"role": "user", "content": data["prompt"]}},
        {
            "parent": 1,
            **node,
            "sampled": True,
            "message": {"role": "assistant", "content": "@b@ * @a@ = @ab@; @ab@ - @c@ = @ans@. <answer>@out@</answer>"},
        },  # fmt: skip
    ]
    agent = {
        "config": {
            "harness": {
                "id": "null",
                "env": {},
                "forward_env": [],
                "mcp_header_env": {},
                "tool_timeout": 600.0,
                "skills": [],
            },  # fmt: skip
            "runtime": {"type": "subprocess"},
            "model": "local-model",
            "client": {
                "base_url": "http://127.0.0.1:18000/v1",
                "api_key_var": "VLLM_API_KEY",
                "headers": {},
                "headers_from_env": {},
                "timeout": {"connect": 30.0},
                "type": "eval",
            },  # fmt: skip
            "sampling": {"temperature": None, "top_p": None, "reasoning_effort": None, "max_tokens": None},
            "timeout": {},
            "retries": {"max_retries": 0, "rules": []},
            "network_notice": True,
        },
        "runtime": {"id": "~/.cache/verifiers/runtimes/subprocess/@trace@", "borrowed": False, "type": "subprocess"},
        "name": "agent",
        "trainable": True,
    }
    span = {"start": "@t@", "end": "@t@"}
    trace = {
        "version": 1,
        "id": "@trace@",
        "verifiers": {"version": "0.4.0"},
        "task": task,
        "agent": agent,
        "tools": [],
        "nodes": nodes,
        "calls": [
            {
                "node": 2,
                "model": "local-model",
                "sampling": {},
                "endpoint": "/chat/completions",
                "finish_reason": "stop",
                "usage": {"prompt_tokens": 31, "completion_tokens": 24},
                "time": span,
            }
        ],  # fmt: skip
        "mm_token_type_id_map": {},
        "request_rewrites": [],
        "response_rewrites": [],
        "rewards": {"correct": {"score": "@correct@", "weight": 1.0}, "formatted": {"score": 1.0, "weight": 0.2}},
        "metrics": {"reply_chars": "@chars@"},
        "info": {},
        "extra_usage": [],
        "is_completed": True,
        "ok": True,
        "stop_condition": "agent_completed",
        "is_timeout": False,
        "errors": [],
        "timing": {
            "start": "@t@",
            "boot": span,
            "setup": span,
            "agent": {**span, "model": {"duration": 0.0855}, "harness": {"duration": 3.5752}},
            "finalize": span,
            "scoring": span,
        },  # fmt: skip
        "num_input_tokens": 31,
        "num_output_tokens": 24,
        "num_total_tokens": 55,
    }
    episode = {
        "id": "@episode@",
        "env": {"id": "demo-taskset"},
        "task": task,
        "run": {"type": "eval", "id": "disabled-7fd2d5c9feee4c0c", "name": "demo-taskset--local-model--null--5c64dcae"},
        "ok": True,
        "is_timeout": False,
        "errors": [],
        "traces": [trace],
        "num_input_tokens": 31,
        "num_output_tokens": 24,
        "num_total_tokens": 55,
    }
    text = json.dumps(episode, separators=(",", ":")).replace("{", "{{").replace("}", "}}")
    text = re.sub(r'"@(ex|t|correct|chars)@"', r"{\1}", text)  # numbers
    return re.sub(r"@(\w+)@", r"{\1}", text) + "\n"


# A verifiers 0.4 vf-validate results.jsonl row (the real demo-taskset file's fields): one a task, its gold and
# noop checks; no rollouts.
ROW_VALIDATE = (
    '{{"elapsed":0.01,"error":null,"error_type":null,"gold":{{"elapsed":0.01,"error":null,"error_type":null,'
    '"index":{i},"mode":"gold","name":null,"reason":"{gold}","valid":{valid}}},"index":{i},"mode":"all","name":null,'
    '"noop":{{"elapsed":0.0,"error":null,"error_type":null,"index":{i},"mode":"noop","name":null,"reason":"valid",'
    '"reward":0.0,"rewards":{{"correct":0.0,"formatted":0.0}},"valid":true}},"reason":"{gold}","task_key":"{key}",'
    '"task_position":{i},"valid":{valid}}}\n'
)
ROWS = {
    "classic": ROW,
    "legacy2025": ROW_2025,
    "text": ROW_TEXT,
    "v1": _v1_episode_template(),
    "validate": ROW_VALIDATE,
}
FILE_NAMES = {"v1": "traces.jsonl"}  # the others: results.jsonl
CLASSIC_SHAPES = ("classic", "legacy2025", "text")  # read by the column reader; pandas and the group loop read them


def generate(path: Path, rows: int, shape: str = "classic") -> None:
    import hashlib
    import random

    rng = random.Random(5)
    template = ROWS[shape]
    with path.open("w") as f:
        buf = []
        for i in range(rows):
            ex = i // ROLLOUTS if shape != "validate" else i
            a, b, c = 3 + ex % 37, 2 + ex % 7, 1 + ex % 19
            correct = 1.0 if rng.random() < (ex % 5 + 0.5) / 5 else 0.0
            ans = a * b - c
            out = ans if correct else ans + 1
            buf.append(
                template.format(
                    ex=ex,
                    i=i,
                    a=a,
                    b=b,
                    c=c,
                    ab=a * b,
                    ans=ans,
                    out=out,
                    correct=correct,
                    reward=correct + 0.2,
                    t=1795349550.5 + i * 1e-4,
                    chars=float(len(f"{b} * {a} = {a * b}; {a * b} - {c} = {ans}. <answer>{out}</answer>")),
                    key=hashlib.sha256(b"task %d" % ex).hexdigest(),
                    episode=f"{rng.getrandbits(128):032x}",
                    trace=f"{rng.getrandbits(128):032x}",
                    gold=("valid", "invalid", "unchecked")[(ex % 10 > 6) + (ex % 10 > 8)],
                    valid=("true", "false", "null")[(ex % 10 > 6) + (ex % 10 > 8)],
                )
            )
            if len(buf) == 10_000:
                f.write("".join(buf))
                buf.clear()
        f.write("".join(buf))
    if shape != "classic":
        return
    (path.parent / "metadata.json").write_text(
        json.dumps(
            {"env_id": "bench", "model": "m", "num_examples": rows // ROLLOUTS, "rollouts_per_example": ROLLOUTS}
        )
    )


# -- the approaches, each run in a child process ------------------------------------------


def child_tool(path: str) -> dict:
    sys.path.insert(0, str(ROOT / "skills" / "verifiers-lab" / "scripts"))
    import io

    import check_reward_distribution as tool

    captured = io.StringIO()
    stdout, sys.stdout = sys.stdout, captured
    try:
        code = tool.main(["--results", path, "--json"])
    finally:
        sys.stdout = stdout
    result = json.loads(captured.getvalue())
    if result["status"] == "error":  # an internal error or unreadable input is not a measurement
        raise SystemExit(f"tool failed: {result['summary']}")
    d = result["data"]
    from vlab.evals.columns import reading_workers
    from vlab.evals.source import locate

    workers = reading_workers(locate(path))
    return {
        "exit_code": code,
        "mean": d["reward"]["mean"],
        "zero_variance": d["groups"].get("zero_variance_share"),
        "rollouts": d["counts"]["rollouts"],
        "workers": workers if workers > 1 else 0,
    }


def child_pandas(path: str) -> dict:
    # pandas holds every row as Python objects: cap its address space so the baseline cannot
    # take the machine's memory from everyone else (a MemoryError is reported as such).
    limit = int(float(os.environ.get("BENCH_PANDAS_MEM_GB", "8")) * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    import pandas as pd

    df = pd.read_json(path, lines=True)
    std = df.groupby("example_id" if "example_id" in df else "id")["reward"].std(ddof=0)
    return {"mean": float(df["reward"].mean()), "zero_variance": float((std == 0).mean())}


def child_json(path: str) -> dict:
    import statistics

    groups: dict = {}
    total = n = 0
    with open(path, "rb") as f:
        for line in f:
            row = json.loads(line)
            r = row["reward"]
            total += r
            n += 1
            groups.setdefault(row.get("example_id", row.get("id")), []).append(r)
    zero = sum(1 for g in groups.values() if statistics.pstdev(g) == 0)
    return {"mean": total / n, "zero_variance": zero / len(groups)}


CHILDREN = {"check_reward_distribution": child_tool, "pandas_read_json": child_pandas, "json_loads_loop": child_json}


def run_child(name: str, path: Path) -> dict:
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", name, str(path)], capture_output=True, text=True, cwd=ROOT
    )
    if proc.returncode != 0 and ("MemoryError" in proc.stderr or "Could not reserve memory" in proc.stderr):
        return {
            "error": f"MemoryError under the {os.environ.get('BENCH_PANDAS_MEM_GB', '8')} GB cap",
            "seconds_until_error": round(time.perf_counter() - t, 1),
        }
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"rc {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


PREFIX_ROWS = 100_000


def write_prefix(path: Path, prefix: Path, rows: int) -> None:
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with path.open("rb") as src, prefix.open("wb") as dst:
        for _, line in zip(range(rows), src):
            dst.write(line)


def ratios(results: dict) -> dict:
    """Speed-up (baseline wall time / tool wall time) and memory ratio against each baseline."""
    tool, out = results.get("check_reward_distribution", {}), {}
    if "seconds" not in tool:
        return out
    for base in ("pandas_read_json", "json_loads_loop"):
        if base not in results:
            continue
        r = results[base]
        if "seconds_until_error" in r:  # a lower bound: it failed after this long
            out[f"speedup_vs_{base}"] = round(r["seconds_until_error"] / tool["seconds"], 2)
            out[f"speedup_vs_{base}_is_lower_bound"] = True
        if "seconds" in r:
            out[f"speedup_vs_{base}"] = round(r["seconds"] / tool["seconds"], 2)
            out[f"cpu_speedup_vs_{base}"] = round(r["cpu_s"] / tool["cpu_s"], 2)
            out[f"memory_ratio_vs_{base}"] = round(tool["peak_mb"] / r["peak_mb"], 3)
    return out


def _counted(result: dict) -> int:
    """Rollouts read (tasks, for vf-validate output)."""
    data = result["data"]
    return data["tasks"] if "tasks" in data else data["counts"]["rollouts"]


def reader_comparison(path: Path, rows: int, repeats: int, baseline: Path | None) -> dict:
    """The script against the bare json.loads loop (and the baseline commit's script), in turn, same run. With a
    baseline, every run's JSON must be byte-identical to the baseline's (the reader is faster, its verdicts the
    same): a difference stops the benchmark."""
    outputs: dict[str, set[bytes]] = {}

    def script(at: Path) -> list[str]:
        return [sys.executable, str(at), "--results", str(path), "--json"]

    def check(name: str, run: dict) -> None:
        result = json.loads(run["stdout"])
        if result["status"] == "error" or _counted(result) != rows:
            raise SystemExit(f"{name}: check_reward_distribution failed: {result['summary']}")
        outputs.setdefault(name, set()).add(as_ours(run["stdout"], baseline))

    sides = {"ours": script(SCRIPT), "bare": bare_command(path)}
    if baseline is not None:
        sides["baseline"] = script(baseline)
    out = compare(sides, repeats, cwd=ROOT, check=check)
    if baseline is not None:
        if outputs["ours"] != outputs["baseline"]:
            raise SystemExit(f"{path}: the JSON differs from the baseline's")
        out["json_identical_to_baseline"] = True
    return out


REAL_DATA = ROOT.parent / "shared" / "real-data" / "verifiers-evals"


def as_ours(stdout: bytes, baseline: Path | None) -> bytes:
    """The baseline's JSON with its scripts folder named as ours is (a next step quotes the script's command)."""
    if baseline is None:
        return stdout
    return stdout.replace(str(baseline.parent).encode(), str(SCRIPT.parent.relative_to(ROOT)).encode())


def same_json_on_real_files(baseline: Path, folder: Path = REAL_DATA) -> dict:
    """Ours and the baseline's script on every real eval file (one run folder each, when ../shared is here): the
    JSON must be byte-identical."""
    if not folder.is_dir():
        return {"skipped": f"{folder} is absent"}
    runs = sorted(p for p in folder.iterdir() if p.is_dir())
    for run in runs:
        stdout = [
            as_ours(
                subprocess.run(
                    [sys.executable, str(at), "--results", str(run), "--json"],
                    capture_output=True,
                    cwd=ROOT,
                    env=START_ENV,
                ).stdout,
                baseline,
            )
            for at in (SCRIPT, baseline)
        ]
        if stdout[0] != stdout[1] or not stdout[0]:
            raise SystemExit(f"{run}: the JSON differs from the baseline's")
    return {"files": len(runs), "json_identical_to_baseline": True}


def main() -> int:
    if len(sys.argv) >= 4 and sys.argv[1] == "--child":
        name, path = sys.argv[2], sys.argv[3]
        t = time.perf_counter()
        out = CHILDREN[name](path)
        out["seconds"] = round(time.perf_counter() - t, 3)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the tool's reader processes, if any
        # CPU time is fairer than wall time on a shared machine
        out["cpu_s"] = round(usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime, 3)
        # ru_maxrss is KiB on Linux. With reader processes, count each at the largest one's peak
        # on top of the parent's (they run at the same time): an upper bound.
        workers = out.pop("workers", 0)
        out["peak_mb"] = round((usage.ru_maxrss + workers * children.ru_maxrss) / 1024, 1)
        if workers:
            out["reader_processes"] = workers
            out["peak_mb_parent"] = round(usage.ru_maxrss / 1024, 1)
            out["peak_mb_largest_reader"] = round(children.ru_maxrss / 1024, 1)
        print(json.dumps(out))
        return 0
    args = sys.argv[1:]
    options = {}
    for flag in ("--keep", "--repeats", "--baseline", "--shape", "--real-data"):
        if flag in args:
            options[flag] = args[args.index(flag) + 1]
            del args[args.index(flag) : args.index(flag) + 2]
    with_pandas = "--no-pandas" not in args
    args = [a for a in args if a != "--no-pandas"]
    keep = Path(options["--keep"]) if "--keep" in options else None
    repeats = int(options.get("--repeats", 3))
    rows = int(args[0]) if args else 1_000_000
    shape = options.get("--shape", "classic")
    if shape not in ROWS:
        raise SystemExit(f"--shape is one of {', '.join(ROWS)}")
    children = [name for name in CHILDREN if with_pandas or name != "pandas_read_json"]
    with tempfile.TemporaryDirectory(prefix="bench-crd-") as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / FILE_NAMES.get(shape, "results.jsonl")
        t = time.perf_counter()
        if not path.exists():
            generate(path, rows, shape)
        gen_s = time.perf_counter() - t
        baseline = None
        if "--baseline" in options:
            (Path(tmp) / "baseline").mkdir()
            baseline = baseline_scripts(options["--baseline"], Path(tmp) / "baseline") / SCRIPT.name
        load = os.getloadavg()[0]
        reader = reader_comparison(path, rows, repeats, baseline)
        real = None
        if baseline is not None:
            real = same_json_on_real_files(baseline, Path(options.get("--real-data", REAL_DATA)))
        # the other approaches compute a classic file's group figures: not for v1 traces or vf-validate output
        results = {name: run_child(name, path) for name in children} if shape in CLASSIC_SHAPES else {}
        size_mb = path.stat().st_size / 2**20
        out = {
            "bench": "check_reward_distribution",
            "rows": rows,
            "shape": shape,
            "file_mb": round(size_mb, 1),
            "cpus": os.cpu_count(),
            "loadavg_1m": [round(load, 2), round(os.getloadavg()[0], 2)],  # before and after the comparison
            "generate_s": round(gen_s, 1),
            "reader": reader,
            **({"baseline": options["--baseline"], "real_files": real} if baseline is not None else {}),
            **results,
            **ratios(results),
        }
        if with_pandas and "error" in results.get("pandas_read_json", {}) and rows > PREFIX_ROWS:
            # pandas cannot hold the full file under its cap: compare all three on a prefix it can hold
            prefix = Path(tmp) / "prefix" / "results.jsonl"
            write_prefix(path, prefix, PREFIX_ROWS)
            small = {name: run_child(name, prefix) for name in children}
            out[f"at_{PREFIX_ROWS}_rows"] = {**small, **ratios(small)}
    tool = results.get("check_reward_distribution")
    out["targets"] = {"seconds": 10, "peak_mb": 500, "wall_ratio_to_bare": 1.0, "cpu_ratio_to_bare": 1.0}
    out["ok"] = bool(
        (tool is None or "seconds" in tool)
        and (tool is None or rows < 1_000_000 or (tool["seconds"] < 10 and tool["peak_mb"] < 500))
        and all(out.get(f"speedup_vs_{b}", 0) > 1 for b in ("pandas_read_json", "json_loads_loop") if b in results)
        and reader["wall_ratio_to_bare"]["ours"] <= 1
        and reader["cpu_ratio_to_bare"]["ours"] <= 1
    )
    print(json.dumps(out))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
