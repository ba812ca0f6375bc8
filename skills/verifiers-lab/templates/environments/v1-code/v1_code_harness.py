"""Score a candidate program against its tests: the tests run HERE, the candidate's code in a child.

Two roles in one file (kept in one module so both sides share the plain-data codec):

* imported by the environment (the trusted scorer): ``score(program, spec, timeout, memory_mb)``
  runs the row's tests in this process, with the prompt's helper functions and this process's
  standard library, against a PROXY for each function the candidate defines. A call of the
  proxy sends its arguments (plain data) to a child process and returns what the child sends
  back, decoded here into plain values. The verdict, the tests and the expected values never
  leave this process, so no code in the child can write, read or patch them. stdin/stdout
  problems ("io" mode) work the same way, as contest judges run them: each test is a process of
  its own (standard input a file holding the test's input, so file descriptor 0, sys.stdin.buffer,
  os.read(0), os.fstat(0) and open(0) work; exit() and quit() defined), under its own CPU-time
  limit and the memory limit; the child returns what it printed, its exit status and CPU time,
  and the judging is made here (``_run_io``: a crash or a non-zero exit fails the test whatever
  was printed; the output compared token by token, numbers within a tolerance, or by a checker).
* run as ``python -I -S -c BOOT SIZE <this file> PARENT_PID SCRATCH`` (this file's code, compiled once by
  ``score``, read from stdin; started by ``score`` ahead of time: a pool of
  warm children, one per concurrent rollout): a supervisor that waits for one job, then forks
  the runner that executes the candidate's code under limits (CPU time, address space, file
  size, open files, core dumps, and for a non-root user processes), in a network and PID
  namespace of its own where the OS allows it (else the socket module is disabled), with a
  scratch folder as working directory, no API keys in its environment, and kept from reading
  anything but the standard library (below). The runner dies with the supervisor; in a PID
  namespace every process the candidate starts dies with the runner. The supervisor dies with
  the scorer (PR_SET_PDEATHSIG): on the way out it kills the runner's process group and removes
  the scratch folder.

What the candidate can read and write: the runner, before any of the program runs, is fenced in by
every layer the machine allows, strongest first (the supervisor prepares them while it waits for its
job, so the timed run only enforces them):

* Landlock (Linux >= 5.13; the rights of every ABI the kernel has, up to 7): read-write its scratch
  folder; read-only the interpreter's standard library (its folder and lib-dynload, each entry but
  site-packages and dist-packages); read and run the interpreter's folder, /bin and /usr/bin, and the
  shared libraries they load (the *.so files and multiarch folders of /lib, /lib64, /usr/lib,
  /usr/lib64, /usr/local/lib, the interpreter's lib folder and the folders ld.so.conf names, never a
  python* folder among them), /etc/ld.so.cache, /etc/localtime, /usr/share/zoneinfo, /dev/null,
  /dev/zero, /dev/urandom, /dev/random. Everything else is closed, reading and listing included: the
  dataset files, the environment's package and its data folder, every site-packages (so no installed
  package imports: numpy neither), the scorer's working folder, other children's scratch folders,
  /tmp, home folders, /proc. From ABI 4 TCP bind and connect are closed too, from ABI 6 signals and
  abstract UNIX sockets that reach outside the runner's own processes.
* for a root scorer, an unprivileged user: no groups, uid and gid 65534 (nobody), the scratch folder
  handed to it; a file that grants other users nothing stays closed even without Landlock. Skipped
  (with a note) where that user could not reach the standard library or the scratch folder (an
  interpreter under /root, a scorer whose TMPDIR is private).
* no_new_privs (PR_SET_NO_NEW_PRIVS): no set-user-ID program gives privileges back.

Which layers ran is the runner's first message, sent before any of the program runs, and ``score``
returns it as "isolation": {"landlock": the ABI in force (0: none), "uid": the user the program ran as,
"network": "namespace" (or how else it is cut), "pid_namespace": bool, "reads": what the program could
read, in words, "notes": why a layer did not run}. With "landlock": 0 and the scorer's uid the program
reads all the scorer's user may: the harness is then no file sandbox.

Plain data (what crosses the boundary, both ways): None, bool, int, float, complex, str, bytes,
bytearray, and list, tuple, dict, set, frozenset of plain data; the standard library's Counter,
OrderedDict, defaultdict (default_factory None or a builtin type: int, list, set, str, float, dict...),
deque (with its maxlen), range (at most MAX_RANGE numbers), slice, Fraction and Decimal (exponent
within +-MAX_EXPONENT); namedtuple instances; instances of the classes the program (or the tests)
defines, as their class name and attributes (__dict__ and __slots__); classes, as their qualified
name. Exact types only (no subclass of a builtin or standard type), nested at most 100 deep, at most
64 MB a message. Each is rebuilt on the other side as a real object of its standard type, never as
anything the sender wrote, so no code of the candidate's (its __eq__ included) ever runs here: a
namedtuple as one of a namedtuple class of the same name and fields (the tests' own if they define
it); an instance as an instance of the class of that name THE TESTS define, its attributes set (the
tests' own __eq__ decides; in the child, the program's class of that name), else as a plain object
equal to a copy with the same class name and attributes, or, when the candidate's class compares with
an __eq__ of its own (not object's, not a @dataclass's), refused; an attribute that holds a class or
that the tests' class defines itself (a method, a class attribute) is refused; a class as the builtin
class or the standard type above of that name, else the tests' class of that name, else by name. So
an object whose __eq__ always says True, an int subclass, a generator, a defaultdict with a lambda
factory fail the test run. Arguments the candidate changes in place are not sent back.

Names in the tests' namespace, in order: what the program's standard-library imports bind that is a
module, a value or a standard type that crosses (`import sys`, `from math import pi`, `from collections
import Counter`: under its own name, never over a builtin; the other functions and classes it imports
are proxies like its own, run in the child), the prompt's helpers and
the row's setup code, a proxy for each function the program defines (never over a helper; over a
builtin only for the function under test: the row's entry point, else the one builtin-named function
that bare asserts call as `assert sum(...) == expected`), then the tests. A program's `check` is what
MBPP-style asserts call; tests that define `check(candidate)` (HumanEval) keep their own and are
called with the entry point.

The time limit counts only the candidate: CPU time of the runner (RLIMIT_CPU, from the fork of
a warm child, so interpreter start-up is not counted), and a wall-clock bound of
WALL_FACTOR x the limit for programs that sleep or block, counted from the job's hand-over
(never the wait for a free slot or for a child to start). Past that bound, a program whose processes used CPU
in the last slice is computing on a busy machine, not stuck: it gets another slice (its CPU-time limit ends it),
up to WALL_CAP x the limit of wall time; one that used none is stopped there. In "io" mode the limit is each test's:
its CPU time as measured (the kernel stops it a second later), and a wall-clock bound of
IO_WALL_FACTOR x the limit + IO_WALL_SECONDS, stretched by the machine's load per core.
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
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
from decimal import Decimal
from fractions import Fraction

WALL_FACTOR = 1.5  # a sleeping or blocked program is stopped after this many times its CPU-time limit
# Past that bound a program that used at least CPU_SHARE of a core in the last slice is computing on a busy machine,
# not stuck: it gets more slices (RLIMIT_CPU ends it), up to WALL_CAP x its limit of wall time in all. A sleeping or
# blocked program uses none; 1%, not 5%: beside a test suite's sessions and 4 hogs a core in sessions of their own,
# a computing program once got under 5% of a core in a slice and was stopped as if it slept.
CPU_SHARE, WALL_CAP = 0.01, 20.0
MAX_MESSAGE = 64 << 20
MAX_DEPTH = 100
MAX_RANGE = 10_000_000  # a range as long as a list one message could carry: the tests may list() or sum() it here
MAX_EXPONENT = 100_000  # a Decimal's: int() of it here stays quick
_HEADER = struct.Struct(">I")
_SCALARS = (type(None), bool, int, float, str)
TESTS = "__vlab_tests__"  # the tests' namespace (its __name__): the classes it defines decide how a value compares
_OWN_MODULES = ("candidate", TESTS)  # where the classes whose instances cross are defined: the program, the tests
_STANDARD = (Counter, OrderedDict, defaultdict, deque, Fraction, Decimal)  # tests may build these themselves
_FACTORIES = {t.__name__: t for t in (int, float, complex, str, bytes, bool, list, tuple, dict, set, frozenset)}
_STDLIB_NAMES = frozenset(getattr(sys, "stdlib_module_names", ()))
_MISSING = object()
_seen: dict = {}  # in the child: the program's classes met by encode, by qualified name (decode rebuilds them)
_tuples: dict = {}  # namedtuple classes made by decode, by (name, fields)


class NotPlain(Exception):
    """A value outside the plain-data types crossed (or tried to cross) the boundary."""


class _Object:
    """The copy of an instance of the program's class when the tests define no class of that name: its
    class name and attributes (readable as attributes), equal to another copy with the same ones."""

    def __init__(self, name: str, attrs: dict) -> None:
        self.__dict__.update(attrs)
        self.__dict__["__vlab_class__"] = name  # a dunder key: never an attribute that crossed

    def __eq__(self, other):
        return self.__dict__ == other.__dict__ if type(other) is _Object else NotImplemented

    def __hash__(self) -> int:
        return hash(self.__dict__["__vlab_class__"])

    def __repr__(self) -> str:
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if k != "__vlab_class__")
        return f"{self.__dict__['__vlab_class__']}({attrs})"


class _TypeName:
    """A class that crossed by name only (the program's own, with no class of that name in the tests):
    equal to the same name, or to the tests' proxy for the program's class of that name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other):
        if type(other) is _TypeName:
            return other.name == self.name
        if type(other) is _Proxy:
            return other._name == self.name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def __name__(self) -> str:  # read as a class's
        return self.name.rpartition(".")[2]

    def __repr__(self) -> str:
        return f"<class '{self.name}'>"


_SLOT = type(_TypeName.__dict__["name"])  # a __slots__ entry's descriptor: instance storage


# -- plain data: one codec for both sides ------------------------------------------------------


def encode(value, depth: int = 0):
    """A JSON-ready form of a value of the types that cross; NotPlain for anything else (exact types only)."""
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
        return {"d": _pairs(value, depth + 1)}
    if kind is bytes:
        return {"b": value.hex()}
    if kind is complex:
        return {"c": [encode(value.real, depth + 1), encode(value.imag, depth + 1)]}
    return _encode_standard(value, kind, depth + 1)


def _pairs(mapping, depth: int) -> list:
    return [[encode(k, depth), encode(v, depth)] for k, v in dict.items(mapping)]


def _encode_standard(value, kind, depth: int):
    """The standard library's values, classes by name, and instances of the program's or the tests' classes."""
    if kind is bytearray:
        return {"a": value.hex()}
    if kind is Counter or kind is OrderedDict:
        return {"C" if kind is Counter else "O": _pairs(value, depth)}
    if kind is defaultdict:
        factory = value.default_factory
        name = None if factory is None else next((n for n, t in _FACTORIES.items() if t is factory), "")
        if name == "":
            raise NotPlain("a defaultdict whose default_factory is not a builtin type is not plain data")
        return {"D": [name, _pairs(value, depth)]}
    if kind is deque:
        return {"Q": [[encode(v, depth) for v in value], value.maxlen]}
    if kind is range:
        return {"r": [value.start, value.stop, value.step]}
    if kind is slice:
        return {"l": [encode(value.start, depth), encode(value.stop, depth), encode(value.step, depth)]}
    if kind is Fraction:
        return {"F": [value.numerator, value.denominator]}
    if kind is Decimal:
        return {"M": str(value)}
    if kind is _Object:
        attrs = [[k, encode(v, depth)] for k, v in value.__dict__.items() if k != "__vlab_class__"]
        return {"I": [value.__dict__["__vlab_class__"], False, attrs]}
    if kind is _TypeName:
        return {"T": ["", value.name]}
    if isinstance(value, type):
        if value.__module__ == "candidate":
            _seen[value.__qualname__] = value
        return {"T": [str(value.__module__), str(value.__qualname__)]}
    if type(kind) is type and issubclass(kind, tuple):
        return _encode_namedtuple(value, kind, depth)
    return _encode_instance(value, kind, depth)


def _encode_namedtuple(value, kind, depth: int):
    fields = getattr(kind, "_fields", None)
    if type(fields) is not tuple or any(type(f) is not str for f in fields) or kind.__eq__ is not tuple.__eq__:
        raise NotPlain(f"a {kind.__name__} is not plain data")
    if kind.__module__ == "candidate":
        _seen[kind.__name__] = kind
    return {"N": [kind.__name__, list(fields), [encode(v, depth) for v in tuple.__iter__(value)]]}


def _encode_instance(value, kind, depth: int):
    """An instance of a class the program (or the tests) defined, of classes defined there only: its class
    name, whether the class compares with an __eq__ of its own, its attributes (__dict__ and __slots__)."""
    mro = kind.__mro__
    if type(kind) is not type or mro[-1] is not object:
        raise NotPlain(f"a {kind.__name__} is not plain data")
    for cls in mro[:-1]:
        if type(cls) is not type or cls.__module__ not in _OWN_MODULES:
            raise NotPlain(f"a {kind.__name__} is not plain data")
    try:
        attrs = object.__getattribute__(value, "__dict__")
    except AttributeError:
        attrs = {}
    if type(attrs) is not dict:
        raise NotPlain(f"a {kind.__name__} is not plain data")
    attrs = dict(attrs)
    for cls in mro[:-1]:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if type(slots) is str else slots:
            if type(slot) is not str or slot in ("__dict__", "__weakref__"):
                continue
            if slot.startswith("__") and not slot.endswith("__"):
                slot = f"_{cls.__name__.lstrip('_')}{slot}"
            try:
                attrs[slot] = object.__getattribute__(value, slot)
            except AttributeError:
                pass
    if any(type(k) is not str or _dunder(k) for k in attrs):
        raise NotPlain(f"a {kind.__name__} with attributes that are not plain names is not plain data")
    if kind.__module__ == "candidate":
        _seen[kind.__qualname__] = kind
    return {"I": [kind.__qualname__, _own_eq(kind), [[k, encode(v, depth)] for k, v in attrs.items()]]}


def _own_eq(kind) -> bool:
    """Does the class compare with an __eq__ of its own (not object's, not the one a @dataclass wrote)?"""
    for cls in kind.__mro__:
        if "__eq__" in cls.__dict__:
            if cls is object:
                return False
            code = getattr(cls.__dict__["__eq__"], "__code__", None)
            written = "__dataclass_fields__" in cls.__dict__ and code is not None and code.co_filename == "<string>"
            return not written
    return False


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def decode(data, depth: int = 0, names: dict | None = None):
    """The value of an encoded form; NotPlain for anything malformed. `names`: where a class that crossed by
    name is looked up (the scorer passes the tests' namespace; the child, by default, the program's classes
    it sent before). Only the standard types, the namespace's own classes, _Object and _TypeName come out."""
    if depth > MAX_DEPTH:
        raise NotPlain("nested too deeply")
    kind = type(data)
    if kind in _SCALARS:
        return data
    if kind is list:
        return [decode(v, depth + 1, names) for v in data]
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
        if tag in ("t", "s", "f", "d"):
            items = [decode(v, depth + 1, names) for v in _list(body)]
            if tag == "t":
                return tuple(items)
            if tag == "s":
                return set(items)
            if tag == "f":
                return frozenset(items)
            return {k: v for k, v in items}
        return _decode_standard(tag, body, depth + 1, names)
    except (TypeError, ValueError, ArithmeticError, AttributeError, KeyError) as err:
        raise NotPlain(f"malformed value ({err})") from None


def _decode_standard(tag: str, body, depth: int, names: dict | None):
    if tag == "a":
        return bytearray.fromhex(body)
    if tag in ("C", "O"):
        items = [decode(v, depth, names) for v in _list(body)]
        if tag == "O":
            return OrderedDict(items)
        counter = Counter()
        dict.update(counter, items)  # the counts as sent, whatever they are
        return counter
    if tag == "D":
        factory, pairs = body
        if factory is not None and factory not in _FACTORIES:
            _bad()
        return defaultdict(factory and _FACTORIES[factory], [decode(v, depth, names) for v in _list(pairs)])
    if tag == "Q":
        items, maxlen = body
        if maxlen is not None and type(maxlen) is not int:
            _bad()
        return deque([decode(v, depth, names) for v in _list(items)], maxlen)
    if tag == "r":
        made = range(*(_int(v) for v in _list(body, 3)))
        if made.__len__() > MAX_RANGE:  # OverflowError past sys.maxsize: malformed
            raise NotPlain(f"a range of more than {MAX_RANGE} numbers is not plain data")
        return made
    if tag == "l":
        return slice(*(decode(v, depth, names) for v in _list(body, 3)))
    if tag == "F":
        return Fraction(*(_int(v) for v in _list(body, 2)))
    if tag == "M":
        made = Decimal(body) if type(body) is str else _bad()
        if made.is_finite() and abs(made.adjusted()) > MAX_EXPONENT:
            raise NotPlain(f"a Decimal beyond 1e±{MAX_EXPONENT} is not plain data")
        return made
    if tag == "T":
        module, qualname = _list(body, 2)
        return _decode_type(module, qualname, names) if type(module) is str and type(qualname) is str else _bad()
    if tag == "N":
        return _decode_namedtuple(*_list(body, 3), depth, names)
    if tag == "I":
        return _decode_instance(*_list(body, 3), depth, names)
    raise NotPlain("malformed value")


def _class_in(names: dict | None, qualname: str):
    """The class of that qualified name the namespace defines (the tests', or in the child the program's), or None."""
    names = _seen if names is None else names
    found = names.get(qualname)
    if found is None and "." in qualname:
        head, *rest = qualname.split(".")
        found = names.get(head)
        for part in rest:
            found = vars(found).get(part) if isinstance(found, type) else None
    return found if isinstance(found, type) and found.__module__ in _OWN_MODULES else None


def _decode_type(module: str, qualname: str, names: dict | None):
    """A class by name: a builtin class or one of the standard types that cross as itself, else the namespace's
    class of that name, else a _TypeName (compared by name). No other class comes out (the tests may call what
    they get: never a class of the sender's choosing that acts, like subprocess.Popen)."""
    found = None
    if module == "builtins" and qualname.isidentifier() and not qualname.startswith("_"):
        found = getattr(builtins, qualname, None)
    elif module in ("", *_OWN_MODULES):
        found = _class_in(names, qualname)
    else:
        found = next((t for t in _STANDARD if (t.__module__, t.__qualname__) == (module, qualname)), None)
    return found if isinstance(found, type) else _TypeName(qualname)


def _decode_namedtuple(name, fields, values, depth: int, names: dict | None):
    """A namedtuple: of the namespace's class of that name and fields, else of one made here (the same name and
    fields; compared as a tuple)."""
    if type(name) is not str or any(type(f) is not str for f in _list(fields)) or len(_list(values)) != len(fields):
        _bad()
    fields = tuple(fields)
    cls = _class_in(names, name)
    if cls is None or not issubclass(cls, tuple) or getattr(cls, "_fields", None) != fields:
        cls = _tuples.get((name, fields))
        if cls is None:
            cls = namedtuple(name, fields, rename=True)
            if cls._fields != fields:
                _bad()
            if len(_tuples) > 1000:
                _tuples.clear()
            _tuples[(name, fields)] = cls
    return tuple.__new__(cls, [decode(v, depth, names) for v in values])


def _decode_instance(qualname, own_eq, attrs, depth: int, names: dict | None):
    """An instance of the namespace's class of that name with the attributes sent (never the sender's class:
    the tests' own __eq__ decides), else an _Object; in the scorer, a class with an __eq__ of its own and no
    class of that name in the tests is refused."""
    if type(qualname) is not str or type(own_eq) is not bool:
        _bad()
    values = {}
    for pair in _list(attrs):
        key, value = _list(pair, 2)
        if type(key) is not str or _dunder(key):
            _bad()
        values[key] = decode(value, depth, names)
    cls = _class_in(names, qualname)
    if names is not None:  # the scorer: the tests may call or compare what they read from it
        for key, value in values.items():
            if callable(value) or cls is not None and _class_level(cls, key):
                raise NotPlain(f"a {qualname} whose attribute {key} is a class or one of its class's is not plain data")
    if cls is not None:
        made = cls.__new__(cls)
        for key, value in values.items():
            object.__setattr__(made, key, value)
        return made
    if own_eq and names is not None:
        raise NotPlain(
            f"a {qualname} that compares with its own __eq__ is not plain data (the tests define no class {qualname})"
        )
    return _Object(qualname, values)


def _class_level(cls, key: str) -> bool:
    """Does the class itself define `key` (a method, a class attribute its __eq__ may read), beyond the storage of
    an instance attribute (a slot, a dataclass field's default)?"""
    for owner in cls.__mro__:
        found = owner.__dict__.get(key, _MISSING)
        if found is not _MISSING:
            fields = owner.__dict__.get("__dataclass_fields__")
            return type(found) is not _SLOT and not (isinstance(fields, dict) and key in fields)
    return False


def _list(body, size: int | None = None) -> list:
    return body if type(body) is list and (size is None or len(body) == size) else _bad()


def _int(v) -> int:
    return v if type(v) is int else _bad()


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


def _namespaces() -> tuple[str, bool, bool]:
    """(how the network is cut, whether a PID namespace holds the runner's processes, whether a user namespace
    was needed for it: then this process's uid is an unmapped one and cannot be dropped)."""
    try:
        import ctypes

        unshare = ctypes.CDLL(None, use_errno=True).unshare
        net, pid, user = 0x40000000, 0x20000000, 0x10000000
        for flags in (net | pid, user | net | pid, net, user | net):
            if unshare(flags) == 0:
                return "namespace", bool(flags & pid), bool(flags & user)
    except (OSError, AttributeError):
        pass
    return "socket module disabled", False, False


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


# -- what the runner may read and write: Landlock, an unprivileged user ----------------------------------

NOBODY = 65534  # the user and group a root scorer's runner becomes
_X, _W, _R, _RD = 1 << 0, 1 << 1, 1 << 2, 1 << 3  # Landlock: execute, write a file, read a file, read a folder
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
_FILE_RIGHTS = _X | _W | _R | _TRUNCATE | _IOCTL_DEV  # the only rights a rule on a file (not a folder) may hold
_PACKAGES = ("site-packages", "dist-packages")


def _fs_rights(abi: int) -> int:
    """Every filesystem right the kernel's Landlock ABI knows: each is denied wherever no rule allows it."""
    rights = (1 << 13) - 1  # ABI 1: execute ... make_sym
    if abi >= 2:
        rights |= 1 << 13  # refer: rename or link across folders
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _entries(folder: str) -> list:
    try:
        with os.scandir(folder) as found:
            return list(found)
    except OSError:
        return []


def _stdlib() -> list[str]:
    """The interpreter's standard library: its folder and lib-dynload (their packages folders excepted by callers)."""
    folders = [os.path.dirname(os.__file__)]
    return folders + [p for p in sys.path if os.path.basename(p) == "lib-dynload" and p not in folders]


def _loader_folders() -> list[str]:
    """The folders the dynamic loader searches (/etc/ld.so.conf and the ld.so.conf.d/*.conf it includes)."""
    files = ["/etc/ld.so.conf"] + sorted(e.path for e in _entries("/etc/ld.so.conf.d") if e.name.endswith(".conf"))
    lines = []
    for path in files:
        try:
            with open(path) as f:
                lines += f.read().splitlines()
        except (OSError, ValueError):
            pass
    return [line.strip() for line in lines if line.strip().startswith("/")]


def _readable() -> list[tuple[str, int]]:
    """(path, rights) the runner may use besides its scratch folder: the standard library (read), the interpreter
    and the system's programs (run), the shared libraries they load, a few devices. No site-packages or
    dist-packages folder, and no other python* folder of a library folder: no installed package is readable."""
    rx, rdx = _R | _X, _R | _RD | _X
    out = [(os.path.dirname(os.path.realpath(sys.executable)), rx), ("/bin", rx), ("/usr/bin", rx)]
    for folder in _stdlib():  # the folder whole where it holds no packages folder, else each entry but those
        entries = _entries(folder)
        if any(entry.name in _PACKAGES for entry in entries):
            out += [(entry.path, rdx) for entry in entries if entry.name not in _PACKAGES]
        else:
            out.append((folder, rdx))
    libs = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib"]
    libs += [os.path.join(sys.base_prefix, d) for d in ("lib", getattr(sys, "platlibdir", "lib"))]
    seen = set()
    for folder in libs + _loader_folders():
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        if "-linux-" in os.path.basename(real):  # a multiarch folder (x86_64-linux-gnu): shared libraries only
            out.append((real, rdx))
            continue
        for entry in _entries(real):
            name = entry.name
            if name.startswith("python") or name in _PACKAGES:
                continue
            try:
                if ".so" in name and entry.is_file():
                    out.append((entry.path, rx))
                elif "-linux-" in name and entry.is_dir():
                    out.append((entry.path, rdx))
            except OSError:
                pass
    out += [("/etc/ld.so.cache", _R), ("/etc/localtime", _R), ("/usr/share/zoneinfo", _R | _RD)]
    out.append(("/dev/null", _R | _W | _TRUNCATE | _IOCTL_DEV))
    return out + [(device, _R | _IOCTL_DEV) for device in ("/dev/zero", "/dev/urandom", "/dev/random")]


def _landlock(scratch: str, most: int = 1 << 30) -> tuple[int, int, str]:
    """(ruleset fd or -1, its Landlock ABI, why there is none): the rules are made while the child waits for its
    job (the runner only enforces them). Everything the ABI can deny is denied but the scratch folder (all
    rights) and `_readable`; from ABI 4 TCP bind/connect too, from ABI 6 signals and abstract UNIX sockets
    reaching outside the runner's processes. `most`: use no ABI above it (the tests' older kernels)."""
    import ctypes
    import stat

    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long
    n = ctypes.c_long
    abi = syscall(n(444), None, n(0), n(1))  # landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
    abi = min(abi, most)
    if abi < 1:
        return -1, 0, f"no Landlock in this kernel ({os.strerror(ctypes.get_errno())})"

    class Ruleset(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    handled = _fs_rights(abi)
    attr = Ruleset(handled, 0b11 if abi >= 4 else 0, 0b11 if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # the fields this ABI knows
    ruleset = syscall(n(444), ctypes.byref(attr), n(size), n(0))
    if ruleset < 0:
        return -1, 0, f"no Landlock ruleset ({os.strerror(ctypes.get_errno())})"
    for path, rights in [*_readable(), (scratch, handled)]:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            rights &= handled if stat.S_ISDIR(os.fstat(fd).st_mode) else handled & _FILE_RIGHTS
            rule = PathBeneath(rights, fd)
            syscall(n(445), n(ruleset), n(1), ctypes.byref(rule), n(0))  # LANDLOCK_RULE_PATH_BENEATH
        except OSError:
            pass
        finally:
            os.close(fd)
    return ruleset, abi, ""


def _open_to(path: str, uid: int, need: int) -> bool:
    """Can uid reach path (search every folder above it) and use it as `need` (rwx bits) says, by its mode?"""
    parts = [part for part in os.path.realpath(path).split("/") if part]
    folders = ["/"] + ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]
    for folder in folders:
        try:
            st = os.stat(folder)
        except OSError:
            return False
        shift = 6 if st.st_uid == uid else 3 if st.st_gid == uid else 0
        want = need if folder == folders[-1] else 0o1
        if (st.st_mode >> shift) & want != want:
            return False
    return True


def _prepare_fence(scratch: str, own_pids: bool, user_ns: bool) -> dict:
    """What the runner will be kept to, made by the supervisor before the job comes: the Landlock ruleset, and
    for a root scorer the unprivileged user (the scratch folder handed to it) when it can still reach the
    standard library and the scratch folder."""
    notes = []
    try:
        ruleset, abi, why = _landlock(scratch)
    except (OSError, AttributeError, ValueError, TypeError) as err:
        ruleset, abi, why = -1, 0, f"no Landlock ({err})"
    if why:
        notes.append(why)
    uid = None
    if user_ns:
        notes.append("uid not changed: the PID namespace needed a user namespace")
    elif os.geteuid() != 0:
        notes.append("uid not changed: the scorer is not root, the program runs as its user")
    else:
        needs = [(folder, 0o5) for folder in _stdlib()] + [(os.path.dirname(scratch), 0o1)]
        closed = [folder for folder, need in needs if not _open_to(folder, NOBODY, need)]
        if closed:
            notes.append(f"uid not changed: {closed[0]} is closed to uid {NOBODY}, which the program needs")
        else:
            try:
                os.chown(scratch, NOBODY, NOBODY)
                uid = NOBODY
            except OSError as err:
                notes.append(f"uid not changed: the scratch folder could not be handed over ({err})")
    return {"ruleset": ruleset, "abi": abi, "uid": uid, "notes": notes, "own_pids": own_pids}


def _fence(fence: dict, network: str, supervisor: int) -> dict:
    """Keep this process (the runner, before the program runs) to what `_prepare_fence` made: the unprivileged
    user, no new privileges, then the Landlock rules. Returns what took effect (score's "isolation")."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    notes = list(fence["notes"])
    uid = fence["uid"]
    if uid is not None:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        except OSError as err:
            notes.append(f"could not become uid {uid} ({err})")
        _die_with_parent(signal.SIGKILL)  # a change of user clears the death signal: ask again
        if not fence["own_pids"] and os.getppid() != supervisor:
            os._exit(1)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: no set-user-ID program gives privileges back
        notes.append("no_new_privs not set")
    abi = 0
    if fence["ruleset"] >= 0:
        n = ctypes.c_long
        if libc.syscall(n(446), n(fence["ruleset"]), n(0)) == 0:  # landlock_restrict_self
            abi = fence["abi"]
            # what it cannot read it cannot import: the packages folders leave the path with the finders that listed
            # them at start-up (`import numpy`: ModuleNotFoundError, not PermissionError). The standard library's
            # finder stays: it listed its folder before, which the rules may not let the runner list again.
            stdlib = _stdlib()
            for p in list(sys.path):
                if not any(p == d or p.startswith(d + os.sep) for d in stdlib) or set(p.split(os.sep)) & {*_PACKAGES}:
                    sys.path.remove(p)
                    sys.path_importer_cache.pop(p, None)
        else:
            notes.append(f"Landlock not enforced ({os.strerror(ctypes.get_errno())})")
        os.close(fence["ruleset"])
    if network != "namespace" and abi >= 4:
        network = "landlock (no TCP), socket module disabled"
    user = os.geteuid()
    if abi:
        reads = "its scratch folder (read-write), the standard library and system libraries (read-only)"
    elif user == uid:
        reads = f"what every user may read (uid {user})"
    else:
        reads = f"all the scorer's user may read (uid {user})"
    return {
        "landlock": abi,
        "uid": user,
        "network": network,
        "pid_namespace": fence["own_pids"],
        "reads": reads,
        "notes": notes,
    }


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
    network, own_pids, user_ns = _namespaces()
    fence = _prepare_fence(scratch, own_pids, user_ns)  # the runner's Landlock rules and user, made while it waits
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
        _runner(job, rfd, wfd, network, fence, supervisor)
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


def _runner(job: dict, rfd: int, wfd: int, network: str, fence: dict, supervisor: int) -> None:
    """Run the candidate's code and answer calls with plain data; never sees a test or an expected value."""
    if job.get("mode") == "io":  # a whole program per test, each in a process of its own (_drive_io)
        _drive_io(job, rfd, wfd, network, fence)
        os._exit(0)
    _limits(job.get("limits") or {})
    if network != "namespace":
        _no_sockets()
    send(wfd, {"isolation": _fence(fence, network, supervisor)})  # the first message, before any of the program runs
    os.register_at_fork(after_in_child=lambda: os._exit(1))
    program = str(job.get("program") or "")
    write, leave = send, os._exit
    sys.argv = ["candidate"]
    module = type(sys)("candidate")  # a real module: @dataclass and typing look the program's names up there
    module.__builtins__ = builtins
    sys.modules["candidate"] = module
    scope = module.__dict__
    try:
        exec(compile(program, "<candidate>", "exec", dont_inherit=True), scope)  # not this file's __future__
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


# -- whole programs on standard input ("io" mode) ----------------------------------------------------------

OUTPUT_LIMIT = 16 << 20  # bytes a program may write to standard output on one test (RLIMIT_FSIZE)
STDERR_TAIL = 2000  # the end of its standard error kept for the reason of a failure


def _drive_io(job: dict, rfd: int, wfd: int, network: str, fence: dict) -> None:
    """The runner of a stdin/stdout program: for each test the scorer sends, one process of its own, forked from
    here before any of the program runs, as a contest judge runs it: standard input a file holding the test's
    input (file descriptor 0: sys.stdin, sys.stdin.buffer, os.read(0), os.fstat(0), open(0) all work), standard
    output and error files, exit() and quit() defined, its own CPU-time limit, the memory limit, and every fence
    of the call mode (Landlock, the unprivileged user, no network); nothing of a test is left for the next
    (its files go, and in a PID namespace every process it started). This process runs none of the program: it
    sends back what the program wrote and how it ended, and the scorer judges."""
    program = str(job.get("program") or "")
    limits = job.get("limits") or {}
    send(wfd, {"ready": []})
    told = False
    while True:
        try:
            case = receive(rfd)
        except NotPlain:
            return
        if not isinstance(case, dict):
            return
        reply, isolation = _one_test(program, case, limits, network, fence, (rfd, wfd))
        if not told and isolation is not None:
            send(wfd, {"isolation": isolation})
            told = True
        send(wfd, reply)
        _after_test()


def _file_with(data: bytes, read_only: bool) -> int:
    """An open file in the scratch folder holding ``data``, already unlinked: no other test and no later look at
    the folder finds it."""
    import secrets

    path = os.path.join(os.getcwd(), f".io-{secrets.token_hex(8)}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if read_only:
            reader = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            os.close(fd)
            fd = reader
        os.lseek(fd, 0, os.SEEK_SET)
    finally:
        os.unlink(path)
    return fd


def _one_test(program: str, case: dict, limits: dict, network: str, fence: dict, channel: tuple) -> tuple:
    """Run the program once on ``case["input"]``: ({"status", "code", "cpu", "output", "stderr", "wall"}, what
    its fences were or None)."""
    import time

    cpu = max(0.05, float(case.get("cpu_seconds") or limits.get("cpu_seconds") or 2.0))
    wall = max(cpu, float(case.get("wall_seconds") or 3 * cpu + 2))
    stdin = _file_with(str(case.get("input", "")).encode("utf-8"), read_only=True)
    stdout, stderr = _file_with(b"", False), _file_with(b"", False)
    status_r, status_w = os.pipe()
    driver = os.getpid()
    pid = os.fork()
    if pid == 0:  # the test's process: the scorer's channel closed, then fenced, then the program
        try:
            os.close(status_r)
            for fd in channel:
                os.close(fd)
            for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(fd, target)
                os.close(fd)
            _die_with_parent(signal.SIGKILL)
            if os.getppid() != driver:
                os._exit(1)
            os.setpgid(0, 0)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _run_program(program, cpu, limits, network, fence, driver, status_w)
        finally:
            os._exit(1)
    os.close(status_w)
    for fd in (stdin,):
        os.close(fd)
    started = time.monotonic()
    stopped = not _wait_for(pid, wall)
    if stopped:
        for kill in (os.killpg, os.kill):
            try:
                kill(pid, signal.SIGKILL)
            except OSError:
                pass
    status, usage = 0, None
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            break
    seconds = time.monotonic() - started
    isolation = _read_status(status_r)
    out = _read_from(stdout, 0, OUTPUT_LIMIT + 1)
    err = _read_from(stderr, -STDERR_TAIL, STDERR_TAIL)
    os.close(stdout)
    os.close(stderr)
    reply = {
        "status": signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "exit",
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "cpu": round(usage.ru_utime + usage.ru_stime, 4) if usage is not None else None,
        "seconds": round(seconds, 4),
        "wall": stopped,
        "output": out.decode("utf-8", "replace"),
        "output_cut": len(out) > OUTPUT_LIMIT,
        "stderr": err.decode("utf-8", "replace"),
    }
    if isinstance(isolation, dict) and "error" in isolation:
        reply["error"] = str(isolation["error"])[:300]
    return reply, (isolation or {}).get("isolation") if isinstance(isolation, dict) else None


def _wait_for(pid: int, seconds: float) -> bool:
    """Did the process end within ``seconds`` of wall-clock time? (A pidfd where the kernel has them.)"""
    import select
    import time

    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = -1
    if pidfd >= 0:
        try:
            return bool(select.select([pidfd], [], [], seconds)[0])
        finally:
            os.close(pidfd)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True
        time.sleep(0.002)
    return False


def _read_status(fd: int):
    """What the test's process said before any of the program ran (its fences, or why the program did not run)."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(fd)
    try:
        return json.loads(b"".join(chunks) or b"null")
    except ValueError:
        return None


def _read_from(fd: int, start: int, most: int) -> bytes:
    """Up to ``most`` bytes of an open file from ``start`` (negative: that far from its end)."""
    size = os.fstat(fd).st_size
    os.lseek(fd, max(0, size + start) if start < 0 else start, os.SEEK_SET)
    chunks, left = [], most
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _after_test() -> None:
    """Nothing of a test outlives it: in a PID namespace (this process is its first), every other process in it
    is killed; then the scratch folder is emptied."""
    import shutil

    if os.getpid() == 1:
        try:
            os.kill(-1, signal.SIGKILL)  # from a PID namespace's first process: every other process of the namespace
        except OSError:
            pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    for entry in _entries(os.getcwd()):
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                os.unlink(entry.path)
        except OSError:
            pass


class _Quitter:
    """exit() and quit(), as the site module (which the child never imports) defines them."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Use {self.name}() or Ctrl-D (i.e. EOF) to exit"

    def __call__(self, code=None):
        try:
            sys.stdin.close()
        except BaseException:  # noqa: BLE001 - as site's Quitter
            pass
        raise SystemExit(code)


def _program_limits(cpu: float, limits: dict, contained: bool) -> None:
    """A test's limits: CPU time (the kernel stops the process one second past it; the scorer judges the time
    measured), address space, output size, open files, no core dumps; the stack may grow as far as the memory limit
    (deep recursion, as judges allow); for a non-root user no new processes unless a PID namespace holds them."""
    import math

    memory = int(limits.get("memory_mb", 1024)) << 20
    soft = max(1, math.ceil(cpu))
    pairs = [
        (resource.RLIMIT_AS, memory, memory),
        (resource.RLIMIT_CPU, soft, soft + 1),
        (resource.RLIMIT_FSIZE, OUTPUT_LIMIT, OUTPUT_LIMIT),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_NOFILE, 256, 256),
    ]
    for limit, value, hard in pairs:
        try:
            resource.setrlimit(limit, (value, hard))
        except (ValueError, OSError):
            pass
    try:
        hard = resource.getrlimit(resource.RLIMIT_STACK)[1]
        stack = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
        resource.setrlimit(resource.RLIMIT_STACK, (stack, hard))
    except (ValueError, OSError):
        pass
    if os.geteuid() != 0 and not contained:  # threads need processes: allowed where a PID namespace holds them
        try:
            resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
        except (ValueError, OSError):
            pass


def _run_program(program: str, cpu: float, limits: dict, network: str, fence: dict, driver: int, status: int) -> None:
    """In the test's process: limits, fences, then the program as `python main.py < input > output` runs it."""
    import atexit
    import io
    import traceback

    _program_limits(cpu, limits, driver == 1)
    if network != "namespace":
        _no_sockets()
    isolation = _fence(fence, network, driver)
    try:
        code = compile(program, "main.py", "exec", dont_inherit=True)
    except BaseException as err:  # noqa: BLE001 - a syntax error: the program never ran
        os.write(status, json.dumps({"error": f"{type(err).__name__}: {str(err)[:300]}"}).encode())
        os._exit(1)
    os.write(status, json.dumps({"isolation": isolation}).encode())
    os.close(status)  # closed before any of the program runs: nothing it writes reaches the scorer but its output
    os.register_at_fork(after_in_child=lambda: os._exit(1))
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), "utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), "utf-8")
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)), "utf-8", "backslashreplace", line_buffering=True
    )
    builtins.exit, builtins.quit = _Quitter("exit"), _Quitter("quit")
    sys.argv = ["main.py"]
    status_code = 0
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins, "__file__": "main.py"})
    except SystemExit as stop:
        status_code = _exit_status(stop)
    except BaseException:  # noqa: BLE001 - as the interpreter: the traceback on standard error, status 1
        traceback.print_exc()
        status_code = 1
    status_code = _finish(status_code, atexit)
    os._exit(status_code)


def _exit_status(stop: SystemExit) -> int:
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code & 0xFF
    try:
        print(stop.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001
        pass
    return 1


def _finish(status_code: int, atexit) -> int:
    """What the interpreter does on its way out: wait for the program's threads, run its atexit functions, flush
    standard output (a failed flush is status 120, as the interpreter's)."""
    import traceback

    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except SystemExit as stop:
            status_code = _exit_status(stop)
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        pass
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001
        status_code = status_code or 120
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
    return status_code


# -- the scorer (the environment's side) ---------------------------------------------------------


class Failed(BaseException):  # noqa: N818 - not an Exception: a test's `except Exception` cannot swallow it
    """The run failed outside the tests' say: time, a value that is not plain data, the program gone."""


class CandidateError(Exception):
    """The candidate's function raised an exception that is not one of the builtin Exception types."""


# How a child starts: `python -I -S` (no site: the environment's .pth files are never run, and installed packages
# are never on its path, Landlock or not), then this file's code, compiled once by the scorer, read from stdin.
# Each child compiling this file anew, and running site, took a third of its start.
_BOOT = (
    "import marshal, os, sys\n"
    "size, blob = int(sys.argv[1]), b''\n"
    "while len(blob) < size:\n"
    "    part = os.read(0, size - len(blob))\n"
    "    if not part: os._exit(1)\n"
    "    blob += part\n"
    "sys.argv[:] = [sys.argv[2], '--child', *sys.argv[3:]]\n"
    "exec(marshal.loads(blob))"
)
_compiled: list = []


def _child_code() -> bytes:
    if not _compiled:
        import marshal

        with open(__file__, encoding="utf-8") as f:
            _compiled.append(marshal.dumps(compile(f.read(), __file__, "exec", dont_inherit=True)))
    return _compiled[0]


def _session_cpu(session: int) -> float | None:
    """CPU seconds (user + system) of every live process in a session (the child and what it started), from
    /proc; None where there is no /proc."""
    total, found = 0, False
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == session:  # fields after the name: state, ppid, pgrp, session, ... utime, stime
            total += int(fields[11]) + int(fields[12])
            found = True
    return total / os.sysconf("SC_CLK_TCK") if found else None


class _Child:
    """One warm child: the supervisor process, waiting for its job in its own scratch folder."""

    def __init__(self) -> None:
        import secrets
        import subprocess
        import tempfile

        self.scratch = os.path.join(tempfile.gettempdir(), f"code-run-{secrets.token_hex(8)}")
        env = {"PATH": os.defpath, "LANG": "C.UTF-8", "HOME": self.scratch, "TMPDIR": self.scratch}
        code = _child_code()
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _BOOT, str(len(code)), __file__, str(os.getpid()), self.scratch],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=env,
            start_new_session=True,
        )
        self.wfd, self.rfd = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        try:
            self.proc.stdin.write(code)  # blocking: the pool's thread (or a first rollout) waits for the child
            self.proc.stdin.flush()
        except OSError:
            pass  # it died at once: _take starts another
        os.set_blocking(self.wfd, False)
        os.set_blocking(self.rfd, False)
        self.buffer = b""
        self.left = 0.0
        self.timeout = 0.0
        self.cpu_mark: float | None = None  # the session's CPU seconds at the last look (``_computing``)
        self.started = 0.0
        self.sliced = False
        self.failure: str | None = None
        self.isolation: dict | None = None  # what the runner says it is kept to: its first message, before the program

    def fail(self, reason: str) -> Failed:
        self.failure = self.failure or reason
        return Failed(self.failure)

    def _wait(self, readable: bool) -> None:
        import select
        import time

        while True:
            start = time.monotonic()
            ready = select.select([self.rfd] if readable else [], [] if readable else [self.wfd], [], max(self.left, 0))
            self.left -= time.monotonic() - start
            if any(ready):
                return
            if not self._computing():
                raise self.fail(f"did not finish within {self.timeout:g} s")
            self.left = self.timeout  # another slice: RLIMIT_CPU, not the wall clock, ends a program that computes

    def mark(self) -> None:
        """Start a job's clocks: the session's CPU time now, and the wall time it may take in slices."""
        import time

        self.cpu_mark, self.started = _session_cpu(self.proc.pid), time.monotonic()

    def _computing(self) -> bool:
        """Past the wall bound: did the job's processes use CPU in the last slice (a busy machine starves a
        program that computes; one that sleeps or blocks uses none)? A slower program is given more slices, up
        to WALL_CAP x its CPU-time limit of wall time (RLIMIT_CPU ends it first when it computes too long)."""
        import time

        used = _session_cpu(self.proc.pid)
        if used is None or self.cpu_mark is None:
            return False  # no /proc to read: the wall bound as given
        slice_wall = self.timeout if getattr(self, "sliced", False) else WALL_FACTOR * self.timeout
        computing = used - self.cpu_mark >= CPU_SHARE * slice_wall
        self.cpu_mark, self.sliced = used, True
        return computing and time.monotonic() - self.started < WALL_CAP * self.timeout

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
                    message = self._message(body)
                    if self.isolation is None and "isolation" in message:
                        self.isolation = message["isolation"] if isinstance(message["isolation"], dict) else {}
                        continue
                    return message
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
            names = getattr(self, "names", None)  # the tests' namespace (_run_call): its classes rebuild instances
            try:
                return decode(message["value"], 0, {} if names is None else names)
            except (NotPlain, RecursionError) as err:
                raise self.fail(f"{name} returned a value that is not plain data ({err})") from None
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
    """Stands for one of the candidate's functions in the tests: arguments out, a plain value back. Equal to a
    class of its name that came back (types cross by name)."""

    __slots__ = ("_child", "_name", "__name__")

    def __init__(self, child: _Child, name: str) -> None:
        self._child, self._name, self.__name__ = child, name, name

    def __call__(self, *args, **kwargs):
        return self._child.call(self._name, args, kwargs)

    def __eq__(self, other):
        if type(other) is _TypeName or isinstance(other, type):
            return (other.name if type(other) is _TypeName else other.__qualname__) == self._name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._name)

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
                if len(_pool) < _state["wanted"]:  # else shut down while it started: it is not left waiting
                    _pool.append(child)
                    child = None
            if child is not None:
                child.close()


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


def score(program: str, spec: dict, timeout: float = 5.0, memory_mb: int = 1024, checker=None) -> dict:
    """{"passed": bool, "reason": str, "isolation": dict}: the row's tests, run here, against the program run in
    a child; "isolation" is what the child's runner was kept to (see the module's docstring; {} when none ran).
    stdin/stdout tests ("io"): ``timeout`` is each test's CPU-time limit (the spec's "time_limit" wins), and
    ``checker(input, output, expected)`` judges the rows whose spec asks for the "custom" checker."""
    if not (program or "").strip():
        return {"passed": False, "reason": "no code", "isolation": {}}
    child = _take()
    try:
        reason = _run(child, program, spec, float(timeout), int(memory_mb), checker)
    finally:
        with _lock:
            _state["busy"] -= 1
        try:
            child.proc.send_signal(signal.SIGTERM)  # it kills the program and removes its folder at once
        except OSError:
            pass
        _done.append(child)
        _wake.set()
    return {"passed": reason == "", "reason": reason, "isolation": dict(child.isolation or {})}


def _run(child: _Child, program: str, spec: dict, timeout: float, memory_mb: int, checker=None) -> str:
    mode = spec.get("mode") or "call"
    if mode == "io":
        memory_mb = max(memory_mb, int(spec.get("memory_mb") or 0))
    child.timeout, child.left, child.sliced = timeout, WALL_FACTOR * timeout, False
    child.mark()
    try:
        child.send({"program": program, "mode": mode, "limits": {"memory_mb": memory_mb, "cpu_seconds": timeout}})
        ready = child.reply()
        if "error" in ready:
            error = str(ready["error"])[:300]
            if error.startswith("ModuleNotFoundError"):  # an installed package: closed to every program here
                error += " (a program may import only the standard library)"
            return f"the program did not run: {error}"
        if mode == "io":
            reason = _run_io(child, spec, timeout, memory_mb, checker)
        else:
            reason = _run_call(child, spec, ready.get("ready"), program)
    except Failed:
        pass
    except Exception as err:  # noqa: BLE001 - a failed assert, or anything else the tests raised
        reason = f"{type(err).__name__}: {str(err)[:200]}"
    return child.failure or reason


def _run_call(child: _Child, spec: dict, names, program: str = "") -> str:
    """The tests, in a namespace of their own: the program's standard-library imports (modules, values, the
    standard types that cross; see `_imported`), then the prompt's helpers, then a proxy for each function the
    program defines (never over a helper; over a builtin only for the function under test, see `_shadowing`),
    then the row's setup code (it may build the program's own classes), then the tests. HumanEval-style tests (they define `check(candidate)`) are then called with the entry point."""
    import ast

    names = [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
    defined, imports = _top_level(program)
    scope = {"__name__": TESTS, "__builtins__": builtins}
    child.names = scope  # the classes the tests define: how a returned instance is rebuilt
    imported = _imported(imports)
    scope.update(imported)
    before = dict(scope)
    if spec.get("helpers"):
        exec(compile(str(spec["helpers"]), "<helpers>", "exec", dont_inherit=True), scope)
    trusted = {k for k, v in scope.items() if k not in before or before[k] is not v}
    tests = spec.get("tests") or ""
    if isinstance(tests, list):
        tests = "\n".join(str(t) for t in tests)
    tree = ast.parse(tests, "<tests>")
    entry = spec.get("entry_point")
    humaneval = any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body)
    shadow = None if humaneval else _shadowing(tree, [n for n in names if n in defined and n not in trusted], entry)
    for name in names:
        if name in trusted or name in imported and name not in defined:
            continue  # a helper's, or the standard type the program imported (Counter) as itself
        if name == shadow or not hasattr(builtins, name):
            scope[name] = _Proxy(child, name)
    if spec.get("setup"):  # after the proxies: MBPP's setup builds trees of the program's own Node class
        exec(compile(str(spec["setup"]), "<setup>", "exec", dont_inherit=True), scope)
    exec(compile(tree, "<tests>", "exec", dont_inherit=True), scope)
    if humaneval and callable(scope.get("check")) and entry:
        if entry not in names:
            return f"the program defines no {entry}"
        scope["check"](_Proxy(child, entry))
    return ""


_NOT_IMPORTED = frozenset(  # never imported here: they act when imported (print, open a browser, a window, the tty)
    {"__future__", "__hello__", "__phello__", "__main__", "builtins", "antigravity", "this", "idlelib", "tkinter"}
    | {"turtle", "turtledemo", "readline"}
)


def _top_level(program: str) -> tuple[set, list]:
    """(the names the program binds at its top level other than by import, its import statements there)."""
    import ast

    try:
        tree = ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set(), []
    defined, imports, todo = set(), [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            defined.add(node.id)
        elif not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return defined, imports


def _imported(imports: list) -> dict:
    """What the program's standard-library imports bind that the tests may use as they are (a module, a constant,
    one of the standard types that cross: `import sys`, `from math import pi`, `from collections import Counter`):
    each under its own name only, never over a builtin, never another callable (the tests reach the program's
    other functions and classes through proxies, in the child)."""
    import ast
    import importlib

    out = {}
    for node in imports:
        if isinstance(node, ast.Import):
            wanted = [(a.name, a.asname or a.name.partition(".")[0], None) for a in node.names]
        elif node.level == 0 and node.module:
            wanted = [(node.module, a.asname or a.name, a.name) for a in node.names]
        else:
            continue
        for module, bound, attribute in wanted:
            root = module.partition(".")[0]
            if root not in _STDLIB_NAMES or root in _NOT_IMPORTED:
                continue
            try:
                found = importlib.import_module(module)
                if attribute is None:
                    found = found if bound == module else sys.modules[root] if bound == root else None
                    values = {bound: found} if found is not None and bound == found.__name__.rpartition(".")[2] else {}
                elif attribute == "*":
                    public = getattr(found, "__all__", None) or [k for k in vars(found) if not k.startswith("_")]
                    values = {k: getattr(found, k) for k in public if isinstance(k, str) and hasattr(found, k)}
                elif bound == attribute:
                    if not hasattr(found, attribute):
                        importlib.import_module(f"{module}.{attribute}")
                    values = {bound: getattr(found, attribute)}
                else:
                    values = {}
            except Exception:  # noqa: BLE001 - not importable here: the tests go without it
                continue
            for name, value in values.items():
                standard = any(value is s for s in _STANDARD)
                if _dunder(name) or hasattr(builtins, name) or callable(value) and not standard:
                    continue
                if type(value) is type(sys) and value.__name__.rpartition(".")[2] != name:
                    continue
                out[name] = value
    return out


def _shadowing(tree, mine: list, entry) -> str | None:
    """Which of the program's functions named like a builtin (`sum`, `input`, `len`) the tests reach instead of
    the builtin: the row's entry point; without one, the only builtin-named function the tests call when they
    call none of the program's other functions, and only as `assert name(...) == expected` (the name nowhere
    else), so a program's `set`, `abs` or `all` never decides an assert the real function under test takes part in."""
    import ast

    named = [n for n in mine if hasattr(builtins, n)]
    if entry:
        return entry if entry in named else None
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    if any(n in used and not hasattr(builtins, n) for n in mine):
        return None
    called = [n for n in named if n in used]
    if len(called) != 1:
        return None
    name, allowed = called[0], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
            left, op, right = node.test.left, node.test.ops[0], node.test.comparators[0]
            if (
                isinstance(op, ast.Eq)
                and isinstance(left, ast.Call)
                and isinstance(left.func, ast.Name)
                and left.func.id == name
                and not any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(right))
            ):
                allowed.add(id(left.func))
    uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name]
    return name if all(id(n) in allowed for n in uses) else None


# A program that sleeps or waits is stopped after this many times its CPU-time limit, plus IO_WALL_SECONDS, of
# wall-clock time, stretched by the machine's load: a busy machine slows a program, it never fails one.
IO_WALL_FACTOR, IO_WALL_SECONDS = 3.0, 2.0
_NUMBER = None


def _load() -> float:
    """How busy the machine is: its load average per core, at least 1."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:
        return 1.0


def _run_io(child: _Child, spec: dict, timeout: float, memory_mb: int, checker=None) -> str:
    """Each test in a process of its own (the child's _drive_io), judged here as contest judges do: a crash or a
    non-zero exit status fails the test whatever was printed; over the CPU-time limit fails it; the output is
    compared token by token (``same_output``: line endings, trailing and repeated whitespace ignored, whitespace
    between tokens required), numbers within the spec's "tolerance" where it has one, or by a checker. Stops at
    the first failing test: "test N of M: why"."""
    cases = spec.get("cases") or []
    if not cases:
        return "the row has no tests"
    limit = float(spec.get("time_limit") or timeout)
    wall = (IO_WALL_FACTOR * limit + IO_WALL_SECONDS) * _load()
    judge = _checker(spec, checker)
    for n, case in enumerate(cases, 1):
        child.timeout, child.left = wall, wall + 10.0  # the child stops the program at `wall`; this, a stuck child
        child.send({"input": str(case.get("input", "")), "cpu_seconds": limit, "wall_seconds": wall})
        got = child.reply()
        why = _io_failure(got, case, spec, limit, wall, memory_mb, judge)
        if why:
            return f"test {n} of {len(cases)}: {why}"
    return ""


def _io_failure(got: dict, case: dict, spec: dict, limit: float, wall: float, memory_mb: int, judge) -> str:
    """Why one test failed ('' when it passed)."""
    if "error" in got:
        return f"the program did not run: {got['error']}"
    status, code = got.get("status"), got.get("code")
    cpu = got.get("cpu") if isinstance(got.get("cpu"), (int, float)) else 0.0
    last = next((line.strip() for line in reversed(str(got.get("stderr") or "").splitlines()) if line.strip()), "")
    if got.get("wall"):
        return f"did not finish within {wall:.1f} s of wall-clock time ({cpu:.2f} s of CPU time: it sleeps or waits)"
    if cpu > limit or status == "SIGXCPU" or status == "SIGKILL" and cpu >= limit - 0.1:
        return f"time limit exceeded ({max(cpu, limit):.2f} s of CPU time or more; the limit is {limit:g} s)"
    if status == "SIGXFSZ" or got.get("output_cut"):
        return f"output limit exceeded (more than {OUTPUT_LIMIT >> 20} MB)"
    if status != "exit":
        return f"crashed ({status}" + (f"; {last[:200]}" if last else "") + ")"
    if code != 0:
        memory = f"; the memory limit is {memory_mb} MB" if "MemoryError" in last else ""
        return f"exited with status {code}" + (f": {last[:200]}" if last else "") + memory
    output, expected = str(got.get("output") or ""), str(case.get("output", ""))
    if judge is not None:
        try:
            verdict = judge(str(case.get("input", "")), output, expected)
        except Exception as err:  # noqa: BLE001 - the checker's own failure fails the test, named
            return f"the checker raised {type(err).__name__}: {str(err)[:200]}"
        if verdict is not None:
            return "" if verdict else "wrong answer (the checker refused the output)"
    tolerance = spec.get("tolerance")
    return _difference(output, expected, float(tolerance) if tolerance else None)


def same_output(got: str, expected: str, tolerance: float | None = None) -> bool:
    """Contest judges' comparison: the same tokens (whitespace-separated words) in order, so line endings, trailing
    whitespace and repeated blanks do not matter but the whitespace between two tokens does ("1 2" is not "12");
    with a ``tolerance``, two numbers match within that absolute or relative error (|a - b| <= tol * max(1, |b|))."""
    return _difference(got, expected, tolerance) == ""


def _difference(got: str, expected: str, tolerance: float | None) -> str:
    import math
    import re

    global _NUMBER
    if _NUMBER is None:
        _NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
    mine, theirs = got.split(), expected.split()
    for k, (a, b) in enumerate(zip(mine, theirs), 1):
        if a == b:
            continue
        if tolerance is not None and _NUMBER.fullmatch(a) and _NUMBER.fullmatch(b):
            x, y = float(a), float(b)
            if math.isfinite(x) and math.isfinite(y) and abs(x - y) <= tolerance * max(1.0, abs(y)):
                continue
        return f"wrong answer (token {k}: expected {b[:40]!r}, got {a[:40]!r})"
    if len(mine) != len(theirs):
        return f"wrong answer ({len(theirs)} tokens expected, got {len(mine)})"
    return ""


_checkers: dict = {}


def _checker(spec: dict, custom):
    """The checker a row's spec asks for: "custom" is the environment's own function (``custom``); Python source
    defining ``check(input, output, expected)`` is that function (run here, never in the program's process);
    None for the token comparison."""
    wanted = spec.get("checker")
    if not wanted:
        return None
    if wanted == "custom":
        return custom
    source = str(wanted)
    if source not in _checkers:
        scope = {"__name__": "__checker__", "__builtins__": builtins}
        exec(compile(source, "<checker>", "exec", dont_inherit=True), scope)
        if not callable(scope.get("check")):
            raise ValueError("the row's checker defines no check(input, output, expected)")
        if len(_checkers) > 256:
            _checkers.clear()
        _checkers[source] = scope["check"]
    return _checkers[source]


if __name__ == "__main__" and sys.argv[1:2] == ["--child"]:
    _child(int(sys.argv[2]), sys.argv[3])
    os._exit(0)
