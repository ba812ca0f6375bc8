"""An environment's name: its three spellings (env id, module, class prefix), and whether its module name is free.

A name is refused (exit 2) when its module would shadow what a package imports: the standard library,
verifiers, datasets and the like, or any other module importable here. The user's own environment is no
such module: once ``pip install -e environments/<module>`` has run, the module imports from that folder (or,
installed without -e, as a distribution of the same name), and new_env then says that the folder already
exists (``--force`` writes it again), never that the name shadows a library.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from vlab.core.result import UsageError

NAME_RE = re.compile(r"[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
MAX_NAME = 64
# Module names that would shadow what the package itself imports.
RESERVED = {
    *("verifiers", "datasets", "vf", "vlab", "test", "tests", "environment", "environments", "openai", "torch"),
    *("numpy", "requests", "pydantic", "transformers", "pandas", "httpx", "math_verify", "peft", "vllm", "wandb"),
}


@dataclass
class Names:
    """The three spellings of one environment name."""

    dist: str  # my-env: the distribution name, the env id on the Hub
    module: str  # my_env: the importable module
    prefix: str  # MyEnv: the prefix of the v1 class names

    @classmethod
    def of(cls, name: str) -> Names:
        module = name.replace("-", "_")
        return cls(
            dist=module.replace("_", "-"),
            module=module,
            prefix="".join(part[:1].upper() + part[1:] for part in module.split("_")),
        )


def validate_name(name: str, parent: str | os.PathLike | None = None) -> Names:
    """A name usable as a Hub env id, a distribution name and a module name, or UsageError.

    ``parent``: the folder the package goes in (new_env's --path); a module importable from
    ``parent/<module>/`` (an editable install of it) or installed as the distribution of this name while
    that folder exists is the user's own environment, not a module the name would shadow."""
    hint = "use lower-case letters, digits and single - or _ between words, starting with a letter (e.g. gsm8k-boxed)"
    if not name or len(name) > MAX_NAME:
        raise UsageError(f"environment name must be 1-{MAX_NAME} characters (got {len(name)})", hint=hint)
    if not NAME_RE.fullmatch(name):
        raise UsageError(f"invalid environment name {name!r}", hint=hint)
    names = Names.of(name)
    reserved = keyword.iskeyword(names.module) or names.module in sys.stdlib_module_names or names.module in RESERVED
    origin = None if reserved else _installed(names.module)
    if reserved or (origin is not None and not own_environment(names, parent)):
        where = f" (installed here: {origin})" if origin else ""
        raise UsageError(
            f"environment name {name!r} would import as {names.module!r}, which shadows a Python or library "
            f"module{where}",
            hint="choose a more specific name, e.g. " + f"{names.dist}-env",
        )
    return names


def own_environment(names: Names, parent: str | os.PathLike | None) -> bool:
    """The importable module ``names.module`` is the environment at ``parent/<module>/``: its file lies in that
    folder (``pip install -e``), or the folder exists and the module is installed as the distribution
    ``names.dist`` (``pip install`` without -e)."""
    if parent is None:
        return False
    target = Path(os.path.abspath(Path(parent) / names.module))
    try:
        spec = importlib.util.find_spec(names.module)
    except (ImportError, ValueError):
        return False
    places = [spec.origin] if spec is not None and spec.origin else []
    places += list(spec.submodule_search_locations or []) if spec is not None else []
    for place in places:
        try:
            if Path(os.path.realpath(place)).is_relative_to(os.path.realpath(target)):
                return True
        except (OSError, ValueError):
            continue
    if not target.is_dir():
        return False
    from importlib.metadata import packages_distributions

    dists = {d.lower().replace("_", "-") for d in packages_distributions().get(names.module, [])}
    return names.dist in dists


def _installed(module: str) -> str | None:
    """Where a top-level module already importable here comes from (numpy, requests, ...): its file, or ""
    when it has none; None when there is no such module."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return spec.origin if spec.origin and os.path.isabs(spec.origin) else ""
