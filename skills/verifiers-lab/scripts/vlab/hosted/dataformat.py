"""Does a shipped data file hold what its extension says? (the rehearsal's ``rehearse-data`` check)

The environments read a data file by its extension (the templates' ``_BUILDERS``: .jsonl and .json
through datasets' json builder, .csv, .parquet; the text ones also .gz), so CSV text saved as
``train.jsonl`` fails deep inside datasets with a bare ``DatasetGenerationError``. ``mismatch`` reads
the first bytes and names what they are and the file name that fits them, before anything is loaded.
Data files keep their own format: a CSV is shipped as ``train.csv``, never renamed to ``.jsonl``.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

HEAD_BYTES = 64 * 1024
_SAYS = {  # what each extension promises, in words
    ".jsonl": "JSON lines",
    ".json": "JSON",
    ".csv": "comma-separated text (CSV)",
    ".tsv": "tab-separated text (TSV)",
    ".parquet": "Parquet",
}
# the extension to rename to, by content (TSV has none: the templates read no .tsv, so it is converted)
_EXT = {"jsonl": ".jsonl", "json": ".json", "csv": ".csv", "parquet": ".parquet"}


@dataclass(frozen=True)
class Mismatch:
    holds: str  # what the bytes are, in words
    says: str  # what the name promises
    rename: str | None  # the file name that fits the content (None: no extension fits; convert it)


def _kind(head: bytes) -> tuple[str | None, str]:
    """(kind, words) of a file's first bytes: parquet, gzip, zip, binary, jsonl, json, tsv, csv, text; None: empty."""
    if head.startswith(b"PAR1"):
        return "parquet", "Parquet"
    if head.startswith(b"\x1f\x8b"):
        return "gzip", "gzip-compressed data"
    if head.startswith(b"PK\x03\x04"):
        return "zip", "a zip archive"
    if b"\x00" in head[:4096]:
        return "binary", "binary data"
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not text:
        return None, "nothing"
    first = text.splitlines()[0]
    if text[0] == "{":
        try:  # one object a line: JSON lines (a whole-file object is JSON too, but rare for a dataset)
            json.loads(first)
            return "jsonl", "JSON lines"
        except ValueError:
            return "json", "JSON"
    if text[0] == "[" and text[1:].lstrip()[:1] in ("{", "]", ""):
        return "json", "a JSON array"
    shown = first if len(first) <= 60 else first[:57] + "..."
    if first.count("\t") > first.count(","):
        return "tsv", f"tab-separated text (first line {shown!r})"
    if "," in first:
        return "csv", f"comma-separated text (first line {shown!r})"
    return "text", f"plain text (first line {shown!r})"


def mismatch(name: str, head: bytes) -> Mismatch | None:
    """Why a file called ``name`` whose first bytes are ``head`` cannot be read as its extension says, or None."""
    path = PurePosixPath(name)
    gz = path.suffix.lower() == ".gz"
    inner = PurePosixPath(path.stem) if gz else path
    ext = inner.suffix.lower()
    if ext not in _SAYS:
        return None  # an extension the templates do not read by content: not judged here
    kind, words = _kind(head)
    says = _SAYS[ext] + (", gzip-compressed" if gz else "")
    if gz != (kind == "gzip"):
        if gz:
            return Mismatch(words, says, inner.name)
        return Mismatch(words, says, f"{path.name}.gz")
    if gz:
        try:  # the first decompressed bytes (a cut head is fine: only the start is read)
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD_BYTES)
        except zlib.error:
            return Mismatch("damaged gzip data", says, None)
        kind, words = _kind(head)
    fits = {
        ".jsonl": ("jsonl", "json"),  # datasets' json builder reads either from either extension
        ".json": ("jsonl", "json"),
        ".csv": ("csv", "text", "tsv"),  # a one-column CSV has no comma; a tab in a quoted cell is fine
        ".tsv": ("tsv", "text", "csv"),
        ".parquet": ("parquet",),
    }[ext]
    if kind is None or kind in fits:
        return None
    right = _EXT.get(kind)
    rename = f"{inner.stem}{right}" + (".gz" if gz and right != ".parquet" else "") if right else None
    return Mismatch(words, says, rename)


def read_head(source: Path, member: str | None = None) -> bytes | None:
    """The first HEAD_BYTES of a file, or of a wheel's ``member`` (``source`` the wheel); None if unreadable."""
    try:
        if member is None:
            with open(source, "rb") as f:
                return f.read(HEAD_BYTES)
        with zipfile.ZipFile(source) as zf, zf.open(member) as f:
            return f.read(HEAD_BYTES)
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def explain(named: str, shown: str, wrong: Mismatch) -> tuple[str, str]:
    """(message, hint) of the rehearse-data failure: one line naming the file, and the fix."""
    message = (
        f"{named}: {shown} holds {wrong.holds}, not {wrong.says} as its name says; the loader reads a data file "
        "by its extension, so loading would fail (datasets' DatasetGenerationError)"
    )
    if wrong.rename:
        hint = (
            f"keep the data's own format and name the file for it: rename it to data/{wrong.rename} and pass "
            f'dataset_path="{wrong.rename}" (--env-arg dataset_path=\'"{wrong.rename}"\'), then re-run'
        )
    else:
        hint = "convert the data to JSON lines (.jsonl), CSV (.csv) or Parquet (.parquet), then re-run"
    return message, hint
