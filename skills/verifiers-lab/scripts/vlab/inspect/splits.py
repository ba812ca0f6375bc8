"""Split files in a folder, recognised by name: train / validation (val, valid, dev, eval) / test.

A folder of ``train.jsonl``, ``val.jsonl`` and ``test.jsonl`` (any extension, any numbering:
``train-00000-of-00002.parquet``, ``data/test_1.csv``) holds three splits, not one dataset:
inspect_dataset reads one of them (``--split``, default train) and the loader it recommends
names only that split's files, so test rows never reach a training loader.

A Hub-shaped folder whose README.md declares ``configs:`` (``data_files`` per split, any file
names) is split the way ``datasets`` itself splits it: ``declared`` asks datasets' own resolution
(``load_dataset_builder(folder, config).config.data_files``), offline, nothing downloaded.
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
        wanted = split if split in groups else canonical(split)
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


_CONFIGS = re.compile(r"^configs\s*:", re.M)


def declares_configs(folder: Path) -> bool:
    """Whether the folder's README.md front matter (the Hub's dataset card YAML) has a ``configs:`` key."""
    try:
        text = (folder / "README.md").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if not text.startswith("---"):
        return False
    front = text[3:].split("\n---", 1)[0]
    return bool(_CONFIGS.search(front))


def declared(folder: Path, config: str | None) -> tuple[str | None, dict[str, list[Path]]] | None:
    """(config, {split: files}) for a folder whose README.md declares ``configs:``, by datasets' own
    resolution of its ``data_files``; None for a folder without one."""
    if not declares_configs(folder):
        return None
    from vlab.inspect.hub import choose_config

    try:
        import datasets

        config = choose_config(str(folder), list(datasets.get_dataset_config_names(str(folder))), config)
        data_files = datasets.load_dataset_builder(str(folder), config).config.data_files or {}
    except UsageError:
        raise
    except Exception as err:  # a malformed card, a pattern that matches nothing
        text = str(err).strip().splitlines()[0][:300] if str(err).strip() else type(err).__name__
        raise UsageError(
            f"{folder}: README.md declares configs that datasets cannot resolve ({text})",
            hint="check the configs/data_files block of README.md (paths are relative to the folder)",
        ) from None
    return config, {str(name): sorted(Path(f) for f in files) for name, files in data_files.items()}
