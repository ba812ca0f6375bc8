"""Class labels, as one unit: yes/no answers, a ClassLabel or label map naming integer ids, a column of few distinct
short values (``formats``); the label space the environment offers, probes with every real label and the gold's
forms (``probes``); the golds against every label map the data carries (``label_map``).

Rows are label rows when the environment offers a label space (its prompts list the allowed labels, the rows carry
them, or it says it classifies and its golds take a few values): the data's kind, so a gold of "2" there is a label,
never a number. The unit claims no row alone: it refines the kinds once every row was claimed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlab.kinds.base import KindContext, KindUnit, RowKind
from vlab.kinds.label.formats import FORMATS

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.reward.probes import Probe, RowResult


class LabelUnit(KindUnit):
    name = "label"
    order = 30
    formats = FORMATS

    @property
    def reads(self) -> dict[str, tuple[str, ...]]:
        from vlab.kinds.label.probes import FORM, HACK, OTHER

        return {"label_others": (OTHER,), "label_forms": (FORM,), "label_hacks": (HACK,)}

    def refine(self, ctx: KindContext) -> None:
        from vlab.kinds.label.probes import label_space

        space = label_space(ctx.scope, ctx.golds, ctx.kinds)  # multiple choice and code rows are never label rows
        ctx.state[self.name] = space
        if space is not None:
            ctx.kinds = {i: RowKind(self.name) if i in space.offered else k for i, k in ctx.kinds.items()}

    def own_wrongs(self, kind: RowKind, gold: str, ctx: KindContext) -> list[str] | None:
        space = ctx.state.get(self.name)
        offered = space.labels if space is not None else None
        return [label for label in offered if label != gold] if offered and gold in offered else None

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        from vlab.kinds.label.probes import label_probes

        return label_probes(rr.gold, ctx.state[self.name], template)

    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.label.probes import check_label_probes
        from vlab.reward.probes import gold_established

        if ctx.state.get(self.name) is not None:
            check_label_probes(result, rows, ctx.fn, gold_established)

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.label.label_map import check_label_map
        from vlab.kinds.label.probes import check_label_space

        space = ctx.state.get(self.name)
        if space is None:
            return
        check_label_space(result, ctx.scope, ctx.golds, space)
        check_label_map(result, ctx.scope, ctx.golds, ctx.opts.env_args, ctx.opts.env)
        result.data.setdefault("probes", {})["labels"] = {"labels": list(space.labels), "from": space.source}


UNIT = LabelUnit()
