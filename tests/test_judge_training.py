"""Judge failures travel with the rollout, apart from zero rewards: each judge template sets its
`judge_error` metric on a rollout whose judge gave no verdict, local_train logs its mean per step
(`judge_error_frac`), diagnose_run reads it (local_train's and prime-rl's key shapes) and says the
zeros are not the policy's, and check_reward_distribution counts classic's silent zeros with the judge
failures. Also: a row's own rubric criteria reach the judge's prompt (the rubric-criteria variant)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import SKILL_ROOT, assert_result, run_script

from vlab import catalog
from vlab.reward.judge_server import FORM_MARK, JudgeServer

TEMPLATES = SKILL_ROOT / "templates" / "environments"
REFERENCE = (
    "Sunlight is scattered by air molecules, and shorter blue wavelengths scatter much more strongly than red "
    "ones (Rayleigh scattering). This scattered blue light reaches our eyes from every direction."
)
ROWS = [
    {
        "question": "Why is the sky blue during the day?",
        "answer": REFERENCE,
        "criteria": ["names Rayleigh scattering", "says blue light scatters more than red"],
    },
    {"question": "What causes the seasons on Earth?", "answer": "The tilt of Earth's axis.", "criteria": "- tilt\n"},
]


def _scores(template: str, tmp_path: Path, monkeypatch, completions: list[str]):
    """Score completions of row 0 in-process against the stub judge; the prompts the stub was sent."""
    from vlab.env.locate import load_env

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    monkeypatch.setenv("VLAB_TEST_JUDGE_KEY", "unused")
    seen: list[str] = []
    with JudgeServer() as server:
        complete = server._complete

        def recording(body):
            seen.append(str(body["messages"][-1]["content"]))
            return complete(body)

        server._complete = recording
        env = load_env(
            str(TEMPLATES / template),
            {"dataset_path": str(data), "judge_base_url": server.url, "judge_api_key_var": "VLAB_TEST_JUDGE_KEY"},
        )
        row = env.row(0)
        scores = asyncio.run(env.score_group(row, [[{"role": "assistant", "content": c}] for c in completions]))
    return env, row, scores, seen


def _judge_error_travels(template: str, tmp_path: Path, monkeypatch):
    import torch

    from vlab.train.envsource import VerifiersSource
    from vlab.train.stepmetrics import step_metrics

    refused = f"{REFERENCE}\n{FORM_MARK.format(name='refusal')}"
    env, row, scores, seen = _scores(template, tmp_path, monkeypatch, [REFERENCE, refused])
    rollouts = [VerifiersSource._rollout(row, None, s, [], False, None, None) for s in scores]
    assert rollouts[0].metrics[catalog.JUDGE_ERROR_METRIC] == 0.0 and rollouts[0].reward > 0.5
    assert rollouts[1].metrics[catalog.JUDGE_ERROR_METRIC] == 1.0 and rollouts[1].reward == 0.0
    rewards = torch.tensor([r.reward for r in rollouts])
    m = step_metrics(1, rollouts, rewards, torch.tensor([False]), 2, 1.0, 10, 1.0, None)
    assert m["judge_error_frac"] == 0.5 and m[f"metrics/{catalog.JUDGE_ERROR_METRIC}/mean"] == 0.5
    # the row's own criteria reached the judge, fenced
    assert seen and all("<criteria>\n- names Rayleigh scattering\n- says blue light" in p for p in seen)
    return rollouts


@pytest.mark.v1
def test_v1_judge_failure_errors_the_rollout_and_sets_the_metric(tmp_path, monkeypatch):
    rollouts = _judge_error_travels("v1-judge", tmp_path, monkeypatch)
    assert rollouts[1].error and "judge" in rollouts[1].error.lower() and not rollouts[0].error


@pytest.mark.classic
def test_classic_judge_failure_scores_zero_with_the_metric_set(tmp_path, monkeypatch):
    _judge_error_travels("classic-judge", tmp_path, monkeypatch)


@pytest.mark.parametrize("template", ["v1-judge", "classic-judge"])
def test_row_criteria_are_read_in_every_documented_form(template):
    import importlib.util

    path = TEMPLATES / template / f"{template.replace('-', '_')}.py"
    source = path.read_text()
    # the shared helpers only (the rest imports verifiers of one generation)
    start, end = source.index("def row_criteria"), source.index("def prompt_text")
    space: dict = {"json": json, "CRITERIA_COLUMN": "criteria"}
    exec(compile(source[start:end], str(path), "exec"), space)  # noqa: S102 - the template's own function
    read = space["row_criteria"]
    assert read({"criteria": ["a", " b ", "", None]}) == ["a", "b"]
    assert read({"criteria": '["a", "b"]'}) == ["a", "b"]
    assert read({"criteria": "- a\n* b\n\n c"}) == ["a", "b", "c"]
    assert read({"criteria": {"accuracy": "names the cause"}}) == ["accuracy: names the cause"]
    assert read({"criteria": None}) == read({}) == []
    assert importlib.util  # the module itself is loaded by the scoring tests above


# -- diagnose_run --------------------------------------------------------------------------------


def _with_judge_errors(path: Path, key: str, share: float, every: str = "reward") -> None:
    """Add the judge_error share under ``key`` to each metrics row that carries ``every`` in a key."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in rows:
        if any(every in k for k in r) and not any(k.startswith("eval/") for k in r):
            r[key] = share
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _diagnose(run: Path):
    proc = run_script("diagnose_run", "--run", str(run), "--json")
    return proc, assert_result(proc.json, "diagnose_run", proc.returncode)


@pytest.mark.parametrize(
    "shape, key",
    [
        ("local", "judge_error_frac"),
        ("local", f"metrics/{catalog.JUDGE_ERROR_METRIC}/mean"),
        ("prime-rl", f"train/agg/all/agent/metrics/{catalog.JUDGE_ERROR_METRIC}/mean"),
    ],
)
def test_diagnose_names_judge_failures_apart_from_zero_rewards(tmp_path, shape, key):
    from diagnose_fixtures import simulate, write_local, write_prime_rl

    from vlab.diagnose.thresholds import T

    rows = simulate("healthy")
    run = write_local(rows, tmp_path / "run") if shape == "local" else write_prime_rl(rows, tmp_path / "run")
    metrics = run / "logs" / "metrics.jsonl" if shape == "local" else run / "metrics.jsonl"
    _with_judge_errors(metrics, key, 0.3, "reward_mean" if shape == "local" else "/reward/mean")
    proc, obj = _diagnose(run)
    found = {f["id"]: f for f in obj["data"]["findings"]} if "findings" in obj["data"] else {}
    checks = {c["id"]: c for c in obj["checks"]}
    judge = found.get("judge-errors") or checks.get("judge-errors")
    assert judge is not None, (list(found), list(checks))
    assert judge["status"] == "fail" and 0.3 > T["judge_errors_fail"]
    assert "judge failed on 30% of rollouts" in judge["message"] and "not the policy's" in judge["message"]
    assert proc.returncode == 1

    # below the warning share: no judge finding (the check can stay silent)
    run2 = write_local(rows, tmp_path / "quiet") if shape == "local" else write_prime_rl(rows, tmp_path / "quiet")
    metrics2 = run2 / "logs" / "metrics.jsonl" if shape == "local" else run2 / "metrics.jsonl"
    _with_judge_errors(metrics2, key, T["judge_errors_warn"] / 2, "reward_mean" if shape == "local" else "/reward/mean")
    _, quiet = _diagnose(run2)
    assert "judge-errors" not in {c["id"] for c in quiet["checks"]} | {
        f["id"] for f in quiet["data"].get("findings", [])
    }


# -- check_reward_distribution ---------------------------------------------------------------------


def test_check_reward_distribution_counts_classic_judge_zeros_by_the_same_metric(tmp_path):
    """A classic eval scores a judge failure 0.0 with no error; the judge_error metric says it was the judge's."""
    from evalfile_fixtures import mixed_run, write_classic_run

    rolls = mixed_run(30, 4)
    for r in rolls[:18]:
        r.correct = r.fmt = 0.0
    folder = write_classic_run(tmp_path / "run", rolls)
    results = folder / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for i, row in enumerate(rows):
        row["metrics"][catalog.JUDGE_ERROR_METRIC] = row[catalog.JUDGE_ERROR_METRIC] = 1.0 if i < 18 else 0.0
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = run_script("check_reward_distribution", "--results", str(folder), "--json")
    obj = assert_result(proc.json, "check_reward_distribution")
    checks = {c["id"]: c for c in obj["checks"]}
    assert obj["data"]["counts"]["judge_failures"] == {"no_verdict": 18, "refusals": 0, "scored_zero": 18}
    assert "judge" in checks and "18 of them scored 0 with judge_error set" in checks["judge"]["message"]
    assert obj["data"]["counts"]["errored"] == 0 and checks["generation"]["status"] == "pass"

    for row in rows:  # the metric at 0 everywhere: no judge failure to count
        row["metrics"][catalog.JUDGE_ERROR_METRIC] = row[catalog.JUDGE_ERROR_METRIC] = 0.0
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    plain = run_script("check_reward_distribution", "--results", str(folder), "--json")
    assert "judge" not in {c["id"] for c in plain.json["checks"]}


# -- the hosted hand-off ---------------------------------------------------------------------------

PLANTED = "sk-planted-judge-key-0123456789abcdefXYZ"
JUDGE_ARGS = (
    "--env-arg", 'judge_model="gpt-4.1-mini"',
    "--env-arg", 'judge_base_url="https://api.openai.com/v1"',
)  # fmt: skip


def _project(tmp_path: Path) -> Path:
    made = run_script("new_env", "open-qa", "--template", "v1-judge", "--path", "environments", "--json", cwd=tmp_path)
    assert made.returncode == 0, made.json["summary"]
    data = tmp_path / "environments" / "open_qa" / "data"
    data.mkdir()
    (data / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return tmp_path


def _submit(project: Path, *args: str, output: str):
    """A hosted dry run, offline and not rehearsed: the rehearsal scores the gold through the judge, and the
    judge the config names (a public endpoint) cannot be reached offline; a loopback stub is refused for hosted."""
    proc = run_script(
        "submit_training", "--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "me/open-qa",
        "--env-arg", 'dataset_path="train.jsonl"', *args, "--offline", "--no-rehearse", "--output", output, "--json",
        cwd=project, env={"JUDGE_API_KEY": PLANTED},
    )  # fmt: skip
    return proc, assert_result(proc.json, "submit_training", proc.returncode)


def _everything(proc, project: Path) -> str:
    written = "".join(p.read_text() for p in (project / "configs").glob("*") if p.is_file())
    return proc.stdout + proc.stderr + written


@pytest.mark.v1
def test_hosted_dry_run_carries_the_judge_settings_and_never_the_key(tmp_path):
    import tomllib

    project = _project(tmp_path)
    proc, obj = _submit(project, *JUDGE_ARGS, "--env-arg", 'judge_api_key_var="JUDGE_API_KEY"', output="configs/a.toml")
    assert proc.returncode == 0, [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"]
    taskset = tomllib.loads((project / "configs" / "a.toml").read_text())["orchestrator"]["train"]["source"][0]
    taskset = taskset["env"]["taskset"]
    assert taskset["judge_model"] == "gpt-4.1-mini" and taskset["judge_base_url"] == "https://api.openai.com/v1"
    assert taskset["judge_api_key_var"] == "JUDGE_API_KEY"
    checks = {c["id"]: c for c in obj["checks"]}
    assert checks["judge-key"]["status"] == "pass" and "JUDGE_API_KEY" in checks["judge-key"]["message"]
    assert any("secret named JUDGE_API_KEY" in s for s in obj["next_steps"])
    assert PLANTED not in _everything(proc, project) + json.dumps(obj)

    # the key itself where its variable's name belongs: refused, nothing written, the value never shown
    proc, obj = _submit(project, *JUDGE_ARGS, "--env-arg", f'judge_api_key_var="{PLANTED}"', output="configs/b.toml")
    failed = {c["id"] for c in obj["checks"] if c["status"] == "fail"}
    assert proc.returncode == 1 and {"judge-key", "no-secrets"} <= failed and not (project / "configs/b.toml").exists()
    assert PLANTED not in _everything(proc, project) + json.dumps(obj)

    # a judge on this machine cannot be reached from a hosted run
    proc, obj = _submit(
        project, "--env-arg", 'judge_base_url="http://127.0.0.1:8000/v1"', "--env-arg", 'judge_api_key_var="JUDGE_API_KEY"',
        output="configs/c.toml",
    )  # fmt: skip
    failed = {c["id"]: c["message"] for c in obj["checks"] if c["status"] == "fail"}
    assert proc.returncode == 1 and "loopback" in failed["judge-endpoint"]


@pytest.mark.v1
def test_prime_rl_target_keeps_a_local_judge_and_names_the_variable(tmp_path):
    project = _project(tmp_path)
    proc = run_script(
        "submit_training", "--target", "prime-rl", "--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "me/open-qa",
        "--env-arg", 'dataset_path="train.jsonl"', "--env-arg", 'judge_base_url="http://127.0.0.1:8000/v1"',
        "--env-arg", 'judge_api_key_var="JUDGE_API_KEY"', "--offline", "--no-rehearse", "--output", "configs/p.toml",
        "--json", cwd=project, env={"JUDGE_API_KEY": PLANTED},
    )  # fmt: skip
    obj = assert_result(proc.json, "submit_training", proc.returncode)
    assert proc.returncode == 0, [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"]
    assert "judge-endpoint" not in {c["id"] for c in obj["checks"]}
    assert any(s.startswith("export JUDGE_API_KEY where") for s in obj["next_steps"])
    assert PLANTED not in _everything(proc, project) + json.dumps(obj)


@pytest.mark.slow
@pytest.mark.v1
def test_prime_rl_dry_run_rehearses_the_judge_env_against_a_loopback_stub(tmp_path):
    """The rehearsal (the wheel installed with verifiers 0.4.0, loaded from an empty folder, the gold scored)
    asks its own loopback stub judge for a prime-rl target, never the judge the config names (that one may be
    paid): the config's judge gets no call, and the rehearsal's judge calls per rollout are measured."""
    from conftest import VERIFIERS

    from vlab.hosted import rehearse

    if rehearse.uv_command() is None or VERIFIERS.classic:
        pytest.skip("the rehearsal needs uv and runs in the 0.4 venv (as tests/test_rehearse.py)")
    (tmp_path / "p").mkdir()
    project = _project(tmp_path / "p")
    with JudgeServer() as stub:
        proc = run_script(
            "submit_training", "--target", "prime-rl", "--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "me/open-qa",
            "--env-arg", 'dataset_path="train.jsonl"', "--env-arg", f'judge_base_url="{stub.url}"',
            "--env-arg", 'judge_api_key_var="JUDGE_API_KEY"', "--offline", "--output", "configs/r.toml", "--json",
            cwd=project, env={"JUDGE_API_KEY": PLANTED, "VLAB_REHEARSE_CACHE": str(tmp_path / "cache")}, timeout=900,
        )  # fmt: skip
        calls = stub.usage()["calls"]
    obj = assert_result(proc.json, "submit_training", proc.returncode)
    statuses = {c["id"]: c["status"] for c in obj["checks"]}
    assert proc.returncode == 0, [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"]
    assert statuses["rehearse-load"] == statuses["rehearse-gold"] == "pass" and calls == 0
    (source,) = obj["data"]["rehearsal"]["sources"]
    assert source["judge"]["calls_per_rollout"] > 0, source
    assert PLANTED not in _everything(proc, project) + json.dumps(obj)


def test_the_judge_error_flag_is_never_taken_for_correctness():
    """Binary, named after the judge (or "pass"), weight unknown (an eval file): metrics, never the correctness.
    Before, precheck_passed was picked over judge_score as a classic judge eval's correctness."""
    from vlab.catalog import FunctionFacts, Scores, correctness_function, function_kinds

    binary = Scores(count=40, min=0.0, max=1.0, binary=True)
    tenths = Scores(count=40, min=0.0, max=0.9, binary=False)
    facts = [
        FunctionFacts("judge_score", None, tenths),
        FunctionFacts("precheck_passed", None, binary),
        FunctionFacts(catalog.JUDGE_ERROR_METRIC, None, binary),
    ]
    kinds = function_kinds(facts)
    assert kinds[catalog.JUDGE_ERROR_METRIC] == kinds["precheck_passed"] == "metric"
    assert correctness_function(facts) == "judge_score"


@pytest.mark.slow
@pytest.mark.v1
def test_local_train_prime_rl_hand_off_names_the_key_variable_and_refuses_a_key_in_its_place(tmp_path):
    """local_train --engine prime-rl --dry-run: the judge key's variable NAME in rl.toml and an export step; the key
    passed where the name belongs makes the run fail (judge-key), and the key shows nowhere."""
    base = [
        "--json", "--no-progress", "--engine", "prime-rl", "--env", str(TEMPLATES / "v1-judge"),
        "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--dry-run", "--gpus", "2", "--no-rehearse",
        "--env-arg", "dataset_name=someone/open-qa", "--env-arg", "judge_model=gpt-4.1-mini",
    ]  # fmt: skip
    env = {"JUDGE_API_KEY": PLANTED}
    ok = run_script(
        "local_train",
        *base,
        "--output-dir",
        str(tmp_path / "a"),
        "--env-arg",
        "judge_api_key_var=JUDGE_API_KEY",
        env=env,
    )
    obj = assert_result(ok.json, "local_train", ok.returncode)
    assert ok.returncode == 0, obj["summary"]
    assert {c["id"]: c["status"] for c in obj["checks"]}["judge-key"] == "pass"
    assert any("export JUDGE_API_KEY where the orchestrator runs" in s for s in obj["next_steps"])
    toml = (tmp_path / "a" / "rl.toml").read_text()
    assert 'judge_api_key_var = "JUDGE_API_KEY"' in toml and PLANTED not in toml + ok.stdout + ok.stderr

    bad = run_script(
        "local_train", *base, "--output-dir", str(tmp_path / "b"), "--env-arg", f"judge_api_key_var={PLANTED}", env=env
    )
    obj = assert_result(bad.json, "local_train", bad.returncode)
    assert bad.returncode == 1 and "judge-key" in obj["summary"]
    written = "".join(p.read_text() for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert PLANTED not in written + bad.stdout + bad.stderr
