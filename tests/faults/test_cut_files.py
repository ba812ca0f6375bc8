"""Files cut short or with one undecodable row (issue 27): the documented rule, both ways.

- one invalid UTF-8 line among 200 eval rows is a malformed row: skipped and named (under the
  ``max_malformed`` share), the rest judged;
- a JSON array that is never closed and a gzip file cut in the middle are unreadable input: exit 2
  with one line that says where the file ends, in inspect_dataset, check_reward_distribution and
  test_reward (which must not blame the environment's loading code for the user's file).

Run in-process where the script allows it (milliseconds); test_reward starts its worker.
"""

from __future__ import annotations

import gzip
import json
import time

import dataset_fixtures as dfx
import env_fixtures as fx
import evalfile_fixtures as efx
import pytest
from conftest import call_script, run_script

from vlab.evals.verdicts import Thresholds

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once


_call = call_script


def _eval_rows(n: int = 200) -> list[bytes]:
    rolls = efx.mixed_run(n // 4, 4)
    return [json.dumps(efx.classic_row(r, None)).encode() for r in rolls]


@pytest.mark.parametrize("where", ["completion", "whole_line"])
def test_one_invalid_utf8_row_among_200_is_skipped_and_named(tmp_path, capsys, where):
    assert 1 / 200 <= Thresholds().max_malformed  # one bad row is under the documented share
    lines = _eval_rows(200)
    bad = 57
    if where == "whole_line":
        lines[bad] = b"\xff\xfe\xfd garbage"
    else:
        row = json.loads(lines[bad])
        row["completion"][0]["content"] = "MARK"
        lines[bad] = json.dumps(row).encode().replace(b"MARK", b"caf\xe9 \xff")  # latin-1 bytes in a read field
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "results.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    t0 = time.monotonic()
    code, obj, _ = _call(capsys, "check_reward_distribution", "--results", str(folder))
    assert code in (0, 1), obj["summary"]
    inp = next(c for c in obj["checks"] if c["id"] == "input")
    assert inp["status"] == "warn" and "skipped 1 malformed line(s)" in inp["message"], inp
    assert f"lines {bad + 1}" in inp["message"], inp  # named: the file's line number
    assert obj["data"]["counts"]["rollouts"] == 199
    assert time.monotonic() - t0 < 20


def _json_array(tmp_path, rows: int, cut: float, gz: bool = False):
    data = [{"question": f"What is {i} + 1?", "answer": str(i + 1)} for i in range(rows)]
    text = json.dumps(data).encode()
    body = text[: int(len(text) * cut)]
    path = tmp_path / ("data.json.gz" if gz else "data.json")
    path.write_bytes(gzip.compress(body) if gz else body)
    return path, len(body)


@pytest.mark.parametrize(
    "rows,gz",
    [(50, False), (5000, False), (50, True)],
    ids=["cut_inside_the_sample", "cut_past_the_sample", "gzip_json_cut_inside_the_sample"],
)
def test_inspect_dataset_json_array_cut_short_is_exit_2(tmp_path, capsys, rows, gz):
    """It passed with exit 0 (the bad record only in data.source.malformed)."""
    path, size = _json_array(tmp_path, rows, 0.5, gz)
    code, obj, err = _call(capsys, "inspect_dataset", str(path))
    assert code == 2, obj["summary"]
    assert "cut short" in obj["summary"] and path.name in obj["summary"]
    assert "ends at byte" in obj["summary"]
    if not gz:
        assert f"byte {size}" in obj["summary"]
    assert len(err.strip().splitlines()) <= 2


def test_inspect_dataset_whole_json_array_still_reads(tmp_path, capsys):
    path, _ = _json_array(tmp_path, 50, 1.0)
    code, obj, _ = _call(capsys, "inspect_dataset", str(path))
    assert code == 0, obj["summary"]


def _cut_gzip(path, keep: float = 0.5):
    data = gzip.compress(path.read_bytes())
    out = path.with_name(path.name + ".gz")
    out.write_bytes(data[: int(len(data) * keep)])
    path.unlink()
    return out


def test_inspect_dataset_cut_gzip_is_exit_2(tmp_path, capsys):
    """It was exit 1 "internal error: EOFError, report it"."""
    path = _cut_gzip(dfx.make_gsm8k_jsonl(tmp_path))
    code, obj, _ = _call(capsys, "inspect_dataset", str(path), "--sample", "10000")
    assert code == 2, obj["summary"]
    assert "cut short" in obj["summary"] and f"ends at byte {path.stat().st_size}" in obj["summary"]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_inspect_dataset_gzip_cut_past_the_sample_is_exit_2(tmp_path, capsys, fmt):
    """A large .gz cut far past the rows inspect samples passed with exit 0: the sample alone never reached
    the cut. The whole stream is decompressed (unparsed) to its end, so the cut is seen wherever it lies."""
    rows = [{"question": f"What is {i} + 1? " + "x" * 40, "answer": str(i + 1)} for i in range(40_000)]
    if fmt == "jsonl":
        body = b"".join(json.dumps(r).encode() + b"\n" for r in rows)
    else:
        body = b"question,answer\n" + b"".join(f"{r['question']},{r['answer']}\n".encode() for r in rows)
    data = gzip.compress(body)
    path = tmp_path / f"data.{fmt}.gz"
    path.write_bytes(data[: int(len(data) * 0.9)])  # the first 90%: thousands of rows past a --sample of 50
    code, obj, err = _call(capsys, "inspect_dataset", str(path), "--sample", "50")
    assert code == 2, obj["summary"]
    assert "cut short" in obj["summary"] and f"ends at byte {path.stat().st_size}" in obj["summary"]
    assert len(err.strip().splitlines()) <= 2
    whole = tmp_path / f"whole.{fmt}.gz"
    whole.write_bytes(data)
    code, obj, _ = _call(capsys, "inspect_dataset", str(whole), "--sample", "50")
    assert code == 0, obj["summary"]


def test_gzip_cut_sees_every_member_and_its_trailer(tmp_path):
    """Multi-member files (cat a.gz b.gz) and zero padding are whole; a bad CRC or a cut second member is not."""
    from vlab.core.files import gzip_cut

    one, two = gzip.compress(b"a\n" * 1000), gzip.compress(b"b\n" * 1000)
    cases = {
        "members": (one + two, None),
        "padded": (one + b"\x00" * 512, None),
        "second_cut": (one + two[:-4], "cut short"),
        "bad_crc": (one[:-8] + bytes([one[-8] ^ 0xFF]) + one[-7:], "not readable gzip"),
        "junk_after": (one + b"junk at the end", "not readable gzip"),
    }
    for name, (data, want) in cases.items():
        path = tmp_path / f"{name}.jsonl.gz"
        path.write_bytes(data)
        got = gzip_cut(path, chunk=256)  # small chunks: members and trailers across chunk boundaries
        if want is None:
            assert got is None, (name, got)
        else:
            assert got is not None and want in str(got), (name, got)


def test_check_reward_distribution_cut_gzip_is_exit_2(tmp_path, capsys):
    folder = efx.write_classic_run(tmp_path / "run", efx.mixed_run(40, 4))
    path = _cut_gzip(folder / "results.jsonl")
    code, obj, _ = _call(capsys, "check_reward_distribution", "--results", str(path))
    assert code == 2, obj["summary"]
    assert "cut short" in obj["summary"] and path.name in obj["summary"]


def test_corrupt_gzip_is_exit_2(tmp_path, capsys):
    path = dfx.make_gsm8k_jsonl(tmp_path)
    data = bytearray(gzip.compress(path.read_bytes()))
    data[20:60] = b"\x00" * 40  # damaged in the middle, whole length
    gz = path.with_name(path.name + ".gz")
    gz.write_bytes(bytes(data))
    code, obj, _ = _call(capsys, "inspect_dataset", str(gz))
    assert code == 2, obj["summary"]
    assert gz.name in obj["summary"]


@pytest.mark.classic
@pytest.mark.parametrize("kind", ["gzip", "json_array"])
def test_test_reward_names_the_cut_file_not_the_loading_code(tmp_path, kind):
    """test_reward said "load_environment raised EOFError" with the hint to fix the loading code."""
    data = fx.write_dataset(tmp_path, fx.ROWS)
    if kind == "gzip":
        path = _cut_gzip(data, 0.6)
    else:
        path = tmp_path / "data.json"
        text = json.dumps(fx.ROWS)
        path.write_text(text[: len(text) // 2])
        data.unlink()
    env = fx.classic_env(tmp_path, "cut_env", fx.EXACT, "vf.Rubric(funcs=[exact_match])")
    run = run_script("test_reward", str(env), "--env-args", json.dumps({"dataset_path": str(path)}), "--json")
    obj = run.json
    assert run.returncode == 2 == obj["exit_code"], (obj["summary"], run.stderr[-2000:])
    # named as inspect_dataset names it (issue 38: one message for a bad data file, the file and where it ends)
    assert "cut short" in obj["summary"] and path.name in obj["summary"], obj["summary"]
    assert "loading code" not in json.dumps(obj)


def test_data_file_damage_leaves_whole_files_and_non_paths_alone(tmp_path):
    from vlab.env.locate import data_file_damage

    whole = fx.write_dataset(tmp_path, fx.ROWS)
    gz = tmp_path / "whole.jsonl.gz"
    gz.write_bytes(gzip.compress(whole.read_bytes()))
    args = {"dataset_path": str(whole), "other": str(gz), "n": 3, "name": "gsm8k", "folder": str(tmp_path)}
    assert data_file_damage(args) is None
    cut = _cut_gzip(whole)
    err = data_file_damage({"dataset_path": str(cut)})
    assert err is not None and err.exit_code == 2 and "dataset_path" in err.message


@pytest.mark.v1
def test_test_reward_names_the_cut_file_v1(tmp_path):
    path = _cut_gzip(fx.write_dataset(tmp_path, fx.ROWS), 0.6)
    env = fx.v1_env(tmp_path, "cut_v1", fx.V1_CORRECT)
    run = run_script("test_reward", str(env), "--env-args", json.dumps({"dataset_path": str(path)}), "--json")
    obj = run.json
    assert run.returncode == 2 == obj["exit_code"], (obj["summary"], run.stderr[-2000:])
    assert "cut short" in obj["summary"] and path.name in obj["summary"]
