"""Where an environment spec points, by path logic alone (nothing imported): a module file, a package folder
(``__init__.py``, ``<name>.py``, ``<name>/__init__.py``, its one module) or an installed id. Below ``locate``
(which loads it) and ``generation`` (which reads its source)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vlab.core.files import looks_local, missing_path
from vlab.core.result import UsageError


@dataclass
class Located:
    module_name: str
    search_path: str | None  # folder put on sys.path, None for an installed module
    source: Path | None  # the module's file when known before importing


def locate(spec: str) -> Located:
    path = Path(spec).expanduser()
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise UsageError(
                f"environment file not found: {spec}",
                hint="pass a module file, a package folder or an installed env id",
            )
        return Located(path.stem, str(path.resolve().parent), path.resolve())
    if path.is_dir():
        folder = path.resolve()
        if (folder / "__init__.py").is_file():
            return Located(folder.name, str(folder.parent), folder / "__init__.py")
        stem = folder.name.replace("-", "_")
        # environments/<name>/<name>.py (classic hub layout) or <name>/<name>/__init__.py (vf-init)
        for candidate in (folder / f"{stem}.py", folder / stem / "__init__.py"):
            if candidate.is_file():
                return Located(stem, str(folder), candidate)
        modules = [p for p in folder.glob("*.py") if not p.name.startswith(("test_", "_"))]
        if len(modules) == 1:
            return Located(modules[0].stem, str(folder), modules[0])
        raise UsageError(
            f"no environment module found in {spec} (looked for {stem}.py or {stem}/__init__.py)",
            hint="pass the module file itself: path/to/env_module.py",
        )
    if looks_local(spec):  # a mistyped path (environments/my_envv): named as missing, never taken for an installed id
        raise missing_path(
            spec,
            "no such environment file or folder",
            hint="pass a module file, a package folder or an installed env id",
        )
    if re.fullmatch(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?(@[\w.+-]+)?", spec) and not spec.startswith((".", "/")):
        name = spec.split("/")[-1].split("@")[0].replace("-", "_")
        return Located(name, None, None)
    raise UsageError(
        f"not an environment file, folder or id: {spec}",
        hint="pass a module file, a package folder or an installed env id",
    )
