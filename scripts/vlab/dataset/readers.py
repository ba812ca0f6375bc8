"""Read the first rows of a local dataset without loading the whole file.

Every reader stops after ``n`` rows: JSON Lines and CSV by reading lines, JSON
arrays by decoding one element at a time, Parquet by row groups
(``iter_batches``), Arrow by record batches on a memory map. Cost depends on
``n`` and the row size, never on the file size.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from ..result import UsageError
from .sample import MAX_LINE_BYTES, Sample

JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
FORMAT_BY_SUFFIX = {
    **{s: "jsonl" for s in JSONL_SUFFIXES},
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
}
CHUNK = 1 << 20
# A top-level JSON object (not an array) can only be parsed whole; above this, ask for JSON Lines.
MAX_JSON_OBJECT_BYTES = 256 * 1024 * 1024
_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32-LE",
    b"\x00\x00\xfe\xff": "UTF-32-BE",
    b"\xff\xfe": "UTF-16-LE",
    b"\xfe\xff": "UTF-16-BE",
}


def read_local(path: str | Path, n: int, split: str | None = None) -> Sample:
    """The first ``n`` rows of a local file or folder (any supported format)."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"no such file or folder: {p}", hint="check the path (or pass a hub id like owner/name)")
    if p.is_dir():
        return _read_folder(p, n, split)
    return read_file(p, n)


def detect_format(path: Path) -> str:
    fmt = FORMAT_BY_SUFFIX.get(path.suffix.lower())
    with path.open("rb") as f:
        head = f.read(8)
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith((b"ARROW1", b"\xff\xff\xff\xff")):  # IPC file magic / IPC stream continuation marker
        return "arrow" if fmt in (None, "arrow") else fmt
    if fmt is None:
        raise UsageError(
            f"{path.name}: unknown dataset format (suffix {path.suffix or 'none'!r})",
            hint="supported: .jsonl .json .csv .tsv .parquet .arrow, or a folder written by datasets' save_to_disk",
        )
    return fmt


def read_file(path: Path, n: int) -> Sample:
    size = path.stat().st_size
    if size == 0:
        raise UsageError(f"{path} is empty (0 bytes)", hint="point at a file with rows in it")
    fmt = detect_format(path)
    if fmt in ("jsonl", "json", "csv", "tsv"):
        _refuse_wide_encodings(path)
    if fmt in ("jsonl", "json"):
        first = _first_char(path)
        # A .json file of one object per line is JSON Lines; a .jsonl file holding an array is JSON.
        if fmt == "json" and first == "{" and _looks_like_jsonl(path):
            fmt = "jsonl"
        elif fmt == "jsonl" and first == "[":
            fmt = "json"
    reader = {"jsonl": read_jsonl, "json": read_json, "csv": read_csv, "tsv": read_csv,
              "parquet": read_parquet, "arrow": read_arrow}[fmt]
    sample = reader(path, n)
    sample.bytes_total = size
    if not sample.rows:
        where = "; ".join(f"{p.where}: {p.reason}" for p in sample.problems[:3])
        raise UsageError(f"{path}: no readable rows" + (f" ({where})" if where else ""),
                         hint="check the file's format and encoding (UTF-8 expected)")
    return sample


# -- text formats --------------------------------------------------------------


def _refuse_wide_encodings(path: Path) -> None:
    with path.open("rb") as f:
        head = f.read(4)
    for bom, name in _BOMS.items():
        if head.startswith(bom):
            raise UsageError(f"{path.name} is encoded as {name}, not UTF-8",
                             hint=f"convert it: iconv -f {name} -t UTF-8 {path.name} > {path.stem}.utf8{path.suffix}")


def _first_char(path: Path) -> str:
    with path.open("rb") as f:
        while True:
            chunk = f.read(4096)
            if not chunk:
                return ""
            text = chunk.lstrip(b"\xef\xbb\xbf \t\r\n")
            if text:
                return chr(text[0])


def _looks_like_jsonl(path: Path) -> bool:
    """One JSON object on the first line, and more lines after it."""
    with path.open("rb") as f:
        line = f.readline(MAX_LINE_BYTES)
        more = f.read(4096).strip()
    try:
        return bool(more) and isinstance(json.loads(line.decode("utf-8-sig")), dict)
    except (ValueError, UnicodeDecodeError):
        return False


def _decode_problem(err: UnicodeDecodeError) -> str:
    bad = err.object[err.start:err.start + 1].hex()
    return f"not UTF-8 (byte 0x{bad} at offset {err.start})"


def read_jsonl(path: Path, n: int) -> Sample:
    sample = Sample(str(path), "jsonl", [], [], loader={"builder": "json", "data_files": str(path)})
    line_no = 0
    with path.open("rb") as f:
        while len(sample.rows) < n:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            line_no += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                sample.units_read += 1
                skipped, ended = _skip_rest_of_line(f, len(raw))
                mib = skipped / (1 << 20)
                sample.add_problem(f"line {line_no}", f"line of {'at least ' if not ended else ''}{mib:.0f} MiB is over the "
                                   f"{MAX_LINE_BYTES >> 20} MiB limit for one row")
                if not ended:
                    sample.notes.append(f"stopped reading at line {line_no}: a single enormous line")
                    break
                continue
            if not raw.strip():
                continue
            sample.units_read += 1
            try:
                text = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")
            except UnicodeDecodeError as err:
                sample.add_problem(f"line {line_no}", _decode_problem(err))
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as err:
                sample.add_problem(f"line {line_no}", f"invalid JSON: {err.msg} at column {err.colno}")
                continue
            if not isinstance(obj, dict):
                sample.add_problem(f"line {line_no}", f"a JSON {type(obj).__name__}, not an object")
                continue
            sample.rows.append(obj)
    sample.columns = _union_columns(sample.rows)
    return sample


def _skip_rest_of_line(f, already: int) -> tuple[int, bool]:
    """Skip to the next newline, reading at most a few limits more; (bytes skipped, found the end)."""
    skipped = already
    budget = 4 * MAX_LINE_BYTES
    while skipped < budget:
        chunk = f.readline(CHUNK)
        if not chunk:
            return skipped, True
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            return skipped, True
    return skipped, False


def read_json(path: Path, n: int) -> Sample:
    first = _first_char(path)
    if first == "[":
        return _read_json_array(path, n)
    if first != "{":
        raise UsageError(f"{path.name}: not a JSON array or object (starts with {first!r})",
                         hint="expected JSON Lines (one object per line), a JSON array of objects, or {\"data\": [...]}")
    size = path.stat().st_size
    if size > MAX_JSON_OBJECT_BYTES:
        raise UsageError(f"{path.name}: a {size >> 20} MiB top-level JSON object cannot be sampled without loading it all",
                         hint="convert it to JSON Lines (one object per line) or a JSON array")
    try:
        obj = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        raise UsageError(f"{path.name}: {_decode_problem(err)}", hint="re-save the file as UTF-8") from None
    except json.JSONDecodeError as err:
        raise UsageError(f"{path.name}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    sample = Sample(str(path), "json", [], [], loader={"builder": "json", "data_files": str(path)})
    records, field = _records_in_object(obj)
    if records is None:
        raise UsageError(f"{path.name}: a JSON object with no list of rows in it",
                         hint="expected {\"data\": [{...}, ...]} or a JSON array of objects")
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
    sample.columns = _union_columns(sample.rows)
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


def _read_json_array(path: Path, n: int) -> Sample:
    sample = Sample(str(path), "json", [], [], loader={"builder": "json", "data_files": str(path)})
    decoder = json.JSONDecoder()
    with path.open("r", encoding="utf-8-sig", errors="strict") as f:
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
                    sample.add_problem(f"record {record}", "file ends before the array is closed")
                    break
                buf, idx, eof = _refill(f, buf, idx, path)
                continue
            if buf[idx] == "]":
                break
            try:
                obj, end = decoder.raw_decode(buf, idx)
            except json.JSONDecodeError as err:
                if not eof and len(buf) - idx < MAX_LINE_BYTES:
                    buf, idx, eof = _refill(f, buf, idx, path)
                    continue
                why = (f"record over the {MAX_LINE_BYTES >> 20} MiB limit" if not eof
                       else f"invalid JSON: {err.msg}")
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
    sample.columns = _union_columns(sample.rows)
    return sample


def _refill(f, buf: str, idx: int, path: Path) -> tuple[str, int, bool]:
    try:
        more = f.read(CHUNK)
    except UnicodeDecodeError as err:
        raise UsageError(f"{path.name}: {_decode_problem(err)}", hint="re-save the file as UTF-8") from None
    return buf[idx:] + more, 0, not more


def read_csv(path: Path, n: int) -> Sample:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else None
    kind = "tsv" if delimiter else "csv"
    sample = Sample(str(path), kind, [], [], loader={"builder": "csv", "data_files": str(path)})
    csv.field_size_limit(MAX_LINE_BYTES)
    with path.open("r", encoding="utf-8-sig", newline="", errors="strict") as f:
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
                sample.add_problem(f"line {reader.line_num}",
                                   f"{len(fields)} fields where the header has {len(columns)} (ragged row)")
                continue
            sample.rows.append(dict(zip(columns, fields)))
    return sample


def _sniff_delimiter(head: str) -> str:
    first_line = head.splitlines()[0] if head else ""
    counts = {d: first_line.count(d) for d in (",", "\t", ";", "|")}
    best = max(counts, key=counts.get)
    return best if counts[best] else ","


# -- binary formats ----------------------------------------------------------------


def read_parquet(path: Path, n: int) -> Sample:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path, memory_map=True)
    except (pa.ArrowInvalid, OSError) as err:
        raise UsageError(f"{path.name}: not a readable Parquet file ({err})") from None
    sample = Sample(str(path), "parquet", [], list(pf.schema_arrow.names),
                    total_rows=pf.metadata.num_rows, loader={"builder": "parquet", "data_files": str(path)})
    sample.features = features_from_schema(pf.schema_arrow)
    try:
        # Row group by row group, so nothing is planned for the groups never reached.
        for group in range(pf.metadata.num_row_groups):
            for batch in pf.iter_batches(batch_size=max(1, min(n, 1024)), row_groups=[group]):
                sample.rows.extend(batch.to_pylist()[: n - len(sample.rows)])
                if len(sample.rows) >= n:
                    break
            if len(sample.rows) >= n:
                break
    except (pa.ArrowInvalid, OSError) as err:
        sample.add_problem(f"row {len(sample.rows)}", f"corrupt Parquet data: {err}")
    sample.units_read = len(sample.rows) + sample.problem_count
    return sample


def read_arrow(path: Path, n: int, loader: dict | None = None) -> Sample:
    """An Arrow IPC stream (what datasets writes) or IPC file, batch by batch."""
    import pyarrow as pa

    sample = Sample(str(path), "arrow", [], [], loader=loader or {"builder": "arrow", "data_files": str(path)})
    source = pa.memory_map(str(path))
    try:
        batches = _arrow_batches(source)
        schema, batches = next(batches), batches
    except (pa.ArrowInvalid, OSError) as err:
        raise UsageError(f"{path.name}: not a readable Arrow file ({err})") from None
    sample.columns = list(schema.names)
    sample.features = features_from_schema(schema)
    try:
        for batch in batches:
            sample.rows.extend(batch.slice(0, n - len(sample.rows)).to_pylist())
            if len(sample.rows) >= n:
                break
    except (pa.ArrowInvalid, OSError) as err:
        sample.add_problem(f"row {len(sample.rows)}", f"corrupt Arrow data: {err}")
    sample.units_read = len(sample.rows) + sample.problem_count
    return sample


def _arrow_batches(source):
    import pyarrow as pa

    try:
        reader = pa.ipc.open_stream(source)
        yield reader.schema
        yield from reader
        return
    except pa.ArrowInvalid:
        source.seek(0)
    reader = pa.ipc.open_file(source)
    yield reader.schema
    for i in range(reader.num_record_batches):
        yield reader.get_batch(i)


def features_from_schema(schema) -> Any:
    """datasets.Features for an Arrow schema, when datasets wrote it (ClassLabel names live there)."""
    meta = schema.metadata or {}
    if b"huggingface" not in meta:
        return None
    try:
        from datasets import Features

        return Features.from_arrow_schema(schema)
    except Exception:  # a foreign or newer metadata layout: fall back to the plain schema
        return None


# -- folders ---------------------------------------------------------------------


def _read_folder(folder: Path, n: int, split: str | None) -> Sample:
    if (folder / "dataset_dict.json").is_file():
        splits = json.loads((folder / "dataset_dict.json").read_text()).get("splits", [])
        chosen = _choose_split(splits, split, folder)
        sample = _read_saved_dataset(folder / chosen, n)
        sample.loader = {"load_from_disk": str(folder), "split": chosen}
        sample.notes.append(f"split {chosen!r} of {', '.join(splits)}")
        return sample
    if (folder / "state.json").is_file() and (folder / "dataset_info.json").is_file():
        return _read_saved_dataset(folder, n)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in FORMAT_BY_SUFFIX
                   and not p.name.startswith(".") and p.name not in ("dataset_info.json", "state.json"))
    if split:
        files = [p for p in files if split in p.relative_to(folder).as_posix()]
    if not files:
        raise UsageError(f"{folder}: no dataset files in this folder" + (f" for split {split!r}" if split else ""),
                         hint="expected .jsonl/.json/.csv/.parquet/.arrow files or a save_to_disk folder")
    formats = {detect_format(p) for p in files}
    if len(formats) > 1:
        raise UsageError(f"{folder}: mixed formats ({', '.join(sorted(formats))})", hint="point at one file")
    merged: Sample | None = None
    for p in files:
        part = read_file(p, n - (len(merged.rows) if merged else 0)) if p.stat().st_size else None
        if part is None:
            continue
        if merged is None:
            merged = part
        else:
            merged.rows.extend(part.rows)
            merged.units_read += part.units_read
            for prob in part.problems:
                merged.add_problem(f"{p.name} {prob.where}", prob.reason)
        if len(merged.rows) >= n:
            break
    if merged is None:
        raise UsageError(f"{folder}: every dataset file is empty")
    merged.source = str(folder)
    merged.columns = _union_columns(merged.rows) or merged.columns
    merged.total_rows = None
    merged.notes.append(f"{len(files)} data file(s): {', '.join(p.name for p in files[:5])}{' ...' if len(files) > 5 else ''}")
    fmt = next(iter(formats))
    builder = {"jsonl": "json", "tsv": "csv"}.get(fmt, fmt)
    merged.loader = {"builder": builder, "data_files": [str(p) for p in files]}
    return merged


def _choose_split(splits: list[str], split: str | None, where: Path) -> str:
    if split:
        if split not in splits:
            raise UsageError(f"{where}: no split {split!r}; splits: {', '.join(splits)}", hint="pass --split with one of them")
        return split
    if len(splits) == 1:
        return splits[0]
    if "train" in splits:
        return "train"
    raise UsageError(f"{where}: several splits ({', '.join(splits)}) and no --split given",
                     hint=f"pass --split {splits[0]} (or another)")


def _read_saved_dataset(folder: Path, n: int) -> Sample:
    """A folder written by Dataset.save_to_disk: Arrow stream files listed in state.json."""
    try:
        state = json.loads((folder / "state.json").read_text())
        info = json.loads((folder / "dataset_info.json").read_text())
    except (OSError, ValueError) as err:
        raise UsageError(f"{folder}: unreadable save_to_disk metadata ({err})") from None
    files = [folder / d["filename"] for d in state.get("_data_files", [])]
    if not files:
        raise UsageError(f"{folder}: save_to_disk folder lists no data files in state.json")
    sample: Sample | None = None
    for p in files:
        part = read_arrow(p, n - (len(sample.rows) if sample else 0))
        if sample is None:
            sample = part
        else:
            sample.rows.extend(part.rows)
        if len(sample.rows) >= n:
            break
    assert sample is not None
    sample.kind = "save_to_disk"
    sample.source = str(folder)
    sample.loader = {"load_from_disk": str(folder)}
    sample.units_read = len(sample.rows)
    if info.get("features"):
        try:
            from datasets import Features

            sample.features = Features.from_dict(info["features"])
        except Exception:
            pass
    splits = info.get("splits") or {}
    if isinstance(splits, dict) and len(splits) == 1:
        sample.total_rows = next(iter(splits.values())).get("num_examples")
    return sample


def _union_columns(rows: list[dict]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


__all__ = ["read_local", "read_file", "detect_format", "features_from_schema", "JSONL_SUFFIXES"]
