"""How the pack was started, and how to name its commands, documents and installs to match.

The pack runs two ways, and every ``next_steps`` line, hint and ``--help`` example names
commands through this module so that what it says can be typed as it is:

- script: ``python PATH/scripts/preflight.py`` from a clone or the skill folder that
  ``npx skills add`` made; commands are named by that path, documents by their file.
- pip: ``vlab-preflight`` (the wheel's console commands, or ``python -m vlab_scripts.preflight``);
  commands are ``vlab-*``, documents ``vlab-docs NAME``.

The same two ways decide the install command for a missing dependency (``install_*``): a
pip install is extended the way it was made (index, git URL, editable checkout); a clone
or skill folder gets the requirement itself, never a build inside the skill folder.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from vlab.core.paths import PACK_ROOT

DIST = "verifiers-lab"
COMMAND_PREFIX = "vlab-"
SCRIPTS_PACKAGE = "vlab_scripts"  # the wheel's name for scripts/
# Script file names that are not the tool's name (probe_reward.py is the code behind test_reward.py).
SCRIPT_ALIASES = {"probe_reward": "test_reward"}


@dataclass(frozen=True)
class Invocation:
    mode: str  # "script" or "pip"
    scripts_dir: Path | None = None  # script mode: the scripts/ folder, as it is best shown to the user

    @property
    def pip(self) -> bool:
        return self.mode == "pip"


def _shown(path: Path) -> Path:
    """A path as the user would type it from the current directory: relative when inside it."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd())
    except ValueError:
        return absolute


def _is_pack_scripts_dir(folder: Path) -> bool:
    return (folder / "vlab" / "core" / "invocation.py").is_file()


def detect(argv0: str | None = None, main_module: str | None = None) -> Invocation:
    """Decide from ``sys.argv[0]`` and ``__main__``'s module name (both overridable for tests)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    if main_module is None:
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        main_module = getattr(spec, "name", "") or ""
    name = Path(argv0).name if argv0 else ""
    if name.startswith(COMMAND_PREFIX) or main_module.startswith(SCRIPTS_PACKAGE + "."):
        return Invocation("pip")
    if name.endswith(".py") and Path(argv0).parent.name == SCRIPTS_PACKAGE:
        return Invocation("pip")
    if name.endswith(".py") and _is_pack_scripts_dir(Path(argv0).parent):
        return Invocation("script", _shown(Path(argv0).parent))
    # Called in-process (tests, python -c): a checkout or skill folder has the scripts beside vlab.
    scripts = PACK_ROOT / "scripts"
    if _is_pack_scripts_dir(scripts) and (scripts / "preflight.py").is_file():
        return Invocation("script", _shown(scripts))
    return Invocation("pip")


@functools.cache
def current() -> Invocation:
    return detect()


def tool_name(argv0: str) -> str:
    """The tool a script path or command stands for: '…/probe_reward.py' and 'vlab-test-reward' -> 'test_reward'."""
    name = Path(argv0).name
    if name.startswith(COMMAND_PREFIX):
        name = name[len(COMMAND_PREFIX) :].replace("-", "_")
    name = name.removesuffix(".py")
    return SCRIPT_ALIASES.get(name, name)


def command(tool: str, how: Invocation | None = None) -> str:
    """How the user runs TOOL ('preflight', 'test_reward', 'docs', ...) the way this process was run."""
    how = how or current()
    if how.pip:
        return COMMAND_PREFIX + tool.replace("_", "-")
    return "python " + shlex.quote(str(how.scripts_dir / f"{tool}.py"))


def doc(name: str, how: Invocation | None = None) -> str:
    """Where the user reads a reference ('evaluation-guide', 'SKILL'): its file, or the vlab-docs command."""
    how = how or current()
    if how.pip:
        return f"{command('docs', how)} {name}"
    root = how.scripts_dir.parent
    return str(root / "SKILL.md") if name == "SKILL" else str(root / "references" / f"{name}.md")


def templates(how: Invocation | None = None) -> str:
    """The templates folder as the user can name it (inside the skill folder, or the installed package)."""
    how = how or current()
    if how.pip:
        from vlab.core.paths import templates_dir

        return str(templates_dir())
    return str(how.scripts_dir.parent / "templates")


class Names(dict):
    """``%(...)s`` names for help texts: 'prog' is TOOL's command, 'templates' the templates folder,
    any other key the command of the tool of that name."""

    def __init__(self, tool: str):
        super().__init__(prog=command(tool), templates=templates())

    def __missing__(self, key: str) -> str:
        return command(key)


# -- installing what is missing ----------------------------------------------------------------


def pip_command() -> str:
    """`python -m pip` for the interpreter running now (its full path when `python` is another one)."""
    found = shutil.which("python")
    if found and os.path.abspath(found) == os.path.abspath(sys.executable):
        return "python -m pip"
    return f"{shlex.quote(sys.executable)} -m pip"


def requirement_name(req: str) -> str:
    """'rich>=13' -> 'rich'."""
    return re.split(r"[\s;<>=!~\[(@]", req.strip(), maxsplit=1)[0]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _from_metadata() -> dict[str | None, list[str]] | None:
    import importlib.metadata as md  # here, not at the top: every script imports this module, few ask this

    try:
        reqs = md.requires(DIST)
    except md.PackageNotFoundError:
        return None
    groups: dict[str | None, list[str]] = {None: []}
    for req in reqs or []:
        spec, _, marker = req.partition(";")
        m = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        groups.setdefault(m.group(1) if m else None, []).append(spec.strip())
    return groups


def _from_pyproject() -> dict[str | None, list[str]] | None:
    import tomllib

    for folder in (PACK_ROOT, *PACK_ROOT.parents[:2]):
        path = folder / "pyproject.toml"
        try:
            project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
        except (OSError, ValueError):
            continue
        if project.get("name") == DIST:
            groups: dict[str | None, list[str]] = {None: list(project.get("dependencies", []))}
            groups.update(project.get("optional-dependencies", {}))
            return groups
    return None


@functools.cache
def requirements() -> dict[str | None, list[str]]:
    """The pack's declared requirements: None -> the core list, 'train'/'hosted'/... -> an extra's.

    From the installed distribution in pip mode, else from the checkout's pyproject.toml;
    empty when neither can be read (a skill folder copied without its pyproject.toml).
    """
    order = (_from_metadata, _from_pyproject) if current().pip else (_from_pyproject, _from_metadata)
    for source in order:
        groups = source()
        if groups is not None:
            return groups
    return {None: []}


def requirement_for_module(module: str) -> tuple[str, str | None] | None:
    """(requirement, extra or None) of the pack's own dependency that provides MODULE, or None."""
    wanted = _normalise(module.split(".")[0])
    groups = requirements()
    for extra in [None, *sorted(k for k in groups if k is not None)]:
        for req in groups.get(extra, []):
            if _normalise(requirement_name(req)) == wanted:
                return req, extra
    return None


def _quote(req: str) -> str:
    return shlex.quote(req) if re.search(r"[^\w.-]", req) else req


def install_requirements(reqs: list[str]) -> str:
    """The command that installs these requirement strings into this interpreter."""
    return f"{pip_command()} install " + " ".join(_quote(r) for r in reqs)


def _installed_from() -> tuple[str, bool] | None:
    """(url, editable) when the installed pack came from a URL or a local folder (PEP 610 direct_url.json)."""
    import importlib.metadata as md

    try:
        text = md.distribution(DIST).read_text("direct_url.json")
    except md.PackageNotFoundError:
        return None
    if not text:
        return None
    info = json.loads(text)
    url = info.get("url", "")
    vcs = info.get("vcs_info") or {}
    if vcs:
        url = f"{vcs.get('vcs', 'git')}+{url}" if not url.startswith(vcs.get("vcs", "git") + "+") else url
        if vcs.get("requested_revision"):
            url += "@" + vcs["requested_revision"]
    editable = bool((info.get("dir_info") or {}).get("editable"))
    return url, editable


def install_extra(extra: str) -> str:
    """The command that adds an extra ('train', 'hosted', 'vllm') to the pack as it was installed."""
    how = current()
    if not how.pip:
        reqs = requirements().get(extra)
        if reqs:
            return install_requirements(reqs)
        return install_requirements([f"{DIST}[{extra}]"])
    source = _installed_from()
    if source is None:
        return install_requirements([f"{DIST}[{extra}]"])
    url, editable = source
    if editable and url.startswith("file://"):
        return f"{pip_command()} install -e " + shlex.quote(f"{url[len('file://') :]}[{extra}]")
    return f"{pip_command()} install " + shlex.quote(f"{DIST}[{extra}] @ {url}")


def install_for_module(module: str) -> str:
    """The exact install command for a missing module, for how the pack was installed."""
    found = requirement_for_module(module)
    if found is None:
        return install_requirements([module.split(".")[0]])
    req, extra = found
    if extra is not None:
        return install_extra(extra)
    missing_core = [r for r in requirements()[None] if not _importable(requirement_name(r))]
    return install_requirements(missing_core if req in missing_core else [req])


def _importable(dist_name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(_normalise(dist_name)) is not None
    except (ImportError, ValueError):
        return False
