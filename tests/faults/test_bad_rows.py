"""The eval readers' bad-row threshold, both sides (issue 14, files): up to ``max_malformed`` of the
lines unreadable and up to ``max_bad_rewards`` of the rows without a numeric reward are counted,
shown with examples and skipped, and the rest is judged; one more and the verdict is refused (exit 2).
The numbers live in ``vlab.evals.verdicts.Thresholds``; the references quote them."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SKILL_ROOT, assert_result, run_script
from evalfile_fixtures import classic_row, mixed_run, write_classic_run

from vlab.evals.verdicts import Thresholds

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TOOL = "check_reward_distribution"
LINES = 100


def _run(folder, *flags):
    r = run_script(TOOL, "--results", str(folder), "--json", *flags)
    return assert_result(r.json, TOOL, r.returncode)


def _with_bad_lines(tmp_path, bad: int):
    folder = write_classic_run(tmp_path / f"run{bad}", mixed_run(LINES // 4, 4))
    results = folder / "results.jsonl"
    good = results.read_text().splitlines()
    assert len(good) == LINES
    # the bad lines replace good ones: the file keeps LINES lines, `bad` of them unreadable
    lines = good[: LINES - bad] + ["{not json", b"\xff\xfe".decode("latin-1"), "[1, 2]"] * (bad // 3)
    lines += ["garbage"] * (LINES - len(lines))
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _with_bad_rewards(tmp_path, bad: int):
    rolls = mixed_run(LINES // 4, 4)
    folder = tmp_path / f"rewards{bad}"
    folder.mkdir()
    with (folder / "results.jsonl").open("w") as f:
        for i, r in enumerate(rolls):
            row = classic_row(r, 1.0 if r.correct else 0.0)
            if i >= LINES - bad and i % 2:
                row["reward"] = "n/a"
            elif i >= LINES - bad:
                del row["reward"]  # missing (a null reward is a broken function: judged, not skipped)
            f.write(json.dumps(row) + "\n")
    return folder


def test_threshold_values():
    t = Thresholds()
    assert int(t.max_malformed * LINES) >= 1 and int(t.max_bad_rewards * LINES) >= 1  # the cases below are meaningful


@pytest.mark.parametrize("side", ["at", "above"])
def test_malformed_lines_at_and_above_the_threshold(tmp_path, side):
    at = round(Thresholds().max_malformed * LINES)
    obj = _run(_with_bad_lines(tmp_path, at if side == "at" else at + 1))
    if side == "at":
        assert obj["exit_code"] != 2, obj["summary"]
        inp = next(c for c in obj["checks"] if c["id"] == "input")
        assert inp["status"] == "warn" and f"skipped {at} malformed line(s)" in inp["message"]
        assert obj["data"]["counts"]["rollouts"] == LINES - at  # the rest is judged
    else:
        assert obj["exit_code"] == 2 and f"{at + 1} of {LINES} lines are not valid JSON" in obj["summary"]


@pytest.mark.parametrize("side", ["at", "above"])
def test_rows_without_a_reward_at_and_above_the_threshold(tmp_path, side):
    at = round(Thresholds().max_bad_rewards * LINES)
    obj = _run(_with_bad_rewards(tmp_path, at if side == "at" else at + 1))
    if side == "at":
        assert obj["exit_code"] != 2, obj["summary"]
        inp = next(c for c in obj["checks"] if c["id"] == "input")
        assert f"skipped {at} row(s) without a numeric reward" in inp["message"]
    else:
        assert obj["exit_code"] == 2 and "rewards unusable" in obj["summary"]


def test_the_thresholds_are_options(tmp_path):
    at = round(Thresholds().max_malformed * LINES)
    folder = _with_bad_lines(tmp_path, at + 1)
    assert _run(folder, "--max-malformed", "0.2")["exit_code"] != 2  # raised: accepted
    assert _run(folder, "--max-malformed", "0")["exit_code"] == 2
    rewards = _with_bad_rewards(tmp_path, at + 1)
    assert _run(rewards, "--max-bad-rewards", "0.2")["exit_code"] != 2


def test_references_quote_the_thresholds_from_their_one_home():
    t = Thresholds()
    for ref in ("evaluation-guide.md", "script-contract.md"):
        text = " ".join((SKILL_ROOT / "references" / ref).read_text().split())
        m = re.search(r"up to (\d+)% of the lines unreadable and (\d+)% of the rows without a numeric reward", text)
        assert m, f"{ref} states the bad-row threshold"
        assert (int(m.group(1)) / 100, int(m.group(2)) / 100) == (t.max_malformed, t.max_bad_rewards)
