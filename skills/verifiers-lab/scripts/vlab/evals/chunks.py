"""JSON Lines files as chunks of whole lines: the byte ranges, the mapped or read chunks and their line counts.

What the column readers (``batches``), the answers pass (``answers``) and validate read: bytes, never rows.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path

from vlab.core.files import MAX_LINE_BYTES, is_gzip, open_binary, skip_line
from vlab.core.result import UsageError
from vlab.evals.read import ReadStats

# A chunk of lines read and decoded at once: its rows and columns stay in the processor's caches (1 MB read 2025 and
# text rows 7-15% faster than 4 MB chunks; smaller ones pay more per chunk than they save)
CHUNK_BYTES = 1 << 20


def split_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of a file, each starting at a line start and ending after a newline."""
    size = path.stat().st_size
    if is_gzip(path):  # a compressed stream cannot be entered in the middle: one range
        return [(0, size)]
    cuts = [0]
    with path.open("rb") as f:
        for i in range(1, parts):
            f.seek(max(cuts[-1], size * i // parts))
            skip_line(f)  # move to the next line start (a long line is read through, not held)
            pos = f.tell()
            if pos >= size:
                break
            if pos > cuts[-1]:
                cuts.append(pos)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


class LineChunk:
    """A chunk of a JSON Lines file's whole lines: ``head`` (bytes read, or a view of the mapped file), perhaps ending
    inside a line that ``tail`` finishes (kept apart: joining them would copy the chunk). ``first``: the file line
    number of its first line, ``count`` its lines, ``keys`` each line's hash (without its newline) when the reader
    was asked for them (``read.classic_rows``' row key of an untimed row)."""

    __slots__ = ("head", "tail", "first", "count", "keys", "lines")

    def __init__(self, head, tail: bytes, first: int, count: int, keys: list[int] | None) -> None:
        self.head, self.tail, self.first, self.count, self.keys = head, tail, first, count, keys
        self.lines: list[bytes] | None = None

    def decode(self, decoder) -> list:
        """``decoder.decode_lines`` of the chunk's lines."""
        if not self.tail:
            return decoder.decode_lines(self.head)
        cut = self.head.rfind(b"\n") + 1
        rows = decoder.decode_lines(memoryview(self.head)[:cut])
        rows.extend(decoder.decode_lines(self.head[cut:] + self.tail))
        return rows

    def split(self) -> list[bytes]:
        """The lines, without their newlines."""
        if self.lines is None:
            head = self.head if isinstance(self.head, bytes) else bytes(self.head)
            self.lines = _split(head, self.tail)
        return self.lines

    def numbered(self, stats: ReadStats, newlines: bool = False) -> Iterator[tuple[int, bytes]]:
        """(file line number, line) of each line that is not blank (those are counted in ``stats``); with
        ``newlines`` each line ends in its newline, as ``read.numbered_lines`` gives it (but the file's last, when
        it has none)."""
        lines = self.split()
        ends = (self.tail or self.head)[-1:] == b"\n"
        for i, raw in enumerate(lines):
            if not raw.strip():
                stats.blank += 1
                continue
            yield self.first + i, raw + b"\n" if newlines and (ends or i < len(lines) - 1) else raw


_BOM = b"\xef\xbb\xbf"


def line_chunks(
    path: Path, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES, byte_range: tuple[int, int] | None = None, keys=False
) -> Iterator[LineChunk]:
    """The (gzip) JSON Lines file as chunks of about ``chunk_bytes`` of whole lines (a UTF-8 BOM dropped), each line
    counted in ``stats`` (a line longer than ``MAX_LINE_BYTES`` is read through, never held, and counted as a
    malformed row). With ``byte_range`` (from split_ranges) only that part is read; line numbers then count from
    the start of the range. ``keys``: hash each line as it is counted (one pass, not two). A plain file is mapped
    (``mmap``: read where it lies, no copy; each chunk's pages given back once read), a compressed one read."""
    chunk_bytes = min(chunk_bytes, MAX_LINE_BYTES)  # so that a longer line always runs past its chunk's end
    mapped = None if is_gzip(path) else _mapped(path)
    if mapped is not None:
        return _mapped_chunks(mapped, path, stats, chunk_bytes, byte_range, keys)
    return _read_chunks(path, stats, chunk_bytes, byte_range, keys)


def _mapped(path: Path):
    """The file mapped for reading, where the system can map it and give pages back (madvise); else None."""
    if not hasattr(mmap, "MADV_DONTNEED"):  # e.g. Windows: read instead
        return None
    try:
        with path.open("rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # keeps its own handle
    except (OSError, ValueError):  # an empty file, a pipe, a file system that cannot map: read instead
        return None


def _mapped_chunks(mm, path: Path, stats: ReadStats, chunk_bytes: int, byte_range, keys: bool) -> Iterator[LineChunk]:
    """``line_chunks`` of a mapped file: the same chunks, counts and keys as ``_read_chunks``."""
    size = len(mm)
    start, end = byte_range if byte_range is not None else (0, size)
    end = min(end, size)
    view = memoryview(mm)
    find = mm.find
    pos, lineno = start, 0
    if pos == 0 and mm[:3] == _BOM:  # a UTF-8 BOM is not part of the first row
        pos = 3
    while pos < end:
        if os.stat(path).st_size < size:  # cut while read (an eval writing it again): its mapped pages are gone
            raise UsageError(
                f"{path} was cut short while it was read", hint="read it again once whatever writes it has finished"
            )
        stop = min(pos + chunk_bytes, end)  # what one read gives, and the tail that finishes its last line
        stop_at = stop
        too_long = False
        if mm[stop - 1 : stop] != b"\n":
            cut = mm.rfind(b"\n", pos, stop) + 1 or pos
            nl = find(b"\n", stop, stop + MAX_LINE_BYTES)
            tail_end = nl + 1 if nl >= 0 else min(stop + MAX_LINE_BYTES, size)
            tail = tail_end - stop
            if (stop - cut) + tail > MAX_LINE_BYTES or (tail == MAX_LINE_BYTES and nl < 0):
                # longer than a row is held: read through, never whole, and counted as a malformed row
                stop, too_long = cut, True
                if nl < 0:
                    nl = find(b"\n", tail_end)
                    tail_end = nl + 1 if nl >= 0 else size
            else:
                stop = tail_end
            stop_at = tail_end
        chunk_keys = _line_keys(view, find, pos, stop) if keys and stop > pos else None
        if chunk_keys is not None:
            count = len(chunk_keys)
        else:
            count = _newlines_between(find, pos, stop) + (stop > pos and mm[stop - 1 : stop] != b"\n")
        if stop > pos and mm[stop - 1 : stop] != b"\n":
            stats.no_final_newline = True  # only the file's last line can lack it
        first = lineno + 1
        lineno += count
        if too_long:
            lineno += 1
            stats.note_too_long(lineno)
        stats.lines = lineno
        if stop > pos:
            yield LineChunk(view[pos:stop], b"", first, count, chunk_keys)
        # the chunk is read: its pages leave this process (the page cache keeps them for whoever reads next)
        low = pos - pos % mmap.PAGESIZE
        high = stop_at - stop_at % mmap.PAGESIZE
        if high > low:
            mm.madvise(mmap.MADV_DONTNEED, low, high - low)
        pos = stop_at


def _line_keys(view, find, pos: int, stop: int) -> list[int]:
    """``hash`` of each line between ``pos`` and ``stop`` (without its newline; the last may lack one), read where
    the lines lie."""
    out = []
    add = out.append
    nl = find(b"\n", pos, stop)
    while nl >= 0:
        add(hash(view[pos:nl]))
        pos = nl + 1
        nl = find(b"\n", pos, stop)
    if pos < stop:
        add(hash(view[pos:stop]))
    return out


def _newlines_between(find, pos: int, stop: int) -> int:
    n = 0
    nl = find(b"\n", pos, stop)
    while nl >= 0:
        n += 1
        nl = find(b"\n", nl + 1, stop)
    return n


def _read_chunks(path: Path, stats: ReadStats, chunk_bytes: int, byte_range, keys: bool) -> Iterator[LineChunk]:
    """``line_chunks`` by reading (a compressed file, or where the file cannot be mapped)."""
    lineno = 0
    start, end = byte_range if byte_range is not None else (0, None)
    if is_gzip(path):  # one sequential pass over the decompressed lines
        start, end = 0, None
    with open_binary(path) as f:
        f.seek(start)
        pos = start
        while True:
            want = chunk_bytes if end is None else min(chunk_bytes, end - pos)
            buf = f.read(want) if want > 0 else b""
            if not buf:
                break
            first_read = pos == 0
            pos += len(buf)
            if first_read and buf.startswith(_BOM):  # a UTF-8 BOM is not part of the first row
                buf = buf[3:]
            too_long = False
            tail = b""
            if not buf.endswith(b"\n"):
                tail = f.readline(MAX_LINE_BYTES)  # finish the last line of the chunk
                pos += len(tail)
                partial = len(buf) - (buf.rfind(b"\n") + 1)
                if partial + len(tail) > MAX_LINE_BYTES or (len(tail) == MAX_LINE_BYTES and tail[-1:] != b"\n"):
                    # longer than a row is held: read through, never whole, and counted as a malformed row
                    if tail[-1:] != b"\n":
                        pos += skip_line(f)
                    buf, tail = buf[: len(buf) - partial], b""
                    too_long = True
            lines = _split(buf, tail) if keys else None
            if lines is not None:
                count = len(lines)
            else:  # the newlines, and the file's last line if it has none
                count = _newlines(buf) + tail.endswith(b"\n") + ((tail or buf)[-1:] not in (b"", b"\n"))
            if (tail or buf) and not (tail or buf).endswith(b"\n"):
                stats.no_final_newline = True  # only the file's last line can lack it
            first = lineno + 1
            lineno += count
            if too_long:
                lineno += 1
                stats.note_too_long(lineno)
            stats.lines = lineno
            if buf or tail:
                chunk = LineChunk(buf, tail, first, count, list(map(hash, lines)) if lines is not None else None)
                chunk.lines = lines
                yield chunk


def _newlines(buf: bytes) -> int:
    """``buf.count(b"\\n")``, faster for long lines: count tests every byte, ``find`` (memchr) hops from one
    newline to the next, ~3x faster at 1 KB a line. Lines shorter than 512 bytes on average over the first 64,
    or more than one per 256 bytes overall, are counted."""
    find, limit = buf.find, len(buf) >> 8
    n, pos = 0, find(b"\n")
    while pos >= 0:
        n += 1
        if n > limit or (n == 64 and pos < 64 * 512):
            return n + buf.count(b"\n", pos + 1)
        pos = find(b"\n", pos + 1)
    return n


def _split(head: bytes, tail: bytes = b"") -> list[bytes]:
    """The lines of ``head`` and the ``tail`` that finishes its last, without their newlines."""
    lines = head.split(b"\n")
    if tail:
        lines[-1] += tail[:-1] if tail.endswith(b"\n") else tail
    elif lines[-1] == b"":
        lines.pop()
    return lines
