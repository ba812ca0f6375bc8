"""Command-line conventions shared by every script.

``run()`` turns a tool function into a command that keeps the contract in
``references/script-contract.md``: ``--help``; ``--json`` prints exactly one JSON
object on stdout; human output (rich) otherwise; diagnostics on stderr; the
documented exit codes; never a traceback; never a prompt without a terminal;
never a secret.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import traceback
from typing import Any, Callable

from .result import EXIT_FAIL, Result, ToolError, UsageError
from .secrets import redact

EXIT_CODES_HELP = """\
exit codes:
  0    all checks passed (warnings allowed; --strict turns warnings into failures)
  1    checks ran and found problems you must fix
  2    usage error or bad input (missing, unreadable or malformed file, bad argument)
  3    a prerequisite is missing (package, CLI, login, GPU)
  4    an external service failed (network, hub, API, timeout)
  130  interrupted
"""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad arguments as a UsageError (exit 2) in our result shape."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}", hint=f"run `{self.prog} --help` for usage")


def make_parser(prog: str, description: str, epilog: str = "") -> ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description=description,
        epilog=(epilog.rstrip() + "\n\n" if epilog else "") + EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON result object on stdout")
    parser.add_argument("--strict", action="store_true", help="treat warnings as failures (exit 1)")
    parser.add_argument("--debug", action="store_true", help="print tracebacks of internal errors on stderr")
    return parser


# -- diagnostics --------------------------------------------------------------


def log(message: str) -> None:
    """A diagnostic line on stderr (never stdout), secrets masked."""
    print(redact(message), file=sys.stderr, flush=True)


def interactive() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def confirm(question: str) -> bool:
    """Ask on a terminal; without one, never prompt and answer no."""
    if not interactive():
        log(f"{question} -> no (stdin is not a terminal; pass --yes to confirm)")
        return False
    print(redact(question) + " [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = sys.stdin.readline().strip().lower()
    except (EOFError, KeyboardInterrupt):
        return False
    return answer in ("y", "yes")


# -- output -------------------------------------------------------------------


def json_safe(obj: Any) -> Any:
    """Make an object strictly JSON-serialisable: NaN/inf become None, tuples lists."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set)):
        return [json_safe(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, bool)):
        return obj
    try:  # numpy scalars and the like
        return json_safe(obj.item())
    except Exception:
        return str(obj)


def to_json(result: Result, strict: bool = False) -> str:
    return redact(json.dumps(json_safe(result.to_dict(strict)), ensure_ascii=False, allow_nan=False))


_STATUS_STYLE = {"pass": ("✓", "green"), "warn": ("!", "yellow"), "fail": ("✗", "red"), "skip": ("-", "dim")}
_RESULT_STYLE = {"pass": "green", "fail": "red", "error": "red"}

Renderer = Callable[[Result, Any], None]


class _RedactingStream(io.TextIOBase):
    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()


def console(stream=None):
    """A rich Console on ``stream`` (stdout by default) that masks secrets, or None without rich."""
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(file=_RedactingStream(stream or sys.stdout), highlight=False, soft_wrap=False)


def render_human(result: Result, strict: bool = False, render: Renderer | None = None) -> None:
    out = result.to_dict(strict)
    con = console()
    if con is None:  # rich missing: plain text, so preflight can still say so
        w = lambda s="": print(redact(s))  # noqa: E731
        if render is not None:
            render(result, None)
        for c in out["checks"]:
            w(f"[{c['status']}] {c['id']}: {c['message']}" + (f"\n       hint: {c['hint']}" if c["hint"] and c["status"] != "pass" else ""))
        w(f"{out['tool']}: {out['status'].upper()} (exit {out['exit_code']}) - {out['summary']}")
        for s in out["next_steps"]:
            w(f"  next: {s}")
        return
    from rich.markup import escape
    from rich.table import Table

    if render is not None:
        render(result, con)
    if out["checks"]:
        table = Table(show_header=False, box=None, pad_edge=False)
        table.add_column(width=1)
        table.add_column(style="bold")
        table.add_column()
        for c in out["checks"]:
            sym, style = _STATUS_STYLE[c["status"]]
            msg = escape(c["message"])
            if c["hint"] and c["status"] != "pass":
                msg += f"\n[dim]hint: {escape(c['hint'])}[/dim]"
            table.add_row(f"[{style}]{sym}[/{style}]", escape(c["id"]), msg)
        con.print(table)
    style = _RESULT_STYLE[out["status"]]
    con.print(
        f"[bold {style}]{escape(out['tool'])}: {out['status'].upper()}[/bold {style}] "
        f"(exit {out['exit_code']}) {escape(out['summary'])}"
    )
    for s in out["next_steps"]:
        con.print(f"  [cyan]→[/cyan] {escape(s)}")


# -- the runner ---------------------------------------------------------------


def run(
    tool: str,
    parser: ArgumentParser,
    execute: Callable[[argparse.Namespace, Result], None],
    render: Renderer | None = None,
    argv: list[str] | None = None,
) -> int:
    """Parse arguments, run ``execute(args, result)``, print the result, return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    result = Result(tool)
    want_json = "--json" in argv
    strict = "--strict" in argv
    debug = "--debug" in argv or bool(os.environ.get("VLAB_DEBUG"))
    try:
        args = parser.parse_args(argv)
        want_json, strict = args.json, args.strict
        execute(args, result)
    except ToolError as err:
        result.error = err
    except KeyboardInterrupt:
        result.interrupted = True
    except SystemExit:  # --help / --version: argparse already printed
        raise
    except Exception as err:  # never a traceback as the user-facing output
        if debug:
            traceback.print_exc(file=sys.stderr)
        result.error = ToolError(
            f"internal error: {type(err).__name__}: {err}",
            hint="re-run with --debug for the traceback, and report it",
            exit_code=EXIT_FAIL,
        )
    if want_json:
        sys.stdout.write(to_json(result, strict) + "\n")
        sys.stdout.flush()
    else:
        try:
            render_human(result, strict, render if result.error is None else None)
        except Exception as err:  # a broken renderer must not hide the verdict
            log(f"could not render the result ({err}); JSON follows")
            sys.stdout.write(to_json(result, strict) + "\n")
    return result.exit_code(strict)


def main_guard(fn: Callable[[], int]) -> None:
    """Entry-point wrapper: exit with the tool's code."""
    try:
        code = fn()
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
