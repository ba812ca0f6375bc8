"""File faults: bad bytes, deep nesting, cut or foreign files, in every reader (issue 14, point 7).

A file that cannot be read at all is bad input (exit 2, with the place); a few bad rows
among good ones are counted, reported and the rest judged. Run in-process for speed.
"""

from __future__ import annotations

import json
import time

import dataset_fixtures as dfx
import evalfile_fixtures as efx
import pytest
from conftest import call_script

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

DEEP = b"[" * 200_000 + b"]" * 200_000
SECRET = "hf_plantedPLANTEDplanted0123456789"

# Damage added to a file of good rows: the good rows are still judged (exit 0/1, not 2).
ROW_DAMAGE = {
    "invalid_utf8_row": b'{"reward": 1.0, "x": "\xff\xfe"}\n',
    "deeply_nested_row": DEEP + b"\n",
    "deeply_nested_object_row": b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n",
    "cut_last_row": b'{"example_id": 1, "rew',
    "not_an_object_row": b"[1, 2, 3]\n",
    "nul_bytes_row": b"\x00\x00\x00\n",
    "secret_in_bad_row": f'{{"token": "{SECRET}", broken\n'.encode(),
}

# Whole files that are not readable input: exit 2.
WHOLE_FILE = {
    "all_invalid_utf8": b"\xff\xfe\xfd\n" * 20,
    "only_deep_nesting": DEEP + b"\n",
    "binary_garbage": bytes(range(256)) * 40,
    "empty": b"",
    "only_blank_lines": b"\n\n\n",
}


def _call(capsys, script: str, *argv: str) -> tuple[int, dict, str]:
    code, obj, err = call_script(capsys, script, *argv)
    assert SECRET not in json.dumps(obj) and SECRET not in err
    return code, obj, err


@pytest.mark.parametrize("damage", sorted(ROW_DAMAGE))
def test_check_reward_distribution_judges_the_good_rows(tmp_path, capsys, damage):
    path = efx.write_plain(tmp_path / "r.jsonl", efx.mixed_run())
    path.write_bytes(path.read_bytes() + ROW_DAMAGE[damage])
    t0 = time.monotonic()
    code, obj, _ = _call(capsys, "check_reward_distribution", "--results", str(path))
    assert code in (0, 1), obj["summary"]
    if damage != "invalid_utf8_row":  # bad bytes in a field no check reads leave the row usable
        assert any(c["id"] == "input" and c["status"] == "warn" and "skipped" in c["message"] for c in obj["checks"])
    assert time.monotonic() - t0 < 20


@pytest.mark.parametrize("fault", sorted(WHOLE_FILE))
def test_check_reward_distribution_unreadable_file_exit_2(tmp_path, capsys, fault):
    path = tmp_path / "results.jsonl"
    path.write_bytes(WHOLE_FILE[fault])
    code, obj, _ = _call(capsys, "check_reward_distribution", "--results", str(path))
    assert code == 2, obj
    assert obj["status"] == "error"


@pytest.mark.parametrize("damage", sorted(ROW_DAMAGE))
def test_inspect_dataset_names_a_bad_row_by_file_and_line(tmp_path, capsys, damage):
    """A training data file is read whole by its loader, which stops at the first line that is no JSON object:
    such a row is bad input, exit 2 naming FILE:LINE (issue 38; it was counted, skipped and exit 0)."""
    path = dfx.make_gsm8k_jsonl(tmp_path)
    path.write_bytes(path.read_bytes() + ROW_DAMAGE[damage])
    code, obj, _ = _call(capsys, "inspect_dataset", str(path))
    assert code == 2, obj["summary"]
    assert "gsm8k.jsonl:41: not " in obj["summary"], obj["summary"]  # the row after the 40 good ones


@pytest.mark.parametrize("fault", sorted(WHOLE_FILE))
def test_inspect_dataset_unreadable_file_exit_2(tmp_path, capsys, fault):
    path = tmp_path / "data.jsonl"
    path.write_bytes(WHOLE_FILE[fault])
    code, obj, _ = _call(capsys, "inspect_dataset", str(path))
    assert code == 2, obj


@pytest.mark.parametrize("fault", ["all_invalid_utf8", "only_deep_nesting", "binary_garbage", "deeply_nested_json"])
def test_inspect_dataset_json_file_exit_2(tmp_path, capsys, fault):
    path = tmp_path / "data.json"
    path.write_bytes(DEEP if fault == "deeply_nested_json" else WHOLE_FILE[fault])
    code, obj, _ = _call(capsys, "inspect_dataset", str(path))
    assert code == 2, obj


@pytest.mark.parametrize("fault", ["invalid_utf8_row", "deeply_nested_row", "not_an_object_row"])
def test_reward_files_bad_line_exit_2_with_place(tmp_path, fault):
    from vlab.core.result import UsageError
    from vlab.reward.files import read_jsonl

    path = tmp_path / "completions.jsonl"
    path.write_bytes(b'{"example_id": 0, "completion": "x"}\n' + ROW_DAMAGE[fault])
    with pytest.raises(UsageError) as err:
        read_jsonl(str(path), "completions")
    assert f"{path}:2" in err.value.message


def test_string_and_integer_example_ids_are_one_group(tmp_path, capsys):
    rows = [{"example_id": 1 if i % 2 else "1", "reward": float(i % 2), "completion": "x"} for i in range(8)]
    rows += [{"example_id": 2, "reward": 1.0, "completion": "y"} for _ in range(8)]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, obj, _ = _call(capsys, "check_reward_distribution", "--results", str(path), "--min-rollouts", "2")
    assert code in (0, 1)
    assert obj["data"]["counts"]["examples"] == 2, obj["data"]["counts"]


def test_same_column_as_prompt_and_answer_exit_2(tmp_path, capsys):
    path = dfx.make_gsm8k_jsonl(tmp_path)
    code, obj, _ = _call(
        capsys, "inspect_dataset", str(path), "--prompt-column", "question", "--answer-column", "question"
    )
    assert code == 2 and "both" in obj["summary"]


@pytest.mark.parametrize("name", ["numpy", "requests", "pydantic", "transformers", "datasets", "torch", "verifiers"])
def test_new_env_refuses_names_that_shadow_packages(tmp_path, capsys, name, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, obj, _ = _call(capsys, "new_env", name, "--template", "single-turn-qa")
    assert code == 2 and "shadows" in obj["summary"]
    assert not any(tmp_path.iterdir())
