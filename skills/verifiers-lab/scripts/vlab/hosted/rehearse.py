"""Will it start? Rehearse the hosted run on this machine before any money is spent.

For each environment a config names (train and eval sources), this does what the runner will do:

1. **Build** the environment's wheel the way ``prime env push`` does (prime 0.18 ``commands/env.py``:
   ``uv build --wheel`` in the environment folder, else ``python -m build --wheel``). The folder is
   what local_train names, else ``environments/<module>`` (or ``<module>``) under the current folder.
2. **Install** the wheel and its ``Requires-Dist`` into a throwaway virtual environment (uv) with the
   verifiers generation the target runs (``VERIFIERS``), never the user's: a dependency the package
   forgets to declare fails here. The venv is cached by the wheel's hash (``cache_root()``), so a
   second rehearsal of the same package takes seconds. Without the package index (``--offline``,
   ``UV_OFFLINE``), what uv's cache lacks comes from this Python (``rehearse_offline``): the build backend
   builds without isolation, verifiers 0.4.0 and the declared dependencies are linked into the venv; where
   this Python lacks them too, the check fails (a warning for local_train) naming what is missing.
3. **Load** the taskset from an empty temporary folder with the config's exact arguments, by its
   installed module, as verifiers 0.4.0 does (``verifiers.v1.utils.loaders``: the id's last segment,
   ``@version`` dropped, ``-`` -> ``_``; the module's ``__all__`` Taskset built with
   ``taskset_config_type(name)(id=..., **args)``), in a worker process of that venv (``vlab.env.remote``).
4. **Score** the gold answer of the first N rows through the installed package's own rewards.

Each failure is its own check with its fix: an absolute local path, data the wheel does not ship
(the file and the pyproject line that ships it), a data file whose content is not what its extension
says (``dataformat``), no dataset argument where the taskset has no
default, an undeclared import (the module and the dependency to add), a Hub dataset that cannot be
reached (offline: a warning that the load was not tried, never a pass), gold below the top reward.
Nothing to rehearse (no ``environments/<module>/`` under the current folder, no uv) fails for
submit_training (``RehearseOptions.required``: no config is written without a rehearsal) and is a
warning for local_train's hand-off.

``rehearse(result, plain, target, options)`` appends the checks to ``result`` and returns a ``Rehearsal``;
``rehearse_config`` is what submit_training and local_train's prime-rl engine call (``--no-rehearse``:
a skip check that says so). The data arguments are checked in ``rehearse_data``; steps 3 and 4 live in
``rehearse_load`` (which also sizes a rollout for the token budget, ``hosted.tokens``); a judge-scored
environment is scored against the loopback stub judge, its judge settings and calls per step checked
(``rehearse_judge``).
"""

from __future__ import annotations

import dataclasses
import email.parser
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from vlab.core.result import EXIT_EXTERNAL, EXIT_PREREQ, Check, ToolError
from vlab.hosted import rehearse_judge
from vlab.hosted import rehearse_offline as offline
from vlab.hosted.prime import NETWORK_TEXT
from vlab.hosted.rehearse_common import (  # noqa: F401  (re-exported: the stages' shared names, as callers knew them)
    BUILD_TIMEOUT,
    DEFAULT_ROWS,
    EPS,
    INSTALL_TIMEOUT,
    LOAD_TIMEOUT,
    SCORE_TIMEOUT,
    VERIFIERS,
    Rehearsal,
    RehearseOptions,
    Source,
    Wheel,
    _check,
    module_name,
    user_path,
)
from vlab.hosted.rehearse_data import data_checks
from vlab.hosted.rehearse_load import load_and_score


def cache_root() -> Path:
    """$VLAB_REHEARSE_CACHE, else $XDG_CACHE_HOME (or ~/.cache)/verifiers-lab/rehearse."""
    if os.environ.get("VLAB_REHEARSE_CACHE"):
        return Path(os.environ["VLAB_REHEARSE_CACHE"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "verifiers-lab" / "rehearse"


def uv_command() -> str | None:
    """uv on PATH, else beside this interpreter (a venv that has it installed but is not activated)."""
    found = shutil.which("uv")
    if found:
        return found
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.is_file() else None


# -- the sources of a config ------------------------------------------------------------------------


def config_sources(plain: dict) -> list[Source]:
    from vlab.hosted.gate import _sources, source_id_and_args

    out = []
    for where, source in _sources(plain):
        env_id, args, legacy = source_id_and_args(source)
        if env_id and not legacy:  # a `legacy` (classic) block runs on prime-rl v0.8.0, not on verifiers 0.4.0
            out.append(Source(where, env_id, args))
    return out


def folder_candidates(env_id: str, cwd: Path) -> list[Path]:
    """Where an environment's source folder is looked for, in order: environments/<module>, then its
    Hub name's spelling, <module> and the current folder itself."""
    module = module_name(env_id)
    name = env_id.rsplit("/", 1)[-1].split("@", 1)[0]
    out = []
    for folder in (cwd / "environments" / module, cwd / "environments" / name, cwd / module, cwd / name, cwd):
        if folder not in out:
            out.append(folder)
    return out


def find_folder(env_id: str, options: RehearseOptions) -> Path | None:
    """The environment's source folder: the one the user named, else environments/<module> or <module>."""
    named = dict(options.specs).get(env_id)
    path = Path(named).expanduser() if named else None
    if path is not None and path.exists():  # a module file or package folder the user named
        path = path.parent if path.is_file() else path
        for folder in (path, path.parent):
            if (folder / "pyproject.toml").is_file():
                return folder.resolve()
        return None
    cwd = Path(options.cwd or Path.cwd())
    module = module_name(env_id)
    for folder in folder_candidates(env_id, cwd):
        if (folder / "pyproject.toml").is_file() and (
            (folder / f"{module}.py").is_file() or (folder / module / "__init__.py").is_file()
        ):
            return folder.resolve()
    return None


# -- 1. build ---------------------------------------------------------------------------------------


def _run(cmd: list[str], cwd: Path | None, timeout: float) -> subprocess.CompletedProcess:
    from vlab.core.installed import run_command

    return run_command(cmd, timeout=timeout, cwd=str(cwd) if cwd else None)


def _said(done) -> str:
    """The last lines a command printed, as one line."""
    return " | ".join((done.stderr or done.stdout or "").strip().splitlines()[-6:])[-800:]


def build_wheel(folder: Path, out_dir: Path, uv: str | None, online: bool) -> Wheel:
    """``uv build --wheel`` (prime env push's build) into ``out_dir``; without the package index, where uv's cache
    lacks the build backend, the backend installed in this Python builds it (``rehearse_offline``). ``ToolError``
    with the build's own words; ``rehearse_offline.Unavailable`` when nothing here has the backend."""
    if uv:
        cmd = [uv, "build", "--wheel", "--out-dir", str(out_dir)] + ([] if online else ["--offline"])
    else:
        cmd = [sys.executable, "-m", "build", "--wheel", "--outdir", str(out_dir), str(folder)]
    done = _run(cmd, folder, BUILD_TIMEOUT)
    built = "as `prime env push` does"
    if (done.returncode != 0 or not any(out_dir.glob("*.whl"))) and uv and offline.index_unreachable(online):
        backend = offline.backend_of(folder)  # uv's cache may just lack the backend: build with the installed one
        if backend.missing:
            raise offline.build_refusal(backend, _said(done))
        cmd = offline.build_command(uv, out_dir)
        done = _run(cmd, folder, BUILD_TIMEOUT)
        built = (
            f"by {', '.join(backend.versions) or backend.module} installed in this Python, without isolation "
            "(offline, uv's cache has no build backend; `prime env push` runs the same backend)"
        )
    wheels = sorted(out_dir.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise ToolError(f"building the wheel failed ({' '.join(cmd[:3])}): " + _said(done))
    path = wheels[0]
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        meta = next((n for n in names if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8", "replace") if meta else ""
    requires = email.parser.Parser().parsestr(text).get_all("Requires-Dist") or []
    return Wheel(path, hashlib.sha256(path.read_bytes()).hexdigest(), names, list(requires), built)


# -- 2. install -------------------------------------------------------------------------------------


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _venv_key(wheel: Wheel, linked_from: str = "") -> str:
    text = f"{wheel.sha256}|{VERIFIERS}|{sys.version_info[:2]}" + (f"|linked|{linked_from}" if linked_from else "")
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _cached(final: Path) -> dict | None:
    """A finished venv's record (ready.json), None when there is none or its links no longer resolve."""
    try:
        record = json.loads((final / "ready.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not venv_python(final).exists():
        return None
    if record.get("linked_from") and not all(
        offline.links_intact(p) for p in (final / "lib").glob("python*/site-packages")
    ):
        return None
    return record


def _installed_how(record: dict) -> str:
    if record.get("linked_from"):
        return (
            f"with {VERIFIERS} and the Requires-Dist, {record.get('linked', '')} packages linked from those installed in "
            f"{record['linked_from']} (offline: uv's cache lacks them; nothing undeclared is linked)"
        )
    return f"with its Requires-Dist and {VERIFIERS}"


def install(wheel: Wheel, uv: str, online: bool) -> tuple[Path, bool, str]:
    """A venv with the wheel, its Requires-Dist and ``VERIFIERS``: (its python, reused from the cache?, how it
    was installed). Without the package index, what uv's cache lacks is linked from this Python's packages
    (``rehearse_offline``); ``rehearse_offline.Unavailable`` when this Python lacks it too."""
    unreachable = offline.index_unreachable(online)
    root = cache_root()
    for key in [_venv_key(wheel)] + ([_venv_key(wheel, sys.prefix)] if unreachable else []):
        record = _cached(root / key)
        if record is not None:
            return venv_python(root / key), True, _installed_how(record)
    root.mkdir(parents=True, exist_ok=True)
    key = _venv_key(wheel)
    work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=root))
    base = getattr(sys, "_base_executable", None) or sys.executable
    venv = [uv, "venv", "--quiet", "--python", base, str(work / "venv")]
    python = str(venv_python(work / "venv"))
    record = {"wheel": wheel.path.name, "sha256": wheel.sha256, "verifiers": VERIFIERS}
    try:
        _step(venv)
        pip = [uv, "pip", "install", "--quiet", "--python", python, str(wheel.path), VERIFIERS]
        done = _run(pip + ([] if online else ["--offline"]), None, INSTALL_TIMEOUT)
        if done.returncode != 0:
            if not unreachable:
                raise ToolError(_said(done) or "uv pip install failed")
            dists, missing = offline.closure([*wheel.requires, VERIFIERS])
            if missing:
                raise offline.install_refusal(missing, _said(done))
            shutil.rmtree(work / "venv")  # a fresh venv: nothing half-installed by the failed attempt
            _step(venv)
            site = next((work / "venv" / "lib").glob("python*/site-packages"))
            offline.link_closure(site, dists)
            _step([uv, "pip", "install", "--quiet", "--offline", "--no-deps", "--python", python, str(wheel.path)])
            _step([uv, "pip", "check", "--quiet", "--python", python])
            key = _venv_key(wheel, sys.prefix)
            record.update({"linked_from": sys.prefix, "linked": len(dists)})
        (work / "venv" / "ready.json").write_text(json.dumps(record), encoding="utf-8")
        final = root / key
        try:
            os.rename(work / "venv", final)
        except OSError:  # another rehearsal finished the same venv first: use it
            if not (final / "ready.json").is_file():
                raise
        return venv_python(final), False, _installed_how(record)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _step(cmd: list[str]) -> None:
    done = _run(cmd, None, INSTALL_TIMEOUT)
    if done.returncode != 0:
        raise ToolError(_said(done) or f"{' '.join(cmd[:3])} failed")


# -- the whole rehearsal ------------------------------------------------------------------------------


def rehearse(result, plain: dict, target: str, options: RehearseOptions) -> Rehearsal:
    """Every source of the config: build, install, load, score; the checks go into ``result``."""

    t0 = time.perf_counter()
    outcome = Rehearsal()
    sources = config_sources(plain)
    uv = uv_command()
    built: dict[str, tuple[Path | None, Wheel | None, Path | None, str | None]] = {}
    loaded: dict[str, tuple[Source, list[Check], dict]] = {}  # environment and arguments -> their first load
    with tempfile.TemporaryDirectory(prefix="vlab-rehearse-") as tmp:
        for i, src in enumerate(sources):
            record: dict = {"where": src.where, "env_id": src.env_id, "args": src.args}
            outcome.tried.append(record)
            if src.env_id not in built:
                built[src.env_id] = _build_and_install(result, src, options, uv, Path(tmp) / str(i))
            folder, wheel, python, reason = built[src.env_id]
            record.update(
                {
                    "folder": str(folder) if folder else None,
                    "wheel": wheel.path.name if wheel else None,
                    "wheel_sha256": wheel.sha256 if wheel else None,
                    "venv": str(python.parent.parent) if python else None,
                    "cached": reason == "cached",
                }
            )
            data = data_checks(src, wheel, folder, target, options.cwd)
            result.checks.extend(data)
            judge = rehearse_judge.plan_for(src, wheel, folder)  # judge-scored: scored against the stub judge
            if judge is not None:
                result.checks.append(rehearse_judge.settings_check(src, judge, target))
            if python is None or any(c.status == "fail" for c in data):
                record["loaded"] = False
                continue
            same = json.dumps([src.env_id, src.args], sort_keys=True, default=str)
            if same in loaded:  # an eval source like its train source: one load, not two (a worker start each)
                result.checks.extend(_loaded_as(src, *loaded[same], record))
                continue
            loaded[same] = (src, load_and_score(src, python, options, record, judge), record)
            result.checks.extend(loaded[same][1])
    outcome.seconds = time.perf_counter() - t0
    result.data["rehearsal"] = outcome.to_dict()
    if cost := rehearse_judge.cost_check(plain, outcome.tried):
        result.checks.append(cost[0])
        result.data["rehearsal"]["judge_cost"] = cost[1]
    return outcome


def _loaded_as(src: Source, first: Source, checks: list[Check], done: dict, record: dict) -> list[Check]:
    """A source with the environment and arguments of one already loaded: that load's findings, under its name."""
    record.update({k: v for k, v in done.items() if k not in record})
    record["same_as"] = first.where
    named = f"{first.where} ({first.env_id}): "
    said = f"{src.where} ({src.env_id}): as {first.where}, whose environment and arguments it shares (loaded once): "
    return [dataclasses.replace(c, message=said + c.message.removeprefix(named)) for c in checks]


def no_folder_check(env_id: str, options: RehearseOptions) -> Check:
    """Nothing to rehearse: where the source folder was looked for, and the two ways on."""
    named = dict(options.specs).get(env_id)
    cwd = Path(options.cwd or Path.cwd())
    module = module_name(env_id)
    if named:
        looked = f"{named} has no pyproject.toml beside it (or one folder up)"
    else:
        places = ", ".join(
            f"{user_path(f, cwd)}/" if f != cwd else "the current folder" for f in folder_candidates(env_id, cwd)
        )
        looked = (
            f"no environments/{module}/ with a pyproject.toml and {module}.py under {cwd.resolve()} "
            f"(looked in {places})"
        )
    if not options.required:
        return _check(
            "warn",
            f"{env_id}: no source folder found ({looked}), so the run was not rehearsed",
            "run from the folder that holds environments/, or skip the rehearsal knowingly with --no-rehearse",
        )
    return _check(
        "fail",
        f"{env_id}: nothing to rehearse: {looked}; the config is not written without a rehearsal",
        f"run the same command from the project folder that holds environments/{module}/ (its pyproject.toml "
        "and module), or pass --no-rehearse to write the config without a rehearsal",
    )


def _index_unreachable(src: Source, what: str, err: ToolError) -> Check:
    """uv could not reach the package index: an external failure (exit 4), retried or skipped with --offline."""
    return Check(
        "rehearse",
        "fail",
        f"{src.env_id}: {what} needs the package index, which could not be reached: {err.message}",
        "check the network (or the index uv uses) and retry, or pass --offline (uv builds and installs from its "
        "cache) or --no-rehearse",
        EXIT_EXTERNAL,
    )


def _build_and_install(result, src: Source, options: RehearseOptions, uv: str | None, tmp: Path):
    """(folder, wheel, venv python, "cached"|"installed"|None); the checks of what failed go into ``result``."""
    folder = find_folder(src.env_id, options)
    if folder is None:
        result.checks.append(no_folder_check(src.env_id, options))
        return None, None, None, None
    if uv is None:
        result.checks.append(
            Check(
                "rehearse",
                "fail" if options.required else "warn",
                f"{src.env_id}: uv is not installed, so the run cannot be rehearsed (a throwaway venv needs it)"
                + ("; the config is not written without a rehearsal" if options.required else ""),
                "pip install uv, then re-run"
                + (", or pass --no-rehearse to skip it knowingly" if options.required else ""),
                EXIT_PREREQ,
            )
        )
        return folder, None, None, None
    tmp.mkdir(parents=True)
    try:
        wheel = build_wheel(folder, tmp, uv, options.online)
    except offline.Unavailable as err:  # offline, and neither uv's cache nor this Python has the backend
        result.checks.append(_unavailable(src, err, options, "rehearse-build"))
        return folder, None, None, None
    except ToolError as err:
        if options.online and NETWORK_TEXT.search(err.message):  # the index did not answer: not the package's fault
            result.checks.append(_index_unreachable(src, "building the wheel", err))
            return folder, None, None, None
        result.checks.append(
            _check(
                "fail",
                f"{src.env_id}: {err.message}",
                "fix pyproject.toml so `uv build --wheel` succeeds there",
                id="rehearse-build",
            )
        )
        return folder, None, None, None
    result.checks.append(
        _check(
            "pass",
            f"{src.env_id}: built {wheel.path.name} from {folder} {wheel.built} "
            f"({len(wheel.names)} files, Requires-Dist: {', '.join(wheel.requires) or 'none'})",
            id="rehearse-build",
        )
    )
    try:
        python, cached, how = install(wheel, uv, options.online)
    except offline.Unavailable as err:
        result.checks.append(_unavailable(src, err, options, "rehearse-install"))
        return folder, wheel, None, None
    except ToolError as err:
        if options.online and NETWORK_TEXT.search(err.message):
            result.checks.append(_index_unreachable(src, f"installing the wheel with {VERIFIERS}", err))
            return folder, wheel, None, None
        result.checks.append(
            _check(
                "fail",
                f"{src.env_id}: installing the wheel with {VERIFIERS} into a fresh venv failed: {err.message}",
                "declare dependencies the index can resolve next to " + VERIFIERS,
                id="rehearse-install",
            )
        )
        return folder, wheel, None, None
    result.checks.append(
        _check(
            "pass",
            f"{src.env_id}: {'reused the cached venv' if cached else 'installed the wheel'} {how} "
            f"({python.parent.parent})",
            id="rehearse-install",
        )
    )
    return folder, wheel, python, "cached" if cached else "installed"


def _unavailable(src: Source, err: offline.Unavailable, options: RehearseOptions, id: str) -> Check:
    """Offline, and this machine cannot build or install the package: submit_training refuses (no config
    without a rehearsal), local_train's hand-off warns; the hint names the ways on."""
    return _check(
        "fail" if options.required else "warn",
        f"{src.env_id}: {err.message}, so the run was not rehearsed"
        + ("; the config is not written without a rehearsal" if options.required else ""),
        offline.fix_hint(err, options.required),
        id=id,
    )


def local_finder(env_id: str, online: bool, timeout: float):
    """The gate's generation finder: the Hub or an installed module first, then the local source folder."""
    from vlab.env.generation import detect

    found = detect(env_id, online=online, timeout=timeout)
    folder = None if found.known else find_folder(env_id, RehearseOptions())
    if folder is None:
        return found
    local = detect(str(folder), online=False, timeout=timeout)
    if local.known:
        local.evidence.insert(0, f"read from its source folder {folder}")
        return local
    return found


def rehearse_config(
    result,
    plain: dict,
    target: str,
    outcome,
    *,
    rows: int,
    online: bool,
    rehearsing: bool,
    specs: dict[str, str] | None = None,
    required: bool = False,
) -> None:
    """The rehearsal of every v1 source (``hosted.rehearse``), or the check that says it was skipped.
    ``required``: nothing to rehearse fails (submit_training) instead of warning."""
    if not rehearsing:
        result.skip(
            "rehearse",
            "not rehearsed (--no-rehearse): no wheel was built, installed or loaded, so nothing says the run will start",
            "drop --no-rehearse to build, install and load each environment as the run will",
        )
        result.data["rehearsal"] = None
        return
    if outcome.legacy_ids:  # classic sources on a v0.8.0 checkout: verifiers 0.4.0 cannot load them
        import tomllib

        import tomlkit

        from vlab.hosted.gate import to_legacy

        plain = tomllib.loads(tomlkit.dumps(plain))
        to_legacy(plain, outcome.legacy_ids)
    options = RehearseOptions(rows=rows, online=online, specs=tuple((specs or {}).items()), required=required)
    rehearse(result, plain, target, options)
