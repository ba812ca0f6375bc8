"""SKILL.md's frontmatter, checked the way skill installers and validators read it."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import ROOT

ALLOWED = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def frontmatter() -> tuple[dict, str]:
    import yaml

    text = (ROOT / "SKILL.md").read_text(encoding="utf-8")
    m = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.S)
    assert m, "SKILL.md must open with a --- frontmatter block"
    return yaml.safe_load(m.group(1)), m.group(2)


def test_frontmatter_fields():
    fm, body = frontmatter()
    assert set(fm) <= ALLOWED, f"keys validators reject: {set(fm) - ALLOWED}"
    assert fm["name"] == "verifiers-lab"
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", fm["name"]) and len(fm["name"]) <= 64
    desc = fm["description"]
    assert isinstance(desc, str) and 1 <= len(desc) <= 1024
    assert "<" not in desc and ">" not in desc
    assert re.search(r"\buse (it|this|when)\b", desc, re.I), "description must say when to use the skill"
    assert "verifiers" in desc.lower()
    assert isinstance(fm.get("metadata"), dict) and re.fullmatch(r"\d+\.\d+\.\d+", fm["metadata"].get("version", ""))
    assert all(isinstance(v, str) for v in fm["metadata"].values()), "metadata values must be strings"
    assert body.count("\n") < 500


def test_version_matches_package():
    from vlab import __version__

    fm, _ = frontmatter()
    assert fm["metadata"]["version"] == __version__
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'version = "{__version__}"' in pyproject


def test_no_file_named_metadata_json_in_pack():
    """`npx skills add` drops files named metadata.json: the pack must not rely on one."""
    try:
        files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("not a git checkout")
    assert not [f for f in files if f.rsplit("/", 1)[-1] == "metadata.json"]


def test_pyproject_lists_every_internal_package():
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(cfg["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT / "scripts").parts) for p in (ROOT / "scripts" / "vlab").rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
