"""A row's own data, as the environment built it: a classic row's columns and its ``info``, a v1 task's data
fields (``row_fields``), and the names a question or a passage goes by. What every kind reads; a kind's own
fields (tests, choices, entry points) live in its unit."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vlab.env import Row

CONTEXT_FIELDS = ("body", "passage", "context", "article", "document", "story", "paragraph")
QUESTION_FIELDS = ("question", "problem", "query", "instruction")  # the question column (inspect's prompt names)


def row_fields(row: Row) -> dict[str, Any]:
    """The row's data by name: a classic row's columns and info keys, a v1 task's data fields."""
    out: dict[str, Any] = dict(row.fields)
    info = out.get("info")
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except ValueError:
            info = None
    if isinstance(info, dict):
        for key, value in info.items():
            out.setdefault(key, value)
    return out


def field(fields: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    for name in names:
        value = fields.get(name)
        if value not in (None, "", [], {}):
            return name, value
    return None
