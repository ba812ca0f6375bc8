"""A JSON Lines data file with a line no loader reads, named the same way by every tool (issue 38): exit 2,
``FILE:LINE: not valid JSON (...)`` (``vlab.core.jsonl``). A truncated file passed inspect_dataset with exit 0 and a
warning, then failed test_reward with exit 1 and a DatasetGenerationError naming no file and no line."""

from __future__ import annotations

import gzip
import json

import dataset_fixtures as fx
import pytest
from conftest import assert_result, call_script, run_script

from vlab.core import jsonl
from vlab.core.result import UsageError

ROWS = fx.gsm8k_rows(400)


def _write(path, rows=ROWS, tail: bytes = b"", bad_at: int | None = None):
    lines = [json.dumps(r).encode() for r in rows]
    if bad_at is not None:
        lines[bad_at - 1] = b'{"question": "x", broken'
    path.write_bytes(b"\n".join(lines) + b"\n" + tail)
    return path


def _cut(path):
    """400 good rows, then the first 30 bytes of a 401st: a download that stopped."""
    return _write(path, tail=json.dumps(ROWS[0]).encode()[:30])


CUT = "401: not valid JSON (Unterminated string starting at column 14); the file ends inside this line: it is cut short"


# -- the helper ----------------------------------------------------------------------------------------------


@pytest.mark.once
def test_check_jsonl_names_the_file_and_line(tmp_path):
    good = _write(tmp_path / "good.jsonl", tail=b"\n  \n")  # blank lines are no rows: datasets skips them too
    jsonl.check_jsonl(good)
    with pytest.raises(UsageError) as err:
        jsonl.check_jsonl(_write(tmp_path / "mid.jsonl", bad_at=250))
    assert (
        err.value.message == f"{tmp_path / 'mid.jsonl'}:250: not valid JSON (Expecting property name enclosed in "
        "double quotes at column 19)"
    )
    assert err.value.hint.startswith("fix or remove line 250 (")
    with pytest.raises(UsageError) as err:
        jsonl.check_jsonl(_cut(tmp_path / "cut.jsonl"))
    assert err.value.message == f"{tmp_path / 'cut.jsonl'}:{CUT}"
    assert err.value.hint.startswith("write or download the file again")


@pytest.mark.once
def test_check_jsonl_bounded_still_sees_a_cut_at_the_end(tmp_path):
    """Past ``whole_up_to`` bytes only the last line is read (constant cost); its number is counted when bad."""
    mid = _write(tmp_path / "mid.jsonl", bad_at=250)
    jsonl.check_jsonl(mid, whole_up_to=1000)  # a bad line past the bound, not at the end: not looked at
    with pytest.raises(UsageError) as err:
        jsonl.check_jsonl(_cut(tmp_path / "cut.jsonl"), whole_up_to=1000)
    assert err.value.message.endswith(f"cut.jsonl:{CUT}")


@pytest.mark.once
@pytest.mark.parametrize("form", ["gzip", "crlf_bom", "array_line", "json_suffix"])
def test_check_jsonl_forms(tmp_path, form):
    if form == "gzip":
        path = tmp_path / "rows.jsonl.gz"
        path.write_bytes(gzip.compress(_write(tmp_path / "rows.jsonl", bad_at=7).read_bytes()))
        want = "rows.jsonl.gz:7: not valid JSON"
    elif form == "crlf_bom":  # a BOM and CRLF line ends are read as datasets reads them: no problem
        path = tmp_path / "rows.jsonl"
        path.write_bytes(b"\xef\xbb\xbf" + _write(path, ROWS[:20]).read_bytes().replace(b"\n", b"\r\n"))
        want = None
    elif form == "array_line":
        path = _write(tmp_path / "rows.jsonl", ROWS[:20], tail=b"[1, 2]\n")
        want = "rows.jsonl:21: not a JSON object (a JSON array; each line must be one object)"
    else:  # a .json file of one object a line is JSON Lines to datasets too
        path = _write(tmp_path / "rows.json", ROWS[:20], tail=b'{"a": \n')
        want = "rows.json:21: not valid JSON"
    assert jsonl.is_jsonl(path)
    if want is None:
        jsonl.check_jsonl(path)
        return
    with pytest.raises(UsageError) as err:
        jsonl.check_jsonl(path)
    assert want in err.value.message


@pytest.mark.once
def test_parse_line_reads_what_json_reads_and_says_why_as_json_does():
    """msgspec reads the common line; what it refuses json.loads reads (NaN, a lone surrogate, a BOM on the first
    line) or names (bad UTF-8, a JSON array, a cut object, nesting too deep to read), as before."""
    row = {"q": "é ✓", "n": 12345678901234567890123, "x": 1.5e-7, "l": [1, {"a": None}]}
    assert jsonl.parse_line(json.dumps(row).encode() + b"\r\n") == (row, None)
    assert jsonl.parse_line(b'{"a": 1, "a": 2}') == ({"a": 2}, None)
    assert jsonl.parse_line(b'{"a": NaN}')[0]["a"] != jsonl.parse_line(b'{"a": NaN}')[0]["a"]  # NaN, as json reads
    assert jsonl.parse_line(b'{"a": "\\ud800"}') == ({"a": "\ud800"}, None)
    assert jsonl.parse_line(b'\xef\xbb\xbf{"a": 1}', first=True) == ({"a": 1}, None)
    assert jsonl.parse_line(b"  \n") == (None, None)
    assert jsonl.parse_line(b'{"a": "\xff"}')[1] == "not UTF-8 (byte 0xff at offset 7)"
    assert jsonl.parse_line(b"[1, 2]")[1] == "not a JSON object (a JSON array; each line must be one object)"
    assert jsonl.parse_line(b'{"a": "b')[1] == "not valid JSON (Unterminated string starting at column 7)"
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000  # msgspec raises RecursionError here, as json does
    assert jsonl.parse_line(deep)[1] == "not valid JSON (nested too deeply to read)"


# -- inspect_dataset -----------------------------------------------------------------------------------------


def _inspect(capsys, *argv: str) -> dict:
    return call_script(capsys, "inspect_dataset", *argv)[1]


@pytest.mark.once
def test_inspect_a_file_cut_past_its_sample_is_exit_2(tmp_path, capsys):
    """It read the first 50 rows, warned, and exited 0."""
    path = _cut(tmp_path / "train.jsonl")
    obj = assert_result(_inspect(capsys, str(path), "--sample", "50"), "inspect_dataset", 2)
    assert obj["summary"] == f"{path}:{CUT}"
    assert obj["next_steps"][0].startswith("write or download the file again")


@pytest.mark.once
def test_inspect_a_bad_line_in_a_later_file_of_the_split(tmp_path, capsys):
    """A folder's split of several files: the sample fills from the first; the loader reads the second too."""
    folder = tmp_path / "data"
    folder.mkdir()
    _write(folder / "train-00000-of-00002.jsonl", ROWS[:200])
    second = _write(folder / "train-00001-of-00002.jsonl", ROWS[200:], bad_at=3)
    obj = assert_result(_inspect(capsys, str(folder), "--sample", "50"), "inspect_dataset", 2)
    assert obj["summary"].startswith(f"{second}:3: not valid JSON")


# -- test_reward: the same message, before the environment loads ---------------------------------------------


@pytest.fixture
def env_with_data(tmp_path):
    made = run_script("new_env", "cut-env", "--template", "v1-numeric", "--path", str(tmp_path), "--json")
    assert made.returncode == 0, made
    (tmp_path / "cut_env" / "data").mkdir()
    return tmp_path / "cut_env"


def test_test_reward_names_a_cut_data_file_like_inspect(env_with_data, capsys):
    """The file named by --env-args dataset_path, found in the package's data/ folder as the template finds it:
    exit 2 with inspect_dataset's own message (it was exit 1, 'raised DatasetGenerationError')."""
    data = _cut(env_with_data / "data" / "train.jsonl")
    inspected = _inspect(capsys, str(data))
    probed = run_script(
        "test_reward", str(env_with_data), "--env-args", json.dumps({"dataset_path": "train.jsonl"}), "--json"
    )
    obj = assert_result(probed.json, "test_reward", 2)
    assert obj["summary"] == inspected["summary"] == f"{data}:{CUT}"
    assert obj["next_steps"] == inspected["next_steps"]
    assert "DatasetGenerationError" not in probed.stdout + probed.stderr and "Traceback" not in probed.stderr


def test_test_reward_names_a_bad_middle_line(env_with_data, tmp_path):
    data = _write(tmp_path / "elsewhere.jsonl", bad_at=123)
    probed = run_script(
        "test_reward", str(env_with_data), "--env-args", json.dumps({"dataset_path": str(data)}), "--json"
    )
    obj = assert_result(probed.json, "test_reward", 2)
    assert (
        obj["summary"] == f"{data}:123: not valid JSON (Expecting property name enclosed in double quotes at column 19)"
    )
