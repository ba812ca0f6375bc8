"""The templates are real environments: each loads with verifiers' own loader and scores a
gold answer 1.0 and a wrong one 0.0 through verifiers' own scoring; each package is
installable-shaped; every config template passes the checker that owns it."""

from __future__ import annotations

import asyncio
import json
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT, VERIFIERS, assert_result, run_script

TEMPLATES = ROOT / "templates" / "environments"
CLASSIC = ["classic-numeric", "classic-multiple-choice", "classic-classification", "classic-multiturn-tool"]
V1 = ["v1-numeric", "v1-multiple-choice"]

# Rows in each template's default column layout, written into tmp_path by the tests.
ROWS = {
    "numeric": [{"question": "Ada has 3 boxes with 12 shells in each box. How many shells?",
                 "answer": "3 * 12 = <<3*12=36>>36\n#### 36"},
                {"question": "What is 1,200 + 34?", "answer": "1234"}],
    "multiple-choice": [{"question": "What is 2 + 2?", "choices": ["3", "4", "5"], "answer": 1},
                        {"question": "Capital of France?", "choices": ["Rome", "Paris"], "answer": "Paris"},
                        {"question": "Largest planet?", "choices": ["Mars", "Jupiter", "Venus"], "answer": "B"}],
    "classification": [{"text": "a wonderful, moving film", "label": "positive"},
                       {"text": "dull and far too long", "label": "negative"}],
}
# (gold reply, wrong reply) for the first row of each kind.
REPLIES = {
    "numeric": ("3 boxes of 12 make 36. \\boxed{36}", "I think it is \\boxed{35}"),
    "multiple-choice": ("2 + 2 = 4, option B. \\boxed{B}", "\\boxed{A}"),
    "classification": ("Clearly praise. \\boxed{positive}", "\\boxed{negative}"),
}


def kind(template: str) -> str:
    return "numeric" if "numeric" in template or "tool" in template else template.split("-", 1)[1]


def write_rows(tmp_path: Path, template: str) -> Path:
    path = tmp_path / f"{kind(template)}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[kind(template)]))
    return path


def module_name(template: str) -> str:
    return template.replace("-", "_")


@pytest.fixture
def on_path(monkeypatch):
    def add(folder: Path, module: str):
        monkeypatch.syspath_prepend(str(folder))
        sys.modules.pop(module, None)
    return add


# -- classic (verifiers 0.3.x) --------------------------------------------------------------


def classic_score(env, row: dict, reply: str) -> tuple[float, dict]:
    import verifiers as vf
    from verifiers.types import AssistantMessage, RolloutTiming

    state = vf.State(input=dict(row))
    state["completion"] = [AssistantMessage(content=reply)]
    state["trajectory"] = []
    state["timing"] = RolloutTiming()
    asyncio.run(env.rubric.score_rollout(state))
    return state["reward"], dict(state["metrics"])


@pytest.mark.classic
@pytest.mark.parametrize("template", CLASSIC)
def test_classic_template_scores_gold_1_and_wrong_0(template, tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / template, module_name(template))
    env = vf.load_environment(module_name(template), dataset_path=str(write_rows(tmp_path, template)))
    rows = env.get_dataset()
    assert len(rows) == len(ROWS[kind(template)])
    gold, wrong = REPLIES[kind(template)]
    reward, metrics = classic_score(env, rows[0], gold)
    assert reward == 1.0, metrics
    reward, metrics = classic_score(env, rows[0], wrong)
    assert reward == 0.0, metrics
    assert classic_score(env, rows[0], "")[0] == 0.0


@pytest.mark.classic
def test_classic_multiple_choice_reads_index_text_and_letter_answers(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-multiple-choice", "classic_multiple_choice")
    env = vf.load_environment("classic_multiple_choice", dataset_path=str(write_rows(tmp_path, "classic-multiple-choice")))
    assert list(env.get_dataset()["answer"]) == ["B", "B", "B"]


@pytest.mark.classic
def test_classic_numeric_compares_numbers_exactly(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-numeric", "classic_numeric")
    env = vf.load_environment("classic_numeric", dataset_path=str(write_rows(tmp_path, "classic-numeric")))
    row = env.get_dataset()[1]  # answer "1234"
    for reply, expected in [("\\boxed{1,234}", 1.0), ("\\boxed{1234.0}", 1.0), ("\\boxed{$1234}", 1.0),
                            ("\\boxed{1234.5}", 0.0), ("\\boxed{1234 or 1235}", 0.0), ("1234", 0.0)]:
        assert classic_score(env, row, reply)[0] == expected, reply


@pytest.mark.classic
def test_classic_classification_lists_labels_from_the_data(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-classification", "classic_classification")
    env = vf.load_environment("classic_classification", dataset_path=str(write_rows(tmp_path, "classic-classification")))
    assert "negative, positive" in env.system_prompt
    row = env.get_dataset()[0]
    assert classic_score(env, row, "\\boxed{ Positive }")[0] == 1.0


@pytest.mark.classic
def test_classic_calculator_tool_is_safe(on_path):
    on_path(TEMPLATES / "classic-multiturn-tool", "classic_multiturn_tool")
    import classic_multiturn_tool as mod

    assert mod.calculate("(12 + 3) * 4 / 5") == "12"
    assert mod.calculate("7/2") == "3.5"
    assert mod.calculate("1/0").startswith("error")
    assert mod.calculate("__import__('os').system('true')").startswith("error")
    assert mod.calculate("9**9**9").startswith("error")


@pytest.mark.classic
def test_classic_missing_column_is_a_clear_error(tmp_path, on_path):
    import verifiers as vf

    on_path(TEMPLATES / "classic-numeric", "classic_numeric")
    data = tmp_path / "other.jsonl"
    data.write_text(json.dumps({"problem": "1+1", "solution": "2"}) + "\n")
    with pytest.raises(Exception, match="no column"):
        vf.load_environment("classic_numeric", dataset_path=str(data))


# -- v1 (verifiers >= 0.4) -------------------------------------------------------------------


def v1_tasks(template: str, data: Path):
    import verifiers.v1 as vf

    config = vf.taskset_config_type(module_name(template))(id=module_name(template), dataset_path=str(data))
    return list(vf.load_taskset(config))


def v1_score(task, reply: str) -> float:
    import verifiers.v1 as vf
    from verifiers.v1.state import state_cls
    from verifiers.v1.trace import Trace, TraceTask

    trace = Trace(task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
                  state=state_cls(type(task))(),
                  agent=vf.AgentInfo(config=vf.AgentConfig(), name="test", trainable=False))
    trace.nodes.append(vf.MessageNode(message=vf.UserMessage(content=task.data.prompt_text)))
    trace.nodes.append(vf.MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True))
    asyncio.run(task.score(trace))
    return trace.reward


@pytest.mark.v1
@pytest.mark.parametrize("template", V1)
def test_v1_template_scores_gold_1_and_wrong_0(template, tmp_path, on_path):
    on_path(TEMPLATES / template, module_name(template))
    tasks = v1_tasks(template, write_rows(tmp_path, template))
    assert len(tasks) == len(ROWS[kind(template)])
    gold, wrong = REPLIES[kind(template)]
    assert v1_score(tasks[0], gold) == 1.0
    assert v1_score(tasks[0], wrong) == 0.0
    assert v1_score(tasks[0], "") == 0.0
    assert all(asyncio.run(t.validate(None)) for t in tasks)  # vf-validate's gold check


@pytest.mark.v1
def test_v1_exports_exactly_one_taskset(on_path):
    import verifiers.v1 as vf

    for template in V1:
        on_path(TEMPLATES / template, module_name(template))
        module = __import__(module_name(template))
        exported = [getattr(module, n) for n in module.__all__]
        assert [c for c in exported if isinstance(c, type) and issubclass(c, vf.Taskset)] == exported
        assert not hasattr(module, "load_environment")


# -- packaging ---------------------------------------------------------------------------------


@pytest.mark.parametrize("template", CLASSIC + V1)
def test_package_layout(template):
    folder = TEMPLATES / template
    module = module_name(template)
    assert (folder / f"{module}.py").is_file()
    cfg = tomllib.loads((folder / "pyproject.toml").read_text())
    assert cfg["project"]["name"] == template
    deps = " ".join(cfg["project"]["dependencies"])
    assert ("verifiers>=0.3.1,<0.4" in deps) if template.startswith("classic") else ("verifiers>=0.4" in deps)
    assert "datasets" in deps
    assert f"{module}.py" in cfg["tool"]["hatch"]["build"]["include"]
    assert cfg["build-system"]["build-backend"] == "hatchling.build"
    readme = (folder / "README.md").read_text()
    assert readme.startswith(f"# {template}\n") and module in readme
    source = (folder / f"{module}.py").read_text()
    compile(source, f"{module}.py", "exec")
    if template.startswith("classic"):
        assert "def load_environment(" in source and "import verifiers as vf" in source
    else:
        assert "import verifiers.v1 as vf" in source and "__all__" in source


def test_every_template_is_listed_here():
    found = sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir())
    assert found == sorted(CLASSIC + V1)


# -- config templates ---------------------------------------------------------------------------


def test_endpoints_template_loads_with_vf_eval_registry():
    path = ROOT / "templates" / "configs" / "endpoints.toml"
    raw = tomllib.loads(path.read_text())
    assert raw["endpoint"] and all({"endpoint_id", "model", "url", "key"} <= set(e) for e in raw["endpoint"])
    assert all(e["key"].isupper() for e in raw["endpoint"]), "key names an environment variable, never a secret"
    if not VERIFIERS.classic:
        pytest.skip("vf-eval's endpoint registry reader is classic verifiers (0.3.x)")
    from verifiers.legacy.utils.eval_utils import load_endpoints

    endpoints = load_endpoints(str(path))
    assert set(endpoints) == {e["endpoint_id"] for e in raw["endpoint"]}


TRAINING_CONFIGS = ["hosted-training.toml", "prime-rl-single-node.toml"]


@pytest.mark.parametrize("name", TRAINING_CONFIGS)
def test_training_config_template_passes_submit_training(name, tmp_path):
    path = ROOT / "templates" / "configs" / name
    if not path.is_file():
        pytest.skip(f"{name} not written yet (submit_training engineer)")
    if not (ROOT / "scripts" / "submit_training.py").is_file():
        pytest.skip("scripts/submit_training.py does not exist yet")
    tomllib.loads(path.read_text())
    target = "prime-rl" if "prime-rl" in name else "hosted"
    proc = run_script("submit_training", "--config", str(path), "--target", target, "--offline",
                      "--output", str(tmp_path / name), "--json", cwd=tmp_path)
    obj = assert_result(proc.json, "submit_training")
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert proc.returncode == 0, failed


def test_local_train_config_template_is_strict_toml():
    """Its semantics are local_train's to test; here: it parses strictly, as the docs promise."""
    path = ROOT / "templates" / "configs" / "local-train.toml"
    if not path.is_file():
        pytest.skip("local-train.toml not written yet (local_train engineer)")
    cfg = tomllib.loads(path.read_text())
    assert cfg.get("model", {}).get("name"), "local-train.toml names a model"
