"""The data file an environment reads, as the data says it: the file named in --env-args (``dataset_path``,
``data_file``, ...), checked line by line before loading (``check_data_files``), its records matched to the
environment's rows. A v1 task carries only what its loader kept (a code row's ``tests`` spec), so a loader
that drops tests is seen only against the file's own test column (``code.count_tests``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlab.core.result import UsageError
from vlab.env.spec import locate
from vlab.env.types import Row
from vlab.kinds.rows import row_fields

DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".arrow")
MAX_RECORDS = 20_000  # the file's first records read to find the rows (a data file for training is seldom larger)
MIN_TEXT = 16  # a record's text shorter than this is no evidence that a prompt was built from it
ID_KEYS = ("task_id", "id", "problem_id", "question_id", "uid")


def data_paths(env_args: dict[str, Any], env_spec: str) -> list[Path]:
    """Local data files the environment arguments name: as given (from the current folder), else in the
    environment's ``data/`` folder or beside its module (where the templates look a relative name up)."""
    folders = [Path.cwd()]
    source = _env_folder(env_spec)
    if source is not None:
        folders += [source / "data", source]
    found: list[Path] = []
    for value in env_args.values():
        if not isinstance(value, str) or "\n" in value or len(value) > 4096:
            continue
        name = value.strip()
        if not name.lower().removesuffix(".gz").endswith(DATA_SUFFIXES):
            continue
        path = Path(name).expanduser()
        for candidate in [path] if path.is_absolute() else [folder / path for folder in folders]:
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
                break
    return found


def check_data_files(env_args: dict[str, Any], env_spec: str) -> list[Path]:
    """Every JSON Lines file --env-args names, checked line by line before the environment loads it (in the
    parent, up front): a line that is no JSON object is exit 2 naming FILE:LINE (``core.jsonl``), as
    inspect_dataset names it, never the worker's DatasetGenerationError with no file or line. The files checked."""
    from vlab.core.jsonl import check_jsonl, is_jsonl

    checked = []
    for path in data_paths(env_args, env_spec):
        if is_jsonl(path):
            check_jsonl(path)
            checked.append(path)
    return checked


def matched_records(rows: list[Row], env_args: dict[str, Any], env_spec: str) -> dict[int, dict[str, Any]]:
    """Row index -> the data file's record it was built from, for the rows that can be matched: by the
    reference (a record value equal to the row's gold), by id, else by the longest record text the row's
    prompt contains. Unreadable or unnamed files give {}: this only adds evidence."""
    from vlab.inspect.readers import read_file

    records: list[dict[str, Any]] = []
    for path in data_paths(env_args, env_spec):
        try:
            records += read_file(path, MAX_RECORDS).rows
        except (UsageError, OSError, ValueError):
            continue
    if not records:
        return {}
    texts = [
        {k: v.strip() for k, v in rec.items() if isinstance(v, str) and len(v.strip()) >= MIN_TEXT} for rec in records
    ]
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        found = _by_gold(row, records, texts) or _by_id(row, records) or _by_prompt(row, records, texts)
        if found is not None:
            out[row.index] = found
    return out


def match_record(row: Row, records: list[dict[str, Any]], texts: list[dict[str, str]]) -> dict[str, Any] | None:
    """The record a row's prompt or reference was built from, by content alone (ids are no evidence here: another
    split's file numbers its rows the same way). ``texts``: each record's strings of MIN_TEXT characters or more."""
    return _by_prompt(row, records, texts) or _by_gold(row, records, texts)


def _by_gold(row: Row, records: list[dict], texts: list[dict]) -> dict | None:
    gold = row.answer if isinstance(row.answer, str) else row_fields(row).get("answer")
    gold = gold.strip() if isinstance(gold, str) else ""
    if len(gold) < MIN_TEXT:
        return None
    return next((rec for rec, text in zip(records, texts) if gold in text.values()), None)


def _by_id(row: Row, records: list[dict]) -> dict | None:
    fields = row_fields(row)
    ids = {str(fields[k]) for k in ("id", *ID_KEYS) if isinstance(fields.get(k), (str, int))}
    if not ids:
        return None
    return next((rec for rec in records if any(str(rec.get(k)) in ids for k in ID_KEYS if k in rec)), None)


def _by_prompt(row: Row, records: list[dict], texts: list[dict]) -> dict | None:
    prompt = "\n".join(str(m.get("content", "")) for m in row.prompt if isinstance(m, dict)) or row.question
    best, size = None, 0
    for rec, text in zip(records, texts):
        longest = max((len(v) for v in text.values() if v in prompt), default=0)
        if longest > size:
            best, size = rec, longest
    return best


def _env_folder(env_spec: str) -> Path | None:
    """The folder of the environment's module (``env.locate``, as the loader finds it); None for an installed id."""
    try:
        source = locate(env_spec).source
    except UsageError:
        return None
    return source.parent if source is not None else None
