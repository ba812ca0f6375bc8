"""The fast column readers: classic shapes (0.3.x, 2025, plain JSONL) and v1 traces.

1,000,000-row results files are common. Row-by-row normalisation costs more than the
decoding, so rows are decoded a chunk at a time (``line_chunks``; msgspec ``decode_lines`` into
structs that name only the needed fields) and turned into columns with comprehensions
(``ClassicBatch``). A chunk that does not fit (a NaN literal, a malformed line, a blank
line, a missing flattened metric, odd types; for v1 an episode of more or fewer than one trace) is read by the
reference row reader (``read.classic_rows``, ``read.v1_rows``) instead, so both paths give the same figures
(tests compare them). A 2025 row's prompt is fingerprinted from its JSON text, decoded once per distinct text
(``PromptKeys``). Needs msgspec; without it callers use ``read.iter_rows``.
"""

from __future__ import annotations

import contextlib
import gc
import math
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlab.core.files import MAX_LINE_BYTES, is_gzip, open_binary, skip_line
from vlab.core.result import UsageError
from vlab.evals.fields import (
    CLASSIC_TRUNCATING,
    MISSING_MS,
    error_text,
    example_of,
    is_missing,
    msgspec,
    number,
    prompt_key,
    reward_value,
    score_value,
    text_length,
    turn_limit_stop,
    turn_limited,
)
from vlab.evals.read import V1_TRUNCATING, EvalRow, ReadStats, classic_rows, v1_example, v1_rows
from vlab.evals.source import CLASSIC, EvalSource


@dataclass
class ClassicBatch:
    """The columns of one chunk of classic rows (row i is file line first_line + i)."""

    example: list
    reward: list  # floats, None where unusable (see issues)
    issues: list[tuple[int, str]]
    error: list
    truncated: list | bytes  # 0 none, 1 truncated, 2 out of turns (bytes: a run of zeros)
    chars: list
    tool_calls: list
    row_key: list
    prompt_key: list | None
    scores: dict[str, list]
    first_line: int
    metrics: dict[str, list] | None = None  # v1: metrics (unweighted), NaN where a row has none of that name
    weights: dict[str, list] | None = None  # v1: each function's weight on the rows that scored it, in row order
    coded_examples: bool = False  # ids are interned even when integers (as ``Columns.add`` does: v1 keys)
    int_examples: bool = False  # every id is known to be an integer (decoded as one)


if msgspec is not None:
    # gc=False: decoded JSON cannot form reference cycles, and a chunk's ~3,000 rows tracked by the collector
    # cost a fifth of the decoding in collections that free nothing
    class _Msg(msgspec.Struct, gc=False):
        role: Any = "assistant"
        content: Any = None
        tool_calls: Any = None

    class _Timing(msgspec.Struct, gc=False):
        start_time: Any = None


def _fast_struct(
    names: tuple[str, ...], with_prompt: bool, with_timing: bool, text_prompt: bool = False, strict: bool = False
):
    """The struct a chunk of classic rows is decoded into. ``strict``: the common row's types only (integer ids, a
    number reward and scores, no error, a completion), so that its columns need no check (``_fast_batch``); a chunk
    with another row is decoded again by the lenient struct (every type)."""
    any_ = Any if not strict else None
    fields = [
        ("example_id", Any if not strict else int | msgspec.UnsetType, MISSING_MS),
        ("id", Any if not strict else int | msgspec.UnsetType, MISSING_MS),
        ("reward", Any, MISSING_MS) if not strict else ("reward", float),
        ("error", any_, None),
        ("is_truncated", Any, None),
        ("stop_condition", Any, None),
        ("completion", list[_Msg] | str | None, None) if not strict else ("completion", list[_Msg] | str),
    ]
    if with_timing:
        fields.append(("timing", _Timing | None, None))
    if with_prompt and text_prompt:  # a text prompt is its own fingerprint's input (fields.prompt_key)
        fields.append(("prompt", str | None | msgspec.UnsetType, MISSING_MS) if not strict else ("prompt", str))
    elif with_prompt:  # its JSON text, undecoded: a prompt is decoded once per distinct text (PromptKeys)
        fields.append(("prompt", msgspec.Raw, MISSING_MS))
    rename = {f[0]: f[0] for f in fields}
    for i, name in enumerate(names):
        fields.append((f"x{i}", Any, MISSING_MS) if not strict else (f"x{i}", float))
        rename[f"x{i}"] = name
    return msgspec.defstruct("ClassicFastRow", fields, rename=rename, gc=False, kw_only=True)


def _msgs_size(completion: Any) -> tuple[int | None, int]:
    if completion is None:
        return None, 0
    if type(completion) is str:
        return len(completion.strip()), 0
    chars = calls = 0
    for m in completion:
        if m.role != "assistant":
            continue
        c = m.content
        chars += len(c.strip()) if type(c) is str else text_length(c)
        tc = m.tool_calls
        if tc:
            calls += len(tc) if isinstance(tc, list) else 1
    return chars, calls


def only_types(values: list, *types: type) -> bool:
    """All values are of exactly these types (a C-speed scan)."""
    return set(map(type, values)) <= set(types)


def _completion_sizes(completions: list) -> tuple[list, list, list]:
    """(chars, tool calls, messages) per row, as _msgs_size, computed over all messages at once."""
    if only_types(completions, str):  # plain text completions
        return list(map(len, map(str.strip, completions))), [0] * len(completions), [0] * len(completions)
    if not only_types(completions, list):
        sizes = [_msgs_size(c) for c in completions]
        counts = [len(c) if type(c) is list else 0 for c in completions]
        return [c for c, _ in sizes], [t for _, t in sizes], counts
    from itertools import accumulate, chain

    counts = list(map(len, completions))
    msgs = list(chain.from_iterable(completions))
    contents = [m.content for m in msgs]
    if only_types(contents, str):
        lengths = list(map(len, map(str.strip, contents)))
    else:
        lengths = [len(c.strip()) if type(c) is str else text_length(c) for c in contents]
    tcs = [m.tool_calls for m in msgs]
    calls = (
        [0] * len(msgs)
        if tcs.count(None) == len(tcs)
        else [(len(t) if isinstance(t, list) else 1) if t else 0 for t in tcs]
    )
    roles = [m.role for m in msgs]
    if roles.count("assistant") != len(roles):
        lengths = [n if r == "assistant" else 0 for n, r in zip(lengths, roles)]
        calls = [n if r == "assistant" else 0 for n, r in zip(calls, roles)]
    if counts.count(1) == len(counts):  # one message per row: the common single-turn case
        return lengths, calls, counts
    if counts.count(0) + counts.count(1) == len(counts):  # at most one (a failed generation writes none)
        rows = [i for i, n in enumerate(counts) if n]
        row_lengths, row_calls = [0] * len(counts), [0] * len(counts)
        for i, n, c in zip(rows, lengths, calls):
            row_lengths[i], row_calls[i] = n, c
        return row_lengths, row_calls, counts
    ends = list(accumulate(counts))
    starts = [0, *ends[:-1]]
    return (
        [sum(lengths[a:b]) for a, b in zip(starts, ends)],
        [sum(calls[a:b]) for a, b in zip(starts, ends)],
        counts,
    )


class PromptKeys:
    """``fields.prompt_key`` of each row's prompt, read as its JSON text (``msgspec.Raw``): each distinct text is
    decoded and fingerprinted once, as the row reader does it (the rollouts of one prompt share its text, written
    by one writer); the others are looked up by a hash of their text. Remembers at most ``MEMO`` texts' keys
    (a 2025 file lays its rollouts out one pass over the examples after another: a prompt comes back after all
    the others)."""

    MEMO = 1 << 16

    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}

    def __call__(self, prompts: list) -> list:
        if only_types(prompts, str):  # text prompts (the text decoder's): hashed as they are
            return list(map(hash, prompts))
        if not only_types(prompts, msgspec.Raw):  # text, null or absent prompts among others: row by row
            return [
                self([p])[0] if type(p) is msgspec.Raw else prompt_key(None if is_missing(p) else p) for p in prompts
            ]
        texts = list(map(bytes, prompts))  # a Raw is not hashable; bytes are, and cache their hash
        memo = self.memo
        keys = list(map(memo.get, map(hash, texts)))  # None: not seen yet (a null prompt's key is remembered as _NULL)
        if None in keys:
            new = dict.fromkeys(t for t, k in zip(texts, keys) if k is None)
            values = msgspec.json.decode(b"[" + b",".join(new) + b"]")  # one call for the chunk's new texts
            if len(memo) + len(new) > self.MEMO:
                memo.clear()
            found = {t: prompt_key(v) for t, v in zip(new, values)}
            memo.update((hash(t), _NULL if k is None else k) for t, k in found.items())
            keys = [found[t] if k is None else k for t, k in zip(texts, keys)]
        if _NULL in keys:
            keys = [None if k is _NULL else k for k in keys]
        return keys


_NULL = object()  # the remembered key of a null prompt (PromptKeys)


def _fast_batch(
    rows: list,
    line_keys: list[int] | None,
    first: int,
    names: tuple[str, ...],
    prompt_keys: PromptKeys | None,
    strict: bool = False,
) -> ClassicBatch | None:
    """The columns of a decoded chunk (``strict``: decoded by the strict struct, so its types are known)."""
    from operator import attrgetter

    scores = {}
    for i, name in enumerate(names):
        values = list(map(attrgetter(f"x{i}"), rows))
        if strict or only_types(values, float):
            scores[name] = values
            continue
        if MISSING_MS in values:
            return None  # the row may carry it only in metrics{}: the reference path reads both
        scores[name] = [score_value(v) for v in values]
    example = list(map(attrgetter("example_id"), rows))
    int_ids = strict and MISSING_MS not in example
    if not int_ids and not only_types(example, int) and example.count(MISSING_MS) == len(example):
        example = list(map(attrgetter("id"), rows))  # 2025 rows: ``id`` alone
        int_ids = strict and MISSING_MS not in example
    if not int_ids and not only_types(example, int):  # strings: "7" and 7 are one example (example_of)
        example = [example_of(r) for r in rows]
    reward = list(map(attrgetter("reward"), rows))
    issues: list[tuple[int, str]] = []
    if not strict and not only_types(reward, float):
        fixed = []
        for i, v in enumerate(reward):
            x, issue = reward_value(v)
            fixed.append(x)
            if issue is not None:
                issues.append((i, issue))
        reward = fixed
    if strict:  # no row has an error
        error = [None] * len(rows)
    else:
        error = list(map(attrgetter("error"), rows))
        if error.count(None) != len(error):
            error = [None if e is None else error_text(e) for e in error]
    truncated = list(map(attrgetter("is_truncated"), rows))
    if True not in truncated:  # none truncated (absent, null or false): one run of zeros
        truncated = bytes(len(rows))
    else:
        truncated = [t is True for t in truncated]
    stops = set(map(attrgetter("stop_condition"), rows))
    if stops & set(CLASSIC_TRUNCATING):
        truncated = [bool(t) or r.stop_condition in CLASSIC_TRUNCATING for t, r in zip(truncated, rows)]
    completions = list(map(attrgetter("completion"), rows))
    chars, calls, counts = _completion_sizes(completions)
    if any(isinstance(s, str) and "turn" in s.lower() for s in stops):  # 2: the turn limit (see Columns)
        # 0.3.1 writes max_turns_reached on every single-turn reply: only a row with tool calls or two or more
        # messages can be turn-limited (fields.turn_limited), so only those are asked
        single = calls.count(0) == len(calls) and counts.count(1) == len(counts)
        can = [] if single else [i for i, (c, n) in enumerate(zip(calls, counts)) if c or n > 1]
        if can:
            truncated = [int(t) for t in truncated]
            for i in can:
                if turn_limited(rows[i].stop_condition, calls[i], completions[i]):
                    truncated[i] = 2
    if line_keys is None:  # 0.3.x: a rollout is identified by its example and start time (as read.classic_rows)
        timings = list(map(attrgetter("timing"), rows))
        starts = [None] * len(rows) if None in timings else list(map(attrgetter("start_time"), timings))
        keys = list(map(hash, zip(example, starts)))
    else:
        keys = line_keys  # each line's hash, without its newline (read._line_key)
    return ClassicBatch(
        example=example,
        reward=reward,
        issues=issues,
        error=error,
        truncated=truncated,
        chars=chars,
        tool_calls=calls,
        row_key=keys,
        prompt_key=prompt_keys(list(map(attrgetter("prompt"), rows))) if prompt_keys is not None else None,
        scores=scores,
        first_line=first,
        int_examples=int_ids,
    )


# A chunk of lines read and decoded at once: its rows and columns stay in the processor's caches (1 MB read 2025 and
# text rows 7-15% faster than 4 MB chunks; smaller ones pay more per chunk than they save)
CHUNK_BYTES = 1 << 20


# -- v1 traces ----------------------------------------------------------------------

if msgspec is not None:
    # what the column path reads of an episode of one trace; an odd type (a reward that is not an object, a message
    # that is a string) sends the chunk to read.v1_rows
    class _V1Reward(msgspec.Struct, gc=False):
        score: Any = None
        weight: Any = 1.0  # absent: 1.0, as v1 weighs it

    class _V1Message(msgspec.Struct, gc=False):
        content: Any = None
        tool_calls: Any = None

    class _V1Node(msgspec.Struct, gc=False):
        message: _V1Message | None = None
        sampled: bool = False

    class V1Call(msgspec.Struct, gc=False):
        finish_reason: Any = None
        error: Any = None

    class V1Agent(msgspec.Struct, gc=False):
        trainable: Any = True

    class _V1Trace(msgspec.Struct, gc=False):
        id: Any = None
        rewards: dict[str, _V1Reward | None] | None = None
        metrics: Any = None
        nodes: list[_V1Node] = []  # null: the row reader's decoder refuses it too (json reads it)
        calls: list[V1Call] = []
        ok: Any = None
        stop_condition: Any = None
        errors: Any = None
        agent: V1Agent | None = None

    class V1Task(msgspec.Struct, gc=False):
        key: Any = None
        hash: Any = None
        data: msgspec.Raw = msgspec.Raw(b"null")  # decoded only for an id when the task has no key (read.v1_example)

    class _V1Episode(msgspec.Struct, gc=False):
        id: Any = None
        task: V1Task | None = None
        errors: Any = None
        traces: list[_V1Trace] = []


def _v1_trace(trace: Any, episode: Any) -> tuple | None:
    """(reward, issue, scores, weights, metrics, error, stop code, characters, tool calls, row key) of an episode's
    one trace, as ``read._trace_row`` and ``Columns.add`` make them; None for a trace the row reader takes
    (a frozen agent's, one without an id)."""
    agent = trace.agent
    key = trace.id or episode.id
    if (agent is not None and agent.trainable is False) or not key:
        return None
    scores: dict[str, float] = {}
    weights: dict[str, float] = {}
    total = 0.0
    issue = None
    unscored = False
    if trace.rewards:
        for name, rw in trace.rewards.items():
            if rw is None:
                unscored = True
                continue
            score, weight = rw.score, rw.weight
            if type(score) is not float or type(weight) is not float:  # msgspec's floats are finite: number's own
                score, weight = number(score), number(weight)
                if score is None or weight is None:
                    issue = "string" if isinstance(rw.score, str) else "not-a-number"
                    continue
            scores[name] = score
            weights[name] = weight
            total += score * weight
    reward: float | None = total
    if issue is None and not math.isfinite(total):
        issue = "nan"
    if issue is not None:
        reward = None
    elif not scores:
        reward, issue = None, ("null" if unscored else "missing")
    metrics = {}
    raw_metrics = trace.metrics
    if raw_metrics and isinstance(raw_metrics, dict):
        for name, v in raw_metrics.items():
            x = v if type(v) is float else number(v)
            if x is not None:
                metrics[name] = x
    chars = calls = turns = 0
    last_calls = False
    for node in trace.nodes:
        if node.sampled:
            turns += 1
            message = node.message
            if message is None:
                last_calls = False
                continue
            content = message.content
            chars += len(content.strip()) if type(content) is str else text_length(content)
            tc = message.tool_calls
            last_calls = bool(tc)
            if tc:
                calls += len(tc) if isinstance(tc, list) else 1
    stop = trace.stop_condition
    turned = turn_limit_stop(stop, calls, turns, last_calls)
    truncated = stop in V1_TRUNCATING and not turned
    if not truncated and not turned:
        for call in reversed(trace.calls):  # the last call that did not fail
            if call.error is None:
                truncated = call.finish_reason == "length"
                break
    errors = trace.errors
    error = error_text(errors) if errors is not None and errors != [] else None
    if error is None:
        errors = episode.errors
        error = error_text(errors) if errors is not None and errors != [] else None
        if error is None and trace.ok is False:
            error = f"trace not ok (stop condition: {stop})"
    return reward, issue, scores, weights, metrics, error, 2 if turned else int(truncated), chars, calls, hash(str(key))


def _v1_batch(episodes: list, first: int, stats: ReadStats) -> ClassicBatch | None:
    """The columns of a chunk of v1 episodes of one trace each (row i is line first + i); None when another
    shape of episode is among them (the chunk is read row by row)."""
    if any(len(e.traces) != 1 for e in episodes):
        return None
    traces = [_v1_trace(e.traces[0], e) for e in episodes]
    if None in traces:
        return None
    stats.episodes += len(episodes)
    reward, issue, scores, weights, metrics, error, stops, chars, calls, keys = map(list, zip(*traces))
    tasks = [e.task for e in episodes]
    examples = [t.key if t is not None and type(t.key) is str and t.key else v1_example(t) for t in tasks]
    return ClassicBatch(
        example=examples,
        reward=reward,
        issues=[] if issue.count(None) == len(issue) else [(i, x) for i, x in enumerate(issue) if x is not None],
        error=error,
        truncated=stops,
        chars=chars,
        tool_calls=calls,
        row_key=keys,
        prompt_key=None,
        scores=_named_columns(scores),
        first_line=first,
        metrics=_named_columns(metrics),
        weights=_named_columns(weights, fill=False),
        coded_examples=True,
    )


def _named_columns(rows: list[dict[str, float]], fill: bool = True) -> dict[str, list]:
    """Per-row {name: value} as columns, names in first-seen order: NaN where a row lacks the name (``fill``), or
    each name's values on the rows that have it, in row order."""
    shapes = set(map(tuple, rows))  # the names of each row, in order
    if len(shapes) == 1:  # every row has the same names (the common case)
        names = shapes.pop()
        return {name: [row[name] for row in rows] for name in names}
    names = dict.fromkeys(name for row in rows for name in row)
    if fill:
        return {name: [row.get(name, math.nan) for row in rows] for name in names}
    return {name: [row[name] for row in rows if name in row] for name in names}


def iter_v1_batches(
    source: EvalSource, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[ClassicBatch | list]:
    """v1 traces as column batches, or as EvalRow lists (``read.v1_rows``) for chunks the column path does not take.
    Needs msgspec."""
    decoder = msgspec.json.Decoder(_V1Episode)
    for chunk in line_chunks(source.path, stats, chunk_bytes):
        batch = None
        try:
            episodes = chunk.decode(decoder)
            if len(episodes) == chunk.count:  # no blank line: episode i is line first + i
                batch = _v1_batch(episodes, chunk.first, stats)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
            batch = None
        if batch is not None:
            yield batch
            continue
        yield list(v1_rows(chunk.numbered(stats, newlines=True), stats))  # a trace without ids is keyed by its line


def split_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of a file, each starting at a line start and ending after a newline."""
    size = path.stat().st_size
    if is_gzip(path):  # a compressed stream cannot be entered in the middle: one range
        return [(0, size)]
    cuts = [0]
    with path.open("rb") as f:
        for i in range(1, parts):
            f.seek(max(cuts[-1], size * i // parts))
            skip_line(f)  # move to the next line start (a long line is read through, not held)
            pos = f.tell()
            if pos >= size:
                break
            if pos > cuts[-1]:
                cuts.append(pos)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


class LineChunk:
    """A chunk of a JSON Lines file's whole lines: ``head`` (bytes read, or a view of the mapped file), perhaps ending
    inside a line that ``tail`` finishes (kept apart: joining them would copy the chunk). ``first``: the file line
    number of its first line, ``count`` its lines, ``keys`` each line's hash (without its newline) when the reader
    was asked for them (``read.classic_rows``' row key of an untimed row)."""

    __slots__ = ("head", "tail", "first", "count", "keys", "lines")

    def __init__(self, head, tail: bytes, first: int, count: int, keys: list[int] | None) -> None:
        self.head, self.tail, self.first, self.count, self.keys = head, tail, first, count, keys
        self.lines: list[bytes] | None = None

    def decode(self, decoder) -> list:
        """``decoder.decode_lines`` of the chunk's lines."""
        if not self.tail:
            return decoder.decode_lines(self.head)
        cut = self.head.rfind(b"\n") + 1
        rows = decoder.decode_lines(memoryview(self.head)[:cut])
        rows.extend(decoder.decode_lines(self.head[cut:] + self.tail))
        return rows

    def split(self) -> list[bytes]:
        """The lines, without their newlines."""
        if self.lines is None:
            head = self.head if isinstance(self.head, bytes) else bytes(self.head)
            self.lines = _split(head, self.tail)
        return self.lines

    def numbered(self, stats: ReadStats, newlines: bool = False) -> Iterator[tuple[int, bytes]]:
        """(file line number, line) of each line that is not blank (those are counted in ``stats``); with
        ``newlines`` each line ends in its newline, as ``read.numbered_lines`` gives it (but the file's last, when
        it has none)."""
        lines = self.split()
        ends = (self.tail or self.head)[-1:] == b"\n"
        for i, raw in enumerate(lines):
            if not raw.strip():
                stats.blank += 1
                continue
            yield self.first + i, raw + b"\n" if newlines and (ends or i < len(lines) - 1) else raw


_BOM = b"\xef\xbb\xbf"


def line_chunks(
    path: Path, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES, byte_range: tuple[int, int] | None = None, keys=False
) -> Iterator[LineChunk]:
    """The (gzip) JSON Lines file as chunks of about ``chunk_bytes`` of whole lines (a UTF-8 BOM dropped), each line
    counted in ``stats`` (a line longer than ``MAX_LINE_BYTES`` is read through, never held, and counted as a
    malformed row). With ``byte_range`` (from split_ranges) only that part is read; line numbers then count from
    the start of the range. ``keys``: hash each line as it is counted (one pass, not two). A plain file is mapped
    (``mmap``: read where it lies, no copy; each chunk's pages given back once read), a compressed one read."""
    chunk_bytes = min(chunk_bytes, MAX_LINE_BYTES)  # so that a longer line always runs past its chunk's end
    mapped = None if is_gzip(path) else _mapped(path)
    if mapped is not None:
        return _mapped_chunks(mapped, path, stats, chunk_bytes, byte_range, keys)
    return _read_chunks(path, stats, chunk_bytes, byte_range, keys)


def _mapped(path: Path):
    """The file mapped for reading, where the system can map it and give pages back (madvise); else None."""
    if not hasattr(mmap, "MADV_DONTNEED"):  # e.g. Windows: read instead
        return None
    try:
        with path.open("rb") as f:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # keeps its own handle
    except (OSError, ValueError):  # an empty file, a pipe, a file system that cannot map: read instead
        return None


def _mapped_chunks(mm, path: Path, stats: ReadStats, chunk_bytes: int, byte_range, keys: bool) -> Iterator[LineChunk]:
    """``line_chunks`` of a mapped file: the same chunks, counts and keys as ``_read_chunks``."""
    size = len(mm)
    start, end = byte_range if byte_range is not None else (0, size)
    end = min(end, size)
    view = memoryview(mm)
    find = mm.find
    pos, lineno = start, 0
    if pos == 0 and mm[:3] == _BOM:  # a UTF-8 BOM is not part of the first row
        pos = 3
    while pos < end:
        if os.stat(path).st_size < size:  # cut while read (an eval writing it again): its mapped pages are gone
            raise UsageError(
                f"{path} was cut short while it was read", hint="read it again once whatever writes it has finished"
            )
        stop = min(pos + chunk_bytes, end)  # what one read gives, and the tail that finishes its last line
        stop_at = stop
        too_long = False
        if mm[stop - 1 : stop] != b"\n":
            cut = mm.rfind(b"\n", pos, stop) + 1 or pos
            nl = find(b"\n", stop, stop + MAX_LINE_BYTES)
            tail_end = nl + 1 if nl >= 0 else min(stop + MAX_LINE_BYTES, size)
            tail = tail_end - stop
            if (stop - cut) + tail > MAX_LINE_BYTES or (tail == MAX_LINE_BYTES and nl < 0):
                # longer than a row is held: read through, never whole, and counted as a malformed row
                stop, too_long = cut, True
                if nl < 0:
                    nl = find(b"\n", tail_end)
                    tail_end = nl + 1 if nl >= 0 else size
            else:
                stop = tail_end
            stop_at = tail_end
        chunk_keys = _line_keys(view, find, pos, stop) if keys and stop > pos else None
        if chunk_keys is not None:
            count = len(chunk_keys)
        else:
            count = _newlines_between(find, pos, stop) + (stop > pos and mm[stop - 1 : stop] != b"\n")
        if stop > pos and mm[stop - 1 : stop] != b"\n":
            stats.no_final_newline = True  # only the file's last line can lack it
        first = lineno + 1
        lineno += count
        if too_long:
            lineno += 1
            stats.note_too_long(lineno)
        stats.lines = lineno
        if stop > pos:
            yield LineChunk(view[pos:stop], b"", first, count, chunk_keys)
        # the chunk is read: its pages leave this process (the page cache keeps them for whoever reads next)
        low = pos - pos % mmap.PAGESIZE
        high = stop_at - stop_at % mmap.PAGESIZE
        if high > low:
            mm.madvise(mmap.MADV_DONTNEED, low, high - low)
        pos = stop_at


def _line_keys(view, find, pos: int, stop: int) -> list[int]:
    """``hash`` of each line between ``pos`` and ``stop`` (without its newline; the last may lack one), read where
    the lines lie."""
    out = []
    add = out.append
    nl = find(b"\n", pos, stop)
    while nl >= 0:
        add(hash(view[pos:nl]))
        pos = nl + 1
        nl = find(b"\n", pos, stop)
    if pos < stop:
        add(hash(view[pos:stop]))
    return out


def _newlines_between(find, pos: int, stop: int) -> int:
    n = 0
    nl = find(b"\n", pos, stop)
    while nl >= 0:
        n += 1
        nl = find(b"\n", nl + 1, stop)
    return n


def _read_chunks(path: Path, stats: ReadStats, chunk_bytes: int, byte_range, keys: bool) -> Iterator[LineChunk]:
    """``line_chunks`` by reading (a compressed file, or where the file cannot be mapped)."""
    lineno = 0
    start, end = byte_range if byte_range is not None else (0, None)
    if is_gzip(path):  # one sequential pass over the decompressed lines
        start, end = 0, None
    with open_binary(path) as f:
        f.seek(start)
        pos = start
        while True:
            want = chunk_bytes if end is None else min(chunk_bytes, end - pos)
            buf = f.read(want) if want > 0 else b""
            if not buf:
                break
            first_read = pos == 0
            pos += len(buf)
            if first_read and buf.startswith(_BOM):  # a UTF-8 BOM is not part of the first row
                buf = buf[3:]
            too_long = False
            tail = b""
            if not buf.endswith(b"\n"):
                tail = f.readline(MAX_LINE_BYTES)  # finish the last line of the chunk
                pos += len(tail)
                partial = len(buf) - (buf.rfind(b"\n") + 1)
                if partial + len(tail) > MAX_LINE_BYTES or (len(tail) == MAX_LINE_BYTES and tail[-1:] != b"\n"):
                    # longer than a row is held: read through, never whole, and counted as a malformed row
                    if tail[-1:] != b"\n":
                        pos += skip_line(f)
                    buf, tail = buf[: len(buf) - partial], b""
                    too_long = True
            lines = _split(buf, tail) if keys else None
            if lines is not None:
                count = len(lines)
            else:  # the newlines, and the file's last line if it has none
                count = _newlines(buf) + tail.endswith(b"\n") + ((tail or buf)[-1:] not in (b"", b"\n"))
            if (tail or buf) and not (tail or buf).endswith(b"\n"):
                stats.no_final_newline = True  # only the file's last line can lack it
            first = lineno + 1
            lineno += count
            if too_long:
                lineno += 1
                stats.note_too_long(lineno)
            stats.lines = lineno
            if buf or tail:
                chunk = LineChunk(buf, tail, first, count, list(map(hash, lines)) if lines is not None else None)
                chunk.lines = lines
                yield chunk


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused while a file is read: decoded JSON makes no reference cycles, but a chat
    completion (a list) or a v1 episode (lists and dicts) is a container the collector tracks, and it walked them
    (every object made since the imports, in its full collections) in collections that freed nothing: ~10% of reading
    2025 rows, 15% of v1 traces. Reference counting frees what the reader drops; the collector runs again after."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


STRICT_RETRY = 16  # chunks read by a laxer decoder before the strict ones are tried again


def iter_classic_batches(
    source: EvalSource, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES, byte_range: tuple[int, int] | None = None
) -> Iterator[ClassicBatch | list[EvalRow]]:
    """Classic rows as column batches (fast path), or as EvalRow lists for chunks the fast
    path does not take. Needs msgspec; callers without it use read.iter_rows. With
    ``byte_range`` (from split_ranges) only that part is read; line numbers then count
    from the start of the range."""
    timed = source.shape == CLASSIC and source.rollout_identity
    want_prompt = source.shape != CLASSIC
    names = source.score_names
    prompt_keys = PromptKeys() if want_prompt else None
    # strict before lenient; prompts as text before their JSON text (``PromptKeys``): a chunk is decoded by the first
    # that takes it, and the next chunks start there (chat prompts skip the text decoders; a chunk of odd rows, an
    # error or a string id, the strict ones), all tried again every STRICT_RETRY chunks
    decoders = [
        (msgspec.json.Decoder(_fast_struct(names, want_prompt, timed, text, strict)), strict)
        for strict in (True, False)
        for text in ((True, False) if want_prompt else (False,))
    ]
    start = 0
    # untimed rows are keyed by their line: the chunk reader hashes each line as it counts them
    for n, chunk in enumerate(line_chunks(source.path, stats, chunk_bytes, byte_range, keys=not timed)):
        batch = rows = None
        for i in range(0 if n % STRICT_RETRY == 0 else start, len(decoders)):
            decoder, strict = decoders[i]
            try:
                rows = chunk.decode(decoder)
            except msgspec.ValidationError:  # a row of another type: the next decoder
                continue
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # not JSON: row by row
                break
            start = i
            break
        if rows is not None and len(rows) == chunk.count:  # no blank line: row i is line first + i
            batch = _fast_batch(rows, chunk.keys, chunk.first, names, prompt_keys, strict)
        if batch is not None:
            yield batch
            continue
        yield list(classic_rows(source, chunk.numbered(stats), stats))


def _newlines(buf: bytes) -> int:
    """``buf.count(b"\\n")``, faster for long lines: count tests every byte, ``find`` (memchr) hops from one
    newline to the next, ~3x faster at 1 KB a line. Lines shorter than 512 bytes on average over the first 64,
    or more than one per 256 bytes overall, are counted."""
    find, limit = buf.find, len(buf) >> 8
    n, pos = 0, find(b"\n")
    while pos >= 0:
        n += 1
        if n > limit or (n == 64 and pos < 64 * 512):
            return n + buf.count(b"\n", pos + 1)
        pos = find(b"\n", pos + 1)
    return n


def _split(head: bytes, tail: bytes = b"") -> list[bytes]:
    """The lines of ``head`` and the ``tail`` that finishes its last, without their newlines."""
    lines = head.split(b"\n")
    if tail:
        lines[-1] += tail[:-1] if tail.endswith(b"\n") else tail
    elif lines[-1] == b"":
        lines.pop()
    return lines
