"""Answer kinds, one unit each; the catalog (``catalog.ANSWER_KINDS``, each format's ``unit``) names them.

Units: ``program`` (whole programs on standard input), ``code`` (tests and a reference program), ``choice`` (options and an answer key), ``label`` (a label
space), ``number`` (numbers and math), ``text`` (anything else: short answers, or a judge's long ones). Each is a
package exporting ``UNIT``, a ``kinds.base.KindUnit``: how inspect recognises it (``formats``), which rows it
claims in test_reward and how sure that is, its probes and its checks. Adding a kind is adding its unit, its
catalog entry and its templates.

``row_kind`` asks the units in their order which one claims a row; ``assign`` does it for a run's rows and lets
each unit look at the whole (``refine``), then says how sure each row's kind is (``certainty``).
"""

from __future__ import annotations

import importlib
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING

from vlab import catalog
from vlab.kinds.base import Format, KindContext, KindUnit, RowKind
from vlab.kinds.rows import row_fields

if TYPE_CHECKING:
    from vlab.env import Row


def units() -> tuple[KindUnit, ...]:
    """Every unit the catalog names, in claiming order."""
    return _units(tuple(dict.fromkeys(k.unit for k in catalog.ANSWER_KINDS)))


@cache
def _units(modules: tuple[str, ...]) -> tuple[KindUnit, ...]:
    found = [importlib.import_module(m).UNIT for m in modules]
    return tuple(sorted(found, key=lambda u: u.order))


def unit(name: str) -> KindUnit:
    """The unit of a row kind (``RowKind.kind``); KeyError for none."""
    for u in units():
        if u.name == name:
            return u
    raise KeyError(name)


def formats() -> list[Format]:
    """Every unit's answer formats, in the order inspect asks them (the catalog's formats only)."""
    known = {k.name for k in catalog.ANSWER_KINDS}
    return sorted((f for u in units() for f in u.formats if f.name in known), key=lambda f: f.order)


def row_kind(row: Row, gold: str | None, expect: str | None = None) -> RowKind:
    """The row's kind: the first unit that claims it. ``expect="choice"`` (most rows are multiple choice) takes any
    row with options as one, so a gold that names no option is checked as such rather than read as a number."""
    fields = row_fields(row)
    for u in units():
        found = u.claim(row, fields, gold, expect)
        if found is not None:
            return found
    return RowKind("text")


def environment_kind(kinds: list[RowKind]) -> str:
    """The kind most probed rows share (the environment's answer kind, as test_reward reports it)."""
    counts = Counter(k.kind for k in kinds)
    return max(counts, key=lambda k: (counts[k], k != "text")) if counts else "text"


def assign(ctx: KindContext) -> None:
    """Every row's kind in ``ctx.kinds``: claimed row by row, refined by each unit over the whole scope, then
    marked sure or unsure by the unit that holds it (``RowKind.certain``, ``why``)."""
    ctx.kinds = {r.index: row_kind(r, ctx.golds[r.index]) for r in ctx.scope}
    for u in units():
        u.refine(ctx)
    by_kind: dict[str, list] = {}
    for r in ctx.scope:
        by_kind.setdefault(ctx.kinds[r.index].kind, []).append(r)
    for name, rows in by_kind.items():
        sure, why = unit(name).certainty(ctx, rows) if name in {u.name for u in units()} else (True, "")
        if not sure:
            for r in rows:
                k = ctx.kinds[r.index]
                ctx.kinds[r.index] = RowKind(**{**k.__dict__, "certain": False, "why": why})


def assumed(ctx: KindContext) -> dict:
    """Which kind was assumed for the rows, and why where it is unsure: the result's ``data.kinds``."""
    counts = Counter(k.kind for k in ctx.kinds.values())
    out: dict = {"environment": environment_kind(list(ctx.kinds.values())), "rows": dict(counts)}
    unsure = {}
    for index, k in ctx.kinds.items():
        if not k.certain:
            entry = unsure.setdefault(k.kind, {"rows": [], "why": k.why})
            entry["rows"].append(index)
    if unsure:
        out["unsure"] = unsure
    return out


__all__ = ["Format", "KindContext", "KindUnit", "RowKind", "assign", "assumed", "environment_kind", "formats"]
__all__ += ["row_kind", "unit", "units"]
