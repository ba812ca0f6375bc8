"""Readers for every eval output shape verifiers has written, streaming.

``locate()`` turns a file, a run folder or nothing (newest run under ./outputs) into an
``EvalSource`` that names its shape; ``iter_rollouts()`` streams normalised ``Rollout``
records from it in bounded memory; ``read_validate_rows()`` reads ``vf-validate`` output,
which holds model-free checks, not rollouts.

Shapes (decided from the rows themselves, never from the file name alone):

- ``classic-vf-eval``: verifiers 0.3.x ``vf-eval -s`` ``results.jsonl`` (``example_id``,
  ``metrics{}`` nested and repeated at top level, ``timing{}``, ``is_truncated``, ``error``)
  next to ``metadata.json``.
- ``classic-vf-eval-2025``: 2025 ``vf-eval`` rows (``id`` or ``example_id``, ``task``,
  ``generation_ms``, metrics flattened at top level). Those writers numbered ``id`` as
  ``row // rollouts`` while laying rows out rollout-major, so ``id`` may not identify the
  prompt: rows carry a prompt fingerprint so the caller can check.
- ``v1-traces``: verifiers 0.4 ``vf-eval`` ``traces.jsonl``, one episode per line, each
  trace a rollout with ``rewards{name: {score, weight}}`` and ``metrics{}``.
- ``v1-validate``: verifiers 0.4 ``vf-validate`` ``results.jsonl`` (+ ``summary.json``).
- ``plain-jsonl``: any JSON Lines of ``{example_id, reward, ...}``.

Rows are decoded with msgspec into structs that name only the fields needed, so prompts
and token arrays are skipped at C speed; without msgspec (or for a row msgspec rejects,
e.g. a ``NaN`` literal Python's json writes) the standard ``json`` module is used.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from .result import UsageError

try:  # optional fast path
    import msgspec
except ImportError:  # pragma: no cover - exercised where msgspec is absent
    msgspec = None

CLASSIC = "classic-vf-eval"
CLASSIC_2025 = "classic-vf-eval-2025"
V1_TRACES = "v1-traces"
V1_VALIDATE = "v1-validate"
PLAIN = "plain-jsonl"

SHAPES = {
    CLASSIC: "classic vf-eval results (verifiers 0.3.x: example_id, metrics{}, timing{}, metadata.json)",
    CLASSIC_2025: "classic vf-eval results from 2025 (id/example_id, metrics flattened, generation_ms)",
    V1_TRACES: "v1 vf-eval traces.jsonl (verifiers 0.4: episodes, rewards{name:{score,weight}})",
    V1_VALIDATE: "v1 vf-validate results (model-free gold/noop checks, no model rollouts)",
    PLAIN: "plain JSON Lines of {example_id, reward, ...}",
}

RESULT_FILES = ("results.jsonl", "traces.jsonl")
# Metadata a run folder may hold, per shape family (first found wins).
METADATA_FILES = ("metadata.json", "summary.json", "configs/resolved/eval.json")

# Top-level fields that are never a flattened metric.
_CORE_FIELDS = frozenset({
    "id", "example_id", "reward", "prompt", "completion", "answer", "task", "info", "error", "error_chain",
    "long_error_chain", "timing", "is_completed", "is_truncated", "stop_condition", "metrics", "tool_defs",
    "token_usage", "generation_ms", "scoring_ms", "total_ms", "oai_tools", "responses", "state", "trajectory",
})
_MISSING = object()
_DETECT_ROWS = 50  # rows parsed in full to decide the shape and find flattened metrics


@dataclass(slots=True)
class Rollout:
    """One rollout, whatever shape it came from."""

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


@dataclass
class EvalSource:
    path: Path  # the JSONL file read
    shape: str
    folder: Path
    metadata: dict[str, Any] = field(default_factory=dict)  # normalised, see read_metadata
    metadata_file: str | None = None
    metadata_error: str | None = None
    found_by: str = "argument"  # argument | search
    other_runs: int = 0  # newer-or-older runs also found by the search
    # Per-function score names (classic): from the first rows' metrics{} and flattened numbers.
    score_names: list[str] = field(default_factory=list)

    @property
    def description(self) -> str:
        return SHAPES[self.shape]

    # Each rollout carries its own id (v1) or start time (0.3.x timing), so identical rows are copies.
    rollout_identity: bool = False

    @property
    def has_rollout_identity(self) -> bool:
        return self.rollout_identity


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

    def merge(self, part: "ReadStats", line_offset: int) -> None:
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

    @property
    def truncated_last_line(self) -> bool:
        """The last line lacks its newline and does not parse: cut off mid-write."""
        return self.no_final_newline and self.last_malformed_line == self.lines


# -- finding the file ------------------------------------------------------------


def default_search_dirs(cwd: Path | None = None) -> list[Path]:
    cwd = cwd or Path.cwd()
    return [cwd / "outputs", *sorted((cwd / "environments").glob("*/outputs"))]


def _result_files_under(root: Path, max_depth: int = 6) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        depth = len(Path(dirpath).relative_to(root).parts)
        if depth >= max_depth:
            dirnames[:] = []
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in RESULT_FILES:
            if name in filenames:
                found.append(Path(dirpath) / name)
    return found


def _newest(files: list[Path]) -> Path:
    return max(files, key=lambda p: (p.stat().st_mtime, str(p)))


def locate(results: str | os.PathLike | None, search_dirs: list[str | os.PathLike] | None = None) -> EvalSource:
    """Resolve the results to read; raise UsageError (exit 2) with a clear reason when there are none."""
    if results is None:
        dirs = [Path(d) for d in search_dirs] if search_dirs else default_search_dirs()
        files = [f for d in dirs if d.is_dir() for f in _result_files_under(d)]
        if not files:
            where = ", ".join(str(d) for d in dirs) or "./outputs"
            raise UsageError(
                f"no eval results found under {where}",
                hint="run an eval that saves results (vf-eval ENV -n 50 -r 4 -s), or pass --results PATH",
            )
        path = _newest(files)
        source = _source_for_file(path)
        source.found_by, source.other_runs = "search", len(files) - 1
        return source
    path = Path(results)
    if not path.exists():
        raise UsageError(f"{path} does not exist", hint="pass an eval run folder or a results JSONL file")
    if path.is_file():
        return _source_for_file(path)
    top = [path / n for n in RESULT_FILES if (path / n).is_file()]
    if len(top) > 1:
        raise UsageError(
            f"{path} holds results of two shapes ({', '.join(p.name for p in top)})",
            hint="pass one of the files with --results FILE",
        )
    if not top:
        top = sorted(p for p in path.glob("*.jsonl") if p.is_file())
        if len(top) > 1:
            raise UsageError(
                f"{path} holds several JSONL files ({', '.join(p.name for p in top[:5])})",
                hint="pass the one to read with --results FILE",
            )
    if not top:
        nested = _result_files_under(path)
        if not nested:
            raise UsageError(
                f"no eval results in {path} (no results.jsonl, traces.jsonl or other .jsonl)",
                hint="point --results at an eval run folder (vf-eval -s writes one) or a results JSONL file",
            )
        source = _source_for_file(_newest(nested))
        source.found_by, source.other_runs = "search", len(nested) - 1
        return source
    return _source_for_file(top[0])


def _source_for_file(path: Path) -> EvalSource:
    if path.stat().st_size == 0:
        raise UsageError(f"{path} is empty: no rollouts to read",
                         hint="the eval wrote nothing; re-run it and check its log for errors")
    rows = _first_rows(path, _DETECT_ROWS)
    if not rows:
        raise UsageError(f"{path} has no readable JSON object rows",
                         hint="is this a results JSONL file? each line must be one JSON object")
    shapes = [detect_shape(r) for r in rows]
    known = {s for s in shapes if s is not None}
    if not known:
        keys = ", ".join(sorted(rows[0])[:12])
        raise UsageError(
            f"{path}: rows have no reward field and match no eval shape (keys: {keys})",
            hint="expected vf-eval results (reward per row), v1 traces.jsonl, vf-validate results, "
                 "or JSON Lines of {example_id, reward}",
        )
    # 0.3.x rows and 2025 rows are one family; anything else mixed in is a different writer.
    families = {CLASSIC if s in (CLASSIC, CLASSIC_2025, PLAIN) else s for s in known}
    if len(families) > 1:
        raise UsageError(
            f"{path} mixes row shapes ({', '.join(sorted(known))})",
            hint="results of different tools were written into one file; split them, or pass one run's file",
        )
    shape = max(known, key=lambda s: (shapes.count(s), s))
    for preferred in (CLASSIC, CLASSIC_2025):  # a 0.3.x row among 2025-looking ones decides
        if preferred in known and len(known) > 1:
            shape = preferred
            break
    source = EvalSource(path=path, shape=shape, folder=path.parent)
    source.rollout_identity = shape == V1_TRACES or (shape == CLASSIC and all(
        isinstance(r.get("timing"), dict) and r["timing"].get("start_time") is not None for r in rows))
    if shape in (CLASSIC, CLASSIC_2025, PLAIN):
        source.score_names = _score_names(rows)
    read_metadata(source)
    return source


def _first_rows(path: Path, n: int) -> list[dict]:
    rows = []
    with path.open("rb") as f:
        for raw in f:
            if len(rows) >= n:
                break
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(obj, dict):
                rows.append(obj)
    return rows


def detect_shape(row: dict) -> str | None:
    """The shape one parsed row belongs to, or None."""
    if isinstance(row.get("traces"), list) and "task" in row:
        return V1_TRACES
    if "task_key" in row and ("gold" in row or "noop" in row or "mode" in row):
        return V1_VALIDATE
    if "reward" not in row:
        return None
    if "prompt" in row or "completion" in row:
        if isinstance(row.get("timing"), dict) or isinstance(row.get("metrics"), dict) or "is_completed" in row:
            return CLASSIC
        return CLASSIC_2025
    return PLAIN


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _score_names(rows: list[dict]) -> list[str]:
    names: dict[str, None] = {}
    for row in rows:
        if isinstance(row.get("metrics"), dict):
            for key, value in row["metrics"].items():
                if _is_number(value):
                    names[key] = None
        for key, value in row.items():
            if key not in _CORE_FIELDS and _is_number(value):
                names[key] = None
    return list(names)


# -- metadata ----------------------------------------------------------------------


def read_metadata(source: EvalSource) -> None:
    """Fill ``source.metadata`` with what the run's own metadata says, normalised:
    env, model, num_examples, rollouts_per_example, avg_reward, pass_at_k, max_tokens."""
    for name in METADATA_FILES:
        path = source.folder / name
        if not path.is_file():
            continue
        source.metadata_file = name
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as err:
            source.metadata_error = f"{name} is unreadable ({err.__class__.__name__})"
            return
        if not isinstance(raw, dict):
            source.metadata_error = f"{name} is not a JSON object"
            return
        source.metadata = _normalise_metadata(name, raw)
        return


def _normalise_metadata(name: str, raw: dict) -> dict[str, Any]:
    meta: dict[str, Any] = {"file": name}
    if name == "metadata.json":
        sampling = raw.get("sampling_args") if isinstance(raw.get("sampling_args"), dict) else {}
        meta.update(
            env=raw.get("env_id") or raw.get("env"),
            model=raw.get("model"),
            num_examples=raw.get("num_examples"),
            rollouts_per_example=raw.get("rollouts_per_example"),
            avg_reward=raw.get("avg_reward"),
            pass_at_k=raw.get("pass_at_k"),
            pass_threshold=raw.get("pass_threshold"),
            max_tokens=sampling.get("max_tokens"),
            verifiers=(raw.get("version_info") or {}).get("vf_version") if isinstance(raw.get("version_info"), dict)
            else None,
        )
    elif name == "summary.json":
        meta.update(total=raw.get("total"), outcomes=raw.get("outcomes"), checks=raw.get("checks"),
                    mode=raw.get("mode"), valid_rate=raw.get("valid_rate"))
    else:  # v1 resolved eval config
        env = raw.get("env") if isinstance(raw.get("env"), dict) else {}
        taskset = env.get("taskset") if isinstance(env.get("taskset"), dict) else {}
        select = raw.get("select") if isinstance(raw.get("select"), dict) else {}
        sampling = raw.get("sampling") if isinstance(raw.get("sampling"), dict) else {}
        meta.update(
            env=taskset.get("id") or env.get("id"),
            model=raw.get("model"),
            num_examples=select.get("limit"),
            rollouts_per_example=raw.get("num_rollouts"),
            max_tokens=sampling.get("max_tokens"),
        )
    return {k: v for k, v in meta.items() if v is not None}


# -- streaming rollouts ----------------------------------------------------------


def _reward_value(value: Any) -> tuple[float | None, str | None]:
    if value is _MISSING or (msgspec is not None and value is msgspec.UNSET):
        return None, "missing"
    if value is None:
        return None, "null"
    if isinstance(value, bool):
        return float(value), None
    if isinstance(value, (int, float)):
        v = float(value)
        return (v, None) if math.isfinite(v) else (None, "nan")
    if isinstance(value, str):
        return None, "string"
    return None, "not-a-number"


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
        return v if math.isfinite(v) else math.nan
    if isinstance(value, bool):
        return float(value)
    return None


def _text_length(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return len(content.strip())
    if isinstance(content, list):  # content parts
        n = 0
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                n += len(text.strip()) if isinstance(text, str) else (0 if part.get("type") == "text" else 1)
            elif isinstance(part, str):
                n += len(part.strip())
        return n
    return len(str(content))


def completion_size(completion: Any) -> tuple[int | None, int]:
    """(characters of assistant text, tool calls) in a classic completion (messages or a string)."""
    if completion is None or completion is _MISSING:
        return None, 0
    if isinstance(completion, str):
        return len(completion.strip()), 0
    if not isinstance(completion, list):
        return None, 0
    chars = calls = 0
    for msg in completion:
        if not isinstance(msg, dict) or msg.get("role", "assistant") != "assistant":
            continue
        chars += _text_length(msg.get("content"))
        tc = msg.get("tool_calls")
        if tc:
            calls += len(tc) if isinstance(tc, list) else 1
    return chars, calls


def _error_text(error: Any) -> str | None:
    if error is None or error is _MISSING or error == "" or error == [] or error == {}:
        return None
    if msgspec is not None and error is msgspec.UNSET:
        return None
    if isinstance(error, dict):
        kind = error.get("error") or error.get("type") or "Error"
        message = error.get("message") or ""
        return f"{kind}: {message}"[:200] if message else str(kind)[:200]
    if isinstance(error, list):
        return _error_text(error[-1])
    return str(error)[:200]


def _prompt_key(prompt: Any) -> int | None:
    if prompt is None or prompt is _MISSING:
        return None
    if isinstance(prompt, str):
        return hash(prompt)
    if isinstance(prompt, list):
        parts = []
        for m in prompt:
            if isinstance(m, dict):
                c = m.get("content")
                parts.append((m.get("role"), c if isinstance(c, str) else json.dumps(c, sort_keys=True)))
            else:
                parts.append(repr(m))
        return hash(tuple(parts))
    return hash(json.dumps(prompt, sort_keys=True, default=str))


class _Row:
    """Attribute view of a json-decoded row, for the path without msgspec."""

    __slots__ = ("_d",)

    def __init__(self, d: dict):
        self._d = d

    def __getattr__(self, name: str) -> Any:
        return self._d.get(name, _MISSING)


def _classic_struct(extra: list[str], with_prompt: bool):
    """A msgspec struct naming only what the classic reader needs; unnamed fields (the prompt
    unless its fingerprint is wanted, token arrays) are skipped unparsed."""
    fields = [
        ("example_id", Any, _MISSING_MS), ("id", Any, _MISSING_MS), ("reward", Any, _MISSING_MS),
        ("error", Any, None), ("is_truncated", Any, None), ("stop_condition", Any, None),
        ("completion", Any, _MISSING_MS), ("metrics", Any, None), ("timing", Any, None),
    ]
    if with_prompt:
        fields.append(("prompt", Any, _MISSING_MS))
    # Flattened metric names may be any string: give them safe attribute names.
    rename = {f[0]: f[0] for f in fields}
    for i, name in enumerate(extra):
        fields.append((f"x{i}", Any, _MISSING_MS))
        rename[f"x{i}"] = name
    return msgspec.defstruct("ClassicRow", fields, rename=rename)


_MISSING_MS = msgspec.UNSET if msgspec is not None else _MISSING


def _missing(v: Any) -> bool:
    return v is _MISSING or v is _MISSING_MS


def iter_rollouts(source: EvalSource, stats: ReadStats | None = None) -> Iterator[Rollout]:
    """Stream normalised rollouts from ``source`` (not for v1-validate: see read_validate_rows)."""
    stats = stats if stats is not None else ReadStats()
    if source.shape == V1_TRACES:
        yield from _iter_v1(source, stats)
    elif source.shape == V1_VALIDATE:
        raise UsageError(f"{source.path} is vf-validate output: it holds model-free checks, not rollouts")
    else:
        yield from _iter_classic(source, stats)


def _lines(path: Path, stats: ReadStats) -> Iterator[tuple[int, bytes]]:
    with path.open("rb") as f:
        n = 0
        last = b""
        for raw in f:
            n += 1
            last = raw
            stats.lines = n
            if not raw.strip():
                stats.blank += 1
                continue
            yield n, raw
        if last and not last.endswith(b"\n"):
            stats.no_final_newline = True


def _malformed(stats: ReadStats, lineno: int) -> None:
    stats.malformed += 1
    stats.last_malformed_line = lineno
    if len(stats.malformed_lines) < 10:
        stats.malformed_lines.append(lineno)


def _rollout_key(example: Any, timing: Any) -> int:
    """Identity of a 0.3.x rollout: its example and the time it started (timing.start_time)."""
    start = timing.get("start_time") if isinstance(timing, dict) else getattr(timing, "start_time", None)
    return hash((example, start))


def _line_key(raw: bytes) -> int:
    """Identity of a row for duplicate detection: the line without its newline."""
    return hash(raw[:-1] if raw.endswith(b"\n") else raw)


def _iter_classic(source: EvalSource, stats: ReadStats) -> Iterator[Rollout]:
    yield from _classic_rollouts(source, _lines(source.path, stats), stats)


def _classic_rollouts(source: EvalSource, lines: Iterable[tuple[int, bytes]],
                      stats: ReadStats) -> Iterator[Rollout]:
    """The reference row-by-row reader of classic shapes (the fast column path must agree)."""
    extra = source.score_names
    # 2025 writers may have mis-numbered ids; plain files may too: fingerprint the prompt there.
    want_prompt = source.shape != CLASSIC
    timed = source.shape == CLASSIC and source.rollout_identity
    row_type = _classic_struct(extra, want_prompt) if msgspec is not None else None
    decode = msgspec.json.Decoder(row_type).decode if row_type is not None else None
    extra_attrs = [(f"x{i}" if row_type is not None else name, name) for i, name in enumerate(extra)]
    for lineno, raw in lines:
        row = None
        if decode is not None:
            try:
                row = decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError):
                row = None
        if row is None:
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                _malformed(stats, lineno)
                continue
            if not isinstance(obj, dict):
                stats.not_object += 1
                _malformed(stats, lineno)
                continue
            if detect_shape(obj) in (V1_TRACES, V1_VALIDATE):
                stats.other_shape_rows += 1
                continue
            stats.fallback_rows += 1
            row = msgspec.convert(obj, row_type) if row_type is not None else _Row(obj)
        example = _example_of(row)
        reward, issue = _reward_value(row.reward)
        scores: dict[str, float] = {}
        metrics = row.metrics if isinstance(row.metrics, dict) else {}
        for attr, name in extra_attrs:
            v = metrics.get(name, _MISSING)
            if _missing(v):
                v = getattr(row, attr)
            if not _missing(v):
                x = _number(v)
                if x is not None:
                    scores[name] = x
        completion = row.completion
        chars, calls = completion_size(None if _missing(completion) else completion)
        truncated = row.is_truncated is True or row.stop_condition in ("length", "max_tokens", "max_tokens_reached")
        yield Rollout(
            example=example,
            reward=reward,
            reward_issue=issue,
            scores=scores,
            weights=None,
            metrics={},
            error=_error_text(row.error),
            truncated=truncated,
            completion_chars=chars,
            tool_calls=calls,
            row_key=_rollout_key(example, row.timing) if timed else _line_key(raw),
            prompt_key=(_prompt_key(None if _missing(row.prompt) else row.prompt) if want_prompt else None),
            line=lineno,
        )


# -- v1 traces ---------------------------------------------------------------------

if msgspec is not None:

    class _V1Node(msgspec.Struct):
        message: Any = None
        sampled: bool = False

    class _V1Call(msgspec.Struct):
        finish_reason: Any = None
        error: Any = None

    class _V1Agent(msgspec.Struct):
        name: Any = None
        trainable: Any = True

    class _V1Trace(msgspec.Struct):
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

    class _V1Task(msgspec.Struct):
        key: Any = None
        hash: Any = None
        data: Any = None

    class _V1Episode(msgspec.Struct):
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
_V1_TRUNCATING = frozenset({"max_turns", "max_input_tokens", "max_output_tokens", "max_total_tokens",
                            "compaction_failed"})


def _iter_v1(source: EvalSource, stats: ReadStats) -> Iterator[Rollout]:
    decode = msgspec.json.Decoder(_V1Episode).decode if msgspec is not None else None
    for lineno, raw in _lines(source.path, stats):
        episode = None
        if decode is not None:
            try:
                episode = decode(raw)
            except (msgspec.DecodeError, msgspec.ValidationError):
                episode = None
        if episode is None:
            try:
                episode = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                _malformed(stats, lineno)
                continue
            if not isinstance(episode, dict):
                _malformed(stats, lineno)
                continue
            if detect_shape(episode) != V1_TRACES:
                stats.other_shape_rows += 1
                continue
            stats.fallback_rows += 1
        stats.episodes += 1
        task = _get(episode, "task")
        data = _get(task, "data")
        example = _get(task, "key") or _get(task, "hash") or _get(data, "idx") or _get(data, "id")
        if isinstance(example, (list, dict)):
            example = json.dumps(example, sort_keys=True)
        traces = _get(episode, "traces") or []
        episode_error = _error_text(_get(episode, "errors"))
        if not traces:
            stats.episodes_without_traces += 1
            # The task was dispatched but no trace came back: an errored rollout without a reward.
            yield Rollout(example, None, "missing", {}, None, {}, episode_error or "episode produced no trace",
                          bool(_get(episode, "is_timeout")), None, 0, hash(str(_get(episode, "id"))), None, lineno)
            continue
        for trace in traces:
            agent = _get(trace, "agent")
            if agent is not None and _get(agent, "trainable", True) is False:
                continue  # judges and other frozen agents do not train
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
                score = _number(rw.get("score")) if isinstance(rw, dict) else None
                weight = _number(rw.get("weight", 1.0)) if isinstance(rw, dict) else None
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
            metrics = {}
            raw_metrics = _get(trace, "metrics") or {}
            for name, value in raw_metrics.items() if isinstance(raw_metrics, dict) else ():
                x = _number(value)
                if x is not None:
                    metrics[name] = x
            chars = calls = 0
            for node in _get(trace, "nodes") or []:
                if not _get(node, "sampled", False):
                    continue
                message = _get(node, "message") or {}
                chars += _text_length(_get(message, "content"))
                tc = _get(message, "tool_calls")
                if tc:
                    calls += len(tc) if isinstance(tc, list) else 1
            stop = _get(trace, "stop_condition")
            truncated = stop in _V1_TRUNCATING
            if not truncated:
                last = next((c for c in reversed(_get(trace, "calls") or []) if _get(c, "error") is None), None)
                truncated = bool(last is not None and _get(last, "finish_reason") == "length")
            error = _error_text(_get(trace, "errors")) or episode_error
            if error is None and _get(trace, "ok") is False:
                error = f"trace not ok (stop condition: {stop})"
            yield Rollout(example, reward, issue, scores, weights, metrics, error, truncated, chars, calls,
                          hash(str(_get(trace, "id") or _get(episode, "id") or raw)), None, lineno)


# -- vf-validate -------------------------------------------------------------------


def read_validate_rows(source: EvalSource, stats: ReadStats | None = None) -> list[dict]:
    """The per-task rows of a vf-validate results.jsonl (one per task; small)."""
    stats = stats if stats is not None else ReadStats()
    rows = []
    for lineno, raw in _lines(source.path, stats):
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            _malformed(stats, lineno)
            continue
        if not isinstance(obj, dict) or detect_shape(obj) != V1_VALIDATE:
            stats.other_shape_rows += 1
            continue
        rows.append(obj)
    return rows


# -- the fast column path for classic shapes ------------------------------------------
#
# 1,000,000-row results files are common. Row-by-row normalisation costs more than the
# decoding, so classic rows are decoded a chunk at a time (msgspec decode_lines into
# structs that name only the needed fields) and turned into columns with comprehensions.
# A chunk that does not fit (a NaN literal, a malformed line, a blank line, a missing
# flattened metric, odd types) is read by the reference row path above instead, so both
# paths give the same figures (tests compare them).

_CLASSIC_TRUNCATING = ("length", "max_tokens", "max_tokens_reached")


@dataclass
class ClassicBatch:
    example: list
    reward: list  # floats, None where unusable (see issues)
    issues: list[tuple[int, str]]
    error: list
    truncated: list
    chars: list
    tool_calls: list
    row_key: list
    prompt_key: list | None
    scores: dict[str, list]
    first_line: int


if msgspec is not None:

    class _Msg(msgspec.Struct):
        role: Any = "assistant"
        content: Any = None
        tool_calls: Any = None

    class _Timing(msgspec.Struct):
        start_time: Any = None


def _fast_struct(names: list[str], with_prompt: bool, with_timing: bool):
    fields = [("example_id", Any, _MISSING_MS), ("id", Any, _MISSING_MS), ("reward", Any, _MISSING_MS),
              ("error", Any, None), ("is_truncated", Any, None), ("stop_condition", Any, None),
              ("completion", list[_Msg] | str | None, None)]
    if with_timing:
        fields.append(("timing", _Timing | None, None))
    if with_prompt:
        fields.append(("prompt", Any, _MISSING_MS))
    rename = {f[0]: f[0] for f in fields}
    for i, name in enumerate(names):
        fields.append((f"x{i}", Any, _MISSING_MS))
        rename[f"x{i}"] = name
    return msgspec.defstruct("ClassicFastRow", fields, rename=rename)


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
        chars += len(c.strip()) if type(c) is str else _text_length(c)
        tc = m.tool_calls
        if tc:
            calls += len(tc) if isinstance(tc, list) else 1
    return chars, calls


def _score_value(v: Any) -> float:
    if type(v) is float:
        return v
    x = _number(v)
    return math.nan if x is None else x


def _example_of(row: Any) -> Any:
    ex = row.example_id
    if _missing(ex) or ex is None:
        ex = row.id
        if _missing(ex):
            return None
    if isinstance(ex, (list, dict)):
        return json.dumps(ex, sort_keys=True)
    return ex


def _only(values: list, *types: type) -> bool:
    """All values are of exactly these types (a C-speed scan)."""
    return set(map(type, values)) <= set(types)


def _completion_sizes(completions: list) -> tuple[list, list]:
    """(chars, tool calls) per row, as _msgs_size, computed over all messages at once."""
    if not _only(completions, list):
        sizes = [_msgs_size(c) for c in completions]
        return [c for c, _ in sizes], [t for _, t in sizes]
    from itertools import accumulate, chain

    msgs = list(chain.from_iterable(completions))
    contents = [m.content for m in msgs]
    if _only(contents, str):
        lengths = list(map(len, map(str.strip, contents)))
    else:
        lengths = [len(c.strip()) if type(c) is str else _text_length(c) for c in contents]
    tcs = [m.tool_calls for m in msgs]
    calls = [0] * len(msgs) if tcs.count(None) == len(tcs) else \
        [(len(t) if isinstance(t, list) else 1) if t else 0 for t in tcs]
    roles = [m.role for m in msgs]
    if roles.count("assistant") != len(roles):
        lengths = [n if r == "assistant" else 0 for n, r in zip(lengths, roles)]
        calls = [n if r == "assistant" else 0 for n, r in zip(calls, roles)]
    ends = list(accumulate(map(len, completions)))
    starts = [0, *ends[:-1]]
    if len(msgs) == len(completions):  # one message per row: the common single-turn case
        return lengths, calls
    return ([sum(lengths[a:b]) for a, b in zip(starts, ends)], [sum(calls[a:b]) for a, b in zip(starts, ends)])


def _fast_batch(rows: list, lines: list[bytes] | None, first: int, names: list[str],
                want_prompt: bool) -> ClassicBatch | None:
    from operator import attrgetter

    scores = {}
    for i, name in enumerate(names):
        values = list(map(attrgetter(f"x{i}"), rows))
        if _MISSING_MS in values:
            return None  # the row may carry it only in metrics{}: the reference path reads both
        scores[name] = values if _only(values, float) else [_score_value(v) for v in values]
    example = list(map(attrgetter("example_id"), rows))
    if not _only(example, int, str):
        example = [_example_of(r) for r in rows]
    reward = list(map(attrgetter("reward"), rows))
    issues: list[tuple[int, str]] = []
    if not _only(reward, float):
        fixed = []
        for i, v in enumerate(reward):
            x, issue = _reward_value(v)
            fixed.append(x)
            if issue is not None:
                issues.append((i, issue))
        reward = fixed
    error = list(map(attrgetter("error"), rows))
    if error.count(None) != len(error):
        error = [None if e is None else _error_text(e) for e in error]
    truncated = list(map(attrgetter("is_truncated"), rows))
    if truncated.count(False) != len(truncated):
        truncated = [t is True for t in truncated]
    stops = set(map(attrgetter("stop_condition"), rows))
    if stops & set(_CLASSIC_TRUNCATING):
        truncated = [t or r.stop_condition in _CLASSIC_TRUNCATING for t, r in zip(truncated, rows)]
    chars, calls = _completion_sizes(list(map(attrgetter("completion"), rows)))
    if lines is None:  # 0.3.x: a rollout is identified by its example and start time (as _rollout_key)
        timings = list(map(attrgetter("timing"), rows))
        starts = [None] * len(rows) if None in timings else list(map(attrgetter("start_time"), timings))
        keys = list(map(hash, zip(example, starts)))
    else:
        keys = list(map(hash, lines))  # lines come without their newline
    return ClassicBatch(
        example=example, reward=reward, issues=issues, error=error, truncated=truncated,
        chars=chars, tool_calls=calls, row_key=keys,
        prompt_key=[_prompt_key(None if _missing(r.prompt) else r.prompt) for r in rows] if want_prompt else None,
        scores=scores, first_line=first,
    )


def split_ranges(path: Path, parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of a file, each starting at a line start and ending after a newline."""
    size = path.stat().st_size
    cuts = [0]
    with path.open("rb") as f:
        for i in range(1, parts):
            f.seek(max(cuts[-1], size * i // parts))
            f.readline()  # move to the next line start
            pos = f.tell()
            if pos >= size:
                break
            if pos > cuts[-1]:
                cuts.append(pos)
    cuts.append(size)
    return list(zip(cuts[:-1], cuts[1:]))


def iter_classic_batches(source: EvalSource, stats: ReadStats, chunk_bytes: int = 1 << 23,
                         byte_range: tuple[int, int] | None = None) -> Iterator[ClassicBatch | list[Rollout]]:
    """Classic rows as column batches (fast path), or as Rollout lists for chunks the fast
    path does not take. Needs msgspec; callers without it use iter_rollouts. With
    ``byte_range`` (from split_ranges) only that part is read; line numbers then count
    from the start of the range."""
    timed = source.shape == CLASSIC and source.rollout_identity
    want_prompt = source.shape != CLASSIC
    names = source.score_names
    decoder = msgspec.json.Decoder(_fast_struct(names, want_prompt, timed))
    lineno = 0
    start, end = byte_range if byte_range is not None else (0, None)
    with source.path.open("rb") as f:
        f.seek(start)
        pos = start
        while True:
            want = chunk_bytes if end is None else min(chunk_bytes, end - pos)
            buf = f.read(want) if want > 0 else b""
            if not buf:
                break
            pos += len(buf)
            if not buf.endswith(b"\n"):
                tail = f.readline()  # finish the last line of the chunk
                pos += len(tail)
                buf += tail
            n_lines = buf.count(b"\n")
            if not buf.endswith(b"\n"):
                n_lines += 1
                stats.no_final_newline = True  # only the file's last line can lack it
            first = lineno + 1
            lineno += n_lines
            stats.lines = lineno
            lines = None if timed else _split(buf)
            batch = None
            try:
                rows = decoder.decode_lines(buf)
                if len(rows) == n_lines:  # no blank line: row i is line first + i
                    batch = _fast_batch(rows, lines, first, names, want_prompt)
            except (msgspec.DecodeError, msgspec.ValidationError):
                batch = None
            if batch is not None:
                yield batch
                continue
            lines = lines if lines is not None else _split(buf)
            yield list(_classic_rollouts(source, _numbered(lines, first, stats), stats))


def _split(buf: bytes) -> list[bytes]:
    lines = buf.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def _numbered(lines: list[bytes], first: int, stats: ReadStats) -> Iterator[tuple[int, bytes]]:
    for i, raw in enumerate(lines):
        if not raw.strip():
            stats.blank += 1
            continue
        yield first + i, raw
