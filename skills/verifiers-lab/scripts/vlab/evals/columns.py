"""Rollouts as compact columns, read fast: the input of ``analysis``.

``collect(source)`` fills ``Columns`` (array-backed, ~31 bytes a rollout plus 1 per reward
function or metric while it has at most 256 distinct values: ``coded.CodedColumn``): classic shapes through
the msgspec column reader (``batches``), in parallel processes for large files (one per core: byte ranges of
at most ``PART_BYTES``, merged in file order; ``collect_beside`` runs a second pass, the answers, in one of
them); v1 traces through its v1 column reader; any ``EvalRow`` stream row by row. Past its row budget
the columns hold a sample of whole examples (``sampling``), every row read being tallied first (``tally``):
memory stays flat however many rows the file has.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from vlab.evals import batches, chunks, coded, v1batches
from vlab.evals.coded import CodedColumn, as_numpy
from vlab.evals.fields import judge_error_kind
from vlab.evals.read import EvalRow, ReadStats, iter_rows
from vlab.evals.sampling import DEFAULT_ROW_BUDGET, Sample, int_hashes, kept, key_hashes, settle_shift
from vlab.evals.source import CLASSIC_FAMILY, V1_TRACES, EvalSource
from vlab.evals.tally import RowTally, TallySpec


class Columns:
    """Rollouts as compact columns: ~31 bytes a rollout plus 1 per reward function or metric (``CodedColumn``)."""

    def __init__(self, spec: TallySpec | None = None, row_budget: int = DEFAULT_ROW_BUDGET) -> None:
        self.spec, self.row_budget = spec or TallySpec(), row_budget
        self.example_codes: dict[Any, int] = {}
        # Fast-path batches of integer ids store the ids themselves (no per-row interning).
        self.raw_int_examples = True
        self.prompt_codes: dict[int, int] = {}
        self.example = array("i")  # 4 bytes a row; 8 once a raw integer id needs them
        self.prompt = array("i")
        self.reward = array("d")
        self.errored = array("b")
        self.truncated = array("b")
        self.chars = array("i")
        self.tool_calls = array("b")  # capped at 127: only "none" matters
        self.row_key = array("q")
        self.fn_cols: dict[str, CodedColumn] = {}
        self.metric_cols: dict[str, CodedColumn] = {}
        self.weights: dict[str, float] = {}
        self.weights_changed: set[str] = set()
        self.reward_issues: Counter = Counter()
        self.issue_lines: dict[str, list[int]] = {}
        self.error_kinds: Counter = Counter()
        self.judge_errors: Counter = Counter()  # refusal | error: the judge failed (fields.judge_error_kind)
        self.missing_example = 0
        self.n = 0  # rows held
        # Beyond the row budget (``sampling``): rows held are a sample of 1 in 2**shift examples; every row read
        # is first added to ``tally`` (the rows held before ``tallied`` are in it).
        self.seen = 0  # rows read
        self.shift = 0
        self.cut = False
        self.tally = RowTally()
        self.tallied = 0
        self.example_hash = np.zeros(0, dtype=np.uint64)  # sampling hashes of the interned ids, by code
        self.prompt_hash = np.zeros(0, dtype=np.uint64)  # ... of the prompts, by code

    def _stop_raw_int_examples(self) -> None:
        """Switch from raw integer ids to interned codes (a file mixing id types)."""
        if self.raw_int_examples:
            self.raw_int_examples = False
            codes = self.example_codes
            self.example = array("i", [codes.setdefault(e, len(codes)) for e in self.example])

    def _extend_raw(self, ids) -> None:
        """Append raw integer ids, widening the column to 8 bytes for one beyond 32 bits."""
        if self.example.typecode == "i":
            n0 = len(self.example)
            try:
                self.example.extend(ids if not isinstance(ids, array) or ids.typecode == "i" else ids.tolist())
                return
            except OverflowError:  # the ids before the wide one were appended: drop them, widen, append all
                del self.example[n0:]
                self.example = array("q", self.example)
        self.example.extend(ids if not isinstance(ids, array) or ids.typecode == "q" else array("q", ids))

    def example_group_codes(self) -> np.ndarray:
        """Dense group codes 0..k-1 for the example column."""
        dtype = np.int32 if self.example.typecode == "i" else np.int64
        ex = np.frombuffer(self.example, dtype=dtype) if len(self.example) else np.zeros(0, dtype=np.int64)
        if self.raw_int_examples and ex.size:
            if ex.min() >= 0 and ex.max() < ex.size:  # ids 0..k-1 (with gaps): their order is the codes' order
                return ex
            return np.unique(ex, return_inverse=True)[1].astype(np.int64)
        return ex

    def add(self, r: EvalRow) -> None:
        self._stop_raw_int_examples()
        n = self.n
        ex = r.example
        if ex is None:  # no id: this row is its own group
            self.missing_example += 1
            ex = ("row", self.seen)
        code = self.example_codes.get(ex)
        if code is None:
            code = self.example_codes[ex] = len(self.example_codes)
        self.example.append(code)
        if r.prompt_key is not None:
            pc = self.prompt_codes.get(r.prompt_key)
            if pc is None:
                pc = self.prompt_codes[r.prompt_key] = len(self.prompt_codes)
            self.prompt.append(pc)
        else:
            self.prompt.append(-1)
        if r.reward is None:
            self.reward.append(math.nan)
            if r.error is None:  # an errored rollout without a reward is a generation failure
                self.reward_issues[r.reward_issue] += 1
                lines = self.issue_lines.setdefault(r.reward_issue, [])
                if len(lines) < 5:
                    lines.append(r.line)
        else:
            self.reward.append(r.reward)
        if r.error is not None:
            self.errored.append(1)
            if len(self.error_kinds) < 50 or r.error.split(":")[0] in self.error_kinds:
                self.error_kinds[r.error.split(":")[0]] += 1
            if judged := judge_error_kind(r.error):
                self.judge_errors[judged] += 1
        else:
            self.errored.append(0)
        self.truncated.append(2 if r.turn_limited else 1 if r.truncated else 0)
        self.chars.append(-1 if r.completion_chars is None else r.completion_chars)
        self.tool_calls.append(min(r.tool_calls, 127))
        self.row_key.append(r.row_key or 0)
        coded.append_named(self.fn_cols, r.scores, n)
        if r.metrics or self.metric_cols:
            coded.append_named(self.metric_cols, r.metrics, n)
        if r.weights:
            for name, w in r.weights.items():
                old = self.weights.setdefault(name, w)
                if old != w:
                    self.weights_changed.add(name)
        self.n = n + 1
        self.seen += 1
        if self.n > self.row_budget:
            self._compact()

    def add_batch(self, b: batches.ClassicBatch) -> None:
        """Columns of a fast-path batch; the same result as add() row by row."""
        m = len(b.reward)
        n0 = self.n
        if None in b.example:
            example = [("row", self.seen + i) if e is None else e for i, e in enumerate(b.example)]
            self.missing_example += sum(1 for e in b.example if e is None)
        else:
            example = b.example
        if self.raw_int_examples and not b.coded_examples and (b.int_examples or batches.only_types(example, int)):
            self._extend_raw(example)  # integer ids are kept as they are and coded once at the end
        else:
            self._stop_raw_int_examples()
            self.example.extend(coded.codes(self.example_codes, example))
        if b.prompt_key is None:
            self.prompt.extend(array("i", [-1]) * m)
        elif None in b.prompt_key:
            pcodes = self.prompt_codes
            psd = pcodes.setdefault
            self.prompt.extend([-1 if k is None else psd(k, len(pcodes)) for k in b.prompt_key])
        else:
            self.prompt.extend(coded.codes(self.prompt_codes, b.prompt_key))
        if b.issues:
            self.reward.extend([math.nan if v is None else v for v in b.reward])
            for i, issue in b.issues:
                if b.error[i] is None:
                    self.reward_issues[issue] += 1
                    lines = self.issue_lines.setdefault(issue, [])
                    if len(lines) < 5:
                        lines.append(b.first_line + i)
        else:
            self.reward.extend(b.reward)
        if b.error.count(None) == m:  # no errors (the common chunk): a run of zeros
            self.errored.frombytes(bytes(m))
        else:
            self.errored.extend([e is not None for e in b.error])
            for e in b.error:
                if e is not None:
                    kind = e.split(":")[0]
                    if len(self.error_kinds) < 50 or kind in self.error_kinds:
                        self.error_kinds[kind] += 1
                    if judged := judge_error_kind(e):
                        self.judge_errors[judged] += 1
        if isinstance(b.truncated, bytes):
            self.truncated.frombytes(b.truncated)
        else:
            self.truncated.extend(b.truncated)
        self.chars.extend([-1 if c is None else c for c in b.chars] if None in b.chars else b.chars)
        calls = b.tool_calls
        self.tool_calls.extend([t if t < 127 else 127 for t in calls] if calls and max(calls) > 127 else calls)
        self.row_key.extend(b.row_key)
        coded.extend_named(self.fn_cols, b.scores, n0, m)
        if b.metrics:
            coded.extend_named(self.metric_cols, b.metrics, n0, m)
        else:
            for col in self.metric_cols.values():
                col.fill_nan(m)
        for name, ws in (b.weights or {}).items():  # as add(): each row's weight against the first one seen
            old = self.weights.setdefault(name, ws[0])
            if any(w != old for w in ws):
                self.weights_changed.add(name)
        self.n = n0 + m
        self.seen += m
        if self.n > self.row_budget:
            self._compact()

    def merge(self, part: Columns, line_offset: int) -> None:
        """Append the columns of the next part of the file (collected in another process)."""
        if self.sampled or part.sampled:  # both tallied, then held at the same rate
            shift = max(self.shift, part.shift)
            for c in (self, part):
                c._tally_pending()
                c._keep(kept(c._group_hashes(), shift))
                c.shift = shift
            self.tally.merge(part.tally)
            self.cut |= part.cut
        n0, seen0 = self.n, self.seen
        if self.raw_int_examples and part.raw_int_examples:
            self._extend_raw(part.example)
        else:
            self._stop_raw_int_examples()
            part._stop_raw_int_examples()
            remap = array("q", [0]) * len(part.example_codes)
            codes = self.example_codes
            for key, code in part.example_codes.items():
                if isinstance(key, tuple) and key[:1] == ("row",):  # rows without an id stay unique
                    key = ("row", key[1] + seen0)
                remap[code] = codes.setdefault(key, len(codes))
            self.example.extend(array("i", [remap[c] for c in part.example]))
        premap = {
            code: self.prompt_codes.setdefault(key, len(self.prompt_codes)) for key, code in part.prompt_codes.items()
        }
        self.prompt.extend(array("i", [premap[c] if c >= 0 else -1 for c in part.prompt]) if premap else part.prompt)
        for name in ("reward", "errored", "truncated", "chars", "tool_calls", "row_key"):
            getattr(self, name).extend(getattr(part, name))
        m = part.n
        for name, col in self.fn_cols.items():
            if name in part.fn_cols:
                col.extend_column(part.fn_cols[name])
            else:
                col.fill_nan(m)
        for name, col in part.fn_cols.items():
            if name not in self.fn_cols:
                self.fn_cols[name] = CodedColumn.nans(n0)
                self.fn_cols[name].extend_column(col)
        self.reward_issues.update(part.reward_issues)
        for issue, lines in part.issue_lines.items():
            mine = self.issue_lines.setdefault(issue, [])
            mine.extend(n + line_offset for n in lines[: 5 - len(mine)])
        self.error_kinds.update(part.error_kinds)
        self.judge_errors.update(part.judge_errors)
        self.missing_example += part.missing_example
        self.n = n0 + m
        self.seen = seen0 + part.seen
        if self.sampled:
            self.tallied = self.n
        if self.n > self.row_budget:
            self._compact()

    # -- the row budget (``sampling``) -------------------------------------------------

    @property
    def sampled(self) -> bool:
        return self.shift > 0 or self.cut

    def _group_hashes(self) -> np.ndarray:
        """Each held row's sampling hash (``sampling``): of its prompt when it has one (a prompt's rollouts stay
        together also where ids do not identify prompts), else of its example id."""
        codes = np.frombuffer(self.example, dtype=np.dtype(self.example.typecode))
        if self.raw_int_examples:
            hashes = int_hashes(codes)
        else:
            self.example_hash = coded.hashes_of(self.example_codes, self.example_hash, key_hashes)
            hashes = self.example_hash[codes]
            if self.missing_example:  # a row without an id is its own example: it hashes by its row key
                rowwise = np.array([isinstance(k, tuple) and k[:1] == ("row",) for k in self.example_codes], bool)
                own = rowwise[codes]
                if own.any():
                    hashes[own] = int_hashes(np.frombuffer(self.row_key, dtype=np.int64)[own])
        if self.prompt_codes:
            self.prompt_hash = coded.hashes_of(
                self.prompt_codes, self.prompt_hash, lambda keys: int_hashes(np.array(keys, dtype=np.int64))
            )
            prompts = np.frombuffer(self.prompt, dtype=np.int32)
            has = prompts >= 0
            hashes[has] = self.prompt_hash[prompts[has]]
        return hashes

    def _keep(self, mask: np.ndarray) -> None:
        """Hold only the rows where ``mask`` is true (their ids and prompts coded again, densely)."""
        if mask.all():
            return
        for name in ("reward", "errored", "truncated", "chars", "tool_calls", "row_key", "prompt", "example"):
            col = getattr(self, name)
            setattr(self, name, array(col.typecode, np.frombuffer(col, dtype=np.dtype(col.typecode))[mask].tobytes()))
        for col in (*self.fn_cols.values(), *self.metric_cols.values()):
            col.keep(mask)
        if not self.raw_int_examples:
            self.example, self.example_codes, used = coded.recode(self.example, self.example_codes)
            if self.example_hash.size:
                self.example_hash = self.example_hash[used[: self.example_hash.size]]
        if self.prompt_codes:
            self.prompt, self.prompt_codes, used = coded.recode(self.prompt, self.prompt_codes)
            if self.prompt_hash.size:
                self.prompt_hash = self.prompt_hash[used[: self.prompt_hash.size]]
        self.n = int(np.count_nonzero(mask))
        self.tallied = min(self.tallied, self.n)

    def _tally_pending(self, moments: bool = True) -> None:
        """Add the rows held but not yet tallied to the tally (with each column's moments once the file is sampled:
        before that nothing is tallied before the last row)."""
        if moments and self.tally.moments is None:
            self.tally.moments = {}
        if self.tallied < self.n:
            self._tally(self.tallied, self.n)
            self.tallied = self.n

    def _tally(self, start: int, stop: int) -> None:
        """Rows ``start`` to ``stop``, a slice of TALLY_ROWS at a time (each score column decoded for one slice)."""
        for lo in range(start, stop, TALLY_ROWS):
            hi = min(stop, lo + TALLY_ROWS)
            metrics = {name: col.decode_range(lo, hi) for name, col in self.metric_cols.items()}
            scores = {name: col.decode_range(lo, hi) for name, col in self.fn_cols.items()}
            self.tally.add(
                self.spec,
                as_numpy(self.reward, np.float64)[lo:hi],
                as_numpy(self.errored, np.int8)[lo:hi].astype(bool),
                as_numpy(self.truncated, np.int8)[lo:hi],
                as_numpy(self.chars, np.int32)[lo:hi],
                as_numpy(self.tool_calls, np.int8)[lo:hi],
                {**metrics, **scores},
            )

    def _compact(self) -> None:
        """Over the row budget: tally what is held, then hold half the budget at most (a higher shift)."""
        self._tally_pending()
        self.shift, mask, cut = settle_shift(self._group_hashes(), self.shift, max(1, self.row_budget // 2))
        self.cut |= cut
        self._keep(mask)

    def finish(self) -> RowTally:
        """After the last row: the tally of every row read. A sampled file's held rows are brought to its final
        rate; otherwise every row is held and tallied here, in one slice."""
        self._tally_pending(moments=self.sampled)
        if self.sampled:
            self._keep(kept(self._group_hashes(), self.shift))
        return self.tally

    def sample(self, examples_kept: int) -> Sample | None:
        """What the held rows are, when they are a sample (after ``finish``)."""
        if not self.sampled:
            return None
        return Sample(self.row_budget, self.tally.rows, self.n, examples_kept, self.shift, self.cut)


TALLY_ROWS = 1 << 18  # rows tallied at once: a float64 copy of each score column for this many rows

# Files this large are read by several processes at once (one byte range each). Processes cost ~15% more CPU (their
# start, each part's pickling and merge; two readers share the caches): worth it where the read takes seconds, not
# for a file read in well under one (issue 52: 140-250 MB files were read at 1.1-1.2x a bare json.loads loop's CPU).
PARALLEL_MIN_BYTES = 256 << 20
PARTS_PER_WORKER = 4
PART_BYTES = 64 << 20  # a part's rows at most: what a worker holds, and a merge copies, does not grow with the file


def collect_range(
    source: EvalSource,
    byte_range: tuple[int, int] | None,
    chunk_bytes: int = chunks.CHUNK_BYTES,
    spec: TallySpec | None = None,
    row_budget: int = DEFAULT_ROW_BUDGET,
) -> tuple[Columns, ReadStats]:
    cols, stats = Columns(spec, row_budget), ReadStats()
    for item in batches.iter_classic_batches(source, stats, chunk_bytes, byte_range):
        if isinstance(item, list):
            for r in item:
                cols.add(r)
        else:
            cols.add_batch(item)
    return cols, stats


def _collect_parallel(
    source: EvalSource, stats: ReadStats, workers: int, spec: TallySpec | None, row_budget: int, beside=None
) -> tuple[Columns, Any] | None:
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    # several small parts a worker: the parent holds one part's copy at a time while merging
    parts = max(workers * PARTS_PER_WORKER, -(-source.path.stat().st_size // PART_BYTES))
    ranges = chunks.split_ranges(source.path, parts)
    if len(ranges) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    cols, merged = Columns(spec, row_budget), ReadStats()
    part_budget = max(1, row_budget // workers)  # the workers' rows held together stay within the budget
    try:
        with ProcessPoolExecutor(min(workers, len(ranges)), mp_context=multiprocessing.get_context("fork")) as pool:
            side = pool.submit(beside) if beside is not None else None  # first: it runs while the others read
            # parts are merged in file order, each dropped at once; at most two a worker are read ahead
            read = functools.partial(collect_range, source, spec=spec, row_budget=part_budget)
            todo = iter(ranges)
            pending = deque(pool.submit(read, byte_range) for byte_range in itertools.islice(todo, 2 * workers))
            while pending:
                part_cols, part_stats = pending.popleft().result()
                pending.extend(pool.submit(read, byte_range) for byte_range in itertools.islice(todo, 1))
                offset = merged.lines
                cols.merge(part_cols, offset)
                merged.merge(part_stats, offset)
                del part_cols
            side_result = side.result() if side is not None else None
    except (OSError, RuntimeError):  # no processes on this system: read serially
        return None
    stats.merge(merged, 0)
    return cols, side_result


def cores() -> int:
    """CPUs this process may run on (its affinity: a container or ``taskset`` may allow fewer than the machine has)."""
    affinity = getattr(os, "sched_getaffinity", None)  # none on macOS and Windows
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def reading_workers(source: EvalSource) -> int:
    """Processes ``collect`` reads ``source`` with: one per core up to 4 for a classic file of
    ``PARALLEL_MIN_BYTES`` or more (a smaller file costs less read in this process), else 1."""
    if batches.msgspec is None or source.shape not in CLASSIC_FAMILY:
        return 1
    return min(4, cores()) if source.path.stat().st_size >= PARALLEL_MIN_BYTES else 1


def collect_beside(
    source: EvalSource,
    beside: Callable[[], Any],
    stats: ReadStats | None = None,
    spec: TallySpec | None = None,
    row_budget: int = DEFAULT_ROW_BUDGET,
) -> tuple[Columns, Any]:
    """``collect(source)`` and ``beside()``, a second pass that needs no columns (the answers): run in one of the
    reading processes (picklable: a partial of a module function) where the file is read in parallel, else after."""
    stats = stats if stats is not None else ReadStats()
    workers = reading_workers(source)
    if workers > 1:
        parallel = _collect_parallel(source, stats, workers, spec, row_budget, beside)
        if parallel is not None:
            return parallel
    return collect(source, stats, workers=1, spec=spec, row_budget=row_budget), beside()


def collect(
    source: EvalSource,
    stats: ReadStats | None = None,
    rows: Iterable[EvalRow] | None = None,
    workers: int | None = None,
    spec: TallySpec | None = None,
    row_budget: int = DEFAULT_ROW_BUDGET,
) -> Columns:
    """Columns of every rollout (beyond ``row_budget`` rollouts, of a sample of the examples: ``sampling``).
    Classic shapes take the fast column path (in parallel for large files: ``workers`` processes, default
    ``reading_workers``). ``spec``: the thresholds the tally of every row counts by."""
    stats = stats if stats is not None else ReadStats()
    if rows is None and batches.msgspec is not None and source.shape == V1_TRACES:
        cols = Columns(spec, row_budget)
        for item in v1batches.iter_v1_batches(source, stats):
            if isinstance(item, list):
                for r in item:
                    cols.add(r)
            else:
                cols.add_batch(item)
        return cols
    if rows is None and batches.msgspec is not None and source.shape in CLASSIC_FAMILY:
        if workers is None:
            workers = reading_workers(source)
        if workers > 1:
            parallel = _collect_parallel(source, stats, workers, spec, row_budget)
            if parallel is not None:
                return parallel[0]
        part_cols, part_stats = collect_range(source, None, spec=spec, row_budget=row_budget)
        stats.merge(part_stats, 0)
        return part_cols
    cols = Columns(spec, row_budget)
    add = cols.add
    for r in rows if rows is not None else iter_rows(source, stats):
        add(r)
    return cols
