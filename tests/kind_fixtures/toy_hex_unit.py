"""A toy answer kind from a test fixture: #rrggbb colour codes. It is what adding a kind takes: this unit, a catalog
entry (tests/test_kind_units.py adds one) and a template (``hex_toy_template.py``), and no other module."""

from __future__ import annotations

import re

from vlab.kinds.base import PLAIN, Format, KindUnit, RowKind, by_certainty
from vlab.reward.probes import EPS, Probe, best_gold, fill, gold_established, value

HEX = re.compile(r"#[0-9a-fA-F]{6}")
FORM, NEAR = "hex_form", "hex_near"


def _near(gold: str) -> str:
    """The same code with its last digit moved: another colour."""
    last = gold[-1].lower()
    return gold[:-1] + ("0" if last != "0" else "1")


class HexUnit(KindUnit):
    name = "hex"
    order = 35  # before numbers: "#123456" is no number
    formats = (
        Format(
            "hex_colour",
            5,
            lambda col: col.results["hex_colour"][0] >= PLAIN,
            test=lambda col, i, v: isinstance(v, str) and bool(HEX.fullmatch(v.strip())),
            extraction=lambda col: {"extraction": "the #rrggbb code, compared case-insensitively"},
        ),
    )
    reads = {"hex_forms": (FORM, NEAR)}

    def claim(self, row, fields, gold, expect):
        return RowKind(self.name) if gold is not None and HEX.fullmatch(gold.strip()) else None

    def second_probes(self, rr, kind, template, ctx):
        return [
            Probe(f"{FORM}:upper", FORM, fill(template, rr.gold.upper())),
            Probe(f"{NEAR}:last_digit", NEAR, fill(template, _near(rr.gold))),
        ]

    def probe_checks(self, result, rows, ctx):
        mine = [rr for rr in rows if ctx.kinds[rr.row.index].kind == self.name and gold_established(rr)]
        by_certainty(result, mine, ctx, lambda out, some: self._check(out, some, ctx.fn))

    def _check(self, result, rows, fn):
        if not rows:
            return
        paid = [rr for rr in rows for p in rr.of(NEAR) if value(p, fn) >= value(best_gold(rr), fn) - EPS]
        refused = [rr for rr in rows for p in rr.of(FORM) if value(p, fn) < value(best_gold(rr), fn) - EPS]
        if paid:
            result.fail("hex_forms", f"another colour earns the gold on {len(paid)}/{len(rows)} rows", "compare codes")
        elif refused:
            result.warn("hex_forms", f"the upper-case code is refused on {len(refused)}/{len(rows)} rows")
        else:
            result.passed("hex_forms", f"the code in upper case earns the gold, another colour does not ({len(rows)})")


UNIT = HexUnit()
