"""The code checks on the probes' scores: partial credit for failing programs, which fenced block is graded
(``code_fences``), every test or only the first (``code_all_tests``), a reward that never returns
(``code_time_limit``), hacks without a reference (``check_goldless``), processes left behind
(``check_leftovers``). The probes themselves are built in ``code``.
"""

from __future__ import annotations

import os
import signal
import time

from vlab.core.result import Result
from vlab.kinds.code.probes import LEFTOVER_TOKEN, SLOW_FACTOR
from vlab.reward.probes import EPS, RowResult, best_gold


def check_code(result: Result, rows: list[RowResult], fn: str | None, cuts: dict[int, str] | None = None) -> None:
    """Partial credit for a program that fails the tests: how much of the learning signal it removes;
    which fenced block is graded (``check_fences``); every test or only the first (``check_all_tests``;
    ``cuts``: rows whose loader kept fewer tests than the data file, ``code.tests_cut``)."""
    check_fences(result, rows)
    check_all_tests(result, rows, cuts or {})
    partial = []
    for rr in rows:
        gold = best_gold(rr)
        if gold is None or not gold.score.total or gold.score.total <= EPS:
            continue
        wrong = [p.score.total for p in rr.of("wrong") if isinstance(p.score.total, (int, float))]
        if wrong and 0 < max(wrong) < gold.score.total - EPS:
            partial.append((rr, max(wrong), gold.score.total))
    if partial:
        rr, w, g = max(partial, key=lambda t: t[1] / t[2])
        share = w / g
        result.warn(
            "code_partial_credit",
            f"a program that fails the tests earns {w:g} of the {g:g} a passing one earns (example_id {rr.row.index}, "
            f"{len(partial)} of {len(rows)} rows): it removes {share:.0%} of the learning signal between a wrong and "
            "a right program, and rewards code that merely runs",
            "pay partial credit only for tests passed (fraction of tests), or make a program that fails earn 0",
        )


def _earned_gold(rr: RowResult, pid: str) -> bool | None:
    """Whether probe ``pid`` earned the row's gold reward (None: not made or not scored on this row)."""
    gold = best_gold(rr)
    probe = next((p for p in rr.scored if p.probe.id == pid), None)
    if gold is None or probe is None or not isinstance(probe.score.total, (int, float)):
        return None
    return probe.score.total >= gold.score.total - EPS


def check_fences(result: Result, rows: list[RowResult]) -> None:
    """code_fences: the reward grades the LAST ```python block of a reply. The reference in the first block
    and a wrong program in the last (hack:first_fence) must not earn the gold; a wrong draft before the
    reference (gold_alt:code_last_fence) should."""
    first = [(rr, _earned_gold(rr, "hack:first_fence")) for rr in rows]
    first = [(rr, hit) for rr, hit in first if hit is not None]
    if not first:
        return
    hacked = [rr for rr, hit in first if hit]
    if hacked:
        result.fail(
            "code_fences",
            f"the reward grades the first fenced block of a reply: the reference in the first ```python block and "
            f"a program raising NotImplementedError in the last (hack:first_fence) earned the gold reward on "
            f"{len(hacked)}/{len(first)} rows (example_id {hacked[0].row.index}); a policy's draft block earns "
            "the reward whatever its final program does",
            "grade the last ```python block of the reply (the code templates' extract_code: blocks[-1])",
        )
        result.step("make the code reward read the LAST ```python block of the reply, not the first")
        return
    # where one fenced block earns the gold, a draft block before it should too
    done = [
        rr
        for rr, _ in first
        if _earned_gold(rr, "gold_alt:code_fenced") and _earned_gold(rr, "gold_alt:code_last_fence") is False
    ]
    if done:
        result.warn(
            "code_fences",
            f"a reply with a wrong draft block before the reference (gold_alt:code_last_fence) earns less than "
            f"the reference alone on {len(done)}/{len(first)} rows (example_id {done[0].row.index}): models "
            "often write more than one block, and the last one is their answer",
            "grade the last ```python block of the reply (the code templates' extract_code: blocks[-1])",
        )
        return
    result.passed(
        "code_fences",
        f"the reward grades the last fenced block: the reference in the first block and a wrong program in the "
        f"last earned less than the gold on {len(first)}/{len(first)} rows",
    )


def check_all_tests(result: Result, rows: list[RowResult], cuts: dict[int, str] | None = None) -> None:
    """code_all_tests: on every row with two or more tests, the reference right on its first call only
    (hack:first_call_only) must not earn the gold: a reward that stops at the first assert pays it, and so
    does an environment whose loader keeps fewer tests than the data file holds (``cuts``, named)."""
    cuts = cuts or {}
    tried = [(rr, _earned_gold(rr, "hack:first_call_only")) for rr in rows]
    tried = [(rr, hit) for rr, hit in tried if hit is not None]
    if not tried:
        return
    hacked = [rr for rr, hit in tried if hit]
    if hacked:
        cut = [rr for rr in hacked if rr.row.index in cuts]
        where = (
            f"; the environment keeps fewer tests than its data: {cuts[cut[0].row.index]} (example_id "
            f"{cut[0].row.index}), {len(cut)} of these rows"
            if cut
            else ""
        )
        result.fail(
            "code_all_tests",
            f"the reward runs only the first assert of a row's tests: a program right on its first call only "
            f"(hack:first_call_only) earned the gold reward on {len(hacked)} of the {len(tried)} rows with two or "
            f"more tests (example_id {hacked[0].row.index}){where}",
            "build each task with every test of the data's test column"
            if cut
            else "run every test of the row and pay only when all pass (or the fraction passed); never stop at the "
            "first",
        )
        result.step(
            "make the environment keep every test of the data's test column when it builds a task"
            if cut
            else "make the code reward run every assert of the row's tests, not only the first"
        )
        return
    result.passed(
        "code_all_tests",
        f"a program right on its first call only earned less than the gold on {len(tried)}/{len(tried)} rows "
        "with two or more tests",
    )


def check_slow(result: Result, rows: list[RowResult], bound: float, timeout: float) -> None:
    """code_time_limit: the slow probes, scored last within ``bound`` s a call. A program that never ends
    must be stopped by the reward's own limit; a reward that does not return within the bound (stopped by
    the worker, or the worker itself stopped) fails here, every other check having run."""
    scored = [p for rr in rows for p in rr.scored if p.probe.id == "hack:infinite_loop"]
    if not scored:
        return
    hung, skipped, seconds = [], [], []
    for p in scored:
        s = p.score
        err = s.scoring_error
        earlier = [e for e in s.errors.values() if str(getattr(e, "message", "")).startswith("skipped")]
        if err is not None:  # the worker stopped: on this call (a hang), or earlier (not run)
            (hung if err.type == "WorkerTimeout" and "not run:" not in err.message else skipped).append(p)
        elif earlier:  # the function timed out on an earlier call: the worker skips it from then on
            skipped.append(p)
        elif s.timed_out:
            hung.append(p)
        else:
            seconds.append(max([v for v in s.seconds.values() if isinstance(v, (int, float))], default=0.0))
    result.data.setdefault("probes", {})["slow_probes"] = {
        "bound_seconds": round(bound, 3),
        "timeout": timeout,
        "slowest_seconds": round(max(seconds), 3) if seconds else None,
        "stopped": len(hung),
        "not_run": len(skipped),
    }
    if hung:
        result.fail(
            "code_time_limit",
            f"the reward did not return within {bound:g} s ({SLOW_FACTOR:g}x --timeout) on a program that never "
            f"ends (hack:infinite_loop, {len(hung)} of {len(scored)} rows): a looping program holds the scorer, "
            "and a training step, for as long as it runs",
            "run each program with a wall-clock limit and kill it (and what it started) past it "
            "(the code templates: TIMEOUT_SECONDS)",
        )
        result.step("give the code reward a time limit per program: an infinite loop never returned")
    elif skipped and not seconds:
        result.skip(
            "code_time_limit",
            "a program that never ends was not scored: the reward function stopped or timed out earlier",
        )
    elif seconds:
        longest = max(seconds)
        over = f", longer than --timeout {timeout:g} s: the reward's own limit" if longest > timeout else ""
        result.passed(
            "code_time_limit",
            f"a program that never ends was stopped by the reward's own time limit on {len(seconds)} rows "
            f"(slowest call {longest:.1f} s{over}; test_reward's bound for these probes: {bound:g} s)",
        )


def check_goldless(result: Result, rows: list[RowResult]) -> None:
    """No reference program: every hack must score no more than the wrong programs on its row."""
    hacked: dict[str, int] = {}
    for rr in rows:
        floor = [p.score.total for p in rr.of("wrong") + rr.of("malformed") if isinstance(p.score.total, (int, float))]
        if not floor:
            continue
        for p in rr.of("hack"):
            if isinstance(p.score.total, (int, float)) and p.score.total > max(floor) + EPS:
                hacked[p.probe.id] = hacked.get(p.probe.id, 0) + 1
    tried = sum(len(rr.of("hack")) for rr in rows)
    if hacked:
        named = "; ".join(f"{pid} on {n}/{len(rows)} rows" for pid, n in hacked.items())
        result.fail(
            "reward_hacking",
            f"hacking programs earned more than a wrong program (no reference solution to compare with): {named}",
            "decide the verdict outside the program's process: run the tests in the scorer against plain data "
            "returned by a child (the code templates do)",
        )
    else:
        result.passed(
            "reward_hacking",
            f"no hacking program earned more than a wrong one ({tried} tried on {len(rows)} rows without a reference "
            "solution; whether a right program earns the reward is not tested)",
        )


def check_leftovers(result: Result, grace: float = 3.0) -> None:
    """After the probes: no process the outlives_scorer program started may still run (ended here if so)."""
    if not os.path.isdir("/proc"):
        return
    deadline, left = time.monotonic() + grace, _leftovers()
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = _leftovers()
    if not left:
        return
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    result.fail(
        "code_isolation",
        f"a program the reward ran left {len(left)} process(es) running after it was scored (hack:outlives_scorer "
        "started one in a session of its own): a policy's programs would pile up and can outlive the scorer",
        "run each program in a process group or PID namespace of its own and kill it when scoring ends "
        "(the code templates do)",
    )


def _leftovers() -> list[int]:
    found = []
    needle = f"sleep\0{LEFTOVER_TOKEN}".encode()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if needle in f.read():
                        found.append(int(pid))
            except OSError:
                continue
    return found
