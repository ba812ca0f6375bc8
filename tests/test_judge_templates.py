"""The two judge templates each install alone, so each carries its own copy of the judge prompt, the
escaping, the pre-check and the verdict parser. This keeps the copies identical, the way
test_code_template keeps the code harnesses byte-identical: a fix made in one template and not the
other fails here, naming the part."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from conftest import SKILL_ROOT, assert_result, run_script

TEMPLATES = SKILL_ROOT / "templates" / "environments"
PAIR = (TEMPLATES / "v1-judge" / "v1_judge.py", TEMPLATES / "classic-judge" / "classic_judge.py")
# The judge's side both templates share: the prompt, the escaping, the pre-check, the verdict parser,
# the criteria block and the question columns; and the dataset file lookup.
SHARED = (
    "QUESTION_COLUMN",
    "ANSWER_COLUMN",
    "CRITERIA_COLUMN",
    "SYSTEM_PROMPT",
    "JUDGE_PROMPT",
    "JudgeVerdictError",
    "fence",
    "_words",
    "precheck",
    "_SCORE_LINE",
    "_YES_NO_LINE",
    "parse_verdict",
    "criteria_block",
    "row_criteria",
    "prompt_text",
    "NO_DATASET",
    "_BUILDERS",
    "data_file",
)


def _parts(path: Path) -> dict[str, str]:
    """Each top-level definition's source by name (a function, a class, an assigned constant)."""
    source = path.read_text()
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = ast.get_source_segment(source, node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.get_source_segment(source, node)
    return out


@pytest.mark.parametrize("name", SHARED)
def test_the_judge_templates_share_this_part_verbatim(name):
    v1, classic = (_parts(p) for p in PAIR)
    assert name in v1 and name in classic, f"{name} missing from a judge template"
    assert v1[name] == classic[name], f"{name} differs between v1-judge and classic-judge: change both"


def test_the_comparison_can_fail(tmp_path):
    """A copy whose parser reads one more form differs, and the comparison sees it."""
    changed = tmp_path / "classic_judge.py"
    changed.write_text(PAIR[1].read_text().replace('("yes", "correct")', '("yes", "correct", "right")'))
    assert _parts(changed)["parse_verdict"] != _parts(PAIR[0])["parse_verdict"]
    assert _parts(changed)["fence"] == _parts(PAIR[0])["fence"]


# -- the rubric-criteria variant, end to end -----------------------------------------------------

LONG = [
    (
        "Why is the sky blue during the day?",
        "Sunlight is scattered by air molecules, and shorter blue wavelengths scatter much more strongly than red "
        "ones (Rayleigh scattering). This scattered blue light reaches our eyes from every direction.",
        ["names Rayleigh scattering", "says blue light scatters more than red"],
    ),
    (
        "What causes the seasons on Earth?",
        "The tilt of Earth's axis, about 23.5 degrees, changes how directly sunlight strikes each hemisphere over "
        "the year. Distance from the Sun is not the cause.",
        ["names the axial tilt", "rules out the distance from the Sun"],
    ),
    (
        "Why do we see lightning before we hear thunder?",
        "Light travels about a million times faster than sound, so the flash reaches us almost at once while the "
        "sound of the same discharge arrives seconds later, about three seconds per kilometre.",
        ["compares the speeds of light and sound", "gives the delay per distance"],
    ),
    (
        "Why does ice float on water?",
        "Water expands when it freezes: the hydrogen bonds hold the molecules in an open lattice, so ice is about "
        "nine percent less dense than liquid water and floats on it.",
        ["says ice is less dense", "explains the open hydrogen-bonded lattice"],
    ),
]


def _criteria_dataset(tmp_path: Path) -> Path:
    path = tmp_path / "open_qa.jsonl"
    rows = [{"question": q, "answer": a, "grading_notes": c} for q, a, c in LONG * 3]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _criteria_env(tmp_path: Path, api: str) -> tuple[Path, Path]:
    data = _criteria_dataset(tmp_path)
    inspected = run_script("inspect_dataset", str(data), "--json")
    report = assert_result(inspected.json, "inspect_dataset", inspected.returncode)
    assert report["data"]["roles"]["criteria"]["column"] == "grading_notes"
    rec = report["data"]["recommendation"]
    assert rec["template"] in ("v1-judge", "classic-judge") and rec["variant"] == "rubric-criteria"
    assert rec["column_mapping"]["criteria"] == "grading_notes" and "grading_notes" not in (
        rec["column_mapping"]["prompt_columns"] + [rec["column_mapping"]["answer"]]
    )
    (tmp_path / "inspect.json").write_text(inspected.stdout)
    made = run_script(
        "new_env", "open-qa", "--from-inspect", str(tmp_path / "inspect.json"), "--api", api,
        "--path", str(tmp_path / "envs"), "--json",
    )  # fmt: skip
    assert made.returncode == 0, made.json["summary"]
    package = next((tmp_path / "envs").iterdir())
    module = next(package.glob("*.py")).read_text()
    assert 'CRITERIA_COLUMN = "grading_notes"' in module
    return package, data


def _criteria_env_passes_the_stub(tmp_path: Path, api: str):
    package, data = _criteria_env(tmp_path, api)
    proc = run_script(
        "test_reward", str(package), "--env-args", json.dumps({"dataset_path": str(data)}),
        "--reach-seconds", "0", "--judge", "stub", "--json",
    )  # fmt: skip
    obj = assert_result(proc.json, "test_reward", proc.returncode)
    failed = [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"]
    assert proc.returncode == 0, failed
    assert {c["id"]: c["status"] for c in obj["checks"]}["judge_injection"] == "pass"


@pytest.mark.slow
@pytest.mark.v1
def test_v1_rubric_criteria_variant_from_inspect_to_test_reward(tmp_path):
    _criteria_env_passes_the_stub(tmp_path, "v1")


@pytest.mark.slow
@pytest.mark.classic
def test_classic_rubric_criteria_variant_from_inspect_to_test_reward(tmp_path):
    _criteria_env_passes_the_stub(tmp_path, "classic")


def test_no_criteria_column_no_variant(tmp_path):
    """A plain open-answer file: the judge template without the variant, and no criteria role."""
    path = tmp_path / "plain.jsonl"
    path.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a, _ in LONG * 3))
    proc = run_script("inspect_dataset", str(path), "--json")
    data = assert_result(proc.json, "inspect_dataset", proc.returncode)["data"]
    assert data["roles"]["criteria"] is None and "variant" not in data["recommendation"]
    assert data["recommendation"]["template"] in ("v1-judge", "classic-judge")
