"""Environment arguments for local_train: `--env-arg a.b=1` (dotted keys nest), and a check of
the names against what the environment accepts: a v1 taskset's typed config (its pydantic
fields, `vf.taskset_config_type`), a classic environment's `load_environment` signature.

An unknown name is refused with a "did you mean" (a typo must not fall back to a default).
The check imports the environment module here (no rows are loaded); when it cannot be
imported on this machine (a prime-rl hand-off written for another), it says so and skips.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any

from vlab.core.result import UsageError
from vlab.hosted.builder import parse_env_arg


def parse_dotted_arg(text: str) -> tuple[list[str], Any]:
    """`a.b=1` -> (["a", "b"], 1); the value is a TOML literal when it parses, else a string."""
    key, sep, raw = text.partition("=")
    parts = key.strip().split(".")
    if not sep or not all(p.isidentifier() for p in parts):
        raise UsageError(f"bad --env-arg {text!r}: expected key=value", hint="e.g. --env-arg max_turns=5 or task.k=2")
    _, value = parse_env_arg(f"{parts[-1]}={raw}")
    return parts, value


@dataclass
class Accepted:
    kind: str  # "v1 taskset config <Name>" | "load_environment"
    names: set[str] | None  # None: anything goes (**kwargs)


def _import(spec: str):
    """(module, its name) of the environment at `spec`; raises when it cannot be imported here."""
    from vlab.env.spec import locate

    located = locate(spec)
    if located.search_path and located.search_path not in sys.path:
        sys.path.insert(0, located.search_path)
    with contextlib.redirect_stdout(sys.stderr):  # a print at import time must not break --json
        return importlib.import_module(located.module_name), located.module_name


def accepted_args(spec: str) -> Accepted:
    """What the environment at `spec` accepts; raises ImportError/UsageError when it cannot be imported here."""
    module, module_name = _import(spec)
    load = getattr(module, "load_environment", None)
    if callable(load):
        params = inspect.signature(load).parameters.values()
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return Accepted("load_environment(**kwargs)", None)
        return Accepted("load_environment", {p.name for p in params})
    import verifiers.v1 as vf

    config = vf.taskset_config_type(module_name)
    if config.model_config.get("extra") == "allow":
        return Accepted(f"taskset config {config.__name__}", None)
    return Accepted(f"taskset config {config.__name__}", set(config.model_fields) - {"id"})


def check_env_args(spec: str, args: dict[str, Any], flag: str = "--env-arg") -> str:
    """UsageError for an argument the environment does not take; else a line saying what was checked."""
    if not args:
        return f"{spec}: no arguments to check"
    try:
        accepted = accepted_args(spec)
    except UsageError:
        raise
    except (Exception, SystemExit) as err:  # noqa: BLE001 - user code at import time: only the check is skipped
        return f"{spec}: arguments not checked (the module does not import here: {type(err).__name__}: {err})"
    if accepted.names is None:
        return f"{spec}: {accepted.kind} takes any argument"
    unknown = [k for k in args if k not in accepted.names]
    if unknown:
        parts = []
        for k in unknown:
            close = difflib.get_close_matches(k, sorted(accepted.names), n=1, cutoff=0.6)
            parts.append(f"'{k}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
        raise UsageError(
            f"{spec} does not take {', '.join(parts)} ({flag}; checked against its {accepted.kind})",
            hint="it takes: " + (", ".join(sorted(accepted.names)) or "no arguments"),
        )
    return f"{spec}: arguments {', '.join(sorted(args))} match its {accepted.kind}"


def declared_turn_limit(spec: str) -> int | None:
    """The environment's own turn limit, for a run that names no ``max_turns``, read without loading rows:
    a classic ``load_environment``'s ``max_turns`` default, a v1 taskset config's ``task.max_turns``
    default. None when it declares none or cannot be imported here (a hand-off written for another machine)."""
    try:
        module, module_name = _import(spec)
        load = getattr(module, "load_environment", None)
        if callable(load):
            param = inspect.signature(load).parameters.get("max_turns")
            value = None if param is None else param.default
        else:
            import verifiers.v1 as vf

            task = vf.taskset_config_type(module_name).model_fields.get("task")
            value = getattr(task.default if task is not None else None, "max_turns", None)
    except (Exception, SystemExit):  # noqa: BLE001 - user code at import time: the budget check is skipped
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
