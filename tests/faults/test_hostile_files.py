"""Hostile but legal files and settings (issue 27): CRLF line endings, a UTF-8 BOM, a 100 MB single row,
a 10 million row file, a symlink loop in a searched folder, LANG=C. The readers give the same verdict as
on a plain file, within a fixed memory bound (the peak RSS of the script, measured as a child process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import evalfile_fixtures as efx
import pytest
from conftest import ROOT, SCRIPTS

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

ROWS = [{"question": f"What is {i} + 1? (café)", "answer": str(i + 1)} for i in range(60)]


MEASURED = """
import atexit, runpy, sys
out, script = sys.argv[1], sys.argv[2]
def peak():  # VmHWM starts again at exec, unlike ru_maxrss (which keeps the forked test process's)
    hwm = [line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")]
    open(out, "w").write(hwm[0] if hwm else "0")
atexit.register(peak)
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""


def _script(name: str, *args: str, env: dict | None = None, timeout: float = 120) -> tuple[int, dict | str, str, int]:
    """Run a script as a child; (exit code, JSON object or human stdout, stderr, its own peak RSS in MiB)."""
    import tempfile

    full_env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(SCRIPTS), **(env or {})}
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        proc = subprocess.run(
            [sys.executable, "-c", MEASURED, rss.name, str(SCRIPTS / f"{name}.py"), *args],
            capture_output=True,
            text=True,
            env=full_env,
            cwd=ROOT,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        peak = int(rss.read() or 0) >> 10  # KiB -> MiB
    out: dict | str = json.loads(proc.stdout) if "--json" in args else proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert peak > 0, "the child did not report its memory"
    return proc.returncode, out, proc.stderr, peak


def _dataset(path, newline: bytes = b"\n", bom: bool = False) -> None:
    body = newline.join(json.dumps(r, ensure_ascii=False).encode() for r in ROWS) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body)


@pytest.mark.parametrize("kind", ["crlf", "bom", "crlf_bom"])
@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
def test_inspect_dataset_reads_crlf_and_bom_like_a_plain_file(tmp_path, kind, fmt):
    crlf, bom = "crlf" in kind, "bom" in kind
    path = tmp_path / f"data.{fmt}"
    nl = b"\r\n" if crlf else b"\n"
    if fmt == "jsonl":
        _dataset(path, nl, bom)
    elif fmt == "json":
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + json.dumps(ROWS, indent=1).encode().replace(b"\n", nl))
    else:
        lines = [b"question,answer"] + [f'"{r["question"]}",{r["answer"]}'.encode() for r in ROWS]
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + nl.join(lines) + nl)
    code, obj, _, _ = _script("inspect_dataset", str(path), "--json")
    assert code == 0, obj["summary"]
    assert obj["data"]["roles"]["prompt"]["column"] == "question"  # not "\ufeffquestion"
    assert obj["data"]["roles"]["answer"]["column"] == "answer"
    assert obj["data"]["source"]["malformed"]["count"] == 0


@pytest.mark.parametrize("kind", ["crlf", "bom"])
def test_check_reward_distribution_reads_crlf_and_bom_like_a_plain_file(tmp_path, kind):
    plain = efx.write_plain(tmp_path / "plain.jsonl", efx.mixed_run())
    hostile = tmp_path / "hostile.jsonl"
    data = plain.read_bytes()
    hostile.write_bytes(data.replace(b"\n", b"\r\n") if kind == "crlf" else b"\xef\xbb\xbf" + data)
    _, want, _, _ = _script("check_reward_distribution", "--results", str(plain), "--json")
    code, got, _, _ = _script("check_reward_distribution", "--results", str(hostile), "--json")
    assert code == want["exit_code"], got["summary"]
    assert got["data"]["counts"] == want["data"]["counts"]
    assert got["data"]["counts"]["malformed_lines"] == 0


def test_symlink_loop_in_a_searched_folder(tmp_path):
    run = efx.write_classic_run(tmp_path / "outputs" / "evals" / "env--model" / "abcd1234", efx.mixed_run())
    (run / "loop").symlink_to(tmp_path / "outputs")  # a folder that contains itself
    (tmp_path / "outputs" / "self").symlink_to(tmp_path / "outputs" / "self")  # a link to itself
    t0 = time.monotonic()
    code, obj, _, _ = _script("check_reward_distribution", "--search-dir", str(tmp_path / "outputs"), "--json")
    assert code in (0, 1), obj["summary"]
    assert obj["data"]["counts"]["rollouts"] == len(efx.mixed_run())
    assert time.monotonic() - t0 < 60
    data = tmp_path / "data"
    data.mkdir()
    _dataset(data / "train.jsonl")
    (data / "loop").symlink_to(data)
    code, obj, _, _ = _script("inspect_dataset", str(data), "--json")
    assert code == 0, obj["summary"]


@pytest.mark.parametrize("utf8_mode", ["default", "off"])
@pytest.mark.parametrize("json_flag", [True, False], ids=["json", "human"])
def test_lang_c(tmp_path, utf8_mode, json_flag):
    """LANG=C: Python's UTF-8 mode takes over by default; with it off (PYTHONUTF8=0) stdout is ASCII and a
    dataset's "café" was a UnicodeEncodeError traceback. The JSON escapes it; human output replaces it."""
    path = tmp_path / "data.jsonl"
    _dataset(path)
    env = {"LANG": "C", "LC_ALL": "C", **({"PYTHONUTF8": "0"} if utf8_mode == "off" else {})}
    args = [str(path), *(["--json"] if json_flag else [])]
    code, out, err, _ = _script("inspect_dataset", *args, env=env)
    assert code == 0, (out, err)
    if json_flag:
        assert "café" in json.dumps(out, ensure_ascii=False)  # the same object whatever the locale
    else:
        assert "inspect_dataset" in out and "caf" in out


@pytest.mark.slow
def test_inspect_dataset_skips_a_100_mb_row_in_flat_memory(tmp_path):
    path = tmp_path / "data.jsonl"
    lines = [json.dumps(r).encode() for r in ROWS]
    lines[5] = json.dumps({"question": "z" * 100_000_000, "answer": "1"}).encode()
    path.write_bytes(b"\n".join(lines) + b"\n")
    code, obj, _, peak = _script("inspect_dataset", str(path), "--json")
    assert code == 0, obj["summary"]
    examples = obj["data"]["source"]["malformed"]["examples"]
    assert obj["data"]["source"]["malformed"]["count"] == 1 and examples[0]["where"] == "line 6", examples
    assert peak < 200, f"peak RSS {peak} MiB for a 100 MB row: the row was held in memory"


@pytest.mark.slow
def test_inspect_dataset_on_10_million_rows_reads_only_its_sample(tmp_path):
    """Generated in big blocks (about 1 s, 440 MB of disk, removed after): the cost and memory of the
    sample do not depend on the rows that follow it."""
    path = tmp_path / "big.jsonl"
    block = b"".join(json.dumps(r).encode() + b"\n" for r in ROWS[:50]) * 2000  # 100,000 rows
    with path.open("wb") as f:
        for _ in range(100):
            f.write(block)
    try:
        t0 = time.monotonic()
        code, obj, _, peak = _script("inspect_dataset", str(path), "--json")
        seconds = time.monotonic() - t0
        assert code == 0, obj["summary"]
        assert peak < 200, f"peak RSS {peak} MiB"
        assert seconds < 60
    finally:
        path.unlink()


@pytest.mark.slow
def test_check_reward_distribution_skips_a_100_mb_row_in_flat_memory(tmp_path):
    """A 100 MB row took 544 MiB (the line, its copies, the decoded completion, the answers pass): a line
    longer than MAX_LINE_BYTES is read through unheld and counted as one malformed row, named."""
    from vlab.core.files import MAX_LINE_BYTES

    plain = efx.write_plain(tmp_path / "plain.jsonl", efx.mixed_run(50, 4))
    lines = plain.read_bytes().splitlines(keepends=True)
    row = json.loads(lines[5])
    row["completion"] = [{"role": "assistant", "content": "z" * 100_000_000 + " \\boxed{1}"}]
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"".join(lines[:5]) + json.dumps(row).encode() + b"\n" + b"".join(lines[6:]))
    _, want, _, base = _script("check_reward_distribution", "--results", str(plain), "--json")
    code, got, _, peak = _script("check_reward_distribution", "--results", str(big), "--json")
    assert code in (0, 1) and got["data"]["counts"]["malformed_lines"] == 1, got["summary"]
    assert got["data"]["counts"]["malformed_line_numbers"] == [6]
    assert got["data"]["counts"]["rollouts"] == want["data"]["counts"]["rollouts"] - 1
    bound = base + 3 * (MAX_LINE_BYTES >> 20)  # a line is held at most once whole, plus a chunk and a copy
    assert peak < bound, f"peak RSS {peak} MiB for a 100 MB row (plain file: {base} MiB, bound {bound})"


def test_a_line_longer_than_the_cap_is_one_malformed_row_in_every_reader(tmp_path, monkeypatch):
    """The column reader (a long line across its chunks), the row reader, the answers pass and the split
    into byte ranges agree: the line is counted, named and never held (a small cap stands for 32 MiB)."""
    from vlab.core import files
    from vlab.evals import answers, chunks
    from vlab.evals.columns import collect, collect_range
    from vlab.evals.read import ReadStats, iter_rows
    from vlab.evals.source import locate

    monkeypatch.setattr(files, "MAX_LINE_BYTES", 4096)
    monkeypatch.setattr(chunks, "MAX_LINE_BYTES", 4096)
    path = efx.write_classic_run(tmp_path / "run", efx.mixed_run(50, 4)) / "results.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    for i in (10, 150):
        row = json.loads(lines[i])
        row["completion"] = "y" * 20_000 + " \\boxed{3}"
        lines[i] = json.dumps(row).encode() + b"\n"
    path.write_bytes(b"".join(lines))
    source = locate(str(path))
    slow_stats = ReadStats()
    fast, fast_stats = collect_range(source, None, chunk_bytes=1024)
    slow = collect(source, slow_stats, rows=iter_rows(source, slow_stats))
    for cols, stats in ((fast, fast_stats), (slow, slow_stats)):
        assert cols.n == 198 and stats.lines == 200, (cols.n, stats.lines)
        assert stats.malformed_lines == [11, 151] and stats.too_long == 2
    assert list(fast.reward) == list(slow.reward)
    got = answers.read_answers(source)
    assert got is not None and got.rollouts == 198
    ranges = chunks.split_ranges(path, 3)
    data = path.read_bytes()
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert all(data[a - 1 : a] == b"\n" for a, _ in ranges[1:]), ranges  # each starts at a line start


def test_the_answers_pass_reads_at_most_its_row_cap(tmp_path, monkeypatch):
    """The answers pass takes read.iter_rows' rows, capped: its cost does not grow with the file."""
    from vlab.evals import answers
    from vlab.evals.source import locate

    monkeypatch.setattr(answers, "MAX_ROWS", 40)
    source = locate(str(efx.write_classic_run(tmp_path / "run", efx.mixed_run(50, 4)) / "results.jsonl"))
    got = answers.read_answers(source)
    assert got is not None and got.rollouts <= 40 and got.examples <= 10
    v1 = locate(str(efx.write_v1_run(tmp_path / "v1", efx.mixed_run(50, 4))))
    got = answers.read_answers(v1)
    assert got is not None and got.rollouts <= 40


EVAL_ROW = (
    '{{"example_id": {e}, "prompt": [{{"role": "user", "content": "What is {e} + 2?"}}], "completion": [{{"role": '
    '"assistant", "content": "<answer>{a}</answer>"}}], "answer": "{g}", "reward": {r}, "error": null, '
    '"is_completed": true, "is_truncated": false, "metrics": {{"correct_answer": {c}, "format_reward_func": 1.0}}, '
    '"correct_answer": {c}, "format_reward_func": 1.0}}\n'
)
# What check_reward_distribution holds a rollout at its peak (vlab/evals/columns.py, analysis.py, stats.py): its
# columns (4 bytes example id, 4 prompt, 8 reward, 8 row key, 4 completion length, 3 flags, 1 a score or metric while
# it has at most 256 distinct values: 33 here) and the analysis' working copies of one column at a time (a decoded
# score and numpy's std copy of it, 16; masks, 1 each), with room for the arrays' growth and the heap's slack.
# Measured: 250,000 -> 1,000,000 of these rows grew the peak by 44 MB (59 bytes a row); before, by 106 MB (148).
BYTES_PER_ROLLOUT = 80


def _eval_rows(path, rows: int) -> None:
    """Generated 10,000 rows at a time: 4 rollouts an example, two of three solved."""
    with path.open("w") as f:
        for s in range(0, rows, 10_000):
            f.write(
                "".join(
                    EVAL_ROW.format(
                        e=i // 4, a=i // 4 + 2 + (i % 3 == 0), g=i // 4 + 2, c=float(i % 3 != 0), r=i % 3 and 1.2 or 0.2
                    )
                    for i in range(s, min(rows, s + 10_000))
                )
            )


@pytest.mark.slow
def test_check_reward_distribution_memory_grows_within_its_per_rollout_budget(tmp_path):
    """N and 4N rollouts under the row budget (about 9 s): the peak grows by at most BYTES_PER_ROLLOUT a rollout,
    so the default budget's 1,000,000 rollouts hold at most 80 MB over the fixed part; past it the peak is flat
    (the next test)."""
    n = 250_000
    peaks = {}
    for rows in (n, 4 * n):
        path = tmp_path / f"rows{rows}.jsonl"
        _eval_rows(path, rows)
        code, obj, _, peaks[rows] = _script("check_reward_distribution", "--results", str(path), "--json")
        path.unlink()
        assert code == 0 and obj["data"]["counts"]["rollouts"] == rows, obj["summary"]
        assert obj["data"]["groups"]["examples"] == rows // 4 and obj["data"]["solve_rate"] == 0.6667
    growth = peaks[4 * n] - peaks[n]
    bound = (3 * n * BYTES_PER_ROLLOUT) >> 20
    assert growth < bound, f"peak RSS {peaks[n]} MiB for {n} rows, {peaks[4 * n]} MiB for {4 * n}: over {bound} MiB"


# Past --max-rollouts-in-memory the columns hold a sample of whole examples and every row read is tallied
# (vlab/evals/sampling.py, tally.py): what the tool holds no longer grows with the file. What may still differ
# between N and 4N rows: the reading processes' parts (PART_BYTES, two a worker ahead), allocator slack.
FLAT_SLACK_MIB = 16


@pytest.mark.slow
def test_check_reward_distribution_memory_is_flat_past_its_row_budget(tmp_path):
    """N and 4N rollouts (about 9 s) with a budget of N/10: the peak grows by less than the budget's own rows
    (its share of BYTES_PER_ROLLOUT) and a fixed slack; every count stays exact (10 million rows with the
    default budget: 147 MB in the parent, 248 MB with its readers; 648 MB before)."""
    n, budget = 250_000, 25_000
    peaks = {}
    for rows in (n, 4 * n):
        path = tmp_path / f"rows{rows}.jsonl"
        _eval_rows(path, rows)
        code, obj, _, peaks[rows] = _script(
            "check_reward_distribution", "--results", str(path), "--json", "--max-rollouts-in-memory", str(budget)
        )
        path.unlink()
        data = obj["data"]
        assert code == 0 and data["counts"]["rollouts"] == rows, obj["summary"]
        assert data["sample"]["rollouts_read"] == rows and data["sample"]["rollouts_kept"] <= budget
        assert data["counts"]["examples"] == rows // 4 and data["solve_rate"] == 0.6667
        assert data["groups"]["rollouts_per_example"] == {"min": 4, "max": 4, "most_common": 4}
    growth = peaks[4 * n] - peaks[n]
    bound = ((budget * BYTES_PER_ROLLOUT) >> 20) + FLAT_SLACK_MIB
    assert growth < bound, f"peak RSS {peaks[n]} MiB for {n} rows, {peaks[4 * n]} MiB for {4 * n}: over {bound} MiB"
