"""submit_training stage by stage (issue 38), offline and without building anything.

- The token budget: one computation (``train.turns.Budget``) names the same sum for test_reward,
  local_train and submit_training; submit_training refuses a config whose seq_len cannot hold the
  environment's turns (``hosted.tokens``), on the config's own numbers.
- Nothing to rehearse (no ``environments/<module>/`` here, no uv) stops before anything is written,
  unless ``--no-rehearse`` says to write the config without a rehearsal.
- The ``rehearse-data`` hint names the file's place as the user sees it from the current folder.
- ``run_submit_training`` hands the request through its stages in order; each stage is tested alone.

The rehearsal itself (a wheel built and loaded) is tests/test_rehearse.py's.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomlkit
from conftest import assert_result, run_script
from trainconfig_fixtures import FLAT_CONFIGS, NATIVE_CONFIG

from vlab.core.result import EXIT_FAIL, EXIT_PREREQ, Result, UsageError
from vlab.hosted import prime, rehearse, submit
from vlab.hosted.builder import load_template
from vlab.hosted.rehearse import RehearseOptions, Source, Wheel
from vlab.hosted.rehearse_data import data_checks
from vlab.hosted.request import EnvEvent, SubmitRequest
from vlab.hosted.tokens import config_budget
from vlab.train.turns import Budget, Measured, check_config_budget, check_token_budget, check_turn_budget

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TOOL = "submit_training"
MODEL = "Qwen/Qwen3-4B-Instruct-2507"
WHERE = "orchestrator.train.source[0]"


def checks_of(result: Result, cid: str) -> list:
    return [c for c in result.checks if c.id == cid]


def request(*env_args: str, **kw) -> SubmitRequest:
    events = [EnvEvent("env", kw.pop("env", "me/calc-tool"))] + [EnvEvent("arg", a) for a in env_args]
    return SubmitRequest(**{"model": MODEL, "env_events": tuple(events), "offline": True, **kw})


# -- 1. one token budget ---------------------------------------------------------------------------


def test_the_budget_writes_out_its_sum():
    budget = Budget(2048, 512, 6, 211, 64)
    assert budget.needed() == 211 + 6 * 512 + 5 * 64 == 3603 and budget.fit == 3 and not budget.holds()
    assert budget.sum() == "6 turns x 512 tokens + prompt 211 + 5 tool replies x 64 = 3603 tokens"
    assert Budget(2048, 512, 1, 211).sum() == "1 turn x 512 tokens + prompt 211 = 723 tokens"
    assert Budget(4096, 512, 6, 211, 64).holds()


def test_test_reward_local_train_and_submit_training_name_the_same_sum():
    """The same numbers give the same total in each tool's message: one computation, three verdicts."""
    need = 211 + 6 * 512 + 5 * 64
    reward = Result("test_reward")
    check_token_budget(reward, 2048, 512, 6, "the environment's max_turns=6 turns", Measured(211, 64, "counted"))
    assert f"about {need} tokens" in reward.checks[0].message and reward.checks[0].status == "warn"
    hosted = Result(TOOL)
    check_config_budget(hosted, WHERE, Budget(2048, 512, 6, 211, 64), "max_turns=6 turns", "sizes", ("a", "b", "c"))
    assert f"= {need} tokens" in hosted.checks[0].message and hosted.checks[0].status == "fail"
    local = Result("local_train")  # the assumed prompt (512) and tool reply (64)
    check_turn_budget({"max_turns": 6}, 512, 2048, local)
    assert f"= {512 + 6 * 512 + 5 * 64} tokens" in local.checks[0].message and local.checks[0].status == "warn"


def _plain(seq_len: int | None = 2048, max_tokens: int = 512, **args) -> dict:
    doc = load_template("hosted")
    if seq_len is not None:
        doc["seq_len"] = seq_len
    doc["orchestrator"]["train"]["sampling"]["max_completion_tokens"] = max_tokens
    taskset = doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]
    taskset["id"] = "me/calc-tool"
    taskset.update(args)
    return tomllib.loads(tomlkit.dumps(doc))


def _rehearsed(**rollout) -> Result:
    """A result as the rehearsal leaves it: the loaded environment's turn limit and measured prompt."""
    result = Result(TOOL)
    sized = {"multi_turn": True, "max_turns": 6, "prompt_tokens": 211, "tools_counted": True}
    sized.update({"counted_by": "an estimate of 3 characters per token", **rollout})
    result.data["rehearsal"] = {"sources": [{"where": WHERE, "env_id": "me/calc-tool", "rollout": sized}]}
    return result


@pytest.mark.parametrize("seq_len", [1024, 2048])
def test_a_seq_len_that_cannot_hold_the_rehearsed_turns_fails_naming_the_sum_and_the_fix(seq_len):
    """Issue 38: a 6-turn tool environment at 512 tokens a turn in 2048 (SKILL.md's command) or 1024 tokens."""
    result = _rehearsed()
    config_budget(result, _plain(seq_len))
    (check,) = checks_of(result, "token-budget")
    assert check.status == "fail" and check.exit_code == EXIT_FAIL and result.exit_code() == EXIT_FAIL
    assert f"{WHERE} (me/calc-tool): seq_len {seq_len} cannot hold max_turns=6 turns" in check.message
    assert "6 turns x 512 tokens + prompt 211 + 5 tool replies x 64 = 3603 tokens" in check.message
    assert "the offered tools included" in check.message and "long rollouts would be cut" in check.message
    assert check.hint.startswith("raise seq_len to 3603 (--seq-len 3603), or lower the tokens per turn (--max-tokens")
    assert "task.max_turns" in check.hint
    assert result.data["token_budget"][0]["needed"] == 3603


def test_a_seq_len_that_holds_the_turns_passes():
    result = _rehearsed()
    config_budget(result, _plain(4096))
    (check,) = checks_of(result, "token-budget")
    assert check.status == "pass" and "seq_len 4096 holds max_turns=6 turns" in check.message
    single = _rehearsed(multi_turn=False, max_turns=None, prompt_tokens=300)
    config_budget(single, _plain(2048))
    (check,) = checks_of(single, "token-budget")
    assert check.status == "pass" and "one turn (a single-turn environment)" in check.message
    assert "1 turn x 512 tokens + prompt 300 = 812 tokens" in check.message


def test_a_long_prompt_overflows_even_a_single_turn():
    result = _rehearsed(multi_turn=False, max_turns=None, prompt_tokens=1800)
    config_budget(result, _plain(2048))
    (check,) = checks_of(result, "token-budget")
    assert check.status == "fail" and "1 turn x 512 tokens + prompt 1800 = 2312 tokens" in check.message
    assert "raise seq_len to 2312 (--seq-len 2312)" in check.hint


def test_without_a_rehearsal_the_arguments_turn_limit_is_checked_against_an_assumed_prompt():
    result = Result(TOOL)
    config_budget(result, _plain(2048, max_turns=5), rehearsing=False)
    (check,) = checks_of(result, "token-budget")
    assert check.status == "fail" and "5 turns x 512 tokens + prompt 512 + 4 tool replies x 64 = 3328" in check.message
    assert "prompt assumed 512 tokens" in check.message and "max_turns in the source's" in check.hint
    unknown = Result(TOOL)  # no argument names a limit, and nothing was loaded: said, never passed
    config_budget(unknown, _plain(2048), rehearsing=False)
    (check,) = checks_of(unknown, "token-budget")
    assert check.status == "skip" and "turn limit is unknown" in check.message and "--no-rehearse" in check.hint


def test_a_multi_turn_environment_without_a_limit_warns_and_a_source_s_own_tokens_count():
    result = _rehearsed(max_turns=None)
    config_budget(result, _plain(4096))
    (check,) = checks_of(result, "token-budget")
    assert check.status == "warn" and "no turn limit" in check.message
    plain = _plain(4096)
    plain["orchestrator"]["train"]["source"][0]["sampling"] = {"max_completion_tokens": 1024}
    result = _rehearsed()
    config_budget(result, plain)
    (check,) = checks_of(result, "token-budget")
    assert check.status == "fail" and "6 turns x 1024 tokens" in check.message
    assert f"{WHERE}.sampling.max_completion_tokens" in check.hint


def test_the_flat_quickstart_gets_a_seq_len_that_holds_its_turns_unless_one_was_named(tmp_path):
    """Issue 52: the 2025 alphabet-sort quickstart (max_turns = 5, max_tokens = 512) names no seq_len: the
    template's 2048 cannot hold 3328 tokens, so submit_training writes 4096 (3328 rounded up to a multiple of
    1024) and says so. A seq_len the user named that cannot hold them (--seq-len, or one in the flat file)
    still fails, naming the sum."""
    flat = tmp_path / "old.toml"
    flat.write_text(FLAT_CONFIGS["alphabet-sort"])
    args = ["--from-flat", str(flat), "--no-rehearse", "--offline", "--json"]
    r = run_script(TOOL, *args, "--output", "new.toml", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 0)
    chosen = next(c for c in obj["checks"] if c["id"] == "seq-len")
    assert chosen["status"] == "pass" and chosen["message"].startswith("seq_len = 4096, chosen because none was named")
    assert "the default 2048 cannot hold" in chosen["message"] and "(3328 tokens)" in chosen["message"]
    assert "--seq-len N" in chosen["message"]
    budget = next(c for c in obj["checks"] if c["id"] == "token-budget")
    assert budget["status"] == "pass" and "seq_len 4096 holds max_turns=5 turns" in budget["message"]
    written = (tmp_path / "new.toml").read_text()
    assert tomllib.loads(written)["seq_len"] == 4096 and "seq_len = 4096       # prompt + completion" in written
    for named, extra in (("the flag", ["--seq-len", "2048"]), ("the flat file", [])):
        if not extra:
            flat.write_text(
                FLAT_CONFIGS["alphabet-sort"].replace("max_steps = 500\n", "max_steps = 500\nseq_len = 2048\n")
            )
        r = run_script(TOOL, *args, *extra, "--output", "named.toml", cwd=tmp_path)
        obj = assert_result(r.json, TOOL, 1)
        failed = [c for c in obj["checks"] if c["status"] == "fail"]
        assert [c["id"] for c in failed] == ["token-budget"], named
        assert "seq_len 2048 cannot hold max_turns=5 turns: 5 turns x 512 tokens" in failed[0]["message"]
        assert "raise seq_len to 3328 (--seq-len 3328)" in failed[0]["hint"]
        assert not [c for c in obj["checks"] if c["id"] == "seq-len"] and not (tmp_path / "named.toml").exists()


def test_a_seq_len_is_chosen_for_the_rehearsed_turns_only_when_none_was_named():
    """The rehearsed 6-turn tool environment (3603 tokens) in a config whose seq_len nobody named: 4096; a
    longer one rounds to the next multiple of 1024; a seq_len that holds the turns is left alone."""
    assert Budget(2048, 512, 6, 211, 64).fitting_seq_len() == 4096
    assert Budget(2048, 1024, 5, 211, 64).fitting_seq_len() == 6144  # 5587 tokens
    result = _rehearsed()
    assert config_budget(result, _plain(2048), choose=True) == 4096
    assert checks_of(result, "seq-len")[0].status == "pass"
    assert [c.status for c in checks_of(result, "token-budget")] == ["pass"]
    assert result.data["token_budget"][0]["seq_len"] == 4096
    kept = _rehearsed()
    assert config_budget(kept, _plain(8192), choose=True) is None and not checks_of(kept, "seq-len")
    named = _rehearsed()
    assert config_budget(named, _plain(2048)) is None and checks_of(named, "token-budget")[0].status == "fail"


def test_a_new_config_from_the_template_gets_the_seq_len_its_turns_need(tmp_path):
    req = request("max_turns=5", rehearse=False, output=str(tmp_path / "c.toml"))
    result = Result(TOOL)
    draft = submit.build_draft(req, result)
    assert not draft.seq_len_named
    submit.rehearse_draft(req, draft, submit.gate_draft(req, draft, result), result)
    assert draft.plain["seq_len"] == 4096 and "seq_len = 4096" in draft.final_text
    written = submit.write_draft(req, draft, submit.gate_draft(req, draft, result), result)
    assert tomllib.loads(written.path.read_text())["seq_len"] == 4096
    assert submit.build_draft(request("max_turns=5", seq_len=2048), Result(TOOL)).seq_len_named


# -- 2. no config without a rehearsal ----------------------------------------------------------------


def test_nothing_to_rehearse_writes_nothing_and_names_where_it_looked_and_the_two_ways_on(tmp_path):
    args = ["--model", MODEL, "--env", "me/tweet-emotion", "--env-arg", 'dataset_path="train.jsonl"', "--offline"]
    r = run_script(TOOL, *args, "--output", "configs/t.toml", "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 1)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse"], failed
    message, hint = failed[0]["message"], failed[0]["hint"]
    assert "me/tweet-emotion: nothing to rehearse: no environments/tweet_emotion/ with a pyproject.toml" in message
    assert str(tmp_path.resolve()) in message and "the config is not written without a rehearsal" in message
    assert "from the project folder that holds environments/tweet_emotion/" in hint and "--no-rehearse" in hint
    assert obj["data"]["written"] is False and not (tmp_path / "configs" / "t.toml").exists()
    # said knowingly: written, and the result says it was not rehearsed
    r = run_script(TOOL, *args, "--no-rehearse", "--output", "configs/t.toml", "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 0)
    assert [c["status"] for c in obj["checks"] if c["id"] == "rehearse"] == ["skip"]
    assert (tmp_path / "configs" / "t.toml").is_file()


def _source_folder(root: Path, module: str = "calc_tool") -> Path:
    folder = root / "environments" / module
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{module}"\nversion = "0.1.0"\n')
    (folder / f"{module}.py").write_text("")
    return folder


def test_no_uv_is_a_missing_prerequisite_for_submit_training_and_a_warning_for_local_train(tmp_path, monkeypatch):
    _source_folder(tmp_path)
    monkeypatch.setattr(rehearse, "uv_command", lambda: None)
    plain = _plain(4096)
    for required, status in ((True, "fail"), (False, "warn")):
        result = Result(TOOL)
        rehearse.rehearse(result, plain, "hosted", RehearseOptions(cwd=str(tmp_path), required=required))
        (check,) = checks_of(result, "rehearse")
        assert check.status == status and "uv is not installed" in check.message and "pip install uv" in check.hint
        assert ("--no-rehearse" in check.hint) is required
    assert result.exit_code() == 0 and check.exit_code == EXIT_PREREQ


def test_local_train_s_hand_off_still_warns_when_nothing_can_be_rehearsed(tmp_path):
    result = Result("local_train")
    rehearse.rehearse(result, _plain(4096), "prime-rl", RehearseOptions(cwd=str(tmp_path)))
    (check,) = checks_of(result, "rehearse")
    assert check.status == "warn" and "no source folder found" in check.message


# -- 3. hints name the path the user sees -----------------------------------------------------------


def test_the_rehearse_data_hint_names_the_file_from_the_current_folder(tmp_path):
    folder = tmp_path / "environments" / "tweet_emotion"
    folder.mkdir(parents=True)
    src = Source(WHERE, "me/tweet-emotion", {"dataset_path": "train.jsonl"})
    wheel = Wheel(tmp_path / "tweet_emotion-0.1.0-py3-none-any.whl", "", ["tweet_emotion.py"], [])

    def hint(cwd: Path) -> str:
        (check,) = data_checks(src, wheel, folder, "hosted", str(cwd))
        assert check.status == "fail" and "is not in the built wheel" in check.message
        return check.hint

    assert hint(tmp_path).startswith("put the file at environments/tweet_emotion/data/train.jsonl and ship data/")
    assert hint(tmp_path / "environments").startswith("put the file at tweet_emotion/data/train.jsonl ")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert hint(elsewhere).startswith(f"put the file at {(folder / 'data' / 'train.jsonl').resolve()} ")


# -- 4. the stages ------------------------------------------------------------------------------------


def test_build_draft_makes_the_document_from_the_flags_a_config_or_a_flat_file(tmp_path):
    result = Result(TOOL)
    draft = submit.build_draft(request("max_turns=3", max_steps=20), result)
    assert draft.plain["model"]["name"] == MODEL and draft.plain["max_steps"] == 20 and draft.text.endswith("\n")
    taskset = draft.plain["orchestrator"]["train"]["source"][0]["env"]["taskset"]
    assert taskset == {"id": "me/calc-tool", "max_turns": 3} and draft.starting_text is None
    config = tmp_path / "run.toml"
    config.write_text(NATIVE_CONFIG)
    draft = submit.build_draft(SubmitRequest(config=str(config), seq_len=4096), result)
    assert draft.starting_text == NATIVE_CONFIG and draft.plain["seq_len"] == 4096
    assert "# my reverse-text run" in draft.final_text  # comments kept
    flat = tmp_path / "old.toml"
    flat.write_text(FLAT_CONFIGS["alphabet-sort"])
    draft = submit.build_draft(SubmitRequest(from_flat=str(flat)), result)
    assert "model" in draft.plain and result.data["mappings"]
    with pytest.raises(UsageError, match="needs --model and at least one --env"):
        submit.build_draft(SubmitRequest(model=MODEL), Result(TOOL))


def test_validate_draft_adds_every_rule():
    result = Result(TOOL)
    submit.validate_draft(request(), submit.build_draft(request(), result), result)
    ids = {c.id for c in result.checks}
    assert {"toml-parse", "flat-shape", "model", "batch-divisible", "completion-tokens", "no-secrets"} <= ids
    assert checks_of(result, "env-hub")[0].status == "skip"  # offline


def test_gate_draft_refuses_a_classic_source_folder(tmp_path, monkeypatch):
    folder = _source_folder(tmp_path, "old_math")
    (folder / "old_math.py").write_text(
        "import verifiers as vf\n\n\ndef load_environment(**kwargs):\n    return None\n"
    )
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "old-math"\nversion = "0.1.0"\ndependencies = ["verifiers==0.3.1"]\n'
    )
    monkeypatch.chdir(tmp_path)
    result = Result(TOOL)
    req = request(env="me/old-math")
    outcome = submit.gate_draft(req, submit.build_draft(req, result), result)
    assert outcome.refused and checks_of(result, "env-generation")[0].status == "fail"


def test_rehearse_draft_skips_knowingly_then_checks_the_token_budget():
    result = Result(TOOL)
    req = request("max_turns=5", rehearse=False, seq_len=2048)
    draft = submit.build_draft(req, result)
    submit.rehearse_draft(req, draft, submit.gate_draft(req, draft, result), result)
    assert checks_of(result, "rehearse")[0].status == "skip" and result.data["rehearsal"] is None
    assert checks_of(result, "token-budget")[0].status == "fail"


def test_write_draft_writes_only_when_nothing_failed(tmp_path):
    req = request(rehearse=False, output=str(tmp_path / "c.toml"))
    result = Result(TOOL)
    draft = submit.build_draft(req, result)
    outcome = submit.gate_draft(req, draft, result)
    written = submit.write_draft(req, draft, outcome, result)
    assert written is not None and written.path.is_file() and result.data["written"] is True
    assert written.text == written.path.read_text() and result.data["config_path"] == str(tmp_path / "c.toml")
    failing = Result(TOOL)
    failing.fail("model", "no model", "set it")
    req = request(rehearse=False, output=str(tmp_path / "d.toml"))
    assert submit.write_draft(req, draft, outcome, failing) is None
    assert not (tmp_path / "d.toml").exists() and failing.summary.startswith("not written: 1 failed check")
    config = tmp_path / "native.toml"  # an unchanged starting file is the config: nothing rewritten
    config.write_text(NATIVE_CONFIG)
    req = SubmitRequest(config=str(config), offline=True, rehearse=False)
    result = Result(TOOL)
    written = submit.write_draft(req, submit.build_draft(req, result), outcome, result)
    assert written.path == config and result.data["written"] is False and "diff" not in result.data


def test_review_steps_name_the_submit_command(tmp_path):
    req = request(rehearse=False, output=str(tmp_path / "c.toml"), forward_env=("WANDB_API_KEY",))
    result = Result(TOOL)
    draft = submit.build_draft(req, result)
    written = submit.write_draft(req, draft, submit.gate_draft(req, draft, result), result)
    submit.review_steps(req, draft, written, result)
    assert result.summary.startswith(f"dry run: {written.path} is valid")
    assert f"--config {written.path} --submit --yes --forward-env WANDB_API_KEY" in result.next_steps[-1]


def test_a_dry_run_s_next_steps_push_each_environment_before_the_submit(tmp_path, monkeypatch):
    """Issue 52: after a dry run the next step was --submit, with no word about pushing the environment the
    run installs from the Hub: `prime env push` from each environment's folder, labelled --runtime v1, the
    visibility left to the user, comes before it; for an environment with no folder here, its placeholder."""
    _source_folder(tmp_path)
    monkeypatch.chdir(tmp_path)
    req = request(rehearse=False, output="c.toml")
    result = Result(TOOL)
    draft = submit.build_draft(req, result)
    written = submit.write_draft(req, draft, submit.gate_draft(req, draft, result), result)
    submit.review_steps(req, draft, written, result)
    push, last = result.next_steps
    assert push.startswith("push me/calc-tool to the Environments Hub before --submit")
    assert "prime env push --path environments/calc_tool --runtime v1 -v PRIVATE" in push
    assert "-v PUBLIC if the user chose public" in push and "--submit --yes" in last
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no source folder here: the step says where the command runs from
    (step,) = submit.push_steps(draft, Result(TOOL))
    assert "prime env push --path ENV_FOLDER --runtime v1" in step and "the folder with its pyproject.toml" in step
    result = Result(TOOL)
    result.data["fast_path"] = True  # the Hub has every environment and no source is here: nothing to push
    assert submit.push_steps(draft, result) == []
    prime_rl = request(rehearse=False, output=str(tmp_path / "p.toml"), target="prime-rl")
    result = Result(TOOL)
    draft = submit.build_draft(prime_rl, result)
    written = submit.write_draft(prime_rl, draft, submit.gate_draft(prime_rl, draft, result), result)
    submit.review_steps(prime_rl, draft, written, result)
    assert not [s for s in result.next_steps if "prime env push" in s]


def test_submit_written_sends_the_config_and_records_the_run(tmp_path, monkeypatch):
    sent = []

    def train_submit(path, forward, timeout):
        sent.append((path, forward))
        return prime.PrimeCall(0, "ok", "", {"run": {"id": "run123", "gpuType": "H100"}})

    monkeypatch.setattr(prime, "train_submit", train_submit)
    req = request(rehearse=False, output=str(tmp_path / "c.toml"), submit=True, yes=True)
    result = Result(TOOL)
    draft = submit.build_draft(req, result)
    written = submit.write_draft(req, draft, submit.gate_draft(req, draft, result), result)
    submit.submit_written(req, draft, written, result)
    assert sent == [(str(tmp_path / "c.toml"), [])] and result.data["run_id"] == "run123"
    assert Path(result.data["run_record"]).is_file() and result.data["platform"] == {"gpuType": "H100"}
    strict = Result(TOOL)
    strict.warn("x", "a warning")
    submit.submit_written(SubmitRequest(model=MODEL, strict=True, submit=True, yes=True), draft, written, strict)
    assert len(sent) == 1 and strict.summary == "not submitted: 1 warning(s) with --strict"


def test_run_submit_training_hands_the_request_through_the_stages_in_order(monkeypatch):
    calls: list[str] = []

    class Outcome:
        refused = False

    def stage(name, value=None):
        def run(*a):
            calls.append(name)
            return value

        return run

    monkeypatch.setattr(submit, "build_draft", stage("build", "draft"))
    monkeypatch.setattr(submit, "validate_draft", stage("validate"))
    monkeypatch.setattr(submit, "gate_draft", stage("gate", Outcome()))
    monkeypatch.setattr(submit, "rehearse_draft", stage("rehearse"))
    monkeypatch.setattr(submit, "write_draft", stage("write", "written"))
    monkeypatch.setattr(submit, "review_steps", stage("review"))
    monkeypatch.setattr(submit, "submit_written", stage("submit"))
    submit.run_submit_training(request(), Result(TOOL))
    assert calls == ["build", "validate", "gate", "rehearse", "write", "review"]
    calls.clear()
    Outcome.refused = True  # a refused gate: no rehearsal; write_draft says why nothing was written
    monkeypatch.setattr(submit, "write_draft", stage("write", None))
    submit.run_submit_training(request(submit=True, yes=True), Result(TOOL))
    assert calls == ["build", "validate", "gate", "write"]
