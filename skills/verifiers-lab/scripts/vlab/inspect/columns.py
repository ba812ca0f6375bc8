"""Describe each column of a sample: type, nulls, examples, nested keys, labels."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

EXAMPLE_CHARS = 120
MAX_EXAMPLES = 3
MAX_NESTED_KEYS = 20


@dataclass
class Column:
    name: str
    type: str  # string | integer | float | boolean | list[string] | list[integer] | list[dict] | messages | dict | mixed | null
    nulls: int
    rows: int
    examples: list[str]
    feature: str | None = None  # the declared datasets feature, when there is one
    class_names: list[str] | None = None  # ClassLabel names
    nested_keys: list[str] | None = None  # keys of dict columns (or of dicts inside lists)
    list_length: dict[str, float] | None = None  # min/mean/max length of list columns
    distinct: int = 0
    mean_chars: float = 0.0  # mean length of string values
    values: list[Any] = field(default_factory=list, repr=False)  # non-null sample values, for the detectors

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "type": self.type,
            "nulls": self.nulls,
            "rows": self.rows,
            "distinct": self.distinct,
            "examples": self.examples,
        }
        for key in ("feature", "class_names", "nested_keys", "list_length"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.type == "string":
            out["mean_chars"] = round(self.mean_chars, 1)
        return out


def is_messages(value: Any) -> bool:
    """A chat prompt: a non-empty list of {"role", "content"} dicts."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(m, dict) and "role" in m and "content" in m for m in value)
    )


def value_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, (list, tuple)):
        if is_messages(value):
            return "messages"
        inner = {value_type(v) for v in value if v is not None}
        return f"list[{inner.pop()}]" if len(inner) == 1 else "list" if not inner else "list[mixed]"
    return type(value).__name__


def truncate(value: Any, limit: int = EXAMPLE_CHARS) -> str:
    text = value if isinstance(value, str) else _compact(value)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compact(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def class_label_names(features: Any, name: str) -> list[str] | None:
    feat = features.get(name) if features is not None else None
    names = getattr(feat, "names", None)
    return list(names) if names and type(feat).__name__ == "ClassLabel" else None


def profile_columns(rows: list[dict], columns: list[str], features: Any = None) -> list[Column]:
    out = []
    for name in columns:
        values = [row.get(name) for row in rows]
        present = [v for v in values if v is not None and v != ""]
        kinds = Counter(value_type(v) for v in present)
        ctype = "null" if not kinds else kinds.most_common(1)[0][0] if len(kinds) == 1 else _merge_kinds(kinds)
        if ctype == "null" and any(isinstance(v, str) for v in values):
            ctype = "string"  # empty strings only (MBPP's test_setup_code on most rows): text, with no value read
        col = Column(
            name=name,
            type=ctype,
            nulls=len(values) - len(present),
            rows=len(values),
            examples=[truncate(v) for v in _distinct(present)[:MAX_EXAMPLES]],
            values=present,
        )
        col.distinct = len({_hashable(v) for v in present})
        if features is not None and name in features:
            col.feature = _feature_text(features[name])
            col.class_names = class_label_names(features, name)
        strings = [v for v in present if isinstance(v, str)]
        if strings:
            col.mean_chars = sum(map(len, strings)) / len(strings)
        dicts = [v for v in present if isinstance(v, dict)] or [
            m for v in present if isinstance(v, list) for m in v if isinstance(m, dict)
        ]
        if dicts:
            keys = Counter(k for d in dicts for k in d)
            col.nested_keys = [k for k, _ in keys.most_common(MAX_NESTED_KEYS)]
        lists = [v for v in present if isinstance(v, (list, tuple))]
        if lists:
            lengths = [len(v) for v in lists]
            col.list_length = {"min": min(lengths), "mean": round(sum(lengths) / len(lengths), 2), "max": max(lengths)}
        out.append(col)
    return out


def _merge_kinds(kinds: Counter) -> str:
    if set(kinds) <= {"integer", "float"}:
        return "float"
    top, count = kinds.most_common(1)[0]
    return top if count / sum(kinds.values()) >= 0.95 else "mixed"


def _distinct(values: list) -> list:
    seen, out = set(), []
    for v in values:
        key = _hashable(v)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _hashable(v: Any) -> Any:
    return v if isinstance(v, (str, int, float, bool)) else _compact(v)


def _feature_text(feat: Any) -> str:
    kind = type(feat).__name__
    if kind == "Value":
        return f"Value({feat.dtype})"
    if kind == "ClassLabel":
        return f"ClassLabel({len(feat.names)} names)"
    text = repr(feat)
    return text if len(text) <= 120 else text[:119] + "…"
