"""The dependency guard: every script imports this first, before anything that needs a third-party package.

A package missing at import time would otherwise end the script with a raw
``ModuleNotFoundError`` traceback and exit 1. Importing this module installs a
``sys.excepthook`` that turns it into the contract's answer instead: exit 3, a one-line
reason, and the exact install command for how the pack was installed (``vlab.core.invocation``);
with ``--json``, still exactly one result object on stdout. A Ctrl-C that lands before the
tool's own handling (while the script's imports run) gets the same treatment: exit 130, one
line on stderr, and with ``--json`` one object with status ``interrupted``. ``cli.run`` sends a
``ModuleNotFoundError`` raised later, inside a tool, through the same ``missing_dependency``.

Standard library only, like everything it imports: it must work when every dependency is missing.
"""

from __future__ import annotations

import sys

from vlab.core import invocation
from vlab.core.result import EXIT_INTERRUPTED, EXIT_PREREQ, EXIT_TERMINATED, PrerequisiteError, Result, Terminated


def missing_dependency(err: ModuleNotFoundError) -> PrerequisiteError:
    """The exit-3 error for a module that could not be imported, with its install command as the hint."""
    module = err.name or "?"
    return PrerequisiteError(
        f"`{module}` is not installed in this Python ({sys.executable})",
        hint=invocation.install_for_module(module),
    )


def _report(err: ModuleNotFoundError) -> int:
    result = Result(invocation.tool_name(sys.argv[0] or "vlab"))
    result.error = missing_dependency(err)
    argv = sys.argv[1:]
    try:  # the normal renderers, when what they need is importable
        from vlab.core.console import render_human
        from vlab.core.output import to_json

        if "--json" in argv:
            sys.stdout.write(to_json(result, "--strict" in argv) + "\n")
        else:
            render_human(result)
    except Exception:  # noqa: BLE001 - the reason must reach the user whatever else is broken
        out = result.to_dict()
        print(f"{out['tool']}: ERROR (exit {EXIT_PREREQ}) - {out['summary']}\n  next: {out['next_steps'][0]}")
    sys.stdout.flush()
    return EXIT_PREREQ


_previous_hook = sys.excepthook


def _interrupted(terminated: bool = False) -> int:
    """Ctrl-C (or SIGTERM) before the tool's own handling (during imports): one line, and the JSON
    object with --json."""
    tool = invocation.tool_name(sys.argv[0] or "vlab")
    print(f"{tool}: {'terminated (SIGTERM)' if terminated else 'interrupted'}", file=sys.stderr, flush=True)
    if "--json" in sys.argv[1:]:
        result = Result(tool)
        result.interrupted = True
        result.terminated = terminated
        try:
            from vlab.core.output import to_json

            sys.stdout.write(to_json(result) + "\n")
        except BaseException:  # noqa: BLE001 - the JSON must come out whatever else is half-imported
            import json

            sys.stdout.write(json.dumps(result.to_dict()) + "\n")
        sys.stdout.flush()
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


def _hook(exc_type, exc, tb) -> None:
    if issubclass(exc_type, KeyboardInterrupt):
        import os

        os._exit(_interrupted(issubclass(exc_type, Terminated)))  # also skips the traceback and SIGINT re-raise
    if issubclass(exc_type, ModuleNotFoundError) and not (exc.name or "").startswith("vlab"):
        raise SystemExit(_report(exc))
    _previous_hook(exc_type, exc, tb)


def _on_sigterm(signum, frame) -> None:
    raise Terminated()


def _tolerant_streams() -> None:
    """Under LANG=C without Python's UTF-8 mode stdout is ASCII: a dataset's "café" in a human report
    must not end the run with UnicodeEncodeError (the JSON output escapes it instead, see cli.to_json)."""
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding != "utf8" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass


_tolerant_streams()
sys.excepthook = _hook
try:  # SIGTERM (a job scheduler, `timeout`, `kill`) ends a run as Ctrl-C does: partial result, exit 143
    import signal

    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
except (ValueError, OSError):  # not the main thread: the default action stays
    pass
