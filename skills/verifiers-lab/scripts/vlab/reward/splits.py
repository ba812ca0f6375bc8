"""Which split the environment trains on: what its arguments and rows say, and what it really loads.

- ``test_split`` (a warning, never a fail: submit_training is where training on it fails): the data looks like a
  test or validation (dev) split: a dataset file in the environment arguments named like one (``test.jsonl``,
  ``math_test.parquet``, ``NQ-open.dev.jsonl``, a ``test/`` folder), a split argument naming ``test``,
  ``validation`` or ``dev``, most rows' ids starting ``test/``, ``test_`` or ``test-`` (MATH's
  ``test/precalculus/807.json``), or a ``split`` column. The naming rules are ``inspect.splits``'.
- ``data_split``: the rows the environment loaded against the data file its arguments name. The loaded rows (a
  sample of ``SAMPLE_ROWS``) are looked up in that file and in its sibling split files (the other files of its
  folder, the environment's ``data/``, the data files its code names): rows found in a test or validation file
  and not in the file named fail (the code loads another split than its arguments say); a row count that differs
  from the file's with the rows found in it warns (the loader drops or caps rows, and says nothing), naming both.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlab.core.result import Result, UsageError
from vlab.env import Row
from vlab.inspect.splits import args_split_evidence, ids_like_test_split, named_split, split_column
from vlab.kinds.rows import row_fields
from vlab.reward.data_file import DATA_SUFFIXES, MAX_RECORDS, data_paths, match_record

SAMPLE_ROWS = 40  # loaded rows looked up in the data files
FOUND_SHARE = 0.8  # a file holds the loaded rows when at least this share of the sample is found in it
MISSING_SHARE = 0.5  # ... and the named file does not when under this share is
MAX_SIBLINGS = 8  # other data files read to find where the rows come from
LIMIT_ARGS = ("num_examples", "num_train_examples", "max_examples", "n_examples", "limit", "max_rows", "n")
SPLIT_WORDS = {"test": "a test split", "validation": "a validation (dev) split"}
_QUOTED_FILE = re.compile(r"[\"']([^\"'\n]{1,200}\.(?:jsonl|json|csv|tsv|parquet|arrow)(?:\.gz)?)[\"']", re.I)
_CODE_SPLIT = re.compile(r"split\s*=\s*[\"'](test|validation|dev|val)[\"']", re.I)


# -- test_split --------------------------------------------------------------------------------------------


def check_test_split(result: Result, rows: list[Row], env_args: dict[str, Any] | None) -> None:
    """test_split: a warning when the data looks like a test or validation split; pass, or skip when nothing says."""
    found, looked = args_split_evidence(env_args)
    evidence = [(split, text) for split, text in found]
    records = [row_fields(r) for r in rows]
    ids = ids_like_test_split(records)
    if ids:
        column, hits, n, example = ids
        evidence.append(("test", f"{hits}/{n} {column!r} ids start like a test split's (e.g. {example!r})"))
    column = split_column(records)
    if column:
        split, hits, n = column
        evidence.append((split, f"the 'split' column reads {split} in {hits}/{n} rows"))
    if evidence:
        kinds = sorted({SPLIT_WORDS[s] for s, _ in evidence})
        result.warn(
            "test_split",
            f"the data looks like {' or '.join(kinds)} (" + "; ".join(t for _, t in evidence) + "): training on "
            "it spoils every evaluation on the same benchmark, and its scores then say nothing",
            "train on the train split (its file, or split='train'); keep the test and dev rows for evaluation only "
            "(submit_training refuses such a config unless --train-on-eval-split says it is meant)",
        )
        return
    if looked or any(any(isinstance(rec.get(n), str) for n in ("id", "unique_id", "task_id")) for rec in records):
        result.passed("test_split", "no sign of a test split (dataset files and split in the env args, row ids)")
    else:
        result.skip("test_split", "nothing names the data's split (no dataset file or split in the env args, no ids)")


# -- data_split: what the environment really loads ---------------------------------------------------------


def _records(path: Path) -> tuple[list[dict[str, Any]], bool] | None:
    """(the file's records up to MAX_RECORDS, whether that is all of them); None when unreadable."""
    from vlab.inspect.readers import read_file

    try:
        rows = read_file(path, MAX_RECORDS + 1).rows
    except (UsageError, OSError, ValueError):
        return None
    return rows[:MAX_RECORDS], len(rows) <= MAX_RECORDS


def _sample(rows: list[Row]) -> list[Row]:
    step = max(1, len(rows) // SAMPLE_ROWS)
    return rows[::step][:SAMPLE_ROWS]


def _found(sample: list[Row], records: list[dict[str, Any]]) -> int:
    texts = [{k: v.strip() for k, v in rec.items() if isinstance(v, str) and len(v.strip()) >= 16} for rec in records]
    return sum(1 for row in sample if match_record(row, records, texts) is not None)


def _code_files(source: Path | None) -> tuple[list[str], list[str]]:
    """(data file names, split= values) the environment's module names in its code."""
    if source is None or not source.is_file():
        return [], []
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return [], []
    return _QUOTED_FILE.findall(text), [m.lower() for m in _CODE_SPLIT.findall(text)]


def _siblings(named: list[Path], env_source: Path | None, code_names: list[str]) -> list[Path]:
    """Other data files the rows may come from: the named files' folders, the environment's data/, its code's files."""
    folders = [p.parent for p in named]
    if env_source is not None:
        folders += [env_source.parent / "data", env_source.parent]
    out: list[Path] = []
    for name in code_names:
        for folder in [Path.cwd(), *folders]:
            candidate = folder / name
            if candidate.is_file() and candidate not in out and candidate not in named:
                out.append(candidate)
                break
    for folder in dict.fromkeys(folders):
        if not folder.is_dir():
            continue
        for p in sorted(folder.iterdir()):
            if p.is_file() and p.name.lower().removesuffix(".gz").endswith(DATA_SUFFIXES) and p not in named:
                if p not in out:
                    out.append(p)
    return out[:MAX_SIBLINGS]


def _limit(env_args: dict[str, Any]) -> tuple[str, int] | None:
    for key in LIMIT_ARGS:
        value = env_args.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return key, value
    return None


def _module_file(env_spec: str) -> Path | None:
    from vlab.env.spec import locate

    try:
        return locate(env_spec).source
    except UsageError:
        return None


def check_loaded_split(result: Result, rows: list[Row], n_loaded: int, env_args: dict[str, Any], env_spec: str) -> None:
    """data_split: the loaded rows against the data file the arguments name (see the module's docstring)."""
    named = data_paths(env_args, env_spec)
    if not named or not rows:
        return
    env_source = _module_file(env_spec)
    path = named[0]
    read = _records(path)
    if read is None:
        return
    records, whole = read
    sample = _sample(rows)
    in_named = _found(sample, records)
    code_names, code_splits = _code_files(env_source)
    if in_named < MISSING_SHARE * len(sample):
        elsewhere = []
        for sibling in _siblings(named, env_source, code_names):
            other = _records(sibling)
            if other is None:
                continue
            hits = _found(sample, other[0])
            if hits >= FOUND_SHARE * len(sample):
                elsewhere.append((hits, sibling, len(other[0])))
        code = (
            f"; the code names {', '.join(sorted(set(code_names)))[:200]}"
            if code_names
            else f"; the code asks for split={code_splits[0]!r}"
            if code_splits
            else ""
        )
        if elsewhere:
            hits, sibling, size = max(elsewhere, key=lambda e: e[0])
            split = named_split(sibling)
            held_out = split is not None and split[0] in ("test", "validation")
            message = (
                f"the environment loads {sibling.name} ({n_loaded} rows; {hits}/{len(sample)} sampled rows found "
                f"there, {in_named} in {path.name}), not {path.name} ({len(records)}{'' if whole else '+'} rows) that "
                f"its arguments name{code}"
            )
            if held_out:
                result.fail(
                    "data_split",
                    message + f": it trains on {SPLIT_WORDS[split[0]]} while its arguments say otherwise",
                    "make the loader read the file dataset_path names (no hard-coded split or file in the code), "
                    "then run test_reward again",
                )
            else:
                result.warn(
                    "data_split",
                    message,
                    "make the loader read the file its arguments name, so the config says what is trained on",
                )
            return
        result.warn(
            "data_split",
            f"only {in_named} of {len(sample)} sampled rows of the {n_loaded} loaded are found in {path.name}, the "
            f"file the arguments name{code}: the environment may read other data than its arguments say",
            "check which file the loader opens (a hard-coded path or split in the code wins over dataset_path)",
        )
        return
    limit = _limit(env_args)
    if whole and n_loaded != len(records) and not (limit and n_loaded <= limit[1]):
        fewer = n_loaded < len(records)
        result.warn(
            "data_split",
            f"the environment loaded {n_loaded} rows; {path.name}, the file its arguments name, holds "
            f"{len(records)} ({in_named}/{len(sample)} sampled rows found in it): "
            + (
                f"the loader drops {len(records) - n_loaded} rows without a word (filtered, deduplicated or capped)"
                if fewer
                else "the loader makes more rows than the file holds"
            ),
            "check the loader's filters and limits; pass num_examples to cap the rows on purpose",
        )
        return
    said = f" (capped by {limit[0]}={limit[1]})" if limit and n_loaded < len(records) else ""
    result.passed(
        "data_split",
        f"the {n_loaded} rows loaded come from {path.name}, the file the arguments name "
        f"({in_named}/{len(sample)} sampled rows found in it{'' if whole else ''}){said}",
    )
