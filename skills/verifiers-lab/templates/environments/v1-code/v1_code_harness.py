"""Score a candidate program against its tests: the tests run HERE, the candidate's code in a child.

Two roles in one file (kept in one module so both sides share the plain-data codec):

* imported by the environment (the trusted scorer): ``score(program, spec, timeout, memory_mb)``
  runs the row's tests in this process, with the prompt's helper functions and this process's
  standard library, against a PROXY for each function the candidate defines. A call of the
  proxy sends its arguments (plain data) to a child process and returns what the child sends
  back, decoded here into plain values. The verdict, the tests and the expected values never
  leave this process, so no code in the child can write, read or patch them. stdin/stdout
  problems ("io" mode) work the same way: the child runs the program on one input and returns
  its output; the comparison is made here.
* run as ``python -I <this file> --child PARENT_PID SCRATCH`` (by ``score``, ahead of time: a pool of
  warm children, one per concurrent rollout): a supervisor that waits for one job, then forks
  the runner that executes the candidate's code under limits (CPU time, address space, file
  size, open files, core dumps, and for a non-root user processes), in a network and PID
  namespace of its own where the OS allows it (else the socket module is disabled), with a
  scratch folder as working directory and no API keys in its environment. The runner dies
  with the supervisor; in a PID namespace every process the candidate starts dies with the
  runner. The supervisor dies with the scorer (PR_SET_PDEATHSIG): on the way out it kills the
  runner's process group and removes the scratch folder.

Plain data (what crosses the boundary, both ways): None, bool, int, float, complex, str, bytes,
and list, tuple, dict, set, frozenset of plain data (exact types: no subclasses), nested at
most 100 deep, at most 64 MB a message. Anything else the candidate returns (an object whose
__eq__ always says True, an int subclass, a generator, a class instance) fails the test run.
Arguments the candidate changes in place are not sent back.

The time limit counts only the candidate: CPU time of the runner (RLIMIT_CPU, from the fork of
a warm child, so interpreter start-up is not counted), and a wall-clock bound of
WALL_FACTOR x the limit for programs that sleep or block, counted from the job's hand-over
(never the wait for a free slot or for a child to start).
"""

from __future__ import annotations

import builtins
import json
import os
import resource
import signal
import struct
import sys

# The child's own names for the builtins it uses, taken before any candidate code runs: a program that patches
# the builtins module (len, isinstance, ...) then breaks only itself, quickly, instead of hanging its runner.
from builtins import (  # noqa: UP029 - taken on purpose (see above)
    BaseException,
    callable,
    dict,
    float,
    isinstance,
    len,
    list,
    max,
    min,
    sorted,
    str,
    type,
)

WALL_FACTOR = 1.5  # a sleeping or blocked program is stopped after this many times its CPU-time limit
MAX_MESSAGE = 64 << 20
MAX_DEPTH = 100
_HEADER = struct.Struct(">I")
_SCALARS = (type(None), bool, int, float, str)


class NotPlain(Exception):
    """A value outside the plain-data types crossed (or tried to cross) the boundary."""


# -- plain data: one codec for both sides ------------------------------------------------------


def encode(value, depth: int = 0):
    """A JSON-ready form of a plain value; NotPlain for anything else (exact types only)."""
    kind = type(value)
    if depth > MAX_DEPTH:
        raise NotPlain("nested too deeply")
    if kind in _SCALARS:
        if kind is float and value != value or kind is float and value in (float("inf"), float("-inf")):
            return {"x": repr(value)}
        return value
    if kind is list:
        return [encode(v, depth + 1) for v in value]
    if kind is tuple or kind is set or kind is frozenset:
        return {"tsf"[(tuple, set, frozenset).index(kind)]: [encode(v, depth + 1) for v in value]}
    if kind is dict:
        return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    if kind is bytes:
        return {"b": value.hex()}
    if kind is complex:
        return {"c": [encode(value.real, depth + 1), encode(value.imag, depth + 1)]}
    raise NotPlain(f"a {kind.__name__} is not plain data")


def decode(data, depth: int = 0):
    """The plain value of an encoded form; NotPlain for anything malformed."""
    if depth > MAX_DEPTH:
        raise NotPlain("nested too deeply")
    kind = type(data)
    if kind in _SCALARS:
        return data
    if kind is list:
        return [decode(v, depth + 1) for v in data]
    if kind is not dict or len(data) != 1:
        raise NotPlain("malformed value")
    ((tag, body),) = data.items()
    try:
        if tag == "x":
            return float(body) if body in ("nan", "inf", "-inf") else _bad()
        if tag == "b":
            return bytes.fromhex(body)
        if tag == "c":
            return complex(*(_number(decode(v, depth + 1)) for v in body))
        items = [decode(v, depth + 1) for v in body]
        if tag == "t":
            return tuple(items)
        if tag == "s":
            return set(items)
        if tag == "f":
            return frozenset(items)
        if tag == "d":
            return {k: v for k, v in items}
    except (TypeError, ValueError) as err:
        raise NotPlain(f"malformed value ({err})") from None
    raise NotPlain("malformed value")


def _number(v):
    return v if type(v) in (int, float) else _bad()


def _bad():
    raise NotPlain("malformed value")


def send(fd: int, obj) -> None:
    data = json.dumps(obj, allow_nan=False).encode()
    data = _HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def receive(fd: int):
    """One message, or None at end of stream; NotPlain for a malformed one."""
    head = _read_exact(fd, _HEADER.size)
    if head is None:
        return None
    (size,) = _HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise NotPlain("message too large")
    body = _read_exact(fd, size)
    if body is None:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise NotPlain("malformed message") from None


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the child: supervisor, then runner -------------------------------------------------------------


def _die_with_parent(sig: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _namespaces() -> tuple[str, bool]:
    """(how the network is cut, whether a PID namespace holds the runner's processes)."""
    try:
        import ctypes

        unshare = ctypes.CDLL(None, use_errno=True).unshare
        net, pid, user = 0x40000000, 0x20000000, 0x10000000
        for flags in (net | pid, user | net | pid, net, user | net):
            if unshare(flags) == 0:
                return "namespace", bool(flags & pid)
    except (OSError, AttributeError):
        pass
    return "socket module disabled", False


def _limits(limits: dict) -> None:
    memory = int(limits.get("memory_mb", 1024)) << 20
    cpu = max(1, int(-(-float(limits.get("cpu_seconds", 5)) // 1)))
    for limit, value in (
        (resource.RLIMIT_AS, memory),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_FSIZE, 16 << 20),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 256),
    ):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass
    if os.geteuid() != 0:  # root ignores RLIMIT_NPROC; the PID namespace and the fork hook still hold
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        except (ValueError, OSError):
            pass


def _no_sockets() -> None:
    import socket

    def refused(*args, **kwargs):
        raise OSError("network access is disabled for this program")

    for name in ("socket", "create_connection", "getaddrinfo", "socketpair", "fromfd"):
        setattr(socket, name, refused)


def _child(parent: int, scratch: str) -> None:
    import shutil

    runner = 0

    def leave(*_):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM (the scorer's, then its death) waits
        if runner:
            for kill in (os.kill, os.killpg):
                try:
                    kill(runner, signal.SIGKILL)
                except OSError:
                    pass
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, leave)  # before the death signal is asked for: no window that leaks the folder
    _die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the scorer ended while this process started
        leave()
    os.mkdir(scratch, 0o700)  # made here, not by the scorer: a scorer that dies at any moment leaks no folder
    os.chdir(scratch)
    network, own_pids = _namespaces()
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    try:
        job = receive(rfd)
    except NotPlain:
        job = None
    if not isinstance(job, dict):
        leave()
    supervisor = os.getpid()
    runner = os.fork()
    if runner == 0:
        _die_with_parent(signal.SIGKILL)
        if not own_pids and os.getppid() != supervisor:
            os._exit(1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setpgid(0, 0)
        _runner(job, rfd, wfd, network)
        os._exit(0)
    status = 0
    while True:
        try:
            status = os.waitpid(runner, 0)[1]
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    end = {"ended": signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "exit"}
    try:
        send(wfd, end)
    except OSError:
        pass
    leave()


def _runner(job: dict, rfd: int, wfd: int, network: str) -> None:
    """Run the candidate's code and answer calls with plain data; never sees a test or an expected value."""
    _limits(job.get("limits") or {})
    if network != "namespace":
        _no_sockets()
    os.register_at_fork(after_in_child=lambda: os._exit(1))
    program = str(job.get("program") or "")
    write, leave = send, os._exit
    sys.argv = ["candidate"]
    if job.get("mode") == "io":
        _serve_io(program, rfd, wfd)
        leave(0)
    scope = {"__name__": "candidate", "__builtins__": builtins}
    try:
        exec(compile(program, "<candidate>", "exec"), scope)
    except BaseException as err:  # noqa: BLE001 - SystemExit from the candidate's top level too
        write(wfd, {"error": f"{type(err).__name__}: {str(err)[:300]}"})
        leave(0)
    write(wfd, {"ready": sorted(k for k, v in scope.items() if not k.startswith("__") and callable(v))})
    while True:
        request = receive(rfd)
        if not isinstance(request, dict):
            leave(0)
        try:
            function = scope[request["call"]]
            args, kwargs = decode(request["args"]), decode(request["kwargs"])
            value = function(*args, **kwargs)
        except BaseException as err:  # noqa: BLE001 - reported as raised; the scorer decides
            write(wfd, {"raise": type(err).__name__, "message": str(err)[:300]})
            continue
        try:
            reply = {"value": encode(value)}
        except (NotPlain, RecursionError) as err:
            reply = {"bad": str(err)}
        write(wfd, reply)


def _serve_io(program: str, rfd: int, wfd: int) -> None:
    import io

    try:
        code = compile(program, "<candidate>", "exec")
    except BaseException as err:  # noqa: BLE001
        send(wfd, {"error": f"{type(err).__name__}: {str(err)[:300]}"})
        return
    send(wfd, {"ready": []})
    saved = sys.stdin, sys.stdout
    while True:
        request = receive(rfd)
        if not isinstance(request, dict):
            return
        out = io.StringIO()
        sys.stdin, sys.stdout = io.StringIO(str(request.get("input", ""))), out
        reply = None
        try:
            exec(code, {"__name__": "__main__", "__builtins__": builtins})
        except SystemExit as stop:
            if stop.code not in (None, 0):
                reply = {"raise": "SystemExit", "message": str(stop.code)[:100]}
        except BaseException as err:  # noqa: BLE001
            reply = {"raise": type(err).__name__, "message": str(err)[:300]}
        finally:
            sys.stdin, sys.stdout = saved
        send(wfd, reply or {"value": out.getvalue()})


# -- the scorer (the environment's side) ---------------------------------------------------------


class Failed(BaseException):  # noqa: N818 - not an Exception: a test's `except Exception` cannot swallow it
    """The run failed outside the tests' say: time, a value that is not plain data, the program gone."""


class CandidateError(Exception):
    """The candidate's function raised an exception that is not one of the builtin Exception types."""


class _Child:
    """One warm child: the supervisor process, waiting for its job in its own scratch folder."""

    def __init__(self) -> None:
        import secrets
        import subprocess
        import tempfile

        self.scratch = os.path.join(tempfile.gettempdir(), f"code-run-{secrets.token_hex(8)}")
        env = {"PATH": os.defpath, "LANG": "C.UTF-8", "HOME": self.scratch, "TMPDIR": self.scratch}
        self.proc = subprocess.Popen(
            [sys.executable, "-I", os.path.abspath(__file__), "--child", str(os.getpid()), self.scratch],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=env,
            start_new_session=True,
        )
        self.wfd, self.rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.buffer = b""
        self.left = 0.0
        self.timeout = 0.0
        self.failure: str | None = None

    def fail(self, reason: str) -> Failed:
        self.failure = self.failure or reason
        return Failed(self.failure)

    def _wait(self, readable: bool) -> None:
        import select
        import time

        start = time.monotonic()
        ready = select.select([self.rfd] if readable else [], [] if readable else [self.wfd], [], max(self.left, 0))
        self.left -= time.monotonic() - start
        if not any(ready):
            raise self.fail(f"did not finish within {self.timeout:g} s")

    def send(self, obj) -> None:
        data = json.dumps(obj, allow_nan=False).encode()
        data = _HEADER.pack(len(data)) + data
        while data:
            self._wait(readable=False)
            try:
                data = data[os.write(self.wfd, data) :]
            except BlockingIOError:
                continue
            except OSError:
                raise self.fail("the program ended before answering") from None

    def reply(self) -> dict:
        while True:
            if len(self.buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack(self.buffer[: _HEADER.size])
                if size > MAX_MESSAGE:
                    raise self.fail("the program sent a message too large")
                if len(self.buffer) >= _HEADER.size + size:
                    body = self.buffer[_HEADER.size : _HEADER.size + size]
                    self.buffer = self.buffer[_HEADER.size + size :]
                    return self._message(body)
            self._wait(readable=True)
            try:
                chunk = os.read(self.rfd, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                raise self.fail("the program ended before answering")
            self.buffer += chunk

    def _message(self, body: bytes) -> dict:
        try:
            message = json.loads(body)
        except (ValueError, RecursionError):
            message = None
        if not isinstance(message, dict):
            raise self.fail("the program wrote to the harness's channel")
        if "ended" in message:
            why = message["ended"]
            if why in ("SIGXCPU", "SIGKILL"):
                raise self.fail(f"used more than {self.timeout:g} s of CPU time (or its memory)")
            raise self.fail(f"the program ended before answering ({why})")
        return message

    def call(self, name: str, args: tuple, kwargs: dict):
        try:
            request = {"call": name, "args": encode(list(args)), "kwargs": encode(kwargs)}
        except (NotPlain, RecursionError) as err:
            raise self.fail(f"the tests pass {name} a value that is not plain data ({err})") from None
        self.send(request)
        return self.answer(name)

    def answer(self, name: str):
        message = self.reply()
        if "value" in message:
            try:
                return decode(message["value"])
            except (NotPlain, RecursionError) as err:
                raise self.fail(f"{name} returned a malformed value ({err})") from None
        if "raise" in message:
            kind, text = str(message.get("raise")), str(message.get("message", ""))
            cls = getattr(builtins, kind, None)
            if isinstance(cls, type) and issubclass(cls, Exception) and kind not in ("StopIteration",):
                raise cls(text)
            raise CandidateError(f"{kind}: {text}")
        if "bad" in message:
            raise self.fail(f"{name} returned a value that is not plain data ({message['bad']})")
        raise self.fail("the program wrote to the harness's channel")

    def close(self) -> None:
        import shutil
        import subprocess

        try:
            self.proc.send_signal(signal.SIGTERM)  # the supervisor kills the runner, removes the scratch folder
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        except OSError:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.scratch, ignore_errors=True)


class _Proxy:
    """Stands for one of the candidate's functions in the tests: arguments out, a plain value back."""

    __slots__ = ("_child", "_name", "__name__")

    def __init__(self, child: _Child, name: str) -> None:
        self._child, self._name, self.__name__ = child, name, name

    def __call__(self, *args, **kwargs):
        return self._child.call(self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<candidate function {self._name}>"


# Warm children, one per concurrent rollout: a daemon thread keeps as many ready as were ever busy at once.
_pool: list[_Child] = []
_done: list[_Child] = []  # used children, told to stop, waiting to be reaped by the pool's thread
_state = {"busy": 0, "wanted": 1, "owner": 0, "filler": None}
_lock = None
_wake = None


def _setup() -> None:
    global _lock, _wake
    import atexit
    import threading

    if _state["owner"] == os.getpid():
        return
    _lock, _wake = threading.Lock(), threading.Event()
    _pool.clear()
    _state.update(busy=0, owner=os.getpid())
    _state["filler"] = threading.Thread(target=_fill, name="code-harness-pool", daemon=True)
    _state["filler"].start()
    atexit.register(shutdown)


def _fill() -> None:
    """Refill the pool, and finish closing the children that were used (off the scoring path)."""
    while True:
        _wake.wait()
        _wake.clear()
        while _done:
            _done.pop().close()
        while len(_pool) < _state["wanted"] and _state["owner"] == os.getpid():
            child = _Child()
            with _lock:
                _pool.append(child)


def _take() -> _Child:
    _setup()
    with _lock:
        _state["busy"] += 1
        _state["wanted"] = max(_state["wanted"], _state["busy"])
        child = _pool.pop() if _pool else None
    _wake.set()
    if child is None or child.proc.poll() is not None:
        if child is not None:
            child.close()
        child = _Child()
    return child


def shutdown() -> None:
    """Stop every warm child (atexit does this too; a killed scorer's children die with it)."""
    if _lock is None:
        return
    with _lock:
        children, _pool[:] = list(_pool) + _done, []
        _done.clear()
        _state["wanted"] = 0
    for child in children:
        child.close()


def score(program: str, spec: dict, timeout: float = 5.0, memory_mb: int = 1024) -> dict:
    """{"passed": bool, "reason": str}: the row's tests, run here, against the program run in a child."""
    if not (program or "").strip():
        return {"passed": False, "reason": "no code"}
    child = _take()
    try:
        reason = _run(child, program, spec, float(timeout), int(memory_mb))
    finally:
        with _lock:
            _state["busy"] -= 1
        try:
            child.proc.send_signal(signal.SIGTERM)  # it kills the program and removes its folder at once
        except OSError:
            pass
        _done.append(child)
        _wake.set()
    return {"passed": reason == "", "reason": reason}


def _run(child: _Child, program: str, spec: dict, timeout: float, memory_mb: int) -> str:
    mode = spec.get("mode") or "call"
    child.timeout, child.left = timeout, WALL_FACTOR * timeout
    try:
        child.send({"program": program, "mode": mode, "limits": {"memory_mb": memory_mb, "cpu_seconds": timeout}})
        ready = child.reply()
        if "error" in ready:
            return f"the program did not run: {str(ready['error'])[:300]}"
        if mode == "io":
            reason = _run_io(child, spec)
        else:
            reason = _run_call(child, spec, ready.get("ready"))
    except Failed:
        pass
    except Exception as err:  # noqa: BLE001 - a failed assert, or anything else the tests raised
        reason = f"{type(err).__name__}: {str(err)[:200]}"
    return child.failure or reason


def _run_call(child: _Child, spec: dict, names) -> str:
    names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    scope = {"__name__": "__vlab_tests__", "__builtins__": builtins}
    for label in ("helpers", "setup"):
        if spec.get(label):
            exec(compile(str(spec[label]), f"<{label}>", "exec"), scope)
    for name in names:
        if name not in scope and not hasattr(builtins, name):
            scope[name] = _Proxy(child, name)
    tests = spec.get("tests") or ""
    if isinstance(tests, list):
        tests = "\n".join(str(t) for t in tests)
    exec(compile(tests, "<tests>", "exec"), scope)
    entry = spec.get("entry_point")
    if callable(scope.get("check")) and entry:
        if entry not in names:
            return f"the program defines no {entry}"
        scope["check"](_Proxy(child, entry))
    return ""


def _run_io(child: _Child, spec: dict) -> str:
    for n, case in enumerate(spec.get("cases") or []):
        child.send({"input": str(case.get("input", ""))})
        got = child.answer("the program")
        if not isinstance(got, str) or got.split() != str(case.get("output", "")).split():
            return f"case {n}: wrong output"
    return ""


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(int(sys.argv[2]), sys.argv[3])
    os._exit(0)
