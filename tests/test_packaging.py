"""The pip install path: the wheel carries the library, the scripts, the templates, SKILL.md and the references,
and nothing else; it builds without warnings; installed, its `vlab-*` commands run the workflow from a project
folder, and everything they say to run next is a command on PATH."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, SCRIPT_NAMES, SCRIPTS, SKILL_ROOT
from workflow_fixtures import clone_repo, run_command, run_workflow, said

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_script_has_a_console_entry_point():
    entry_points = PYPROJECT["project"]["scripts"]
    # probe_reward.py is the test_reward command (test_reward.py is its shim for running from a checkout)
    commands = {"probe_reward": "vlab-test-reward"}
    for script in sorted(SCRIPTS.glob("*.py")):
        if script.stem == "test_reward":
            continue
        name = commands.get(script.stem, "vlab-" + script.stem.replace("_", "-"))
        assert entry_points.get(name) == f"vlab_scripts.{script.stem}:main", f"add {name} to [project.scripts]"


class Built:
    def __init__(self, path: Path, log: str):
        self.path, self.log = path, log


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    """The wheel, built from a clean copy of the pack: no stale build/ folder, nothing written into the checkout."""
    source = clone_repo(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("wheel")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if proc.returncode != 0 and ("Could not find a version" in proc.stderr or "connection" in proc.stderr.lower()):
        pytest.skip("no package index reachable to fetch the build backend")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = out.glob("verifiers_lab-*.whl")
    return Built(path, proc.stdout + proc.stderr)


@pytest.fixture(scope="module")
def wheel(built) -> Path:
    return built.path


def test_build_is_warning_free(built):
    warnings = [line.strip() for line in built.log.splitlines() if re.search(r"warning", line, re.I)]
    assert not warnings, "\n".join(warnings[:20])


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for script in SCRIPTS.glob("*.py"):
        assert f"vlab_scripts/{script.name}" in names
    for module in (SCRIPTS / "vlab").rglob("*.py"):
        assert "vlab/" + module.relative_to(SCRIPTS / "vlab").as_posix() in names
    for template in (SKILL_ROOT / "templates").rglob("*"):
        if template.is_file() and "__pycache__" not in template.parts:
            assert "vlab_templates/" + template.relative_to(SKILL_ROOT / "templates").as_posix() in names, template
    assert not [n for n in names if n.rsplit("/", 1)[-1] == "metadata.json"]
    assert "vlab_docs/SKILL.md" in names
    for ref in (SKILL_ROOT / "references").iterdir():
        assert f"vlab_docs/references/{ref.name}" in names, ref


def test_wheel_holds_only_the_package_and_its_data(wheel):
    """Nothing at the top of site-packages but the four packages (no README.md, pyproject.toml, tests, demo)."""
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    (dist_info,) = [t for t in top if t.endswith(".dist-info")]
    assert top - {dist_info} == {"vlab", "vlab_scripts", "vlab_templates", "vlab_docs"}
    assert not [n for n in names if "/" not in n], "files at the top of site-packages"
    for dev in ("tests/", "bench/", "demo/", ".ci/"):
        assert not [n for n in names if dev in n], dev
    docs = [n for n in names if n.startswith("vlab_docs/")]
    assert all(n == "vlab_docs/SKILL.md" or n.startswith("vlab_docs/references/") for n in docs), docs


def test_installed_wheel_runs_without_checkout(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    run = lambda *args: subprocess.run(
        [sys.executable, "-m", *args],
        capture_output=True,
        text=True,  # noqa: E731
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    r = run("vlab_scripts.preflight", "--json", "--offline")
    assert json.loads(r.stdout)["tool"] == "preflight", r.stderr
    # templates are found as package data, not in a checkout
    from vlab.core import paths  # noqa: F401  (the checkout's copy; the subprocess uses the wheel's)

    code = "from vlab.core.paths import templates_dir; print(templates_dir())"
    where = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, check=True
    )
    found = Path(where.stdout.strip())
    assert str(found).startswith(str(target)), found
    assert (found / "configs" / "hosted-training.toml").is_file()


# -- installed with pip, run from a project ----------------------------------------------------------


@pytest.fixture(scope="module")
def pip_installed(wheel, tmp_path_factory) -> dict[str, str]:
    """The wheel installed into its own folder, its `vlab-*` commands first on PATH (the venv's packages behind)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    path = os.pathsep.join([str(target / "bin"), str(Path(sys.executable).parent), os.environ["PATH"]])
    return {"PATH": path, "PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def test_every_script_is_a_command_after_pip_install(pip_installed):
    for name in SCRIPT_NAMES:
        command = "vlab-" + name.replace("_", "-")
        assert shutil.which(command, path=pip_installed["PATH"]), command


@pytest.mark.slow
def test_pip_workflow_names_commands_that_exist(pip_installed, tmp_path):
    def run(tool: str, *args: str):
        return run_command(["vlab-" + tool.replace("_", "-"), *args], tmp_path, pip_installed)

    lines = said(run_workflow(run, tmp_path))
    assert lines
    for line in lines:
        assert "scripts/" not in line and "references/" not in line, f"a path that only exists in a clone: {line!r}"
        for command in re.findall(r"(?<![\w/.-])vlab-[a-z-]+", line):
            assert shutil.which(command, path=pip_installed["PATH"]), f"{line!r}: {command} is not on PATH"
        first = line.split()[0]
        if first.startswith("vlab-") or first in ("python", "pip", "prime", "vf-eval"):
            assert shutil.which(first, path=pip_installed["PATH"]), f"{line!r}: {first} is not on PATH"
    assert any(line.startswith("vlab-test-reward ") for line in lines)
    assert any("vlab-docs evaluation-guide" in line for line in lines)


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_pip_help_names_vlab_commands(name, pip_installed, tmp_path):
    command = "vlab-" + name.replace("_", "-")
    text = run_command([command, "--help"], tmp_path, pip_installed).stdout
    assert f"usage: {command}" in text
    assert "scripts/" not in text
    if "examples:" in text:
        assert f"  {command} " in text.split("examples:", 1)[1]


def test_pip_missing_extra_names_the_extra_as_installed(pip_installed, tmp_path):
    """A missing package of an extra: the extra, from where this install came (here a wheel file)."""
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\n"
        "class Hider:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Hider())\n"
    )
    env = dict(pip_installed, PYTHONPATH=f"{hide}{os.pathsep}{pip_installed['PYTHONPATH']}")
    r = run_command(["vlab-local-train", "--env", "x/", "--model", "tiny-random", "--json"], tmp_path, env)
    assert r.returncode == 3, r
    hint = r.json["next_steps"][0]
    assert "-m pip install 'verifiers-lab[train] @ file://" in hint and hint.endswith(".whl'"), hint


def test_pip_preflight_names_the_hosted_extra(pip_installed, tmp_path):
    env = dict(pip_installed, PATH=str(Path(pip_installed["PYTHONPATH"]) / "bin"))  # no prime anywhere
    r = run_command(["vlab-preflight", "--for", "hosted", "--json"], tmp_path, env)
    assert r.returncode == 3, r
    hint = next(c["hint"] for c in r.json["checks"] if c["id"] == "prime-cli")
    assert "-m pip install 'verifiers-lab[hosted] @ file://" in hint, hint
