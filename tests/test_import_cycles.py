"""No import circles in scripts/vlab: every import, at the top of a module or inside a function (a lazy import
hides a circle, it does not remove it), under TYPE_CHECKING too, read from the source. A module's request and
result types live below the code that uses them, so the graph of the package's modules is acyclic."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import SCRIPTS

pytestmark = pytest.mark.once


def module_graph(root: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports. ``from pkg import name`` is an edge to ``pkg.name`` when that
    is a module, else to ``pkg`` (importing a submodule also runs its package's ``__init__``, which is no circle
    of the design: only named imports count)."""
    files = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in files}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    if sub in files:
                        graph[name].add(sub)
                    elif target in files:
                        graph[name].add(target)
        graph[name].discard(name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_package_has_no_import_circle():
    graph = module_graph(SCRIPTS / "vlab")
    assert len(graph) > 100  # the whole package was read
    assert circles(graph) == []


def test_a_circle_is_found_however_it_is_imported(tmp_path):
    """The check can fail: a lazy import, a TYPE_CHECKING import and a relative import each close a circle."""
    pkg = tmp_path / "vlab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from vlab.sub.a import x\n")
    (pkg / "sub" / "a.py").write_text("x = 1\ndef f():\n    from vlab.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import y\n")
    (pkg / "sub" / "c.py").write_text("from vlab.sub.a import x\ny = 2\n")
    (pkg / "alone.py").write_text("from vlab.sub import a\nimport vlab.sub.c\n")
    assert circles(module_graph(pkg)) == [["vlab.sub.a", "vlab.sub.b", "vlab.sub.c"]]
    # a package importing its own submodules is no circle
    (pkg / "sub" / "c.py").write_text("y = 2\n")
    assert circles(module_graph(pkg)) == []
