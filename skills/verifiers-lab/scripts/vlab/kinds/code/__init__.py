"""Code with tests, as one unit: a tests column beside a reference program (``formats``); the function the tests
call and the code run before them (``rows``); the reference raw and fenced, broken programs and programs that game
the tests (``probes``), the slow ones (a loop that never ends, a process that outlives the scorer) scored last;
their verdicts (``checks``); what the prompt must name (``prompt``).

A row is a code row when it carries tests (a tests column or its info) or its gold is a program. Its probes
start processes, so the run scores a few rows at a time (``runs_programs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlab.kinds.base import KindContext, KindUnit, RowKind
from vlab.kinds.code.formats import FORMATS
from vlab.kinds.code.probes import FENCED
from vlab.kinds.code.rows import ENTRY_FIELDS, TESTS_FIELDS, code_entry, looks_like_code, setup_code
from vlab.kinds.rows import field

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.reward.probes import Probe, RowProbes, RowResult


class CodeUnit(KindUnit):
    name = "code"
    order = 10
    formats = FORMATS
    reads = {"code_partial_credit": ("wrong",)}
    runs_programs = True
    core_hacks = False
    preferred_format = FENCED  # what code prompts ask for; a raw program is the fallback

    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        tests = field(fields, TESTS_FIELDS)
        if tests is None and not (gold is not None and looks_like_code(gold)):
            return None
        entry = field(fields, ENTRY_FIELDS)
        raw = tests[1] if tests else None
        setup_field, setup = setup_code(fields, raw)
        name, source = code_entry(str(entry[1]).strip() if entry else None, raw, gold, setup)
        return RowKind(
            "code", tests=raw, entry_point=name, entry_from=source, setup=setup or None, setup_field=setup_field
        )

    def _state(self, ctx: KindContext) -> dict[str, Any]:
        from vlab.kinds.code.probes import reads_seconds

        state = ctx.state.setdefault(self.name, {"records": {}, "cuts": {}})
        state.setdefault("reads", reads_seconds(ctx.opts.timeout))  # how long hack:reads_data_files searches
        return state

    def first_probes(self, row: Row, gold: str, kind: RowKind, ctx: KindContext) -> RowProbes | None:
        from vlab.kinds.code.probes import code_probes
        from vlab.reward.probes import RowProbes

        probes, formats = code_probes(gold, kind)
        return RowProbes(row, gold, probes, formats)

    def before_second(self, ctx: KindContext, rows: list[RowResult]) -> None:
        from vlab.reward.data_file import matched_records

        coded = [rr.row for rr in rows if ctx.kinds[rr.row.index].kind == self.name]
        if coded:
            self._state(ctx)["records"] = matched_records(coded, ctx.opts.env_args, ctx.opts.env)

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        from vlab.kinds.code.probes import hack_probes, tests_cut
        from vlab.reward.probes import gold_established

        if not gold_established(rr):
            return []
        state = self._state(ctx)
        record = state["records"].get(rr.row.index)
        cut = tests_cut(kind, record, rr.gold)
        if cut:
            state["cuts"][rr.row.index] = cut  # the loader kept fewer tests than the data file's test column
        return hack_probes(kind, rr.gold, template, rr.row.question, rr.row, record, state["reads"])

    def no_gold_probes(self, row: Row, kind: RowKind, ctx: KindContext) -> list[Probe] | None:
        """Code hacks need no reference program: they must not beat a wrong one."""
        from vlab.kinds.code.probes import goldless_probes

        return goldless_probes(kind, row.question, self._state(ctx)["reads"])

    def set_apart(self, built: list[RowProbes]) -> tuple[list[RowProbes], list[RowProbes], list[int]]:
        from vlab.kinds.code.probes import slow_apart

        return slow_apart(built)

    def reach_probes(self, row: Row, gold: str, kind: RowKind, template: str) -> list[Probe] | None:
        """The reference program, as the reply that worked wrote it (fenced unless raw earned the reward)."""
        from vlab.kinds.code.probes import FENCED, RAW
        from vlab.reward.probes import Probe

        form = template if template in (FENCED, RAW) else FENCED
        return [Probe("gold:reach", "gold", form.replace("{answer}", gold.strip()))]

    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.code.checks import check_code

        if ctx.state.get("environment") == self.name:
            check_code(result, rows, ctx.fn, self._state(ctx)["cuts"])

    def no_gold_checks(self, result: Result, rows: list[RowResult], slow: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.code.checks import check_goldless

        check_goldless(result, rows)
        self.slow_checks(result, slow, ctx)

    def slow_checks(self, result: Result, slow: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.code.checks import check_slow
        from vlab.reward.probes import slow_bound

        if slow:
            check_slow(result, slow, slow_bound(ctx.opts.timeout), ctx.opts.timeout)

    def last_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.code.checks import check_leftovers

        if ctx.state.get("environment") == self.name:
            check_leftovers(result)

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.code import prompt
        from vlab.reward.prompts import report_rows

        bad, checked = [], 0
        for row in ctx.scope:
            kind = ctx.kinds[row.index]
            found = prompt.code_problems(row, kind) if kind.kind == self.name else None
            if found is not None:
                checked += 1
                bad += [(row, status, prompt.group_of(why), why) for status, why in found]
        if checked:
            report_rows(result, prompt.CHECK, bad, checked, prompt.OK, prompt.HINT)


UNIT = CodeUnit()
