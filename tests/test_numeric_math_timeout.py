"""Issue #36: a math-verify time limit inside the numeric templates' scoring never turns a gold into a silent 0.
A timeout raises TimeoutError (the rollout errors, the result counts it); the v1 template's limit is CPU time,
so a busy machine (or a wait that burns no CPU) does not eat it. Offline and fast: the slow math-verify is a
stand-in that burns CPU until the bound stops it (or until a far larger cap, so a broken bound fails, never hangs)."""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from conftest import SKILL_ROOT

from vlab.env import compat

TEMPLATES = SKILL_ROOT / "templates" / "environments"
GOLD = "\\frac{\\sqrt{3}}{2}"
RIGHT = "\\boxed{\\frac{\\sqrt3}{2}}"  # equal to GOLD only by math-verify (no plain-number shortcut)
WRONG = "\\boxed{\\frac{\\sqrt2}{2}}"
# Also equal to GOLD, but not as text once parsed: only math-verify's symbolic comparison (sympy_expr_eq) says so
# (RIGHT's parsed text is GOLD's, so math-verify's text comparison pays it even when its symbolic one times out).
SPELLED = "\\boxed{\\sqrt{3}/2}"
CAP = 30.0  # CPU seconds a stand-in burns at most: 30x the 1 s bound under test


def burn(seconds: float = CAP) -> None:
    """Burn this process's CPU for `seconds` of CPU time, through `except Exception` blocks as sympy's are."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        try:
            sum(range(1000))
        except Exception:  # noqa: BLE001 - the point: such a block must not swallow the time limit
            pass


@pytest.fixture
def load(monkeypatch):
    """Import a template module fresh from its folder."""

    def add(template: str, module: str):
        monkeypatch.syspath_prepend(str(TEMPLATES / template))
        sys.modules.pop(module, None)
        return __import__(module)

    return add


# -- v1 (verifiers >= 0.4): math-verify in-process under a CPU-time bound ------------------------------------


@pytest.fixture
def v1(load, monkeypatch):
    pytest.importorskip("verifiers.v1")
    mod = load("v1-numeric", "v1_numeric")
    monkeypatch.setattr(mod, "MATH_TIMEOUT_SECONDS", 1)
    return mod


def v1_task(mod, tmp_path: Path):
    import verifiers.v1 as vf

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"question": "sin 60 degrees?", "answer": GOLD}) + "\n")
    config = vf.taskset_config_type("v1_numeric")(id="v1_numeric", dataset_path=str(data))
    return next(iter(vf.load_taskset(config)))


def v1_score(task, reply: str) -> float:
    trace = compat.scoring_trace(
        task, [{"role": "user", "content": task.data.prompt_text}], [{"role": "assistant", "content": reply}]
    )
    asyncio.run(task.score(trace))
    return compat.trace_total(trace)


BEFORE = signal.getsignal(signal.SIGVTALRM)


def timer_untouched() -> None:
    """The bound leaves the SIGVTALRM handler as it found it, and no CPU timer running."""
    assert signal.getsignal(signal.SIGVTALRM) == BEFORE
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


@pytest.mark.v1
def test_v1_math_verify_still_judges(v1, tmp_path, caplog):
    task = v1_task(v1, tmp_path)
    with caplog.at_level(logging.WARNING):
        assert v1_score(task, RIGHT) == 1.0
        assert v1_score(task, WRONG) == 0.0
        assert v1.same_answer(f"<think>\\boxed{{1}}</think>{RIGHT}", GOLD) == 1.0
        assert v1.same_answer(f"<think>{RIGHT}", GOLD) == 0.0  # an unclosed reasoning block answers nothing
        assert v1.math_verify_boxed(RIGHT, f"\\boxed{{{GOLD}}}") == 1.0  # a boxed gold: its box is read, as before
        assert v1.same_answer("\\boxed{\\frac{1}{}}", GOLD) == 0.0  # malformed: 0, not an error
    assert "Timeout is disabled" not in caplog.text  # math-verify's notice that its own timeout is off: dropped
    timer_untouched()


@pytest.mark.v1
def test_v1_slow_math_verify_is_an_error_not_a_zero(v1, tmp_path, monkeypatch):
    monkeypatch.setattr(v1, "verify", lambda *a, **k: burn() or True)
    with pytest.raises(TimeoutError, match="1 s of CPU time: the answer was not judged"):
        v1.same_answer(RIGHT, GOLD)
    timer_untouched()
    # through the task's own scoring: verifiers reports the reward's TimeoutError (as a TaskError), never a 0
    task = v1_task(v1, tmp_path)
    with pytest.raises(BaseException) as err:
        v1_score(task, RIGHT)
    chain = [err.value]
    while chain[-1].__cause__ is not None:
        chain.append(chain[-1].__cause__)
    assert any(isinstance(e, TimeoutError) and "CPU time" in str(e) for e in chain), chain
    timer_untouched()


@pytest.mark.v1
def test_v1_slow_parse_swallowing_the_signal_is_still_an_error(v1, monkeypatch):
    """Code that catches BaseException (a bare except) and goes on still ends in TimeoutError."""

    swallowed = []

    def swallowing(*args, **kwargs):
        if not swallowed:  # the first parse burns until the bound fires, swallows it and goes on
            try:
                burn()
            except BaseException as err:  # noqa: BLE001
                swallowed.append(err)
        return []

    monkeypatch.setattr(v1, "parse", swallowing)
    with pytest.raises(TimeoutError):
        v1.same_answer(RIGHT, GOLD)
    assert len(swallowed) == 1
    timer_untouched()


@pytest.mark.v1
def test_v1_bound_is_cpu_time_not_wall_clock(v1, monkeypatch):
    """1.5 s of waiting (no CPU) inside math-verify does not trip a 1 s CPU-time bound."""
    real_verify = v1.verify

    def waiting(*args, **kwargs):
        time.sleep(1.5)
        return real_verify(*args, **kwargs)

    monkeypatch.setattr(v1, "verify", waiting)
    assert v1.same_answer(RIGHT, GOLD) == 1.0
    timer_untouched()


@pytest.mark.v1
def test_v1_bound_leaves_a_running_cpu_timer_running(v1):
    """A SIGVTALRM timer and handler set before scoring are put back (less the CPU time scoring used)."""
    fired = []

    def mine(signum, frame):
        fired.append(signum)

    previous = signal.signal(signal.SIGVTALRM, mine)
    signal.setitimer(signal.ITIMER_VIRTUAL, 100.0)
    try:
        assert v1.same_answer(RIGHT, GOLD) == 1.0
        left, interval = signal.getitimer(signal.ITIMER_VIRTUAL)
        assert 0 < left < 101 and interval == 0.0 and not fired  # (the kernel rounds timers up to its tick)
        assert signal.getsignal(signal.SIGVTALRM) is mine
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)
    timer_untouched()


@pytest.mark.v1
def test_v1_off_the_main_thread_runs_without_a_bound(v1):
    """Signals cannot be set off the main thread: math-verify runs there unbounded, as before (no error)."""
    results = []
    thread = threading.Thread(target=lambda: results.extend([v1.same_answer(RIGHT, GOLD), v1.same_answer(WRONG, GOLD)]))
    thread.start()
    thread.join(60)
    assert results == [1.0, 0.0]


# -- classic (verifiers 0.3.x): MathRubric's worker process, its own wall-clock limit ----------------------


def completion(text: str) -> list[dict]:
    return [{"role": "assistant", "content": text}]


@pytest.fixture
def classic(load):
    mod = load("classic-numeric", "classic_numeric")
    import verifiers as vf

    rubrics = []

    def make(**kwargs):
        rubric = mod.NumericRubric(parser=vf.Parser(extract_fn=mod.boxed_readable), **kwargs)
        # A fork pool, so a stand-in patched into this process reaches the worker (Linux's default, made explicit).
        rubric.executor.shutdown(wait=False)
        rubric.executor = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
        rubrics.append(rubric)
        return rubric

    yield make
    for rubric in rubrics:
        asyncio.run(rubric.teardown())  # kills a worker still burning


def score(rubric, reply: str) -> float:
    return asyncio.run(rubric.correct_answer(rubric.parser, completion(reply), GOLD))


@pytest.mark.classic
def test_classic_math_verify_still_judges(classic):
    rubric = classic()
    assert score(rubric, RIGHT) == 1.0
    assert score(rubric, WRONG) == 0.0
    assert score(rubric, "no box") == 0.0
    assert asyncio.run(rubric.correct_answer(rubric.parser, completion("\\boxed{1,234}"), "1234")) == 1.0


@pytest.mark.classic
def test_classic_math_verify_timeout_is_an_error_not_a_zero(classic, monkeypatch):
    """math-verify's own timeout fires in the worker (its comparison never ends): verify_timed scores it 0.0
    after timeout_seconds; the rubric raises TimeoutError instead of paying that 0."""
    import math_verify.grader

    rubric = classic(timeout_seconds=1)
    assert score(rubric, SPELLED) == 1.0  # equal by the symbolic comparison alone
    rubric = classic(timeout_seconds=1)  # a fresh worker, forked after the patch below
    monkeypatch.setattr(math_verify.grader, "sympy_expr_eq", lambda *a, **k: burn() or True)
    with pytest.raises(TimeoutError, match="within 1 s .*the answer was not judged"):
        score(rubric, SPELLED)


@pytest.mark.classic
def test_classic_hard_timeout_is_an_error_not_a_zero(classic, monkeypatch):
    import math_verify.grader

    monkeypatch.setattr(math_verify.grader, "sympy_expr_eq", lambda *a, **k: burn() or True)
    rubric = classic()  # math-verify's own limit: 5 s, far past the hard limit below
    rubric.HARD_TIMEOUT_SECONDS = 0.5
    with pytest.raises(TimeoutError, match="hard limit of 0.5 s: the answer was not judged"):
        score(rubric, RIGHT)
