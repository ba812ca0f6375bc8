"""The rehearsal without a package index (issue 52; vlab.hosted.rehearse_offline), on a machine whose uv cache
is empty: every test runs with UV_OFFLINE=1 and empty UV_CACHE_DIR and VLAB_REHEARSE_CACHE folders.

- The build backend the package's pyproject.toml names, installed in this Python, builds the wheel (setuptools:
  both test venvs have it); one installed nowhere stops submit_training (exit 1, no config written) naming the
  backend and the ways on, and is a warning for local_train's hand-off.
- verifiers 0.4.0 and the wheel's Requires-Dist are linked from this Python's packages into the throwaway venv,
  nothing undeclared with them (the 0.4 venv); where this Python lacks one (verifiers 0.4.0 in the 0.3.1 venv, a
  dependency installed nowhere) submit_training refuses naming each.

The full rehearsal of the templates offline is tests/test_rehearse.py's (their hatchling comes from the test extra).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SKILL_ROOT, VERIFIERS, assert_result, run_script

from vlab.core.result import Result
from vlab.hosted import rehearse
from vlab.hosted.rehearse_offline import Unavailable, backend_of

pytestmark = pytest.mark.skipif(rehearse.uv_command() is None, reason="the rehearsal needs uv")

TOOL = "submit_training"
MODEL = "Qwen/Qwen3-4B-Instruct-2507"
SETUPTOOLS = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
ABSENT = '[build-system]\nrequires = ["vlab-absent-backend>=1"]\nbuild-backend = "vlab_absent_backend"\n'


@pytest.fixture
def bare(tmp_path, monkeypatch) -> dict[str, str]:
    """An empty uv cache and rehearsal cache, and no package index: for this process and the scripts it runs."""
    env = {
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "VLAB_REHEARSE_CACHE": str(tmp_path / "rehearse-cache"),
        "UV_OFFLINE": "1",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def v1_package(root: Path, name: str, build_system: str, dependencies: tuple[str, ...] = ()) -> Path:
    """The v1-numeric template's module as package ``name`` under root/environments, with its own pyproject.toml."""
    module = name.replace("-", "_")
    folder = root / "environments" / module
    folder.mkdir(parents=True)
    template = SKILL_ROOT / "templates" / "environments" / "v1-numeric" / "v1_numeric.py"
    (folder / f"{module}.py").write_text(template.read_text().replace("v1_numeric", module).replace("v1-numeric", name))
    deps = ", ".join(json.dumps(d) for d in ("verifiers>=0.4.0", *dependencies))
    setuptools = f'\n[tool.setuptools]\npy-modules = ["{module}"]\n' if "setuptools" in build_system else ""
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "0.1.0"\nrequires-python = ">=3.11"\ndependencies = [{deps}]\n\n'
        + build_system
        + setuptools
    )
    return folder


def submit(project: Path, env: dict, name: str) -> dict:
    args = ["--model", MODEL, "--env", f"me/{name}", "--offline"]  # no data: the refusal comes first
    r = run_script(TOOL, *args, "--output", "configs/c.toml", "--json", cwd=project, env=env, timeout=600)
    assert "Traceback" not in r.stderr
    return r.json


def test_the_build_backend_installed_here_builds_the_wheel_when_uv_s_cache_has_none(tmp_path, bare):
    folder = v1_package(tmp_path, "rh-setuptools", SETUPTOOLS)
    assert backend_of(folder).missing == ()  # setuptools is installed in this Python
    wheel = rehearse.build_wheel(folder, tmp_path / "dist", rehearse.uv_command(), online=False)
    assert "rh_setuptools.py" in wheel.names and "verifiers>=0.4.0" in wheel.requires
    assert wheel.built.startswith("by setuptools ") and "installed in this Python, without isolation" in wheel.built


def test_with_no_build_backend_anywhere_submit_training_refuses_offline_and_writes_nothing(tmp_path, bare):
    v1_package(tmp_path, "rh-absent", ABSENT)
    obj = assert_result(submit(tmp_path, bare, "rh-absent"), TOOL, 1)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse-build"], failed
    message, hint = failed[0]["message"], failed[0]["hint"]
    assert "me/rh-absent: the wheel cannot be built offline: uv's cache has no build backend" in message
    assert "vlab-absent-backend>=1 (not installed)" in message and sys.executable in message
    assert "the config is not written without a rehearsal" in message
    assert "once with network access" in hint and "pip install 'vlab-absent-backend>=1'" in hint
    assert "--no-rehearse" in hint
    assert obj["data"]["written"] is False and not (tmp_path / "configs" / "c.toml").exists()
    # local_train's prime-rl hand-off: the same finding, a warning
    result = Result("local_train")
    plain = {"orchestrator": {"train": {"source": [{"env": {"taskset": {"id": "me/rh-absent"}}}]}}}
    rehearse.rehearse(result, plain, "prime-rl", rehearse.RehearseOptions(online=False, cwd=str(tmp_path)))
    (check,) = [c for c in result.checks if c.id == "rehearse-build"]
    assert check.status == "warn" and "cannot be built offline" in check.message and "--no-rehearse" not in check.hint


def test_offline_the_venv_links_verifiers_and_the_declared_packages_from_this_python_and_nothing_else(tmp_path, bare):
    folder = v1_package(tmp_path, "rh-linked", SETUPTOOLS, ("numpy",))
    uv = rehearse.uv_command()
    wheel = rehearse.build_wheel(folder, tmp_path / "dist", uv, online=False)
    if VERIFIERS.classic:  # this Python has verifiers 0.3.1: nothing here can install 0.4.0 offline
        with pytest.raises(Unavailable) as raised:
            rehearse.install(wheel, uv, online=False)
        assert f"verifiers==0.4.0 ({VERIFIERS.version} installed)" in raised.value.missing
        return
    python, cached, how = rehearse.install(wheel, uv, online=False)
    assert not cached and "linked from those installed in" in how and sys.prefix in how
    # declared (and verifiers' own) import; pytest, installed here but declared by no one, does not
    code = "import verifiers.v1, numpy, rh_linked\ntry:\n    import pytest\nexcept ImportError:\n    print('no pytest')"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "no pytest", done.stderr[-2000:]
    again = rehearse.install(wheel, uv, online=False)
    assert again[0] == python and again[1] is True


def test_a_dependency_installed_nowhere_stops_submit_training_offline_naming_it(tmp_path, bare):
    v1_package(tmp_path, "rh-undeclared-index", SETUPTOOLS, ("vlab-absent-dependency>=2",))
    obj = assert_result(submit(tmp_path, bare, "rh-undeclared-index"), TOOL, 1)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse-install"], failed
    message, hint = failed[0]["message"], failed[0]["hint"]
    assert "the wheel cannot be installed offline" in message and "vlab-absent-dependency>=2 (not installed)" in message
    assert ("verifiers==0.4.0" in message) is VERIFIERS.classic
    assert "the config is not written without a rehearsal" in message
    assert "once with network access" in hint and "pip install 'vlab-absent-dependency>=2'" in hint
    assert obj["data"]["written"] is False and not (tmp_path / "configs" / "c.toml").exists()
