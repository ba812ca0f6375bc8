"""The pip install path: the wheel carries every script, the library and the templates, and runs without a checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT, SCRIPTS

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_script_has_a_console_entry_point():
    entry_points = PYPROJECT["project"]["scripts"]
    for script in sorted(SCRIPTS.glob("*.py")):
        name = "vlab-" + script.stem.replace("_", "-")
        assert entry_points.get(name) == f"vlab_scripts.{script.stem}:main", f"add {name} to [project.scripts]"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 and ("Could not find a version" in proc.stderr or "connection" in proc.stderr.lower()):
        pytest.skip("no package index reachable to fetch the build backend")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = out.glob("verifiers_lab-*.whl")
    return path


def test_wheel_contents(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for script in SCRIPTS.glob("*.py"):
        assert f"vlab_scripts/{script.name}" in names
    for module in (SCRIPTS / "vlab").rglob("*.py"):
        assert "vlab/" + module.relative_to(SCRIPTS / "vlab").as_posix() in names
    for template in (ROOT / "templates").rglob("*"):
        if template.is_file() and "__pycache__" not in template.parts:
            assert "vlab_templates/" + template.relative_to(ROOT / "templates").as_posix() in names, template
    assert not [n for n in names if n.rsplit("/", 1)[-1] == "metadata.json"]


def test_installed_wheel_runs_without_checkout(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = dict(os.environ, PYTHONPATH=str(target))
    run = lambda *args: subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,  # noqa: E731
                                       cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, timeout=300)
    r = run("vlab_scripts.preflight", "--json", "--offline")
    assert json.loads(r.stdout)["tool"] == "preflight", r.stderr
    # templates are found as package data, not in a checkout
    from vlab import paths  # noqa: F401  (the checkout's copy; the subprocess uses the wheel's)

    code = "from vlab.paths import templates_dir; print(templates_dir())"
    where = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, check=True)
    found = Path(where.stdout.strip())
    assert str(found).startswith(str(target)), found
    assert (found / "configs" / "hosted-training.toml").is_file()
