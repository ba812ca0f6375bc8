"""inspect_dataset's hand-off to new_env (issue 38): the calculator tool template suggested, with its reason, when
the worked solutions carry calculator annotations (GSM8K's <<48/2=24>>); next_steps that name SKILL.md's step 3
(new_env --from-inspect inspect.json) and run as written; --split naming no split lists the splits found."""

from __future__ import annotations

import importlib
import json
import shlex

import dataset_fixtures as fx
import pytest
from conftest import SKILL_ROOT, assert_result, call_script

from vlab.core.installed import VerifiersInfo
from vlab.core.invocation import command
from vlab.core.result import Result
from vlab.inspect import analysis

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

V1 = VerifiersInfo("0.4.0", False, True)
CLASSIC = VerifiersInfo("0.3.1", True, True)


def _inspect(monkeypatch, path, installed=V1, **kw) -> Result:
    recommend = importlib.import_module("vlab.inspect.recommend")  # the module (the package exports the function)
    monkeypatch.setattr(recommend, "verifiers_info", lambda: installed)
    result = Result("inspect_dataset")
    analysis.inspect_dataset(analysis.InspectRequest(source=str(path), **kw), result)
    return result


def _call(capsys, script: str, *argv: str) -> dict:
    return call_script(capsys, script, *argv)[1]


# -- the calculator tool template ----------------------------------------------------------------------


@pytest.mark.parametrize("installed, tool", [(V1, "v1-multiturn-tool"), (CLASSIC, "classic-multiturn-tool")])
def test_calculator_annotations_suggest_the_tool_template_with_the_reason(tmp_path, monkeypatch, installed, tool):
    """Every GSM8K rationale carries <<expr=val>>: the calculator template is named, with why, in the
    recommendation, a passed check and a next step (it was never mentioned)."""
    result = _inspect(monkeypatch, fx.make_gsm8k_jsonl(tmp_path), installed)
    calc = result.data["recommendation"]["calculator"]
    assert calc["template"] == tool and calc["column"] == "answer" and calc["share"] == 1.0
    assert calc["templates"] == {"classic": "classic-multiturn-tool", "v1": "v1-multiturn-tool"}
    check = next(c for c in result.checks if c.id == "calculator")
    assert check.status == "pass"
    assert "40 of the 40 worked solutions in 'answer' carry calculator annotations (e.g. <<" in check.message
    assert f"{tool} gives the model one, a calculate tool it calls over several turns" in check.message
    assert "test_reward --seq-len" in check.message  # a multi-turn rollout is longer: the budget check named
    step = next(s for s in result.next_steps if "--template" in s)
    assert step.startswith(f"{command('new_env')} my-env --from-inspect inspect.json --template {tool}   # ")
    # the single-turn numeric template stays the recommendation new_env takes by default
    assert result.data["recommendation"]["template"] == tool.replace("multiturn-tool", "numeric")


def test_a_rationale_column_beside_a_numeric_answer_is_found(tmp_path, monkeypatch):
    rows = [
        {
            "question": f"Ann has {i} bags of 3 apples. How many?",
            "rationale": f"{i}*3 = <<{i}*3={3 * i}>>{3 * i}",
            "answer": str(3 * i),
        }
        for i in range(1, 31)
    ]
    result = _inspect(monkeypatch, fx.write_jsonl(tmp_path / "apples.jsonl", rows))
    assert result.data["answer_format"]["type"] == "number"
    assert result.data["recommendation"]["calculator"]["column"] == "rationale"


@pytest.mark.parametrize("case", ["no_annotations", "few_annotated", "boxed_answers"])
def test_no_calculator_suggestion_without_the_evidence(tmp_path, monkeypatch, case):
    """Plain numbers, annotations on under 80% of the rows, or an answer kind the tool template cannot score
    (LaTeX \\boxed{} math): no calculator suggestion."""
    rows = fx.gsm8k_rows(30)
    if case == "no_annotations":
        rows = [{**r, "answer": r["answer"].split("=")[0] + "\n#### 7"} for r in rows]
    elif case == "few_annotated":
        rows = [r if i % 2 else {**r, "answer": "no calculator here\n#### 7"} for i, r in enumerate(rows)]
    else:
        rows = [{**r, "answer": r["answer"].replace("####", "so \\boxed{") + "}"} for r in rows]
    result = _inspect(monkeypatch, fx.write_jsonl(tmp_path / f"{case}.jsonl", rows))
    assert "calculator" not in result.data["recommendation"]
    assert not any(c.id == "calculator" for c in result.checks)
    assert not any("--template" in s for s in result.next_steps)


# -- next_steps: SKILL.md's step 3 ----------------------------------------------------------------------


def test_next_steps_name_new_env_from_inspect_as_skill_md_writes_it(tmp_path, monkeypatch):
    """They said 'start from templates/environments/...' and 'paste the snippets', never SKILL.md's step 3."""
    skill = (SKILL_ROOT / "SKILL.md").read_text(encoding="utf-8")
    assert 'scripts/new_env.py" my-env --from-inspect inspect.json' in skill  # SKILL.md's step 3, as written
    assert "--json > inspect.json" in skill  # and the report file its step 2 writes
    data = tmp_path / "data.jsonl"
    fx.write_jsonl(data, fx.gsm8k_rows(30))
    result = _inspect(monkeypatch, data, split=None, answer_column="answer")
    first = result.next_steps[0]
    assert first.startswith(f"{command('new_env')} my-env --from-inspect inspect.json   # ")
    assert "templates/environments/v1-numeric/" in first and "--api classic" in first
    # how to get inspect.json: this very run, its flags kept
    assert (
        f"{command('inspect_dataset')} {shlex.quote(str(data))} --answer-column answer --json > inspect.json" in first
    )
    assert not any("snippets" in s for s in result.next_steps)


def test_each_next_step_runs_as_written(tmp_path, monkeypatch, capsys):
    """The command of each step (before its '   # ' comment), run in the user's folder with the report saved
    as SKILL.md saves it, creates the package; the calculator one with no 'template' warning."""
    monkeypatch.chdir(tmp_path)
    for module in ("vlab.inspect.recommend", "vlab.scaffold.create"):  # v1 installed: no generation warning
        monkeypatch.setattr(importlib.import_module(module), "verifiers_info", lambda: V1)
    fx.write_jsonl(tmp_path / "train.jsonl", fx.gsm8k_rows(30))
    report = _call(capsys, "inspect_dataset", "train.jsonl")
    assert_result(report, "inspect_dataset", 0)
    (tmp_path / "inspect.json").write_text(json.dumps(report))
    steps = [s.split("   # ")[0] for s in report["next_steps"]]
    assert len(steps) == 2
    for i, step in enumerate(steps):
        argv = shlex.split(step)
        assert argv[:2] == shlex.split(command("new_env"))
        made = _call(capsys, "new_env", *argv[2:], "--path", f"envs{i}")
        assert made["exit_code"] == 0 and made["status"] == "pass", made
    made = json.loads((tmp_path / "inspect.json").read_text())["data"]["recommendation"]
    assert (tmp_path / "envs0" / "my_env" / "my_env.py").is_file()
    assert "vf.Toolset" in (tmp_path / "envs1" / "my_env" / "my_env.py").read_text()
    assert made["calculator"]["template"] in steps[1]


def test_no_template_names_the_snippet(tmp_path, monkeypatch):
    result = _inspect(monkeypatch, fx.make_code_jsonl(tmp_path))
    assert result.data["recommendation"]["template"] is None
    (step,) = result.next_steps
    assert "no template scores this answer kind" in step and "--snippet v1" in step
    assert "data.recommendation.snippets" in step


# -- --split naming no split ----------------------------------------------------------------------------


@pytest.mark.parametrize("unnamed", [False, True])
def test_split_naming_no_split_lists_the_splits_found(tmp_path, capsys, unnamed):
    """--split holdout on a folder of train/test files said 'no dataset files in this folder for split
    'holdout'', naming no split: exit 2 with the splits found, and the files that name none."""
    folder = tmp_path / "data"
    folder.mkdir()
    fx.write_jsonl(folder / "train.jsonl", fx.gsm8k_rows(10))
    fx.write_jsonl(folder / "test.jsonl", fx.gsm8k_rows(5, seed=3))
    if unnamed:
        fx.write_jsonl(folder / "extra.jsonl", fx.gsm8k_rows(5, seed=4))
    obj = _call(capsys, "inspect_dataset", str(folder), "--split", "holdout")
    assert_result(obj, "inspect_dataset", 2)
    want = f"{folder}: no split 'holdout'; splits found (by file names): test, train"
    assert obj["summary"] == want + ("; files naming no split: extra.jsonl" if unnamed else "")
    assert obj["next_steps"] == ["pass --split with one of them (e.g. --split train)"]


def test_split_in_a_folder_whose_files_name_no_split(tmp_path, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    fx.write_jsonl(folder / "part1.jsonl", fx.gsm8k_rows(10))
    obj = _call(capsys, "inspect_dataset", str(folder), "--split", "holdout")
    assert_result(obj, "inspect_dataset", 2)
    assert (
        obj["summary"] == f"{folder}: no split 'holdout'; splits found (by file names): none; files naming no "
        "split: part1.jsonl"
    )


def test_the_calculator_templates_are_the_catalogs_tool_templates():
    from vlab import catalog

    for gen, name in catalog.CALCULATOR_TEMPLATES.items():
        assert catalog.template(name).generation == gen
        assert (SKILL_ROOT / "templates" / "environments" / name / f"{name.replace('-', '_')}.py").is_file()
    assert catalog.calculator_templates("gsm8k") == catalog.CALCULATOR_TEMPLATES
    assert catalog.calculator_templates("boxed") == {}  # exact numbers only: LaTeX math needs math-verify
