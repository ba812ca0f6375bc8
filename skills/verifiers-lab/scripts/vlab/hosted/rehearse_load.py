"""The rehearsal's load and score step (see ``vlab.hosted.rehearse``): the taskset loaded by its
installed module in a worker of the throwaway venv (``vlab.env.remote``), from an empty folder, with
the config's exact arguments; the gold of the first N rows scored through the installed rewards.
Each load failure becomes the check that names its fix."""

from __future__ import annotations

import contextlib
import json
import re
import tempfile
from pathlib import Path

import vlab
from vlab.core.result import Check, ToolError
from vlab.hosted.rehearse_common import SCORE_TIMEOUT, RehearseOptions, Source, _check, gold_check, module_name
from vlab.hosted.rehearse_data import _DATASET_KEY, hub_dataset, names_file

# Modules whose distribution has another name (the fix names the distribution to declare).
DISTRIBUTIONS = {
    "yaml": "pyyaml",
    "sklearn": "scikit-learn",
    "PIL": "pillow",
    "cv2": "opencv-python",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "Levenshtein": "levenshtein",
}


def dependency_for(module: str) -> str:
    """The distribution that provides ``module``: as this machine knows it, else the usual name."""
    import importlib.metadata as md

    top = module.split(".")[0]
    try:
        dists = md.packages_distributions().get(top) or []
    except Exception:  # noqa: BLE001 - another package's broken metadata
        dists = []
    return dists[0] if dists else DISTRIBUTIONS.get(top, top)


# -- 3. load and 4. score, in the throwaway venv ------------------------------------------------------


def _load_failure(src: Source, err: ToolError, names_data: bool, online: bool) -> Check:
    """One load error as the check that names its fix."""
    from vlab.core.result import ExternalError

    msg = err.message
    named = f"{src.where} ({src.env_id})"
    missing = re.search(r"needs the package '([^']+)'", msg) or re.search(r"No module named '([^'.]+)", msg)
    if missing:
        mod = missing.group(1)
        dep = dependency_for(mod)
        return _check(
            "fail",
            f"{named}: the installed package imports {mod!r}, which its pyproject.toml does not declare "
            "(the run installs only the wheel's Requires-Dist)",
            f'add "{dep}" to [project] dependencies in pyproject.toml, then re-run',
            id="rehearse-import",
        )
    if isinstance(err, ExternalError):
        return _check(
            "warn",
            f"{named}: loading needs the network and could not reach it, so the load was not tried to the end: {msg[:300]}",
            "re-run with network access (the hosted run reads the Hub itself), or ship the data in the package",
            id="rehearse-load",
        )
    if not names_data:
        return _check(
            "fail",
            f"{named}: no dataset argument, and the taskset has no default: loading with {src.args or 'no arguments'} "
            f"fails: {msg[:300]}",
            'name the data in the config: dataset_path = "train.jsonl" (a file in the package\'s data/ folder, '
            'shipped in the wheel) or dataset_name = "OWNER/DATASET" (a Hub dataset), e.g. '
            "--env-arg dataset_path='\"train.jsonl\"'",
            id="rehearse-dataset",
        )
    if "DatasetGenerationError" in msg:  # datasets' bare words name neither the file nor the cause
        files = [f"{k}={v!r}" for k, v in src.args.items() if isinstance(v, str) and names_file(k, v)]
        return _check(
            "fail",
            f"{named}: datasets could not read the data file {', '.join(files) or '(the one the loader opens)'}: "
            "its content does not parse as its extension says, or a row is malformed (DatasetGenerationError)",
            "keep the data's own format and extension (a CSV is train.csv, JSON lines train.jsonl) and pass that "
            "name as dataset_path; check the file with inspect_dataset, then re-run",
            id="rehearse-data",
        )
    return _check(
        "fail",
        f"{named}: the installed package fails to load with the config's arguments: {msg[:400]}",
        (err.hint or "fix the environment's loading code") + " (the load ran from an empty folder, as on the runner)",
        id="rehearse-load",
    )


def _gold_templates(hints) -> list[str]:
    from vlab.reward import probes as rp

    out = [t for _, t in rp.gold_templates(hints, None)]
    for t in ("\\boxed{{answer}}", "{answer}", "<answer>{answer}</answer>", "Answer: {answer}"):
        if t not in out:
            out.append(t)
    return out


def score_gold(env, rows: list, timeout: float) -> dict:
    """The best score the gold earns on each row over the environment's formats: {index: (gold, best)}."""
    from vlab.kinds import row_kind
    from vlab.reward import probes as rp
    from vlab.reward.dataset import reach_probes

    templates = _gold_templates(env.format_hints())
    items, owners, golds = [], [], {}
    for row in rows:
        gold = rp.gold_value(row.answer)
        if gold is None:
            continue
        golds[row.index] = gold
        kind = row_kind(row, gold)
        for template in templates:
            for probe in reach_probes(row, gold, kind, template):
                items.append((row, probe.text))
                owners.append(row.index)
    best: dict[int, float | None] = dict.fromkeys(golds)
    for index, score in zip(owners, env.score_sync(items, timeout, 16) if items else []):
        v = score.total
        if isinstance(v, (int, float)) and v == v and (best[index] is None or v > best[index]):
            best[index] = float(v)
    return {i: (golds[i], best[i]) for i in golds}


def offered_tools(env, row) -> list[dict] | None:
    """The tool definitions the model is offered, as one rollout's first request carries them (the model
    answers "ok"); None when that rollout could not run."""
    from vlab.env.types import Reply

    captured: list[list[dict]] = []

    def capture(messages, sampling_args, tools=None):
        captured.append(list(tools or []))
        return Reply(text="ok")

    try:
        env.rollout_sync(row, capture, timeout=SCORE_TIMEOUT)
    except ToolError:
        return None
    return captured[0] if captured else None


def size_rollout(env, rows: list) -> dict:
    """What the token budget reads of the loaded environment: its turn limit as loaded with the config's
    arguments, whether it takes several turns, and its longest prompt (the offered tools included) in tokens."""
    from vlab.reward.budget import prompt_tokens, token_counter

    caps = env.capabilities
    tools = offered_tools(env, rows[0]) if caps.tools and rows else []
    count, counted_by = token_counter(None)
    return {
        "multi_turn": bool(caps.multi_turn or caps.tools),
        "max_turns": caps.max_turns,
        "prompt_tokens": prompt_tokens([r.prompt for r in rows], tools or [], count),
        "tools_counted": tools is not None,
        "counted_by": counted_by,
    }


def split_evidence(rows: list) -> list[tuple[str, str]]:
    """[(split, evidence)] the loaded rows give of a test or dev split: their ids, a ``split`` column."""
    from vlab.inspect.splits import ids_like_test_split, split_column
    from vlab.kinds.rows import row_fields

    records = [row_fields(r) for r in rows]
    out = []
    ids = ids_like_test_split(records)
    if ids:
        column, hits, n, example = ids
        out.append(("test", f"{hits}/{n} rehearsed rows' {column!r} ids start like a test split's, e.g. {example!r}"))
    column = split_column(records)
    if column:
        out.append((column[0], f"the rehearsed rows' 'split' column reads {column[0]} in {column[1]}/{column[2]}"))
    return out


def data_file_records(args: dict, folder: str | None, limit: int = 500) -> list[dict]:
    """The first records of the data file the arguments name, looked up as the templates do (the path as given
    from the current folder, else in the environment's data/ folder or beside its module); [] when none reads."""
    from vlab.core.result import UsageError
    from vlab.inspect.readers import read_file

    for key, value in args.items():
        if not isinstance(value, str) or not names_file(key, value):
            continue
        given = Path(value).expanduser()
        places = [given] if given.is_absolute() else [Path.cwd() / given]
        if folder and not given.is_absolute():
            inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
            places += [Path(folder) / "data" / inside, Path(folder) / given]
        for place in places:
            if place.is_file():
                try:
                    return read_file(place, limit).rows
                except (UsageError, OSError, ValueError):
                    return []
    return []


def references(src: Source, rows: list, folder: str | None) -> dict | None:
    """The completion budget the data's references need (``inspect.references``): the rehearsed rows' own fields and
    golds, else the data file the arguments name (a loader keeps only what it uses: no worked solution)."""
    from vlab.inspect.references import completion_budget
    from vlab.kinds.rows import row_fields

    budget = completion_budget([row_fields(r) for r in rows], [r.answer for r in rows])
    if budget is None:
        records = data_file_records(src.args, folder)
        budget = completion_budget(records) if records else None
    return budget.to_dict() if budget else None


def load_and_score(src: Source, python: Path, options: RehearseOptions, out: dict, judge=None) -> list[Check]:
    """``judge``: a judge environment's ``rehearse_judge.JudgePlan``: scored against the stub judge."""
    from vlab.env.remote import _SCRIPTS, RemoteEnvironment
    from vlab.hosted import rehearse_judge

    module = module_name(src.env_id)
    named = f"{src.where} ({src.env_id})"
    hub = hub_dataset(src.args)
    if hub and not options.online:
        out["loaded"] = False
        return [
            _check(
                "warn",
                f"{named}: reads the Hub dataset {hub!r}; offline, the load was not tried (nothing is known about "
                "whether the run can load it)",
                "re-run without --offline to rehearse the load, or ship the data in the package",
                id="rehearse-load",
            )
        ]
    environ = {
        "PYTHONPATH": _SCRIPTS,  # the pack's worker only: nothing of the user's project
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "",  # the cached venv keeps its bytecode: under vlab's cache, never the skill folder
        "PYTHONPYCACHEPREFIX": vlab.PYCACHE_PREFIX,
        "VIRTUAL_ENV": str(python.parent.parent),
    }
    if not options.online:
        environ.update({"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    names_data = any(_DATASET_KEY.search(k) for k in src.args)
    with contextlib.ExitStack() as stack:
        empty = stack.enter_context(tempfile.TemporaryDirectory(prefix="vlab-rehearse-cwd-"))
        server, args = stack.enter_context(rehearse_judge.stub_judge(src, judge)) if judge else (None, src.args)
        try:
            env = RemoteEnvironment(module, args, options.load_timeout, python=str(python), cwd=empty, environ=environ)
        except ToolError as err:
            out["loaded"] = False
            return [_load_failure(src, err, names_data, options.online)]
        try:
            n = env.num_rows()
            out.update({"loaded": True, "rows": n, "verifiers": env.verifiers_version})
            if n == 0:
                return [_check("fail", f"{named}: the taskset loaded no rows", id="rehearse-load")]
            checks = [
                _check(
                    "pass",
                    f"{named}: loaded {n} rows from the installed package ({module}, verifiers "
                    f"{env.verifiers_version}) in an empty folder with {json.dumps(src.args)}"
                    + (", its judge arguments pointed at the loopback stub judge" if judge else ""),
                    id="rehearse-load",
                )
            ]
            rows = env.rows(options.rows)
            if server is not None:  # first, alone: the judge calls one scored rollout makes
                out["judge"] = rehearse_judge.measure(env, rows, server, SCORE_TIMEOUT)
            scored = score_gold(env, rows, SCORE_TIMEOUT)
            out["gold"] = {str(i): b for i, (_, b) in scored.items()}
            weights = [f.weight for f in env.reward_functions if not f.is_group]
            full = sum(w for w in weights if w > 0) if weights else None
            names = [f.name for f in env.reward_functions]
            if server is not None:
                folder = out.get("folder")
                checks.append(rehearse_judge.gold_check(src, scored, len(rows), names, full, out["judge"], folder))
            else:
                checks.append(gold_check(src, scored, len(rows), names, full))
            out["rollout"] = size_rollout(env, rows)  # last: the token budget's numbers (``hosted.tokens``)
            out["rollout"]["references"] = references(src, rows, out.get("folder"))
            out["split_evidence"] = split_evidence(rows)
            return checks
        except ToolError as err:
            return [_check("fail", f"{named}: scoring in the installed package failed: {err.message}", err.hint)]
        finally:
            env.close()
