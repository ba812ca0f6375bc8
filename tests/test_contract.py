"""The contract every script keeps, checked for every script in scripts/."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json

import pytest
from conftest import SCRIPT_NAMES, SCRIPTS, SKILL_ROOT, assert_result, run_script

from vlab.core.result import UsageError

# The modules that hold an entry point: the test_reward.py shim only runs probe_reward.py.
ENTRY_MODULES = sorted(p.stem for p in SCRIPTS.glob("*.py") if p.stem != "test_reward")


def test_there_are_scripts():
    assert "preflight" in SCRIPT_NAMES


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_help_documents_exit_codes(name):
    r = run_script(name, "--help")
    assert r.returncode == 0, r
    for needle in ("--json", "exit codes", "  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "130"):
        assert needle in r.stdout, (name, needle)
    assert r.stderr == ""


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_bad_argument_is_one_json_object_with_exit_2(name):
    r = run_script(name, "--json", "--no-such-option-xyz")
    assert r.returncode == 2, r
    obj = assert_result(r.json, name, 2)
    assert obj["status"] == "error" and "no-such-option-xyz" in obj["summary"]
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_bad_argument_human_output_has_no_traceback(name):
    r = run_script(name, "--no-such-option-xyz")
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert "--help" in r.stdout


@pytest.mark.parametrize("name", ENTRY_MODULES)
def test_every_single_valued_option_refuses_a_repeat(name):
    """Given twice, an option that takes one value is exit 2 with its name, never 'the last one wins'."""
    from vlab.core.cli import StoreOnce

    parser = importlib.import_module(name).build_parser()
    single = [a for a in parser._actions if a.option_strings and isinstance(a, StoreOnce)]
    if name != "docs":  # docs takes a positional NAME only
        assert single, f"{name} has no single-valued option"
    for action in single:
        count = action.nargs if isinstance(action.nargs, int) else 1  # --reward-range LO HI takes two
        value = [str(action.choices[0]) if action.choices else "1"] * count
        flag = action.option_strings[-1]
        with pytest.raises(UsageError, match="given more than once"):
            parser.parse_args([flag, *value, flag, *value])


@pytest.mark.parametrize("name", ENTRY_MODULES)
def test_scripts_are_thin_and_executable(name):
    path = SCRIPTS / f"{name}.py"
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env python3"), name
    assert path.stat().st_mode & 0o111, f"{name}.py is not executable"
    assert "from vlab" in text, f"{name}.py should call the vlab library"
    assert 'if __name__ == "__main__":' in text


def test_test_reward_shim_runs_probe_reward():
    shim = SCRIPTS / "test_reward.py"
    assert shim.stat().st_mode & 0o111 and 'with_name("probe_reward.py")' in shim.read_text()


def test_schema_file_is_valid_json_schema():
    import jsonschema

    schema = json.loads((SKILL_ROOT / "references" / "result.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    bad = {
        "tool": "x",
        "version": "1",
        "status": "pass",
        "exit_code": 1,
        "summary": "",
        "checks": [],
        "data": {},
        "next_steps": [],
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)  # pass with exit 1 is a contradiction the schema must catch


# -- the boundary: scripts parse argv into a request; the library never sees a Namespace ----------

VLAB = SCRIPTS / "vlab"
# The only modules below scripts/ that belong to the command line: the cli module the scripts use, the
# dependency guard every script imports first (it answers for the whole process), and the maintainers'
# own command `python -m vlab.hosted.regenerate` (no script or library module reaches it).
# core/numbers.py: the argparse type= factories every script uses (argv parsing, like core/cli.py)
COMMAND_MODULES = {"core/cli.py", "core/guard.py", "core/numbers.py", "hosted/regenerate.py"}
LIBRARY_MODULES = sorted(
    p.relative_to(VLAB).as_posix() for p in VLAB.rglob("*.py") if p.relative_to(VLAB).as_posix() not in COMMAND_MODULES
)


def _tree(rel: str) -> ast.Module:
    return ast.parse((VLAB / rel).read_text(encoding="utf-8"), filename=rel)


def _imported_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module":
            names |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return names


def test_library_modules_are_found():
    assert "hosted/submit.py" in LIBRARY_MODULES and "core/cli.py" not in LIBRARY_MODULES


@pytest.mark.parametrize("rel", LIBRARY_MODULES)
def test_library_module_imports_neither_argparse_nor_the_cli(rel):
    bad = {n for n in _imported_names(_tree(rel)) if n.split(".")[0] == "argparse" or n.startswith("vlab.core.cli")}
    assert not bad, f"vlab/{rel} imports {sorted(bad)}: parse argv in scripts/, log through vlab.core.console"


@pytest.mark.parametrize("rel", LIBRARY_MODULES)
def test_library_functions_take_requests_not_namespaces(rel):
    tree = _tree(rel)
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                note = ast.unparse(arg.annotation) if arg.annotation is not None else ""
                if "Namespace" in note or (arg.arg in ("args", "namespace", "ns") and not note):
                    problems.append(f"{node.name}({arg.arg}{': ' + note if note else ''}) line {node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "vars"):
            if node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in ("args", "namespace", "ns"):
                problems.append(f"{node.func.id}({node.args[0].id}, ...) line {node.lineno}")
        elif isinstance(node, ast.Name) and node.id == "Namespace":
            problems.append(f"Namespace line {node.lineno}")
    assert not problems, f"vlab/{rel} reads an argparse Namespace: {problems}"


@pytest.mark.parametrize("name", ENTRY_MODULES)
def test_scripts_hand_the_library_no_namespace_and_render_nothing(name):
    """Inside a script, the Namespace `args` only goes to the script's own functions (which build the request)."""
    text = (SCRIPTS / f"{name}.py").read_text()
    tree = ast.parse(text)
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} | {"getattr"}  # reading it is the point
    leaks = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        passed = [*node.args, *(k.value for k in node.keywords)]
        if any(isinstance(v, ast.Name) and v.id == "args" for v in passed):
            callee = ast.unparse(node.func)
            if callee not in own:
                leaks.append(f"{callee}(args) line {node.lineno}")
    assert not leaks, f"{name}.py passes its Namespace to {leaks}: build the request first"
    # Human output is drawn by the library's render module, never by the script.
    assert "rich" not in text and "print(" not in text and "def render" not in text, name


# Each script's request: the smallest valid command line, and one the request itself refuses.
REQUESTS = {
    "preflight": ([], None),
    "docs": (["SKILL"], None),
    "diagnose_run": (["--run", "outputs/local-train"], ["--run", "x", "--reward-range", "1", "0"]),
    "check_reward_distribution": (["--results", "r.jsonl"], ["--too-easy", "1.5"]),
    "inspect_dataset": (["data.jsonl", "--snippet", "v1"], []),
    "new_env": (["my-env", "--template", "classic-numeric"], ["--template", "classic-numeric"]),
    "probe_reward": (["env.py", "--env-args", '{"n": 1}'], ["env.py", "--env-args", "[1]"]),
    "submit_training": (["--model", "m", "--env", "o/n", "-e", "HF_TOKEN"], ["--submit", "--dry-run"]),
    "local_train": (["--set", "optim.lr=1e-5", "--env-args", "{}"], ["--set", "optim.lr"]),
    "migrate_env": (["env", "--env-args", '{"n": 1}'], ["env", "--env-args", "[1]"]),
}


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_script_builds_a_frozen_request_of_its_library(name):
    good, bad = REQUESTS[name]
    script = importlib.import_module(name)
    req = script.request(script.build_parser().parse_args(good))
    assert dataclasses.is_dataclass(req) and type(req).__module__.startswith("vlab."), type(req)
    field = dataclasses.fields(req)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(req, field, None)
    assert "Namespace" not in repr(req)
    if bad is not None:  # the request's own constructor rejects it, as it would from Python
        with pytest.raises(UsageError):
            script.request(script.build_parser().parse_args(bad))


def test_requests_parse_command_line_text_into_values():
    from vlab.reward.checks import TestRewardRequest
    from vlab.train.request import LocalTrainRequest

    assert TestRewardRequest(env="e", env_args='{"n": 2}').env_args == {"n": 2}
    req = LocalTrainRequest(sets=("optim.lr=1e-5",), env_args='{"n": 3}', model="m", lora=True)
    assert req.overrides == (
        (("optim", "lr"), 1e-5),
        (("env", "args"), {"n": 3}),
        (("model", "name"), "m"),
        (("lora", "enabled"), True),
    )


# -- bytecode -------------------------------------------------------------------------------------


@pytest.mark.parametrize("writes, inherited", [(True, False), (False, False), (False, True)])
def test_the_bytecode_cache_moves_only_where_bytecode_is_written(tmp_path, writes, inherited):
    """vlab sends bytecode to $XDG_CACHE_HOME/verifiers-lab/pycache (issue 36), for this process and its children.
    Under PYTHONDONTWRITEBYTECODE this process writes nothing, so it keeps Python's own lookup and exports no
    prefix: one hid the installed packages' compiled files and compiled numpy, msgspec and more from source
    on every run, in this process and in every vf-eval, prime or uv child (issue 37)."""
    import os
    import subprocess
    import sys

    code = (
        "import json, os, sys; sys.dont_write_bytecode = True; import vlab; "
        "print(json.dumps([sys.pycache_prefix, os.environ.get('PYTHONPYCACHEPREFIX'), sys.dont_write_bytecode]))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env.update({"XDG_CACHE_HOME": str(tmp_path), **({} if writes else {"PYTHONDONTWRITEBYTECODE": "1"})})
    if inherited:  # a worker started by a vlab process: our prefix in its environment; it must not look there
        env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "verifiers-lab" / "pycache")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=SCRIPTS, capture_output=True, text=True, check=True)
    prefix, exported, no_writes = json.loads(out.stdout)
    ours = str(tmp_path / "verifiers-lab" / "pycache")
    assert no_writes is not writes
    # children that write, write there; children of a process that writes nothing inherit that and look nowhere
    # else (a vf-eval or prime child under an inherited prefix compiled every module from source)
    assert exported == (ours if writes else None)
    assert prefix == (ours if writes else None)


# -- module size ---------------------------------------------------------------------------------

MAX_MODULE_LINES = 520  # "about 500": a module past this says at its top why it is one module


@pytest.mark.parametrize("rel", LIBRARY_MODULES + sorted(COMMAND_MODULES))
def test_long_modules_say_why_at_their_top(rel):
    text = (VLAB / rel).read_text(encoding="utf-8")
    if text.count("\n") <= MAX_MODULE_LINES:
        return
    head = "\n".join(text.splitlines()[:15]).lower()
    assert "generated" in head or "one module" in head, (
        f"vlab/{rel} has {text.count(chr(10))} lines: split it, or say at its top why it stays one module"
    )
