"""new_env.py: names, never overwriting, the column mapping from inspect_dataset, and every
template, scaffolded onto a dataset with other column names, passing test_reward."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SKILL_ROOT, VERIFIERS, assert_result, run_script

from vlab.core.result import UsageError
from vlab.scaffold import create as scaffold

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

SCRIPTS = SKILL_ROOT / "scripts"


# -- names -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["gsm8k-boxed", "my_env", "arith2", "a-b_c"])
def test_valid_names(name):
    names = scaffold.validate_name(name)
    assert names.module == name.replace("-", "_") and names.dist == name.replace("_", "-")
    assert names.module.isidentifier()


@pytest.mark.parametrize(
    "name", ["", "My-Env", "1env", "env--x", "env-", "my env", "../evil", "json", "class", "verifiers", "x" * 65]
)
def test_invalid_names(name):
    with pytest.raises(UsageError):
        scaffold.validate_name(name)


def test_bad_name_is_exit_2_with_a_reason(tmp_path):
    proc = run_script("new_env", "My Env", "--template", "classic-numeric", "--path", str(tmp_path), "--json")
    obj = assert_result(proc.json, "new_env", 2)
    assert "invalid environment name" in obj["summary"] and obj["next_steps"]
    assert list(tmp_path.iterdir()) == []


def test_list_names_every_template():
    obj = run_script("new_env", "--list", "--json").json
    assert obj["data"]["templates"] == sorted(p.name for p in (SKILL_ROOT / "templates" / "environments").iterdir())


# -- never overwrites --------------------------------------------------------------------------


def test_refuses_an_existing_folder_and_leaves_it_alone(tmp_path):
    existing = tmp_path / "my_env"
    existing.mkdir()
    (existing / "my_env.py").write_text("# mine\n")
    proc = run_script("new_env", "my-env", "--template", "classic-numeric", "--path", str(tmp_path), "--json")
    obj = assert_result(proc.json, "new_env", 2)
    assert "already exists" in obj["summary"]
    assert (existing / "my_env.py").read_text() == "# mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my_env"]  # no staging folder left behind


def test_second_run_refuses(tmp_path):
    args = ("new_env", "twice", "--template", "v1-numeric", "--path", str(tmp_path), "--json")
    assert run_script(*args).returncode == 0
    before = {p.name: p.read_text() for p in (tmp_path / "twice").iterdir()}
    assert run_script(*args).returncode == 2
    assert {p.name: p.read_text() for p in (tmp_path / "twice").iterdir()} == before


def test_unknown_template_and_missing_inputs_are_usage_errors(tmp_path):
    assert run_script("new_env", "x1", "--template", "nope", "--path", str(tmp_path), "--json").returncode == 2
    assert run_script("new_env", "x1", "--path", str(tmp_path), "--json").returncode == 2
    assert run_script("new_env", "--json").returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = run_script("new_env", "x1", "--from-inspect", str(bad), "--path", str(tmp_path), "--json")
    assert proc.returncode == 2 and "not JSON" in proc.json["summary"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tool": "preflight", "data": {}}))
    assert run_script("new_env", "x1", "--from-inspect", str(other), "--path", str(tmp_path), "--json").returncode == 2
    assert not (tmp_path / "x1").exists()


# -- the package it writes ----------------------------------------------------------------------


def test_renames_module_classes_and_distribution(tmp_path):
    obj = run_script(
        "new_env",
        "quiz-time",
        "--template",
        "v1-multiple-choice",
        "--question-column",
        "stem",
        "--choices-column",
        "options",
        "--answer-column",
        "key",
        "--path",
        str(tmp_path),
        "--json",
    ).json
    assert obj["exit_code"] == 0, obj
    folder = tmp_path / "quiz_time"
    source = (folder / "quiz_time.py").read_text()
    assert "class QuizTimeTaskset(" in source and '__all__ = ["QuizTimeTaskset"]' in source
    assert "V1MultipleChoice" not in source and "v1_multiple_choice" not in source
    assert obj["data"]["columns"] == {"QUESTION_COLUMN": "stem", "CHOICES_COLUMN": "options", "ANSWER_COLUMN": "key"}
    assert 'name = "quiz-time"' in (folder / "pyproject.toml").read_text()
    assert '"quiz_time.py"' in (folder / "pyproject.toml").read_text()
    assert (folder / "README.md").read_text().startswith("# quiz-time\n")
    assert obj["data"]["env_id"] == "quiz-time" and obj["data"]["api"] == "v1"


def test_template_defaults_kept_with_a_warning(tmp_path):
    obj = run_script("new_env", "plain", "--template", "classic-numeric", "--path", str(tmp_path), "--json").json
    assert obj["exit_code"] == 0
    warned = {c["id"] for c in obj["checks"] if c["status"] == "warn"}
    assert {"column-prompt", "column-answer"} <= warned
    assert obj["data"]["columns"] == {
        "QUESTION_COLUMN": "question",
        "ANSWER_COLUMN": "answer",
        "MULTIPLE_COLUMN": "is_multiple_answer",  # read only where a row has it
        "UNIT_COLUMN": "unit",
    }
    strict = run_script(
        "new_env", "plain2", "--template", "classic-numeric", "--path", str(tmp_path), "--json", "--strict"
    )
    assert strict.returncode == 1  # warnings fail under --strict (the package is still written)


def test_flag_for_a_role_the_template_lacks_is_refused(tmp_path):
    proc = run_script(
        "new_env",
        "nochoice",
        "--template",
        "classic-numeric",
        "--choices-column",
        "opts",
        "--path",
        str(tmp_path),
        "--json",
    )
    assert proc.returncode == 2 and not (tmp_path / "nochoice").exists()


# -- from inspect_dataset ------------------------------------------------------------------------


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def numeric_rows(n: int = 12) -> list[dict]:
    return [
        {
            "id": i,
            "problem": f"Ben has {i + 2} bags with {i + 3} coins in each. How many coins?",
            "solution": f"{i + 2} * {i + 3} = <<{i + 2}*{i + 3}={(i + 2) * (i + 3)}>>{(i + 2) * (i + 3)}\n"
            f"#### {(i + 2) * (i + 3)}",
        }
        for i in range(n)
    ]


def mc_rows(n: int = 12) -> list[dict]:
    return [
        {"stem": f"Which number is {i} + 1?", "options": [str(i), str(i + 1), str(i + 2), str(i + 3)], "key": "ABCD"[1]}
        for i in range(n)
    ]


def label_rows(n: int = 12) -> list[dict]:
    words = [
        ("a joy to watch", "positive"),
        ("boring and slow", "negative"),
        ("I loved the cast", "positive"),
        ("a waste of time", "negative"),
    ]
    return [{"review": f"{words[i % 4][0]} ({i})", "sentiment": words[i % 4][1]} for i in range(n)]


def inspect(data: Path, tmp_path: Path, *extra: str) -> Path:
    if not (SCRIPTS / "inspect_dataset.py").is_file():
        pytest.skip("scripts/inspect_dataset.py does not exist yet")
    proc = run_script("inspect_dataset", str(data), "--json", *extra)
    out = tmp_path / f"{data.stem}.inspect.json"
    out.write_text(proc.stdout)
    return out


def test_mapping_from_inspect_dataset_output(tmp_path):
    data = write_jsonl(tmp_path / "math.jsonl", numeric_rows())
    report = inspect(data, tmp_path)
    proc = run_script(
        "new_env",
        "my-math",
        "--from-inspect",
        str(report),
        "--api",
        "classic",
        "--path",
        str(tmp_path / "envs"),
        "--json",
    )
    obj = assert_result(proc.json, "new_env", 0)
    assert obj["data"]["template"] == "classic-numeric"
    assert obj["data"]["columns"] == {
        "QUESTION_COLUMN": "problem",
        "ANSWER_COLUMN": "solution",
        "MULTIPLE_COLUMN": None,  # the dataset has no several-answers flag nor unit
        "UNIT_COLUMN": None,
    }
    assert any("inspect_dataset" in c["message"] for c in obj["checks"] if c["id"] == "column-prompt")
    assert str(data) in obj["next_steps"][0]  # the next command names the data it was made from


def test_flags_override_inspect_and_stdin_works(tmp_path):
    data = write_jsonl(tmp_path / "math.jsonl", [dict(r, alt=r["problem"]) for r in numeric_rows()])
    report = inspect(data, tmp_path)
    proc = run_script(
        "new_env",
        "alt-math",
        "--from-inspect",
        "-",
        "--api",
        "v1",
        "--question-column",
        "alt",
        "--path",
        str(tmp_path / "envs"),
        "--json",
        input=report.read_text(),
    )
    obj = proc.json
    assert obj["exit_code"] == 0, obj
    assert obj["data"]["template"] == "v1-numeric"
    assert obj["data"]["columns"]["QUESTION_COLUMN"] == "alt"


def test_inspect_maps_choices_over_columns_a_one_based_key_and_a_prompt_over_columns(tmp_path):
    rows = [
        {
            "Body": f"Ada had {i} cards.",
            "Question": "Which count is right?",
            "opa": f"{i}",
            "opb": f"{i + 1}",
            "opc": f"{i + 2}",
            "opd": f"{i + 3}",
            "cop": i % 4 + 1,
        }
        for i in range(40)
    ]
    report = inspect(write_jsonl(tmp_path / "medmcqa.jsonl", rows), tmp_path)
    made = run_script(
        "new_env", "cards", "--from-inspect", str(report), "--api", "classic", "--path", str(tmp_path), "--json"
    ).json
    assert made["exit_code"] == 0, made
    assert made["data"]["columns"] == {
        "QUESTION_COLUMN": ["Body", "Question"],
        "CHOICES_COLUMN": ["opa", "opb", "opc", "opd"],
        "ANSWER_COLUMN": "cop",
    }
    assert made["data"]["settings"] == {"INDEX_BASE": 1}  # the key counts from 1
    source = (tmp_path / "cards" / "cards.py").read_text()
    assert 'CHOICES_COLUMN = ["opa", "opb", "opc", "opd"]' in source and "INDEX_BASE = 1" in source


def test_a_code_dataset_without_an_entry_point_column(tmp_path):
    rows = [
        {
            "task_id": i,
            "text": f"Write add_{i}(x).",
            "code": f"def add_{i}(x):\n    return x + {i}\n",
            "test_list": [f"assert add_{i}(1) == {1 + i}"],
        }
        for i in range(12)
    ]
    report = inspect(write_jsonl(tmp_path / "mbpp.jsonl", rows), tmp_path)
    made = run_script(
        "new_env", "adders", "--from-inspect", str(report), "--api", "v1", "--path", str(tmp_path), "--json"
    ).json
    assert made["exit_code"] == 0, made
    assert made["data"]["template"] == "v1-code"
    assert made["data"]["columns"] == {
        "QUESTION_COLUMN": "text",
        "TESTS_COLUMN": "test_list",
        "ENTRY_POINT_COLUMN": None,  # read from the tests
        "SOLUTION_COLUMN": "code",
        "SETUP_COLUMN": None,  # the rows carry no setup code
    }
    assert sorted(p.name for p in (tmp_path / "adders").iterdir()) == [
        "README.md",
        "adders.py",
        "adders_harness.py",
        "pyproject.toml",
    ]


def test_free_text_dataset_gets_the_judge_template(tmp_path):
    rows = [
        {
            "prompt": f"Write a paragraph about topic {i}, covering its history and uses in detail.",
            "response": "A long free-form reference answer " * 8 + str(i),
        }
        for i in range(12)
    ]
    report = inspect(write_jsonl(tmp_path / "essays.jsonl", rows), tmp_path)
    assert json.loads(report.read_text())["data"]["recommendation"]["template"] in ("v1-judge", "classic-judge")
    proc = run_script("new_env", "essays", "--from-inspect", str(report), "--path", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.json["summary"]
    source = (Path(proc.json["data"]["package"]) / "essays.py").read_text()
    assert 'QUESTION_COLUMN = "prompt"' in source and 'ANSWER_COLUMN = "response"' in source


# -- every template, scaffolded, passes test_reward ---------------------------------------------


def code_rows() -> list[dict]:
    return [
        {
            "task": f"Write twice_{i}(x) returning 2 * x + {i}.",
            "tests": [f"assert twice_{i}(3) == {6 + i}"],
            "fn": f"twice_{i}",
            "ref": f"def twice_{i}(x):\n    return 2 * x + {i}\n",
        }
        for i in range(6)
    ]


CODE_FLAGS = [
    "--question-column",
    "task",
    "--tests-column",
    "tests",
    "--entry-point-column",
    "fn",
    "--answer-column",
    "ref",
]

CASES = {
    # template: (rows, flags naming the columns)
    "classic-numeric": (numeric_rows, ["--question-column", "problem", "--answer-column", "solution"]),
    "classic-multiturn-tool": (numeric_rows, ["--question-column", "problem", "--answer-column", "solution"]),
    "classic-multiple-choice": (
        mc_rows,
        ["--question-column", "stem", "--choices-column", "options", "--answer-column", "key"],
    ),
    "classic-classification": (label_rows, ["--question-column", "review", "--answer-column", "sentiment"]),
    "v1-numeric": (numeric_rows, ["--question-column", "problem", "--answer-column", "solution"]),
    "v1-multiple-choice": (
        mc_rows,
        ["--question-column", "stem", "--choices-column", "options", "--answer-column", "key"],
    ),
    "classic-code": (code_rows, CODE_FLAGS),
    "v1-code": (code_rows, CODE_FLAGS),
    "v1-classification": (label_rows, ["--question-column", "review", "--answer-column", "sentiment"]),
    "v1-multiturn-tool": (numeric_rows, ["--question-column", "problem", "--answer-column", "solution"]),
}


def matching_generation(template: str) -> bool:
    if template.startswith("classic"):
        return VERIFIERS.classic
    from vlab.core.installed import version_tuple

    return VERIFIERS.v1 and version_tuple(VERIFIERS.version or "0") >= (0, 4)


@pytest.mark.slow
@pytest.mark.parametrize("template", sorted(CASES))
def test_scaffolded_template_passes_test_reward(template, tmp_path):
    if not matching_generation(template):
        pytest.skip(f"{template} is tested in its own verifiers generation (installed: {VERIFIERS.version})")
    if not (SCRIPTS / "test_reward.py").is_file():
        pytest.skip("scripts/test_reward.py does not exist yet")
    make_rows, flags = CASES[template]
    data = write_jsonl(tmp_path / "data.jsonl", make_rows())
    name = "scaffolded-" + template.replace("classic-", "c-").replace("v1-", "n-")
    made = run_script("new_env", name, "--template", template, *flags, "--path", str(tmp_path / "envs"), "--json")
    assert made.returncode == 0, made
    package = made.json["data"]["package"]
    proc = run_script(
        "test_reward",
        package,
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--num-examples",
        "3",
        "--json",
        cwd=tmp_path,
    )
    obj = assert_result(proc.json, "test_reward")
    failed = [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"]
    assert proc.returncode == 0, failed or obj["summary"]


def test_hub_dataset_becomes_the_package_default(tmp_path):
    """inspect_dataset on a Hub id: the package defaults to that dataset; a local path never goes into a package."""
    report = {
        "tool": "inspect_dataset",
        "status": "pass",
        "data": {
            "source": {"loader": {"hub": "someone/quiz", "config": "main", "split": "test"}},
            "roles": {"prompt": {"column": "q", "confidence": 0.9}, "answer": {"column": "a", "confidence": 0.9}},
            "answer_format": {"type": "number"},
            "recommendation": {
                "template": "classic-numeric",
                "templates": {"classic": "classic-numeric", "v1": "v1-numeric"},
            },
        },
    }
    mapping = scaffold.mapping_from_inspect(report)
    for template in ("classic-numeric", "v1-numeric"):
        text = scaffold.render_module(template, scaffold.Names.of("hubby"), mapping)
        assert 'dataset_name: str | None = "someone/quiz"' in text and 'dataset_config: str | None = "main"' in text
        assert 'dataset_split: str = "test"' in text
        assert 'QUESTION_COLUMN = "q"' in text and 'ANSWER_COLUMN = "a"' in text
    assert "eval_split: str | None = None" in scaffold.render_module(
        "classic-numeric", scaffold.Names.of("hubby"), mapping
    )
    local = dict(
        report, data=dict(report["data"], source={"loader": {"builder": "json", "data_files": "/home/me/x.jsonl"}})
    )
    text = scaffold.render_module("classic-numeric", scaffold.Names.of("loc"), scaffold.mapping_from_inspect(local))
    # a local file: no default dataset at all (loading without dataset_path is an error, never GSM8K)
    assert "/home/me" not in text and "dataset_name: str | None = None" in text and "openai/gsm8k" not in text


# -- which generation new_env takes --------------------------------------------------------------


def _both_recommended() -> scaffold.Mapping:
    return scaffold.Mapping(recommended={"classic": "classic-numeric", "v1": "v1-numeric"}, inspect_status="pass")


@pytest.mark.parametrize(
    "installed, api, wanted",
    [
        (("0.4.0", False, True), None, "v1-numeric"),
        ((None, False, False), None, "v1-numeric"),  # nothing installed: v1, what current trainers run
        (("0.3.1", True, True), None, "classic-numeric"),  # only 0.3.x: its early verifiers.v1 is not enough
        (("0.4.0", False, True), "classic", "classic-numeric"),  # told otherwise
        (("0.3.1", True, True), "v1", "v1-numeric"),
    ],
)
def test_new_env_takes_v1_unless_told_or_only_0_3_is_installed(monkeypatch, installed, api, wanted):
    from vlab.core.installed import VerifiersInfo
    from vlab.core.result import Result

    monkeypatch.setattr(scaffold, "verifiers_info", lambda: VerifiersInfo(*installed))
    result = Result("new_env")
    req = scaffold.ScaffoldRequest(name="x", from_inspect="-", api=api)
    assert scaffold.choose_template(req, _both_recommended(), result) == wanted
    message = next(c.message for c in result.checks if c.id == "template")
    if api:
        assert "--api" in message
    elif wanted.startswith("v1"):
        assert "--api classic for verifiers 0.3.x, Tinker, SkyRL and prime-rl <= v0.8.0" in message
    else:
        assert "0.3.1" in message


def test_new_env_default_from_inspect_is_the_installed_generations(tmp_path):
    """End to end, no stub: the package new_env writes from inspect_dataset is v1 unless 0.3.x is installed."""
    rows = [{"text": r["review"], "label": r["sentiment"]} for r in label_rows(24)]  # 20 rows make a label column
    report = inspect(write_jsonl(tmp_path / "labels.jsonl", rows), tmp_path)
    made = run_script("new_env", "moods", "--from-inspect", str(report), "--path", str(tmp_path), "--json").json
    assert made["exit_code"] == 0, made
    wanted = "classic" if VERIFIERS.classic else "v1"
    assert made["data"]["template"] == f"{wanted}-classification" and made["data"]["api"] == wanted
    assert made["data"]["columns"] == {"TEXT_COLUMN": "text", "LABEL_COLUMN": "label"}


# -- a subtle bug in a scaffolded v1 template is caught --------------------------------------------

SUBTLE_BUGS = {
    # a label check that pays any reply mentioning the gold label anywhere (a list of every label too)
    "v1-classification": (
        "        given = given_label(trace.last_reply)\n        return 1.0 if given and given == normalise(self.data.answer) else 0.0",
        "        return 1.0 if normalise(self.data.answer) in normalise(trace.last_reply) else 0.0",
    ),
    # a number check that pays a reply whose boxed text holds the gold among other numbers
    "v1-multiturn-tool": (
        "        given = parse_number(final_boxed(trace.last_reply))",
        "        boxed = final_boxed(trace.last_reply) or ''\n"
        "        given = next((parse_number(n) for n in re.findall(r'\\d+', boxed) if parse_number(n) == "
        "parse_number(self.data.answer)), None)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("template", sorted(SUBTLE_BUGS))
def test_subtle_bug_in_a_scaffolded_v1_template_fails_test_reward(template, tmp_path):
    if not matching_generation(template):
        pytest.skip(f"{template} is tested in its own verifiers generation (installed: {VERIFIERS.version})")
    make_rows, flags = CASES[template]
    data = write_jsonl(tmp_path / "data.jsonl", make_rows())
    name = "buggy-" + template.replace("v1-", "n-")
    made = run_script("new_env", name, "--template", template, *flags, "--path", str(tmp_path / "envs"), "--json")
    assert made.returncode == 0, made
    module = Path(made.json["data"]["package"]) / (name.replace("-", "_") + ".py")
    good, bad = SUBTLE_BUGS[template]
    source = module.read_text()
    assert good in source, "the template changed: update the subtle-bug patch"
    module.write_text(source.replace(good, bad))
    proc = run_script(
        "test_reward",
        str(module.parent),
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--num-examples",
        "3",
        "--json",
        cwd=tmp_path,
    )
    obj = assert_result(proc.json, "test_reward", 1)
    failed = [c["id"] for c in obj["checks"] if c["status"] == "fail"]
    assert failed and all("import" not in f and "load" not in f for f in failed), failed  # caught, not crashed
    assert any(f.startswith(("hack", "probe", "wrong", "reward")) for f in failed), failed
