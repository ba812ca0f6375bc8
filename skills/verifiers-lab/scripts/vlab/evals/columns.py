"""Rollouts as compact columns, read fast: the input of ``analysis``.

``collect(source)`` fills ``Columns`` (array-backed, ~31 bytes a rollout plus 1 per reward
function or metric while it has at most 256 distinct values: ``CodedColumn``): classic shapes through the msgspec column reader (``batches``), in parallel
processes for large files (one byte range each, merged in file order); v1 traces (or any
``EvalRow`` stream) row by row. ``as_numpy`` views a column as a numpy array.
"""

from __future__ import annotations

import math
import os
import struct
from array import array
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np

from vlab.evals import batches
from vlab.evals.fields import judge_error_kind
from vlab.evals.read import EvalRow, ReadStats, iter_rows
from vlab.evals.source import CLASSIC_FAMILY, EvalSource


def as_numpy(a: array | CodedColumn, dtype) -> np.ndarray:
    """A numpy view of an array column (an empty array of ``dtype`` for an empty column); a coded
    column's values, decoded (a new float64 array)."""
    if isinstance(a, CodedColumn):
        return a.decode()
    return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype=dtype)


_FLOAT, _BITS = struct.Struct("<d"), struct.Struct("<q")


class CodedColumn:
    """A float column stored as codes into its distinct values (keyed by their bits, so -0.0 and each
    NaN stay what they were): 1 byte a row while at most 256 values are distinct, 2 bytes up to 65,536,
    and the plain 8-byte floats beyond. Scores and metrics are nearly always a few discrete values."""

    __slots__ = ("bits", "index", "codes")

    def __init__(self) -> None:
        self.bits: list[int] = []  # the distinct values' bit patterns, by code (None once plain)
        self.index: dict[int, int] = {}
        self.codes = array("B")

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self):
        return iter(self.decode().tolist())

    @property
    def plain(self) -> bool:
        return self.codes.typecode == "d"

    def _widen(self) -> None:
        if len(self.bits) > 65536:
            self.codes = array("d", self.decode().tobytes())
            self.bits, self.index = [], {}
        elif len(self.bits) > 256 and self.codes.typecode == "B":
            self.codes = array("H", self.codes)

    def _lut(self, bits: np.ndarray) -> np.ndarray:
        """The codes of these distinct bit patterns, adding the new ones."""
        index = self.index
        out = np.empty(len(bits), dtype=np.int64)
        for i, b in enumerate(bits.tolist()):
            code = index.get(b)
            if code is None:
                code = index[b] = len(self.bits)
                self.bits.append(b)
            out[i] = code
        return out

    def extend_values(self, values: np.ndarray) -> None:
        """Append float64 values."""
        if not len(values):
            return
        if self.plain:
            self.codes.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            return
        uniq, inverse = np.unique(np.ascontiguousarray(values, dtype=np.float64).view(np.int64), return_inverse=True)
        codes = self._lut(uniq)[inverse.reshape(-1)]
        self._widen()
        if self.plain:
            self.codes.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            return
        self.codes.frombytes(codes.astype(self._dtype()).tobytes())

    def extend(self, values) -> None:
        self.extend_values(np.asarray(values, dtype=np.float64) if not isinstance(values, np.ndarray) else values)

    def append(self, value: float) -> None:
        if self.plain:
            self.codes.append(value)
            return
        bits = _BITS.unpack(_FLOAT.pack(value))[0]
        code = self.index.get(bits)
        if code is None:
            code = self.index[bits] = len(self.bits)
            self.bits.append(bits)
            self._widen()
            if self.plain:
                self.codes.append(value)
                return
        self.codes.append(code)

    def fill_nan(self, m: int) -> None:
        self.extend_values(np.full(m, math.nan))

    def extend_column(self, other: CodedColumn) -> None:
        if other.plain or self.plain:
            self.extend_values(other.decode())
            return
        lut = self._lut(np.array(other.bits, dtype=np.int64))
        self._widen()
        if self.plain:
            self.extend_values(other.decode())
            return
        self.codes.frombytes(lut[other._view()].astype(self._dtype()).tobytes())

    def decode(self) -> np.ndarray:
        """The values as a new float64 array."""
        if not len(self.codes):
            return np.zeros(0, dtype=np.float64)
        if self.plain:
            return np.frombuffer(self.codes, dtype=np.float64).copy()
        return self._table()[self._view()]

    def head(self, m: int) -> np.ndarray:
        """The first ``m`` values, decoded."""
        if not len(self.codes):
            return np.zeros(0, dtype=np.float64)
        if self.plain:
            return np.frombuffer(self.codes, dtype=np.float64)[:m].copy()
        return self._table()[self._view()[:m]]

    def _dtype(self):
        return np.uint8 if self.codes.typecode == "B" else np.uint16

    def _view(self) -> np.ndarray:
        return np.frombuffer(self.codes, dtype=self._dtype()) if len(self.codes) else np.zeros(0, self._dtype())

    def _table(self) -> np.ndarray:
        return np.array(self.bits, dtype=np.int64).view(np.float64)

    @classmethod
    def nans(cls, m: int) -> CodedColumn:
        col = cls()
        col.fill_nan(m)
        return col


class Columns:
    """Rollouts as compact columns: ~31 bytes a rollout plus 1 per reward function or metric (``CodedColumn``)."""

    def __init__(self) -> None:
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
        self.n = 0

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
            ex = ("row", n)
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
        _append_named(self.fn_cols, r.scores, n)
        if r.metrics or self.metric_cols:
            _append_named(self.metric_cols, r.metrics, n)
        if r.weights:
            for name, w in r.weights.items():
                old = self.weights.setdefault(name, w)
                if old != w:
                    self.weights_changed.add(name)
        self.n = n + 1

    def add_batch(self, b: batches.ClassicBatch) -> None:
        """Columns of a fast-path batch; the same result as add() row by row."""
        m = len(b.reward)
        n0 = self.n
        if None in b.example:
            example = [("row", n0 + i) if e is None else e for i, e in enumerate(b.example)]
            self.missing_example += sum(1 for e in b.example if e is None)
        else:
            example = b.example
        if self.raw_int_examples and batches.only_types(example, int):
            self._extend_raw(example)  # integer ids are kept as they are and coded once at the end
        else:
            self._stop_raw_int_examples()
            codes = self.example_codes
            setdefault = codes.setdefault
            self.example.extend([setdefault(e, len(codes)) for e in example])
        if b.prompt_key is None:
            self.prompt.extend(array("i", [-1]) * m)
        else:
            pcodes = self.prompt_codes
            psd = pcodes.setdefault
            self.prompt.extend([-1 if k is None else psd(k, len(pcodes)) for k in b.prompt_key])
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
        self.errored.extend([e is not None for e in b.error])
        for e in b.error:
            if e is not None:
                kind = e.split(":")[0]
                if len(self.error_kinds) < 50 or kind in self.error_kinds:
                    self.error_kinds[kind] += 1
                if judged := judge_error_kind(e):
                    self.judge_errors[judged] += 1
        self.truncated.extend(b.truncated)
        self.chars.extend([-1 if c is None else c for c in b.chars])
        self.tool_calls.extend([t if t < 127 else 127 for t in b.tool_calls])
        self.row_key.extend(b.row_key)
        cols = self.fn_cols
        for name, col in cols.items():
            values = b.scores.get(name)
            if values is not None:
                col.extend(values)
            else:
                col.fill_nan(m)
        for name, values in b.scores.items():
            if name not in cols:
                col = cols[name] = CodedColumn.nans(n0)
                col.extend(values)
        for col in self.metric_cols.values():
            col.fill_nan(m)
        self.n = n0 + m

    def merge(self, part: Columns, line_offset: int) -> None:
        """Append the columns of the next part of the file (collected in another process)."""
        n0 = self.n
        if self.raw_int_examples and part.raw_int_examples:
            self._extend_raw(part.example)
        else:
            self._stop_raw_int_examples()
            part._stop_raw_int_examples()
            remap = array("q", [0]) * len(part.example_codes)
            codes = self.example_codes
            for key, code in part.example_codes.items():
                if isinstance(key, tuple) and key[:1] == ("row",):  # rows without an id stay unique
                    key = ("row", key[1] + n0)
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


def _append_named(cols: dict[str, CodedColumn], values: dict[str, float], n: int) -> None:
    for name, col in cols.items():
        col.append(values.get(name, math.nan))
    if len(values) > len(cols) or any(name not in cols for name in values):
        for name, value in values.items():
            if name not in cols:
                col = cols[name] = CodedColumn.nans(n)
                col.append(value)


# Files this large are read by several processes at once (one byte range each).
PARALLEL_MIN_BYTES = 64 << 20
PARTS_PER_WORKER = 4


def collect_range(
    source: EvalSource, byte_range: tuple[int, int] | None, chunk_bytes: int = 1 << 22
) -> tuple[Columns, ReadStats]:
    cols, stats = Columns(), ReadStats()
    for item in batches.iter_classic_batches(source, stats, chunk_bytes, byte_range):
        if isinstance(item, list):
            for r in item:
                cols.add(r)
        else:
            cols.add_batch(item)
    return cols, stats


def _collect_parallel(source: EvalSource, stats: ReadStats, workers: int) -> Columns | None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # several small parts a worker: the parent holds one part's copy at a time while merging
    ranges = batches.split_ranges(source.path, workers * PARTS_PER_WORKER)
    if len(ranges) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return None
    cols, merged = Columns(), ReadStats()
    try:
        with ProcessPoolExecutor(min(workers, len(ranges)), mp_context=multiprocessing.get_context("fork")) as pool:
            # parts arrive in file order; each is merged and dropped at once to bound memory
            for part_cols, part_stats in pool.map(collect_range, [source] * len(ranges), ranges):
                offset = merged.lines
                cols.merge(part_cols, offset)
                merged.merge(part_stats, offset)
                del part_cols
    except (OSError, RuntimeError):  # no processes on this system: read serially
        return None
    stats.merge(merged, 0)
    return cols


def collect(
    source: EvalSource,
    stats: ReadStats | None = None,
    rows: Iterable[EvalRow] | None = None,
    workers: int | None = None,
) -> Columns:
    """Columns of every rollout. Classic shapes take the fast column path (in parallel for
    large files: ``workers`` processes, default one per CPU up to 4)."""
    cols = Columns()
    add = cols.add
    stats = stats if stats is not None else ReadStats()
    if rows is None and batches.msgspec is not None and source.shape in CLASSIC_FAMILY:
        if workers is None:
            big = source.path.stat().st_size >= PARALLEL_MIN_BYTES
            workers = min(4, os.cpu_count() or 1) if big else 1
        if workers > 1:
            parallel = _collect_parallel(source, stats, workers)
            if parallel is not None:
                return parallel
        part_cols, part_stats = collect_range(source, None)
        stats.merge(part_stats, 0)
        return part_cols
    for r in rows if rows is not None else iter_rows(source, stats):
        add(r)
    return cols
