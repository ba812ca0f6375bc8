"""Reading files whether or not they are gzip-compressed, and writing them without ever losing what the user had."""

from __future__ import annotations

import difflib
import errno
import gzip
import io
import json
import os
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from vlab.core.result import UsageError
from vlab.core.secrets import redact

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: str | os.PathLike) -> bool:
    """The file starts with gzip's magic bytes (whatever its name says)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == GZIP_MAGIC
    except OSError:
        return False


def plain_suffix(path: str | os.PathLike) -> str:
    """The suffix that names the format, under a compression suffix: data.jsonl.gz -> .jsonl."""
    p = Path(path)
    return Path(p.stem).suffix.lower() if p.suffix.lower() == ".gz" else p.suffix.lower()


def _gzip_damage(path: str | os.PathLike, err: BaseException) -> UsageError:
    """A cut or corrupt gzip file is unreadable input (exit 2) that says where the file ends."""
    size = Path(path).stat().st_size
    if isinstance(err, EOFError):
        what = f"{Path(path).name} ends at byte {size} in the middle of its gzip data: the file is cut short"
    else:
        what = f"{Path(path).name} is not readable gzip data ({err}; the file has {size} bytes)"
    return UsageError(
        what, hint="download or copy it again (a truncated transfer), or decompress what is left with zcat"
    )


class _CheckedGzip(gzip.GzipFile):
    """gzip.GzipFile whose reads turn a cut or corrupt stream into one clear UsageError naming the file."""

    def _guard(self, call, *args):
        try:
            return call(*args)
        except (EOFError, gzip.BadGzipFile, zlib.error) as err:
            raise _gzip_damage(self.name, err) from None

    def read(self, size=-1):
        return self._guard(super().read, size)

    def read1(self, size=-1):
        return self._guard(super().read1, size)

    def peek(self, n):
        return self._guard(super().peek, n)

    def readline(self, size=-1):
        return self._guard(super().readline, size)

    def seek(self, offset, whence=io.SEEK_SET):
        return self._guard(super().seek, offset, whence)


def open_binary(path: str | os.PathLike) -> IO[bytes]:
    """Open for reading bytes; a gzip file (.gz, or any file with gzip's magic) is decompressed as it is read
    (a cut or corrupt one raises UsageError naming the file and where it ends)."""
    return _CheckedGzip(path, "rb") if is_gzip(path) else open(path, "rb")  # noqa: SIM115 - the caller closes it


MAX_LINE_BYTES = 32 << 20  # a longer line is not a row a reader holds: see bounded_lines


def bounded_lines(f: IO[bytes], cap: int | None = None) -> Iterator[bytes | None]:
    """The lines of a binary file, each at most ``cap`` bytes (default MAX_LINE_BYTES); a longer one is read
    through in pieces, never held whole, and given as None (the caller counts it as a malformed row and names it)."""
    cap = cap or MAX_LINE_BYTES
    while raw := f.readline(cap):
        if len(raw) >= cap and not raw.endswith(b"\n"):
            skip_line(f)
            yield None
        else:
            yield raw


def skip_line(f: IO[bytes]) -> int:
    """Read up to and past the next newline in 1 MiB pieces; the bytes read."""
    n = 0
    while piece := f.readline(1 << 20):
        n += len(piece)
        if piece.endswith(b"\n"):
            break
    return n


def gzip_cut(path: str | os.PathLike, chunk: int = 1 << 20) -> UsageError | None:
    """Why a gzip file cannot be read to its end (cut short, corrupt, a bad CRC or length), or None.

    Decompresses every member to its end at zlib's speed, keeping nothing (at most 4 MiB of output
    at a time): no parsing, no lines. A cut anywhere, however far past what a reader samples, is seen."""
    size = Path(path).stat().st_size
    with open(path, "rb") as f:
        d = zlib.decompressobj(wbits=31)
        try:
            while data := f.read(chunk):
                while data:
                    d.decompress(data, 1 << 22)
                    data = d.unconsumed_tail
                    while d.eof:  # a member ended: what follows is the next member, or zero padding
                        rest = d.unused_data
                        if not rest.strip(b"\x00"):
                            data = b""
                            break
                        d = zlib.decompressobj(wbits=31)
                        d.decompress(rest, 1 << 22)
                        data = d.unconsumed_tail
        except zlib.error as err:
            return _gzip_damage(path, err)
        if not d.eof:
            return _gzip_damage(path, EOFError(f"ends at byte {size}"))
    return None


def damage(path: str | os.PathLike) -> UsageError | None:
    """Why a local data file cannot be read to its end (a cut gzip stream, a JSON array or object that
    is never closed), or None. Reads the whole of a gzip file (bounded memory); only the tail of the rest."""
    p = Path(path)
    try:
        if not p.is_file():
            return None
        tail = b""
        size = 0
        if is_gzip(p):
            with _CheckedGzip(p, "rb") as f:
                while chunk := f.read(1 << 20):
                    tail = (tail + chunk)[-64:]
                    size += len(chunk)
        else:
            size = p.stat().st_size
            with open(p, "rb") as f:
                f.seek(max(0, size - 64))
                tail = f.read()
        with open_binary(p) as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    except UsageError as err:
        return err
    except OSError:
        return None
    end = tail.rstrip(b" \t\r\n")[-1:]
    if plain_suffix(p) == ".json" and head in (b"[", b"{") and end != {b"[": b"]", b"{": b"}"}[head]:
        kind = "array" if head == b"[" else "object"
        return UsageError(
            f"{p.name} ends at byte {size}{' (decompressed)' if is_gzip(p) else ''} before its JSON {kind} is closed "
            f"(last bytes {tail[-20:]!r}): the file is cut short",
            hint="download or write it again; a truncated JSON file cannot be read past the cut",
        )
    return None


# -- a dataset path as the user typed it ------------------------------------------------------------------

# The suffixes a dataset file carries (each text one also compressed); a Hub id (owner/name) carries none of them.
DATA_SUFFIXES = frozenset(
    {
        ".jsonl",
        ".ndjson",
        ".json",
        ".csv",
        ".tsv",
        ".txt",
        ".parquet",
        ".pq",
        ".arrow",
        ".feather",
        ".ipc",
        ".gz",
        ".zip",
    }
)
_FOLDER_LISTING_CAP = 5000  # entries read from one folder for "did you mean" (a huge folder is not walked)


def looks_local(text: str, *bases: str | os.PathLike) -> bool:
    """``text`` names a local path, whether or not it exists: an existing path, one starting with ``.``, ``/`` or
    ``~``, one with more than one ``/`` (a Hub id is owner/name), one with a data file suffix (``.jsonl``,
    ``.parquet``, ``.csv`` ...), or one whose first segment is an existing folder (of the current folder or of one
    of ``bases``). Never a URL. The one test of "a path, not a Hub id" for datasets and environments."""
    if not isinstance(text, str) or not text.strip() or "://" in text or "\n" in text:
        return False
    if text.startswith((".", "/", "~")) or text.count("/") > 1 or plain_suffix(text) in DATA_SUFFIXES:
        return True
    try:
        if Path(text).expanduser().exists():
            return True
        first = text.split("/")[0]
        return "/" in text and any((Path(base) / first).is_dir() for base in (".", *bases))
    except (OSError, ValueError):  # a name the file system refuses (too long, a NUL): not a path we can read
        return False


def nearest_names(path: str | os.PathLike) -> list[str]:
    """For a path that does not exist: the names in its deepest existing folder closest to the first missing
    segment (difflib), each written from that folder as the user wrote the path, carried on to the rest of the
    path where that exists (``data/tweet_eval_stance_climat`` -> ``data/tweet_eval_stance_climate``)."""
    given = Path(path).expanduser()
    missing: list[str] = [given.name]
    folder = given.parent
    try:
        while not folder.exists() and folder != folder.parent:
            missing.insert(0, folder.name)
            folder = folder.parent
        if not folder.is_dir():
            return []
        names = [entry.name for _, entry in zip(range(_FOLDER_LISTING_CAP), os.scandir(folder))]
    except OSError:
        return []
    out = []
    for name in difflib.get_close_matches(missing[0], [n for n in names if not n.startswith(".")], n=3, cutoff=0.75):
        found = folder / name
        longer = found.joinpath(*missing[1:])
        out.append(str(longer if missing[1:] and longer.exists() else found))
    return out


def missing_path(text: str, what: str = "no such file or folder", hint: str = "") -> UsageError:
    """Bad input (exit 2) for a local path that does not exist: the path, and the closest existing names."""
    near = nearest_names(text)
    return UsageError(
        f"{what}: {text}" + (f" (did you mean {' or '.join(near)}?)" if near else ""),
        hint=hint or "check the path from the current folder (a Hugging Face Hub id is owner/name, with no suffix)",
    )


def data_files_in(folder: str | os.PathLike, limit: int = 5) -> list[str]:
    """The data files in ``folder`` and its subfolders (two levels), train files first, as paths from where the
    folder was named: what a folder given where a file is expected could have meant."""
    root = Path(folder)
    found: list[Path] = []
    try:
        for pattern in ("*", "*/*"):
            for p in root.glob(pattern):
                if len(found) >= _FOLDER_LISTING_CAP:
                    break
                if p.is_file() and plain_suffix(p) in DATA_SUFFIXES and not p.name.startswith("."):
                    found.append(p)
    except OSError:
        return []
    found.sort(key=lambda p: ("train" not in p.name.lower(), len(p.parts), str(p)))
    return [str(p) for p in found[:limit]]


def open_text(path: str | os.PathLike, encoding: str = "utf-8", newline: str | None = None) -> IO[str]:
    """Open for reading text, decompressing gzip files (see ``open_binary``); strict decoding."""
    return io.TextIOWrapper(open_binary(path), encoding=encoding, errors="strict", newline=newline)


def read_text(path: str | os.PathLike, encoding: str = "utf-8") -> str:
    """A whole text file, decompressed when it is gzip."""
    with open_text(path, encoding) as f:
        return f.read()


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
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise write_fault(err, target) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(redact(text))
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, OSError) and err.errno in WRITE_ERRNOS:
            raise write_fault(err, target) from None
        raise
    return target


# A full disk, a quota, a read-only or forbidden folder: the user's to fix (exit 2), never "internal error".
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}


def write_fault(err: OSError, target: str | os.PathLike | None = None) -> UsageError:
    """One line for a write that failed on the machine's side: where, why, and that nothing was lost."""
    where = target or err.filename or "a file"
    return UsageError(
        f"cannot write {where}: {err.strerror or err} (nothing was half-written; a file already there is unchanged)",
        hint="free disk space, or choose a folder you can write to (--output-dir / the output path)",
    )


def write_json_atomic(path: str | os.PathLike, obj: Any, force: bool = False) -> Path:
    return write_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n", force=force)
