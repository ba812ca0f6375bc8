"""Command-line conventions shared by every script.

``run()`` turns a tool function into a command that keeps the contract in
``references/script-contract.md``: ``--help``; ``--json`` prints exactly one JSON
object on stdout; human output (rich) otherwise; diagnostics on stderr; the
documented exit codes; never a traceback; never a prompt without a terminal;
never a secret.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from vlab.core import invocation
from vlab.core.console import Renderer, log, render_human
from vlab.core.files import WRITE_ERRNOS, write_fault
from vlab.core.guard import missing_dependency
from vlab.core.output import json_safe, to_json  # noqa: F401  (to_json: the scripts' and tests' import)
from vlab.core.result import EXIT_FAIL, EXIT_INTERRUPTED, EXIT_TERMINATED, Result, Terminated, ToolError, UsageError

EXIT_CODES_HELP = """\
exit codes:
  0    all checks passed (warnings allowed; --strict turns warnings into failures)
  1    checks ran and found problems you must fix
  2    usage error or bad input (missing, unreadable or malformed file, bad argument)
  3    a prerequisite is missing (package, CLI, login, GPU)
  4    an external service failed (network, hub, API, timeout)
  130  interrupted (Ctrl-C); 143: terminated (SIGTERM)
"""


class StoreOnce(argparse.Action):
    """A single-valued option that refuses to be given twice (plain argparse keeps the last value silently)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[override]
        if not self.option_strings:  # a positional is given once by construction
            setattr(namespace, self.dest, values)
            return
        seen = namespace.__dict__.setdefault("_vlab_given", set())
        if self.dest in seen:
            flags = "/".join(self.option_strings)
            parser.error(
                f"{flags} was given more than once; it takes one value "
                "(repeat only options whose --help says they can be repeated)"
            )
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad arguments as a UsageError (exit 2) in our result shape.

    Every optional that stores one value uses ``StoreOnce``: ``--x 1 --x 2`` is an error (exit 2),
    never a silent "2". Options meant to be repeated say so with ``action="append"``.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # The default action, in this parser and its argument groups (they share the registry).
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extra = super().parse_known_args(args, namespace)
        parsed.__dict__.pop("_vlab_given", None)
        return parsed, extra

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message}", hint=f"run `{self.prog} --help` for usage")


def make_parser(prog: str, description: str, epilog: str = "") -> ArgumentParser:
    """The tool's parser; usage and error hints name the command as the user ran it (script path or vlab-*).

    In the description and epilog, ``%(prog)s`` is this tool's command, ``%(NAME)s`` another tool's
    (``%(inspect_dataset)s``) and ``%(templates)s`` the templates folder, each as the user types it.
    """
    names = invocation.Names(prog)
    parser = ArgumentParser(
        prog=names["prog"],
        description=description % names if "%(" in description else description,
        epilog=(epilog % names if "%(" in epilog else epilog).rstrip() + "\n\n" + EXIT_CODES_HELP
        if epilog
        else EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--json", action="store_true", help="print exactly one JSON result object on stdout")
    parser.add_argument("--strict", action="store_true", help="treat warnings as failures (exit 1)")
    parser.add_argument("--debug", action="store_true", help="print tracebacks of internal errors on stderr")
    return parser


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
    except ModuleNotFoundError as err:  # a dependency imported inside the tool: exit 3 and its install command
        result.error = missing_dependency(err)
    except KeyboardInterrupt as err:  # Ctrl-C, or SIGTERM (Terminated): the partial result, exit 130 / 143
        result.interrupted = True
        result.terminated = isinstance(err, Terminated)
        print(f"{tool}: {'terminated (SIGTERM)' if result.terminated else 'interrupted'}", file=sys.stderr, flush=True)
    except SystemExit:  # --help / --version: argparse already printed
        raise
    except (PermissionError, IsADirectoryError, UnicodeDecodeError, RecursionError) as err:
        if debug:
            traceback.print_exc(file=sys.stderr)
        result.error = input_fault(err)
    except OSError as err:  # a full disk or a read-only folder under a write no helper wrapped
        if err.errno not in WRITE_ERRNOS:
            raise_internal(result, err, debug)
        else:
            result.error = write_fault(err)
    except Exception as err:  # never a traceback as the user-facing output
        raise_internal(result, err, debug)
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


Request = TypeVar("Request")


def run_request(
    tool: str,
    parser: ArgumentParser,
    request: Callable[[argparse.Namespace], Request],
    entry: Callable[[Request, Result], Any],
    render: Callable[[Result, Any, Request, Any], None] | None = None,
    argv: list[str] | None = None,
) -> int:
    """The wiring of every script: argv -> ``request(args)`` -> ``entry(request, result)`` -> ``render``.

    ``request`` turns the parsed Namespace into the library's frozen request dataclass (whose
    constructor rejects bad values with a UsageError); the Namespace goes no further.
    ``render(result, console, request, outcome)`` draws the tool's figures above the checks in human
    output; ``outcome`` is what ``entry`` returned (a typed report, or None).
    """
    made: list[Request] = []
    outcome: list[Any] = []

    def execute(args: argparse.Namespace, result: Result) -> None:
        made.append(request(args))
        outcome.append(entry(made[0], result))

    def show(result: Result, console: Any) -> None:
        if render is not None and made:
            render(result, console, made[0], outcome[0] if outcome else None)

    return run(tool, parser, execute, show if render is not None else None, argv=argv)


def raise_internal(result: Result, err: BaseException, debug: bool) -> None:
    """An unexpected error: one line, exit 1, the traceback only with --debug."""
    if debug:
        traceback.print_exc(file=sys.stderr)
    result.error = ToolError(
        f"internal error: {type(err).__name__}: {err}",
        hint="re-run with --debug for the traceback, and report it",
        exit_code=EXIT_FAIL,
    )


def input_fault(err: BaseException) -> ToolError:
    """A file fault no reader classified: exit 2 with the place, never an internal error."""
    if isinstance(err, UnicodeDecodeError):
        return UsageError(f"input is not UTF-8 (byte {err.start}: {err.object[err.start : err.start + 1]!r})")
    if isinstance(err, RecursionError):
        return UsageError("input is nested too deeply to read (a JSON value thousands of levels deep)")
    return UsageError(f"cannot read {err.filename}: {err.strerror}", hint="check the path and its permissions")


def main_guard(fn: Callable[[], int]) -> None:
    """Entry-point wrapper: exit with the tool's code."""
    try:
        code = fn()
    except KeyboardInterrupt as err:
        code = EXIT_TERMINATED if isinstance(err, Terminated) else EXIT_INTERRUPTED
    sys.exit(code)
