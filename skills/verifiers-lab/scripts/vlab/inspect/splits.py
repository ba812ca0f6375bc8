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
from collections import Counter
from pathlib import Path, PurePosixPath

from vlab.core.result import Result, UsageError
from vlab.inspect.sample import Sample

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


# -- a data file's split, by its name or its ids ------------------------------------------------------------------

ID_FIELDS = ("unique_id", "id", "task_id", "problem_id", "question_id", "uid", "qid", "sample_id", "idx")
_TEST_ID = re.compile(r"test[/_-]", re.I)
_DATA_SUFFIX = re.compile(r"\.(?:jsonl?|csv|tsv|parquet|arrow|feather|txt)$", re.I)
_COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst)$", re.I)


def named_split(path: object) -> tuple[str, str] | None:
    """(the split, how the path names it: 'the file test.jsonl', 'the folder test/') for a data file's path, or None.

    The file name's last split word decides (math_test.jsonl, test-00000-of-00001.parquet, NQ-open.dev.jsonl;
    not contest.jsonl); a name without one (data.jsonl) is read from its folder, which must be named after the
    split itself (data/test/0.parquet; not a test_x0/ folder)."""
    text = str(path or "").strip().replace("\\", "/")
    if not text:
        return None
    p = PurePosixPath(text)
    name = _COMPRESSED.sub("", p.name)
    if _DATA_SUFFIX.search(name):
        found = [w for w in (canonical(w) for w in _WORD.findall(_DATA_SUFFIX.sub("", name))) if w]
        if found:
            return (found[-1], f"the file {p.name}")
        folder = p.parent.name
    else:
        folder = p.name  # a folder, or a Hub id's name
        if "/" not in text and not text.startswith("."):
            return None  # a bare name is no folder
    split = canonical(folder)
    return (split, f"the folder {folder}/") if split else None


def named_test_split(path: object) -> str | None:
    """How a data file's path names the test split ('the file test.jsonl', 'the folder test/'), or None."""
    found = named_split(path)
    return found[1] if found and found[0] == "test" else None


def ids_like_test_split(records: list[dict]) -> tuple[str, int, int, str] | None:
    """(column, ids starting test/ test_ test-, ids read, an example) when most ids start so, else None."""
    counts: Counter = Counter()
    hits: Counter = Counter()
    example: dict[str, str] = {}
    for rec in records:
        for name in ID_FIELDS:
            value = rec.get(name)
            if isinstance(value, str) and value.strip():
                counts[name] += 1
                if _TEST_ID.match(value.strip()):
                    hits[name] += 1
                    example.setdefault(name, value.strip())
                break
    for name, n in counts.most_common():
        if hits[name] and hits[name] * 2 > n:
            return name, hits[name], n, example[name]
    return None


def split_column(records: list[dict]) -> tuple[str, int, int] | None:
    """(the split most rows' 'split' column names, its rows, rows with one) when it is test or validation."""
    values = [canonical(rec.get("split")) for rec in records if isinstance(rec.get("split"), str)]
    top = Counter(v for v in values if v).most_common(1)
    if top and top[0][0] in ("test", "validation") and top[0][1] * 2 > len(values):
        return top[0][0], top[0][1], len(values)
    return None


def held_out_key(key: str) -> bool:
    """An argument meant to hold test or eval data (eval_dataset_path, test_split): a test split there is right."""
    return key.lower().startswith(("eval", "test", "val", "dev", "holdout"))


def _arg_paths(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [p for k, v in value.items() if not held_out_key(str(k)) for p in _arg_paths(v)]
    return []


def args_split_evidence(args: dict | None) -> tuple[list[tuple[str, str]], bool]:
    """([(split, evidence)] for the training arguments that name a test or validation split, whether any argument
    names data or a split at all). Arguments meant for held-out data (eval_*, test_*) are not read."""
    out: list[tuple[str, str]] = []
    looked = False
    for key, value in (args or {}).items():
        k = str(key).lower()
        if held_out_key(k):
            continue
        if k == "split" or k.endswith("_split"):
            looked = True
            split = canonical(value) if isinstance(value, str) else None
            if split in ("test", "validation"):
                out.append((split, f"{key}={value!r}"))
        elif any(w in k for w in ("path", "file", "data", "dir")):
            for path in _arg_paths(value):
                looked = True
                named = named_split(path)
                if named and named[0] in ("test", "validation"):
                    out.append((named[0], f"{key}: {named[1]}"))
                    break
    return out, looked


def check_splits(result: Result, sample: Sample) -> None:
    """inspect_dataset's splits and test-split checks: the splits found, and a warning when the rows read are a test or
    dev split."""
    split = sample.loader.get("split")
    if sample.splits:
        listed = ", ".join(
            f"{name} ({len(files)} file(s))" if files else name for name, files in sorted(sample.splits.items())
        )
        where = sample.splits_from or "file names"
        result.passed("splits", f"splits found ({where}): {listed}; read {split!r} only")
    # the rules test_reward's test_split applies too
    evidence = []
    words = {"test": "the test split", "validation": "a validation (dev) split"}
    named = None if sample.splits or sample.kind == "hub" else named_split(sample.source)
    if sample.splits and split in words:
        evidence.append((split, f"{sample.source}, split {split!r}"))
    elif named and named[0] in words:
        evidence.append((named[0], f"{sample.source}: {named[1]}"))
    ids = ids_like_test_split(sample.rows)
    if ids:
        column, hits, n, example = ids
        evidence.append(("test", f"{hits}/{n} {column!r} ids read start like a test split's, e.g. {example!r}"))
    if evidence:
        which = " or ".join(sorted({words[s] for s, _ in evidence}))
        result.warn(
            "test-split",
            f"this is {which} ({'; '.join(e for _, e in evidence)}): an environment trained on it spoils the "
            "evaluation, and leaves no held-out rows to evaluate on",
            "train on the train split (--split train, or the train file); keep test and dev rows for evaluation "
            "only (submit_training refuses to train on them unless --train-on-eval-split says it is meant)",
        )
