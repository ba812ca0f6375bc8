"""Issue 34: the code templates' child cannot read what the program must not know. A program that looks its
answer up in the dataset file, the environment's package folder (the harness beside it, its data/train.jsonl),
site-packages or the scorer's working folder earns 0 in both templates' harness; a correct program still
passes, the standard library still imports, and the result names the isolation that ran (Landlock here)."""

from __future__ import annotations

import asyncio
import ctypes
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
import reward_kind_fixtures as fx
from conftest import SKILL_ROOT

from vlab.core.result import Result
from vlab.reward.checks import TestRewardRequest, run_test_reward

TEMPLATES = SKILL_ROOT / "templates" / "environments"
MODULES = {"v1-code": "v1_code", "classic-code": "classic_code"}
ASSERTS = ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(20, 22) == 42"]
SPEC = {"mode": "call", "tests": "\n".join(ASSERTS), "entry_point": None}
GOOD = "def add(a, b):\n    return a + b\n"
ROW = {"prompt": "Write add(a, b) returning a + b.", "test": "\n".join(ASSERTS), "entry_point": "add"}
STDLIB = (
    "json re collections math itertools functools heapq bisect string fractions decimal datetime typing dataclasses"
).split()


def _kernel_landlock() -> int:
    """The kernel's Landlock ABI (0: none): landlock_create_ruleset(NULL, 0, VERSION)."""
    try:
        syscall = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return 0
    syscall.restype = ctypes.c_long
    return max(0, syscall(ctypes.c_long(444), None, ctypes.c_long(0), ctypes.c_long(1)))


LANDLOCK = _kernel_landlock()
needs_landlock = pytest.mark.skipif(LANDLOCK < 1, reason="the kernel has no Landlock")


def lookup(paths: list[str]) -> str:
    """A program that solves nothing: it reads the expected value of the call out of the first file it can open
    among `paths` (the asserts of the rows, as the data files hold them)."""
    return textwrap.dedent(
        f"""\
        import re

        PATHS = {paths!r}


        def add(a, b):
            for path in PATHS:
                try:
                    with open(path) as f:
                        text = f.read()
                except OSError:
                    continue
                for x, y, want in re.findall(r"add\\((-?\\d+), (-?\\d+)\\) == (-?\\d+)", text):
                    if (int(x), int(y)) == (a, b):
                        return int(want)
            return None
        """
    )


PEEK = textwrap.dedent(
    """\
    import os


    def peek(path):
        try:
            with open(path, "rb") as f:
                return "read " + f.read(64).decode("latin-1")
        except OSError as err:
            return type(err).__name__


    def listing(path):
        try:
            return "listed %d" % len(os.listdir(path))
        except OSError as err:
            return type(err).__name__


    def importing(name):
        try:
            __import__(name)
            return "imported"
        except (ImportError, OSError) as err:
            return type(err).__name__
    """
)


def load_harness(folder: Path, module: str):
    """The harness of the package copied to `folder`, loaded from there under a name of its own."""
    name = f"iso_{module}_harness_{abs(hash(str(folder)))}"
    spec = importlib.util.spec_from_file_location(name, folder / f"{module}_harness.py")
    harness = importlib.util.module_from_spec(spec)
    sys.modules[name] = harness
    spec.loader.exec_module(harness)
    return harness


@pytest.fixture(params=list(MODULES))
def package(request, tmp_path, monkeypatch):
    """(template, the package folder: a copy of the template with data/train.jsonl, its harness module, the
    dataset file passed by path, a file in the scorer's working folder); every file holds the rows' asserts and
    is readable by every user, so only the isolation keeps the program from them."""
    template = request.param
    folder = tmp_path / template
    shutil.copytree(TEMPLATES / template, folder)
    (folder / "data").mkdir()
    rows = "".join(json.dumps(r) + "\n" for r in [ROW])
    (folder / "data" / "train.jsonl").write_text(rows)
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text(rows)
    project = tmp_path / "project"
    project.mkdir()
    (project / "answers.txt").write_text("\n".join(ASSERTS) + "\n")
    for path in (folder / "data" / "train.jsonl", dataset, project / "answers.txt"):
        path.chmod(0o644)
    monkeypatch.chdir(project)
    harness = load_harness(folder, MODULES[template])
    yield template, folder, harness, dataset, project
    harness.shutdown()


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def places(folder: Path, module: str, dataset: Path, project: Path) -> dict[str, Path]:
    """(a) the dataset file, (b) the package's harness and data/train.jsonl, (c) a file in site-packages,
    (d) a file in the scorer's working folder."""
    return {
        "dataset_path": dataset,
        "package_harness": folder / f"{module}_harness.py",
        "package_data": folder / "data" / "train.jsonl",
        "site_packages": site_packages() / "verifiers" / "__init__.py",
        "working_folder": project / "answers.txt",
    }


@needs_landlock
def test_a_program_that_reads_its_answers_from_the_data_earns_nothing(package):
    template, folder, harness, dataset, project = package
    where = places(folder, MODULES[template], dataset, project)
    for name, path in where.items():
        assert path.is_file() and os.access(path, os.R_OK), (name, path)
    # without the fence the probe works: run here, it finds every answer in the data files
    scope: dict = {}
    exec(lookup([str(where["dataset_path"])]), scope)
    assert [scope["add"](1, 2), scope["add"](-1, 1), scope["add"](20, 22)] == [3, 0, 42]
    for name in ("dataset_path", "package_data", "working_folder"):
        got = harness.score(lookup([str(where[name])]), SPEC, timeout=5.0)
        assert got["passed"] is False and "AssertionError" in got["reason"], (name, got)
        assert got["isolation"]["landlock"] == LANDLOCK, got
    # relative to the program's own folder (its scratch folder) there is nothing either
    got = harness.score(lookup(["answers.txt", "data/train.jsonl", "../answers.txt"]), SPEC, timeout=5.0)
    assert got["passed"] is False, got
    good = harness.score(GOOD, SPEC, timeout=5.0)
    assert good["passed"] is True, good


@needs_landlock
def test_the_program_cannot_read_list_or_import_what_it_must_not_know(package):
    """The tests pass only if every read, listing and import below is refused (each assert names it)."""
    template, folder, harness, dataset, project = package
    where = places(folder, MODULES[template], dataset, project)
    denied = "('PermissionError', 'FileNotFoundError')"
    tests = [f"assert peek({str(p)!r}) in {denied}, ({n!r}, peek({str(p)!r}))" for n, p in where.items()]
    folders = [folder, folder / "data", site_packages(), project, Path.cwd(), dataset.parent, Path("/tmp")]
    tests += [f"assert listing({str(f)!r}) == 'PermissionError', ({str(f)!r}, listing({str(f)!r}))" for f in folders]
    tests += [
        f"assert peek({str(Path(__file__))!r}) in {denied}",  # the test source
        f"assert peek('/proc/{os.getpid()}/cmdline') in {denied}",  # the scorer's process
        "assert importing('verifiers') == 'ModuleNotFoundError'",
        f"assert importing({MODULES[template]!r}) == 'ModuleNotFoundError'",
        f"assert importing({MODULES[template] + '_harness'!r}) == 'ModuleNotFoundError'",
        # its own scratch folder is its to use
        "assert listing('.').startswith('listed')",
    ]
    spec = {"mode": "call", "tests": "\n".join(tests), "entry_point": None}
    got = harness.score(PEEK, spec, timeout=5.0)
    assert got["passed"] is True, got
    isolation = got["isolation"]
    assert isolation["landlock"] == LANDLOCK and "scratch folder" in isolation["reads"], isolation
    assert set(isolation) >= {"landlock", "uid", "network", "pid_namespace", "reads", "notes"}, isolation


def test_an_installed_package_is_never_importable_and_the_reason_says_so(package):
    """Landlock or not, the child starts without site: a program importing an installed package (pytest is
    one here) does not run, and the reason names the rule rather than leaving a bare ModuleNotFoundError."""
    template, folder, harness, dataset, project = package
    got = harness.score("import pytest\n\n" + GOOD, SPEC, timeout=5.0)
    assert got["passed"] is False, got
    assert "No module named 'pytest'" in got["reason"] and "only the standard library" in got["reason"], got


def test_the_result_says_which_isolation_ran(package):
    template, folder, harness, dataset, project = package
    got = harness.score(GOOD, SPEC, timeout=5.0)
    assert got["passed"] is True, got
    isolation = got["isolation"]
    assert isolation["landlock"] == LANDLOCK, isolation
    if not LANDLOCK:
        assert any("Landlock" in note for note in isolation["notes"]), isolation
    if os.geteuid() != 0:
        assert isolation["uid"] == os.geteuid(), isolation
    elif isolation["uid"] == 0:  # kept root only with the reason: this machine's interpreter lives under /root
        assert any(note.startswith("uid not changed") for note in isolation["notes"]), isolation
    else:
        assert isolation["uid"] == 65534, isolation
    assert isinstance(isolation["pid_namespace"], bool) and isolation["network"], isolation
    assert harness.score("", SPEC)["isolation"] == {}


def test_the_standard_library_still_imports(package):
    template, folder, harness, dataset, project = package
    program = (
        "import "
        + ", ".join(STDLIB)
        + "\n"
        + textwrap.dedent(
            """\
        import random, hashlib, subprocess, tempfile, zoneinfo


        def add(a, b):
            total = functools.reduce(lambda x, y: x + y, itertools.chain([a], [b]))
            assert math.isclose(float(fractions.Fraction(total)), float(decimal.Decimal(total)))
            heap = [b, a]
            heapq.heapify(heap)
            assert bisect.bisect([1, 2], 1) == 1 and string.digits and typing.Any and dataclasses.field
            assert re.fullmatch(r"-?\\d+", json.dumps(total)) and collections.Counter([a])[a] == 1
            assert datetime.date(2024, 1, 2).isoformat() == "2024-01-02"
            with tempfile.TemporaryDirectory() as scratch:  # its own scratch folder is writable
                with open(scratch + "/x", "w") as f:
                    f.write(hashlib.sha256(str(random.random()).encode()).hexdigest())
            with open("/dev/null", "w") as f:
                f.write("x")
            return total
        """
        )
    )
    got = harness.score(program, SPEC, timeout=10.0)
    assert got["passed"] is True, got


@needs_landlock
def test_every_landlock_abi_keeps_the_data_closed_and_the_standard_library_open(tmp_path):
    """The ruleset made for each ABI up to the kernel's (an older kernel's rights: no truncate below 3, no
    network below 4, no scoping below 6): the data stays closed, the standard library and /dev/null open."""
    data = tmp_path / "rows.jsonl"
    data.write_text("secret\n")
    data.chmod(0o644)
    script = textwrap.dedent(
        f"""\
        import importlib.util, json, os, sys, tempfile
        spec = importlib.util.spec_from_file_location("h", {str(TEMPLATES / "v1-code" / "v1_code_harness.py")!r})
        h = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(h)
        out = {{}}
        for most in range(1, {LANDLOCK} + 1):
            scratch = tempfile.mkdtemp()
            ruleset, abi, why = h._landlock(scratch, most)
            fence = {{"ruleset": ruleset, "abi": abi, "uid": None, "notes": [], "own_pids": False}}
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                report = h._fence(fence, "namespace", os.getppid())
                try:
                    open({str(data)!r}).read()
                    data = "read"
                except OSError as err:
                    data = type(err).__name__
                import fractions, colorsys, statistics
                with open("/dev/null", "w") as f:
                    f.write("x")
                with open(os.path.join(scratch, "x"), "w") as f:
                    f.write("x")
                os.rename(os.path.join(scratch, "x"), os.path.join(scratch, "y"))
                os.write(write, json.dumps({{"abi": report["landlock"], "data": data}}).encode())
                os._exit(0)
            os.close(write)
            os.waitpid(pid, 0)
            out[most] = json.loads(os.read(read, 4096) or b"null")
            os.close(read)
        print(json.dumps(out))
        """
    )
    done = subprocess.run([sys.executable, "-I", "-B", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got == {str(k): {"abi": k, "data": "PermissionError"} for k in range(1, LANDLOCK + 1)}, got


SYSTEM_PYTHON = Path("/usr/bin/python3")


@pytest.mark.skipif(os.geteuid() != 0 or not SYSTEM_PYTHON.is_file(), reason="needs root and /usr/bin/python3")
def test_a_root_scorer_runs_the_program_as_nobody(tmp_path):
    """With an interpreter whose standard library every user can read (the system's), a root scorer's program
    runs as uid 65534: a file that grants other users nothing stays closed even where Landlock would not."""
    closed = tmp_path / "closed.txt"
    closed.write_text("\n".join(ASSERTS) + "\n")
    closed.chmod(0o600)
    script = textwrap.dedent(
        f"""\
        import importlib.util, json
        spec = importlib.util.spec_from_file_location("h", {str(TEMPLATES / "v1-code" / "v1_code_harness.py")!r})
        h = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(h)
        spec_ = {SPEC!r}
        print(json.dumps([h.score({GOOD!r}, spec_), h.score({lookup([str(closed)])!r}, spec_)]))
        h.shutdown()
        """
    )
    env = {"PATH": os.defpath, "TMPDIR": "/tmp"}
    done = subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-B", "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    good, reader = json.loads(done.stdout)
    if good["isolation"]["uid"] != 65534:
        pytest.skip(f"the system Python's standard library is closed to nobody here: {good['isolation']['notes']}")
    assert good["passed"] is True and reader["passed"] is False, (good, reader)
    assert good["isolation"]["landlock"] == LANDLOCK and good["isolation"]["notes"] == [], good


# -- end to end: each template's own reward, and test_reward from the package layout -----------------------------


def load_template(folder: Path, module: str):
    name = f"iso_{module}_{abs(hash(str(folder)))}"
    spec = importlib.util.spec_from_file_location(name, folder / f"{module}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@needs_landlock
def test_each_templates_reward_pays_nothing_for_reading_the_shipped_data(package):
    template, folder, harness, dataset, project = package
    mod = load_template(folder, MODULES[template])
    spec = mod.tests_of(ROW["test"], ROW["entry_point"])
    shipped = [str(p) for p in (*mod.DATA_DIRS, folder)]
    reader = lookup([str(Path(d) / "train.jsonl") for d in shipped] + [str(dataset), str(project / "answers.txt")])

    async def both():
        return await asyncio.gather(mod.run_tests(reader, spec), mod.run_tests(GOOD, spec))

    read, good = asyncio.run(both())
    assert read["passed"] is False and good["passed"] is True, (read, good)


@pytest.mark.slow
@pytest.mark.v1
def test_test_reward_still_passes_the_fenced_v1_template(tmp_path):
    """From the package layout (data/train.jsonl shipped beside the module, as Hosted Training installs it): the
    reference still earns 1 under the fence and no hack earns anything (about 25 s; the classic template's run is
    test_reward_kinds' test_the_code_template_passes_every_code_check)."""
    folder = tmp_path / "v1-code"  # the folder names the module
    shutil.copytree(TEMPLATES / "v1-code", folder)
    (folder / "data").mkdir()
    rows = [
        {
            "prompt": r["prompt"],
            "test": [r["test"]],
            "canonical_solution": r["solution"],
            "entry_point": r["entry_point"],
        }
        for r in fx.code_rows(2)
    ]
    fx.write_rows(folder / "data", rows, "train.jsonl")
    result = Result("test_reward")
    request = TestRewardRequest(env=str(folder), env_args={"dataset_path": "train.jsonl"}, num_examples=1)
    run_test_reward(request, result)
    by_probe = {p["probe"]: p["total"] for p in result.data["probes"]["by_probe"]}
    assert by_probe["gold:code_raw"] == 1.0, by_probe
    assert all(v == 0.0 for k, v in by_probe.items() if k.startswith("hack:")), by_probe
    failed = [(c.id, c.message) for c in result.checks if c.status == "fail"]
    assert not failed, failed
