"""``constant_answer``: replies a policy can give to every prompt, scored on the whole data.

The replies: the data's most common golds (``TOP_GOLDS``), and a refusal or "no comment" style reply where the
data has one among its golds or its lists of right answers (TruthfulQA's "I have no comment"). Their figures come
from the whole data (every row test_reward reads, or ``--num-examples``), never from the probed rows alone: the
**data's own share** of a reply is the rows whose gold it is, or whose list of right answers holds it. Each reply is
then scored, in the format the gold earned the reward with, on the rows the data says it is right for and on as
many others (``SCORED_ROWS`` of each at most; ``JUDGE_ROWS`` for a judge, whose calls cost money), and the share of
the whole data it earns the top reward on is estimated from the two.

Verdicts, per reply:

- it earns the reward where the data says it is wrong: fail (the reward pays a constant answer);
- open answers (text, numbers, code, a judge's prose): a reply earning the reward, only where the data says it is
  right, on ``STEP_SHARE`` of the data or more is a shortcut worth learning: a warning and a next step (the reward
  is right; the data makes the shortcut, so it is no exit 1); ``WARN_SHARE`` or more warns (a refusal-style reply
  says so); on fewer than ``MIN_ROWS`` rows it is no shortcut (a tiny data set's repeated gold);
- closed answers (labels, option keys): the majority class is every policy's baseline: a warning when the classes
  are skewed (the majority's share ``SKEW`` above an even split), naming the class, its share and the number of
  classes, else a pass with the same figures.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from vlab.core.result import Result
from vlab.env import Row
from vlab.kinds.number.equivalence import same_value

TOP_GOLDS = 3  # the most common golds tried as constant replies
SCORED_ROWS = 200  # rows scored per reply where the data says it is right, and as many where it is wrong
JUDGE_ROWS = 6  # ... with a judge (each scoring is a judge call)
STEP_SHARE = 0.10  # a constant reply earning the reward on this share of an open-answer data: a next step too
WARN_SHARE = 0.05  # ... warns from this share
MIN_ROWS = 10  # ... and on at least this many rows (in a tiny data set one repeated gold is a large share)
SKEW = 0.2  # closed answers: the majority share this far above 1/classes warns
CLOSED_KINDS = ("label", "choice")
LISTED = 20
# Replies that dodge the question: a policy can learn to give them everywhere.
REFUSAL = re.compile(
    r"^(?:i have no comment|no comment|i don'?t know|i do not know|i'?m not sure|unknown|not known|"
    r"it depends|it is unknown|cannot be determined|can'?t be determined|not enough information|"
    r"there is not enough information|the question is ambiguous|i cannot answer( that)?|i can'?t answer( that)?|"
    r"none of the above|no answer|nobody knows|no one knows)\W*$",
    re.I,
)


def _norm(text: object) -> str:
    return " ".join(str(text).split()).strip(" .!").casefold()


_WORDY = re.compile(r"[A-Za-z]{3,}")


def _mathy(text: str) -> bool:
    """A value math-verify may call equal to another spelling: digits, and no words but LaTeX commands'."""
    return len(text) <= 60 and any(c.isdigit() for c in text) and not _WORDY.search(re.sub(r"\\[A-Za-z]+", "", text))


def _same(a: str, b: str) -> bool:
    if _norm(a) == _norm(b):
        return True
    if not (_mathy(a) and _mathy(b)):
        return False
    try:
        return same_value(a, b)
    except Exception:  # noqa: BLE001 -- math-verify on odd text: not the same
        return False


@dataclass
class Reply:
    """A constant reply and what the data and the reward say of it."""

    text: str
    why: str  # "the most common gold" / "a refusal-style reply the data lists as right"
    right: list[int] = field(default_factory=list)  # row indices the data says it is right for
    scored_right: int = 0
    paid_right: int = 0
    scored_wrong: int = 0
    paid_wrong: list[int] = field(default_factory=list)
    share: float | None = None  # the estimated share of the whole data it earns the top reward on


def candidates(rows: list[Row], golds: dict[int, str | None], right_lists: dict[int, list[str]]) -> list[Reply]:
    """The most common golds (at least two rows each), and the refusal-style reply the data has most often."""
    counts = Counter(_norm(g) for i, g in golds.items() if g not in (None, "") and str(g).strip())
    spelled: dict[str, str] = {}
    for g in golds.values():
        if g not in (None, "") and str(g).strip():
            spelled.setdefault(_norm(g), " ".join(str(g).split()))
    out = [
        Reply(spelled[k], "the most common gold" if i == 0 else "a common gold")
        for i, (k, n) in enumerate(counts.most_common(TOP_GOLDS))
        if n >= 2
    ]
    refusals = Counter()
    for i in golds:
        for text in [golds[i] or "", *right_lists.get(i, [])]:
            if REFUSAL.match(str(text).strip()):
                refusals[_norm(text)] += 1
                spelled.setdefault(_norm(text), " ".join(str(text).split()))
    if refusals:
        top = refusals.most_common(1)[0][0]
        if not any(_norm(r.text) == top for r in out):
            out.append(Reply(spelled[top], "a refusal-style reply the data counts as right"))
        else:
            next(r for r in out if _norm(r.text) == top).why += " (a refusal-style reply)"
    for reply in out:
        reply.right = [
            i
            for i, g in golds.items()
            if g not in (None, "")
            and (_same(str(g), reply.text) or any(_norm(a) == _norm(reply.text) for a in right_lists.get(i, [])))
        ]
    return out


def _spread(indices: list[int], n: int) -> list[int]:
    step = max(1, math.ceil(len(indices) / n)) if indices else 1
    return indices[::step][:n]


def check_constant_replies(
    result: Result,
    rows: list[Row],
    golds: dict[int, str | None],
    right_lists: dict[int, list[str]],
    score: Callable[[list[tuple[Row, str]]], list[float | None]],
    top: float,
    closed: bool,
    per_reply: int = SCORED_ROWS,
) -> None:
    """constant_answer (see the module's docstring). ``score(items)``: each (row, reply text)'s value (None: no
    score); ``top``: the reward the gold earns; ``closed``: the answers are labels or option keys."""
    with_gold = [r for r in rows if golds.get(r.index) not in (None, "")]
    if not with_gold:
        result.skip("constant_answer", "no row has a gold answer to take a constant reply from")
        return
    replies = candidates(with_gold, golds, right_lists)
    if not replies:
        result.data["constant_answer"] = {"rows": len(with_gold), "replies": []}
        result.passed(
            "constant_answer",
            f"no gold repeats over the {len(with_gold)} rows and the data lists no refusal-style answer: no constant "
            "reply is right on more than one row",
        )
        return
    by_index = {r.index: r for r in with_gold}
    for reply in replies:
        right = set(reply.right)
        on_right = _spread(sorted(right), per_reply)
        on_wrong = _spread([r.index for r in with_gold if r.index not in right], per_reply)
        items = [(by_index[i], reply.text) for i in on_right + on_wrong]
        values = score(items) if items else []
        for (row, _), v in zip(items, values):
            if v is None:
                continue
            paid = v >= top - 1e-6
            if row.index in right:
                reply.scored_right += 1
                reply.paid_right += paid
            else:
                reply.scored_wrong += 1
                if paid:
                    reply.paid_wrong.append(row.index)
        n_right, n_wrong = len(right), len(with_gold) - len(right)
        rate_right = reply.paid_right / reply.scored_right if reply.scored_right else None
        rate_wrong = len(reply.paid_wrong) / reply.scored_wrong if reply.scored_wrong else 0.0
        if rate_right is not None or reply.scored_wrong:
            reply.share = ((rate_right or 0.0) * n_right + rate_wrong * n_wrong) / len(with_gold)
    _verdict(result, replies, with_gold, golds, closed)


def _figures(reply: Reply, n: int) -> str:
    scored = reply.scored_right + reply.scored_wrong
    own = len(reply.right) / n
    paid = reply.paid_right + len(reply.paid_wrong)
    est = f"about {reply.share:.0%} of the {n} rows" if reply.share is not None else "no score"
    ids = ", ".join(str(i) for i in reply.right[:LISTED]) + (
        f" and {len(reply.right) - LISTED} more" if len(reply.right) > LISTED else ""
    )
    return (
        f"{reply.text!r} ({reply.why}; the data counts it right on {len(reply.right)}/{n} rows, {own:.1%}"
        + (f": example_id {ids}" if reply.right else "")
        + f") earns the top reward on {paid}/{scored} rows scored: {est}"
    )


def _classes(golds: dict[int, str | None], rows: list[Row]) -> tuple[int, list[tuple[str, int]]]:
    counts = Counter(_norm(golds[r.index]) for r in rows)
    spelled = {}
    for r in rows:
        spelled.setdefault(_norm(golds[r.index]), " ".join(str(golds[r.index]).split()))
    return len(counts), [(spelled[k], n) for k, n in counts.most_common()]


def _verdict(result: Result, replies: list[Reply], rows: list[Row], golds: dict[int, str | None], closed: bool) -> None:
    n = len(rows)
    scored = [r for r in replies if r.share is not None]
    result.data["constant_answer"] = {
        "rows": n,
        "replies": [
            {
                "answer": r.text,
                "why": r.why,
                "data_share": round(len(r.right) / n, 4),
                "data_rows": len(r.right),
                "scored": r.scored_right + r.scored_wrong,
                "paid": r.paid_right + len(r.paid_wrong),
                "paid_where_wrong": r.paid_wrong[:LISTED],
                "share": None if r.share is None else round(r.share, 4),
            }
            for r in replies
        ],
    }
    if not scored:
        result.skip("constant_answer", "no constant reply got a score (every scoring failed): no evidence")
        return
    wrong = [r for r in scored if r.paid_wrong]
    if wrong:
        r = wrong[0]
        ids = ", ".join(str(i) for i in r.paid_wrong[:LISTED])
        result.fail(
            "constant_answer",
            f"the constant reply {_figures(r, n)}; it is paid on {len(r.paid_wrong)} of {r.scored_wrong} scored rows "
            f"where the gold is something else (example_id {ids})",
            "compare the parsed answer with each row's own gold",
        )
        return
    if closed:
        classes, counts = _classes(golds, rows)
        major, m = counts[0]
        spread = ", ".join(f"{c} {k / n:.0%}" for c, k in counts[:6]) + (", ..." if len(counts) > 6 else "")
        result.data["constant_answer"].update(
            {"classes": classes, "majority": major, "majority_share": round(m / n, 4)}
        )
        best = max(scored, key=lambda r: r.share or 0.0)
        message = (
            f"the majority class {major!r} is the gold of {m}/{n} rows ({m / n:.0%}; {classes} classes: {spread}); "
            f"the constant reply {_figures(best, n)}"
        )
        if classes >= 2 and m / n >= 1 / classes + SKEW:
            result.warn(
                "constant_answer",
                message + f": a policy that always answers {major!r} earns {m / n:.0%} of the reward",
                "read every score against that baseline, not 0; balance the classes (subsample the majority) or "
                "weight the reward per class if the policy drifts to it",
            )
        else:
            result.passed("constant_answer", message)
        return
    worst = max(scored, key=lambda r: r.share or 0.0)
    share = worst.share or 0.0
    refusal = bool(REFUSAL.match(worst.text.strip()))
    kind = "a refusal a policy can learn to give instead of answering" if refusal else "one answer for every prompt"
    message = f"the constant reply {_figures(worst, n)}"
    if share * n < MIN_ROWS:
        result.passed("constant_answer", message + f" (under {MIN_ROWS} rows: no shortcut a policy learns)")
    elif share >= STEP_SHARE:
        result.warn(
            "constant_answer",
            message + f": {kind}, a shortcut worth learning (at least {STEP_SHARE:.0%} of the reward; the reward pays "
            "it only where the data counts it right)",
            "take the rows whose answer it is out of the training data (or most of them), or score it below a real "
            "answer; every figure is in data.constant_answer",
        )
        result.step(
            f"a policy that always answers {worst.text!r} earns about {share:.0%} of the reward: see constant_answer"
        )
    elif share >= WARN_SHARE:
        result.warn(
            "constant_answer",
            message + f": {kind} earns {share:.0%} of the reward",
            "if a policy drifts to it, take most of the rows whose answer it is out of the training data",
        )
    else:
        result.passed("constant_answer", message)
