"""The pack's workflow as a user runs it from their own project, and the copies of the pack it runs from.

``clone_pack`` copies what a clone holds (git's tracked and unignored files: no virtual
environments, caches or outputs). ``run_workflow`` runs SKILL.md's steps (preflight,
inspect_dataset, new_env, test_reward, check_reward_distribution, a submit_training dry
run, docs) in a project folder through a caller-given ``run(tool, *args)``, so that the
same steps run by script path (a clone, an installed skill folder) and as ``vlab-*``
commands (a pip install).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, SKILL_ROOT, ScriptRun, assert_result
from evalfile_fixtures import mixed_run, write_classic_run


def tracked_files(root: Path) -> list[str]:
    """What a clone holds below ``root``: tracked and untracked-but-not-ignored files, relative to it."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("not a git checkout: cannot tell the pack's files from local ones")
    return [name for name in out.splitlines() if (root / name).is_file()]


def _copy(root: Path, dest: Path) -> Path:
    for name in tracked_files(root):
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_bytes((root / name).read_bytes())
        (dest / name).chmod((root / name).stat().st_mode)
    return dest


def clone_pack(dest: Path) -> Path:
    """The skill folder alone (skills/verifiers-lab of a clone), copied to ``dest``."""
    return _copy(SKILL_ROOT, dest)


def clone_repo(dest: Path) -> Path:
    """The whole repository, as `npx skills add OWNER/REPO` clones it."""
    return _copy(ROOT, dest)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file and folder under FOLDER with a digest of its content; Python's __pycache__ left out."""
    state = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if "__pycache__" in rel.parts:
            continue
        state[rel.as_posix()] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def run_command(argv: list[str], cwd: Path, env: dict | None = None, timeout: float = 600) -> ScriptRun:
    full_env = dict(os.environ)
    full_env.pop("VLAB_DEBUG", None)
    full_env.update(env or {})
    proc = subprocess.run(
        argv, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    return ScriptRun(proc)


Runner = Callable[..., ScriptRun]


def run_workflow(run: Runner, project: Path) -> list[dict]:
    """SKILL.md's steps in PROJECT; returns every step's result object (each checked against the schema)."""
    results: list[dict] = []

    def step(tool: str, *args: str, codes=(0,)) -> dict:
        r = run(tool, *args, "--json")
        obj = assert_result(r.json, tool)
        assert r.returncode in codes, r
        results.append(obj)
        return obj

    subprocess.run(
        [sys.executable, str(ROOT / "demo" / "make_data.py"), str(project / "data" / "train.jsonl"), "40"],
        check=True,
        capture_output=True,
    )
    step("preflight", "--offline")
    inspected = step("inspect_dataset", "data/train.jsonl")
    (project / "inspect.json").write_text(json.dumps(inspected))
    made_env = step("new_env", "my-env", "--from-inspect", "inspect.json")
    classic = made_env["data"]["api"] == "classic"  # what new_env picks where only verifiers 0.3.x is installed
    env_args = json.dumps({"dataset_path": "data/train.jsonl"})
    step("test_reward", "environments/my_env/", "--env-args", env_args, "--num-examples", "3")
    write_classic_run(project / "outputs" / "evals" / "my-env--local-model" / "1a2b3c4d", mixed_run())
    step("check_reward_distribution", codes=(0, 1))  # finds the newest run under ./outputs itself
    # As SKILL.md says: the data ships in the package's data/ folder, and submit_training rehearses the run
    # (builds the wheel, installs it in a throwaway venv, loads train.jsonl from it) before writing the config.
    shipped = project / "environments" / "my_env" / "data"
    shipped.mkdir(parents=True, exist_ok=True)
    shutil.copy(project / "data" / "train.jsonl", shipped / "train.jsonl")
    submitted = step(
        "submit_training",
        *("--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "me/my-env", "--max-steps", "20"),
        *("--env-arg", 'dataset_path="train.jsonl"', "--offline", "--output", "configs/my-env.toml"),
        codes=(1,) if classic else (0,),
    )
    if classic:  # Hosted Training runs v1 tasksets only: the gate refuses a classic one and writes no config
        gate = [c for c in submitted["checks"] if c["id"] == "env-generation"]
        assert gate and gate[0]["status"] == "fail", submitted["checks"]
    doc = step("docs", "evaluation-guide")
    assert doc["data"]["text"].startswith("# Evaluating")
    for made in ("environments/my_env", "inspect.json", *(() if classic else ("configs/my-env.toml",))):
        assert (project / made).exists(), made
    return results


def said(results: list[dict]) -> list[str]:
    """Every next step and hint the workflow's results gave."""
    lines = []
    for obj in results:
        lines += obj["next_steps"]
        lines += [c["hint"] for c in obj["checks"] if c["hint"]]
    return lines
