"""Definitions the pack runs from its own templates' source.

A template is a standalone package: it cannot import the pack, so a rule both need (the numeric templates'
comparison, the code templates' tested-function name) lives in the template, and the pack reads the
top-level definitions it needs from the template file and runs them, instead of keeping a second copy.
"""

from __future__ import annotations

import ast
from functools import cache
from typing import Any

from vlab.core.paths import templates_dir


def _defined_name(node: ast.stmt) -> str | None:
    """The name a module-level function or single assignment defines."""
    if isinstance(node, ast.FunctionDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


@cache
def template_definitions(template: str, filename: str, names: tuple[str, ...]) -> tuple[str, str, list[ast.stmt]]:
    """(the file's path, its text, the top-level statements defining ``names``, in that order) of
    ``templates/environments/<template>/<filename>``; RuntimeError naming what the file lacks."""
    path = templates_dir() / "environments" / template / filename
    text = path.read_text(encoding="utf-8")
    named = {_defined_name(node): node for node in ast.parse(text).body}
    missing = [name for name in names if name not in named]
    if missing:
        raise RuntimeError(f"{path}: the template lacks {', '.join(missing)}")
    return str(path), text, [named[name] for name in names]


def run_template_definitions(template: str, filename: str, names: tuple[str, ...], modules: dict[str, Any]) -> dict:
    """The namespace after running ``names``' definitions with ``modules`` (the imports they read) as globals."""
    path, _, nodes = template_definitions(template, filename, names)
    namespace = dict(modules)
    exec(compile(ast.Module(body=nodes, type_ignores=[]), path, "exec"), namespace)  # noqa: S102 - the pack's own file
    return namespace
