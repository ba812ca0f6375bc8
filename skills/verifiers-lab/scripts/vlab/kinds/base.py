"""What an answer kind is, as one unit: the interface every kind under ``vlab.kinds`` implements.

A kind (``KindUnit``) says
- how inspect recognises it in a dataset's answer column (``formats``: each a catalog answer kind, its test on
  one value, when it is the column's format given every format's share, the share it reports, how a reward
  extracts the answer);
- which rows of a loaded environment it claims for test_reward (``claim``, in ``order``: code first, text
  last), with how sure that is (``certainty``: a kind's checks fail only on rows it is sure of; elsewhere they
  warn, and the result says which kind was assumed and why);
- its probes (``first_probes``: instead of the core's; ``more_first_probes``: beside them; ``second_probes``: in
  the format the gold earned the reward with), its wrong answers of the row's own kind (``own_wrongs``), and the
  texts that must reach the top reward (``reach_probes``);
- its checks, on the probes' scores (``probe_checks``) and on the rows without scoring (``dataset_checks``);
- which probe categories each of its checks reads (``reads``: a check none of whose probes got a score is a skip).
Which templates fit a kind, its parser and its reward strategy are the catalog's (``catalog.ANSWER_KINDS``),
which also names each format's unit: the one table.

Every hook has a do-nothing default, so a kind implements only what it knows. The verdict core
(``vlab.reward``) probes every row from the data alone, whatever its kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vlab.core.result import Result
    from vlab.env import Row
    from vlab.reward.probes import Probe, RowProbes, RowResult


# -- inspect: the formats of an answer column ----------------------------------------------------------------------

# The shares a format needs to be chosen. Structured formats (#### N, \boxed{}) are unmistakable, so a lower bar
# still means "this is the format".
STRONG = 0.8
PLAIN = 0.9


@dataclass
class Column:
    """An answer column as inspect reads it, for the formats' tests: its values, the options of each row, the
    class names the data gives, the tests column, and (once every test ran) each format's share."""

    rows: list[dict]
    answer: str
    values: list[Any]
    choice_lists: list[list[str] | None]
    class_names: list[str] | None = None
    tests_column: str | None = None
    choices: str | list[str] | None = None
    results: dict[str, tuple[float, list[int]]] = field(default_factory=dict)  # format -> (share, rows missed)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def present(self) -> list[Any]:
        return [v for v in self.values if v is not None and v != ""]

    @property
    def distinct(self) -> set[str]:
        return {str(v).strip() for v in self.present}

    @property
    def has_choices(self) -> bool:
        return self.choices is not None and any(self.choice_lists)

    def shares(self) -> dict[str, float]:
        return {name: share for name, (share, _) in self.results.items()}

    def share(self, test: Callable[[int, Any], Any]) -> tuple[float, list[int]]:
        """The share of rows whose value passes ``test(i, value)`` (an empty value never does), and the misses."""
        misses = [i for i, v in enumerate(self.values) if v is None or v == "" or test(i, v) in (None, False)]
        return (1 - len(misses) / self.n if self.n else 0.0), misses


@dataclass(frozen=True)
class Format:
    """One answer format inspect recognises: a catalog answer kind (``name``, its ``answer_format.type``).

    ``order``: when it is asked, among every unit's formats (lower first); the first whose ``chosen`` holds is the
    column's format. ``test(column, i, value)``: does one value have this format (None: the format has no share
    of its own). ``matched``: the share reported once chosen (default: its own test's). ``extraction``: what the
    result says about getting the comparable answer out of the column."""

    name: str
    order: int
    chosen: Callable[[Column], bool]
    test: Callable[[Column, int, Any], Any] | None = None
    matched: Callable[[Column], tuple[float, list[int]]] | None = None
    extraction: Callable[[Column], dict[str, Any]] | None = None


# -- test_reward: a row's kind -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowKind:
    """How a row is probed: the unit that claimed it (kind), what it read of the row, and how sure that is.

    certain False: the row looks like this kind but the data as a whole does not say so (a year among trivia
    answers); the kind's checks only warn on it, and ``why`` says what was assumed."""

    kind: str
    options: Any = None  # choice: the options the prompt shows (kinds.choice.options.PromptOptions)
    choices: list[str] | None = None  # choice: the row's own choices, when it carries them
    tests: Any = None  # code: the row's tests
    entry_point: str | None = None  # code: the function the tests call
    entry_from: str | None = None  # code: where entry_point was read: "column", "tests", "reference" (a guess)
    setup: str | None = None  # code: the code run before the tests (a setup column, the templates' spec "setup")
    setup_field: str | None = None  # code: the field it was read from, when the row names it
    certain: bool = True
    why: str = ""

    def setup_note(self) -> str:
        """For a failure on a code row with setup code: that code runs before the tests, so it is a suspect."""
        if not self.setup:
            return ""
        code = " ".join(self.setup.split())
        code = code if len(code) <= 60 else code[:59] + "…"
        return f"; its {self.setup_field or 'setup code'} ({code!r}) runs before the tests: check it"


@dataclass
class KindContext:
    """One test_reward run as the kinds see it: the rows in scope, their golds and kinds, the environment's
    format hints, the request, and what each unit computed for the run (``state``, by unit name)."""

    scope: list[Row]
    golds: dict[int, str | None]
    kinds: dict[int, RowKind]
    hints: Any = None
    opts: Any = None  # the TestRewardRequest
    env: Any = None
    state: dict[str, Any] = field(default_factory=dict)
    fn: str | None = None  # the correctness function, once known
    templates: dict[str, str] = field(default_factory=dict)  # primary gold template by row (phase one)


class KindUnit:
    """An answer kind (see the module's docstring). Subclasses set ``name`` and ``order`` and override the hooks
    they need."""

    name: str = ""
    order: int = 100  # claims are asked in this order
    formats: tuple[Format, ...] = ()
    reads: dict[str, tuple[str, ...]] = {}
    runs_programs: bool = False  # its probes start processes: a few rows at a time, slow probes scored last
    # The core's text hacks on its rows (the gold negated, run into a longer word): off where the kind has its own,
    # value-aware ones (a number's sign flipped or a digit appended) or where its answers are keys, not text.
    core_hacks: bool = True
    preferred_format: str | None = None  # the gold template its prompts ask for, tried first over every row

    # -- which rows, how sure
    def claim(self, row: Row, fields: dict[str, Any], gold: str | None, expect: str | None) -> RowKind | None:
        return None

    def refine(self, ctx: KindContext) -> None:
        """Change the kinds of ``ctx`` once every row was claimed (the environment's kind seen as a whole)."""

    def certainty(self, ctx: KindContext, rows: list[Row]) -> tuple[bool, str]:
        """(sure?, why) for the rows this unit claimed; structural kinds are sure by construction."""
        return True, ""

    # -- probes
    def extra_rows(self, ctx: KindContext, sample: list[Row], limit: int) -> list[Row]:
        return []

    def own_wrongs(self, kind: RowKind, gold: str, ctx: KindContext) -> list[str] | None:
        return None

    def first_probes(self, row: Row, gold: str, kind: RowKind, ctx: KindContext) -> RowProbes | None:
        return None

    def more_first_probes(self, built: RowProbes, kind: RowKind, ctx: KindContext) -> None:
        pass

    def before_second(self, ctx: KindContext, rows: list[RowResult]) -> None:
        """Once before phase two, on the probed rows (what the unit reads for them, once)."""

    def second_probes(self, rr: RowResult, kind: RowKind, template: str, ctx: KindContext) -> list[Probe]:
        return []

    def no_gold_probes(self, row: Row, kind: RowKind, ctx: KindContext) -> list[Probe] | None:
        """Probes for a row without a gold answer (a kind whose hacks need none); None: the row is not probed."""
        return None

    def set_apart(self, built: list[RowProbes]) -> tuple[list[RowProbes], list[RowProbes], list[int]]:
        """(the probes scored now, the slow ones scored last, alone, and the row each slow one belongs to)."""
        return built, [], []

    def reach_probes(self, row: Row, gold: str, kind: RowKind, template: str) -> list[Probe] | None:
        return None

    def gold_forms(self, row: Row, gold: str, kind: RowKind, ctx: KindContext) -> list[str]:
        """Every other form this kind knows the row's gold in (an alias, a normalised spelling, a test's expected
        output): what the policy must not find in its prompt (``reward.leaks``). The gold as stored is the core's."""
        return []

    # -- checks
    def probe_checks(self, result: Result, rows: list[RowResult], ctx: KindContext) -> None:
        pass

    def dataset_checks(self, result: Result, ctx: KindContext) -> None:
        pass

    def no_gold_checks(self, result: Result, rows: list[RowResult], slow: list[RowResult], ctx: KindContext) -> None:
        """The verdicts on rows probed without a gold (``no_gold_probes``); ``slow``: the slow probes' scores."""

    def slow_checks(self, result: Result, slow: list[RowResult], ctx: KindContext) -> None:
        """The verdicts that read the slow probes (scored last, ``set_apart``)."""

    def last_checks(self, result: Result, ctx: KindContext) -> None:
        """After every other check of the run (what the probes may have left behind)."""


_ORDER = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}


def by_certainty(
    result: Result, rows: list[RowResult], ctx: KindContext, run: Callable[[Result, list[RowResult]], None]
) -> None:
    """Run a kind's checks (``run(result, rows)``) so that they fail only on rows whose kind is sure: on the rows
    it is unsure of (``RowKind.certain`` False) a failure becomes a warning naming the kind assumed and why, and
    its next steps are dropped. A check found on both sets keeps the worse verdict of the two."""
    from vlab.core.result import Result

    sure = [rr for rr in rows if ctx.kinds[rr.row.index].certain]
    unsure = [rr for rr in rows if not ctx.kinds[rr.row.index].certain]
    if not unsure:
        run(result, rows)
        return
    on_sure, on_unsure = Result(result.tool, data=result.data), Result(result.tool, data=result.data)
    if sure:
        run(on_sure, sure)
    run(on_unsure, unsure)
    kind = ctx.kinds[unsure[0].row.index]
    by_id = {c.id: c for c in on_sure.checks}
    for check in on_unsure.checks:
        if check.status == "fail":
            check.status = "warn"
            check.message += (
                f" (a warning only: these rows were assumed {kind.kind} answers, and that is unsure: {kind.why})"
            )
        twin = by_id.get(check.id)
        if twin is None:
            on_sure.checks.append(check)
        elif _ORDER[check.status] > _ORDER[twin.status]:
            twin.status, twin.message = check.status, f"{twin.message}; {check.message}"
    result.checks += on_sure.checks
    for text in on_sure.next_steps:
        result.step(text)
