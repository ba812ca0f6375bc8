"""SKILL.md's frontmatter, checked the way skill installers and validators read it."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import ROOT, SKILL_ROOT

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

ALLOWED = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def frontmatter() -> tuple[dict, str]:
    import yaml

    text = (SKILL_ROOT / "SKILL.md").read_text(encoding="utf-8")
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
        files = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("not a git checkout")
    assert not [f for f in files if f.rsplit("/", 1)[-1] == "metadata.json"]


def test_pyproject_lists_every_internal_package():
    import tomllib

    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(cfg["tool"]["setuptools"]["packages"])
    found = {
        ".".join(p.parent.relative_to(SKILL_ROOT / "scripts").parts)
        for p in (SKILL_ROOT / "scripts" / "vlab").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_compatibility_names_what_the_pack_needs():
    fm, _ = frontmatter()
    compat = fm.get("compatibility")
    assert isinstance(compat, str) and 1 <= len(compat) <= 500, "the spec allows 1-500 characters"
    for needed in ("Python >= 3.11", "verifiers 0.3", ">= 0.4", "Node >= 22.20", "skills@1.5.18", "GPU", "uv"):
        assert needed in compat, needed


def test_skill_md_sends_work_to_the_users_project():
    _, body = frontmatter()
    assert "from this skill's folder" not in body
    assert "user's project" in body and "$SKILL_DIR" in body
    assert re.search(r"never write inside\s+this skill's folder", body)
    assert "vlab-" in body and "vlab-docs" in body  # the pip-installed names


def test_long_references_open_with_contents():
    for doc in sorted((SKILL_ROOT / "references").glob("*.md")):
        text = doc.read_text(encoding="utf-8")
        if text.count("\n") <= 150:
            continue
        head = text.split("\n## ", 1)[0]
        assert "Contents:" in head, f"{doc.name} has over 150 lines: list its sections at the top"
        for section in re.findall(r"^## (.+)$", text, re.M):
            assert f"[{section}]" in head, f"{doc.name}: contents list misses {section!r}"


def test_script_contract_names_the_folder_claude_code_installs_into():
    text = (SKILL_ROOT / "references" / "script-contract.md").read_text(encoding="utf-8")
    assert "`.claude/skills/verifiers-lab/` with\n  `-a claude-code`" in text


def test_the_v1_eval_step_tells_tool_environments_to_lower_vf_evals_concurrency():
    """Issue 38: SKILL.md's v1 vf-eval on a tool environment, at its default concurrency (128 episodes, each with
    its own tool server), was killed on a 2-core machine with no message; the step now says what to pass."""
    text = (SKILL_ROOT / "SKILL.md").read_text(encoding="utf-8")
    step = text[text.index("### 5. Evaluate with a real model") :]
    step = step[: step.index("\n### ", 10)]
    assert "tool environment" in step and "`-c 4`" in step and "--max-concurrent" in step, step
