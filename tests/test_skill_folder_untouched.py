"""Nothing the pack runs writes into the installed skill folder (issue 36): a rehearsal once left 17 `.pyc`
files in `scripts/vlab/**/__pycache__`, which `npx skills update` replaces and SKILL.md says never to touch.

The skill folder is copied as `npx skills add` installs it; SKILL.md's road is walked with the copy's scripts
(inspect_dataset, new_env, test_reward and submit_training's rehearsal, which loads the environment through
the pack's worker in its own venv) with Python free to write bytecode (no PYTHONDONTWRITEBYTECODE); then the
copy must hold exactly the files it held before, and the bytecode must be in the cache folder instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SKILL_ROOT

from vlab.hosted import rehearse

pytestmark = pytest.mark.slow

ROWS = [{"question": f"What is {i} plus {i + 1}?", "answer": str(2 * i + 1)} for i in range(12)]


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))}


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
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return json.loads(proc.stdout)


@pytest.mark.v1
def test_walking_skill_md_writes_nothing_into_the_installed_skill_folder(tmp_path):
    skill = tmp_path / "agents" / "skills" / "verifiers-lab"
    shutil.copytree(SKILL_ROOT, skill, ignore=shutil.ignore_patterns("__pycache__"))
    before = snapshot(skill)
    project = tmp_path / "project"
    (project / "data").mkdir(parents=True)
    (project / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    uv_cache = subprocess.run([rehearse.uv_command() or "uv", "cache", "dir"], capture_output=True, text=True, env=env)
    env |= {"XDG_CACHE_HOME": str(cache), "VLAB_REHEARSE_CACHE": str(tmp_path / "rehearse")}
    if uv_cache.returncode == 0:  # the offline rehearsal installs from uv's own cache: keep it where it is
        env["UV_CACHE_DIR"] = uv_cache.stdout.strip()
    scripts = skill / "scripts"

    report = run(scripts / "inspect_dataset.py", "data/train.jsonl", cwd=project, env=env)
    (project / "inspect.json").write_text(json.dumps(report))
    made = run(scripts / "new_env.py", "sums", "--from-inspect", "inspect.json", "--api", "v1", cwd=project, env=env)
    assert made["status"] == "pass", made
    probed = run(
        scripts / "test_reward.py",
        "environments/sums/",
        "--env-args",
        json.dumps({"dataset_path": "data/train.jsonl"}),
        cwd=project,
        env=env,
    )
    assert probed["status"] != "error", probed
    if rehearse.uv_command() is not None:  # the rehearsal builds and installs the wheel with uv
        shipped = project / "environments" / "sums" / "data"
        shipped.mkdir(exist_ok=True)
        shutil.copy(project / "data" / "train.jsonl", shipped / "train.jsonl")
        submitted = run(
            scripts / "submit_training.py",
            "--model",
            "Qwen/Qwen3-4B-Instruct-2507",
            "--env",
            "owner/sums",
            "--env-arg",
            'dataset_path="train.jsonl"',
            "--max-steps",
            "5",
            "--offline",
            "--output",
            "configs/sums.toml",
            cwd=project,
            env=env,
        )
        assert any(c["id"] == "rehearse-load" and c["status"] == "pass" for c in submitted["checks"]), [
            (c["id"], c["status"], c["message"][:900]) for c in submitted["checks"] if c["status"] != "pass"
        ]

    after = snapshot(skill)
    added = sorted(set(after) - set(before))
    changed = sorted(k for k in before if k in after and after[k] != before[k])
    assert not added and not changed, {"added": added[:20], "changed": changed[:20]}
    assert list((cache / "verifiers-lab" / "pycache").rglob("*.pyc")), "the bytecode went nowhere"
