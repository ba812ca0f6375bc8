"""A written package put in its place, whole or not at all.

A new package is assembled in a temporary folder beside its place and renamed into it (rename() onto an
existing non-empty folder fails, so a race cannot clobber one). An existing package is refused unless
``--force``; then the freshly written package takes its place and everything in the old folder that the
template does not write (``data/``, files the user added) is moved into it first. A failure at any point
moves everything back: the user's files are never lost.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from vlab.core.result import UsageError
from vlab.scaffold.names import Names


def refuse_existing(target: Path, names: Names, force: bool) -> bool:
    """Whether <parent>/<module>/ exists; UsageError when it does without ``force``, or is no package to rewrite."""
    if not (target.exists() or target.is_symlink()):
        return False
    if not force:
        raise UsageError(
            f"{target} already exists; refusing to overwrite it",
            hint="pass --force to write the template's files again (data/ and the files you added stay), "
            "or choose another name or --path",
        )
    if target.is_symlink() or not target.is_dir() or not (target / f"{names.module}.py").is_file():
        raise UsageError(
            f"{target} exists and is not an environment package (no {names.module}.py in it); "
            "--force rewrites only a package new_env wrote",
            hint="choose another name or --path",
        )
    return True


def put_in_place(staging: Path, target: Path, written: list[str], replace: bool) -> list[str]:
    """Rename ``staging`` (holding exactly ``written``) to ``target``; with ``replace``, in the place of the
    package there, keeping what it holds beyond ``written``. The names kept. ``staging`` is gone after."""
    try:
        if not replace:
            os.rename(staging, target)
            return []
        return _replace(staging, target, set(written))
    except BaseException:
        for name in written:  # only what was written here: the user's files were moved back already
            (staging / name).unlink(missing_ok=True)
        if staging.is_dir() and not any(staging.iterdir()):
            staging.rmdir()
        raise


def _replace(staging: Path, target: Path, written: set[str]) -> list[str]:
    """Put the freshly written package in the place of ``target``, moving in what the template does not write
    (data/, the user's files); on a failure everything is moved back. The names kept."""
    kept = sorted(p.name for p in target.iterdir() if p.name not in written)
    old = target.with_name(f".{target.name}.replaced-{os.getpid()}")
    moved: list[str] = []
    try:
        for name in kept:
            os.rename(target / name, staging / name)
            moved.append(name)
        os.rename(target, old)
        try:
            os.rename(staging, target)
        except BaseException:
            os.rename(old, target)
            raise
    except BaseException:
        for name in moved:
            os.rename(staging / name, target / name)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return kept
