"""check_reward_distribution: every eval shape (generated and real), every verdict, every bad input."""

from __future__ import annotations

import importlib
import json
import math
import os
import shutil

import numpy as np
import pytest
from conftest import assert_result, run_script
from evalfile_fixtures import (
    Roll,
    classic_row,
    mixed_run,
    write_classic_run,
    write_legacy_run,
    write_plain,
    write_v1_run,
    write_v1_validate,
)

from vlab.evals import batches, chunks, read, v1batches
from vlab.evals.columns import Columns, collect, collect_range
from vlab.evals.read import ReadStats, iter_rows
from vlab.evals.source import CLASSIC, CLASSIC_2025, PLAIN, V1_TRACES, V1_VALIDATE, locate

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TOOL = "check_reward_distribution"
script = importlib.import_module(TOOL)


def check_tool(capsys, *args: str) -> dict:
    """Run the script in-process with --json; return its validated result object."""
    code = script.main([*map(str, args), "--json"])
    out = capsys.readouterr().out
    obj = json.loads(out)  # exactly one object on stdout
    assert_result(obj, TOOL, code)
    return obj


def status(obj: dict, check_id: str) -> str:
    return next(c["status"] for c in obj["checks"] if c["id"] == check_id)


def rec(obj: dict, key: str) -> dict | None:
    return next((r for r in obj["data"]["recommendations"] if r["key"] == key), None)


# -- healthy runs in every shape -----------------------------------------------------


@pytest.mark.parametrize("writer", ["classic031", "legacy2025", "v1traces"])
def test_healthy_run_is_worth_training_in_every_shape(tmp_path, capsys, writer):
    rolls = mixed_run(40, 4)
    if writer == "classic031":
        folder, shape = write_classic_run(tmp_path / "run", rolls), CLASSIC
    elif writer == "legacy2025":
        folder, shape = write_legacy_run(tmp_path / "run", rolls), CLASSIC_2025
    else:
        folder, shape = write_v1_run(tmp_path / "run", rolls), V1_TRACES
    obj = check_tool(capsys, "--results", folder)
    d = obj["data"]
    assert obj["exit_code"] == 0 and obj["summary"] == "worth starting training", obj["checks"]
    assert d["shape"] == shape
    assert d["counts"]["rollouts"] == 160 and d["counts"]["examples"] == 40
    assert d["groups"]["rollouts_per_example"] == {"min": 4, "max": 4, "most_common": 4}
    # the figures agree with a direct computation from the rolls
    rewards = [r.reward for r in rolls]
    assert d["reward"]["mean"] == pytest.approx(sum(rewards) / len(rewards), abs=1e-4)
    assert d["solve_rate"] == pytest.approx(sum(r.correct for r in rolls) / len(rolls), abs=1e-4)
    assert d["correctness_function"] in ("correct_answer", "correct_answer_reward_func", "correct")
    fmt = next(n for n in d["functions"] if "format" in n)
    assert d["functions"][fmt]["kind"] == "format"
    assert d["groups"]["nonzero_advantage_share"] > 0.4
    gs = rec(obj, "orchestrator.group_size")["value"]
    assert gs in (4, 8, 16, 32) and rec(obj, "orchestrator.batch_size")["value"] % gs == 0
    assert rec(obj, "orchestrator.group_size")["older"] == "rollouts_per_example"
    if writer == "legacy2025":  # ids were numbered row // rollouts over rollout-major rows
        assert d["grouping"].startswith("prompt")


def test_weights_inferred_for_classic_and_read_for_v1(tmp_path, capsys):
    rolls = mixed_run(20, 4)
    classic = check_tool(capsys, "--results", write_classic_run(tmp_path / "c", rolls))["data"]
    assert classic["functions"]["correct_answer"]["weight"] == pytest.approx(1.0)
    v1 = check_tool(capsys, "--results", write_v1_run(tmp_path / "v", rolls))["data"]
    assert v1["functions"]["formatted"]["weight"] == pytest.approx(0.2)
    assert v1["functions"]["reply_chars"]["kind"] == "metric"
    assert v1["weights_source"] == "written in the file"


def test_plain_jsonl(tmp_path, capsys):
    path = write_plain(tmp_path / "rewards.jsonl", mixed_run(30, 4))
    obj = check_tool(capsys, "--results", path)
    assert obj["data"]["shape"] == PLAIN and obj["exit_code"] == 0
    assert obj["data"]["groups"]["pass_at_k"]["1"] == pytest.approx(obj["data"]["solve_rate"], abs=1e-4)
    assert status(obj, "correctness") == "skip"  # total reward only


# -- verdicts --------------------------------------------------------------------------


def test_format_bonus_hides_that_the_model_is_never_correct(tmp_path, capsys):
    rolls = [
        Roll(ex, correct=0.0, fmt=float((ex + k) % 2), text="<answer>x</answer>") for ex in range(20) for k in range(4)
    ]
    obj = check_tool(capsys, "--results", write_v1_run(tmp_path / "run", rolls))
    assert obj["exit_code"] == 1 and status(obj, "correctness") == "fail"
    assert "correct" in next(c["message"] for c in obj["checks"] if c["id"] == "correctness")
    assert obj["data"]["reward"]["mean"] > 0  # the total looks healthy


def test_reward_earned_by_empty_completions_is_hackable(tmp_path, capsys):
    rolls = mixed_run(20, 4) + [Roll(99, correct=1.0, text="") for _ in range(4)]
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls))
    assert obj["exit_code"] == 1 and status(obj, "empty-reward") == "fail"
    assert obj["data"]["empty_completion_reward"]["empty_solved"] == 4


def test_near_empty_winner_is_a_warning_tuned_by_flag(tmp_path, capsys):
    rolls = mixed_run(20, 4) + [Roll(99, correct=1.0, text="7") for _ in range(4)]
    folder = write_classic_run(tmp_path / "run", rolls)
    assert status(check_tool(capsys, "--results", folder), "empty-reward") == "warn"
    assert status(check_tool(capsys, "--results", folder, "--near-empty-chars", "0"), "empty-reward") == "pass"


def test_reward_never_above_zero(tmp_path, capsys):
    rolls = [Roll(ex, correct=0.0, fmt=0.0, text="no idea") for ex in range(20) for _ in range(4)]
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls))
    assert obj["exit_code"] == 1 and status(obj, "reward-positive") == "fail"
    assert status(obj, "generation") == "pass"
    assert rec(obj, "task difficulty / model")["value"].startswith("easier")


def test_too_easy_and_threshold_flag(tmp_path, capsys):
    rolls = [Roll(ex, correct=1.0 if k else float(ex % 3 == 0)) for ex in range(20) for k in range(8)]
    folder = write_classic_run(tmp_path / "run", rolls)
    obj = check_tool(capsys, "--results", folder, "--min-signal", "0")
    assert obj["data"]["solve_rate"] >= 0.9 and status(obj, "difficulty") == "fail"
    relaxed = check_tool(capsys, "--results", folder, "--too-easy", "0.99", "--min-signal", "0")
    assert status(relaxed, "difficulty") == "pass" and relaxed["exit_code"] == 0


def test_zero_variance_groups_block_and_recommend_filtering(tmp_path, capsys):
    # half the examples always solved, half never: the mean (0.6) looks fine, the signal is zero
    rolls = [Roll(ex, correct=float(ex % 2)) for ex in range(20) for _ in range(4)]
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls))
    g = obj["data"]["groups"]
    assert obj["exit_code"] == 1 and status(obj, "group-signal") == "fail"
    assert g["zero_variance_share"] == 1.0 and g["all_fail_share"] == 0.5 and g["all_pass_share"] == 0.5
    assert g["nonzero_advantage_share"] == 0.0
    assert rec(obj, "orchestrator.train.filter_zero_advantages")["value"] is True
    assert rec(obj, "orchestrator.group_size")["value"] == "no size helps"


def test_curriculum_thresholds_come_from_per_example_pass_rates(tmp_path, capsys):
    rolls = mixed_run(20, 8) + [
        Roll(100 + ex, correct=0.0, text="<answer>0</answer>") for ex in range(10) for _ in range(8)
    ]
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls), "--min-signal", "0")
    cur = rec(obj, "[[orchestrator.train.source]] curriculum.sampler.pools (difficulty_pool)")
    never = obj["data"]["pass_rate_per_example"]["never_solved"]
    assert never >= 10 and cur["value"]["hard_share"] == pytest.approx(never / 30, abs=1e-3)
    assert cur["older"] == "[buffer] easy_threshold / hard_threshold"


def test_one_rollout_per_example_cannot_measure_group_signal(tmp_path, capsys):
    rolls = [Roll(ex, correct=float(ex % 2)) for ex in range(60)]
    folder = write_classic_run(tmp_path / "run", rolls)
    obj = check_tool(capsys, "--results", folder)
    assert status(obj, "group-signal") == "warn" and obj["exit_code"] == 0
    assert "-r 4" in next(c["hint"] for c in obj["checks"] if c["id"] == "group-signal")
    assert check_tool(capsys, "--results", folder, "--strict")["exit_code"] == 1


def test_generation_failure_is_not_called_a_reward_problem(tmp_path, capsys):
    rolls = [Roll(ex, error="Connection refused") for ex in range(20) for _ in range(4)]
    obj = check_tool(capsys, "--results", write_v1_run(tmp_path / "run", rolls))
    assert obj["exit_code"] == 1 and status(obj, "generation") == "fail"
    assert status(obj, "reward-positive") == "skip" and obj["data"]["counts"]["errored"] == 80
    assert "ProviderError" in obj["data"]["counts"]["error_kinds"]


def test_high_truncation_blocks_training_until_max_tokens_are_raised(tmp_path, capsys):
    # 37% truncated: the rewards measure the token budget; "worth training" would be wrong
    rolls = [Roll(r.example, r.correct, text=r.text, truncated=i % 8 < 3) for i, r in enumerate(mixed_run(40, 4))]
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls, max_tokens=512))
    assert status(obj, "truncation") == "fail" and "38% of rollouts were truncated" in obj["summary"] + next(
        c["message"] for c in obj["checks"] if c["id"] == "truncation"
    )
    assert obj["exit_code"] == 1 and "truncation" in obj["summary"]
    r = rec(obj, "[orchestrator.train.sampling] max_completion_tokens")
    assert r["value"] == 1024 and r["older"] == "[sampling] max_tokens"


def test_some_truncation_warns_and_still_recommends_more_tokens(tmp_path, capsys):
    rolls = [Roll(r.example, r.correct, text=r.text, truncated=i % 14 == 0) for i, r in enumerate(mixed_run(40, 4))]
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls, max_tokens=512))
    assert status(obj, "truncation") == "warn" and obj["exit_code"] == 0
    assert rec(obj, "[orchestrator.train.sampling] max_completion_tokens")["value"] == 1024


def test_group_size_is_the_one_its_own_table_supports(tmp_path, capsys):
    from vlab.evals.verdicts import Thresholds

    gain = Thresholds().group_gain
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", mixed_run(40, 8)))
    r = rec(obj, "orchestrator.group_size")
    table = r["expected_mixed_share"]
    sizes = sorted(int(k) for k in table)
    shares = {int(k): v for k, v in table.items()}
    assert shares[4] >= 0.5 and shares[8] - shares[4] >= gain  # the old rule said 4 here; its table said more
    chosen = r["value"]
    for small, big in zip(sizes, sizes[1:]):
        if small < chosen:
            assert shares[big] - shares[small] >= gain, (small, shares)  # each smaller size loses signal
        if small == chosen:
            assert shares[big] - shares[small] < gain, (chosen, shares)  # and doubling it adds too little
    assert chosen != 4 and f"doubling {chosen} would add less than {gain:.0%}" in r["why"]


def test_skill_md_quotes_the_thresholds_from_their_one_home():
    import re

    from conftest import SKILL_ROOT

    from vlab.evals.verdicts import Thresholds

    t = Thresholds()
    text = " ".join((SKILL_ROOT / "SKILL.md").read_text().split())
    m = re.search(r"more than (\d+)% of rollouts truncated blocks training; more than (\d+)% warns", text)
    assert m, "SKILL.md step 6 states the truncation thresholds"
    assert (int(m.group(1)) / 100, int(m.group(2)) / 100) == (t.max_truncated, t.warn_truncated)
    m = re.search(r"more than (\d+)% of rollouts that ran out of turns blocks training; more than (\d+)% warns", text)
    assert m, "SKILL.md step 6 states the turn-limit thresholds"
    assert (int(m.group(1)) / 100, int(m.group(2)) / 100) == (t.max_turn_limited, t.warn_turn_limited)
    m = re.search(r"doubling it would add fewer than (\d+)% of groups", text)
    assert m and int(m.group(1)) / 100 == t.group_gain


def _tool_rollouts(folder, stop_for):
    """Rewrite a classic run's rows as tool rollouts (a call, its answer, a call) stopped by ``stop_for(i)``."""
    results = folder / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for i, row in enumerate(rows):
        call = {"id": f"c{i}", "name": "calculate", "arguments": '{"expression": "1+1"}'}
        row["completion"] = [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": "2", "tool_call_id": f"c{i}"},
            {"role": "assistant", "content": "", "tool_calls": [dict(call, id=f"d{i}")]},
        ]
        row["stop_condition"] = stop_for(i)
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize("shape", ["batches", "rows"])
def test_rollouts_that_ran_out_of_turns_are_counted_apart_and_named(tmp_path, capsys, monkeypatch, shape):
    if shape == "rows":  # the plain reader, not the msgspec column fast path
        monkeypatch.setattr(batches, "msgspec", None)
    folder = _tool_rollouts(write_classic_run(tmp_path / "run", mixed_run(20, 4)), lambda i: "max_turns_reached")
    obj = check_tool(capsys, "--results", folder)
    counts = obj["data"]["counts"]
    assert counts["turn_limited"] == 80 and counts["truncated"] == 0, counts
    check = next(c for c in obj["checks"] if c["id"] == "turn-limit")
    assert check["status"] == "fail" and check["message"].startswith("ran out of turns"), check
    assert obj["exit_code"] == 1


def test_v1_traces_stopped_by_the_task_s_turn_limit_are_counted(tmp_path, capsys):
    folder = write_v1_run(tmp_path / "v1", mixed_run(20, 4))
    path = folder / "traces.jsonl"
    episodes = [json.loads(line) for line in path.read_text().splitlines()]
    for ep in episodes:
        for trace in ep["traces"]:
            sampled = next(n for n in trace["nodes"] if n.get("sampled"))
            sampled["message"]["tool_calls"] = [{"id": "c", "name": "calculate", "arguments": "{}"}]
            trace["stop_condition"] = "turn_limit"  # the template's own @vf.stop
    path.write_text("".join(json.dumps(ep) + "\n" for ep in episodes))
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["turn_limited"] == 80 and status(obj, "turn-limit") == "fail"


def test_a_few_turn_limit_stops_warn_and_single_turn_rollouts_never_count(tmp_path, capsys):
    stops = lambda i: "max_turns_reached" if i % 5 == 0 else "no_tools_called"  # noqa: E731
    obj = check_tool(capsys, "--results", _tool_rollouts(write_classic_run(tmp_path / "a", mixed_run(20, 4)), stops))
    assert obj["data"]["counts"]["turn_limited"] == 16 and status(obj, "turn-limit") == "warn"
    # single-turn rollouts end with max_turns_reached after their one reply: not a turn-limit stop
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "b", mixed_run(20, 4)))
    assert obj["data"]["counts"]["turn_limited"] == 0 and "turn-limit" not in {c["id"] for c in obj["checks"]}


def _game_rollouts(folder, stop_for, turns_for):
    """Rewrite a classic run's rows as a multi-turn game without tools (verifiers 0.3.1 MultiTurnEnv:
    model move, the game's reply, ...) of ``turns_for(i)`` model turns, stopped by ``stop_for(i)``."""
    results = folder / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for i, row in enumerate(rows):
        moves = []
        for t in range(turns_for(i)):
            moves += [{"role": "assistant", "content": f"guess {t}"}, {"role": "user", "content": "try again"}]
        row["completion"] = moves[:-1]  # the limit fires before the game answers the last move
        row["stop_condition"] = stop_for(i)
        row["is_completed"] = True
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.parametrize("shape", ["batches", "rows"])
def test_a_multi_turn_game_without_tools_cut_by_its_turn_limit_is_counted(tmp_path, capsys, monkeypatch, shape):
    if shape == "rows":
        monkeypatch.setattr(batches, "msgspec", None)
    # 0.3.1 MultiTurnEnv: six moves and max_turns_reached on 60 of 80 rollouts, solved in two (own stop) on the rest
    stops = lambda i: "max_turns_reached" if i % 4 else "game_solved"  # noqa: E731
    folder = _game_rollouts(write_classic_run(tmp_path / "g", mixed_run(20, 4)), stops, lambda i: 6 if i % 4 else 2)
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["turn_limited"] == 60 and obj["data"]["counts"]["truncated"] == 0, obj["data"]
    assert status(obj, "turn-limit") == "fail" and obj["exit_code"] == 1
    # one model turn ending on max_turns_reached is a single-turn environment's normal stop
    folder = _game_rollouts(
        write_classic_run(tmp_path / "s", mixed_run(20, 4)), lambda i: "max_turns_reached", lambda i: 1
    )
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["turn_limited"] == 0 and "turn-limit" not in {c["id"] for c in obj["checks"]}


@pytest.mark.parametrize("shape", ["batches", "rows"])
def test_every_rollout_running_to_the_limit_without_tools_is_a_fixed_length_conversation(
    tmp_path, capsys, monkeypatch, shape
):
    """A MultiTurnEnv of fixed length (two turns, always max_turns_reached): not "ran out of turns"; the
    local_train metric reads it the same way."""
    if shape == "rows":
        monkeypatch.setattr(batches, "msgspec", None)
    folder = _game_rollouts(
        write_classic_run(tmp_path / "f", mixed_run(20, 4)), lambda i: "max_turns_reached", lambda i: 2
    )
    obj = check_tool(capsys, "--results", folder)
    counts = obj["data"]["counts"]
    assert counts["turn_limited"] == 0 and counts["fixed_length"] == 80, counts
    check = next(c for c in obj["checks"] if c["id"] == "turn-limit")
    assert check["status"] == "pass" and "fixed length" in check["message"], check
    from types import SimpleNamespace

    from vlab.train.stepmetrics import turn_limited_share

    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    rollouts = [SimpleNamespace(stop_condition=r["stop_condition"], completion=r["completion"]) for r in rows]
    assert turn_limited_share(rollouts) == 0.0
    rollouts[0] = SimpleNamespace(stop_condition="game_solved", completion=rollouts[0].completion[:1])
    assert turn_limited_share(rollouts) == 79 / 80  # one finished game: the others were cut short


@pytest.mark.parametrize("shape", ["batches", "rows"])
def test_a_final_answer_on_the_last_allowed_turn_is_not_a_turn_limit_stop(tmp_path, capsys, monkeypatch, shape):
    """0.3.1 checks stop conditions in name order: an answer on the last allowed turn reads max_turns_reached
    (before no_tools_called); the rollout was over, so it is not counted."""
    if shape == "rows":
        monkeypatch.setattr(batches, "msgspec", None)
    folder = _tool_rollouts(write_classic_run(tmp_path / "run", mixed_run(20, 4)), lambda i: "max_turns_reached")
    results = folder / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for i, row in enumerate(rows):
        if i % 2:  # the last turn is the answer, not a call
            row["completion"][-1] = {"role": "assistant", "content": "\\boxed{2}"}
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["turn_limited"] == 40, obj["data"]["counts"]


def test_v1_multi_turn_traces_without_tools_stopped_by_max_turns_are_counted(tmp_path, capsys):
    """verifiers 0.4.0: the agent's max_turns refuses the next turn and becomes the trace's stop_condition
    "max_turns" (verifiers/v1/session.py RolloutLimits); a game's moves are sampled nodes without tool calls."""
    folder = write_v1_run(tmp_path / "v1", mixed_run(20, 4))
    path = folder / "traces.jsonl"
    episodes = [json.loads(line) for line in path.read_text().splitlines()]
    for k, ep in enumerate(episodes):
        for trace in ep["traces"]:
            sampled = next(n for n in trace["nodes"] if n.get("sampled"))
            if k % 4:  # three more moves, each after the game's reply
                for t in range(3):
                    trace["nodes"].append({"message": {"role": "user", "content": "no"}, "sampled": False})
                    trace["nodes"].append(dict(sampled, message={"role": "assistant", "content": f"move {t}"}))
                trace["stop_condition"] = "max_turns"
            else:  # one turn stopped by max_turns=1: a single-turn taskset, truncated not out of turns
                trace["stop_condition"] = "max_turns"
    path.write_text("".join(json.dumps(ep) + "\n" for ep in episodes))
    obj = check_tool(capsys, "--results", folder)
    counts = obj["data"]["counts"]
    assert counts["turn_limited"] == 60 and counts["truncated"] == 20, counts
    assert status(obj, "turn-limit") == "fail"


def test_duplicated_rows_in_a_classic_run(tmp_path, capsys):
    folder = write_classic_run(tmp_path / "run", mixed_run(20, 4))
    results = folder / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines + lines[:5]))
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["duplicate_rows"] == 5 and status(obj, "duplicates") == "warn"


def test_pass_at_k_is_the_unbiased_estimator(tmp_path, capsys):
    rolls = [Roll(0, correct=c) for c in (1, 0, 0, 0)] + [Roll(1, correct=c) for c in (1, 1, 0, 0)]
    g = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls))["data"]["groups"]
    # example 0: c=1,n=4 -> pass@2 = 1 - C(3,2)/C(4,2) = 0.5; example 1: 1 - C(2,2)/C(4,2) = 5/6
    assert g["pass_at_k"]["2"] == pytest.approx((0.5 + 5 / 6) / 2, abs=1e-4)
    assert g["pass_all_k"]["4"] == 0.0


@pytest.mark.classic
def test_pass_at_k_matches_verifiers_own_metric(tmp_path, capsys):
    from verifiers.legacy.utils.metric_utils import PassAtKMetric

    rolls = mixed_run(25, 8)
    metric = PassAtKMetric(8, threshold=0.5)
    for r in rolls:
        metric.add_output({"example_id": r.example, "reward": r.correct})
    expected, expected_all = metric.compute()
    g = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls))["data"]["groups"]
    for k, v in expected.items():
        assert g["pass_at_k"][k] == pytest.approx(v, abs=1e-4)
        assert g["pass_all_k"][k] == pytest.approx(expected_all[k], abs=1e-4)


def test_vf_validate_output(tmp_path, capsys):
    obj = check_tool(capsys, "--results", write_v1_validate(tmp_path / "val", noop_reward=1.0))
    assert obj["data"]["shape"] == V1_VALIDATE and obj["exit_code"] == 1
    assert status(obj, "noop") == "fail" and status(obj, "rollouts") == "fail"


# -- finding the results ----------------------------------------------------------------


def test_newest_run_under_outputs_is_found(tmp_path):
    old = write_classic_run(tmp_path / "outputs" / "evals" / "env--m" / "aaaa0001", mixed_run(20, 4))
    new = write_v1_run(tmp_path / "environments" / "my_env" / "outputs" / "run2", mixed_run(20, 4))
    os.utime(old / "results.jsonl", (1_000_000, 1_000_000))
    r = run_script(TOOL, "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 0)
    assert obj["data"]["file"] == str(new / "traces.jsonl") and obj["data"]["other_runs_found"] == 1
    assert "Traceback" not in r.stderr


def test_search_dir_flag_and_nothing_found(tmp_path, capsys):
    write_classic_run(tmp_path / "elsewhere" / "run", mixed_run(20, 4))
    obj = check_tool(capsys, "--search-dir", tmp_path / "elsewhere")
    assert obj["data"]["shape"] == CLASSIC
    obj = check_tool(capsys, "--search-dir", tmp_path / "empty")
    assert obj["exit_code"] == 2 and "no eval results found" in obj["summary"]


# -- bad input ------------------------------------------------------------------------


def test_empty_file(tmp_path, capsys):
    (tmp_path / "results.jsonl").write_text("")
    obj = check_tool(capsys, "--results", tmp_path / "results.jsonl")
    assert obj["exit_code"] == 2 and "empty" in obj["summary"]


def test_missing_path_and_folder_without_results(tmp_path, capsys):
    assert check_tool(capsys, "--results", tmp_path / "nope")["exit_code"] == 2
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "notes.txt").write_text("hi")
    obj = check_tool(capsys, "--results", tmp_path / "folder")
    assert obj["exit_code"] == 2 and "no eval results" in obj["summary"]


def test_truncated_last_line_is_counted_and_skipped(tmp_path, capsys):
    folder = write_classic_run(tmp_path / "run", mixed_run(20, 4))
    results = folder / "results.jsonl"
    results.write_text(results.read_text() + json.dumps(classic_row(Roll(3), 1.0))[:120])
    obj = check_tool(capsys, "--results", folder)
    c = obj["data"]["counts"]
    assert c["malformed_lines"] == 1 and c["truncated_last_line"] and c["rollouts"] == 80
    assert status(obj, "input") == "warn" and obj["exit_code"] == 0


def test_few_malformed_lines_are_skipped_many_are_unreadable(tmp_path, capsys):
    folder = write_classic_run(tmp_path / "run", mixed_run(25, 4))
    results = folder / "results.jsonl"
    good = results.read_text().splitlines()
    results.write_text("\n".join(good[:50] + ["{not json", "[1, 2]"] + good[50:]) + "\n")
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["malformed_lines"] == 2 and obj["data"]["counts"]["malformed_line_numbers"] == [51, 52]
    assert status(obj, "input") == "warn" and obj["exit_code"] == 0
    results.write_text("\n".join(good[:20] + ["garbage"] * 30) + "\n")
    obj = check_tool(capsys, "--results", folder)
    assert obj["exit_code"] == 2 and "not valid JSON" in obj["summary"]


def test_nan_rewards_mean_a_broken_reward_function(tmp_path, capsys):
    rolls = mixed_run(20, 4)
    folder = tmp_path / "run"
    folder.mkdir()
    with (folder / "results.jsonl").open("w") as f:
        for i, r in enumerate(rolls):
            row = classic_row(r, float(i))
            if i % 4 == 0:
                row["reward"] = float("nan")  # Python's json writes the NaN literal
            f.write(json.dumps(row) + "\n")
    obj = check_tool(capsys, "--results", folder)
    assert obj["data"]["counts"]["reward_issues"] == {"nan": 20}
    assert status(obj, "reward-values") == "fail" and obj["exit_code"] == 1


def test_string_or_missing_rewards_are_unreadable_input(tmp_path, capsys):
    path = tmp_path / "rewards.jsonl"
    path.write_text("".join(json.dumps({"example_id": i, "reward": "high"}) + "\n" for i in range(10)))
    obj = check_tool(capsys, "--results", path)
    assert obj["exit_code"] == 2 and "string" in obj["summary"]
    path.write_text("".join(json.dumps({"example_id": i, "score": 1}) + "\n" for i in range(10)))
    obj = check_tool(capsys, "--results", path)
    assert obj["exit_code"] == 2 and "no reward field" in obj["summary"]


def test_mixed_shapes_in_a_folder_and_in_a_file(tmp_path, capsys):
    folder = write_classic_run(tmp_path / "run", mixed_run(10, 4))
    write_v1_run(folder, mixed_run(10, 4))  # traces.jsonl beside results.jsonl
    obj = check_tool(capsys, "--results", folder)
    assert obj["exit_code"] == 2 and "two shapes" in obj["summary"]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text((folder / "results.jsonl").read_text() + (folder / "traces.jsonl").read_text())
    obj = check_tool(capsys, "--results", mixed)
    assert obj["exit_code"] == 2 and "mixes row shapes" in obj["summary"]


def test_bad_threshold_is_a_usage_error(capsys, tmp_path):
    obj = check_tool(capsys, "--results", tmp_path, "--min-signal", "3")
    assert obj["exit_code"] == 2 and "--min-signal" in obj["summary"]


def test_human_output_has_histogram_and_no_traceback(tmp_path):
    r = run_script(TOOL, "--results", str(write_classic_run(tmp_path / "run", mixed_run(20, 4))))
    assert r.returncode == 0, r
    assert "█" in r.stdout and "group signal" in r.stdout and "Traceback" not in r.stderr


# -- the reader without msgspec gives the same records ------------------------------------


@pytest.mark.parametrize("writer", [write_classic_run, write_legacy_run, write_v1_run])
def test_json_fallback_reads_the_same_rollouts(tmp_path, monkeypatch, writer):
    folder = writer(
        tmp_path / "run",
        mixed_run(6, 3) + [Roll(50, error="boom"), Roll(50, text="")]
        if writer is write_classic_run
        else mixed_run(6, 3),
    )
    source = locate(folder)
    fast = list(iter_rows(source))
    monkeypatch.setattr(read, "msgspec", None)  # the reader decodes with json alone
    stats = ReadStats()
    slow = list(iter_rows(locate(folder), stats))
    assert len(fast) == len(slow) > 0 and stats.fallback_rows > 0
    for a, b in zip(fast, slow):
        assert (a.example, a.reward, a.scores, a.weights, a.error, a.truncated, a.completion_chars, a.prompt_key) == (
            b.example,
            b.reward,
            b.scores,
            b.weights,
            b.error,
            b.truncated,
            b.completion_chars,
            b.prompt_key,
        )


# -- which function is correctness ----------------------------------------------------------


def test_function_kind_and_correctness_function():
    """evals asks the catalog, with the facts it observed in the file."""
    import numpy as np

    from vlab.catalog import correctness_function, function_kinds
    from vlab.evals.analysis import function_facts
    from vlab.evals.stats import describe

    def function_kind(name, stats, weight, role):
        return function_kinds([function_facts(name, stats, weight, role)])[name]

    binary, counts = describe(np.array([0.0, 1.0, 1.0])), describe(np.array([1.0, 3.0]))
    assert function_kind("format_reward_func", binary, None, "reward or metric") == "format"
    assert function_kind("num_turns", counts, None, "reward or metric") == "metric"
    assert function_kind("correct_answer", binary, 1.0, "reward") == "correctness"
    assert function_kind("correct_answer", binary, 0.0, "reward") == "metric"  # weight 0: logged only
    assert function_kind("length_bonus", describe(np.array([0.2, 0.7])), 0.5, "reward") == "shaping"
    fns = [function_facts(name, binary, w, "reward") for name, w in (("is_valid", 1.0), ("exact_match", 0.5))]
    assert set(function_kinds(fns).values()) == {"correctness"}
    assert correctness_function(fns) == "exact_match"  # a correctness-sounding name outranks the weight
    assert correctness_function(fns[:1]) == "is_valid" and correctness_function([]) is None


# -- the real files ---------------------------------------------------------------------


def real(real_data, name):
    return real_data / "verifiers-evals" / name


def test_real_failed_gsm8k_run_is_a_generation_failure(real_data, capsys):
    obj = check_tool(capsys, "--results", real(real_data, "legacy-2025-gsm8k--gpt-4.1-mini-failed-run"))
    d = obj["data"]
    assert d["shape"] == CLASSIC_2025 and obj["exit_code"] == 1
    assert status(obj, "generation") == "fail" and obj["data"]["blocking_verdicts"] == ["generation"]
    assert status(obj, "reward-positive") == "skip"  # not misreported as "too hard / reward broken"
    assert d["counts"]["empty_completions"] == 150 and d["counts"]["examples"] == 50
    assert d["groups"]["rollouts_per_example"]["most_common"] == 3
    assert status(obj, "metadata") == "warn"
    assert any("metadata says 0, data has 3" in m for m in d["metadata_disagreements"])


def test_real_2025_math_python_run_groups_by_prompt(real_data, capsys):
    obj = check_tool(capsys, "--results", real(real_data, "legacy-2025-math-python--gpt-4.1-mini"))
    d = obj["data"]
    assert d["shape"] == CLASSIC_2025 and d["grouping"].startswith("prompt")
    assert d["counts"]["examples"] == 5 and d["groups"]["rollouts_per_example"]["most_common"] == 3
    assert d["reward"]["mean"] == pytest.approx(0.9333, abs=1e-4)  # = metadata avg_reward
    assert d["metadata_disagreements"] == []
    assert d["correctness_function"] == "correct_answer_reward_func"
    assert d["functions"]["correct_answer_reward_func"]["weight"] == pytest.approx(1.0)
    assert d["functions"]["total_tool_calls"]["kind"] == "metric"
    assert status(obj, "difficulty") == "fail" and status(obj, "samples") == "fail"


def test_real_classic_031_run(real_data, capsys):
    obj = check_tool(capsys, "--results", real(real_data, "v0.3.1-vf-eval--demo-env"))
    d = obj["data"]
    assert d["shape"] == CLASSIC and obj["exit_code"] == 1
    assert d["correctness_function"] == "correct_answer"
    assert d["functions"]["format_reward_func"]["kind"] == "format"
    assert d["functions"]["num_turns"]["kind"] == "metric"
    assert d["groups"]["pass_at_k"] == d["metadata"]["pass_at_k"]  # same figures as verifiers wrote
    assert status(obj, "group-signal") == "fail" and d["groups"]["zero_variance_share"] == 1.0


def test_real_v1_traces(real_data, capsys):
    obj = check_tool(capsys, "--results", real(real_data, "v0.4.0-vf-eval--demo-taskset"))
    d = obj["data"]
    assert d["shape"] == V1_TRACES and d["counts"]["episodes"] == 4
    assert d["reward"]["mean"] == pytest.approx(0.7)
    assert d["functions"]["formatted"]["weight"] == 0.2 and d["functions"]["correct"]["kind"] == "correctness"
    assert d["metadata"]["rollouts_per_example"] == 2 and d["metadata_disagreements"] == []


def test_real_vf_validate(real_data, capsys):
    obj = check_tool(capsys, "--results", real(real_data, "v0.4.0-vf-validate--demo-taskset"))
    assert obj["data"]["shape"] == V1_VALIDATE and obj["exit_code"] == 1
    assert obj["data"]["gold"] == {"unchecked": 2} and status(obj, "gold") == "warn"
    assert status(obj, "noop") == "pass" and status(obj, "rollouts") == "fail"


def test_real_files_stream_through_the_library(real_data):
    """Other tools reuse the reader: every real rollout file yields records with a finite reward."""
    for name in (
        "legacy-2025-gsm8k--gpt-4.1-mini-failed-run",
        "legacy-2025-math-python--gpt-4.1-mini",
        "v0.3.1-vf-eval--demo-env",
        "v0.4.0-vf-eval--demo-taskset",
    ):
        rollouts = list(iter_rows(locate(real(real_data, name))))
        assert rollouts and all(r.reward is not None and math.isfinite(r.reward) for r in rollouts)
    cols = collect(locate(real(real_data, "v0.3.1-vf-eval--demo-env")))
    assert cols.n == 4


# -- the fast column path and the reference row path agree --------------------------------


def _partition(codes) -> list[int]:
    """Group codes relabelled by first appearance, so two codings of one grouping compare equal."""
    seen: dict = {}
    return [seen.setdefault(c, len(seen)) for c in codes]


@pytest.mark.parametrize("shape", ["classic031", "untimed", "legacy2025", "plain"])
def test_fast_path_equals_reference_path(tmp_path, shape):
    rolls = mixed_run(30, 4) + [Roll(70, error="boom"), Roll(71, text=""), Roll(72, text="7", truncated=True)]
    if shape == "classic031":
        folder = write_classic_run(tmp_path / "run", rolls)
    elif shape == "untimed":
        folder = write_classic_run(tmp_path / "run", rolls, timing=False)
    elif shape == "legacy2025":
        folder = write_legacy_run(tmp_path / "run", mixed_run(30, 4))
    else:
        folder = write_plain(tmp_path / "run" / "rewards.jsonl", rolls)
    source = locate(folder)
    fast_stats, ref_stats = ReadStats(), ReadStats()
    # a small chunk size makes several batches
    fast = Columns()
    for item in batches.iter_classic_batches(source, fast_stats, chunk_bytes=4096):
        assert not isinstance(item, list), "a clean file must take the fast path"
        fast.add_batch(item)
    ref = collect(source, ref_stats, rows=iter_rows(source, ref_stats))
    assert fast.n == ref.n == len(rolls if shape != "legacy2025" else mixed_run(30, 4))
    assert list(fast.prompt_codes) == list(ref.prompt_codes)  # the same fingerprints, first seen in the same order
    assert _partition(fast.example_group_codes()) == _partition(ref.example_group_codes())
    for name in ("prompt", "errored", "truncated", "chars", "tool_calls", "row_key"):
        assert list(getattr(fast, name)) == list(getattr(ref, name)), name
    assert list(fast.reward) == list(ref.reward)
    assert {k: list(v) for k, v in fast.fn_cols.items()} == {k: list(v) for k, v in ref.fn_cols.items()}
    assert fast.error_kinds == ref.error_kinds and fast_stats.lines == ref_stats.lines


def _same_columns(fast: Columns, ref: Columns) -> None:
    assert fast.n == ref.n
    assert _partition(fast.example_group_codes()) == _partition(ref.example_group_codes())
    assert list(fast.prompt_codes) == list(ref.prompt_codes)  # the same fingerprints, first seen in the same order
    for name in ("prompt", "errored", "truncated", "chars", "tool_calls", "row_key", "reward"):  # bit for bit (NaN)
        assert getattr(fast, name).tobytes() == getattr(ref, name).tobytes(), name
    assert {k: v.decode().tobytes() for k, v in fast.fn_cols.items()} == {
        k: v.decode().tobytes() for k, v in ref.fn_cols.items()
    }


def _fast_and_reference(source) -> tuple[Columns, Columns]:
    fast, fast_stats, ref_stats = Columns(), ReadStats(), ReadStats()
    for item in batches.iter_classic_batches(source, fast_stats, chunk_bytes=4096):
        assert not isinstance(item, list), "a clean file must take the fast path"
        fast.add_batch(item)
    ref = collect(source, ref_stats, rows=iter_rows(source, ref_stats))
    assert fast_stats.lines == ref_stats.lines
    return fast, ref


def test_fast_path_sizes_a_chunk_mixing_empty_and_multi_message_completions(tmp_path):
    """A failed generation writes no message, a tool run several: as many messages as rows in one chunk
    once gave each row one message's size (row 0 the first message of row 1)."""
    path = tmp_path / "results.jsonl"
    rows = []
    for i in range(40):
        two = [{"role": "assistant", "content": "let me see"}, {"role": "assistant", "content": "<answer>4</answer>"}]
        rows.append({**classic_row(Roll(i // 4), 1795349550.5 + i), "completion": [] if i % 2 == 0 else two})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    fast, ref = _fast_and_reference(locate(path))
    _same_columns(fast, ref)
    assert list(fast.chars)[:2] == [0, len("let me see") + len("<answer>4</answer>")]
    assert list(fast.truncated)[:2] == [0, 2]  # max_turns_reached after two turns: out of turns


def test_fast_path_reads_text_prompts_and_completions_and_ids_alone(tmp_path):
    path = tmp_path / "results.jsonl"
    lines = [
        {"id": i // 4, "prompt": f"question {i // 4}", "completion": f"  answer {i % 3}  ", "reward": float(i % 2)}
        for i in range(60)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    fast, ref = _fast_and_reference(locate(path))
    _same_columns(fast, ref)
    assert len(fast.prompt_codes) == 15 and list(fast.chars)[:2] == [len("answer 0"), len("answer 1")]
    # a prompt of another form is read as its JSON text (decoded once, as the row reader decodes it): the same figures
    lines[7]["prompt"] = {"text": "question 1"}
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    items = list(batches.iter_classic_batches(locate(path), ReadStats()))
    assert not any(isinstance(i, list) for i in items)
    _same_columns(collect(locate(path), workers=1), collect(locate(path), rows=iter_rows(locate(path))))


@pytest.mark.parametrize("writer", ["classic031", "legacy2025", "plain-odd"])
def test_the_answers_pass_reads_what_the_row_reader_reads(tmp_path, writer):
    """The answers pass decodes classic rows by the row reader's own rule (``read.classic_structs``) without
    its figures: the same (example, answer, gold) for every row, odd rows included."""
    from vlab.evals import answers

    if writer == "classic031":
        folder = write_classic_run(tmp_path / "run", mixed_run(12, 4) + [Roll(50, error="boom"), Roll(51, text="")])
        path = folder / "results.jsonl"
    elif writer == "legacy2025":
        path = write_legacy_run(tmp_path / "run", mixed_run(12, 4)) / "results.jsonl"
    else:
        path = tmp_path / "plain.jsonl"
        path.write_text(
            '{"example_id": 1, "reward": 1.0, "completion": "so \\\\boxed{\\\\text{B}}", "answer": "b"}\n'
            '{"example_id": 1, "reward": NaN, "completion": "Answer: B", "answer": "b"}\n'
            "{broken\n\n"
            '["not", "an", "object"]\n'
            '{"example_id": "2", "reward": 0.0, "completion": [{"role": "assistant", "content": "<answer>c</answer>"}]}\n'
            '{"example_id": 3, "reward": 1.0, "answer": 7, "completion": null}\n'
        )
    source = locate(path)
    reference = [(r.example, r.answer, r.gold) for r in iter_rows(source, answer_of=answers.final_answer)]
    assert list(answers._answer_rows(source)) == reference and reference


def test_collect_beside_runs_its_pass_in_a_reading_process(tmp_path, monkeypatch):
    from vlab.evals import columns

    source = locate(write_classic_run(tmp_path / "run", mixed_run(40, 4)))
    serial, pid = columns.collect_beside(source, os.getpid)
    assert pid == os.getpid()  # a small file: read here, the pass after
    monkeypatch.setattr(columns, "PARALLEL_MIN_BYTES", 0)  # as a large file: one reading process per core
    monkeypatch.setattr(columns, "cores", lambda: 2)
    assert columns.reading_workers(source) == 2
    parallel, pid = columns.collect_beside(source, os.getpid)
    assert pid != os.getpid()
    _same_columns(parallel, serial)


def test_a_chunk_with_a_nan_literal_falls_back_to_the_reference_path(tmp_path):
    folder = write_classic_run(tmp_path / "run", mixed_run(10, 4))
    results = folder / "results.jsonl"
    lines = results.read_text().splitlines()
    row = json.loads(lines[3])
    row["reward"] = float("nan")
    lines[3] = json.dumps(row)
    results.write_text("\n".join(lines) + "\n")
    items = list(batches.iter_classic_batches(locate(folder), ReadStats()))
    assert any(isinstance(i, list) for i in items)
    cols = collect(locate(folder))
    assert cols.n == 40 and cols.reward_issues == {"nan": 1}
    # with many small chunks only the chunk holding the NaN is re-read, row by row
    cols, stats = collect_range(locate(folder), None, chunk_bytes=2048)
    assert cols.n == 40 and cols.reward_issues == {"nan": 1} and stats.lines == 40
    assert cols.issue_lines == {"nan": [4]}


def test_rows_without_timing_are_not_taken_for_duplicates(tmp_path, capsys):
    rolls = [Roll(ex, correct=1.0 if k % 2 else 0.0) for ex in range(20) for k in range(4)]  # identical pairs
    obj = check_tool(capsys, "--results", write_classic_run(tmp_path / "run", rolls, timing=False))
    assert obj["data"]["shape"] == CLASSIC and obj["data"]["rollout_identity"] is False
    assert status(obj, "duplicates") == "pass"  # identical rollouts, not copies: reported, not blamed


def test_all_nan_rewards_are_not_judged_as_too_hard(tmp_path, capsys):
    path = tmp_path / "rewards.jsonl"
    path.write_text("".join(f'{{"example_id": {i // 4}, "reward": NaN}}\n' for i in range(40)))
    obj = check_tool(capsys, "--results", path)
    assert obj["exit_code"] == 1 and obj["data"]["blocking_verdicts"] == ["reward-values"]
    assert status(obj, "reward-positive") == "skip" and status(obj, "group-signal") == "skip"


def test_parallel_read_equals_serial_read(tmp_path):
    rolls = mixed_run(40, 4) + [Roll(90, error="boom"), Roll(91, text="")]
    folder = write_classic_run(tmp_path / "run", rolls)
    results = folder / "results.jsonl"
    lines = results.read_text().splitlines()
    lines.insert(60, "{broken")  # a malformed line in the second half keeps its file line number
    results.write_text("\n".join(lines) + "\n")
    source = locate(folder)
    ranges = chunks.split_ranges(source.path, 3)
    assert ranges[0][0] == 0 and ranges[-1][1] == source.path.stat().st_size and len(ranges) == 3
    s1, s3 = ReadStats(), ReadStats()
    serial = collect(source, s1, workers=1)
    parallel = collect(source, s3, workers=3)
    assert parallel.n == serial.n == len(rolls)
    assert _partition(parallel.example_group_codes()) == _partition(serial.example_group_codes())
    for name in ("reward", "errored", "truncated", "chars", "tool_calls", "row_key"):
        assert list(getattr(parallel, name)) == list(getattr(serial, name)), name
    assert {k: list(v) for k, v in parallel.fn_cols.items()} == {k: list(v) for k, v in serial.fn_cols.items()}
    assert s3.malformed_lines == s1.malformed_lines == [61] and s3.lines == s1.lines == len(lines)


def test_parallel_read_of_string_ids_and_legacy_prompts(tmp_path):
    source = locate(write_legacy_run(tmp_path / "run", mixed_run(30, 4)))
    serial = collect(source, workers=1)
    parallel = collect(source, workers=2)
    assert _partition(parallel.example_group_codes()) == _partition(serial.example_group_codes())
    assert _partition(parallel.prompt) == _partition(serial.prompt)
    path = tmp_path / "ids.jsonl"
    path.write_text(
        "".join(json.dumps({"example_id": f"task-{i // 4}", "reward": float(i % 2)}) + "\n" for i in range(200))
    )
    source = locate(path)
    serial, parallel = collect(source, workers=1), collect(source, workers=2)
    assert _partition(parallel.example_group_codes()) == _partition(serial.example_group_codes())
    assert len(set(parallel.example_group_codes().tolist())) == 50


def test_a_coded_column_keeps_every_value_bit_for_bit_as_it_widens():
    """Scores are stored as codes of their distinct values: 1 byte, then 2 past 256 values, then plain floats
    past 65,536; batches, single values, NaN fills and merged parts decode to exactly what went in."""
    import struct

    from vlab.evals.columns import CodedColumn

    rng = np.random.default_rng(4)
    want: list[float] = []
    col = CodedColumn()
    stages = ([1.0, 0.0, -0.0, math.nan, 1.0], rng.permutation(300) / 7, rng.random(70_000))
    for values, width in zip(stages, "BHd"):
        col.extend(list(values))
        want += list(values)
        col.append(0.25)
        want.append(0.25)
        col.fill_nan(3)
        want += [math.nan] * 3
        assert col.codes.typecode == width
    part = CodedColumn()
    part.extend([2.5, -0.0, 2.5])
    merged = CodedColumn.nans(2)
    merged.extend_column(part)
    merged.extend_column(col)
    assert col.codes.typecode == "d" and merged.codes.typecode == "d"

    def bits(xs):
        return [struct.pack("<d", x) for x in xs]

    assert bits(col.decode()) == bits(want) and bits(col.head(7)) == bits(want[:7])
    assert bits(merged.decode()) == bits([math.nan] * 2 + [2.5, -0.0, 2.5] + want)


def test_group_statistics_by_slices_equal_one_pass(monkeypatch):
    """group_stats sums a slice of rows at a time in file order: the same figures as one slice of every row."""
    from vlab.evals import stats

    rng = np.random.default_rng(9)
    group = rng.integers(0, 50, 2000)
    reward = rng.choice([0.0, 0.2, 1.0, 1.2, math.nan, 0.3333], 2000)
    solved = reward >= 1.0
    whole = stats.group_stats(group, reward, solved)
    monkeypatch.setattr(stats, "ROW_SLICE", 7)
    sliced = stats.group_stats(group, reward, solved)
    assert sliced[0] == whole[0] and sliced[0].signal is not None
    assert sliced[1].tobytes() == whole[1].tobytes()


@pytest.mark.parametrize("generation", ["traces", "results"])  # v1 traces, 0.3 results (ids are keywords)
def test_too_few_samples_names_the_eval_command_of_the_files_generation(tmp_path, capsys, generation):
    """Issue 38: after a v1 run the hint gave 0.3's `vf-eval ENV ... -s`, where v1's `-s` means shuffle and the
    offline flags were missing."""
    rolls = [Roll(ex, correct=float(ex % 2)) for ex in range(3)]
    write = write_v1_run if generation == "traces" else write_classic_run
    obj = check_tool(capsys, "--results", write(tmp_path / "run", rolls))
    hint = next(c["hint"] for c in obj["checks"] if c["id"] == "samples")
    if generation == "traces":
        assert "vf-eval TASKSET --no-push --env.agent.runtime.type subprocess" in hint and " -s" not in hint, hint
    else:
        assert "vf-eval ENV -n 50 -r 4 -s" in hint, hint


# -- the column readers give the reference readers' JSON, byte for byte (issue 52) ------------------------------


def _odd_v1_lines(folder) -> None:
    """Episodes the v1 column path leaves to the row reader, among plain ones: two traces, none, a frozen agent's,
    a reward that is a number, a trace without ids, odd metrics and messages, a turn limit with tools, a blank and
    a broken line."""
    path = folder / "traces.jsonl"
    eps = [json.loads(line) for line in path.read_text().splitlines()]
    two = json.loads(json.dumps(eps[1]))
    two["traces"].append(json.loads(json.dumps(two["traces"][0])))
    none = {**eps[2], "traces": []}
    frozen = json.loads(json.dumps(eps[3]))
    frozen["traces"].append({**frozen["traces"][0], "agent": {"name": "judge", "trainable": False}})
    number = json.loads(json.dumps(eps[4]))
    number["traces"][0]["rewards"]["correct"] = 1.0
    no_ids = json.loads(json.dumps(eps[5]))
    no_ids["id"] = no_ids["traces"][0]["id"] = None
    odd = json.loads(json.dumps(eps[6]))
    tr = odd["traces"][0]
    tr["metrics"] = {"reply_chars": 3, "judge": "yes", "flag": True}
    tr["rewards"]["correct"]["score"] = 1  # an integer score
    tr["nodes"][-1]["message"] = {"role": "assistant", "content": [{"type": "text", "text": " hi "}], "tool_calls": [1]}
    tr["stop_condition"] = "max_turns"
    text = json.loads(json.dumps(eps[7]))
    text["traces"][0]["nodes"][-1]["message"] = "a message that is a string"
    lines = [json.dumps(e) for e in eps[:40]]
    lines += [json.dumps(e) for e in (two, none, frozen, number, no_ids, odd, text)]
    lines += ["", "{broken"] + [json.dumps(e) for e in eps[40:]]
    path.write_text("\n".join(lines) + "\n")


def _odd_classic_lines(path) -> None:
    """Rows the classic column path leaves to the row reader, among plain ones."""
    rows = path.read_text().splitlines()
    first = json.loads(rows[0])
    nan = (
        json.dumps({**first, "reward": 0.5})
        .replace('"reward": 0.5', '"reward": NaN')
        .replace('"reward":0.5', '"reward":NaN')
    )
    odd = [nan, "", "{broken", json.dumps({**first, "reward": "1"}), json.dumps({**first, "prompt": {"text": "q"}})]
    odd += [json.dumps({**first, "prompt": None}), json.dumps({**first, "example_id": "7", "id": 3})]
    path.write_text("\n".join(rows[:30] + odd + rows[30:]) + "\n")


def _generated_runs(tmp_path) -> dict:
    """Small files of every eval shape, each also with odd rows among the plain ones."""
    runs = {
        "classic031": write_classic_run(tmp_path / "classic", mixed_run(30, 4) + [Roll(90, error="boom")]),
        "untimed": write_classic_run(tmp_path / "untimed", mixed_run(30, 4), timing=False),
        "legacy2025": write_legacy_run(tmp_path / "legacy", mixed_run(30, 4)),
        "v1": write_v1_run(tmp_path / "v1", mixed_run(30, 4) + [Roll(90, error="boom"), Roll(91, truncated=True)]),
        "validate": write_v1_validate(tmp_path / "validate", tasks=80),
        "plain": write_plain(tmp_path / "plain" / "rewards.jsonl", mixed_run(30, 4)),
    }
    text = tmp_path / "text" / "results.jsonl"
    text.parent.mkdir()
    text.write_text(
        "".join(
            json.dumps({"id": i // 4, "prompt": f"question {i // 4}", "completion": f" answer {i % 3} ", "reward": 1.0})
            + "\n"
            for i in range(120)
        )
    )
    runs["text"] = text
    for name in ("classic031", "legacy2025", "v1", "text"):
        odd = tmp_path / f"{name}-odd"
        src = runs[name]
        shutil.copytree(src, odd) if src.is_dir() else (odd.mkdir(), shutil.copy(src, odd / src.name))
        if name == "v1":
            _odd_v1_lines(odd)
        else:
            _odd_classic_lines(odd / "results.jsonl")
        runs[f"{name}-odd"] = odd
    validate_odd = tmp_path / "validate-odd"
    shutil.copytree(runs["validate"], validate_odd)
    rows = (validate_odd / "results.jsonl").read_text().splitlines()
    flat = {"mode": "noop", "task_key": "f", "index": 99, "reason": "invalid", "rewards": {"correct": 1, "x": "y"}}
    other = json.loads(rows[0])
    other["noop"] = "not an object"
    odd_rows = [json.dumps(flat), json.dumps({"example_id": 1, "reward": 1.0}), json.dumps(other), "", "{broken"]
    (validate_odd / "results.jsonl").write_text("\n".join(rows[:60] + odd_rows + rows[60:]) + "\n")  # past detection
    runs["validate-odd"] = validate_odd
    return runs


def _json_by_both_readers(capsys, monkeypatch, path) -> tuple[str, str]:
    """The script's JSON with the column readers (a chunk of about 2 KB at a time, so that clean chunks and odd ones
    mix), and with the reference row readers alone."""
    from vlab.evals import answers, validate

    small = chunks.line_chunks
    with monkeypatch.context() as m:
        m.setattr(chunks, "line_chunks", lambda path, stats, chunk_bytes=0, *a, **k: small(path, stats, 2048, *a, **k))
        script.main(["--results", str(path), "--json"])
        fast = capsys.readouterr().out
    with monkeypatch.context() as m:
        for module in (batches, answers, validate):  # each reader then takes its reference (row by row) path
            m.setattr(module, "msgspec", None)
        script.main(["--results", str(path), "--json"])
        reference = capsys.readouterr().out
    return fast, reference


def test_the_column_readers_write_the_reference_readers_json_on_every_generated_shape(tmp_path, capsys, monkeypatch):
    for name, path in _generated_runs(tmp_path).items():
        fast, reference = _json_by_both_readers(capsys, monkeypatch, path)
        assert json.loads(fast)["status"] != "error", (name, fast)
        assert fast == reference, name


def test_the_column_readers_write_the_reference_readers_json_on_every_real_file(real_data, capsys, monkeypatch):
    runs = sorted(p for p in (real_data / "verifiers-evals").iterdir() if p.is_dir())
    assert len(runs) >= 5
    for run in runs:
        fast, reference = _json_by_both_readers(capsys, monkeypatch, run)
        assert fast == reference, run.name


def test_v1_column_path_equals_row_path(tmp_path):
    folder = write_v1_run(tmp_path / "v1", mixed_run(20, 4) + [Roll(90, error="boom"), Roll(91, truncated=True)])
    source = locate(folder)
    fast, fast_stats = Columns(), ReadStats()
    for item in v1batches.iter_v1_batches(source, fast_stats, chunk_bytes=4096):
        assert not isinstance(item, list), "a clean file must take the column path"
        fast.add_batch(item)
    ref_stats = ReadStats()
    ref = collect(source, ref_stats, rows=iter_rows(source, ref_stats))
    _same_columns(fast, ref)
    assert list(fast.example_codes) == list(ref.example_codes)  # ids interned alike, in the same order
    assert {k: v.decode().tobytes() for k, v in fast.metric_cols.items()} == {
        k: v.decode().tobytes() for k, v in ref.metric_cols.items()
    }
    assert fast.weights == ref.weights and fast.weights_changed == ref.weights_changed
    assert (fast.reward_issues, fast.issue_lines, fast.error_kinds) == (
        ref.reward_issues,
        ref.issue_lines,
        ref.error_kinds,
    )
    assert fast_stats.episodes == ref_stats.episodes == 82 and fast_stats.lines == ref_stats.lines
    # odd episodes send their chunks to the row reader: the same columns, counts and line numbers
    _odd_v1_lines(folder)
    odd_stats, ref_stats = ReadStats(), ReadStats()
    items = list(v1batches.iter_v1_batches(source, odd_stats, chunk_bytes=4096))
    assert any(isinstance(i, list) for i in items) and any(not isinstance(i, list) for i in items)
    odd = Columns()
    for item in items:
        odd.add_batch(item) if not isinstance(item, list) else [odd.add(r) for r in item]
    ref = collect(source, ref_stats, rows=iter_rows(source, ref_stats))
    _same_columns(odd, ref)
    assert odd.weights_changed == ref.weights_changed and odd.issue_lines == ref.issue_lines
    assert (odd_stats.episodes, odd_stats.malformed_lines, odd_stats.blank) == (
        ref_stats.episodes,
        ref_stats.malformed_lines,
        ref_stats.blank,
    )


@pytest.mark.parametrize("odd", [False, True])
def test_the_answers_pass_reads_v1_traces_as_the_row_reader_does(tmp_path, monkeypatch, odd):
    from vlab.evals import answers

    folder = write_v1_run(tmp_path / "v1", mixed_run(20, 4) + [Roll(90, error="boom")])
    if odd:
        _odd_v1_lines(folder)
    source = locate(folder)
    reference = [(r.example, r.answer, r.gold) for r in iter_rows(source, answer_of=answers.final_answer)]
    assert list(answers._answer_rows(source)) == reference and reference
    small = chunks.line_chunks  # chunks of a few episodes: the odd ones read by the fast path too
    monkeypatch.setattr(chunks, "line_chunks", lambda path, stats, chunk_bytes=0, *a, **k: small(path, stats, 2048))
    assert list(answers._answer_rows(source)) == reference


def test_vf_validate_rows_read_by_msgspec_equal_json_s(tmp_path, monkeypatch):
    from vlab.evals import validate

    for folder in (
        write_v1_validate(tmp_path / "a", tasks=12, noop_reward=1.0),
        _generated_runs(tmp_path)["validate-odd"],
    ):
        source = locate(folder)
        fast_stats, ref_stats = ReadStats(), ReadStats()
        fast = [_validate_tuple(r) for r in validate.read_validate_rows(source, fast_stats)]
        with monkeypatch.context() as m:
            m.setattr(validate, "msgspec", None)
            ref = [_validate_tuple(r) for r in validate.read_validate_rows(source, ref_stats)]
        assert fast == ref and len(ref) >= 12
        assert (fast_stats.other_shape_rows, fast_stats.malformed_lines, fast_stats.blank) == (
            ref_stats.other_shape_rows,
            ref_stats.malformed_lines,
            ref_stats.blank,
        )


def _validate_tuple(row) -> tuple:
    def outcome(o):
        return None if o is None else (o.reason, o.rewards)

    return row.index, outcome(row.gold), outcome(row.noop)


@pytest.mark.parametrize("ending", ["newline", "none"])
def test_mapped_chunks_are_the_read_chunks(tmp_path, monkeypatch, ending):
    """The mapped reader (``chunks._mapped_chunks``) gives the chunks, line numbers, keys and counts of the reading
    one: a BOM, blank lines, CRLF, lines longer than a row is held (in the middle, at a chunk's start, at the end),
    no final newline, byte ranges."""
    monkeypatch.setattr(chunks, "MAX_LINE_BYTES", 300)
    rng = np.random.default_rng(5)
    lines = [b"\xef\xbb\xbf" + b'{"a": 0}']
    for i in range(400):
        kind = rng.integers(0, 14)
        lines.append(
            b""
            if kind == 0
            else b"x" * int(rng.integers(301, 900))
            if kind == 1
            else b"w" * int(rng.integers(299, 301))  # 300 bytes with its newline (held) or 301 (not)
            if kind == 3
            else (b'{"a": %d, "t": "%s"}' % (i, b"y" * int(rng.integers(0, 250)))) + (b"\r" if kind == 2 else b"")
        )
    lines += [b"z" * 700, b'{"a": -1}']  # a long line, then a last line (without a newline: ending "none")
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if ending == "newline" else b""))

    def read_chunks(mapped: bool, **kw):
        stats = ReadStats()
        with monkeypatch.context() as m:
            if not mapped:
                m.setattr(chunks, "_mapped", lambda p: None)
            out = [
                (c.first, c.count, c.keys, c.split(), bytes(c.head), c.tail)
                for c in chunks.line_chunks(path, stats, **kw)
            ]
        return out, (stats.lines, stats.too_long, stats.malformed_lines, stats.no_final_newline)

    for chunk_bytes in (64, 257, 1000, 1 << 20):
        for keys in (False, True):
            mapped, read = (
                read_chunks(True, chunk_bytes=chunk_bytes, keys=keys),
                read_chunks(False, chunk_bytes=chunk_bytes, keys=keys),
            )
            assert [c[:4] for c in mapped[0]] == [c[:4] for c in read[0]] and mapped[1] == read[1]
            assert b"".join(c[4] + c[5] for c in mapped[0]) == b"".join(c[4] + c[5] for c in read[0])
        for parts in (2, 5):
            for byte_range in chunks.split_ranges(path, parts):
                mapped = read_chunks(True, chunk_bytes=chunk_bytes, byte_range=byte_range, keys=True)
                read = read_chunks(False, chunk_bytes=chunk_bytes, byte_range=byte_range, keys=True)
                assert [c[:4] for c in mapped[0]] == [c[:4] for c in read[0]] and mapped[1] == read[1]
    assert read_chunks(False, chunk_bytes=257)[1][1] > 0  # lines over the limit were met
