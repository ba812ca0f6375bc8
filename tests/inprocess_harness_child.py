"""Run one candidate program against its tests, in this process, and report on a private channel.

Started by the environment as ``python -I <this file> FD`` in a fresh process group, a
scratch folder as its working directory and a minimal environment (no API keys). It reads
one JSON job on stdin ({"nonce", "program", "spec", "limits"}), then, before any candidate
code runs: caps memory, CPU time, file size, open files and (for a non-root user) new
processes with resource.setrlimit; enters a network namespace of its own when the OS allows
it (otherwise disables the socket module); closes stdin and points stdout/stderr at
/dev/null; turns a fork into an immediate exit of the child; and keeps private references to
everything it needs. The tests run after the candidate's code: their comparisons are made
strict (only plain values such as numbers, strings, lists, tuples, dicts and sets compare,
so an object whose __eq__ always says True, or an int subclass, never passes) and they see
a copy of the builtins taken before the candidate ran. The verdict is written to file
descriptor FD as one JSON line carrying the nonce, AFTER the tests ran, and the process
then ends with os._exit (no atexit handler runs after it). Exit codes and printed output
are never read by the environment.

This is isolation against accidents and common reward hacks (sys.exit(0), os._exit(0),
SystemExit, atexit, always-equal objects, int subclasses, patched builtins or unittest,
reading the tests from disk, sleeping forever, unbounded memory, forking), not a security
sandbox: code running in this process can still inspect the harness's own memory (frames,
gc) and, run as root, is not stopped from writing files the user can write. For hostile
code use a hosted sandbox (verifiers v1 sandbox runtimes / Prime sandboxes).
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import os
import resource
import sys

_PLAIN = (int, float, complex, bool, str, bytes, type(None))
_CONTAINERS = (list, tuple, dict, set, frozenset)
_CANDIDATE = "candidate"  # the module name the candidate's code runs under
_forked: list[int] = []


def _children() -> bool:
    """This process has child processes (seen in /proc where it exists): the program spawned one."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children") as f:
                if f.read().strip():
                    return True
        except OSError:
            continue
    return False


def _trusted_types() -> tuple[type, ...]:
    """Stdlib value types compared as they are (their __eq__ is not the candidate's)."""
    import collections
    import decimal
    import fractions

    return (fractions.Fraction, decimal.Decimal, collections.OrderedDict, collections.deque)


def _plain(value, trusted, depth: int = 0) -> bool:
    """A value whose comparisons the candidate cannot have rewritten."""
    kind = type(value)
    if kind in _PLAIN or kind in trusted:
        return True
    if depth > 50 or kind not in _CONTAINERS:
        return False
    if kind is dict:
        return all(_plain(k, trusted, depth + 1) and _plain(v, trusted, depth + 1) for k, v in value.items())
    return all(_plain(v, trusted, depth + 1) for v in value)


def _strict_helpers(trusted):
    """The functions the rewritten tests call: a comparison and a truth test on plain values only."""
    import operator

    ops = {
        "Eq": operator.eq,
        "NotEq": operator.ne,
        "Lt": operator.lt,
        "LtE": operator.le,
        "Gt": operator.gt,
        "GtE": operator.ge,
        "In": lambda a, b: a in b,
        "NotIn": lambda a, b: a not in b,
        "Is": operator.is_,
        "IsNot": operator.is_not,
    }

    def compare(left, names, right_thunks):
        for name, thunk in zip(names, right_thunks):
            right = thunk()
            if name not in ("Is", "IsNot") and not (_plain(left, trusted) and _plain(right, trusted)):
                return False
            if not ops[name](left, right):
                return False
            left = right
        return True

    def truth(value):
        return bool(value) if _plain(value, trusted) else False

    return compare, truth


class _Strict(ast.NodeTransformer):
    """Comparisons become __vlab_cmp__(...) calls; an assert's condition goes through __vlab_truth__."""

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        names = ast.Tuple([ast.Constant(type(op).__name__) for op in node.ops], ast.Load())
        thunks = ast.Tuple(
            [ast.Lambda(ast.arguments([], [], None, [], [], None, []), c) for c in node.comparators], ast.Load()
        )
        call = ast.Call(ast.Name("__vlab_cmp__", ast.Load()), [node.left, names, thunks], [])
        return ast.copy_location(call, node)

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        self.generic_visit(node)
        node.test = ast.copy_location(ast.Call(ast.Name("__vlab_truth__", ast.Load()), [node.test], []), node.test)
        return node


def _limits(limits: dict) -> None:
    memory = int(limits.get("memory_mb", 1024)) << 20
    seconds = int(limits.get("cpu_seconds", 10))
    for limit, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, seconds),
        (resource.RLIMIT_FSIZE, 16 << 20),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 256),
    ):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass
    if os.geteuid() != 0:  # root ignores RLIMIT_NPROC; the fork hook below still holds
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        except (ValueError, OSError):
            pass


def _no_network() -> str:
    """A network namespace with no interfaces up, where the OS allows one; else a disabled socket module."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        for flags in (0x40000000, 0x40000000 | 0x10000000):  # CLONE_NEWNET, then with CLONE_NEWUSER
            if libc.unshare(flags) == 0:
                return "namespace"
    except (OSError, AttributeError):
        pass
    import socket

    def refused(*args, **kwargs):
        raise OSError("network access is disabled for this program")

    for name in ("socket", "create_connection", "getaddrinfo", "socketpair", "fromfd"):
        setattr(socket, name, refused)
    return "socket module disabled"


def _run_call(program: str, spec: dict, safe_builtins: dict, trusted) -> tuple[bool, str]:
    """Define the candidate's code, then run the tests (asserts, or a check(candidate) function) against it."""
    candidate = {"__name__": _CANDIDATE, "__builtins__": builtins}
    exec(compile(program, "<candidate>", "exec"), candidate)
    tests = spec.get("tests") or ""
    if isinstance(tests, list):
        tests = "\n".join(str(t) for t in tests)
    tree = ast.fix_missing_locations(_Strict().visit(ast.parse(tests, "<tests>")))
    compare, truth = _strict_helpers(trusted)
    names = {k: v for k, v in candidate.items() if not k.startswith("__")}
    scope = {"__name__": "__vlab_tests__", "__builtins__": dict(safe_builtins), **names}
    scope.update({"__vlab_cmp__": compare, "__vlab_truth__": truth})
    if spec.get("setup"):
        exec(compile(str(spec["setup"]), "<setup>", "exec"), scope)
    exec(compile(tree, "<tests>", "exec"), scope)
    entry = spec.get("entry_point")
    if callable(scope.get("check")) and entry:
        if entry not in candidate:
            return False, f"the program defines no {entry}"
        scope["check"](candidate[entry])
    return True, ""


def _same_output(got: str, want: str) -> bool:
    return got.split() == str(want).split()


def _run_io(program: str, spec: dict) -> tuple[bool, str]:
    """Run the program once per case with the case's input on stdin; its stdout must match the output."""
    code = compile(program, "<candidate>", "exec")
    saved = sys.stdin, sys.stdout
    for n, case in enumerate(spec.get("cases") or []):
        out = io.StringIO()
        sys.stdin, sys.stdout = io.StringIO(str(case.get("input", ""))), out
        try:
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as stop:
            if stop.code not in (None, 0):
                return False, f"case {n}: exit status {stop.code}"
        finally:
            sys.stdin, sys.stdout = saved
        if not _same_output(out.getvalue(), case.get("output", "")):
            return False, f"case {n}: wrong output"
    return True, ""


def main() -> None:
    channel = int(sys.argv[1])
    write, exit_now, dumps = os.write, os._exit, json.dumps
    job = json.loads(sys.stdin.buffer.read())
    nonce = job.pop("nonce")
    _limits(job.get("limits") or {})
    network = _no_network()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(), io.StringIO(), io.StringIO()
    sys.argv = [_CANDIDATE]
    os.register_at_fork(after_in_child=lambda: exit_now(1), after_in_parent=lambda: _forked.append(1))
    spec, program = job.get("spec") or {}, job.get("program") or ""
    if "unittest" in json.dumps(spec):
        import unittest  # noqa: F401 - imported before the candidate runs, so a patch of it shows below
    trusted = _trusted_types()
    safe_builtins = dict(builtins.__dict__)
    watched = {name: dict(vars(sys.modules[name])) for name in ("builtins", "unittest.case") if name in sys.modules}
    case_class = sys.modules["unittest.case"].TestCase if "unittest.case" in sys.modules else None
    methods = dict(vars(case_class)) if case_class is not None else {}
    passed, reason = False, ""
    try:
        if spec.get("mode") == "io":
            passed, reason = _run_io(program, spec)
        else:
            passed, reason = _run_call(program, spec, safe_builtins, trusted)
    except BaseException as err:  # noqa: BLE001 - SystemExit and KeyboardInterrupt from the candidate too
        passed, reason = False, f"{type(err).__name__}: {str(err)[:200]}"
    tampered = [
        name
        for name, before in watched.items()
        if any(vars(sys.modules[name]).get(k, k) is not v for k, v in before.items())
    ]
    if case_class is not None and any(vars(case_class).get(k, k) is not v for k, v in methods.items()):
        tampered.append("unittest.TestCase")
    if tampered:
        passed, reason = False, "the program changed " + ", ".join(tampered)
    if _forked or _children():
        passed, reason = False, "the program started another process"
    record = {"nonce": nonce, "passed": bool(passed), "reason": reason, "network": network}
    write(channel, (dumps(record) + "\n").encode())
    exit_now(0)


if __name__ == "__main__":
    main()
