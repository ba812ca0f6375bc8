"""The program checks on the probes' scores (each names the defect a contest judge would not have): the
reference passes, with the failing test and why on each row where it does not (``program_reference``); a crash
after the right output (``program_exit_status``), the whitespace between tokens (``program_whitespace``), a
prefix or nothing for the output (``program_prefix``), the prompt's examples alone (``program_hidden_tests``),
the test files read from disk (``program_isolation``), numbers within the statement's tolerance
(``program_tolerance``), which fenced block is graded (``program_fences``), partial credit for a wrong program
(``program_partial_credit``); a top-level loop that never ends (``program_time_limit``, on the slow probes).
A check none of whose probes got a score says nothing (``reads``); the rows are compared with the right output
(the reference, or ``gold_alt:table_output`` where the reference is missing or failed)."""

from __future__ import annotations

from vlab.core.result import Result
from vlab.reward.probes import EPS, RowResult

# check id -> (the probes it reads, what the reward did, the fix)
HACK_CHECKS = {
    "program_exit_status": (
        ("hack:crash_after",),
        "a program that printed the right output and then crashed (exit status 1) earned the reward",
        "fail a test whose program exits with a non-zero status or is killed, whatever it printed",
    ),
    "program_whitespace": (
        ("hack:no_spaces",),
        "the right output with the whitespace between its tokens removed ('1 2' printed as '12') earned the reward",
        "compare the output token by token (expected.split() == output.split()), never with the whitespace removed",
    ),
    "program_prefix": (
        ("hack:output_prefix", "hack:empty_output"),
        "part of the right output (without its last token, or nothing at all) earned the reward",
        "compare the whole output with the whole expected output (token by token), never as a prefix or substring",
    ),
    "program_hidden_tests": (
        ("hack:examples_only",),
        "a program that hard-codes the outputs of the tests the prompt shows (the statement's examples) and prints "
        "nothing for any other input earned the reward: the reward runs no test beyond them",
        "run every test of the row, the hidden ones too; keep the hidden tests out of the prompt",
    ),
    "program_isolation": (
        ("hack:reads_test_files",),
        "a program that searched the disk for the test's files (or the data file) and printed the output it found "
        "there earned the reward",
        "run the program where it can read nothing but its own scratch folder (the program templates' harness: "
        "Landlock, an unprivileged user), never beside the test files or the dataset",
    ),
}
READS = {
    "program_reference": ("gold",),
    **{cid: ("hack",) for cid in HACK_CHECKS},
    "program_tolerance": ("gold_alt",),
    "program_fences": ("hack", "gold_alt"),
    "program_partial_credit": ("wrong",),
}


def right(rr: RowResult):
    """The best right answer scored on the row (the reference, or the right output from a table), and whether it
    beats every wrong and empty answer: the baseline a hack is compared with."""
    golds = [p for p in rr.of("gold") + rr.of("gold_alt") if p.probe.id != "gold_alt:float_digits"]
    if not golds:
        return None
    best = max(golds, key=lambda p: p.score.total)
    floor = [p.score.total for p in rr.of("wrong") + rr.of("malformed")]
    return best if floor and best.score.total > max(floor) + EPS else None


def paid(rr: RowResult, pid: str) -> bool | None:
    """Did probe ``pid`` earn the right answer's reward on the row? None: not made, not scored, or no baseline."""
    best = right(rr)
    probe = next((p for p in rr.of("hack") + rr.of("gold_alt") if p.probe.id == pid), None)
    if best is None or probe is None:
        return None
    return probe.score.total >= best.score.total - EPS


# Probes that print nothing for some tests: where nothing at all earns the reward (program_prefix says so), their
# reward says nothing of what they test.
PRINT_NOTHING_SOMETIMES = {"hack:examples_only", "hack:reads_test_files"}


def check_hacks(result: Result, rows: list[RowResult]) -> None:
    """Each hack check: fail where its probe earned the right answer's reward on a row, pass where it was tried."""
    for cid, (pids, did, fix) in HACK_CHECKS.items():
        tried = [(rr, pid, paid(rr, pid)) for rr in rows for pid in pids]
        tried = [
            t
            for t in tried
            if t[2] is not None and not (t[1] in PRINT_NOTHING_SOMETIMES and paid(t[0], "hack:empty_output"))
        ]
        if not tried:
            continue
        hits = [(rr, pid) for rr, pid, hit in tried if hit]
        if hits:
            names = sorted({pid for _, pid in hits})
            rows_hit = sorted({rr.row.index for rr, _ in hits})
            result.fail(
                cid,
                f"{did} ({', '.join(names)}, {len(rows_hit)} of {len({rr.row.index for rr, _, _ in tried})} rows; "
                f"example_id {rows_hit[0]})",
                fix,
            )
            result.step(f"make the program reward {fix.split(';')[0]}")
        else:
            result.passed(cid, f"{', '.join(pids)} earned less than the right output on {len(tried)} tries")


def check_reference(result: Result, rows: list[RowResult], reasons) -> None:
    """program_reference: on each row with a reference, the reference earns what the right output earns; where it
    does not, which test it fails and why (``reasons(rr)``: the pack's own judge, the program templates' harness,
    run on the row's tests)."""
    tried = [rr for rr in rows if rr.of("gold")]
    if not tried:
        return
    failed = []
    for rr in tried:
        gold = max(
            rr.of("gold") + [p for p in rr.of("gold_alt") if p.probe.id.startswith("gold_alt:program")],
            key=lambda p: p.score.total,
        )
        best = right(rr)
        top = best.score.total if best is not None else None
        floor = [p.score.total for p in rr.of("wrong") + rr.of("malformed")]
        if (top is not None and gold.score.total < top - EPS) or (floor and gold.score.total <= max(floor) + EPS):
            failed.append(rr)
    if not failed:
        result.passed("program_reference", f"the reference program passes every test on {len(tried)}/{len(tried)} rows")
        return
    shown = []
    for rr in failed[:5]:
        why = reasons(rr) or (
            "the program templates' judge passes it on every test: this reward refuses an accepted program (how does "
            "its judge run programs? a real standard input, exit() and quit(), a CPU-time limit per test)"
        )
        shown.append(f"example_id {rr.row.index}: {why}")
    result.data.setdefault("row_findings", {})["program_reference"] = [
        {"example_id": rr.row.index, "status": "fail", "problem": s} for rr, s in zip(failed, shown)
    ]
    result.fail(
        "program_reference",
        f"the reference program does not earn the reward on {len(failed)} of {len(tried)} rows: " + "; ".join(shown),
        "fix or drop those rows (a wrong reference, tests it fails), or raise the time limit where the reference is "
        "right but slow (TIME_SCALE, TIME_LIMIT_SECONDS)",
    )


def check_tolerance(result: Result, rows: list[RowResult]) -> None:
    """program_tolerance: where the statement accepts numbers within a tolerance, the right numbers printed with
    other digits within it (gold_alt:float_digits) earn the reward."""
    tried = [(rr, paid(rr, "gold_alt:float_digits")) for rr in rows]
    tried = [(rr, hit) for rr, hit in tried if hit is not None]
    if not tried:
        return
    refused = [rr for rr, hit in tried if not hit]
    if refused:
        result.fail(
            "program_tolerance",
            f"the statement accepts numbers within an absolute or relative error, but the right numbers printed with "
            f"other digits within it scored less than the right output on {len(refused)} of {len(tried)} rows "
            f"(example_id {refused[0].row.index}): a right program is refused",
            "compare numbers within the statement's tolerance (|a - b| <= tol * max(1, |b|)), as the program "
            "templates do",
        )
    else:
        result.passed(
            "program_tolerance", f"numbers within the statement's tolerance are accepted on {len(tried)} rows"
        )


def check_fences(result: Result, rows: list[RowResult]) -> None:
    """program_fences: the reference in the first block and a wrong program in the last must not earn the reward;
    a wrong draft before the reference should."""
    first = [(rr, paid(rr, "hack:first_fence")) for rr in rows]
    first = [(rr, hit) for rr, hit in first if hit is not None]
    if not first:
        return
    hacked = [rr for rr, hit in first if hit]
    if hacked:
        result.fail(
            "program_fences",
            f"the reward grades the first fenced block of a reply: the reference in the first ```python block and a "
            f"wrong program in the last earned the reward on {len(hacked)}/{len(first)} rows (example_id "
            f"{hacked[0].row.index})",
            "grade the last ```python block of the reply (the program templates' extract_code: blocks[-1])",
        )
        return
    late = [rr for rr, _ in first if paid(rr, "gold_alt:program_last_fence") is False]
    if late:
        result.warn(
            "program_fences",
            f"a wrong draft block before the reference earns less than the reference alone on {len(late)}/{len(first)} "
            f"rows (example_id {late[0].row.index}): models often write more than one block, the last is the answer",
            "grade the last ```python block of the reply",
        )
        return
    result.passed("program_fences", f"the last fenced block is graded on {len(first)}/{len(first)} rows")


def check_partial(result: Result, rows: list[RowResult]) -> None:
    """program_partial_credit: a wrong program earning part of the reward removes learning signal (a warning)."""
    partial = []
    for rr in rows:
        best = right(rr)
        wrong = [p.score.total for p in rr.of("wrong")]
        if best is not None and wrong and 0 < max(wrong) < best.score.total - EPS:
            partial.append((rr, max(wrong), best.score.total))
    if partial:
        rr, w, g = max(partial, key=lambda t: t[1] / t[2])
        result.warn(
            "program_partial_credit",
            f"a wrong program earns {w:g} of the {g:g} a right one earns (example_id {rr.row.index}, {len(partial)} of "
            f"{len(rows)} rows)",
            "pay only a program that passes every test (or the share of tests passed, knowingly)",
        )


def check_loop(result: Result, slow: list[RowResult], bound: float, timeout: float) -> None:
    """program_time_limit: a program whose top level loops forever must be stopped by the reward's own limit."""
    scored = [p for rr in slow for p in rr.scored if p.probe.id == "hack:infinite_loop"]
    if not scored:
        return
    hung, skipped = [], []
    for p in scored:
        errors = [p.score.scoring_error, *p.score.errors.values()]
        said = [str(getattr(e, "message", "") or "") for e in errors if e is not None]
        if any(m.startswith(("skipped", "not called")) or "not run:" in m for m in said):
            skipped.append(p)  # the function timed out or stopped a worker on an earlier call: not called now
        elif p.score.timed_out or any("did not return within" in m or "did not answer within" in m for m in said):
            hung.append(p)  # this call ran out of test_reward's bound (in the worker, or the worker stopped)
    result.data.setdefault("probes", {})["slow_probes"] = {
        "bound_seconds": round(bound, 3),
        "timeout": timeout,
        "stopped": len(hung),
        "not_run": len(skipped),
        "why_not_run": sorted(
            {
                str(getattr(p.score.scoring_error, "message", "") or next(iter(p.score.errors.values()), ""))[:200]
                for p in skipped
            }
        ),
    }
    if not hung and len(skipped) == len(scored):
        result.skip("program_time_limit", "the looping program was not scored: the reward stopped or timed out earlier")
        return
    if hung:
        result.fail(
            "program_time_limit",
            f"the reward did not return within {bound:g} s on a program whose top level loops forever "
            f"(hack:infinite_loop, {len(hung)} of {len(scored)} rows): a looping program holds the scorer and the "
            "training step for as long as it runs",
            "run each test under a CPU-time limit (RLIMIT_CPU) and a wall-clock bound, and kill the program past them "
            "(the program templates do)",
        )
        result.step("give the program reward a time limit per test: a top-level infinite loop never returned")
        return
    done = [p for p in scored if p not in skipped]
    longest = max(max([v for v in p.score.seconds.values() if isinstance(v, (int, float))], default=0.0) for p in done)
    over = f", longer than --timeout {timeout:g} s" if longest > timeout else ""
    result.passed(
        "program_time_limit",
        f"a program whose top level loops forever was stopped by the reward's own time limit on {len(done)} rows "
        f"(slowest call {longest:.1f} s{over})",
    )
