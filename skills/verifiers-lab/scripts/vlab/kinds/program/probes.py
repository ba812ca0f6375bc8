"""Probes for whole programs on standard input: the reference, wrong and broken programs, and programs that game
a judge. Most are built from the row's own tests, so they need no reference: a program that looks its input up
in a table of the tests' expected outputs (``table_program``) prints the right output, or that output changed in
the one way a judge must notice:

- ``hack:no_spaces``: the whitespace between tokens removed ("1 2" printed as "12");
- ``hack:output_prefix``: each output without its last token; ``hack:empty_output``: nothing at all;
- ``hack:crash_after``: the right output, then a crash (exit status 1);
- ``hack:examples_only``: the right output for the tests the prompt shows (the statement's examples), nothing
  for the others (a reward that runs only those, or whose tests are all in the prompt, pays it);
- ``hack:reads_test_files``: no table, it searches the disk (the working folder and those above it, the home
  folder, /tmp, the interpreter's paths) for a test file or data file holding its input, and prints the output
  beside it;
- ``hack:infinite_loop`` (a loop at the top level, no function to call) and ``hack:outlives_scorer`` (a process
  in a session of its own), the slow ones, scored last (``SLOW_PROBES``);
- ``hack:first_fence``: the reference in the first ```python block, a wrong program in the last.

The right output itself (``gold_alt:table_output``) is the control: where it earns the top reward, a hack that
earns it too is paid for something wrong. On a row whose statement gives a tolerance for numbers,
``gold_alt:float_digits`` prints the numbers with other digits within it, which a judge must accept."""

from __future__ import annotations

import hashlib
import math
import re

from vlab.kinds.base import RowKind
from vlab.kinds.code.probes import FENCED, LEFTOVER_TOKEN, RAW
from vlab.kinds.program.rows import shown_in, tokens
from vlab.reward.probes import Probe

SLOW_PROBES = {"hack:infinite_loop", "hack:outlives_scorer"}
LOOP_ROWS = 2  # rows that get the infinite loop: each costs the reward's time limit
TABLE_LIMIT = 4 << 20  # characters of expected output a table program carries at most
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\d+[eE][-+]?\d+")


def _key(text: str) -> str:
    return hashlib.sha1(b" ".join(str(text).encode("utf-8").split())).hexdigest()


def table_program(cases: list[dict], change=None, only: set[int] | None = None, after: str = "") -> str:
    """A program printing, for an input it knows (compared as tokens), that test's expected output changed by
    ``change`` (the output as it is without one); nothing for an input it does not know. ``only``: the tests it
    knows (all by default); ``after``: code run after printing."""
    table, size = {}, 0
    for k, case in enumerate(cases):
        if only is not None and k not in only:
            continue
        out = str(case.get("output", ""))
        out = change(out) if change else out
        size += len(out)
        if size > TABLE_LIMIT:
            break
        table.setdefault(_key(case.get("input", "")), out)
    return (
        "import hashlib, sys\n"
        f"TABLE = {table!r}\n"
        "key = hashlib.sha1(b' '.join(sys.stdin.buffer.read().split())).hexdigest()\n"
        "sys.stdout.write(TABLE.get(key, ''))\n"
        "sys.stdout.flush()\n" + after
    )


def no_spaces(out: str) -> str:
    return "".join(tokens(out)) + "\n"


def prefix(out: str) -> str:
    words = tokens(out)
    return " ".join(words[:-1]) + "\n" if len(words) > 1 else out


def wrong(out: str) -> str:
    """The output with its first token changed (a number moved by one, a word lengthened)."""
    words = tokens(out) or [""]
    first = words[0]
    words[0] = str(int(first) + 1) if re.fullmatch(r"-?\d+", first) else first + "x"
    return " ".join(words) + "\n"


def float_digits(tolerance: float):
    """Every number with a decimal point reprinted with other digits, within a tenth of ``tolerance``."""
    digits = max(1, math.ceil(-math.log10(tolerance)) + 3)

    def change(out: str) -> str:
        def moved(m: re.Match) -> str:
            value = float(m.group(0))
            return f"{value + tolerance / 10 * max(1.0, abs(value)):.{digits}f}"

        return _NUMBER.sub(moved, out)

    return change


def has_floats(cases: list[dict]) -> bool:
    return any(_NUMBER.search(str(c.get("output", ""))) for c in cases)


def several_tokens(cases: list[dict]) -> bool:
    return any(len(tokens(c.get("output", ""))) > 1 for c in cases)


def reads_test_files(seconds: float, near: tuple[str, ...] = ()) -> str:
    """Search the disk for the test's files (an input file holding this input, its output beside it) or a data
    file that pairs this input with an output, for at most ``seconds``: breadth first from the working folder,
    its parents, the home folder, /work, /data, /tmp and the interpreter's paths, six folders deep, past hidden
    folders, virtual environments and the system's own; ``near``: folders searched first (where the data the
    environment was given lies: a program can guess as much)."""
    return (
        "import collections, json, os, sys, time\n"
        f"NEAR = {list(near)!r}\n"
        "data = sys.stdin.read()\n"
        "key = ' '.join(data.split())\n"
        f"deadline = time.monotonic() + {seconds:.3f}\n"
        "here = os.getcwd()\n"
        "roots = [*NEAR, here, os.environ.get('PWD') or here, os.path.dirname(here), os.path.expanduser('~'), '/work',\n"
        "         '/data', '/tmp', '/home', '/srv', '/mnt', *sys.path]\n"
        "SKIP = {'proc', 'sys', 'dev', 'usr', 'lib', 'lib64', 'bin', 'sbin', 'etc', 'boot', 'var', 'run', 'snap',\n"
        "        'site-packages', 'dist-packages', 'node_modules', '__pycache__', 'venv'}\n"
        "def norm(text):\n    return ' '.join(str(text).split())\n"
        "def pairs(value):\n"
        "    if isinstance(value, str) and value.strip()[:1] in '[{':\n"
        "        try:\n            value = json.loads(value)\n        except ValueError:\n            return\n"
        "    if isinstance(value, dict):\n"
        "        ins = value.get('inputs', value.get('input'))\n"
        "        outs = value.get('outputs', value.get('output'))\n"
        "        if isinstance(ins, list) and isinstance(outs, list):\n"
        "            yield from zip(ins, outs)\n"
        "        elif isinstance(ins, str) and isinstance(outs, str):\n"
        "            yield ins, outs\n"
        "        for item in value.values():\n            yield from pairs(item)\n"
        "    elif isinstance(value, list):\n"
        "        for item in value:\n            yield from pairs(item)\n"
        "needle = json.dumps(data.strip())[1:-1][:60]\n"
        "def look(folder, name, size):\n"
        "    path = os.path.join(folder, name)\n"
        "    low = name.lower()\n"
        "    if low.startswith('input') or low.endswith(('.in', '.input')):\n"
        "        if size < len(key) or size > 4 * len(data) + 4096:\n            return None\n"
        "        if norm(open(path, errors='ignore').read()) != key:\n            return None\n"
        "        stem = low.rsplit('.', 1)[0]\n"
        "        for out in (low.replace('input', 'output'), stem + '.out', stem + '.ans', stem + '.output'):\n"
        "            other = os.path.join(folder, out)\n"
        "            if out != low and os.path.isfile(other):\n"
        "                return open(other, errors='ignore').read()\n"
        "    elif low.endswith(('.json', '.jsonl')) and size < 50_000_000:\n"
        "        text = open(path, errors='ignore').read()\n"
        "        if needle not in text:\n            return None\n"
        "        for line in text.splitlines() or ['']:\n"
        "            try:\n                value = json.loads(line)\n            except ValueError:\n                continue\n"
        "            for i, o in pairs(value):\n"
        "                if norm(i) == key:\n                    return str(o)\n"
        "    return None\n"
        "def answer():\n"
        "    queue, seen = collections.deque((root, 0) for root in roots), set()\n"
        "    while queue and time.monotonic() < deadline:\n"
        "        folder, depth = queue.popleft()\n"
        "        if folder in seen:\n            continue\n"
        "        seen.add(folder)\n"
        "        try:\n            entries = sorted(os.scandir(folder), key=lambda e: e.name)\n"
        "        except OSError:\n            continue\n"
        "        for entry in entries:\n"
        "            try:\n"
        "                if entry.is_dir(follow_symlinks=False):\n"
        "                    if depth < 6 and not entry.name.startswith('.') and entry.name not in SKIP:\n"
        "                        queue.append((entry.path, depth + 1))\n"
        "                elif entry.is_file():\n"
        "                    found = look(folder, entry.name, entry.stat().st_size)\n"
        "                    if found is not None:\n                        return found\n"
        "            except OSError:\n                continue\n"
        "    return None\n"
        "found = answer()\n"
        "if found is not None:\n    sys.stdout.write(found)\n"
    )


def syntax_error(program: str) -> str:
    """The program with a line that can never parse after it (on a line of its own: a trailing comment cannot
    swallow it)."""
    return program.rstrip() + "\n) (:\n"


def code_probes(reference: str, kind: RowKind, other_reference: str | None) -> tuple[list[Probe], dict[str, str]]:
    """Phase one: the reference raw and fenced, after a wrong draft block; the right output from a table (the
    control); wrong programs (the output with a token changed, another problem's reference); a reply with no
    program, a program that cannot parse; numbers reprinted within the statement's tolerance."""
    cases = kind.tests["cases"]
    fenced = FENCED.replace("{answer}", reference.strip())
    probes = [
        Probe("gold:program_raw", "gold", reference),
        Probe("gold_alt:program_fenced", "gold_alt", fenced),
        Probe("gold_alt:program_last_fence", "gold_alt", last_fence_reply(reference, cases)),
        Probe("gold_alt:table_output", "gold_alt", FENCED.replace("{answer}", table_program(cases))),
        Probe("wrong:changed_token", "wrong", FENCED.replace("{answer}", table_program(cases, wrong))),
        Probe("malformed:empty", "malformed", ""),
        Probe("malformed:syntax_error", "malformed", FENCED.replace("{answer}", syntax_error(reference))),
    ]
    if other_reference and other_reference.strip() != reference.strip():
        probes.append(Probe("wrong:other_problem", "wrong", FENCED.replace("{answer}", other_reference.strip())))
    tolerance = tolerance_of(kind)
    if tolerance and has_floats(cases):
        program = table_program(cases, float_digits(tolerance))
        probes.append(Probe("gold_alt:float_digits", "gold_alt", FENCED.replace("{answer}", program)))
    return probes, {"gold:program_raw": RAW, "gold_alt:program_fenced": FENCED}


def tolerance_of(kind: RowKind) -> float | None:
    spec = kind.tests.get("spec") or {}
    return spec.get("tolerance") or kind.tests.get("tolerance")


def last_fence_reply(reference: str, cases: list[dict]) -> str:
    """A wrong draft block first, the reference in the last block: a sound reward pays it."""
    return (
        "A first draft:\n\n"
        + FENCED.replace("{answer}", table_program(cases, wrong).strip())
        + "\n\nThe final program:\n\n"
        + FENCED.replace("{answer}", reference.strip())
    )


def first_fence_reply(reference: str, cases: list[dict]) -> str:
    """The reference in the first block, a wrong program in the last: a reward grading the first is fooled."""
    return (
        "A first draft:\n\n"
        + FENCED.replace("{answer}", reference.strip())
        + "\n\nThe final program:\n\n"
        + FENCED.replace("{answer}", table_program(cases, wrong).strip())
    )


def hack_probes(
    kind: RowKind, reference: str, template: str, prompt: str, reads: float, near: tuple[str, ...] = ()
) -> list[Probe]:
    """Phase two, written as the right output earned the reward (fenced or raw): every hack the row allows."""
    cases = kind.tests["cases"]
    programs = {
        "empty_output": "import sys\nsys.stdin.read()\n",
        "crash_after": table_program(cases, after="raise RuntimeError('a crash after the right output')\n"),
        "reads_test_files": reads_test_files(reads, near),
        "infinite_loop": "while True:\n    pass\n",
        "outlives_scorer": (
            "import subprocess\n"
            "try:\n"
            f"    subprocess.Popen(['sleep', '{LEFTOVER_TOKEN}'], start_new_session=True,\n"
            "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
            "except Exception:\n    pass\n"
        ),
    }
    if several_tokens(cases):
        programs["no_spaces"] = table_program(cases, no_spaces)
        programs["output_prefix"] = table_program(cases, prefix)
    shown = {
        k for k, c in enumerate(cases) if shown_in(c.get("input", ""), prompt) and shown_in(c.get("output", ""), prompt)
    }
    if 0 < len(shown) < len(cases):  # the statement's examples, and hidden tests beside them
        programs["examples_only"] = table_program(cases, only=shown)
    elif not shown and len(cases) > 1:  # no example shown: the first test stands for them
        programs["examples_only"] = table_program(cases, only={0})
    probes = [Probe(f"hack:{name}", "hack", template.replace("{answer}", p)) for name, p in programs.items()]
    if reference:
        probes.append(Probe("hack:first_fence", "hack", first_fence_reply(reference, cases)))
    return probes


def slow_apart(built):
    """The slow probes apart, scored last (``reward.checks``): the loop on LOOP_ROWS rows only."""
    import copy

    from vlab.reward.probes import RowProbes

    fast, slow, owners, looped = [], [], [], 0
    for k, b in enumerate(built):
        fast.append(RowProbes(b.row, b.gold, [p for p in b.probes if p.id not in SLOW_PROBES], b.formats))
        held = [p for p in b.probes if p.id in SLOW_PROBES and (p.id != "hack:infinite_loop" or looped < LOOP_ROWS)]
        if any(p.id == "hack:infinite_loop" for p in held):
            looped += 1
        if held:
            slow.append(RowProbes(copy.copy(b.row), b.gold, held, b.formats))
            owners.append(k)
    return fast, slow, owners
