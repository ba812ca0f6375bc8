"""Numbers and math answers, as one unit: GSM8K's '#### N', \\boxed{}, plain numbers and LaTeX expressions
(``formats``); the gold's equal spellings and its near misses, by its shape (``probes``, ``shapes``), compared as
the numeric templates compare (``equivalence``: math-verify, plain numbers exactly).

A row is a number row when its gold reads as a number or a math expression. That is sure when such golds are the
data's own (at least half the rows with a gold); a year or a fraction among trivia answers is not, and there the
number checks only warn (an exact-match reward over text answers is right to refuse "2,017" for "2017")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlab.kinds.base import KindContext, KindUnit, RowKind, by_certainty
from vlab.kinds.number.formats import FORMATS
from vlab.kinds.number.values import looks_like_math, parse_number

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.reward.probes import Probe, RowResult

SURE_SHARE = 0.5  # number rows are the data's kind from this share of the rows with a gold


def prompt_text(row: Row) -> str:
    """Every message of the row's prompt (a system prompt asking for decimals counts too)."""
    return "\n".join(str(m.get("content") or "") for m in row.prompt) or row.question


class NumberUnit(KindUnit):
    name = "number"
    order = 40
    formats = FORMATS

    @property
    def reads(self) -> dict[str, tuple[str, ...]]:
        from vlab.kinds.number import several
        from vlab.kinds.number.probes import FORM, NEAR

        return {
            "number_forms": (FORM,),
            "near_misses": (NEAR,),
            "several_answers": (several.FORM, several.NEAR),
            "answer_unit": (several.UNIT,),
        }

    core_hacks = False  # its near misses are the number-aware ones (a sign flipped, a digit appended)

    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        if gold is not None and (parse_number(gold) is not None or looks_like_math(gold)):
            return RowKind("number")
        return None

    def certainty(self, ctx: KindContext, rows: list[Row]) -> tuple[bool, str]:
        golded = sum(1 for g in ctx.golds.values() if g is not None)
        if not golded or len(rows) / golded >= SURE_SHARE:
            return True, ""
        shown = ", ".join(repr(ctx.golds[r.index]) for r in rows[:3])
        return False, (
            f"{len(rows)} of the {golded} golds read as numbers or math (e.g. {shown}); the data's answers are mostly "
            "not numbers"
        )

    def extra_rows(self, ctx: KindContext, sample: list[Row], limit: int) -> list[Row]:
        from vlab.kinds.number import several
        from vlab.kinds.number.shapes import shape_rows

        found = several.extra_rows(ctx.scope, sample, ctx.kinds, ctx.golds, limit)  # several answers, a unit: first
        return found + shape_rows(ctx.scope, sample + found, ctx.golds, ctx.kinds, limit - len(found))

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        """Several answers get their own probes (reordered, one dropped...), one value the spellings and near misses
        of its shape; a row with a unit also the gold with its unit written after it."""
        from vlab.kinds.number import several
        from vlab.kinds.number.probes import number_probes

        answers, unit = several.several_answers(rr.row, rr.gold), several.row_unit(rr.row)
        found = several.several_probes(answers, template, unit) if answers else []
        found = found or number_probes(rr.gold, template, prompt_text(rr.row))
        return found + (several.unit_probes(rr.gold, template, unit) if unit and not answers else [])

    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.number import several
        from vlab.kinds.number.probes import check_numbers, symbols_in_data
        from vlab.reward.probes import gold_established

        texts = [*ctx.golds.values(), *(r.question for r in ctx.scope), getattr(ctx.hints, "system_prompt", None)]
        carried = symbols_in_data(texts)
        mine = [rr for rr in rows if ctx.kinds[rr.row.index].kind == self.name]
        by_certainty(result, mine, ctx, lambda out, some: check_numbers(out, some, ctx.fn, gold_established, carried))
        by_certainty(result, mine, ctx, lambda out, some: several.check_several(out, some, ctx.fn, gold_established))

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.number import several

        several.check_prompts(result, ctx.scope, ctx.kinds, ctx.golds)


UNIT = NumberUnit()
