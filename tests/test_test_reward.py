"""test_reward and the verifiers adapter (vlab.env) on environments written by the tests."""

from __future__ import annotations

import json
import subprocess
import sys

import env_fixtures as fx
import pytest
from conftest import ROOT, VERIFIERS, assert_result, run_script

from vlab.core.result import EXIT_PREREQ, EXIT_USAGE, PrerequisiteError, Result, UsageError
from vlab.env import Reply, load_env
from vlab.reward.checks import TestRewardRequest, run_test_reward


def checks(result: Result) -> dict[str, str]:
    return {c.id: c.status for c in result.checks}


def check_msg(result: Result, cid: str) -> str:
    return next(c.message for c in result.checks if c.id == cid)


def run_checks(path, data, **opts) -> Result:
    result = Result("test_reward")
    run_test_reward(
        TestRewardRequest(env=str(path), env_args={"dataset_path": str(data)}, **{"num_examples": 4, **opts}), result
    )
    return result


# -- classic -------------------------------------------------------------------------------


@pytest.mark.classic
def test_classic_rich_env_passes_and_uses_verifiers_injection(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "rich_env", fx.RICH, fx.RICH_RUBRIC)
    result = run_checks(path, data)
    assert result.exit_code() == 0, [c.to_dict() for c in result.checks]
    env = result.data["environment"]
    assert env["kind"] == "classic" and env["verifiers_version"] == VERIFIERS.version
    assert {"name": "diversity", "weight": 0.1, "group": True} in env["reward_functions"]
    by_probe = {p["probe"]: p for p in result.data["probes"]["by_probe"]}
    gold = by_probe["gold:parser"]["functions"]
    # parser injected, async function awaited, extra column injected, group function scored
    assert gold["exact_match"] == 1.0 and gold["async_format"] == 1.0 and gold["uses_question"] == 1.0
    assert by_probe["wrong:same_format"]["functions"]["exact_match"] == 0.0
    assert by_probe["malformed:empty"]["functions"]["async_format"] == 0.0
    assert 0 < gold["diversity"] <= 1.0
    assert checks(result)["format_enforced"] == "pass"


@pytest.mark.classic
def test_classic_broken_functions_are_caught(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "broken_env", fx.BROKEN, fx.BROKEN_RUBRIC)
    result = run_checks(path, data, timeout=0.5, num_examples=2)
    status = checks(result)
    assert status["exceptions"] == "fail"
    msg = check_msg(result, "exceptions")
    assert "raises raised IndexError" in msg and "scored these 0.0" in msg
    assert "broken_env.py" in msg  # the traceback summary points at the user's file
    assert status["finite"] == "fail" and "nan_reward" in check_msg(result, "finite")
    assert status["speed"] == "fail" and "hangs, hangs_async" in check_msg(result, "speed")
    assert result.exit_code() == 1
    # the NaN poisons the total; the correct function still works next to the broken ones
    assert status["gold_reward"] == "fail" and "not a finite number" in check_msg(result, "gold_reward")
    assert status["correctness_margin"] == "pass" and "exact_match" in check_msg(result, "correctness_margin")


@pytest.mark.classic
def test_classic_lenient_substring_reward_is_hacked(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "lenient_env", fx.LENIENT, fx.LENIENT_RUBRIC)
    result = run_checks(path, data)
    assert checks(result)["reward_hacking"] == "fail"
    msg = check_msg(result, "reward_hacking")
    for probe in ("hack:many_candidates", "hack:long_rambling", "hack:repeated_tags", "hack:gold_in_wrong_tag"):
        assert probe in msg
    assert "substring_match" in msg
    assert checks(result)["gold_reward"] == "pass"  # gold itself is fine; the reward is too lenient
    assert checks(result)["format_enforced"] == "warn"  # "I believe it is 31" earns the full reward
    assert result.exit_code() == 1 and result.next_steps


@pytest.mark.classic
def test_reward_that_never_matches_says_so(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "never_env", fx.NEVER_MATCHES, fx.NEVER_RUBRIC)
    result = run_checks(path, data)
    assert checks(result)["gold_reward"] == "fail"
    assert "--gold-template" in next(c.hint for c in result.checks if c.id == "gold_reward")
    assert checks(result)["rewards_vary"] == "fail"
    # the user states the format: now gold matches
    fixed = run_checks(path, data, gold_template="<answer>ANSWER: {answer}</answer>")
    assert checks(fixed)["gold_reward"] == "pass", [c.to_dict() for c in fixed.checks]


@pytest.mark.classic
def test_classic_multiturn_env_is_driven_through_its_rollout_loop(tmp_path):
    data = fx.write_dataset(tmp_path)
    env = load_env(str(fx.multiturn_env(tmp_path, "mt_env")), {"dataset_path": str(data)})
    assert env.capabilities.multi_turn
    row = env.rows(1)[0]
    seen = []

    def generate(messages, sampling_args):
        seen.append(messages)
        return Reply(
            text=f"<answer>{row.answer}</answer>",
            prompt_token_ids=[1, 2],
            completion_token_ids=[3],
            completion_logprobs=[-0.5],
        )

    out = env.rollout_sync(row, generate)
    assert len(seen) == 2 and seen[1][-1]["content"].startswith("Are you sure")  # env_response reached the model
    assert out.score.total == 1.0 and len(out.turns) == 2
    assert out.turns[0] == {"prompt_ids": [1, 2], "completion_ids": [3], "completion_logprobs": [-0.5]}
    # probes of a multi-turn env go through the same loop
    result = run_checks(tmp_path / "mt_env.py", data)
    assert checks(result)["gold_reward"] == "pass", [c.to_dict() for c in result.checks]


@pytest.mark.classic
def test_classic_tool_env_runs_tools_offline(tmp_path):
    data = fx.write_dataset(tmp_path)
    env = load_env(str(fx.tool_env(tmp_path, "tool_env")), {"dataset_path": str(data)})
    row = env.rows(1)[0]
    replies = iter(
        [
            Reply(text="", tool_calls=[{"id": "c1", "name": "calculator", "arguments": {"expression": "3*12-5"}}]),
            Reply(text="<answer>31</answer>"),
        ]
    )
    tools_seen = []

    def generate(messages, sampling_args, tools=None):
        tools_seen.append([t["name"] for t in tools or []])
        return next(replies)

    out = env.rollout_sync(row, generate)
    tool_msgs = [m for m in out.completion if m["role"] == "tool"]
    assert tool_msgs and tool_msgs[0]["content"] == "31"
    assert out.score.per_function["exact_match"] == 1.0 and tools_seen[0] == ["calculator"]
    result = run_checks(tmp_path / "tool_env.py", data)
    assert result.exit_code() == 0, [c.to_dict() for c in result.checks]


@pytest.mark.classic
def test_completions_file_reports_distribution_and_label_agreement(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "labels_env", fx.LENIENT, fx.LENIENT_RUBRIC)
    lines = [
        {"example_id": 0, "completion": "<answer>31</answer>", "is_correct": True},
        {"example_id": 1, "completion": "<answer>85</answer>", "is_correct": False},
        {
            "question": fx.ROWS[2]["question"],
            "completion": [{"role": "assistant", "content": "59? or 60 <answer>60</answer>"}],
            "is_correct": False,
        },
        {"example_id": 3, "completion": "<answer>249</answer>", "is_correct": True},
    ]
    comp = tmp_path / "real.jsonl"
    comp.write_text("\n".join(json.dumps(x) for x in lines))
    result = run_checks(path, data, completions=str(comp), skip_probes=True)
    agree = result.data["label_agreement"]
    assert agree["labelled"] == 4 and agree["agreement"] == 0.75
    assert [d["line"] for d in agree["disagreeing"]] == [3]
    assert checks(result)["label_agreement"] == "fail"
    assert result.data["completions"]["n"] == 4 and result.data["completions"]["mean"] == 0.75


@pytest.mark.classic
def test_custom_cases_and_gsm8k_preset(tmp_path):
    data = fx.write_dataset(tmp_path, gsm8k=True)
    path = fx.classic_env(tmp_path, "gsm_env", fx.EXACT_HASH, "vf.Rubric(funcs=[exact_match], parser=parser)")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"example_id": 0, "completion": "<answer>31</answer>", "expected": 1.0},
                {"example_id": 0, "completion": "<answer>31.0</answer>", "expected": 1.0, "name": "decimal"},
                {"example_id": 1, "completion": "", "expected": [0, 0.1]},
            ]
        )
    )
    result = run_checks(path, data, custom=str(cases), preset="gsm8k")
    table = result.data["custom"]
    assert [row["ok"] for row in table] == [True, False, True]  # exact string match rejects 31.0
    assert checks(result)["custom_cases"] == "fail" and "decimal" in check_msg(result, "custom_cases")
    assert checks(result)["gsm8k_equivalents"] == "warn"


@pytest.mark.classic
def test_bad_inputs_are_usage_errors(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "args_env", fx.EXACT, "vf.Rubric(funcs=[exact_match], parser=parser)")
    strict = fx.write_module(tmp_path, "strict_env", "def load_environment(dataset_path):\n    pass\n")
    with pytest.raises(UsageError):
        load_env(str(strict), {"dataset_path": str(data), "no_such_arg": 1})
    # an env that forwards **kwargs accepts the typo: test_reward warns about it
    result = Result("test_reward")
    run_test_reward(
        TestRewardRequest(env=str(path), env_args={"dataset_path": str(data), "no_such_arg": 1}, num_examples=1), result
    )
    assert checks(result)["env_args"] == "warn" and "no_such_arg" in check_msg(result, "env_args")
    with pytest.raises(UsageError):
        load_env(str(path), {"dataset_path": str(tmp_path / "missing.jsonl")})
    with pytest.raises(UsageError):
        load_env(str(tmp_path / "nope.py"))
    missing_dep = fx.write_module(
        tmp_path, "dep_env", "import not_a_real_package_xyz\n\ndef load_environment():\n    pass\n"
    )
    with pytest.raises(PrerequisiteError) as err:
        load_env(str(missing_dep))
    assert "not_a_real_package_xyz" in err.value.message


@pytest.mark.classic
def test_judge_rubric_without_api_key_is_a_prerequisite(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    path = fx.write_module(
        tmp_path,
        "judge_env",
        """
        import verifiers as vf
        from datasets import Dataset

        def load_environment():
            return vf.SingleTurnEnv(dataset=Dataset.from_list([{"question": "q", "answer": "1"}]), rubric=vf.JudgeRubric())
    """,
    )
    with pytest.raises(PrerequisiteError) as err:
        load_env(str(path))
    assert "OPENAI_API_KEY" in err.value.hint


@pytest.mark.classic
def test_dataset_that_needs_the_network_exits_4(tmp_path):
    fx.write_module(
        tmp_path,
        "net_env",
        """
        import verifiers as vf
        from datasets import load_dataset

        def load_environment():
            return vf.SingleTurnEnv(dataset=load_dataset("openai/gsm8k", "main", split="train"))
    """,
    )
    offline = {"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    run = run_script("test_reward", str(tmp_path / "net_env.py"), "--json", env=offline)
    obj = assert_result(run.json, "test_reward", 4)
    assert "network" in obj["summary"]


@pytest.mark.classic
def test_env_given_as_package_folder_or_installed_id(tmp_path, monkeypatch):
    data = fx.write_dataset(tmp_path)
    folder = tmp_path / "my-folder-env"
    folder.mkdir()
    fx.classic_env(folder, "my_folder_env", fx.EXACT, "vf.Rubric(funcs=[exact_match], parser=parser)")
    (folder / "pyproject.toml").write_text('[project]\nname = "my-folder-env"\n')
    env = load_env(str(folder), {"dataset_path": str(data)})
    assert env.capabilities.generation == "classic" and env.name == "my_folder_env"
    site = tmp_path / "site"
    site.mkdir()
    fx.classic_env(site, "hub_env_xyz", fx.EXACT, "vf.Rubric(funcs=[exact_match], parser=parser)")
    monkeypatch.syspath_prepend(str(site))
    env = load_env("someone/hub-env-xyz", {"dataset_path": str(data)})  # owner/name -> module hub_env_xyz
    assert env.name == "hub_env_xyz" and env.num_rows() == len(fx.ROWS)
    with pytest.raises(UsageError) as err:
        load_env("someone/not-installed-env-xyz")
    assert "prime env install someone/not-installed-env-xyz" in err.value.hint


# -- v1 ---------------------------------------------------------------------------------------


@pytest.mark.v1
def test_v1_correct_taskset_passes(tmp_path):
    data = fx.write_dataset(tmp_path)
    result = run_checks(fx.v1_env(tmp_path, "v1_ok", fx.V1_CORRECT), data)
    assert result.exit_code() == 0, [c.to_dict() for c in result.checks]
    assert result.data["environment"]["kind"] == "v1"


@pytest.mark.v1
def test_v1_broken_taskset_reports_the_exception(tmp_path):
    data = fx.write_dataset(tmp_path)
    result = run_checks(fx.v1_env(tmp_path, "v1_broken", fx.V1_BROKEN), data)
    assert checks(result)["exceptions"] == "fail"
    msg = check_msg(result, "exceptions")
    assert "crashes raised KeyError" in msg and "v1_broken.py" in msg


@pytest.mark.v1
def test_v1_lenient_taskset_is_hacked(tmp_path):
    data = fx.write_dataset(tmp_path)
    result = run_checks(fx.v1_env(tmp_path, "v1_lenient", fx.V1_LENIENT), data)
    assert checks(result)["reward_hacking"] == "fail" and "contains" in check_msg(result, "reward_hacking")


# -- the script, as a user runs it -------------------------------------------------------------


@pytest.mark.classic
def test_script_json_on_demo_classic_env(tmp_path):
    data = tmp_path / "arith.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "demo" / "make_data.py"), str(data), "20"], check=True, capture_output=True
    )
    run = run_script(
        "test_reward",
        "demo/environments/arith_classic/arith_classic.py",
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--json",
        "-n",
        "3",
    )
    obj = assert_result(run.json, "test_reward", 0)
    assert obj["data"]["environment"]["kind"] == "classic"
    assert obj["data"]["probes"]["rows"] == 3


def test_script_bad_env_args_exit_2():
    run = run_script("test_reward", "demo/environments/arith_v1/arith_v1.py", "--env-args", "{not json", "--json")
    assert_result(run.json, "test_reward", EXIT_USAGE)


@pytest.mark.skipif(VERIFIERS.classic, reason="needs verifiers >= 0.4 (no classic API)")
def test_classic_env_under_verifiers_04_exits_3(tmp_path):
    run = run_script("test_reward", "demo/environments/arith_classic/arith_classic.py", "--json")
    obj = assert_result(run.json, "test_reward", EXIT_PREREQ)
    assert 'pip install "verifiers==0.3.1"' in obj["next_steps"][0]


@pytest.mark.v1
def test_v1_completions_and_custom_cases(tmp_path):
    data = fx.write_dataset(tmp_path)
    path = fx.v1_env(tmp_path, "v1_files", fx.V1_CORRECT)
    comp = tmp_path / "real.jsonl"
    comp.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"example_id": 0, "completion": "<answer>31</answer>", "is_correct": True},
                {
                    "example_id": 1,
                    "completion": [{"role": "assistant", "content": "<answer>84</answer>"}],
                    "is_correct": True,
                },
                {"example_id": 2, "completion": "no idea", "is_correct": False},
            ]
        )
    )
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps({"question": fx.ROWS[3]["question"], "completion": "<answer>249</answer>", "expected": 1}) + "\n"
    )
    result = run_checks(path, data, completions=str(comp), custom=str(cases), skip_probes=True)
    assert result.data["label_agreement"]["agreement"] == 1.0
    assert checks(result)["custom_cases"] == "pass" and result.exit_code() == 0


def test_script_json_on_demo_v1_env(tmp_path):
    if not VERIFIERS.v1:
        pytest.skip("needs verifiers.v1")
    data = tmp_path / "arith.jsonl"
    subprocess.run(
        [sys.executable, str(ROOT / "demo" / "make_data.py"), str(data), "20"], check=True, capture_output=True
    )
    run = run_script(
        "test_reward",
        "demo/environments/arith_v1/arith_v1.py",
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--json",
        "-n",
        "3",
    )
    obj = assert_result(run.json, "test_reward", 0)
    assert obj["data"]["environment"]["kind"] == "v1"
    assert obj["data"]["environment"]["verifiers_version"] == VERIFIERS.version


@pytest.mark.classic
def test_human_report_shows_probe_table_and_disagreements(tmp_path, capsys):
    import io

    from vlab.core.console import console
    from vlab.reward.render import render

    data = fx.write_dataset(tmp_path)
    path = fx.classic_env(tmp_path, "human_env", fx.LENIENT, fx.LENIENT_RUBRIC)
    comp = tmp_path / "real.jsonl"
    comp.write_text(json.dumps({"example_id": 1, "completion": "84 or 85 <answer>85</answer>", "is_correct": False}))
    request = TestRewardRequest(
        env=str(path), env_args={"dataset_path": str(data)}, completions=str(comp), num_examples=1
    )
    result = Result("test_reward")
    run_test_reward(request, result)
    buf = io.StringIO()
    render(result, console(buf), request)
    text = buf.getvalue()
    assert "hack:many_candidates" in text and "substring_match" in text and "mean call ms" in text
    assert "disagreeing" in text and "<answer>85</answer>" in text
    # the scoreboard: the lenient reward pays the hacks as much as the gold, and says so
    assert "scoreboard: mean reward per probe family" in text and "CLOSE TO GOLD" in text
    board = {e["family"]: e for e in result.data["scoreboard"]["families"]}
    assert board["hack:many_candidates"]["close_to_gold"] and not board["wrong"]["close_to_gold"]
    render(result, None, request)  # plain text when rich is missing
    assert "hack:repeated_tags" in capsys.readouterr().out


@pytest.mark.classic
@pytest.mark.parametrize(
    "system, pattern",
    [
        ("Think briefly. End with a line in the format: Answer: <number>", r"^Answer: (-?\d+)\s*$"),
        ("Reply with [number only].", r"^\s*(-?\d+)\s*$"),
    ],
)
def test_gold_format_comes_from_the_system_prompt(tmp_path, system, pattern):
    data = fx.write_dataset(tmp_path)
    name = "sp_env_" + str(abs(hash(system)) % 10_000)
    path = fx.write_module(
        tmp_path,
        name,
        f"""
        import re
        import verifiers as vf
        from datasets import load_dataset

        def load_environment(dataset_path):
            def correct(completion, answer):
                m = re.search({pattern!r}, completion[-1].content or "", re.M)
                return 1.0 if m and m.group(1) == answer else 0.0
            return vf.SingleTurnEnv(dataset=load_dataset("json", data_files=dataset_path, split="train"),
                                    system_prompt={system!r}, rubric=vf.Rubric(funcs=[correct]))
    """,
    )
    result = run_checks(path, data)
    assert checks(result)["gold_reward"] == "pass", [c.to_dict() for c in result.checks]
    assert "gold:system_prompt" in check_msg(result, "gold_reward")
    assert result.exit_code() == 0


@pytest.mark.classic
def test_system_prompt_asking_for_another_format_than_the_parser_reads_is_caught(tmp_path):
    """Gold in the parser's format scores 1, but a model told to use \\boxed{} would always score 0."""
    data = fx.write_dataset(tmp_path)
    agreeing = fx.classic_env(tmp_path, "agreeing_env", fx.EXACT, "vf.Rubric(funcs=[exact_match], parser=parser)")
    result = run_checks(agreeing, data)
    assert checks(result)["prompt_format"] == "pass" and result.exit_code() == 0, [c.to_dict() for c in result.checks]

    text = agreeing.read_text().replace(
        'SYSTEM = "Think, then give only the number inside <answer>...</answer>."',
        'SYSTEM = "Think step by step, then put the final number in \\\\boxed{}."',
    )
    assert "boxed" in text
    mismatched = fx.write_module(tmp_path, "mismatched_env", text)
    result = run_checks(mismatched, data)
    status = checks(result)
    assert status["gold_reward"] == "pass"  # the parser's own format still works...
    assert status["prompt_format"] == "fail" and result.exit_code() == 1  # ...but not what the prompt asks for
    assert "boxed" in check_msg(result, "prompt_format")
