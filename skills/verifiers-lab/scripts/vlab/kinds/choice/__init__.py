"""Multiple choice, as one unit: an answer key (a letter, a 0- or 1-based index, or the option's text) beside a
choices column (``formats``); the options a prompt shows (``options``); every option label as a probe, the gold's
label in every form a model writes it (``probes``); the prompt and the key checked on every row (``prompt``).

A row is a choice row when its prompt lists options or it carries choices and the gold names one of them (or any
row with options, once most rows are multiple choice), or when its gold is a lone letter key."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlab.kinds.base import KindContext, KindUnit, RowKind
from vlab.kinds.choice.formats import FORMATS
from vlab.kinds.choice.options import as_letter, names_an_option, prompt_options, row_choices

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.reward.probes import Probe, RowProbes, RowResult


class ChoiceUnit(KindUnit):
    name = "choice"
    order = 20
    formats = FORMATS

    @property
    def reads(self) -> dict[str, tuple[str, ...]]:
        from vlab.kinds.choice.probes import FORM, LABEL, NEAR

        return {"choice_forms": (FORM, NEAR), "choice_partial_credit": (LABEL, NEAR)}

    core_hacks = False  # a key is a label, not text: its wrong forms are its own (wrong_label)

    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        if gold is None:
            return None
        options = prompt_options(row.question)
        choices = row_choices(fields)
        if (options is not None or choices is not None) and (
            expect == "choice" or names_an_option(gold, options, choices)
        ):
            return RowKind("choice", options=options, choices=choices)
        if as_letter(gold) and choices is None and options is None and len(gold.strip("() .")) == 1:
            return RowKind("choice")  # a letter key with no options anywhere: the prompt checks say so
        return None

    def refine(self, ctx: KindContext) -> None:
        """Most rows multiple choice: every row with options is one (a gold that names none is then checked as such)."""
        from vlab.kinds import environment_kind, row_kind

        if environment_kind(list(ctx.kinds.values())) == "choice":
            ctx.kinds = {r.index: row_kind(r, ctx.golds[r.index], expect="choice") for r in ctx.scope}

    def own_wrongs(self, kind: RowKind, gold: str, ctx: KindContext) -> list[str] | None:
        offered = kind.options.labels if kind.options is not None else None
        return [label for label in offered if label != gold] if offered and gold in offered else None

    def more_first_probes(self, built: RowProbes, kind: RowKind, ctx: KindContext) -> None:
        from vlab.kinds.choice.probes import label_probes
        from vlab.reward import probes as rp

        primary = rp.primary_template(ctx.hints, ctx.opts.gold_template, rp.user_text(built.row))
        extra = label_probes(built.gold, kind, primary)
        built.probes += extra
        built.formats |= {p.id: primary for p in extra if p.category == "gold_alt"}

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        from vlab.kinds.choice.probes import form_probes

        return form_probes(rr, kind, template, ctx.fn)

    def reach_probes(self, row: Row, gold: str, kind: RowKind, template: str) -> list[Probe] | None:
        """One of the option labels the prompt shows must earn the top reward."""
        from vlab.kinds.choice.probes import LABEL
        from vlab.reward.probes import Probe, fill

        if kind.options is None:
            return None
        return [Probe(f"{LABEL}:{label}", LABEL, fill(template, label)) for label in kind.options.labels]

    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.choice.probes import check_choices

        check_choices(result, rows, ctx.kinds, ctx.fn)

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.choice import prompt
        from vlab.reward.prompts import report_rows

        check_gold = prompt.check_gold_in_choices
        check_gold(result, ctx.scope, ctx.golds, ctx.kinds)
        rows = [r for r in ctx.scope if ctx.kinds[r.index].kind == self.name]
        bad = [
            (row, status, prompt.group_of(why), why)
            for row in rows
            for status, why in prompt.choice_problems(row, ctx.kinds[row.index], ctx.golds.get(row.index))
        ]
        if rows:
            report_rows(result, prompt.CHECK, bad, len(rows), prompt.OK, prompt.HINT)


UNIT = ChoiceUnit()
