"""Find an environment (file, folder or installed id), tell its generation, and load it.

``load_env(spec, env_args)`` returns an ``Environment`` (see ``base``): a classic one when
the module defines ``load_environment`` (verifiers <= 0.3.x), a v1 one when its ``__all__``
exports a ``vf.Taskset``. A classic module under verifiers 0.4 (which has only v1) is
recognised from its source before it is imported, so the user gets the fix, not an
ImportError.

Loading errors are mapped to the foundation's exceptions: bad path/id or bad env args ->
UsageError (2); missing package, the wrong verifiers generation, a missing API key ->
PrerequisiteError (3); a dataset that needs the network -> ExternalError (4).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import logging
import os
import re
import sys
from pathlib import Path

from vlab.core.files import damage, data_files_in, looks_local, missing_path
from vlab.core.installed import verifiers_info, version_tuple
from vlab.core.result import ExternalError, PrerequisiteError, ToolError, UsageError
from vlab.env.base import Environment
from vlab.env.classic import ClassicEnvironment
from vlab.env.spec import Located, locate
from vlab.env.v1 import V1Environment

CLASSIC_INSTALL = 'pip install "verifiers==0.3.1"'
V1_INSTALL = 'pip install "verifiers>=0.4.0"'


def install_for(spec: str) -> str:
    """The verifiers an environment needs, from its source read without importing it (vlab.env.generation):
    a v1 taskset gets 0.4, a classic one 0.3.1, an unknown one both ways named."""
    from vlab.env.generation import detect_local

    try:
        generation = detect_local(spec).generation
    except Exception:  # noqa: BLE001 - a hint only: an unreadable source names both
        generation = "unknown"
    if generation == "v1":
        return f"{V1_INSTALL}   (it is a v1 taskset)"
    if generation == "classic":
        return f"{CLASSIC_INSTALL}   (it is a classic environment: load_environment)"
    return f"{V1_INSTALL}   (v1 tasksets)  or  {CLASSIC_INSTALL}   (classic load_environment)"


def classify_import_error(err: BaseException, located: Located, spec: str, vf_version: str | None) -> ToolError:
    if isinstance(err, ModuleNotFoundError):
        missing = err.name or ""
        if missing.split(".")[0] == located.module_name and located.search_path is None:
            owner_hint = (
                f"prime env install {spec}"
                if "/" in spec
                else f"pip install {spec} (or prime env install OWNER/{spec})"
            )
            return UsageError(
                f"environment {spec!r} is not installed (no module {located.module_name!r})", hint=owner_hint
            )
        if missing.startswith("verifiers"):
            hint = V1_INSTALL if missing.startswith("verifiers.v1") else install_for(spec)
            return PrerequisiteError(f"environment imports {missing!r}, which verifiers {vf_version} lacks", hint=hint)
        return PrerequisiteError(
            f"environment {located.module_name!r} needs the package {missing.split('.')[0]!r}, which is not installed",
            hint=f"pip install {missing.split('.')[0]} (or install the environment with its dependencies: pip install -e <env folder>)",
        )
    if isinstance(err, ImportError):
        return PrerequisiteError(
            f"importing environment {located.module_name!r} failed: {err}",
            hint="install the environment's dependencies",
        )
    if isinstance(err, SyntaxError):
        return UsageError(
            f"environment module has a syntax error: {err.filename}:{err.lineno}: {err.msg}",
            hint="fix the syntax error",
        )
    return ToolError(
        f"importing environment {located.module_name!r} raised {type(err).__name__}: {err}",
        hint="fix the module's top-level code (re-run with --debug for the traceback)",
    )


def source_text(located: Located) -> str:
    path = located.source
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path and path.is_file() else ""
    except OSError:
        return ""


def looks_classic(text: str) -> bool:
    return bool(re.search(r"^\s*def\s+load_environment\s*\(", text, re.M))


# What a loader raises when it asked the network (a Hub dataset) and got no answer.
_NETWORK_TYPES = frozenset(
    {
        "ConnectionError",
        "ConnectError",
        "ConnectTimeout",
        "OfflineModeIsEnabled",
        "LocalEntryNotFoundError",
        "HfHubHTTPError",
        "ReadTimeout",
        "Timeout",
        "MaxRetryError",
        "NewConnectionError",
        "gaierror",
    }
)
_DATA_ARG = re.compile(r"path|file|dir|folder|data", re.I)  # --env-args keys that name where data is read


def classify_load_error(err: BaseException, what: str) -> ToolError:
    """Map an exception raised while building the environment to an exit code and a fix."""
    text = f"{type(err).__name__}: {err}"
    lowered = text.lower()
    names = {t.__name__ for t in type(err).__mro__}
    missing = re.search(r"missing \d+ required (?:positional|keyword-only) arguments?: (.+)$", str(err))
    if isinstance(err, TypeError) and missing:  # the loader needs an argument nobody passed
        needed = re.findall(r"'(\w+)'", missing.group(1))
        example = ", ".join(f'"{n}": {_example_value(n)}' for n in needed) or '"name": "value"'
        return UsageError(
            f"{what} needs {', '.join(needed) or 'an argument'}, which --env-args does not give",
            hint=f"pass it in --env-args: --env-args '{{{example}}}'",
        )
    if isinstance(err, TypeError) and "unexpected keyword argument" in lowered:
        return UsageError(
            f"{what} does not accept these --env-args: {err}",
            hint="check the function's parameters and pass matching --env-args JSON",
        )
    if isinstance(err, ValueError) and lowered.startswith("valueerror: no dataset named"):  # the templates' loaders
        return UsageError(
            f"{what}: no dataset named: the environment reads its data from dataset_path (a file) or dataset_name "
            "(a Hub dataset), and --env-args gives neither",
            hint=f"pass it in --env-args: --env-args '{{\"dataset_path\": {_example_value('dataset_path')}}}'",
        )
    if "MissingKeyError" in names or re.search(r"api[_ ]?key", lowered):
        key = re.search(r"\b([A-Z][A-Z0-9_]*_API_KEY)\b", str(err))
        return PrerequisiteError(
            f"{what} needs an API key: {err}",
            hint=f"export {key.group(1) if key else 'OPENAI_API_KEY'}=... (judge rubrics build their client when loaded; a dummy value is enough to load)",
        )
    if names & _NETWORK_TYPES or any(
        s in lowered
        for s in (
            "couldn't reach",
            "could not reach",
            "connection",
            "offline mode",
            "name resolution",
            "temporary failure in name",
        )
    ):
        return ExternalError(
            f"{what} needs the network to get its dataset: {text[:300]}",
            hint="retry with network access (that fills the Hugging Face cache), or pass a local dataset path in "
            "--env-args",
        )
    if isinstance(err, FileNotFoundError):
        return UsageError(f"{what}: file not found: {err.filename or err}", hint="check the dataset path in --env-args")
    if isinstance(err, MemoryError):
        from vlab.env.instrument import memory_limit

        return ToolError(
            f"{what} ran out of memory: over the worker's memory limit ({memory_limit()})",
            hint="load less (a split, a row limit in --env-args), or raise VLAB_WORKER_MEMORY_MB (0: no cap)",
        )
    if isinstance(err, (ValueError,)) and "validation error" in lowered:
        return UsageError(
            f"{what}: bad --env-args: {str(err).splitlines()[0]}", hint="\n".join(str(err).splitlines()[:4])
        )
    return ToolError(
        f"{what} raised {text[:400]}", hint="fix the environment's loading code (re-run with --debug for the traceback)"
    )


def _example_value(name: str) -> str:
    """A JSON value for an --env-args example: a data file of the current folder for a dataset path."""
    if "path" in name or "file" in name:
        found = sorted(p for p in Path("data").glob("*") if p.suffix in (".jsonl", ".json", ".csv", ".parquet"))
        train = [p for p in found if "train" in p.name]
        return f'"{(train or found)[0].as_posix()}"' if found else '"data/train.jsonl"'
    return '"..."'


def data_file_damage(env_args: dict) -> UsageError | None:
    """A local data file named in --env-args that is cut short or corrupt: bad input (exit 2) naming
    the file and where it ends, not a fault of the environment's loading code."""
    for key, value in env_args.items():
        if not isinstance(value, str) or not value or len(value) > 4096 or "\n" in value:
            continue
        try:
            found = damage(value)
        except (OSError, ValueError):
            continue
        if found is not None:
            return UsageError(f"--env-args {key}: {found.message}", hint=found.hint)
    return None


def data_places(module) -> tuple[Path, ...]:
    """Where an environment's loader also looks for a relative data path: its package folder, and the templates'
    ``data/`` and ``<module>_data/`` (installed from a wheel) beside the module."""
    file = getattr(module, "__file__", None)
    if not file:
        return ()
    here = Path(file).resolve().parent
    return (here, here / "data", here / f"{module.__name__.split('.')[-1]}_data")


def _found(value: str, places: tuple[Path, ...]) -> Path | None:
    """Where ``value`` exists: from the current folder, else in one of ``places`` (a leading ``data/`` dropped
    there too, as the templates' ``data_file`` does)."""
    given = Path(value).expanduser()
    inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
    candidates = [given] + ([] if given.is_absolute() else [p / q for p in places for q in (given, inside)])
    return next((c for c in candidates if c.exists()), None)


def _error_text(err: BaseException) -> str:
    """The error and the errors it was raised from (a loader wraps the FileNotFoundError it met)."""
    parts, seen = [], set()
    while err is not None and id(err) not in seen and len(parts) < 5:
        seen.add(id(err))
        parts.append(f"{type(err).__name__}: {err}")
        err = err.__cause__ or err.__context__
    return "\n".join(parts)


def data_path_problem(env_args: dict, err: BaseException, places: tuple[Path, ...] = ()) -> UsageError | None:
    """A load error whose cause is a data path in --env-args, as bad input (exit 2): the error (or one it was
    raised from) names a path written like a local one (``core.files.looks_local``) that exists neither from the
    current folder nor where the environment looks, which a loader may have sent to the Hub instead; or a folder
    where the loader wanted a file (a loader that reads folders never fails on one). An error that names no such
    path (an output folder to be made, the network on a Hub dataset) is classify_load_error's."""
    text = _error_text(err)
    names = {t.__name__ for e in (err, err.__cause__, err.__context__) if e is not None for t in type(e).__mro__}
    for key, value in env_args.items():
        if not isinstance(value, str) or not _DATA_ARG.search(key) or not looks_local(value, *places):
            continue
        found = _found(value, places)
        spelled = {value, str(Path(value).expanduser().resolve())} | ({str(found.resolve())} if found else set())
        named = any(s in text for s in spelled)
        if found is None and named:
            return missing_path(
                value,
                f"--env-args {key}: no such file or folder",
                hint="check the path from the current folder (the templates also look in the environment's data/ "
                "folder); a Hugging Face Hub dataset is named owner/name",
            )
        if found is not None and found.is_dir() and (named or "IsADirectoryError" in names):
            files = data_files_in(Path(value).expanduser() if Path(value).expanduser().is_dir() else found)
            example = json.dumps({key: files[0]}) if files else None
            return UsageError(
                f"--env-args {key} is a folder ({value}), where the environment's loader reads a file"
                + (f"; data files in it: {', '.join(files)}" if files else "; it holds no data files"),
                hint=f"name one file: --env-args '{example}'"
                if example
                else "name a .jsonl/.json/.csv/.parquet file (the loader does not read folders)",
            )
    # the loader refused a value it quotes: bad input, in its own words (pydantic's are classify_load_error's)
    if isinstance(err, ValueError) and "validation error" not in str(err).lower():
        quoted = next(
            (k for k, v in env_args.items() if isinstance(v, str) and len(v) > 1 and repr(v) in str(err)), None
        )
        if quoted is not None:
            return UsageError(
                f"the environment refused --env-args {quoted}: {str(err).splitlines()[0][:300]}",
                hint=f"change --env-args {quoted} to what the message asks for",
            )
    return None


def _classifier(env_args: dict, module=None):
    places = data_places(module)

    def classify(err: BaseException, what: str) -> ToolError:
        return data_file_damage(env_args) or data_path_problem(env_args, err, places) or classify_load_error(err, what)

    return classify


def load_env(spec: str, env_args: dict | None = None) -> Environment:
    """Load a classic environment or a v1 taskset from a file, folder or installed id."""
    env_args = dict(env_args or {})
    info = verifiers_info()
    if info.version is None:
        raise PrerequisiteError("verifiers is not installed", hint=install_for(spec))
    located = locate(spec)
    if located.search_path and located.search_path not in sys.path:
        sys.path.insert(0, located.search_path)
    if located.search_path:  # a stale module of the same name must not shadow the file asked for
        sys.modules.pop(located.module_name, None)
    if located.search_path is None and importlib.util.find_spec(located.module_name) is None:
        hint = (
            f"prime env install {spec}"
            if "/" in spec
            else f"pip install the environment package, or pass its path (e.g. environments/{located.module_name}/)"
        )
        raise UsageError(f"environment {spec!r} is not installed (no module {located.module_name!r})", hint=hint)
    quiet_verifiers_logs()
    source = source_text(located)
    new_only = version_tuple(info.version) >= (0, 4) or not info.classic
    if new_only and looks_classic(source):
        raise PrerequisiteError(
            f"{spec} is a classic environment (load_environment); verifiers {info.version} only has the v1 API",
            hint=CLASSIC_INSTALL,
        )
    try:
        module = importlib.import_module(located.module_name)
    except BaseException as err:  # noqa: BLE001 - import-time errors of user code, classified
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        if new_only and isinstance(err, (AttributeError, ImportError)) and "verifiers" in str(err):
            raise PrerequisiteError(
                f"{spec} uses the classic verifiers API, which verifiers {info.version} removed ({err})",
                hint=CLASSIC_INSTALL,
            ) from err
        raise classify_import_error(err, located, spec, info.version) from err
    if callable(getattr(module, "load_environment", None)):
        if new_only:
            raise PrerequisiteError(
                f"{spec} is a classic environment (load_environment); verifiers {info.version} only has the v1 API",
                hint=CLASSIC_INSTALL,
            )
        return ClassicEnvironment.load(module, spec, env_args, info.version, _classifier(env_args, module))
    if getattr(module, "__all__", None) is not None:
        if not info.v1:
            raise PrerequisiteError(
                f"{spec} is a v1 taskset; verifiers {info.version} has no verifiers.v1", hint=V1_INSTALL
            )
        return V1Environment.load(module, spec, env_args, info.version, _classifier(env_args, module))
    raise UsageError(
        f"{spec} is neither a classic environment (no load_environment) nor a v1 taskset (no __all__)",
        hint="a classic env defines load_environment(**kwargs); a v1 taskset exports its vf.Taskset subclass in __all__",
    )


def quiet_verifiers_logs() -> None:
    # The classic Rubric logs every swallowed exception; we capture and report them ourselves.
    if not os.environ.get("VLAB_DEBUG"):
        for name in ("verifiers", "datasets", "httpx"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # read when datasets is imported
        if "datasets" in sys.modules:
            with contextlib.suppress(Exception):
                sys.modules["datasets"].disable_progress_bars()
