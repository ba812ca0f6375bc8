"""test_reward's run: load, probe, score through verifiers, judge, report.

The probes run in two phases on the probed rows (``--num-examples``, default 5): first the
gold in every format, wrong, malformed and hacking answers (``probes``, plus every option
label for multiple choice and the reference program for code); then, written the way the
gold earned the reward, the probes of the row's answer kind (``numbers``, ``choices``,
``code``). Then the whole dataset (every row, or the ``--num-examples`` rows): its rows are
checked without scoring (``dataset.check_rows``, ``prompts``) and each gold is scored until
``--reach-seconds`` runs out (``dataset.check_reachable``). Verdicts are in ``verdicts``,
health in ``health``, the user's files in ``files``.
"""

from __future__ import annotations

import json
import time

from vlab.core.files import write_atomic
from vlab.core.installed import load_scale
from vlab.core.result import Result, UsageError
from vlab.env import Environment, Score
from vlab.env.pool import ScoringPool
from vlab.env.remote import LOAD_LIMIT, LoadFailed, RemoteEnvironment
from vlab.reward import (
    choices,
    code,
    code_checks,
    data_file,
    dataset,
    label_map,
    labels,
    leaks,
    numbers,
    prompts,
    scoreboard,
    shapes,
    verdicts,
)
from vlab.reward import probes as rp
from vlab.reward.conversation import conversation_checks
from vlab.reward.files import completion_checks, custom_checks
from vlab.reward.health import health_checks
from vlab.reward.isolation import isolation_checks
from vlab.reward.kinds import environment_kind, row_kind
from vlab.reward.request import PROBE_ROWS, SHAPE_ROWS, TestRewardRequest
from vlab.reward.validate import check_validate

CODE_ROWS_AT_ONCE = 2


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
                {**opts.env_args, **judge.env_args(opts.judge, server, opts.env, code.slow_bound(opts.timeout) / 2)},
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
    """Whether the probes will meet code with tests (the rows ``_probe_checks`` reads): the pool's
    ``spread`` argument is its negation."""
    if opts.skip_probes or opts.judge.active or not env.reward_functions or env.num_rows() == 0:
        return False
    scope = env.rows(-1 if opts.num_examples is None else opts.num_examples)
    return any(row_kind(r, rp.gold_value(r.answer, r.question)).kind == "code" for r in scope)


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
    """The slow code probes, alone, within code.slow_bound(--timeout) a call: a reward's own longer time
    limit fits in it; a reward that never returns is stopped there, after everything else was scored."""
    items = [(b.row, p.text) for b in slow for p in b.probes]
    scores = env.score_sync(items, code.slow_bound(opts.timeout), CODE_ROWS_AT_ONCE, retry=False) if items else []
    return _results(slow, scores)


def _probe_checks(result: Result, env: Environment, opts: TestRewardRequest, last: list | None = None) -> list[Score]:
    """The probes and their checks. ``last`` receives what runs after every other check of the run (the
    slow code probes); None: run it at the end of this function."""
    deferred: list = []
    scores = _probe_checks_now(result, env, opts, deferred)
    if last is None:
        for finish in deferred:
            finish()
    else:
        last += deferred
    return scores


def _own_kind_wrongs(kind, gold: str, space) -> list[str] | None:
    """Wrong answers of the row's own kind: the other labels or options it offers, when the gold is one of them
    as written (a gold given as an index would leave its own label among the "wrong" ones); else None."""
    offered = space.labels if space is not None and kind.kind == "label" else None
    if kind.kind == "choice" and kind.options is not None:
        offered = kind.options.labels
    return [label for label in offered if label != gold] if offered and gold in offered else None


def _probe_checks_now(result: Result, env: Environment, opts: TestRewardRequest, last: list) -> list[Score]:
    scope = env.rows(-1 if opts.num_examples is None else opts.num_examples)
    sample = scope[: PROBE_ROWS if opts.num_examples is None else len(scope)]
    hints = env.format_hints()
    golds = {r.index: rp.gold_value(r.answer, r.question) for r in scope}
    kinds = {r.index: row_kind(r, golds[r.index]) for r in scope}
    reads = code.reads_seconds(opts.timeout)  # how long hack:reads_data_files searches
    if environment_kind(list(kinds.values())) == "choice":
        kinds = {r.index: row_kind(r, golds[r.index], expect="choice") for r in scope}
    space = labels.label_space(scope, golds, kinds)  # the data's kind: a digit label is a label, not a number
    if space is not None:
        kinds = {i: labels.label_kind() if i in space.offered else k for i, k in kinds.items()}
    if opts.num_examples is None:  # a row of every answer shape the data has, not only its first rows'
        sample += shapes.shape_rows(scope, sample, golds, kinds, SHAPE_ROWS)

    built = []
    for row in sample:
        gold, kind = golds[row.index], kinds[row.index]
        if gold is None:
            continue
        if kind.kind == "code":
            probes, formats = code.code_probes(gold, kind)
            built.append(rp.RowProbes(row, gold, probes, formats))
            continue
        rows_probes = rp.build_probes(row, hints, opts.gold_template, opts.preset, _own_kind_wrongs(kind, gold, space))
        if kind.kind == "choice":
            primary = rp.primary_template(hints, opts.gold_template, rp.user_text(row))
            extra = choices.label_probes(gold, kind, primary)
            rows_probes.probes += extra
            rows_probes.formats |= {p.id: primary for p in extra if p.category == "gold_alt"}
        built.append(rows_probes)
    skipped = sum(1 for r in sample if golds[r.index] is None)
    if skipped:
        result.warn(
            "gold_answers",
            f"{skipped} of {len(sample)} probed rows have no gold answer; probes need one",
            "pass a --custom file for rows without an answer column",
        )
    if not built:
        goldless = [r for r in sample if golds[r.index] is None and kinds[r.index].kind == "code"]
        if goldless:  # code hacks need no reference program: they must not beat a wrong one
            built = [rp.RowProbes(r, "", code.goldless_probes(kinds[r.index], r.question, reads)) for r in goldless]
            built, slow, owners = code.slow_apart(built)
            _, scores, _ = _score(env, built, opts, CODE_ROWS_AT_ONCE)
            rows = _results(built, scores)

            def goldless_verdicts(out: Result) -> None:
                done = _score_slow(env, slow, opts)
                for k, extra in zip(owners, done):
                    rows[k].scored += extra.scored
                code_checks.check_goldless(out, rows)
                code_checks.check_slow(out, done, code.slow_bound(opts.timeout), opts.timeout)
                code_checks.check_leftovers(out)

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
    fn = rp.correctness_function(env.reward_functions)
    items, scores, elapsed = _score(env, built, opts)
    rows = _results(built, scores)
    for rr in rows:
        rr.reads = fn  # a probe whose correctness function timed out is no evidence (RowResult.of)

    # phase two: the answer kind's probes, in the format the gold earned the reward with
    second = []
    coded = [rr.row for rr in rows if kinds[rr.row.index].kind == "code"]
    records = data_file.matched_records(coded, opts.env_args, opts.env) if coded else {}
    cuts: dict[int, str] = {}  # code rows whose loader kept fewer tests than the data file's test column
    for rr, b in zip(rows, built):
        template = rp.best_format(rr, b)
        kind = kinds[rr.row.index]
        extra: list[rp.Probe] = []
        if kind.kind == "number":
            extra = numbers.number_probes(rr.gold, template, _prompt_text(rr.row))
        elif kind.kind == "choice":
            extra = choices.form_probes(rr, kind, template, fn)
        elif kind.kind == "label":
            extra = labels.label_probes(rr.gold, space, template)
        elif kind.kind == "code" and rp.gold_established(rr):
            record = records.get(rr.row.index)
            extra = code.hack_probes(kind, rr.gold, template, rr.row.question, rr.row, record, reads)
            cut = code.tests_cut(kind, record, rr.gold)
            if cut:
                cuts[rr.row.index] = cut
        if kind.kind != "code" and rp.gold_established(rr):
            extra = extra + rp.first_box_probe(rr.gold, template, _own_kind_wrongs(kind, rr.gold, space))
        second.append(rp.RowProbes(rr.row, rr.gold, extra))
    # Code probes start child processes: a few rows at a time, so no call waits for a free slot longer
    # than --timeout. The slow programs (an infinite loop holds a child for the reward's own time limit)
    # are held back: scored last, alone, within code.slow_bound (``slow_verdicts``), so a reward whose
    # limit is longer than --timeout, or one that never returns, costs no other check its verdict.
    code_rows = CODE_ROWS_AT_ONCE if any(kinds[rr.row.index].kind == "code" for rr in rows) else None
    second, slow, owners = code.slow_apart(second)
    items2, scores2, elapsed2 = _score(env, second, opts, code_rows)
    for rr, extra in zip(rows, _results(second, scores2)):
        rr.scored += extra.scored
    all_items, first = items + items2, scores + scores2
    # The second scoring (determinism) and the health checks leave out the slow probes: they cost the
    # program timeout each time and their slowness is the harness doing its job.
    again = env.score_sync(all_items, opts.timeout, code_rows or opts.concurrency)

    kind_name = environment_kind([kinds[rr.row.index] for rr in rows])
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

    def slow_verdicts(out: Result) -> None:  # the verdicts that read the slow probes
        if slow:
            done = _score_slow(env, slow, opts)
            for k, extra in zip(owners, done):
                rows[k].scored += extra.scored
            result.data["probes"]["probes"] += sum(len(b.probes) for b in slow)
            result.data["probes"]["by_probe"] = rp.summarize_probe_kinds(rows, env.reward_functions)
            result.data["scoreboard"] = scoreboard.families(rows, fn)
        verdicts.hack_check(out, rows, fn, kind_name == "code")
        if slow:
            code_checks.check_slow(out, done, code.slow_bound(opts.timeout), opts.timeout)
        if kind_name == "code":
            code_checks.check_leftovers(out)

    if slow:
        _later(result, last, slow_verdicts)
    else:
        slow_verdicts(result)
    if kind_name == "code":
        code_checks.check_code(result, rows, fn, cuts)
    carried = numbers.symbols_in_data([*golds.values(), *(r.question for r in scope), hints.system_prompt])
    numbers.check_numbers(result, rows, fn, rp.gold_established, carried)
    choices.check_choices(result, rows, kinds, fn)
    if space is not None:
        labels.check_label_probes(result, rows, fn, rp.gold_established)
    if opts.preset == "gsm8k":
        verdicts.equivalent_check(result, rows, fn)
    verdicts.determinism_check(result, first, again)
    if kind_name != "code":
        scoreboard.state_leak_check(result, env, opts, golds, rows, built, fn)
        scoreboard.constant_answer_info(result, env, opts, rows, built, fn)
    result.data["scoreboard"] = scoreboard.families(rows, fn)

    # the whole dataset (or the --num-examples rows)
    dataset.check_rows(result, scope, golds, kinds)
    prompts.check_prompts(result, scope, kinds, golds)
    leaks.check_answer_leak(result, scope, golds)
    leaks.check_test_split(result, scope, opts.env_args)
    check_validate(result, env, scope, opts.timeout)
    if space is not None:
        labels.check_label_space(result, scope, golds, space)
        label_map.check_label_map(result, scope, golds, opts.env_args, opts.env)
        result.data["probes"]["labels"] = {"labels": list(space.labels), "from": space.source}
    dataset.reach_from_probes(result, env, opts, scope, golds, kinds, rows, built, fn, CODE_ROWS_AT_ONCE)
    last.append(lambda: verdicts.evidence(result, rows))  # after every verdict that reads the probes
    return first + again


def _prompt_text(row) -> str:
    """Every message of the row's prompt (a system prompt asking for decimals counts too)."""
    return "\n".join(str(m.get("content") or "") for m in row.prompt) or row.question


def _results(built: list[rp.RowProbes], scores: list[Score]) -> list[rp.RowResult]:
    out, k = [], 0
    for b in built:
        out.append(rp.RowResult(b.row, b.gold, [rp.ProbeScore(p, scores[k + i]) for i, p in enumerate(b.probes)]))
        k += len(b.probes)
    return out
