"""The pack installed the ways users install it, and run from the user's own project.

- a clone or skill folder, called by path from a project folder elsewhere: the whole
  workflow works and writes nothing inside the pack's folder, and what it says to run
  next names the scripts by that path;
- `npx skills add` from the local checkout (skills 1.5.18, which runs on Node 20),
  then preflight through the installed copy;
- the dependency guard: a missing package is exit 3 with the install command, never a traceback.

The pip install (``vlab-*`` commands) is tested in test_packaging.py.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, SCRIPT_NAMES, SKILL_ROOT, assert_result, run_script
from workflow_fixtures import clone_pack, clone_repo, run_command, run_workflow, said, snapshot

# The `skills` release that runs on Node 20 (1.7.x needs Node >= 22.20; README documents both).
SKILLS_RELEASE = "skills@1.5.18"


def python_env(tmp_path: Path) -> dict[str, str]:
    """`python` on PATH is this interpreter, as in a user's activated virtual environment."""
    return {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def script_commands(lines: list[str]) -> list[tuple[str, str]]:
    """(script path, line) for every `python PATH.py` a next step or hint names."""
    return [(m.group(1), line) for line in lines for m in re.finditer(r"\bpython (\S+?\.py)\b", line)]


# -- the workflow from outside the pack's folder ---------------------------------------------------


@pytest.mark.slow
def test_workflow_from_a_project_writes_nothing_inside_the_pack(tmp_path):
    skill = clone_pack(tmp_path / "skills" / "verifiers-lab")
    project = tmp_path / "project"
    project.mkdir()
    before = snapshot(skill)
    env = {**python_env(tmp_path), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}

    def run(tool: str, *args: str):
        return run_command([sys.executable, str(skill / "scripts" / f"{tool}.py"), *args], project, env)

    results = run_workflow(run, project)
    assert snapshot(skill) == before, "the workflow changed the pack's folder"
    named = script_commands(said(results))
    assert named, "the results name no script to run next"
    for path, line in named:
        assert (project / path).resolve().is_file(), f"{line!r} names a script that is not there"
        assert (project / path).resolve().is_relative_to(skill), f"{line!r} names a script outside the pack"
    # the references the results point at are the skill folder's files
    for line in said(results):
        for ref in re.findall(r"\S*references/[\w.-]+\.md", line):
            assert (project / ref).is_file(), line


def test_next_steps_name_the_path_the_script_was_run_by(tmp_path):
    """Relative to the project when the pack is inside it (an installed skill), absolute otherwise."""
    project = tmp_path / "project"
    skill = clone_pack(project / ".claude" / "skills" / "verifiers-lab")
    r = run_command(
        [sys.executable, ".claude/skills/verifiers-lab/scripts/preflight.py", "--offline", "--json"], project
    )
    assert r.json["next_steps"][-1] == "python .claude/skills/verifiers-lab/scripts/inspect_dataset.py DATASET --json"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run_command([sys.executable, str(skill / "scripts" / "preflight.py"), "--offline", "--json"], elsewhere)
    assert r.json["next_steps"][-1] == f"python {skill / 'scripts' / 'inspect_dataset.py'} DATASET --json"
    help_text = run_command([sys.executable, str(skill / "scripts" / "new_env.py"), "--help"], elsewhere).stdout
    assert f"python {skill / 'scripts' / 'inspect_dataset.py'} data/train.jsonl" in help_text
    assert "python scripts/" not in help_text


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_help_examples_name_existing_scripts(name, tmp_path):
    text = run_script(name, "--help", cwd=tmp_path).stdout
    for path, line in script_commands(text.splitlines()):
        assert Path(path).is_absolute() and Path(path).is_file(), line
    assert "demo/" not in text and ".demo-out" not in text, "examples must use the user's paths, not the demo's"


# -- the dependency guard ----------------------------------------------------------------------------

# A module that raises like an absent package: sys.meta_path first, for the names in VLAB_TEST_HIDE.
HIDER = textwrap.dedent(
    """\
    import os, sys
    HIDDEN = set(filter(None, os.environ.get("VLAB_TEST_HIDE", "").split(",")))

    class Hider:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Hider())
    """
)


def hiding(tmp_path: Path, *modules: str) -> dict[str, str]:
    folder = tmp_path / "hide"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(HIDER)
    return {**python_env(tmp_path), "PYTHONPATH": str(folder), "VLAB_TEST_HIDE": ",".join(modules)}


def test_missing_dependency_at_import_is_exit_3_with_the_install_command(tmp_path):
    env = hiding(tmp_path, "numpy")
    r = run_script("check_reward_distribution", "--json", env=env, cwd=tmp_path)
    obj = assert_result(r.json, "check_reward_distribution", 3)
    assert r.returncode == 3 and obj["status"] == "error"
    assert "numpy" in obj["summary"]
    # from a clone the requirement itself, as pyproject.toml declares it, for this interpreter
    assert obj["next_steps"][0] == "python -m pip install 'numpy>=1.26'"
    assert "Traceback" not in r.stdout + r.stderr
    human = run_script("check_reward_distribution", env=env, cwd=tmp_path)
    assert human.returncode == 3 and "Traceback" not in human.stdout + human.stderr
    assert "python -m pip install 'numpy>=1.26'" in human.stdout


def test_missing_dependency_names_this_interpreter_when_python_is_another(tmp_path):
    env = hiding(tmp_path, "tomlkit")
    env["PATH"] = os.environ["PATH"]  # `python` on PATH may be another interpreter: name this one
    r = run_script("submit_training", "--json", env=env, cwd=tmp_path)
    assert_result(r.json, "submit_training", 3)
    hint = r.json["next_steps"][0]
    assert hint.endswith("install 'tomlkit>=0.12'")
    assert hint.startswith("python -m pip") or hint.startswith(f"{shlex.quote(sys.executable)} -m pip"), hint


def test_missing_dependency_inside_a_tool_is_exit_3_too(tmp_path):
    """Imported only when the tool needs it (torch for training): the runner maps it the same way."""
    env = hiding(tmp_path, "torch")
    r = run_script(
        "local_train",
        *("--env", "environments/x/", "--model", "tiny-random", "--max-steps", "1", "--json"),
        env=env,
        cwd=tmp_path,
    )
    obj = assert_result(r.json, "local_train", 3)
    assert "torch" in obj["summary"] + " ".join(obj["next_steps"]), obj
    assert any("pip install" in s and "torch" in s for s in obj["next_steps"]), obj


def test_every_script_imports_the_guard_before_anything_else():
    for name in [p.stem for p in (SKILL_ROOT / "scripts").glob("*.py") if p.stem != "test_reward"]:
        text = (SKILL_ROOT / "scripts" / f"{name}.py").read_text()
        imports = re.findall(r"^(?:import|from) (\S+)", text, re.M)
        first_pack = next(m for m in imports if m.startswith("vlab"))
        assert first_pack == "vlab.core.guard", f"{name}.py: import vlab.core.guard before {first_pack}"


def test_scripts_in_a_bare_python_answer_with_exit_3_not_a_traceback(tmp_path):
    """A python3 without the pack's dependencies: every script still keeps the contract."""
    venv = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = {"PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"}
    codes = {}
    for name in SCRIPT_NAMES:
        r = run_script(name, "--json", python=str(venv / "bin" / "python"), env=env, cwd=tmp_path)
        assert "Traceback" not in r.stdout + r.stderr, (name, r)
        obj = r.json  # one JSON object, even here (jsonschema itself is absent from the bare venv)
        assert obj["tool"] == name and obj["exit_code"] == r.returncode, (name, obj)
        codes[name] = r.returncode
        if r.returncode == 3 and obj["status"] == "error":
            assert obj["next_steps"][0].startswith("python -m pip install "), (name, obj)
    # these import a third-party package before their main runs
    assert codes["check_reward_distribution"] == 3 and codes["submit_training"] == 3, codes
    assert codes["preflight"] == 3, codes


# -- npx skills add -----------------------------------------------------------------------------------


def installed_size(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


@pytest.mark.slow
def test_npx_skills_add_installs_the_pack_and_preflight_runs_from_the_project(tmp_path):
    npx = shutil.which("npx")
    if npx is None or shutil.which("node") is None:
        pytest.skip("needs Node.js and npx on PATH (the `skills` installer is an npm package)")
    source = clone_repo(tmp_path / "verifiers-lab")  # what `npx skills add OWNER/verifiers-lab` clones
    project = tmp_path / "project"
    project.mkdir()
    env = {"DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1", "CI": "1", "npm_config_update_notifier": "false"}
    proc = run_command(
        [npx, "-y", SKILLS_RELEASE, "add", str(source), "-a", "claude-code", "-y", "--copy"], project, env, 600
    )
    if proc.returncode != 0 and re.search(r"E(NOTFOUND|AI_AGAIN|CONNREFUSED)|ETIMEDOUT|network", proc.stderr):
        pytest.skip(f"the npm registry is not reachable to fetch {SKILLS_RELEASE}")
    assert proc.returncode == 0, proc
    installed = project / ".claude" / "skills" / "verifiers-lab"
    assert (installed / "SKILL.md").is_file()
    for needed in ("references/script-contract.md", "scripts/preflight.py", "templates/configs/local-train.toml"):
        assert (installed / needed).is_file(), needed
    assert not list(installed.rglob("metadata.json"))
    # Lean: the skill lives in skills/verifiers-lab/, so the repository's development files stay behind.
    for dev_only in ("tests", "bench", "demo", ".ci", "Makefile", "pyproject.toml", ".venv"):
        assert not (installed / dev_only).exists(), f"{dev_only} was installed into the skill folder"
    assert os.access(installed / "scripts" / "preflight.py", os.X_OK)
    count, size = installed_size(installed)
    print(f"\ninstalled skill: {count} files, {size} bytes")
    before = snapshot(installed)
    r = run_command(
        [sys.executable, ".claude/skills/verifiers-lab/scripts/preflight.py", "--offline", "--json"], project
    )
    obj = assert_result(r.json, "preflight")
    assert r.returncode == 0, r
    assert obj["next_steps"][-1].startswith("python .claude/skills/verifiers-lab/scripts/inspect_dataset.py")
    assert snapshot(installed) == before


def test_readme_documents_both_installer_paths():
    readme = (ROOT / "README.md").read_text()
    assert f"npx -y {SKILLS_RELEASE} add" in readme
    assert "npx -y -p node@22 -p skills@1.7.4 -- skills add" in readme
    assert "22.20" in readme


# -- how the invocation is told apart, and installs named ------------------------------------------


def test_detect_tells_script_path_from_vlab_command(tmp_path, monkeypatch):
    from vlab.core import invocation

    monkeypatch.chdir(tmp_path)
    scripts = SKILL_ROOT / "scripts"
    assert invocation.detect("/usr/local/bin/vlab-preflight", "") == invocation.Invocation("pip")
    assert invocation.detect("/x/site-packages/vlab_scripts/preflight.py", "vlab_scripts.preflight").pip
    how = invocation.detect(str(scripts / "preflight.py"), "")
    assert how == invocation.Invocation("script", scripts)
    assert invocation.command("test_reward", how) == f"python {scripts / 'test_reward.py'}"
    assert invocation.doc("evaluation-guide", how) == str(SKILL_ROOT / "references" / "evaluation-guide.md")
    pip = invocation.Invocation("pip")
    assert invocation.command("check_reward_distribution", pip) == "vlab-check-reward-distribution"
    assert invocation.doc("training-guide", pip) == "vlab-docs training-guide"
    assert (
        invocation.tool_name("/p/scripts/probe_reward.py") == invocation.tool_name("vlab-test-reward") == "test_reward"
    )


class _Dist:
    def __init__(self, direct_url: dict):
        self.text = json.dumps(direct_url)

    def read_text(self, name):
        return self.text if name == "direct_url.json" else None


@pytest.mark.parametrize(
    "direct_url, expected",
    [
        (
            {"url": "https://github.com/o/verifiers-lab", "vcs_info": {"vcs": "git", "commit_id": "ab12"}},
            "install 'verifiers-lab[train] @ git+https://github.com/o/verifiers-lab'",
        ),
        (
            {"url": "https://github.com/o/r", "vcs_info": {"vcs": "git", "requested_revision": "v0.1.0"}},
            "install 'verifiers-lab[train] @ git+https://github.com/o/r@v0.1.0'",
        ),
        (
            {"url": "file:///home/u/verifiers-lab", "dir_info": {"editable": True}},
            "install -e '/home/u/verifiers-lab[train]'",
        ),
    ],
)
def test_pip_install_of_an_extra_follows_where_the_pack_came_from(monkeypatch, direct_url, expected):
    from vlab.core import invocation

    monkeypatch.setattr(invocation, "current", lambda: invocation.Invocation("pip"))
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: _Dist(direct_url))
    assert invocation.install_extra("train").endswith(expected)
