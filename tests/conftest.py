"""Shared test helpers: run a script as a user would, validate its result, find real data."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]  # the repository: pyproject.toml, Makefile, tests, demo, bench
SKILL_ROOT = ROOT / "skills" / "verifiers-lab"  # the skill as installed: SKILL.md, references, scripts, templates
SCRIPTS = SKILL_ROOT / "scripts"
SHARED = ROOT.parent / "shared"
REAL_DATA = SHARED / "real-data"

sys.path.insert(0, str(SCRIPTS))
# The tests write no bytecode, and neither do the scripts, vf-eval and prime runs they start (run_script sets the
# same): nothing lands in the skill folder (a script imported in-process compiled there on a fresh clone), and
# vlab then exports no cache folder, whose emptiness made every such child compile its packages from source.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
sys.dont_write_bytecode = True


# Tests are offline: a Hub name a test passes (dataset_name=someone/open-qa) is refused at once, where the
# network's retries took 24 s a load (the prime-rl judge hand-off: 59 s, 47 of them waiting on the Hub). A test
# of the online path sets these to "" beside its loopback HF_ENDPOINT stub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

# The documented entry points (probe_reward.py is the code behind the test_reward.py shim).
SCRIPT_NAMES = sorted(p.stem for p in SCRIPTS.glob("*.py") if p.stem != "probe_reward")

from vlab.core import installed as probe  # noqa: E402

VERIFIERS = probe.verifiers_info()


# Which share of the suite this run holds (``make test`` runs them side by side, see the Makefile):
#   versioned  every test that touches verifiers: the classic- and v1-marked ones and every module not marked
#              "once"; classic ones in the 0.3.1 venv, the others in the 0.4.0 one (runs_in_this_generation),
#              less the waits share
#   waits      the versioned tests whose wall time is a hang's load-stretched bound (BOUND_WAITS): mostly asleep,
#              so ``make test`` starts them with the others, each in a worker of its own, while the load is low
#   once       the unmarked tests of modules marked "once" (the pack's own logic, no verifiers): run a single
#              time, with verifiers, openai and mcp hidden (tests/without_verifiers), so a test that depends on
#              the verifiers version fails there instead of passing once for both
#   unset      everything (a plain ``pytest``)
TEST_RUN = os.environ.get("VLAB_TEST_RUN", "")


def runs_once(item) -> bool:
    return "once" in item.keywords and "classic" not in item.keywords and "v1" not in item.keywords


def share(item) -> str:
    """The share of ``make test`` that runs the test (TEST_RUN above)."""
    if runs_once(item):
        return "once"
    return "waits" if waits_out_a_bound(item) else "versioned"


# The generations each versioned test runs in: classic on 0.3.1, v1 on 0.4.0 (the guide's matrix). 0.3.1 also ships
# an early verifiers.v1, so a v1 test ran in both venvs: a third of the 0.3.1 run's time (1,510 of 4,451 s of
# test time in the 2026-11-29 suite), the suite 39 minutes instead of 25. The modules below still run their v1
# tests under 0.3.1 too (the environment layer's compat with that early v1: loading, templates, tool calls).
V1_ALSO_ON_031 = ("test_env_compat", "test_templates", "test_conversation")
# The versioned modules whose unmarked tests depend on the verifiers installed (they read VERIFIERS, the
# generation a template or hint gets, a venv of each): run in both venvs. Every other versioned module's unmarked
# tests are generation-neutral (the 0.3.1 run repeated them, 700 s): they run in the 0.4.0 venv only.
BOTH_GENERATIONS = (
    "test_user_code",
    "test_class_labels",
    "test_code_data",
    "test_code_template",
    "test_diagnose_run_local_train",
    "test_docs_commands",
    "test_env_compat",
    "test_generation_gate",
    "test_hints_situation",
    "test_judge_training",
    "test_kind_units",
    "test_preflight",
    "test_rehearse_judge",
    "test_rehearse_offline",
    "test_templates",
    "test_test_reward",
    "test_train_final_eval",
    "test_train_primerl_handoff",
    "test_train_reproducible",
)


def runs_in_this_generation(item) -> bool:
    """Whether a versioned test runs in this venv (V1_ALSO_ON_031, BOTH_GENERATIONS): in the 0.4.0 venv every one
    (the classic ones skip there); in the 0.3.1 one the classic tests, and the others of the modules named above."""
    if not VERIFIERS.classic:
        return True
    v1, classic = "v1" in item.keywords, "classic" in item.keywords
    if classic:
        return True
    module = item.path.stem
    return module in V1_ALSO_ON_031 if v1 else module in BOTH_GENERATIONS


# The slowest modules (seconds in one run of the last measured suite), handed out first: ``make test`` runs each
# versioned share in pytest-xdist workers a module at a time (--dist loadfile), in collection order, and a long
# module started last would keep its worker busy after the others are done.
SLOW_MODULES = (  # seconds of test time in the 2026-11-29 suite: 0.4.0 run / 0.3.1 run
    "test_rehearse",  # 416 / -
    "test_migrate_env",  # - / 384
    "test_reward_kinds",  # 51 / 355
    "test_demo",  # 292 / -
    "test_docs_commands",  # 284 / 274
    "test_judge_lists",  # 245 / 28
    "test_judge",  # 221 / 83
    "test_class_labels",  # 218 / 58
    "test_user_code",  # 75 / 154
    "test_program_plants",  # 151 / -
    "test_skill_folder_untouched",  # 134 / -
    "test_test_reward",  # 51 / 142
    "test_diagnose_run_local_train",  # 120 / 48
    "test_verdicts_under_load",
    "test_code_probes",
    "test_code_data",
)


# Tests whose wall time is a hang's bound, which test_reward stretches by the 1-minute load average per core
# (issue 36): the waits share, started with the rest of ``make test`` while the load average is still low, each in a
# worker of its own (in a plain run: first, their module first). Run in turn inside the suite at its height (4
# workers on 2 cores, a load of 10-20) each hang cost 5-10 times its idle bound: 202 s for one case, idle 20;
# they use little CPU (3 s of a 30-50 s test), so they barely slow the rest. Since issue 52 a hang's bound is on the
# call's own time (vlab.env.evidence), no longer stretched by the load, and a call that holds the worker is stopped
# without a fresh worker: these wait far less under load now; they stay here until a suite run says where they belong.
BOUND_WAITS = (  # (module, test name or its start)
    ("test_user_code", "test_user_code_fault[sync_hang"),
    ("test_user_code", "test_hung_or_exiting_reward_is_called_once_at_the_cost_of_its_bound[async_blocking_hang]"),
    ("test_user_code", "test_v1_user_code_fault[v1_blocking_sleep]"),
    ("test_resources", "test_hung_reward_with_a_daemon_process_leaves_nothing"),
    ("test_judge", "test_a_judge_call_without_a_time_limit_or_errors_scored_as_one_fail_naming_the_check"),
    ("test_conversation", "test_v1_calculator_without_size_limit_is_stopped_by_the_time_bound"),
)


def waits_out_a_bound(item) -> bool:
    return any(item.path.stem == module and item.name.startswith(name) for module, name in BOUND_WAITS)


def pytest_ignore_collect(collection_path, config):
    """The waits run collects its modules only (each of its workers would collect the whole suite: 6 s of CPU)."""
    if TEST_RUN == "waits" and collection_path.suffix == ".py" and collection_path.name.startswith("test_"):
        return collection_path.stem not in {module for module, _ in BOUND_WAITS}
    return None


def _slow_first(item) -> tuple[int, bool]:
    name = item.path.stem if hasattr(item, "path") else ""
    rank = SLOW_MODULES.index(name) if name in SLOW_MODULES else len(SLOW_MODULES)
    return rank, not waits_out_a_bound(item)


def pytest_collection_modifyitems(config, items):
    items.sort(key=_slow_first)  # stable: a module's tests keep their order
    skip_classic = pytest.mark.skip(reason=f"needs classic verifiers API (installed: {VERIFIERS.version})")
    skip_v1 = pytest.mark.skip(reason=f"needs verifiers.v1 (installed: {VERIFIERS.version})")
    if TEST_RUN in ("versioned", "waits", "once"):
        keep = [item for item in items if share(item) == TEST_RUN]
        if TEST_RUN == "versioned":
            keep = [item for item in keep if runs_in_this_generation(item)]
        if len(keep) < len(items):
            kept = {id(item) for item in keep}
            config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept])
            items[:] = keep
    for item in items:
        if "classic" in item.keywords and not VERIFIERS.classic:
            item.add_marker(skip_classic)
        if "v1" in item.keywords and not VERIFIERS.v1:
            item.add_marker(skip_v1)


# ``make test`` sets VLAB_HINTS_OUT: every hint and next step the tests' scenarios emit (in this process through
# Result, in scripts through their JSON) is written there at the end, and tests/hint_commands.py checks that each
# command they name exists and parses (issue 38).
HINTS_OUT = os.environ.get("VLAB_HINTS_OUT")
HINTS: set[tuple[str, str]] = set()


def _record_hints(tool: str, texts) -> None:
    if HINTS_OUT:
        HINTS.update((tool or "", t) for t in texts if isinstance(t, str) and t.strip())


if HINTS_OUT:
    from vlab.core.result import Result as _Result

    _add, _step = _Result.add, _Result.step

    def _recording_add(self, id, status, message, hint="", *args, **kwargs):
        _record_hints(self.tool, [hint])
        return _add(self, id, status, message, hint, *args, **kwargs)

    def _recording_step(self, text):
        _record_hints(self.tool, [text])
        return _step(self, text)

    _Result.add, _Result.step = _recording_add, _recording_step


def pytest_sessionfinish(session, exitstatus):
    if HINTS_OUT and HINTS:
        with open(HINTS_OUT, "a", encoding="utf-8") as f:
            for tool, text in sorted(HINTS):
                f.write(json.dumps({"tool": tool, "text": text}) + "\n")


class ScriptRun:
    def __init__(self, proc: subprocess.CompletedProcess):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def json(self) -> dict:
        """The one JSON object on stdout (fails the test if there is anything else)."""
        text = self.stdout.strip()
        assert text, f"no stdout; stderr was:\n{self.stderr[-3000:]}"
        obj = json.loads(text)  # raises if stdout holds more than one object
        assert isinstance(obj, dict)
        _record_hints(obj.get("tool"), [c.get("hint") for c in obj.get("checks") or []] + (obj.get("next_steps") or []))
        return obj

    def __repr__(self) -> str:
        return f"<ScriptRun rc={self.returncode} stdout={self.stdout[-2000:]!r} stderr={self.stderr[-2000:]!r}>"


def run_script(
    name: str,
    *args: str,
    env: dict | None = None,
    cwd: str | Path | None = None,
    python: str | None = None,
    timeout: float = 300,
    input: str | None = None,
) -> ScriptRun:
    """Run scripts/<name>.py in a subprocess with no terminal on stdin."""
    full_env = dict(os.environ)
    full_env.pop("VLAB_DEBUG", None)
    full_env["PYTHONDONTWRITEBYTECODE"] = "1"
    if env:
        full_env.update(env)
    proc = subprocess.run(
        [python or sys.executable, str(SCRIPTS / f"{name}.py"), *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=timeout,
        stdin=subprocess.DEVNULL if input is None else None,
        input=input,
    )
    return ScriptRun(proc)


def call_script(capsys, script: str, *argv: str) -> tuple[int, dict, str]:
    """Run scripts/<script>.py's main in this process with --json (cheaper than a subprocess): exactly one JSON
    object on stdout whose exit code is the one returned, and no traceback on stderr. (code, result, stderr)."""
    import importlib

    module = importlib.import_module(script)
    capsys.readouterr()
    code = module.main([*argv, "--json"])
    out, err = capsys.readouterr()
    obj = json.loads(out)  # exactly one JSON object
    assert obj["exit_code"] == code
    assert "Traceback" not in err
    return code, obj, err


def result_schema() -> dict:
    return json.loads((SKILL_ROOT / "references" / "result.schema.json").read_text())


def assert_result(obj: dict, tool: str | None = None, exit_code: int | None = None) -> dict:
    """Validate a script's JSON result against the schema (and optionally its tool and code)."""
    import jsonschema

    jsonschema.validate(obj, result_schema())
    if tool is not None:
        assert obj["tool"] == tool
    if exit_code is not None:
        assert obj["exit_code"] == exit_code, obj
    return obj


@pytest.fixture
def real_data() -> Path:
    if not REAL_DATA.is_dir():
        pytest.skip("../shared/real-data is absent (fresh clone)")
    return REAL_DATA
