"""Short answers with aliases, as one unit: a list of answers per row, any one of which is right (Natural Questions,
TriviaQA, WebQuestions, SQuAD). inspect recognises the lists (``formats``, read by ``kinds.lists``); test_reward
claims the rows whose environment carries the aliases (the short-answer templates' ``aliases``, or an answer held
as a list), probes every alias, the gold's spellings and other rows' aliases, and checks them (``probes``), compared
as the short-answer templates compare (``compare``: QA normalisation, any alias). A row of this kind is never a
number row: "2017" among aliases is text, and no numeric check reads it."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from vlab.kinds.base import KindContext, KindUnit, RowKind, by_certainty
from vlab.kinds.short_answer.formats import FORMATS

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.reward.probes import Probe, RowProbes, RowResult

OTHERS = 3  # other rows' golds used as the row's wrong answers


class ShortAnswerUnit(KindUnit):
    name = "short_answer"
    order = 35  # before numbers: an alias list's "2017" is text
    formats = FORMATS

    @property
    def reads(self) -> dict[str, tuple[str, ...]]:
        from vlab.kinds.short_answer.probes import ALIAS, FORM, OTHER

        return {"aliases": (ALIAS,), "alias_forms": (FORM,), "other_aliases": (OTHER,)}

    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        from vlab.kinds.short_answer.probes import row_aliases

        return RowKind(self.name) if gold is not None and row_aliases(row, fields) else None

    def refine(self, ctx: KindContext) -> None:
        from vlab.kinds.short_answer.probes import row_aliases

        # Where most answers held as lists are aliases, the lists of one number among them ("2017") are too.
        listed = {r.index: row_aliases(r, numbers=True) for r in ctx.scope if ctx.golds[r.index] is not None}
        listed = {i: a for i, a in listed.items() if a}
        ours = [i for i in listed if ctx.kinds[i].kind == self.name]
        if listed and len(ours) * 2 >= len(listed):
            for i in listed:
                if ctx.kinds[i].kind == "number":
                    ctx.kinds[i] = RowKind(self.name)
        mine = {i: listed.get(i) or row_aliases(r) for r in ctx.scope if ctx.kinds[(i := r.index)].kind == self.name}
        by_gold = {ctx.golds[i]: aliases for i, aliases in mine.items()}  # own_wrongs knows the gold only
        ctx.state[self.name] = {"aliases": mine, "by_gold": by_gold, "templates": Counter()}

    def _aliases(self, index: int, ctx: KindContext) -> list[str]:
        return ctx.state[self.name]["aliases"].get(index) or []

    def own_wrongs(self, kind: RowKind, gold: str, ctx: KindContext) -> list[str] | None:
        """Other rows' golds that match none of this row's aliases (another row may list one of them)."""
        from vlab.kinds.short_answer.compare import matches
        from vlab.reward.wrongs import other_golds

        aliases = ctx.state[self.name]["by_gold"].get(gold) or [gold]
        found = other_golds(gold, ctx.golds.values(), OTHERS + 8)
        return [g for g in found if not matches(g, aliases)][:OTHERS] or None

    def more_first_probes(self, built: RowProbes, kind: RowKind, ctx: KindContext) -> None:
        """The core's other-row gold, where it is one of this row's aliases (two rows may share an answer),
        replaced by one that is not."""
        from vlab.kinds.short_answer.compare import matches
        from vlab.reward.probes import Probe, fill
        from vlab.reward.wrongs import other_golds

        other = other_golds(built.gold, ctx.golds.values())
        if not other or not matches(other[0], self._aliases(built.row.index, ctx) or [built.gold]):
            return
        wrongs = self.own_wrongs(kind, built.gold, ctx)
        primary = next(iter(built.formats.values()))
        built.probes = [p for p in built.probes if p.id != "wrong:other_row"]
        if wrongs:
            built.probes.append(Probe("wrong:other_row", "wrong", fill(primary, wrongs[0])))

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        from vlab.kinds.short_answer.probes import alias_probes
        from vlab.reward.probes import gold_established

        if gold_established(rr):
            ctx.state[self.name]["templates"][template] += 1
        aliases = self._aliases(rr.row.index, ctx) or [rr.gold]
        return alias_probes(rr.gold, aliases, template, ctx.state[self.name]["aliases"], rr.row.index)

    def reach_probes(self, row: Row, gold: str, kind: RowKind, template: str) -> list[Probe] | None:
        """The gold, and its first alias as the data writes it ("10,605" where the gold reads 10605): one must earn
        the top reward (every other alias is aliases_reachable's)."""
        from vlab.kinds.short_answer.probes import row_aliases
        from vlab.reward.probes import Probe, fill

        written = [gold, *row_aliases(row)[:1]]
        return [Probe("gold:reach", "gold", fill(template, text)) for text in dict.fromkeys(written)]

    def gold_forms(self, row: Row, gold: str, kind: RowKind, ctx: KindContext) -> list[str]:
        from vlab.kinds.short_answer.compare import normalise
        from vlab.kinds.short_answer.probes import row_aliases

        forms = [*row_aliases(row), *(normalise(a) for a in row_aliases(row))]
        return [f for f in dict.fromkeys(forms) if f and f != gold]

    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.short_answer.probes import check_alias_probes
        from vlab.reward.probes import best_gold, gold_established, value

        mine = [rr for rr in rows if ctx.kinds[rr.row.index].kind == self.name]
        if not mine:
            return
        by_certainty(result, mine, ctx, lambda out, some: check_alias_probes(out, some, ctx.fn, gold_established))
        tops = [value(best_gold(rr), ctx.fn) for rr in mine if gold_established(rr)]
        ctx.state[self.name]["top"] = max(tops) if tops else None

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.short_answer.probes import check_aliases_reachable

        state = ctx.state.get(self.name) or {}
        rows = [r for r in ctx.scope if ctx.kinds[r.index].kind == self.name]
        if not rows or state.get("top") is None or not state["templates"]:
            return
        template = state["templates"].most_common(1)[0][0]
        check_aliases_reachable(result, ctx.env, rows, template, state["top"], ctx.fn, ctx.opts)


UNIT = ShortAnswerUnit()
