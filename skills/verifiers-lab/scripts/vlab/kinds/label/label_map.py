"""The environment's label names against every label map its data carries (``label_map``).

A classification environment names integer class ids itself (the templates' ``LABEL_NAMES``);
the data names them too: a label map file beside the data file --env-args names (``mapping.txt``,
``labels.txt``, ``label_names.json``...; ``inspect.labels`` is the one reader) and a ``ClassLabel``
feature a Parquet or Arrow file stores. No probe can see two names swapped: the reward pays the
environment's gold, so the rows of those two classes train on each other's label. So each row's
gold is compared with the name the map gives the row's integer id in the data file: the record is
found by the row's prompt text (``data_file.data_paths`` locates the file as the environment does),
and the id column is the integer column the golds follow (one gold per id).

  label_map  fails naming the ids whose names disagree (two names swapped said so), the share of the
             data file's rows whose gold is wrong and the fix; warns when the golds are the bare ids a
             map names; silent when the data carries no map or no integer labels
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlab.core.result import Result, UsageError
from vlab.env import Row
from vlab.env.spec import locate
from vlab.inspect.labels import integer_labels, label_map_files, read_label_map
from vlab.kinds.choice.options import as_index
from vlab.kinds.label.probes import norm
from vlab.reward.data_file import MAX_RECORDS, data_paths

CONSISTENT = 0.9  # share of the matched rows whose gold is their id's usual gold: the column the golds follow
MIN_TEXT = 8  # a record text shorter than this is no evidence for a row found by position
SHOWN = 4  # disagreeing ids named in the message


@dataclass(frozen=True)
class LabelMap:
    """One label map of the data: ``name`` as a message cites it, ``where`` in full."""

    name: str
    where: str
    names: list[str]  # by id ("" for an id it leaves unnamed)


@dataclass(frozen=True)
class Golds:
    """The environment's name for each integer id of one data column, read off the matched rows."""

    column: str
    names: dict[int, str]  # id -> the gold most of its rows carry
    pairs: list[tuple[int, str]]  # (id, gold) per matched row


def check_label_map(
    result: Result, scope: list[Row], golds: dict[int, str | None], env_args: dict[str, Any], env_spec: str
) -> None:
    """label_map: the golds against each label map of each data file --env-args names."""
    from vlab.inspect.readers import read_file

    findings, unmatched = [], []
    for path in data_paths(env_args, env_spec):
        maps = _file_maps(path)
        if not maps and path.suffix.lower() not in (".parquet", ".arrow"):  # no map beside it, no ClassLabel in it
            continue
        try:
            sample = read_file(path, MAX_RECORDS)
        except (UsageError, OSError, ValueError):
            continue
        records = sample.rows
        seen = _golds_by_id(scope, golds, records)
        if seen is None:
            unmatched += [(path, m) for m in maps if _id_columns(records)]
            continue
        maps += _class_label(sample, seen.column)
        findings += [(path, records, seen, m) for m in maps]
    if findings:
        _verdict(result, findings, env_spec)
    elif unmatched:
        path, first = unmatched[0]
        result.skip(
            "label_map",
            f"{first.where} not compared with the golds: no checked row was found in {path.name} by its prompt "
            "text with an integer label",
        )


def _file_maps(path: Path) -> list[LabelMap]:
    out = []
    for file in label_map_files(path):
        try:
            out.append(LabelMap(file.name, f"{file.name} beside the data", read_label_map(file)))
        except UsageError:  # inspect_dataset names an unreadable map; it carries no names to compare
            continue
    return out


def _class_label(sample, column: str) -> list[LabelMap]:
    from vlab.inspect.columns import class_label_names

    names = class_label_names(getattr(sample, "features", None), column)
    where = f"the ClassLabel names {Path(sample.source).name} stores for {column!r}"
    return [LabelMap("the ClassLabel", where, names)] if names else []


# -- the rows in the data file, and the id column their golds follow ---------------------------


def _key(text: str) -> str:
    return " ".join(text.split())


def _matches(scope: list[Row], records: list[dict]) -> dict[int, list[int]]:
    """Row index -> the records it can have been built from: a record text equal to its prompt (or, for a
    prompt of several columns joined by blank lines, to its parts), else the record at the row's position
    whose text the prompt contains."""
    index: dict[str, set[int]] = defaultdict(set)
    for k, rec in enumerate(records):
        for v in rec.values():
            if isinstance(v, str) and v.strip():
                index[_key(v)].add(k)
    out: dict[int, list[int]] = {}
    for row in scope:
        text = row.question or ""
        found = index.get(_key(text))
        if not found:
            parts = [index[_key(p)] for p in text.split("\n\n") if _key(p) in index]
            found = set.intersection(*parts) if parts else None
        if not found and 0 <= row.index < len(records):
            values = [v for v in records[row.index].values() if isinstance(v, str) and len(v.strip()) >= MIN_TEXT]
            found = {row.index} if any(_key(v) in _key(text) for v in values) else None
        if found:
            out[row.index] = sorted(found)
    return out


def _golds_by_id(scope: list[Row], golds: dict[int, str | None], records: list[dict]) -> Golds | None:
    """The integer column whose ids the golds follow (each id one gold), with the environment's name per id."""
    if not records:
        return None
    matched = _matches(scope, records)
    best: tuple[tuple, Golds] | None = None
    for column, in_file in _id_columns(records).items():
        pairs = []
        for row in scope:
            gold, ks = golds.get(row.index), matched.get(row.index)
            ids = {as_index(records[k].get(column)) for k in ks or ()}
            if gold is not None and len(ids) == 1 and None not in ids:
                pairs.append((ids.pop(), gold))
        by_id: dict[int, Counter] = defaultdict(Counter)
        for i, gold in pairs:
            by_id[i][gold] += 1
        if len(by_id) < 2:
            continue
        agree = sum(c.most_common(1)[0][1] for c in by_id.values()) / len(pairs)
        names = {i: c.most_common(1)[0][0] for i, c in by_id.items()}
        one_to_one = len({norm(n) for n in names.values()}) == len(names)
        if agree < CONSISTENT or not one_to_one:
            continue
        rank = (agree, -len(in_file), len(by_id), "label" in column.lower())
        if best is None or rank > best[0]:
            best = (rank, Golds(column, names, pairs))
    return best[1] if best else None


def _id_columns(records: list[dict]) -> dict[str, list[int]]:
    """Columns of small integer ids, each with its distinct ids; a column of more ids than half its rows is a
    row id or a count, not a class (a class column repeats its ids)."""
    out = {}
    for column in dict.fromkeys(k for rec in records[:100] for k in rec):
        values = [rec.get(column) for rec in records]
        ids = None if any(isinstance(v, bool) for v in values) else integer_labels(values)
        if ids is not None and len(ids) * 2 <= len(records):
            out[column] = ids
    return out


# -- the verdict ---------------------------------------------------------------------------------


def _verdict(result: Result, findings: list, env_spec: str) -> None:
    agreeing, bare, wrong = [], [], []
    for path, records, seen, m in findings:
        if max((as_index(rec.get(seen.column)) or 0 for rec in records), default=0) >= len(m.names):
            continue  # the map does not describe this column (inspect_dataset names a map too short for the data)
        named = {i: g for i, g in seen.names.items() if i < len(m.names) and m.names[i]}
        if not named:
            continue
        if all(norm(g) == str(i) for i, g in named.items()):
            bare.append((path, seen, m))
        elif any(norm(g) != norm(m.names[i]) for i, g in named.items()):
            wrong.append((path, records, seen, m, named))
        else:
            agreeing.append(m)
    if wrong:
        path, records, seen, m, named = wrong[0]
        off = sorted(i for i, g in named.items() if norm(g) != norm(m.names[i]))
        counted = [i for i in (as_index(rec.get(seen.column)) for rec in records) if i is not None]
        bad = sum(1 for i in counted if i in off)
        checked = sum(1 for i, g in seen.pairs if i in named and norm(g) != norm(m.names[i]))
        also = f"; {', '.join(w.where for *_, w, _ in wrong[1:])} disagree too" if len(wrong) > 1 else ""
        result.fail(
            "label_map",
            f"the environment's golds disagree with {m.where}: {_disagreement(off, named, m)}; {bad}/{len(counted)} "
            f"rows of {path.name} ({bad / max(1, len(counted)):.0%}) have the wrong gold ({checked}/{len(seen.pairs)} "
            f"of the checked rows){also}",
            _hint(m, agreeing, env_spec),
        )
    elif bare:
        path, seen, m = bare[0]
        shown = ", ".join(f"{i}={m.names[i]}" for i in sorted(seen.names) if i < len(m.names) and m.names[i])
        result.warn(
            "label_map",
            f"the golds are the bare class ids of {path.name}'s {seen.column!r} although {m.where} names them "
            f"({shown}): a model is asked for a code it cannot know",
            _hint(m, [], env_spec),
        )
    elif agreeing:
        seen = findings[0][2]
        shown = ", ".join(f"{i}={seen.names[i]}" for i in sorted(seen.names))
        result.passed(
            "label_map",
            f"the golds name the class ids as {' and '.join(m.where for m in agreeing)} "
            f"{'do' if len(agreeing) > 1 else 'does'} ({shown}; {len(seen.pairs)} rows)",
        )


def _disagreement(off: list[int], named: dict[int, str], m: LabelMap) -> str:
    names, listed, done = m.names, [], set()
    for i in off:
        if i in done:
            continue
        j = next(
            (j for j in off if j != i and norm(named[i]) == norm(names[j]) and norm(named[j]) == norm(names[i])), None
        )
        if j is not None:
            done |= {i, j}
            listed.append(
                f"{names[i]!r} and {names[j]!r} are swapped (id {i} is {names[i]!r} in {m.name}, the environment's "
                f"gold for it is {named[i]!r}; id {j} is {names[j]!r}, its gold {named[j]!r})"
            )
        else:
            listed.append(f"id {i} is {names[i]!r} in {m.name}, the environment's gold for it is {named[i]!r}")
    return "; ".join(listed[:SHOWN]) + (f"; and {len(listed) - SHOWN} more" if len(listed) > SHOWN else "")


def _hint(m: LabelMap, agreeing: list[LabelMap], env_spec: str) -> str:
    in_order = json.dumps(m.names, ensure_ascii=False)
    if agreeing:
        return (
            f"the data's own label maps disagree: the golds follow {' and '.join(a.where for a in agreeing)}, "
            f"{m.where} names the ids otherwise; find which is right (the dataset's card) and correct the other"
        )
    module = _module_with_label_names(env_spec)
    if module is not None:
        return (
            f"set LABEL_NAMES in {module} to the names in id order, as {m.name} gives them: "
            f"LABEL_NAMES = {in_order} (if {m.name} itself is wrong, correct it instead)"
        )
    return (
        f"name each class id as {m.name} does, in id order ({in_order}), where the environment turns ids into "
        f"golds (if {m.name} itself is wrong, correct it instead)"
    )


def _module_with_label_names(env_spec: str) -> str | None:
    try:
        source = locate(env_spec).source
        text = source.read_text(encoding="utf-8") if source is not None else ""
    except (UsageError, OSError, UnicodeDecodeError):
        return None
    return str(source) if re.search(r"^LABEL_NAMES\s*=", text, re.M) else None
