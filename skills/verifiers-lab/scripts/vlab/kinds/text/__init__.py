"""Free text, as one unit: short answers (a few words) and long ones (``formats``). It claims every row no other
unit claims, so a kind the pack has no unit for is probed by the verdict core alone (``vlab.reward.probes``): the
gold as asked, another row's gold, empty replies, the gold negated, run into a longer word or among several
candidates. Its wrong answers are the data's own: other rows' golds, never a made-up value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlab.kinds.base import KindContext, KindUnit, RowKind
from vlab.kinds.text.formats import FORMATS

if TYPE_CHECKING:
    from vlab.env import Row

OTHERS = 3  # other rows' golds used as the row's wrong answers


class TextUnit(KindUnit):
    name = "text"
    order = 1000  # last: what no other unit claims
    formats = FORMATS

    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        return RowKind(self.name)

    def own_wrongs(self, kind: RowKind, gold: str, ctx: KindContext) -> list[str] | None:
        from vlab.reward.wrongs import other_golds

        return other_golds(gold, ctx.golds.values(), OTHERS) or None


UNIT = TextUnit()
