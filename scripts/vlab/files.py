"""Writing files without ever losing what the user had."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .result import UsageError
from .secrets import redact


def ensure_writable(path: str | os.PathLike, force: bool = False) -> Path:
    """Refuse (exit 2) to replace an existing file unless ``force``."""
    target = Path(path)
    if target.exists() and not force:
        raise UsageError(
            f"{target} already exists; refusing to overwrite it",
            hint=f"pass --force to replace {target}, or choose another path",
        )
    if target.exists() and target.is_dir():
        raise UsageError(f"{target} is a folder, not a file")
    return target


def write_atomic(path: str | os.PathLike, text: str, force: bool = False, mode: int | None = None) -> Path:
    """Write ``text`` to ``path`` atomically (temp file + rename), redacting secrets.

    A crash mid-write leaves the old file (or nothing) in place, never half a file.
    """
    target = ensure_writable(path, force)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(redact(text))
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return target


def write_json_atomic(path: str | os.PathLike, obj: Any, force: bool = False) -> Path:
    return write_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n", force=force)
