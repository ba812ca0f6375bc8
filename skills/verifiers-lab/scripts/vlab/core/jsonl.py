"""A JSON Lines data file checked line by line: the one message for a line no loader can read.

datasets' JSON loader stops at the first line that is not a JSON object (a file cut short ends in half a
row) with a ``DatasetGenerationError`` that names no file and no line. Every tool that reads a data file
says it the same way instead, as bad input (exit 2): ``FILE:LINE: not valid JSON (...)``. inspect_dataset
checks the rows it samples and the rest of the file up to a size (then the file's last line, where a cut
shows); test_reward checks the whole file named in --env-args before the environment loads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import msgspec

from vlab.core.files import bounded_lines, is_gzip, open_binary, plain_suffix
from vlab.core.result import UsageError

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
TAIL_BYTES = 1 << 20  # the end of a file read for its last line


_decode = msgspec.json.Decoder().decode


def parse_line(raw: bytes, first: bool = False) -> tuple[Any, str | None]:
    """(the row, None), (None, None) for a blank line, or (None, why the line is no row)."""
    try:  # the common line, a JSON object in UTF-8, read by msgspec (a third of json's time); the rest as before
        obj = _decode(raw)
    except (msgspec.DecodeError, ValueError, RecursionError):  # NaN, a BOM, bad UTF-8, too deep...: json says why
        obj = None
    if isinstance(obj, dict):
        return obj, None
    try:
        text = raw.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as err:
        return None, f"not UTF-8 (byte 0x{err.object[err.start : err.start + 1].hex()} at offset {err.start})"
    if not text.strip():
        return None, None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        at = "" if err.msg.endswith(" at") else " at"  # "Unterminated string starting at"
        return None, f"not valid JSON ({err.msg}{at} column {err.colno})"
    except RecursionError:
        return None, "not valid JSON (nested too deeply to read)"
    if not isinstance(obj, dict):
        return None, f"not a JSON object (a JSON {_json_kind(obj)}; each line must be one object)"
    return obj, None


def bad_line(path: str | os.PathLike, line: int, problem: str, cut: bool = False) -> UsageError:
    """The one error for a bad line: ``FILE:LINE: problem`` (exit 2), how to fix it in the hint."""
    where = shown(path)
    if cut:
        problem += "; the file ends inside this line: it is cut short"
    fix = "write or download the file again" if cut else f"fix or remove line {line}"
    return UsageError(
        f"{where}:{line}: {problem}",
        hint=f"{fix} ({where}); datasets' loader stops at the first line that is not a JSON object",
    )


def is_jsonl(path: str | os.PathLike) -> bool:
    """A JSON Lines file by its name (also gzip-compressed), or a .json file of one object a line."""
    suffix = plain_suffix(path)
    if suffix in JSONL_SUFFIXES:
        return True
    if suffix != ".json":
        return False
    try:
        with open_binary(path) as f:
            first = f.readline(1 << 20)
            more = f.read(4096).strip()
    except (OSError, UsageError):
        return False
    return bool(more) and parse_line(first, first=True)[0] is not None


def check_jsonl(path: str | os.PathLike, whole_up_to: int | None = None) -> None:
    """Raise ``bad_line`` for the first line of a JSON Lines file (gzip too) that is not a JSON object.

    Reads every line, or with ``whole_up_to`` the lines in the first that many bytes and then the file's
    last line (a file cut short shows there; its number is counted only when it is bad). A line longer
    than ``files.MAX_LINE_BYTES`` is read through unheld and not judged; blank lines are no rows."""
    p = Path(path)
    read = line = 0
    with open_binary(p) as f:
        for raw in bounded_lines(f):
            line += 1
            if raw is None:
                continue
            read += len(raw)
            _, problem = parse_line(raw, first=line == 1)
            if problem is not None:
                raise bad_line(p, line, problem, cut=not raw.endswith(b"\n"))  # only the last line lacks one
            if whole_up_to is not None and read >= whole_up_to:
                break
        else:
            return
    if not is_gzip(p):  # a gzip stream is read to its end by inspect already (files.gzip_cut)
        _check_last_line(p)


def _check_last_line(path: Path) -> None:
    size = path.stat().st_size
    with open(path, "rb") as f:
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read()
    body = tail[:-1] if tail.endswith(b"\n") else tail
    start = body.rfind(b"\n")
    if start < 0 and size > len(tail):
        return  # a last line longer than the tail read: not judged, as a line over the limit
    last = body[start + 1 :]
    _, problem = parse_line(last, first=start < 0)
    if problem is None:
        return
    with open(path, "rb") as f:  # only now: the line's number
        newlines = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 22), b""))
    line = newlines if tail.endswith(b"\n") else newlines + 1
    raise bad_line(path, line, problem, cut=not tail.endswith(b"\n"))


def shown(path: str | os.PathLike) -> str:
    """A path as the user would type it here: relative when under the current folder."""
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def _json_kind(obj: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(obj), "number")


__all__ = ["JSONL_SUFFIXES", "bad_line", "check_jsonl", "is_jsonl", "parse_line", "shown"]
