"""Read the first rows of a local dataset without loading the whole file.

Every reader stops after ``n`` rows: JSON Lines and CSV by reading lines, JSON
arrays by decoding one element at a time, Parquet by row groups
(``iter_batches``), Arrow by record batches on a memory map. Cost depends on
``n`` and the row size, never on the file size.
"""

from __future__ import annotations

import json
from pathlib import Path

from vlab.core.files import gzip_cut, is_gzip, missing_path, open_binary, plain_suffix
from vlab.core.jsonl import JSONL_SUFFIXES, check_jsonl
from vlab.core.result import UsageError
from vlab.inspect import splits as split_files
from vlab.inspect.arrow_readers import features_from_schema, read_arrow, read_parquet
from vlab.inspect.problems import LAYOUTS, read_problem_folders
from vlab.inspect.sample import Sample
from vlab.inspect.text_readers import (
    first_char,
    looks_like_jsonl,
    read_csv,
    read_json,
    read_jsonl,
    refuse_wide_encodings,
    union_columns,
)

# A JSON Lines file up to this size is checked line by line past the sample (about a second); a larger one
# past the sample only at its last line, where a file cut short shows (core.jsonl).
CHECK_WHOLE_UP_TO = 32 << 20
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


def read_local(path: str | Path, n: int, split: str | None = None, config: str | None = None) -> Sample:
    """The first ``n`` rows of a local file or folder (any supported format)."""
    p = Path(path)
    if not p.exists():
        raise missing_path(str(path))
    if p.is_dir():
        return _read_folder(p, n, split, config)
    return read_file(p, n)


def detect_format(path: Path) -> str:
    fmt = FORMAT_BY_SUFFIX.get(plain_suffix(path))
    gz = is_gzip(path)
    with open_binary(path) as f:
        head = f.read(8)
    if gz and (fmt in ("parquet", "arrow") or head.startswith((b"PAR1", b"ARROW1"))):
        raise UsageError(
            f"{path.name}: a gzip-compressed {fmt or 'binary'} file cannot be read in place",
            hint=f"decompress it first (gunzip -k {path.name}); Parquet and Arrow compress inside the file",
        )
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith((b"ARROW1", b"\xff\xff\xff\xff")):  # IPC file magic / IPC stream continuation marker
        return "arrow" if fmt in (None, "arrow") else fmt
    if fmt is None:
        raise UsageError(
            f"{path.name}: unknown dataset format (suffix {path.suffix or 'none'!r})",
            hint="supported: .jsonl .json .csv .tsv (each also .gz) .parquet .arrow, "
            "or a folder written by datasets' save_to_disk",
        )
    return fmt


def read_file(path: Path, n: int) -> Sample:
    size = path.stat().st_size
    if size == 0:
        raise UsageError(f"{path} is empty (0 bytes)", hint="point at a file with rows in it")
    fmt = detect_format(path)
    if fmt in ("jsonl", "json", "csv", "tsv"):
        refuse_wide_encodings(path)
    if fmt in ("jsonl", "json"):
        first = first_char(path)
        # A .json file of one object per line is JSON Lines; a .jsonl file holding an array is JSON.
        if fmt == "json" and first == "{" and looks_like_jsonl(path):
            fmt = "jsonl"
        elif fmt == "jsonl" and first == "[":
            fmt = "json"
    reader = {
        "jsonl": read_jsonl,
        "json": read_json,
        "csv": read_csv,
        "tsv": read_csv,
        "parquet": read_parquet,
        "arrow": read_arrow,
    }[fmt]
    sample = reader(path, n)
    if is_gzip(path):  # a cut past the sample is unreadable input too: decompress to the end, unparsed
        cut = gzip_cut(path)
        if cut is not None:
            raise cut
    if fmt == "jsonl":  # past the sample too: the loader reads every line (FILE:LINE, exit 2)
        check_jsonl(path, whole_up_to=CHECK_WHOLE_UP_TO)
    sample.bytes_total = size
    if not sample.rows:
        where = "; ".join(f"{p.where}: {p.reason}" for p in sample.problems[:3])
        raise UsageError(
            f"{path}: no readable rows" + (f" ({where})" if where else ""),
            hint="check the file's format and encoding (UTF-8 expected)",
        )
    return sample


# -- folders ---------------------------------------------------------------------


def _read_folder(folder: Path, n: int, split: str | None, config: str | None = None) -> Sample:
    if (folder / "dataset_dict.json").is_file():
        splits = json.loads((folder / "dataset_dict.json").read_text()).get("splits", [])
        chosen = _choose_split(splits, split, folder)
        sample = _read_saved_dataset(folder / chosen, n)
        sample.loader = {"load_from_disk": str(folder), "split": chosen}
        sample.notes.append(f"split {chosen!r} of {', '.join(splits)}")
        sample.splits = {name: [name] for name in splits}
        sample.splits_from = "dataset_dict.json"
        return sample
    if (folder / "state.json").is_file() and (folder / "dataset_info.json").is_file():
        return _read_saved_dataset(folder, n)
    problems = read_problem_folders(folder, n)  # competitive programming kept as a folder per problem
    if problems is not None:
        return problems
    files = sorted(
        p
        for p in folder.rglob("*")
        if p.is_file()
        and plain_suffix(p) in FORMAT_BY_SUFFIX
        and not p.name.startswith(".")
        and p.name not in ("dataset_info.json", "state.json")
    )
    card = split_files.declared(folder, config)
    if card is not None:
        config, groups = card
        unnamed: list[Path] = []
        files = [p for group in groups.values() for p in group]
    else:
        groups, unnamed = split_files.group(files, folder)
    chosen = None
    if card is not None or groups and (not split or split_files.canonical(split)):
        chosen = split_files.choose(groups, split, folder)
        files = groups[chosen]
    elif split:
        files = [p for p in files if split in p.relative_to(folder).as_posix()]
    if not files and split and (groups or unnamed):
        raise _no_such_split(folder, split, groups, unnamed)
    if not files:
        raise UsageError(
            f"{folder}: no dataset files in this folder" + (f" for split {split!r}" if split else ""),
            hint="expected .jsonl/.json/.csv/.parquet/.arrow files, a save_to_disk folder, or a folder of problem "
            "folders: " + LAYOUTS,
        )
    formats = {detect_format(p) for p in files}
    if len(formats) > 1:
        raise UsageError(f"{folder}: mixed formats ({', '.join(sorted(formats))})", hint="point at one file")
    merged: Sample | None = None
    budget = CHECK_WHOLE_UP_TO  # past the sample, the split's other files share one bound; then their last lines
    for p in files:
        if merged is not None and len(merged.rows) >= n:  # sample full: the loader still reads these lines
            if formats == {"jsonl"} and p.stat().st_size:
                check_jsonl(p, whole_up_to=max(budget, 1))
                budget -= min(budget, p.stat().st_size)
            continue
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
    if merged is None:
        raise UsageError(f"{folder}: every dataset file is empty")
    merged.source = str(folder)
    merged.columns = union_columns(merged.rows) or merged.columns
    merged.total_rows = None
    merged.notes.append(
        f"{len(files)} data file(s): {', '.join(p.name for p in files[:5])}{' ...' if len(files) > 5 else ''}"
    )
    fmt = next(iter(formats))
    builder = {"jsonl": "json", "tsv": "csv"}.get(fmt, fmt)
    merged.loader = {"builder": builder, "data_files": [str(p) for p in files]}
    if chosen:
        merged.loader["split"] = chosen
        merged.splits = {name: [_relative(p, folder) for p in group] for name, group in groups.items()}
        merged.splits_from = f"README.md configs ({config or 'default'})" if card is not None else "file names"
        merged.notes.append(
            f"split {chosen!r} of {', '.join(sorted(groups))}: only its files are read and named in the loader"
            + (f"; {len(unnamed)} file(s) naming no split left out" if unnamed else "")
        )
    return merged


def _no_such_split(folder: Path, split: str, groups: dict[str, list[Path]], unnamed: list[Path]) -> UsageError:
    """--split names no split of the folder: the splits its file names say (and the files that say none)."""
    found = ", ".join(sorted(groups)) or "none"
    others = ", ".join(_relative(p, folder) for p in unnamed[:5]) + (" ..." if len(unnamed) > 5 else "")
    return UsageError(
        f"{folder}: no split {split!r}; splits found (by file names): {found}"
        + (f"; files naming no split: {others}" if unnamed else ""),
        hint=f"pass --split with one of them (e.g. --split {'train' if 'train' in groups else sorted(groups)[0]})"
        if groups
        else "pass --split with a word of one of those file names, or point at the file itself",
    )


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(path)


def _choose_split(splits: list[str], split: str | None, where: Path) -> str:
    if split:
        if split not in splits:
            raise UsageError(
                f"{where}: no split {split!r}; splits: {', '.join(splits)}", hint="pass --split with one of them"
            )
        return split
    if len(splits) == 1:
        return splits[0]
    if "train" in splits:
        return "train"
    raise UsageError(
        f"{where}: several splits ({', '.join(splits)}) and no --split given",
        hint=f"pass --split {splits[0]} (or another)",
    )


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


__all__ = ["read_local", "read_file", "detect_format", "features_from_schema", "JSONL_SUFFIXES"]
