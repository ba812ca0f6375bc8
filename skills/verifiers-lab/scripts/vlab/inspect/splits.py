"""Split files in a folder, recognised by name: train / validation (val, valid, dev, eval) / test.

A folder of ``train.jsonl``, ``val.jsonl`` and ``test.jsonl`` (any extension, any numbering:
``train-00000-of-00002.parquet``, ``data/test_1.csv``) holds three splits, not one dataset:
inspect_dataset reads one of them (``--split``, default train) and the loader it recommends
names only that split's files, so test rows never reach a training loader.
"""

from __future__ import annotations

import re
from pathlib import Path

from vlab.core.result import UsageError

# A word in a file's path -> the split it names (the canonical names are datasets').
SPLIT_WORDS = {
    "train": "train",
    "training": "train",
    "validation": "validation",
    "valid": "validation",
    "val": "validation",
    "dev": "validation",
    "eval": "validation",
    "test": "test",
    "testing": "test",
}
_WORD = re.compile(r"[A-Za-z]+")


def canonical(name: str | None) -> str | None:
    """The split a name means (val -> validation), or None for a name that is no split word."""
    return SPLIT_WORDS.get((name or "").strip().lower())


def split_of(path: Path, folder: Path) -> str | None:
    """The split a file's path names (its last split word: data/train/test.jsonl is test), or None."""
    words = [canonical(w) for w in _WORD.findall(path.relative_to(folder).as_posix())]
    found = [w for w in words if w]
    return found[-1] if found else None


def group(files: list[Path], folder: Path) -> tuple[dict[str, list[Path]], list[Path]]:
    """{split: files} for the files whose names say a split, and the files that say none."""
    groups: dict[str, list[Path]] = {}
    unnamed: list[Path] = []
    for p in files:
        name = split_of(p, folder)
        (groups.setdefault(name, []) if name else unnamed).append(p)
    return groups, unnamed


def choose(groups: dict[str, list[Path]], split: str | None, where: Path) -> str:
    """The split to read: the one asked for, else train, else the only one."""
    listed = ", ".join(sorted(groups))
    if split:
        wanted = canonical(split)
        if wanted not in groups:
            raise UsageError(
                f"{where}: no split {split!r}; splits found: {listed}", hint="pass --split with one of them"
            )
        return wanted
    if "train" in groups:
        return "train"
    if len(groups) == 1:
        return next(iter(groups))
    raise UsageError(
        f"{where}: several splits ({listed}) and none is train",
        hint=f"pass --split {sorted(groups)[0]} (or another)",
    )
