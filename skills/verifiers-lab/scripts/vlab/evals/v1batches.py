"""The fast column reader of v1 traces: each chunk's episodes of one trace as a ``batches.ClassicBatch``.

Needs msgspec. A chunk it does not take (an episode of more or fewer than one trace, an odd type) is read by
``read.v1_rows`` instead, so both paths give the same figures (tests compare them).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from vlab.evals import chunks
from vlab.evals.batches import ClassicBatch
from vlab.evals.fields import error_text, msgspec, number, text_length, turn_limit_stop
from vlab.evals.read import V1_TRUNCATING, ReadStats, v1_example, v1_rows
from vlab.evals.source import EvalSource

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
    source: EvalSource, stats: ReadStats, chunk_bytes: int = chunks.CHUNK_BYTES
) -> Iterator[ClassicBatch | list]:
    """v1 traces as column batches, or as EvalRow lists (``read.v1_rows``) for chunks the column path does not take.
    Needs msgspec."""
    decoder = msgspec.json.Decoder(_V1Episode)
    for chunk in chunks.line_chunks(source.path, stats, chunk_bytes):
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
