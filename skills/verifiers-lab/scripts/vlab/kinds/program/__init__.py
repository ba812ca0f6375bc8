"""Whole programs on standard input (competitive programming), as one unit: a tests column of stdin/stdout cases
(``formats``: ``program_io``, asked before code's formats); the row's tests in every layout and what its statement
says of the judging (``rows``, the program templates' own rules); the reference, programs that print the right
output changed in one way a judge must notice, and a program that reads the test files (``probes``); their
verdicts (``checks``) and the checks on every row without scoring (``dataset``).

A row is a program row when its tests are stdin/stdout cases: it is claimed before the code unit (``order`` 5), so
the function-call probes never run on it. Its probes start processes (``runs_programs``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlab.kinds.base import KindContext, KindUnit, RowKind, by_certainty
from vlab.kinds.code.probes import FENCED, RAW
from vlab.kinds.program.checks import READS
from vlab.kinds.program.formats import FORMATS
from vlab.kinds.program.rows import program_tests

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.reward.probes import Probe, RowProbes, RowResult


def reference_of(row: Row, gold: str | None) -> str:
    """The row's reference program as the environment keeps it (never cut at a '####' comment or a \\boxed{} in
    it, as the core's gold value is)."""
    answer = row.answer
    return answer if isinstance(answer, str) and answer.strip() else (gold or "")


def data_folders(env_args: dict | None) -> tuple[str, ...]:
    """The folders the environment's data lies in (each path its arguments name, or the folder holding it): the
    test-file probe searches there first."""
    from pathlib import Path

    out = []
    for value in (env_args or {}).values():
        if isinstance(value, str) and value and ("/" in value or "." in value):
            path = Path(value).expanduser().resolve()
            if path.exists():
                out.append(str(path if path.is_dir() else path.parent))
    return tuple(dict.fromkeys(out))


class ProgramUnit(KindUnit):
    name = "program"
    order = 5
    formats = FORMATS
    reads = READS
    runs_programs = True
    core_hacks = False
    preferred_format = FENCED

    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        tests = program_tests(fields)
        if tests is None:
            return None
        return RowKind("program", tests=tests)

    def _state(self, ctx: KindContext) -> dict[str, Any]:
        from vlab.kinds.code.probes import reads_seconds

        state = ctx.state.setdefault(self.name, {})
        state.setdefault("reads", reads_seconds(ctx.opts.timeout))
        state.setdefault("near", data_folders(ctx.opts.env_args))
        return state

    def first_probes(self, row: Row, gold: str, kind: RowKind, ctx: KindContext) -> RowProbes | None:
        from vlab.kinds.program.probes import code_probes
        from vlab.reward.probes import RowProbes

        reference = reference_of(row, gold)
        probes, formats = code_probes(reference, kind, self._other_reference(row, ctx))
        return RowProbes(row, reference, probes, formats)

    def _other_reference(self, row: Row, ctx: KindContext) -> str | None:
        """Another problem's reference (a real program, wrong for this row): the next program row's."""
        mine = [r for r in ctx.scope if ctx.kinds[r.index].kind == self.name]
        at = next((k for k, r in enumerate(mine) if r.index == row.index), 0)
        own = reference_of(row, None).strip()
        for other in mine[at + 1 :] + mine[:at]:
            text = reference_of(other, ctx.golds.get(other.index))
            if text.strip() and text.strip() != own:
                return text
        return None

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        from vlab.kinds.program.dataset import prompt_text
        from vlab.kinds.program.probes import hack_probes

        template = template if template in (FENCED, RAW) else FENCED
        state = self._state(ctx)
        return hack_probes(kind, rr.gold, template, prompt_text(rr.row), state["reads"], state["near"])

    def no_gold_probes(self, row: Row, kind: RowKind, ctx: KindContext) -> list[Probe] | None:
        """No reference program: the right output from a table stands for it, and every hack is tried."""
        from vlab.kinds.program.dataset import prompt_text
        from vlab.kinds.program.probes import hack_probes, table_program, wrong
        from vlab.reward.probes import Probe

        cases = kind.tests["cases"]
        return [
            Probe("gold_alt:table_output", "gold_alt", FENCED.replace("{answer}", table_program(cases))),
            Probe("wrong:changed_token", "wrong", FENCED.replace("{answer}", table_program(cases, wrong))),
            Probe("malformed:empty", "malformed", ""),
            *hack_probes(kind, "", FENCED, prompt_text(row), self._state(ctx)["reads"], self._state(ctx)["near"]),
        ]

    def set_apart(self, built: list[RowProbes]) -> tuple[list[RowProbes], list[RowProbes], list[int]]:
        from vlab.kinds.program.probes import slow_apart

        return slow_apart(built)

    def reach_probes(self, row: Row, gold: str, kind: RowKind, template: str) -> list[Probe] | None:
        from vlab.reward.probes import Probe

        form = template if template in (FENCED, RAW) else FENCED
        return [Probe("gold:reach", "gold", form.replace("{answer}", reference_of(row, gold).strip()))]

    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        mine = [rr for rr in rows if ctx.kinds[rr.row.index].kind == self.name]
        if mine:
            by_certainty(result, mine, ctx, lambda out, some: self._checks(out, some, ctx))

    def _checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.program import checks

        checks.check_reference(result, rows, lambda rr: self._reason(rr, ctx))
        checks.check_hacks(result, rows)
        checks.check_tolerance(result, rows)
        checks.check_fences(result, rows)
        checks.check_partial(result, rows)

    def _reason(self, rr: RowResult, ctx: KindContext) -> str | None:
        from vlab.kinds.program.judge import reference_failure

        return reference_failure(rr.gold, ctx.kinds[rr.row.index], ctx.opts.timeout)

    def no_gold_checks(self, result: Result, rows: list[RowResult], slow: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.program import checks

        checks.check_hacks(result, rows)
        self.slow_checks(result, slow, ctx)

    def slow_checks(self, result: Result, slow: list[RowResult], ctx: KindContext) -> None:
        from vlab.kinds.program.checks import check_loop
        from vlab.reward.probes import slow_bound

        if slow:
            check_loop(result, slow, slow_bound(ctx.opts.timeout), ctx.opts.timeout)

    def last_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.code.checks import check_leftovers

        if any(k.kind == self.name for k in ctx.kinds.values()):
            check_leftovers(result)

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        from vlab.kinds.program.dataset import check_rows

        mine = [(row, ctx.kinds[row.index]) for row in ctx.scope if ctx.kinds[row.index].kind == self.name]
        if mine:
            check_rows(result, mine)


UNIT = ProgramUnit()
