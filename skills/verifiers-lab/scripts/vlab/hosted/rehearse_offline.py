"""The rehearsal without a package index (``--offline``, or ``UV_OFFLINE``): built and installed from what
this machine already has, or refused naming what is missing; never a config written without a rehearsal.

uv's own cache comes first (``uv build --offline``, ``uv pip install --offline``). Where it lacks a package:

- **build** (``backend_of``, ``build_command``): the build backend the environment's pyproject.toml names
  (``[build-system]``; PEP 517's setuptools default when there is none), when every one of its ``requires``
  is installed in this Python, builds the wheel without isolation: ``uv build --wheel --no-build-isolation
  --python THIS``. ``prime env push`` runs ``uv build --wheel`` (ECOSYSTEM.md): the same backend and
  configuration, at the version installed here.
- **install** (``closure``, ``link_closure``): verifiers 0.4.0 and the wheel's Requires-Dist, with their own
  requirements, each installed in this Python at a version its specifier accepts, are linked into the
  throwaway venv (symlinks; the small ``.dist-info`` folders copied, so ``uv pip check`` reads them). The
  venv holds that closure and nothing else, so an import the package does not declare still fails there.

What neither has is named (``Unavailable``) with the ways on: network access once (uv caches what it
downloads), or the package installed where the pack runs.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from vlab.core.invocation import install_requirements, requirement_name
from vlab.core.result import ToolError

# PEP 517: a pyproject.toml without [build-system] is built by setuptools' legacy backend.
DEFAULT_BACKEND = ("setuptools.build_meta:__legacy__", ("setuptools>=40.8.0",))


def index_unreachable(online: bool) -> bool:
    """uv runs without its package index: --offline, or UV_OFFLINE set in the environment."""
    return not online or os.environ.get("UV_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


class Unavailable(ToolError):
    """Offline, and neither uv's cache nor this Python holds what a step needs: ``missing`` names each."""

    def __init__(self, message: str, missing: list[str], uv_said: str = ""):
        super().__init__(message)
        self.missing = missing
        self.uv_said = uv_said


# -- what this Python has installed -------------------------------------------------------------------


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_index() -> dict[str, md.Distribution]:
    """Every distribution this Python imports, by canonical name (the first on sys.path wins, as for import)."""
    index: dict[str, md.Distribution] = {}
    for dist in md.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            index.setdefault(_canonical(name), dist)
    return index


def _unmet(req, dist: md.Distribution | None) -> str | None:
    """Why ``dist`` does not satisfy the parsed requirement ``req``, or None when it does."""
    if dist is None:
        return f"{req} (not installed)"
    if req.specifier and not req.specifier.contains(dist.version, prereleases=True):
        return f"{req} ({dist.version} installed)"
    return None


def closure(requirements: list[str], index: dict[str, md.Distribution] | None = None):
    """The installed distributions that satisfy ``requirements`` and, recursively, their own (markers
    evaluated for this Python, extras followed): (distributions, the requirements nothing installed meets)."""
    from packaging.requirements import InvalidRequirement, Requirement

    index = installed_index() if index is None else index
    found: dict[str, md.Distribution] = {}
    missing: list[str] = []
    done: set[tuple[str, str]] = set()
    todo: list[tuple[str, str]] = [(r, "") for r in requirements]
    while todo:
        text, extra = todo.pop(0)
        try:
            req = Requirement(text)
        except InvalidRequirement:
            missing.append(f"{text} (not a requirement pip reads)")
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = _canonical(req.name)
        why = _unmet(req, index.get(name))
        if why:
            if why not in missing:
                missing.append(why)
            continue
        dist = found.setdefault(name, index[name])
        for wanted in ("", *sorted(req.extras)):
            if (name, wanted) not in done:
                done.add((name, wanted))
                todo += [(r, wanted) for r in dist.requires or []]
    return list(found.values()), missing


# -- build -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Backend:
    """The build backend a pyproject.toml names and whether this Python has it installed."""

    module: str  # hatchling.build
    requires: tuple[str, ...]  # [build-system] requires
    missing: tuple[str, ...]  # those this Python lacks, each with why
    versions: tuple[str, ...]  # the installed ones, "hatchling 1.27.0"

    @property
    def names(self) -> str:
        return ", ".join(requirement_name(r) for r in self.requires) or self.module


def backend_of(folder: Path) -> Backend:
    try:
        system = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8")).get("build-system") or {}
    except (OSError, ValueError):
        system = {}
    if system:
        module, requires = system.get("build-backend") or DEFAULT_BACKEND[0], tuple(system.get("requires") or ())
    else:
        module, requires = DEFAULT_BACKEND
    dists, missing = closure(list(requires))
    named = {_canonical(requirement_name(r)) for r in requires}
    versions = tuple(f"{d.metadata['Name']} {d.version}" for d in dists if _canonical(d.metadata["Name"]) in named)
    return Backend(module, requires, tuple(missing), versions)


def build_command(uv: str, out_dir: Path) -> list[str]:
    """The wheel built by the backend installed in this Python (no isolated build environment to fill)."""
    return [uv, "build", "--wheel", "--no-build-isolation", "--offline", "--python", sys.executable, "--out-dir"] + [
        str(out_dir)
    ]


def build_refusal(backend: Backend, uv_said: str) -> Unavailable:
    return Unavailable(
        f"the wheel cannot be built offline: uv's cache has no build backend, and this Python ({sys.executable}) "
        "lacks the one pyproject.toml's [build-system] names: " + "; ".join(backend.missing),
        list(backend.missing),
        uv_said,
    )


# -- install -----------------------------------------------------------------------------------------


def _link(source: Path, target: Path) -> None:
    if target.exists() or target.is_symlink():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(source, target)


def link_closure(site: Path, dists: list[md.Distribution]) -> int:
    """Each distribution's files (its RECORD) linked into ``site``: a package folder as one link, a folder
    several distributions share (a namespace package, no ``__init__.py``) file by file, the ``.dist-info``
    folder copied. Scripts and data outside site-packages are left out. Returns the links made."""
    made = 0
    for dist in dists:
        base = Path(str(dist.locate_file("")))
        tops: dict[str, list[Path]] = {}
        for entry in dist.files or []:
            parts = Path(entry).parts
            if parts and parts[0] != ".." and "__pycache__" not in parts:
                tops.setdefault(parts[0], []).append(Path(entry))
        for top, files in tops.items():
            source = base / top
            if top.endswith(".dist-info"):
                if source.is_dir() and not (site / top).exists():
                    shutil.copytree(source, site / top, symlinks=True)
            elif source.is_dir() and not (source / "__init__.py").is_file():  # maybe shared: file by file
                for entry in files:
                    if (base / entry).is_file():
                        _link(base / entry, site / entry)
                        made += 1
            elif source.exists():
                _link(source, site / top)
                made += 1
    return made


def links_intact(site: Path) -> bool:
    """A linked venv still finds every package it links (the Python it came from was not changed under it)."""
    try:
        return all(p.exists() for p in site.iterdir())
    except OSError:
        return False


def install_refusal(missing: list[str], uv_said: str) -> Unavailable:
    return Unavailable(
        f"the wheel cannot be installed offline: uv's cache lacks packages it needs and this Python "
        f"({sys.executable}) does not have them installed either: " + "; ".join(missing),
        missing,
        uv_said,
    )


def fix_hint(err: Unavailable, required: bool) -> str:
    """The ways on from a refusal: the network once, or the missing packages installed where the pack runs."""
    names = [m.split(" (", 1)[0] for m in err.missing]
    own = [n for n in names if requirement_name(n).lower() != "verifiers"]
    hint = (
        "run the same command once with network access (without --offline, UV_OFFLINE unset): uv caches what it "
        "downloads and later offline runs use it"
    )
    if own:
        hint += f"; or install {', '.join(requirement_name(n) for n in own)} here: {install_requirements(own)}"
    if len(own) < len(names):
        hint += "; or run the pack from a Python that has verifiers 0.4.0 installed"
    return hint + (", then re-run (--no-rehearse writes the config without a rehearsal, knowingly)" if required else "")
