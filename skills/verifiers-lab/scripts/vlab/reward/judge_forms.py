"""How a judge-scored reward reads its judge (test_reward --judge stub): the verdict forms of
``judge_server.FORMS`` (each parsed the way it means, no negative verdict as high as a positive one, a
reply without a verdict an error), failed calls (HTTP 500, a dropped connection: errors, never scores),
and a judge that never answers (``judge_time_limit``: the reward's own limit ends it as an error).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from vlab.core.result import Result
from vlab.env import Score
from vlab.reward.judge_server import FORM_MARK, FORMS, JudgeServer

LIMIT_ARG = "judge_timeout_seconds"  # the judge templates' time limit per judge call

# (positive, negative) verdict forms of one kind: where both parse the positive scores higher; the primary
# kinds (what the templates' prompts ask for) must parse both ways or neither, the others may raise
FORM_PAIRS = (
    ("json_high", "json_low"),
    ("score_high", "score_low"),
    ("bare_yes", "bare_no"),
    ("word_correct", "word_incorrect"),
    ("prose_high", "prose_incorrect"),
    ("letter_a", "letter_b"),
)
_PRIMARY = {"json_high", "score_high", "bare_yes"}


@dataclass
class Scored:
    row: int
    probe: str
    score: Score
    fn: str | None

    @property
    def error(self) -> str | None:
        err = (self.score.errors or {}).get(self.fn) if self.fn else None
        err = err or self.score.scoring_error
        return f"{err.type}: {err.message}" if err else None

    @property
    def value(self) -> float | None:
        v = self.score.total if self.fn is None else self.score.per_function.get(self.fn)
        return None if self.error or not isinstance(v, (int, float)) else float(v)


def form_reply(gold: str, name: str) -> str:
    """The gold carrying the stub's mark for verdict form ``name``."""
    return f"{gold}\n{FORM_MARK.format(name=name)}"


def forms_check(result: Result, by_row) -> None:
    first = next(iter(by_row.values()))
    got = {name: first.get(f"form_{name}") for name in FORMS}
    silent = [n for n, (_, want) in FORMS.items() if want == "error" and got[n] and got[n].error is None]
    parsed = {n: got[n].value for n in FORMS if got[n] and got[n].error is None}
    problems = [f"{n} (a reply with no verdict) scored {parsed[n]:g} silently" for n in silent]
    accepted = []
    for hi, lo in FORM_PAIRS:
        if hi in parsed and lo in parsed:
            accepted.append(hi.split("_")[0])
            if not parsed[hi] > parsed[lo]:
                problems.append(
                    f"{lo} ({FORMS[lo][0].splitlines()[-1]!r}) scored {parsed[lo]:g}, not below {hi} ({parsed[hi]:g})"
                )
        elif hi in _PRIMARY and (hi in parsed) != (lo in parsed):
            problems.append(f"only one of {hi}/{lo} parses")
    highs = [parsed[n] for n, (_, want) in FORMS.items() if want == "high" and n in parsed]
    lows = [n for n, (_, want) in FORMS.items() if want == "low" and n in parsed]
    passing = [n for n in lows if highs and parsed[n] >= min(highs)]
    if passing:  # a negative verdict read as a pass, whatever form the positive one took
        problems.append(
            f"the negative verdict {FORMS[passing[0]][0].splitlines()[-1]!r} ({passing[0]}) scored "
            f"{parsed[passing[0]]:g}, as high as a positive one"
        )
    mid = parsed.get("score_mid")
    if mid is not None and "score_high" in parsed and "score_low" in parsed:
        if not parsed["score_low"] <= mid <= parsed["score_high"]:
            problems.append(f"score_mid ('Score: 7/10') scored {mid:g}, outside 'Score: 2/10'..'Score: 9/10'")
    fake = "prose_quoting_fake_low"
    if fake in parsed and "prose_high" in parsed and parsed[fake] >= parsed["prose_high"]:
        problems.append(f"{fake} scored {parsed[fake]:g}: the parser reads a score quoted inside the judge's prose")
    elif fake not in parsed and got[fake] is not None:
        problems.append(f"{fake} raised: a verdict after prose is not read ({got[fake].error[:100]})")
    result.data["judge"] = result.data.get("judge", {}) | {
        "verdict_forms": {n: ("error" if got[n] and got[n].error else parsed.get(n)) for n in FORMS}
    }
    if not accepted and not problems:
        problems.append("no verdict form parses (JSON score, 'Score: N/10', yes/no)")
    if problems:
        result.fail(
            "judge_verdicts",
            "; ".join(problems[:3]),
            "read the verdict from a JSON object or the judge's last line; raise when there is none, never return 0",
        )
    else:
        result.passed(
            "judge_verdicts",
            f"verdicts parse ({', '.join(accepted)}; a score quoted in prose is not read); refusals and replies "
            "without a verdict raise",
        )


def time_limit_check(result: Result, env, opts, server: JudgeServer, row_gold, fn: str | None) -> None:
    """judge_time_limit: a judge that never answers (the stub holds the call past test_reward's bound, then
    drops it) must end as an error within the reward's own time limit, never as a score, never a hang."""
    from vlab.reward.probes import slow_bound

    bound = slow_bound(opts.timeout)
    # held until the server stops: past test_reward's bound however long a busy machine lets the call run
    # (env.evidence: a starved call gets up to bound x stretch()), so only the reward's own limit can end it in time
    server.hang_seconds = 3600.0
    row, gold = row_gold
    start = time.perf_counter()
    (score,) = env.score_sync([(row, form_reply(str(gold), "judge_hang"))], bound, 1)
    waited = time.perf_counter() - start
    got = Scored(row.index, "form_judge_hang", score, fn)
    result.data["judge"] = result.data.get("judge", {}) | {"time_limit": {"waited_seconds": round(waited, 1)}}
    if score.timed_out:
        result.fail(
            "judge_time_limit",
            f"a judge that never answers held the reward past test_reward's bound of {bound:g} s: the judge call "
            "has no time limit, so one stuck judge request stalls its rollouts",
            f"give every judge call a time limit and let a timeout error the rollout (the templates' {LIMIT_ARG}; "
            "asyncio.wait_for around the call, or the client's timeout)",
        )
    elif got.error is None:
        result.fail(
            "judge_time_limit",
            f"a judge call that failed (no reply) was scored {got.value if got.value is not None else '?'} "
            "instead of erroring the rollout",
            "let a failed judge call raise (judge_error), never return a number",
        )
    else:
        result.passed(
            "judge_time_limit",
            f"a judge that never answers errors the rollout after {waited:.1f} s ({got.error[:120]})",
        )
