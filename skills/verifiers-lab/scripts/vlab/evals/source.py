"""Where the eval results are and what shape they have.

``locate()`` turns a file, a run folder or nothing (newest run under ./outputs) into an
``EvalSource`` that names its shape and carries the run's own metadata (``RunMetadata``).

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
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlab.core.files import bounded_lines, open_binary
from vlab.core.result import UsageError

CLASSIC = "classic-vf-eval"
CLASSIC_2025 = "classic-vf-eval-2025"
V1_TRACES = "v1-traces"
V1_VALIDATE = "v1-validate"
PLAIN = "plain-jsonl"


def eval_command(shape: str | None, examples: int = 50, rollouts: int = 4) -> str:
    """The vf-eval command that writes a file of this shape again, larger: v1 traces come from verifiers 0.4's
    vf-eval (offline flags as SKILL.md gives them; its `-s` means shuffle), the rest from 0.3's (`-s` saves)."""
    if shape in (V1_TRACES, V1_VALIDATE):
        offline = "--no-push --env.agent.runtime.type subprocess --env.agent.harness.id null"
        return f"vf-eval TASKSET {offline} -n {examples} -r {rollouts}"
    return f"vf-eval ENV -n {examples} -r {rollouts} -s"


def max_tokens_flag(shape: str | None) -> str:
    """vf-eval's max-tokens option for the generation that wrote this shape (0.4: --sampling.max-tokens)."""
    return "--sampling.max-tokens" if shape in (V1_TRACES, V1_VALIDATE) else "-t"


CLASSIC_FAMILY = (CLASSIC, CLASSIC_2025, PLAIN)  # one row reader and one column reader serve these

SHAPES = {
    CLASSIC: "classic vf-eval results (verifiers 0.3.x: example_id, metrics{}, timing{}, metadata.json)",
    CLASSIC_2025: "classic vf-eval results from 2025 (id/example_id, metrics flattened, generation_ms)",
    V1_TRACES: "v1 vf-eval traces.jsonl (verifiers 0.4: episodes, rewards{name:{score,weight}})",
    V1_VALIDATE: "v1 vf-validate results (model-free gold/noop checks, no model rollouts)",
    PLAIN: "plain JSON Lines of {example_id, reward, ...}",
}

RESULT_FILES = ("results.jsonl", "traces.jsonl", "results.jsonl.gz", "traces.jsonl.gz")
# Metadata a run folder may hold, per shape family (first found wins).
METADATA_FILES = ("metadata.json", "summary.json", "configs/resolved/eval.json")

# Top-level fields that are never a flattened metric.
_CORE_FIELDS = frozenset(
    {
        "id",
        "example_id",
        "reward",
        "prompt",
        "completion",
        "answer",
        "task",
        "info",
        "error",
        "error_chain",
        "long_error_chain",
        "timing",
        "is_completed",
        "is_truncated",
        "stop_condition",
        "metrics",
        "tool_defs",
        "token_usage",
        "generation_ms",
        "scoring_ms",
        "total_ms",
        "oai_tools",
        "responses",
        "state",
        "trajectory",
    }
)
_DETECT_ROWS = 50  # rows parsed in full to decide the shape and find flattened metrics


@dataclass(frozen=True)
class RunMetadata:
    """What the run's own metadata file says, normalised across writers; None where it says nothing.

    ``metadata.json`` (0.3.x) gives env, model, num_examples, rollouts_per_example, avg_reward,
    pass_at_k, pass_threshold, max_tokens, verifiers; ``summary.json`` (vf-validate) total,
    outcomes, checks, mode, valid_rate; the v1 resolved eval config env, model, num_examples,
    rollouts_per_example, max_tokens."""

    file: str | None = None  # the metadata file read (None: none was)
    env: Any = None
    model: Any = None
    num_examples: Any = None
    rollouts_per_example: Any = None
    avg_reward: Any = None
    pass_at_k: Any = None
    pass_threshold: Any = None
    max_tokens: Any = None
    verifiers: Any = None
    total: Any = None
    outcomes: Any = None
    checks: Any = None
    mode: Any = None
    valid_rate: Any = None

    def to_data(self) -> dict[str, Any]:
        """The fields the file gave, in the order above (the JSON boundary)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is not None:
                out[f.name] = value
        return out


@dataclass(frozen=True)
class EvalSource:
    path: Path  # the JSONL file read
    shape: str
    folder: Path
    metadata: RunMetadata = RunMetadata()
    metadata_error: str | None = None
    found_by: str = "argument"  # argument | search
    other_runs: int = 0  # newer-or-older runs also found by the search
    # Per-function score names (classic): from the first rows' metrics{} and flattened numbers.
    score_names: tuple[str, ...] = ()
    # Each rollout carries its own id (v1) or start time (0.3.x timing), so identical rows are copies.
    rollout_identity: bool = False

    @property
    def description(self) -> str:
        return SHAPES[self.shape]


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


def _found_by_search(files: list[Path]) -> EvalSource:
    return dataclasses.replace(_source_for_file(_newest(files)), found_by="search", other_runs=len(files) - 1)


def locate(results: str | os.PathLike | None, search_dirs: list | tuple | None = None) -> EvalSource:
    """Resolve the results to read; raise UsageError (exit 2) with a clear reason when there are none."""
    if results is None:
        dirs = [Path(d) for d in search_dirs] if search_dirs else default_search_dirs()
        files = [f for d in dirs if d.is_dir() for f in _result_files_under(d)]
        if not files:
            where = ", ".join(str(d) for d in dirs) or "./outputs"
            raise UsageError(
                f"no eval results found under {where}",
                hint=f"run an eval that saves results (classic: `{eval_command(CLASSIC)}`; v1: `{eval_command(V1_TRACES)}`), "
                "or pass --results PATH",
            )
        return _found_by_search(files)
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
        top = sorted(p for p in [*path.glob("*.jsonl"), *path.glob("*.jsonl.gz")] if p.is_file())
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
        return _found_by_search(nested)
    return _source_for_file(top[0])


def _source_for_file(path: Path) -> EvalSource:
    if path.stat().st_size == 0:
        raise UsageError(
            f"{path} is empty: no rollouts to read",
            hint="the eval wrote nothing; re-run it and check its log for errors",
        )
    rows = _first_rows(path, _DETECT_ROWS)
    if not rows:
        raise UsageError(
            f"{path} has no readable JSON object rows",
            hint="is this a results JSONL file? each line must be one JSON object",
        )
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
    families = {CLASSIC if s in CLASSIC_FAMILY else s for s in known}
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
    identity = shape == V1_TRACES or (
        shape == CLASSIC
        and all(isinstance(r.get("timing"), dict) and r["timing"].get("start_time") is not None for r in rows)
    )
    metadata, metadata_error = read_metadata(path.parent)
    return EvalSource(
        path=path,
        shape=shape,
        folder=path.parent,
        metadata=metadata,
        metadata_error=metadata_error,
        score_names=_score_names(rows) if shape in CLASSIC_FAMILY else (),
        rollout_identity=identity,
    )


def _first_rows(path: Path, n: int) -> list[dict]:
    rows = []
    with open_binary(path) as f:
        for raw in bounded_lines(f):
            if len(rows) >= n:
                break
            if raw is None or not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (ValueError, UnicodeDecodeError, RecursionError):
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


def _score_names(rows: list[dict]) -> tuple[str, ...]:
    names: dict[str, None] = {}
    for row in rows:
        if isinstance(row.get("metrics"), dict):
            for key, value in row["metrics"].items():
                if _is_number(value):
                    names[key] = None
        for key, value in row.items():
            if key not in _CORE_FIELDS and _is_number(value):
                names[key] = None
    return tuple(names)


# -- metadata ----------------------------------------------------------------------


def read_metadata(folder: Path) -> tuple[RunMetadata, str | None]:
    """The run's own metadata (first of METADATA_FILES found in ``folder``), and why it could
    not be read (None when it could, or when there is none)."""
    for name in METADATA_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError) as err:
            return RunMetadata(), f"{name} is unreadable ({err.__class__.__name__})"
        if not isinstance(raw, dict):
            return RunMetadata(), f"{name} is not a JSON object"
        return _normalise_metadata(name, raw), None
    return RunMetadata(), None


def _normalise_metadata(name: str, raw: dict) -> RunMetadata:
    if name == "metadata.json":
        sampling = raw.get("sampling_args") if isinstance(raw.get("sampling_args"), dict) else {}
        return RunMetadata(
            file=name,
            env=raw.get("env_id") or raw.get("env"),
            model=raw.get("model"),
            num_examples=raw.get("num_examples"),
            rollouts_per_example=raw.get("rollouts_per_example"),
            avg_reward=raw.get("avg_reward"),
            pass_at_k=raw.get("pass_at_k"),
            pass_threshold=raw.get("pass_threshold"),
            max_tokens=sampling.get("max_tokens"),
            verifiers=(raw.get("version_info") or {}).get("vf_version")
            if isinstance(raw.get("version_info"), dict)
            else None,
        )
    if name == "summary.json":
        return RunMetadata(
            file=name,
            total=raw.get("total"),
            outcomes=raw.get("outcomes"),
            checks=raw.get("checks"),
            mode=raw.get("mode"),
            valid_rate=raw.get("valid_rate"),
        )
    # v1 resolved eval config
    env = raw.get("env") if isinstance(raw.get("env"), dict) else {}
    taskset = env.get("taskset") if isinstance(env.get("taskset"), dict) else {}
    select = raw.get("select") if isinstance(raw.get("select"), dict) else {}
    sampling = raw.get("sampling") if isinstance(raw.get("sampling"), dict) else {}
    return RunMetadata(
        file=name,
        env=taskset.get("id") or env.get("id"),
        model=raw.get("model"),
        num_examples=select.get("limit"),
        rollouts_per_example=raw.get("num_rollouts"),
        max_tokens=sampling.get("max_tokens"),
    )
