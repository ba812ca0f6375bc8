"""test_reward's run: load, probe, score through verifiers, judge, report.

Each row's answer kind is its unit's (``vlab.kinds``: code, choice, label, number, text; ``kinds.assign``), with
how sure that is; the result says which kind was assumed and why (``data.kinds``). The probes run in two phases
on the probed rows (``--num-examples``, default 5): first the verdict core's, built from the data alone (the gold
in every format, another row's gold, wrong, empty and malformed answers, hacking answers: ``probes``), or the
kind's own where it has them (a code row's reference program) and beside them (every option label); then,
written the way the gold earned the reward, the kind's probes (``KindUnit.second_probes``). The core's verdicts
(``verdicts``) read every row; a kind's checks fail only on rows whose kind is sure (``kinds.base.by_certainty``).
Then the whole dataset (every row, or the ``--num-examples`` rows): its rows are checked without scoring
(``dataset.check_rows``, ``prompts``, each kind's ``dataset_checks``) and each gold is scored until
``--reach-seconds`` runs out (``dataset.check_reachable``). Health is in ``health``, the user's files in ``files``.
"""

from __future__ import annotations

import json
import time

from vlab import kinds
from vlab.core.files import write_atomic
from vlab.core.installed import load_scale
from vlab.core.result import Result, UsageError
from vlab.env import Environment, Score
from vlab.env.pool import ScoringPool
from vlab.env.remote import LOAD_LIMIT, LoadFailed, RemoteEnvironment
from vlab.kinds.base import KindContext
from vlab.reward import dataset, leaks, prompts, scoreboard, shortcuts, splits, verdicts
from vlab.reward import probes as rp
from vlab.reward.conversation import conversation_checks
from vlab.reward.files import completion_checks, custom_checks
from vlab.reward.health import health_checks
from vlab.reward.isolation import isolation_checks
from vlab.reward.request import PROBE_ROWS, SHAPE_ROWS, TestRewardRequest
from vlab.reward.validate import check_validate
from vlab.reward.wrongs import other_golds

PROGRAM_ROWS_AT_ONCE = 2  # rows scored at once where the probes are programs (each starts processes)


def run_test_reward(opts: TestRewardRequest, result: Result) -> Environment:
    """Load the environment in a child worker (its code never touches this process's stdout or
    exit code) and run every check through it."""
    if opts.judge.active:  # the judge-scored reward: a loopback judge for the run (reward.judge)
        from vlab.reward import judge

        server = judge.start_server(opts.judge)
        try:
            return _load_and_run(
                opts,
                result,
                {**opts.env_args, **judge.env_args(opts.judge, server, opts.env, rp.slow_bound(opts.timeout) / 2)},
                server,
            )
        finally:
            server.stop()
    return _load_and_run(opts, result, opts.env_args, None)


def _load_and_run(opts: TestRewardRequest, result: Result, env_args: dict, server) -> Environment:
    t0 = time.perf_counter()
    scale_at_start = round(load_scale(), 2)
    try:
        env = RemoteEnvironment(opts.env, env_args, load_timeout=opts.load_timeout or LOAD_LIMIT)
    except LoadFailed as err:  # exited, crashed or ran past the load time limit: a failed check, exit 1
        isolation_checks(result, err.incidents, err.output)
        result.summary = f"the environment did not load: {err.message}"
        return None
    pool: ScoringPool | None = None
    try:
        # A CPU-bound reward's long passes are spread over the machine's cores; code rewards start a
        # process per program already: one worker.
        pool = ScoringPool(env, spread=not _code_rewards(env, opts))
        _run(pool, opts, result, t0, server)
    finally:
        result.data["scoring_workers"] = 1 + len(pool.siblings or []) if pool else 1
        # how loaded the machine was: every time bound was stretched by this (core.installed.load_scale)
        result.data["machine_load"] = {
            "bound_scale_at_start": scale_at_start,
            "bound_scale_at_end": round(load_scale(), 2),
            "seconds": round(time.perf_counter() - t0, 1),
            # probes that ran out of time, scored again (first alone) before they became verdicts
            "timeout_retries": dict(pool.retries) if pool else None,
            "fresh_workers": env.revivals,
        }
        if pool:
            pool.close()
        env.close()
        isolation_checks(result, env.incidents, env.user_output(), pool.recovered if pool else set())
    if opts.rows_out:
        _write_rows(result, opts)
    return env


def _write_rows(result: Result, opts: TestRewardRequest) -> None:
    """Every row a check named, one JSON object a line: check, example_id, status, problem."""
    lines = [
        {"check": cid, **finding}
        for cid, findings in (result.data.get("row_findings") or {}).items()
        for finding in findings
    ]
    reach = result.data.get("reachability") or {}
    lines += [
        {
            "check": "gold_reachable",
            "example_id": e["example_id"],
            "status": "fail",
            "problem": f"gold {e['gold']!r} earns {e['best']} at best",
        }
        for e in reach.get("all_unreachable", [])
    ]
    write_atomic(opts.rows_out, "".join(json.dumps(line) + "\n" for line in lines), force=opts.force)
    result.data["rows_out"] = {"path": opts.rows_out, "rows": len(lines)}


def _run(env: RemoteEnvironment, opts: TestRewardRequest, result: Result, t0: float, server=None) -> None:
    n_rows = env.num_rows()
    names = ", ".join(f"{f.name}(w={f.weight:g}{', group' if f.is_group else ''})" for f in env.reward_functions)
    result.passed(
        "load",
        f"{env.capabilities.generation} environment {env.name!r} on verifiers {env.verifiers_version}: {n_rows} rows; functions: {names or 'none'}",
    )
    result.data["environment"] = env.describe() | {"rows": n_rows, "load_seconds": round(time.perf_counter() - t0, 3)}
    if env.unnamed_args:
        result.warn(
            "env_args",
            f"load_environment does not name {', '.join(env.unnamed_args)}; they only reach **kwargs and may be ignored",
            "check the spelling of --env-args keys against load_environment's parameters",
        )
    if not env.reward_functions:
        result.fail(
            "reward_functions",
            "the environment has no reward functions",
            "add reward functions to the rubric (classic) or @vf.reward methods (v1)",
        )
        return
    if n_rows == 0:
        raise UsageError("the environment's dataset is empty", hint="check the dataset path in --env-args")
    all_scores: list[Score] = []
    last: list = []  # the slow code probes: scored after every other check (code.slow_apart)
    if not opts.skip_probes and server is not None:  # a judged reward: the judge's probes (reward.judge)
        from vlab.reward.judge import run_judge_checks

        all_scores += run_judge_checks(result, env, opts, server, opts.judge)
    elif not opts.skip_probes:
        all_scores += _probe_checks(result, env, opts, last)
    if opts.custom:
        all_scores += custom_checks(result, env, opts)
    if opts.completions:
        all_scores += completion_checks(result, env, opts)
    health_checks(result, env, all_scores, opts)
    if not opts.skip_probes and (env.capabilities.multi_turn or env.capabilities.tools):
        scope = env.rows(PROBE_ROWS if opts.num_examples is None else opts.num_examples)
        conversation_checks(result, env, scope, env.format_hints(), opts)
    for finish in last:
        finish()


# -- probes ----------------------------------------------------------------------------


def _score(
    env: Environment, built: list[rp.RowProbes], opts: TestRewardRequest, rows_at_once: int | None = None
) -> tuple[list, list[Score], float]:
    items = [(b.row, p.text) for b in built for p in b.probes]
    t = time.perf_counter()
    scores = env.score_sync(items, opts.timeout, rows_at_once or opts.concurrency) if items else []
    return items, scores, time.perf_counter() - t


def _code_rewards(env: Environment, opts: TestRewardRequest) -> bool:
    """Whether the probes will meet programs (a unit that ``runs_programs``, on the rows ``_probe_checks`` reads):
    the pool's ``spread`` argument is its negation."""
    if opts.skip_probes or opts.judge.active or not env.reward_functions or env.num_rows() == 0:
        return False
    scope = env.rows(-1 if opts.num_examples is None else opts.num_examples)
    return any(kinds.unit(kinds.row_kind(r, rp.gold_value(r.answer, r.question)).kind).runs_programs for r in scope)


def _later(result: Result, last: list, finish) -> None:
    """Run ``finish(scratch)`` after every other check (``_run``'s end), its checks and next steps placed
    where they would have been now: the report reads in the same order whenever the slow probes ran."""
    at, steps_at = len(result.checks), len(result.next_steps)

    def run() -> None:
        scratch = Result(result.tool, data=result.data)
        finish(scratch)
        result.checks[at:at] = scratch.checks
        new = [s for s in scratch.next_steps if s not in result.next_steps]
        result.next_steps[steps_at:steps_at] = new

    last.append(run)


def _score_slow(env: Environment, slow: list[rp.RowProbes], opts: TestRewardRequest) -> list[rp.RowResult]:
    """The slow probes, alone, within rp.slow_bound(--timeout) a call: a reward's own longer time limit fits in
    it; a reward that never returns is stopped there, after everything else was scored."""
    items = [(b.row, p.text) for b in slow for p in b.probes]
    scores = env.score_sync(items, rp.slow_bound(opts.timeout), PROGRAM_ROWS_AT_ONCE, retry=False) if items else []
    return _results(slow, scores)


def _probe_checks(result: Result, env: Environment, opts: TestRewardRequest, last: list | None = None) -> list[Score]:
    """The probes and their checks. ``last`` receives what runs after every other check of the run (the
    slow probes); None: run it at the end of this function."""
    deferred: list = []
    scores = _probe_checks_now(result, env, opts, deferred)
    if last is None:
        for finish in deferred:
            finish()
    else:
        last += deferred
    return scores


def _set_apart(built: list[rp.RowProbes], ctx: KindContext) -> tuple[list, list, list[int]]:
    """(probes scored now, slow probes scored last, the row of each slow one) over every unit's rows."""
    now, slow, owners = list(built), [], []
    for unit in kinds.units():
        mine = [k for k, b in enumerate(now) if ctx.kinds[b.row.index].kind == unit.name]
        if not mine:
            continue
        kept, apart, of = unit.set_apart([now[k] for k in mine])
        for k, b in zip(mine, kept):
            now[k] = b
        slow += apart
        owners += [mine[o] for o in of]
    return now, slow, owners


def _assume_kinds(result: Result, ctx: KindContext) -> None:
    """The kinds the run assumed, in ``data.kinds``; a kind unsure on some rows is said in a check."""
    assumed = kinds.assumed(ctx)
    result.data["kinds"] = assumed
    for kind, unsure in (assumed.get("unsure") or {}).items():
        result.passed(
            "answer_kind",
            f"{len(unsure['rows'])} rows were assumed {kind} answers, unsure: {unsure['why']}; "
            f"{kind} checks only warn on them",
        )


def _probe_checks_now(result: Result, env: Environment, opts: TestRewardRequest, last: list) -> list[Score]:
    scope = env.rows(-1 if opts.num_examples is None else opts.num_examples)
    sample = scope[: PROBE_ROWS if opts.num_examples is None else len(scope)]
    hints = env.format_hints()
    golds = {r.index: rp.gold_value(r.answer, r.question) for r in scope}
    ctx = KindContext(scope, golds, {}, hints, opts, env)
    kinds.assign(ctx)
    ctx.state["environment"] = kinds.environment_kind(list(ctx.kinds.values()))
    _assume_kinds(result, ctx)
    if opts.num_examples is None:  # a row of every answer shape the data has, not only its first rows'
        for unit in kinds.units():
            sample += unit.extra_rows(ctx, sample, SHAPE_ROWS)

    built = []
    for row in sample:
        gold, kind = golds[row.index], ctx.kinds[row.index]
        if gold is None:
            continue
        unit = kinds.unit(kind.kind)
        probes = unit.first_probes(row, gold, kind, ctx)
        if probes is None:
            other = other_golds(gold, golds.values())
            wrongs = unit.own_wrongs(kind, gold, ctx)
            probes = rp.build_probes(
                row, hints, opts.gold_template, opts.preset, wrongs, other[0] if other else None, unit.core_hacks
            )
            unit.more_first_probes(probes, kind, ctx)
        built.append(probes)
    skipped = sum(1 for r in sample if golds[r.index] is None)
    if skipped:
        result.warn(
            "gold_answers",
            f"{skipped} of {len(sample)} probed rows have no gold answer; probes need one",
            "pass a --custom file for rows without an answer column",
        )
    if not built:
        return _without_golds(result, env, opts, ctx, sample, last)
    ctx.fn = rp.correctness_function(env.reward_functions)
    fn = ctx.fn
    items, scores, elapsed = _score(env, built, opts)
    rows = _results(built, scores)
    for rr in rows:
        rr.reads = fn  # a probe whose correctness function timed out is no evidence (RowResult.of)

    # phase two: the answer kind's probes, in the format the gold earned the reward with
    for unit in kinds.units():
        unit.before_second(ctx, rows)
    second = []
    for rr, b in zip(rows, built):
        template = rp.best_format(rr, b)
        kind = ctx.kinds[rr.row.index]
        unit = kinds.unit(kind.kind)
        extra = unit.second_probes(rr, kind, template, ctx)
        if not unit.runs_programs and rp.gold_established(rr):
            extra = extra + rp.first_box_probe(rr.gold, template, unit.own_wrongs(kind, rr.gold, ctx))
        second.append(rp.RowProbes(rr.row, rr.gold, extra))
    # Programs start child processes: a few rows at a time, so no call waits for a free slot longer than
    # --timeout. The slow probes (an infinite loop holds a child for the reward's own time limit) are held back:
    # scored last, alone, within rp.slow_bound (``slow_verdicts``), so a reward whose limit is longer than
    # --timeout, or one that never returns, costs no other check its verdict.
    programs = any(kinds.unit(ctx.kinds[rr.row.index].kind).runs_programs for rr in rows)
    rows_at_once = PROGRAM_ROWS_AT_ONCE if programs else None
    second, slow, owners = _set_apart(second, ctx)
    items2, scores2, elapsed2 = _score(env, second, opts, rows_at_once)
    for rr, extra in zip(rows, _results(second, scores2)):
        rr.scored += extra.scored
    all_items, first = items + items2, scores + scores2
    # The second scoring (determinism) and the health checks leave out the slow probes: they cost the
    # program timeout each time and their slowness is the harness doing its job.
    again = env.score_sync(all_items, opts.timeout, rows_at_once or opts.concurrency)

    kind_name = ctx.state["environment"] = kinds.environment_kind([ctx.kinds[rr.row.index] for rr in rows])
    result.data["probes"] = {
        "rows": len(built),
        "probes": len(all_items),
        "answer_kind": kind_name,
        "seconds": round(elapsed + elapsed2, 3),
        "probes_per_second": round(len(all_items) / (elapsed + elapsed2), 1) if elapsed + elapsed2 > 0 else None,
        "formats": [
            {"source": s, "template": t}
            for s, t in rp.gold_templates(hints, opts.gold_template, rp.user_text(rows[0].row))
        ],
        "by_probe": rp.summarize_probe_kinds(rows, env.reward_functions),
        "example": verdicts.example(rows[0]),
        "correctness_function": fn,
    }
    verdicts.gold_check(result, rows, fn, opts)
    verdicts.margin_check(result, rows, fn, opts)
    verdicts.varies_check(result, rows, env)
    verdicts.format_check(result, rows)
    stated = rp.prompt_stated_probe_ids(hints, opts.gold_template, rp.user_text(rows[0].row))
    verdicts.prompt_format_check(result, rows, stated, fn, hints.system_prompt or rp.user_text(rows[0].row))
    environment_unit = kinds.unit(kind_name)

    def slow_verdicts(out: Result) -> None:  # the verdicts that read the slow probes
        done = []
        if slow:
            done = _score_slow(env, slow, opts)
            for k, extra in zip(owners, done):
                rows[k].scored += extra.scored
            result.data["probes"]["probes"] += sum(len(b.probes) for b in slow)
            result.data["probes"]["by_probe"] = rp.summarize_probe_kinds(rows, env.reward_functions)
            result.data["scoreboard"] = scoreboard.families(rows, fn)
        verdicts.hack_check(out, rows, fn, environment_unit.runs_programs)
        for unit in kinds.units():
            unit.slow_checks(out, [d for d in done if ctx.kinds[d.row.index].kind == unit.name], ctx)
            unit.last_checks(out, ctx)

    if slow:
        _later(result, last, slow_verdicts)
    else:
        slow_verdicts(result)
    for unit in kinds.units():
        unit.probe_checks(result, rows, ctx)
    if opts.preset == "gsm8k":
        verdicts.equivalent_check(result, rows, fn)
    verdicts.determinism_check(result, first, again, [p for b in built + second for p in b.probes])
    if not environment_unit.runs_programs:
        scoreboard.state_leak_check(result, env, opts, golds, rows, built, fn)
        _constant_replies(result, env, opts, ctx, rows, built, fn)
    result.data["scoreboard"] = scoreboard.families(rows, fn)

    # the whole dataset (or the --num-examples rows)
    dataset.check_rows(result, scope, golds, ctx.kinds)
    prompts.check_prompt_columns(result, scope)
    for unit in kinds.units():
        unit.dataset_checks(result, ctx)
    prompts.check_prompt_task(result, [r for r in scope if ctx.kinds[r.index].kind == "label"], golds, opts.env_args)
    leaks.check_answer_leak(result, scope, golds, leaks.kind_forms(ctx))
    splits.check_test_split(result, scope, opts.env_args)
    splits.check_loaded_split(result, scope, env.num_rows(), opts.env_args, opts.env)
    check_validate(result, env, scope, opts.timeout)
    dataset.reach_from_probes(result, env, opts, scope, golds, ctx.kinds, rows, built, fn, PROGRAM_ROWS_AT_ONCE)
    last.append(lambda: verdicts.evidence(result, rows))  # after every verdict that reads the probes
    return first + again


def _constant_replies(
    result: Result, env: Environment, opts: TestRewardRequest, ctx: KindContext, rows: list, built: list, fn
) -> None:
    """constant_answer: the data's most common golds and its refusal-style answers, given to every row of the whole
    data in the format the gold earned the reward with (``reward.shortcuts``)."""
    from vlab.reward.judge_data import row_lists

    established = [(rr, b) for rr, b in zip(rows, built) if rp.gold_established(rr)]
    if not established:
        result.skip("constant_answer", "no probed row has a gold that beats wrong answers to compare with")
        return
    template = rp.best_format(*established[0])
    top = max(rp.value(rp.best_gold(rr), fn) for rr, _ in established)
    right_lists = {}
    for r in ctx.scope:
        right = row_lists(r)[0] + ([str(a) for a in r.answer] if isinstance(r.answer, (list, tuple)) else [])
        if right:
            right_lists[r.index] = right

    probe = rp.Probe("constant", "constant", "")

    def score(items: list) -> list:
        scores = env.score_sync([(row, rp.fill(template, text)) for row, text in items], opts.timeout, opts.concurrency)
        scored = [rp.ProbeScore(probe, s) for s in scores]
        return [rp.value(ps, fn) if rp.got_score(ps, fn) else None for ps in scored]

    golds = {r.index: ctx.golds[r.index] for r in ctx.scope}
    distinct = len({str(g).strip().casefold() for g in golds.values() if g not in (None, "")})
    closed = ctx.state.get("environment") in shortcuts.CLOSED_KINDS or (distinct <= 10 and distinct * 5 <= len(golds))
    shortcuts.check_constant_replies(result, ctx.scope, golds, right_lists, score, top, closed)


def _without_golds(
    result: Result, env: Environment, opts: TestRewardRequest, ctx: KindContext, sample: list, last: list
) -> list[Score]:
    """No probed row has a gold: the units whose probes need none (code hacks must not beat a wrong program)
    probe those rows; else nothing was scored, never a pass."""
    found = []
    for r in sample:
        kind = ctx.kinds[r.index]
        probes = kinds.unit(kind.kind).no_gold_probes(r, kind, ctx) if ctx.golds[r.index] is None else None
        if probes is not None:
            found.append(rp.RowProbes(r, "", probes))
    if found:
        built, slow, owners = _set_apart(found, ctx)
        _, scores, _ = _score(env, built, opts, PROGRAM_ROWS_AT_ONCE)
        rows = _results(built, scores)

        def goldless_verdicts(out: Result) -> None:
            done = _score_slow(env, slow, opts)
            for k, extra in zip(owners, done):
                rows[k].scored += extra.scored
            for unit in kinds.units():
                mine = [rr for rr in rows if ctx.kinds[rr.row.index].kind == unit.name]
                if mine:
                    slow_mine = [d for d in done if ctx.kinds[d.row.index].kind == unit.name]
                    unit.no_gold_checks(out, mine, slow_mine, ctx)
                unit.last_checks(out, ctx)

        _later(result, last, goldless_verdicts)
        last.append(lambda: verdicts.evidence(result, rows))  # after every verdict that reads the probes
        return scores
    if opts.custom or opts.completions:
        result.skip("probes", "no row has a gold answer to build probes from")
    else:  # nothing at all was scored: never a pass
        result.fail(
            "probes",
            "no probe ran: no probed row has a gold answer (and the rows are not code with tests)",
            "give the answer column in --env-args, or score your own cases with --custom / --completions",
        )
    return []


def _results(built: list[rp.RowProbes], scores: list[Score]) -> list[rp.RowResult]:
    out, k = [], 0
    for b in built:
        out.append(rp.RowResult(b.row, b.gold, [rp.ProbeScore(p, scores[k + i]) for i, p in enumerate(b.probes)]))
        k += len(b.probes)
    return out
