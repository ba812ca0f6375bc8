"""Text formats (JSON Lines, JSON, CSV/TSV): the first ``n`` rows by reading lines or decoding
one array element at a time, so the cost never depends on the file size. Gzip-compressed files
(``data.jsonl.gz``) are decompressed as they are read."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from vlab.core.files import damage, is_gzip, open_binary, open_text, plain_suffix
from vlab.core.jsonl import bad_line, parse_line
from vlab.core.result import UsageError
from vlab.inspect.sample import MAX_LINE_BYTES, Sample

CHUNK = 1 << 20
# An enormous row is skipped (read in CHUNKs: memory stays flat) up to this far; past it the read stops.
SKIP_BUDGET = 16 * MAX_LINE_BYTES
# A top-level JSON object (not an array) can only be parsed whole; above this, ask for JSON Lines.
MAX_JSON_OBJECT_BYTES = 256 * 1024 * 1024
_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32-LE",
    b"\x00\x00\xfe\xff": "UTF-32-BE",
    b"\xff\xfe": "UTF-16-LE",
    b"\xfe\xff": "UTF-16-BE",
}


def refuse_wide_encodings(path: Path) -> None:
    with open_binary(path) as f:
        head = f.read(4)
    for bom, name in _BOMS.items():
        if head.startswith(bom):
            raise UsageError(
                f"{path.name} is encoded as {name}, not UTF-8",
                hint=f"convert it: iconv -f {name} -t UTF-8 {path.name} > {path.stem}.utf8{path.suffix}",
            )


def first_char(path: Path) -> str:
    with open_binary(path) as f:
        while True:
            chunk = f.read(4096)
            if not chunk:
                return ""
            text = chunk.lstrip(b"\xef\xbb\xbf \t\r\n")
            if text:
                return chr(text[0])


def looks_like_jsonl(path: Path) -> bool:
    """One JSON object on the first line, and more lines after it."""
    with open_binary(path) as f:
        line = f.readline(MAX_LINE_BYTES)
        more = f.read(4096).strip()
    try:
        return bool(more) and isinstance(json.loads(line.decode("utf-8-sig")), dict)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def _decode_problem(err: UnicodeDecodeError) -> str:
    bad = err.object[err.start : err.start + 1].hex()
    return f"not UTF-8 (byte 0x{bad} at offset {err.start})"


def read_jsonl(path: Path, n: int) -> Sample:
    sample = Sample(str(path), "jsonl", [], [], loader={"builder": "json", "data_files": str(path)})
    line_no = 0
    with open_binary(path) as f:
        while len(sample.rows) < n:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            line_no += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                sample.units_read += 1
                skipped, ended = _skip_rest_of_line(f, len(raw))
                mib = skipped / (1 << 20)
                sample.add_problem(
                    f"line {line_no}",
                    f"line of {'at least ' if not ended else ''}{mib:.0f} MiB is over the "
                    f"{MAX_LINE_BYTES >> 20} MiB limit for one row",
                )
                if not ended:
                    sample.notes.append(f"stopped reading at line {line_no}: a single enormous line")
                    break
                continue
            if not raw.strip():
                continue
            sample.units_read += 1
            # a line that is no JSON object stops datasets' loader too: bad input, named as every tool names it
            obj, problem = parse_line(raw, first=line_no == 1)
            if problem is not None:
                raise bad_line(path, line_no, problem, cut=not raw.endswith(b"\n"))
            sample.rows.append(obj)
    sample.columns = union_columns(sample.rows)
    return sample


def _skip_rest_of_line(f, already: int) -> tuple[int, bool]:
    """Skip to the next newline, reading at most a few limits more; (bytes skipped, found the end)."""
    skipped = already
    budget = SKIP_BUDGET
    while skipped < budget:
        chunk = f.readline(CHUNK)
        if not chunk:
            return skipped, True
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            return skipped, True
    return skipped, False


def read_json(path: Path, n: int) -> Sample:
    first = first_char(path)
    if first == "[":
        return _read_json_array(path, n)
    if first != "{":
        raise UsageError(
            f"{path.name}: not a JSON array or object (starts with {first!r})",
            hint='expected JSON Lines (one object per line), a JSON array of objects, or {"data": [...]}',
        )
    size = path.stat().st_size
    if size > MAX_JSON_OBJECT_BYTES:
        raise UsageError(
            f"{path.name}: a {size >> 20} MiB top-level JSON object cannot be sampled without loading it all",
            hint="convert it to JSON Lines (one object per line) or a JSON array",
        )
    try:
        with open_binary(path) as f:
            obj = json.loads(f.read().decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        raise UsageError(f"{path.name}: {_decode_problem(err)}", hint="re-save the file as UTF-8") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{path.name}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    except RecursionError:
        raise UsageError(f"{path}: JSON nested too deeply to read") from None
    sample = Sample(str(path), "json", [], [], loader={"builder": "json", "data_files": str(path)})
    records, field = _records_in_object(obj)
    if records is None:
        raise UsageError(
            f"{path.name}: a JSON object with no list of rows in it",
            hint='expected {"data": [{...}, ...]} or a JSON array of objects',
        )
    if field:
        sample.loader["field"] = field
        sample.notes.append(f"rows read from the {field!r} key")
    for i, rec in enumerate(records[:n]):
        sample.units_read += 1
        if isinstance(rec, dict):
            sample.rows.append(rec)
        else:
            sample.add_problem(f"record {i}", f"a JSON {type(rec).__name__}, not an object")
    sample.total_rows = len(records)
    sample.columns = union_columns(sample.rows)
    return sample


def _records_in_object(obj: dict) -> tuple[list | None, str | None]:
    for key in ("data", "rows", "train", "test", "validation", "examples", "records"):
        if isinstance(obj.get(key), list):
            return obj[key], key
    for key, value in obj.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value[:10]):
            return value, key
    lists = [v for v in obj.values() if isinstance(v, list)]
    if lists and len(lists) == len(obj) and len({len(v) for v in lists}) == 1:  # columnar {"col": [...]}
        return [dict(zip(obj.keys(), vals)) for vals in zip(*obj.values())], None
    return None, None


def _cut_short(path: Path, record: int) -> UsageError:
    return UsageError(
        f"{path.name} ends at byte {path.stat().st_size} inside record {record}, before the JSON array is closed: "
        "the file is cut short",
        hint="download or write it again; a truncated JSON array cannot be read past the cut",
    )


def _read_json_array(path: Path, n: int) -> Sample:
    if not is_gzip(path):  # the end of the file says whether it is whole, whatever the sample size
        cut = damage(path)
        if cut is not None:
            raise cut
    sample = Sample(str(path), "json", [], [], loader={"builder": "json", "data_files": str(path)})
    decoder = json.JSONDecoder()
    with open_text(path, "utf-8-sig") as f:
        try:
            buf = f.read(CHUNK)
        except UnicodeDecodeError as err:
            raise UsageError(f"{path.name}: {_decode_problem(err)}", hint="re-save the file as UTF-8") from None
        idx = buf.index("[") + 1
        eof = False
        record = 0
        while len(sample.rows) < n:
            while idx < len(buf) and buf[idx] in " \t\r\n,":
                idx += 1
            if idx >= len(buf):
                if eof:
                    raise _cut_short(path, record)
                buf, idx, eof = _refill(f, buf, idx, path)
                continue
            if buf[idx] == "]":
                break
            try:
                obj, end = decoder.raw_decode(buf, idx)
            except (json.JSONDecodeError, RecursionError) as err:
                if not eof and len(buf) - idx < MAX_LINE_BYTES:
                    buf, idx, eof = _refill(f, buf, idx, path)
                    continue
                if eof and not buf.rstrip().endswith("]"):
                    raise _cut_short(path, record) from None
                msg = getattr(err, "msg", "nested too deeply")
                why = f"record over the {MAX_LINE_BYTES >> 20} MiB limit" if not eof else f"invalid JSON: {msg}"
                sample.units_read += 1
                sample.add_problem(f"record {record}", why)
                sample.notes.append(f"stopped at record {record}: a JSON array cannot be resynchronised after an error")
                break
            sample.units_read += 1
            if isinstance(obj, dict):
                sample.rows.append(obj)
            else:
                sample.add_problem(f"record {record}", f"a JSON {type(obj).__name__}, not an object")
            record += 1
            idx = end
    sample.columns = union_columns(sample.rows)
    return sample


def _refill(f, buf: str, idx: int, path: Path) -> tuple[str, int, bool]:
    try:
        more = f.read(CHUNK)
    except UnicodeDecodeError as err:
        raise UsageError(f"{path.name}: {_decode_problem(err)}", hint="re-save the file as UTF-8") from None
    return buf[idx:] + more, 0, not more


def read_csv(path: Path, n: int) -> Sample:
    delimiter = "\t" if plain_suffix(path) == ".tsv" else None
    kind = "tsv" if delimiter else "csv"
    sample = Sample(str(path), kind, [], [], loader={"builder": "csv", "data_files": str(path)})
    csv.field_size_limit(MAX_LINE_BYTES)
    with open_text(path, "utf-8-sig", newline="") as f:
        try:
            head = f.read(64 * 1024)
        except UnicodeDecodeError as err:
            raise UsageError(f"{path.name}: {_decode_problem(err)}", hint="re-save the file as UTF-8") from None
        if delimiter is None:
            delimiter = _sniff_delimiter(head)
        if delimiter != ",":
            sample.loader["delimiter"] = delimiter
        f.seek(0)
        reader = csv.reader(f, delimiter=delimiter)
        try:
            header = next(reader, None)
        except (csv.Error, UnicodeDecodeError) as err:
            raise UsageError(f"{path.name}: cannot read the header row: {err}") from None
        if not header or not any(h.strip() for h in header):
            raise UsageError(f"{path.name}: no header row", hint="the first line must name the columns")
        columns = [h.strip() or f"column_{i}" for i, h in enumerate(header)]
        sample.columns = columns
        while len(sample.rows) < n:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except UnicodeDecodeError as err:
                sample.add_problem(f"line {reader.line_num + 1}", _decode_problem(err))
                sample.notes.append("stopped at an undecodable byte: a CSV reader cannot skip it")
                break
            except csv.Error as err:
                sample.units_read += 1
                sample.add_problem(f"line {reader.line_num}", f"unreadable CSV: {err}")
                sample.notes.append(f"stopped at line {reader.line_num}")
                break
            if not fields or (len(fields) == 1 and not fields[0].strip()):
                continue
            sample.units_read += 1
            if len(fields) != len(columns):
                sample.add_problem(
                    f"line {reader.line_num}", f"{len(fields)} fields where the header has {len(columns)} (ragged row)"
                )
                continue
            sample.rows.append(dict(zip(columns, fields)))
    return sample


def _sniff_delimiter(head: str) -> str:
    first_line = head.splitlines()[0] if head else ""
    counts = {d: first_line.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


def union_columns(rows: list[dict]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)
