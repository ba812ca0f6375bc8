"""Class labels stored as small integers, and where their names are.

A label column of 0, 1, 2, 3 is a code: an environment that asks a model for "2" teaches it
nothing about the task. The names come from, in order: ``--label-names a,b,c`` or
``--label-map FILE`` (request), a ``ClassLabel`` feature (read by ``columns``), or a label map
file beside the data (``mapping.txt``, ``labels.txt``, ``label_names.json``...): a JSON list or
object, or text lines of ``index<sep>name`` (tab, comma, semicolon, colon, ``|``, ``=`` or
spaces; either order) or one name per line in index order.

The distribution of the labels in the sample and the majority class's share are reported
too: a model that always answers the majority class scores that share.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from vlab.core.result import Result, UsageError
from vlab.kinds.choice.options import as_index

# File names searched beside the data, in this order.
MAP_FILES = (
    "mapping.txt",
    "labels.txt",
    "label_names.json",
    "label_names.txt",
    "label_map.json",
    "label_map.txt",
    "labels.json",
    "mapping.json",
    "classes.txt",
)
MAX_CLASSES = 100  # integer labels up to this many classes count as class ids
_PAIR = re.compile(r"^\s*(\d+)\s*(?:[\t,;:|=]|\s)\s*(\S.*?)\s*$")
_PAIR_REVERSED = re.compile(r"^\s*(\S.*?)\s*(?:[\t,;:|=]|\s)\s*(\d+)\s*$")


def integer_labels(values: list[Any]) -> list[int] | None:
    """The sorted distinct ids when every present value is a small non-negative integer (or its digits)."""
    present = [v for v in values if v is not None and v != ""]
    ids = [as_index(v) for v in present]
    if not present or any(i is None or i >= MAX_CLASSES for i in ids):
        return None
    return sorted(set(ids))


def read_label_map(path: Path) -> list[str]:
    """The names of a label map file, index order; UsageError when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise UsageError(f"cannot read label map {path}: {err}", hint="a UTF-8 text or JSON file") from None
    by_index: dict[int, str] = {}
    if path.suffix.lower() == ".json" or text.lstrip()[:1] in ("[", "{"):
        try:
            obj = json.loads(text)
        except ValueError as err:
            raise UsageError(f"label map {path} is not valid JSON ({err})") from None
        if isinstance(obj, dict) and isinstance(obj.get("names"), list):  # a ClassLabel dict
            obj = obj["names"]
        if isinstance(obj, list):
            by_index = {i: str(n) for i, n in enumerate(obj)}
        elif isinstance(obj, dict):
            for k, v in obj.items():
                if as_index(k) is not None:
                    by_index[as_index(k)] = str(v)
                elif as_index(v) is not None:
                    by_index[as_index(v)] = str(k)
    else:
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        pairs = []
        for ln in lines:
            m = _PAIR.match(ln)
            r = None if m else _PAIR_REVERSED.match(ln)
            pairs.append((int(m.group(1)), m.group(2)) if m else (int(r.group(2)), r.group(1)) if r else None)
        if pairs and pairs[0] is None and all(pairs[1:]) and len(pairs) > 2:
            pairs = pairs[1:]  # a header line (index,name)
        if pairs and all(pairs):
            by_index = {i: name.strip().strip("\"'") for i, name in pairs}
        elif pairs and not any(pairs):
            by_index = {i: ln.strip() for i, ln in enumerate(lines)}
    if len(by_index) < 2:
        raise UsageError(
            f"{path} is not a label map: no index/name pairs in it",
            hint="one label a line: '0<TAB>anger' (or 0,anger / 0: anger), or a JSON list of names",
        )
    return _ordered(by_index, str(path))


def _ordered(by_index: dict[int, str], where: str) -> list[str]:
    start = min(by_index)
    if sorted(by_index) != list(range(start, start + len(by_index))) or start not in (0, 1):
        raise UsageError(f"label map {where}: its indices {sorted(by_index)} do not count 0, 1, 2, ...")
    names = [by_index[i] for i in sorted(by_index)]
    if start == 1:  # a map counting from 1 keeps index 0 unnamed (""), so names[id] is right for every id
        names = ["", *names]
    if len({n.casefold() for n in names if n}) != len([n for n in names if n]):
        raise UsageError(f"label map {where}: two labels have the same name", hint="every class needs its own name")
    return names


def find_label_map(source: str) -> Path | None:
    """A label map file beside local data: in the folder given, or in the folder of the file given."""
    found = label_map_files(source)
    return found[0] if found else None


def label_map_files(source: str | Path) -> list[Path]:
    """Every label map file beside local data (the folder given, or the folder of the file given), MAP_FILES order."""
    p = Path(source)
    folder = p if p.is_dir() else p.parent
    if not folder.is_dir():
        return []
    return [folder / name for name in MAP_FILES if (folder / name).is_file()]


def names_given(label_names: tuple[str, ...] | None, label_map: str | None) -> tuple[list[str], str] | None:
    """Names the user gave (--label-names, --label-map), with where they came from."""
    if label_names:
        return list(label_names), "--label-names"
    if label_map:
        path = Path(label_map)
        if not path.is_file():
            raise UsageError(f"--label-map {label_map}: no such file")
        return read_label_map(path), f"--label-map {path.name}"
    return None


def distribution(values: list[Any], names: list[str] | None) -> dict[str, Any]:
    """Counts per label (named when names are known), and the majority class's share."""
    present = [str(v).strip() for v in values if v is not None and str(v).strip() != ""]
    counts = Counter(present)
    if names:
        counts = Counter({_name(k, names): n for k, n in counts.items()})
    total = sum(counts.values())
    if not total:
        return {}
    top, n = counts.most_common(1)[0]
    return {
        "counts": dict(counts.most_common()),
        "rows": total,
        "majority": top,
        "majority_share": round(n / total, 4),
    }


def _name(value: str, names: list[str]) -> str:
    i = as_index(value)
    return names[i] if i is not None and 0 <= i < len(names) and names[i] else value


def check_label_names(result: Result, fmt: dict[str, Any]) -> None:
    """inspect_dataset's label-names and label-balance checks on the answer format found."""
    names = fmt.get("label_names")
    ignored = fmt.get("label_names_ignored")
    if ignored:  # --label-names / --label-map beside a ClassLabel: the file's names win, and the user is told
        theirs, ours = numbered(ignored["names"]), numbered(names)
        if ignored["agrees"]:
            result.warn(
                "label-names",
                f"{ignored['from']} ({theirs}) is not used: the file's ClassLabel feature names the classes itself "
                f"({ours}), and the ClassLabel wins; the two lists agree",
                f"drop {ignored['from'].split()[0]}: the data names its own classes",
            )
        else:
            result.warn(
                "label-names",
                f"{ignored['from']} DISAGREES with the file's ClassLabel feature and is ignored: you named {theirs}, "
                f"the file names {ours}; the ClassLabel wins (new_env writes its names into the environment)",
                "find out which list is right before going on: if yours is, the file's ClassLabel is wrong: save the "
                "data again with your names (Dataset.cast_column on the label column with ClassLabel(names=[...])) "
                f"and re-run; if the file's is, drop {ignored['from'].split()[0]}",
            )
    if names and fmt.get("label_names_from") != "ClassLabel feature":
        result.passed("label-names", f"class ids are named by {fmt['label_names_from']}: {numbered(names)}")
    elif fmt.get("integer_labels"):
        why = f" ({fmt['label_names_problem']})" if fmt.get("label_names_problem") else ""
        result.warn(
            "label-names",
            f"the labels are integers ({', '.join(map(str, fmt.get('labels', [])))}) with no names{why}: "
            "a prompt offering them asks for a code the model can only guess",
            "name them: a mapping.txt beside the data (one '0<TAB>name' a line), --label-names a,b,c "
            "or --label-map FILE; new_env then writes the names into the environment",
        )
    dist = fmt.get("distribution") or {}
    if dist:
        counts = ", ".join(f"{k} {n / dist['rows']:.0%}" for k, n in list(dist["counts"].items())[:8])
        result.passed(
            "label-balance",
            f"labels in the {dist['rows']} rows read: {counts}; always answering {dist['majority']!r} "
            f"would score {dist['majority_share']:.2f}",
        )


def numbered(names: list[str]) -> str:
    return ", ".join(f"{i}={n}" for i, n in enumerate(names) if n)
