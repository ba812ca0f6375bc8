"""The rehearsal's data step (see ``vlab.hosted.rehearse``): the files a config's arguments name.

An argument that names a file (a data extension, or a path-like key with a path-like value) is
checked against what the run will have: an absolute path fails for a hosted run (and must exist
for a self-managed prime-rl run); a relative one passes exactly when the built wheel ships it, in
its own format (``dataformat``). The fix names the file as the user sees it from the current folder.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from vlab.core.files import data_files_in, nearest_names
from vlab.core.result import EXIT_FAIL, EXIT_USAGE, Check
from vlab.hosted.rehearse_common import Source, Wheel, _check, module_name, user_path

DATA_EXT = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".arrow", ".txt", ".yaml", ".yml", ".gz", ".zip")
_DATASET_KEY = re.compile(r"(dataset|data|path|file)", re.I)
_HUB_KEY = re.compile(r"^(dataset_name|dataset|hf_dataset|dataset_id)$", re.I)


def _strings(value, key: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strings(v, f"{key}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings(v, f"{key}[{i}]")]
    return []


def is_absolute(value: str) -> bool:
    v = value.strip()
    return v.startswith(("/", "~", "\\")) or bool(re.match(r"^[A-Za-z]:[\\/]", v))


def names_file(key: str, value: str) -> bool:
    """An argument that names a file: a data extension, or a path-like key with a path-like value."""
    v = value.strip()
    if not v or "://" in v or "\n" in v or len(v) > 1024:
        return False
    if is_absolute(v) or v.startswith(("./", "../")):
        return True
    last = re.split(r"[.\[]", key)[-1]
    return v.lower().endswith(DATA_EXT) or (bool(re.search(r"(path|file|dir)s?$", last, re.I)) and "/" in v)


def shipped_as(names: list[str], value: str, module: str) -> str | None:
    """The wheel member a package-relative ``value`` names (as the template's data_file looks it up)."""
    rel = PurePosixPath(value.strip().lstrip("./"))
    inside = PurePosixPath(*rel.parts[1:]) if rel.parts[:1] == ("data",) and len(rel.parts) > 1 else rel
    wanted = {str(rel), f"{module}/{rel}", f"{module}/data/{inside}", f"{module}_data/{inside}", f"data/{inside}"}
    for name in names:
        if name in wanted:
            return name
    tail = f"/{inside}"
    return next((n for n in names if n.endswith(tail) and ".dist-info/" not in n), None)


def data_checks(
    src: Source, wheel: Wheel | None, folder: Path | None, target: str, cwd: str | None = None
) -> list[Check]:
    """Absolute paths fail (hosted; prime-rl: must exist there); relative ones pass exactly when the wheel ships them."""
    checks = []
    module = module_name(src.env_id)
    for key, value in [p for k, v in src.args.items() for p in _strings(v, k)]:
        if not names_file(key, value):
            continue
        named = f"{src.where} ({src.env_id}): {key} = {value!r}"
        if is_absolute(value):
            if target == "hosted":
                checks.append(
                    _check(
                        "fail",
                        f"{named} is an absolute path on this machine; the hosted run cannot read it",
                        "ship the file in the package (environments/<env>/data/, listed in pyproject's "
                        "[tool.hatch.build] include) and pass its name relative to data/, e.g. "
                        f'{key}="{Path(value).name}"',
                        id="rehearse-data",
                    )
                )
            elif not Path(value).expanduser().exists():
                checks.append(_check("fail", f"{named} names a path that does not exist", id="rehearse-data"))
            elif wrong := _wrong_format(named, value, Path(value).expanduser()):
                checks.append(wrong)
            else:
                checks.append(
                    _check(
                        "warn",
                        f"{named} is an absolute path: the machine that runs prime-rl must have it at that path",
                        "ship the file in the package instead, so the run needs nothing outside the wheel",
                        id="rehearse-data",
                    )
                )
            continue
        if wheel is None:
            continue
        member = shipped_as(wheel.names, value, module)
        if member:
            wrong = _wrong_format(named, member, wheel.path, member)
            checks.append(wrong or _check("pass", f"{named}: shipped in the wheel as {member}", id="rehearse-data"))
            continue
        here = Path(cwd) if cwd else Path.cwd()
        places = _local_places(value, folder, here)
        found = next((p for p in places if p.exists()), None)
        if found is not None and found.is_dir():
            checks.append(_folder_check(named, key, value, wheel, module, found, here))
            continue
        file = PurePosixPath(value).name  # the path from the current folder, as the user would create it
        where = user_path(folder / "data" / file, Path(cwd) if cwd else None) if folder else f"data/{file}"
        missing, near = "", []
        if found is None:  # not here either: a mistyped path is bad input (exit 2), with the closest names
            near = list(dict.fromkeys(user_path(Path(n), here) for p in places for n in nearest_names(p)))
            missing = (
                f" and is not here either (looked at {', '.join(dict.fromkeys(user_path(p, here) for p in places))})"
            )
            missing += f"; did you mean {' or '.join(near)}?" if near else ""
        checks.append(
            Check(
                "rehearse-data",
                "fail",
                f"{named} is not in the built wheel {wheel.path.name}{missing or ': the run would not find it'}",
                (f"fix the path (did you mean {' or '.join(near)}?), or " if near else "")
                + f"put the file at {where} and ship data/ in pyproject.toml: "
                '[tool.hatch.build] include = [..., "data/**"] (the templates\' '
                '[tool.hatch.build.targets.wheel.sources] "data" = '
                f'"{module}_data" installs it beside the module), then re-run',
                EXIT_USAGE if missing else EXIT_FAIL,
            )
        )
    return checks


def _local_places(value: str, folder: Path | None, cwd: Path) -> list[Path]:
    """Where a relative data path is on this machine: from the current folder, in the environment's folder and in
    its data/ (a leading data/ dropped there, as the templates' data_file does)."""
    rel = PurePosixPath(value.strip())
    inside = Path(*rel.parts[1:]) if rel.parts[:1] == ("data",) and len(rel.parts) > 1 else Path(rel)
    return [cwd / rel] + ([folder / rel, folder / "data" / inside] if folder else [])


def _folder_check(named: str, key: str, value: str, wheel: Wheel, module: str, found: Path, cwd: Path) -> Check:
    """A folder where a file is named: exit 2 naming the data files in it, unless the wheel ships the folder's
    files (then the load shows whether the environment's loader reads folders)."""
    rel = PurePosixPath(value.strip().rstrip("/"))
    inside = PurePosixPath(*rel.parts[1:]) if rel.parts[:1] == ("data",) and len(rel.parts) > 1 else rel
    prefixes = (f"{module}/{rel}/", f"{module}/data/{inside}/", f"{module}_data/{inside}/", f"data/{inside}/")
    if any(name.startswith(prefixes) for name in wheel.names):
        return _check(
            "pass", f"{named}: a folder the wheel ships (the load shows whether it reads one)", id="rehearse-data"
        )
    inner = [Path(f).relative_to(found).as_posix() for f in data_files_in(found)]
    files = [user_path(found / f, cwd) for f in inner]
    return Check(
        "rehearse-data",
        "fail",
        f"{named} is a folder ({user_path(found, cwd)}) the wheel does not ship"
        + (f"; data files in it: {', '.join(files)}" if files else "; it holds no data files"),
        f"name one of its files: --env-arg {key}='\"{rel}/{inner[0]}\"' (the templates read one file; a loader "
        "that reads folders needs the folder shipped in data/)"
        if inner
        else "name one data file (.jsonl/.json/.csv/.parquet) instead of the folder",
        EXIT_USAGE,
    )


def _wrong_format(named: str, shown: str, source: Path, member: str | None = None) -> Check | None:
    """The rehearse-data failure of a data file whose content is not what its extension says (``dataformat``)."""
    from vlab.hosted.dataformat import explain, mismatch, read_head

    head = read_head(source, member)
    wrong = mismatch(member or source.name, head) if head is not None else None
    return _check("fail", *explain(named, shown, wrong), id="rehearse-data") if wrong else None


def hub_dataset(args: dict) -> str | None:
    """The Hub dataset the arguments name when no file argument is given."""
    files = [k for k, v in args.items() if isinstance(v, str) and names_file(k, v)]
    if files:
        return None
    for k, v in args.items():
        if isinstance(v, str) and v and _HUB_KEY.match(k):
            return v
    return None
