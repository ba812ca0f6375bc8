"""Nothing the pack runs writes into the installed skill folder (issue 36): a rehearsal once left 17 `.pyc`
files in `scripts/vlab/**/__pycache__`, which `npx skills update` replaces and SKILL.md says never to touch.

The skill folder is copied as `npx skills add` installs it and made read-only; SKILL.md's road is walked with
the copy's scripts (preflight, inspect_dataset, new_env, test_reward on a numeric, a judge (`--judge stub`), a
tool and a code environment, and submit_training's `--offline` rehearsal, which loads the environment through
the pack's worker in its own venv) with Python free to write bytecode (no PYTHONDONTWRITEBYTECODE), one part
of the road a test on one installed copy. After each part the copy must hold exactly the paths it held before,
each file byte for byte (sha256), and the bytecode must be in the cache folder instead. The tests run as root,
whom permission bits do not stop, so the hashes are the proof; the read-only bits are what an installed skill
looks like to a user who cannot write there."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import SKILL_ROOT
from test_judge import ROWS as JUDGE_ROWS  # long-text questions with reference answers

from vlab.hosted import rehearse

pytestmark = pytest.mark.slow

ROWS = [{"question": f"What is {i} plus {i + 1}?", "answer": str(2 * i + 1)} for i in range(12)]
TOOL_ROWS = [
    {
        "question": "Janet has 16 eggs, eats 3, bakes with 4 and sells the rest at $2 each. How many dollars does she make?",
        "answer": "She sells 16 - 3 - 4 = 9 eggs for 9 * 2 = 18 dollars.\n#### 18",
    },
    {
        "question": "A robe takes 2 bolts of blue fiber and half that much white fiber. How many bolts in total?",
        "answer": "It takes 2 / 2 = 1 bolt of white fiber, so 2 + 1 = 3 bolts in total.\n#### 3",
    },
]
# HumanEval's layout: a prompt ending in the signature and docstring, the body as the reference, a check().
CODE_ROWS = [
    {
        "task_id": f"Sums/{i}",
        "prompt": f'def plus{i}(a: int, b: int) -> int:\n    """Return a + b + {i}."""\n',
        "canonical_solution": f"    return a + b + {i}\n",
        "test": f"def check(candidate):\n    assert candidate(1, 2) == {3 + i}\n    assert candidate(0, 7) == {7 + i}\n",
        "entry_point": f"plus{i}",
    }
    for i in range(3)
]
# (name, template, new_env's column flags, rows, test_reward's extra flags)
KINDS = [
    (
        "essays",
        "v1-judge",
        ["--question-column", "question", "--answer-column", "answer"],
        JUDGE_ROWS,
        ["--judge", "stub"],
    ),
    ("eggs", "v1-multiturn-tool", ["--question-column", "question", "--answer-column", "answer"], TOOL_ROWS, []),
    (
        "plus",
        "v1-code",
        [
            "--question-column",
            "prompt",
            "--tests-column",
            "test",
            "--entry-point-column",
            "entry_point",
            "--answer-column",
            "canonical_solution",
        ],
        CODE_ROWS,
        [],
    ),
]


def snapshot(folder: Path) -> dict[str, str]:
    """Every path under the folder (directories too) and the sha256 of each file's bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        if p.is_symlink():
            out[key] = f"link:{os.readlink(p)}"
        elif p.is_dir():
            out[key] = "dir"
        else:
            out[key] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def tree(folder: Path) -> list[Path]:
    return [folder, *folder.rglob("*")]


def make_read_only(folder: Path) -> dict[Path, int]:
    """chmod -R a-w; returns the modes to restore."""
    modes = {p: stat.S_IMODE(p.lstat().st_mode) for p in tree(folder) if not p.is_symlink()}
    for p in sorted(modes, key=lambda p: len(p.parts), reverse=True):  # files before their folders
        p.chmod(modes[p] & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return modes


def restore_modes(folder: Path, modes: dict[Path, int]) -> None:
    for p in sorted(modes, key=lambda p: len(p.parts)):  # folders before what they hold
        if p.exists():
            p.chmod(modes[p])
    for p in tree(folder):  # anything that appeared after all, so tmp_path's cleanup can remove it
        if not p.is_symlink():
            p.chmod(stat.S_IMODE(p.lstat().st_mode) | stat.S_IWUSR)


def run(script: Path, *args: str, cwd: Path, env: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, str(script), *args, "--json"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    where = f"{script.name} exit {proc.returncode}; stderr:\n{proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, where
    obj = json.loads(proc.stdout)  # exactly one JSON object: anything after it raises
    assert isinstance(obj, dict) and obj.get("tool") == script.stem, where
    return obj


def write_rows(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@dataclass(frozen=True)
class Installed:
    skill: Path  # the read-only copy, as `npx skills add` installs it
    project: Path  # the user's project folder, outside the skill
    cache: Path  # $XDG_CACHE_HOME: where the bytecode must go
    env: dict  # the environment every step runs with: Python free to write bytecode
    read_only: dict  # path -> mode after make_read_only


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """One installed copy and one project for the module's walks (each test checks the copy after its part)."""
    root = tmp_path_factory.mktemp("installed")
    skill = root / "agents" / "skills" / "verifiers-lab"
    shutil.copytree(SKILL_ROOT, skill, ignore=shutil.ignore_patterns("__pycache__"))
    project = root / "project"
    (project / "data").mkdir(parents=True)
    cache = root / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    uv_cache = subprocess.run([rehearse.uv_command() or "uv", "cache", "dir"], capture_output=True, text=True, env=env)
    env |= {"XDG_CACHE_HOME": str(cache), "VLAB_REHEARSE_CACHE": str(root / "rehearse")}
    if uv_cache.returncode == 0:  # the offline rehearsal installs from uv's own cache: keep it where it is
        env["UV_CACHE_DIR"] = uv_cache.stdout.strip()
    modes = make_read_only(skill)
    try:
        yield Installed(skill, project, cache, env, {p: stat.S_IMODE(p.lstat().st_mode) for p in modes})
    finally:
        restore_modes(skill, modes)


def assert_untouched(inst: Installed, walk_part) -> None:
    """Run a part of SKILL.md's road; the copy must then hold exactly the paths it held before, each file byte
    for byte, with its read-only modes, and the bytecode must be in the cache folder."""
    before = snapshot(inst.skill)
    walk_part(inst.skill / "scripts", inst.project, inst.env)
    after = snapshot(inst.skill)
    chmodded = sorted(
        str(p.relative_to(inst.skill))
        for p, mode in inst.read_only.items()
        if p.exists() and stat.S_IMODE(p.lstat().st_mode) != mode
    )
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(k for k in before if k in after and after[k] != before[k])
    assert not added and not removed and not changed, {
        "added": added[:20],
        "removed": removed[:20],
        "changed": changed[:20],
    }
    assert not chmodded, chmodded[:20]
    assert list((inst.cache / "verifiers-lab" / "pycache").rglob("*.pyc")), "the bytecode went nowhere"


def numeric_road(scripts: Path, project: Path, env: dict) -> None:
    """SKILL.md's steps 1-4 from the user's project folder with the installed copy's scripts: preflight, then
    inspect, the environment written from inspect's recommendation, its reward tested."""
    # 1. preflight: may exit 3 or 4 here (no prime CLI, no GPU, no network); one result object is all it owes
    checked = run(scripts / "preflight.py", cwd=project, env=env)
    assert checked["exit_code"] != 2 and checked["checks"], checked
    write_sums(scripts, project, env)
    probed = run(
        scripts / "test_reward.py",
        "environments/sums/",
        "--env-args",
        json.dumps({"dataset_path": "data/train.jsonl"}),
        cwd=project,
        env=env,
    )
    assert probed["status"] != "error", probed


def write_sums(scripts: Path, project: Path, env: dict) -> None:
    """inspect_dataset and new_env on the numeric rows (once a module: the rehearsal's test reuses it)."""
    if (project / "environments" / "sums").is_dir():
        return
    write_rows(project / "data" / "train.jsonl", ROWS)
    report = run(scripts / "inspect_dataset.py", "data/train.jsonl", cwd=project, env=env)
    (project / "inspect.json").write_text(json.dumps(report))
    made = run(scripts / "new_env.py", "sums", "--from-inspect", "inspect.json", "--api", "v1", cwd=project, env=env)
    assert made["status"] == "pass", made


def kind_road(name: str, template: str, columns: list[str], rows: list[dict], extra: list[str]):
    """SKILL.md's steps 3-4 on a judge, a tool or a code environment, written from its template with the
    columns named."""

    def walk(scripts: Path, project: Path, env: dict) -> None:
        write_rows(project / "data" / f"{name}.jsonl", rows)
        made = run(scripts / "new_env.py", name, "--template", template, *columns, cwd=project, env=env)
        assert made["status"] in ("pass", "warn"), (template, made)
        probed = run(
            scripts / "test_reward.py",
            f"environments/{name}/",
            "--env-args",
            json.dumps({"dataset_path": f"data/{name}.jsonl"}),
            "--num-examples",
            "2",
            "--reach-seconds",
            "0",
            *extra,
            cwd=project,
            env=env,
        )
        assert probed["status"] != "error", (template, probed["summary"], probed["checks"][-3:])

    return walk


def rehearsal(scripts: Path, project: Path, env: dict) -> None:
    """SKILL.md's step 8a: the config and its offline rehearsal (the wheel built and installed with uv, loaded
    by the worker)."""
    write_sums(scripts, project, env)
    shipped = project / "environments" / "sums" / "data"
    shipped.mkdir(exist_ok=True)
    shutil.copy(project / "data" / "train.jsonl", shipped / "train.jsonl")
    submit = ("--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "me/sums", "--env-arg")
    submit += ('dataset_path="train.jsonl"', "--max-steps", "5", "--offline", "--output")
    # Once as the user runs it, then from a process that writes no bytecode, with an empty cache: that process
    # exports no cache folder (its children would compile everything from source there), and the rehearsal's
    # worker, which does write (its cached venv keeps its bytecode), must be told where, or it writes into the
    # skill folder.
    quiet = env | {"PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(project.parent / "cache-no-writes")}
    for output, environ in (("configs/sums.toml", env), ("configs/again.toml", quiet)):
        submitted = run(scripts / "submit_training.py", *submit, output, cwd=project, env=environ)
        assert any(c["id"] == "rehearse-load" and c["status"] == "pass" for c in submitted["checks"]), [
            (c["id"], c["status"], c["message"][:900]) for c in submitted["checks"] if c["status"] != "pass"
        ]
    assert list((project.parent / "cache-no-writes" / "verifiers-lab" / "pycache").rglob("*.pyc"))


# One part of the road a test (each under a minute on a loaded machine), all on one installed copy.


@pytest.mark.v1
def test_the_numeric_road_writes_nothing_into_the_installed_skill_folder(installed):
    assert_untouched(installed, numeric_road)


@pytest.mark.v1
@pytest.mark.parametrize("kind", KINDS, ids=[k[1] for k in KINDS])
def test_a_judge_tool_or_code_environment_s_road_writes_nothing_into_the_installed_skill_folder(installed, kind):
    assert_untouched(installed, kind_road(*kind))


@pytest.mark.v1
@pytest.mark.skipif(rehearse.uv_command() is None, reason="the offline rehearsal needs uv")
def test_the_offline_rehearsal_writes_nothing_into_the_installed_skill_folder(installed):
    assert_untouched(installed, rehearsal)
