"""The fast column reader of classic shapes (0.3.x, 2025, plain JSONL); v1 traces: ``v1batches``.

1,000,000-row results files are common. Row-by-row normalisation costs more than the
decoding, so rows are decoded a chunk at a time (``chunks.line_chunks``; msgspec ``decode_lines`` into
structs that name only the needed fields) and turned into columns with comprehensions
(``ClassicBatch``). A chunk that does not fit (a NaN literal, a malformed line, a blank
line, a missing flattened metric, odd types) is read by the reference row reader (``read.classic_rows``)
instead, so both paths give the same figures (tests compare them). A 2025 row's prompt is fingerprinted from
its JSON text, decoded once per distinct text (``PromptKeys``). Needs msgspec; without it callers use
``read.iter_rows``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vlab.evals import chunks
from vlab.evals.fields import (
    CLASSIC_TRUNCATING,
    MISSING_MS,
    error_text,
    example_of,
    is_missing,
    msgspec,
    prompt_key,
    reward_value,
    score_value,
    text_length,
    turn_limited,
)
from vlab.evals.read import EvalRow, ReadStats, classic_rows
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
    source: EvalSource,
    stats: ReadStats,
    chunk_bytes: int = chunks.CHUNK_BYTES,
    byte_range: tuple[int, int] | None = None,
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
    for n, chunk in enumerate(chunks.line_chunks(source.path, stats, chunk_bytes, byte_range, keys=not timed)):
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
