"""Stream the rows of an eval output, whatever its shape, as one typed record.

``iter_rows(source)`` yields an ``EvalRow`` per rollout from any rollout shape (``source``
names them: classic 0.3.x, 2025 rows, v1 traces, plain JSONL) in bounded memory (a line
longer than ``MAX_LINE_BYTES`` is read through unheld and counted as a malformed row);
``vf-validate`` output holds model-free checks, not rollouts (``validate`` reads it).
``ReadStats`` counts what the reader skipped.

Rows are decoded with msgspec into structs that name only the fields needed, so prompts
and token arrays are skipped at C speed; without msgspec (or for a row msgspec rejects,
e.g. a ``NaN`` literal Python's json writes) the standard ``json`` module is used. The
column readers (``batches``) are the fast paths for classic shapes and v1 traces and must agree with
``classic_rows`` and ``v1_rows`` here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlab.core.files import bounded_lines, open_binary
from vlab.core.result import UsageError
from vlab.evals.fields import (
    CLASSIC_TRUNCATING,
    MISSING,
    MISSING_MS,
    completion_size,
    error_text,
    example_of,
    is_missing,
    msgspec,
    number,
    prompt_key,
    reward_value,
    text_length,
    turn_limit_stop,
    turn_limited,
)
from vlab.evals.source import CLASSIC, V1_TRACES, V1_VALIDATE, EvalSource, detect_shape


@dataclass(slots=True)  # not frozen: a frozen __init__ costs ~20% of the v1 reader's time
class EvalRow:
    """One rollout of an eval, whatever shape it came from."""

    example: Any  # group key: example_id / id / v1 task key
    reward: float | None  # total reward; None when missing or unusable (see reward_issue)
    reward_issue: str | None  # None | missing | null | nan | string | not-a-number
    scores: dict[str, float]  # per reward function and metric (classic mixes both)
    weights: dict[str, float] | None  # known weights (v1 writes them; classic does not)
    metrics: dict[str, float]  # v1 metrics (unweighted, not part of the reward)
    error: str | None
    truncated: bool
    completion_chars: int | None  # characters the model wrote; None when unknown
    tool_calls: int
    row_key: int | None  # identity for duplicate detection
    prompt_key: int | None  # prompt fingerprint (checks that ids identify prompts)
    line: int
    turn_limited: bool = False  # the turn limit ended it before it was over (counted apart from truncated)
    answer: str | None = None  # the completion's final answer, when the reader was given ``answer_of``
    gold: Any = None  # the row's gold answer (classic ``answer``, v1 ``task.data.answer``), with ``answer_of``


@dataclass
class ReadStats:
    """What the reader skipped or noticed; filled while streaming."""

    lines: int = 0
    blank: int = 0
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    not_object: int = 0
    no_final_newline: bool = False
    last_malformed_line: int = 0
    fallback_rows: int = 0  # rows the fast decoder rejected and json read (NaN literals...)
    episodes: int = 0  # v1: episodes (a rollout is a trace)
    episodes_without_traces: int = 0
    other_shape_rows: int = 0  # rows of another shape inside the file
    too_long: int = 0  # lines longer than MAX_LINE_BYTES: skipped unread (counted as malformed too)

    def note_malformed(self, lineno: int) -> None:
        self.malformed += 1
        self.last_malformed_line = lineno
        if len(self.malformed_lines) < 10:
            self.malformed_lines.append(lineno)

    def note_too_long(self, lineno: int) -> None:
        self.too_long += 1
        self.note_malformed(lineno)

    def merge(self, part: ReadStats, line_offset: int) -> None:
        """Add the stats of the next part of the file (its line numbers start at line_offset + 1)."""
        self.lines += part.lines
        self.blank += part.blank
        self.malformed += part.malformed
        self.malformed_lines = (self.malformed_lines + [n + line_offset for n in part.malformed_lines])[:10]
        if part.last_malformed_line:
            self.last_malformed_line = part.last_malformed_line + line_offset
        self.no_final_newline = part.no_final_newline  # only the last part can have it
        self.not_object += part.not_object
        self.fallback_rows += part.fallback_rows
        self.episodes += part.episodes
        self.episodes_without_traces += part.episodes_without_traces
        self.other_shape_rows += part.other_shape_rows
        self.too_long += part.too_long

    @property
    def truncated_last_line(self) -> bool:
        """The last line lacks its newline and does not parse: cut off mid-write."""
        return self.no_final_newline and self.last_malformed_line == self.lines


AnswerOf = Callable[[Any], "str | None"]  # a completion (text or chat messages) -> its final answer


def iter_rows(
    source: EvalSource, stats: ReadStats | None = None, answer_of: AnswerOf | None = None
) -> Iterator[EvalRow]:
    """Stream the rollouts of ``source`` (not for v1-validate: see validate.read_validate_rows). With ``answer_of``
    each row also carries its completion's final answer and its gold (the answers pass, ``evals.answers``)."""
    stats = stats if stats is not None else ReadStats()
    if source.shape == V1_TRACES:
        yield from v1_rows(numbered_lines(source.path, stats), stats, answer_of)
    elif source.shape == V1_VALIDATE:
        raise UsageError(f"{source.path} is vf-validate output: it holds model-free checks, not rollouts")
    else:
        yield from classic_rows(source, numbered_lines(source.path, stats), stats, answer_of)


def numbered_lines(path: Path, stats: ReadStats) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of each non-blank line of a (gzip) JSON Lines file, a UTF-8 BOM dropped; what it
    skips (blank lines, lines over ``MAX_LINE_BYTES``) counted in ``stats``."""
    with open_binary(path) as f:
        n = 0
        last = b""
        for raw in bounded_lines(f):
            n += 1
            if raw is None:  # longer than MAX_LINE_BYTES: never held, a malformed row
                stats.lines = n
                stats.note_too_long(n)
                last = b"\n"
                continue
            last = raw
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 BOM is not part of the first row
                raw = raw[3:]
            stats.lines = n
            if not raw.strip():
                stats.blank += 1
                continue
            yield n, raw
        if last and not last.endswith(b"\n"):
            stats.no_final_newline = True


# -- classic shapes (0.3.x, 2025, plain) ----------------------------------------------


class _Row:
    """Attribute view of a json-decoded row, for the path without msgspec."""

    __slots__ = ("_d",)

    def __init__(self, d: dict):
        self._d = d

    def __getattr__(self, name: str) -> Any:
        return self._d.get(name, MISSING)


def _classic_struct(extra: tuple[str, ...], with_prompt: bool, with_answer: bool = False):
    """A msgspec struct naming only what the classic reader needs; unnamed fields (the prompt
    unless its fingerprint is wanted, token arrays) are skipped unparsed."""
    fields = [
        ("example_id", Any, MISSING_MS),
        ("id", Any, MISSING_MS),
        ("reward", Any, MISSING_MS),
        ("error", Any, None),
        ("is_truncated", Any, None),
        ("stop_condition", Any, None),
        ("completion", Any, MISSING_MS),
        ("metrics", Any, None),
        ("timing", Any, None),
    ]
    if with_prompt:
        fields.append(("prompt", Any, MISSING_MS))
    if with_answer:
        fields.append(("answer", Any, MISSING_MS))
    # Flattened metric names may be any string: give them safe attribute names.
    rename = {f[0]: f[0] for f in fields}
    for i, name in enumerate(extra):
        fields.append((f"x{i}", Any, MISSING_MS))
        rename[f"x{i}"] = name
    return msgspec.defstruct("ClassicRow", fields, rename=rename, gc=False)  # JSON makes no cycles: untracked


def _rollout_key(example: Any, timing: Any) -> int:
    """Identity of a 0.3.x rollout: its example and the time it started (timing.start_time)."""
    start = timing.get("start_time") if isinstance(timing, dict) else getattr(timing, "start_time", None)
    return hash((example, start))


def _line_key(raw: bytes) -> int:
    """Identity of a row for duplicate detection: the line without its newline."""
    return hash(raw[:-1] if raw.endswith(b"\n") else raw)


def classic_structs(
    source: EvalSource, lines: Iterable[tuple[int, bytes]], stats: ReadStats, with_answer: bool = False
) -> Iterator[tuple[int, bytes, Any]]:
    """(line number, line, row) of each classic row, decoded into the struct naming only what the reader needs
    (``_classic_struct``; score ``i`` is attribute ``x{i}``, or its own name without msgspec), through ``json``
    for a row msgspec rejects (a NaN literal); malformed and other-shape rows are counted and skipped. The one
    decoding rule of ``classic_rows`` and of the answers pass (``answers``)."""
    # 2025 writers may have mis-numbered ids; plain files may too: fingerprint the prompt there.
    row_type = _classic_struct(source.score_names, source.shape != CLASSIC, with_answer) if msgspec else None
    decode = msgspec.json.Decoder(row_type).decode if row_type is not None else None
    for lineno, raw in lines:
        row = None
        if decode is not None:
            try:
                row = decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
                row = None
        if row is None:
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                stats.note_malformed(lineno)
                continue
            if not isinstance(obj, dict):
                stats.not_object += 1
                stats.note_malformed(lineno)
                continue
            if detect_shape(obj) in (V1_TRACES, V1_VALIDATE):
                stats.other_shape_rows += 1
                continue
            stats.fallback_rows += 1
            row = msgspec.convert(obj, row_type) if row_type is not None else _Row(obj)
        yield lineno, raw, row


def classic_rows(
    source: EvalSource, lines: Iterable[tuple[int, bytes]], stats: ReadStats, answer_of: AnswerOf | None = None
) -> Iterator[EvalRow]:
    """The reference row-by-row reader of classic shapes, over (line number, line) pairs (the
    fast column path in ``batches`` must agree, and falls back to this for chunks it cannot take)."""
    extra = source.score_names
    want_prompt = source.shape != CLASSIC
    timed = source.shape == CLASSIC and source.rollout_identity
    with_answer = answer_of is not None and "answer" not in extra  # a score named "answer" is read as one
    extra_attrs = [(f"x{i}" if msgspec is not None else name, name) for i, name in enumerate(extra)]
    for lineno, raw, row in classic_structs(source, lines, stats, with_answer):
        example = example_of(row)
        reward, issue = reward_value(row.reward)
        scores: dict[str, float] = {}
        metrics = row.metrics if isinstance(row.metrics, dict) else {}
        for attr, name in extra_attrs:
            v = metrics.get(name, MISSING)
            if is_missing(v):
                v = getattr(row, attr)
            if not is_missing(v):
                x = number(v)
                if x is not None:
                    scores[name] = x
        completion = row.completion
        chars, calls = completion_size(None if is_missing(completion) else completion)
        turned = turn_limited(row.stop_condition, calls, None if is_missing(completion) else completion)
        truncated = (row.is_truncated is True or row.stop_condition in CLASSIC_TRUNCATING) and not turned
        answer = gold = None
        if answer_of is not None:
            answer = answer_of(None if is_missing(completion) else completion)
            gold = row.answer if with_answer and not is_missing(row.answer) else None
        yield EvalRow(
            example=example,
            reward=reward,
            reward_issue=issue,
            scores=scores,
            weights=None,
            metrics={},
            error=error_text(row.error),
            truncated=truncated,
            completion_chars=chars,
            tool_calls=calls,
            row_key=_rollout_key(example, row.timing) if timed else _line_key(raw),
            prompt_key=(prompt_key(None if is_missing(row.prompt) else row.prompt) if want_prompt else None),
            line=lineno,
            turn_limited=turned,
            answer=answer,
            gold=gold,
        )


# -- v1 traces ---------------------------------------------------------------------

if msgspec is not None:
    # gc=False: decoded JSON forms no reference cycles, so the collector need not track (and walk) every row

    class _V1Node(msgspec.Struct, gc=False):
        message: Any = None
        sampled: bool = False

    class _V1Call(msgspec.Struct, gc=False):
        finish_reason: Any = None
        error: Any = None

    class _V1Agent(msgspec.Struct, gc=False):
        name: Any = None
        trainable: Any = True

    class _V1Trace(msgspec.Struct, gc=False):
        id: Any = None
        rewards: Any = None
        metrics: Any = None
        nodes: list[_V1Node] = []
        calls: list[_V1Call] = []
        ok: Any = None
        stop_condition: Any = None
        is_timeout: Any = False
        errors: Any = None
        agent: _V1Agent | None = None

    class _V1Task(msgspec.Struct, gc=False):
        key: Any = None
        hash: Any = None
        data: Any = None

    class _V1Episode(msgspec.Struct, gc=False):
        id: Any = None
        task: _V1Task | None = None
        ok: Any = None
        is_timeout: Any = False
        errors: Any = None
        traces: list[_V1Trace] = []


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


# Stop conditions v1 counts as truncation (verifiers.v1.trace.Trace.is_truncated).
V1_TRUNCATING = frozenset(
    {"max_turns", "max_input_tokens", "max_output_tokens", "max_total_tokens", "compaction_failed"}
)


def v1_example(task: Any) -> Any:
    """The group key of a v1 episode: its task's key, else its hash, else its data's idx or id; lists and dicts as
    their JSON text. ``data`` may be still undecoded (``msgspec.Raw``: decoded only when needed)."""
    example = _get(task, "key") or _get(task, "hash")
    if not example:
        data = _get(task, "data")
        if msgspec is not None and type(data) is msgspec.Raw:
            data = msgspec.json.decode(data)
        example = _get(data, "idx") or _get(data, "id")
    if isinstance(example, (list, dict)):
        example = json.dumps(example, sort_keys=True)
    return example


def v1_rows(
    lines: Iterable[tuple[int, bytes]], stats: ReadStats, answer_of: AnswerOf | None = None
) -> Iterator[EvalRow]:
    """The reference row-by-row reader of v1 traces, over (line number, line) pairs (the column path in ``batches``
    must agree, and falls back to this for chunks it cannot take)."""
    decode = msgspec.json.Decoder(_V1Episode).decode if msgspec is not None else None
    for lineno, raw in lines:
        episode = None
        if decode is not None:
            try:
                episode = decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
                episode = None
        if episode is None:
            try:
                episode = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
                stats.note_malformed(lineno)
                continue
            if not isinstance(episode, dict):
                stats.note_malformed(lineno)
                continue
            if detect_shape(episode) != V1_TRACES:
                stats.other_shape_rows += 1
                continue
            stats.fallback_rows += 1
        stats.episodes += 1
        example = v1_example(_get(episode, "task"))
        traces = _get(episode, "traces") or []
        episode_error = error_text(_get(episode, "errors"))
        if not traces:
            stats.episodes_without_traces += 1
            # The task was dispatched but no trace came back: an errored rollout without a reward.
            yield EvalRow(
                example,
                None,
                "missing",
                {},
                None,
                {},
                episode_error or "episode produced no trace",
                bool(_get(episode, "is_timeout")),
                None,
                0,
                hash(str(_get(episode, "id"))),
                None,
                lineno,
            )
            continue
        for trace in traces:
            row = _trace_row(trace, example, episode, episode_error, raw, lineno, answer_of)
            if row is not None:
                yield row


def _trace_row(trace: Any, example: Any, episode: Any, ep_error: str | None, raw: bytes, lineno: int, answer_of=None):
    """The EvalRow of one v1 trace, or None for a frozen agent's trace (judges do not train)."""
    agent = _get(trace, "agent")
    if agent is not None and _get(agent, "trainable", True) is False:
        return None
    rewards = _get(trace, "rewards") or {}
    scores: dict[str, float] = {}
    weights: dict[str, float] = {}
    total = 0.0
    issue = None
    unscored = False
    for name, rw in rewards.items() if isinstance(rewards, dict) else ():
        if rw is None:
            unscored = True
            continue
        score = number(rw.get("score")) if isinstance(rw, dict) else None
        weight = number(rw.get("weight", 1.0)) if isinstance(rw, dict) else None
        if score is None or weight is None:
            issue = "string" if isinstance(rw, dict) and isinstance(rw.get("score"), str) else "not-a-number"
            continue
        scores[name], weights[name] = score, weight
        total += score * weight
    reward: float | None = total
    if issue is None and not math.isfinite(total):
        issue = "nan"
    if issue is not None:
        reward = None
    elif not scores:
        reward, issue = None, ("null" if unscored else "missing")
    raw_metrics = _get(trace, "metrics") or {}
    values = ((name, number(v)) for name, v in (raw_metrics.items() if isinstance(raw_metrics, dict) else ()))
    metrics = {name: x for name, x in values if x is not None}
    chars = calls = turns = 0
    last_calls = False
    sampled = []
    for node in _get(trace, "nodes") or []:
        if not _get(node, "sampled", False):
            continue
        message = _get(node, "message") or {}
        if answer_of is not None:
            sampled.append(message)
        chars += text_length(_get(message, "content"))
        tc = _get(message, "tool_calls")
        turns += 1
        last_calls = bool(tc)
        if tc:
            calls += len(tc) if isinstance(tc, list) else 1
    stop = _get(trace, "stop_condition")
    turned = turn_limit_stop(stop, calls, turns, last_calls)
    truncated = stop in V1_TRUNCATING and not turned
    if not truncated and not turned:
        last = next((c for c in reversed(_get(trace, "calls") or []) if _get(c, "error") is None), None)
        truncated = bool(last is not None and _get(last, "finish_reason") == "length")
    error = error_text(_get(trace, "errors")) or ep_error
    if error is None and _get(trace, "ok") is False:
        error = f"trace not ok (stop condition: {stop})"
    answer = gold = None
    if answer_of is not None:
        answer = answer_of([m for m in sampled if isinstance(m, dict)])
        gold = _get(_get(_get(episode, "task"), "data"), "answer")
    return EvalRow(
        example,
        reward,
        issue,
        scores,
        weights,
        metrics,
        error,
        truncated,
        chars,
        calls,
        hash(str(_get(trace, "id") or _get(episode, "id") or raw)),
        None,
        lineno,
        turned,
        answer,
        gold,
    )
