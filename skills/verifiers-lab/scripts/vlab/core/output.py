"""A result as the one JSON object a script prints: strictly JSON (no NaN), secrets masked, ASCII where
stdout cannot encode UTF-8. Below ``cli`` and ``guard``, which both print it."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from vlab.core.result import Result
from vlab.core.secrets import redact, scrub


def json_safe(obj: Any) -> Any:
    """Make an object strictly JSON-serialisable: NaN/inf become None, tuples lists."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [json_safe(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    try:  # numpy scalars and the like
        return json_safe(obj.item())
    except Exception:
        return str(obj)


def _utf8(stream: Any) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "") == "utf8"


def to_json(result: Result, strict: bool = False) -> str:
    """The result as one line of JSON; pure ASCII (\\u escapes) when stdout cannot encode UTF-8
    (LANG=C without Python's UTF-8 mode), so the object is the same whatever the locale."""
    obj = json_safe(scrub(result.to_dict(strict)))
    return redact(json.dumps(obj, ensure_ascii=not _utf8(sys.stdout), allow_nan=False))
