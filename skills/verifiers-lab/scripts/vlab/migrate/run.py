"""migrate_env: the request, the entry point and the proof.

Steps: read the classic module (static pass), load it under this python's verifiers 0.3.x (what
``load_environment`` built), list what cannot be carried (exit 1, nothing written unless
``partial``), write the v1 package, then prove it: the same probe completions
(``vlab.reward.probes``: gold, gold in other formats, wrong, malformed, hacking) are scored
through the classic environment here and through the new taskset in a verifiers >= 0.4 python
(``score_v1`` in a subprocess), and every row's prompt and answer, every total and every
function's score must be equal.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from vlab.core.console import log
from vlab.core.files import write_atomic
from vlab.core.installed import run_command, verifiers_info, version_tuple
from vlab.core.invocation import command
from vlab.core.result import PrerequisiteError, Result, ToolError, UsageError
from vlab.migrate import analyse, emit

V1_PYTHON_ENV = "VLAB_V1_PYTHON"
V1_VENV_HINT = 'python3.11 -m venv .venv-v1 && .venv-v1/bin/pip install "verifiers>=0.4" datasets'
# Where a verifiers >= 0.4 python is looked for, relative to the current folder and the pack's checkout.
V1_CANDIDATES = (".venv/vf040/bin/python", ".venv-v1/bin/python", ".venv/v1/bin/python")
SCRIPTS_DIR = Path(__file__).resolve().parents[2]  # the folder holding vlab/, put on the child's PYTHONPATH
PROBE_ROWS = 6
TOLERANCE = 1e-9


@dataclass(frozen=True)
class MigrateRequest:
    env: str  # the classic module file or its package folder
    env_args: dict = field(default_factory=dict)
    name: str | None = None  # the new package's name (default: <classic module>_v1)
    path: str | None = None  # where the package folder goes (default: next to the classic package)
    v1_python: str | None = None
    rows: int = PROBE_ROWS
    force: bool = False
    partial: bool = False
    timeout: float = 600.0  # seconds for the v1 side

    def __post_init__(self) -> None:
        if not self.env:
            raise UsageError(
                "name the classic environment: its module file or package folder", hint="e.g. environments/my_env"
            )
        if isinstance(self.env_args, str):
            try:
                parsed = json.loads(self.env_args)
            except ValueError as err:
                raise UsageError(
                    f"--env-args is not JSON: {err}", hint='e.g. --env-args \'{"dataset_path": "data.jsonl"}\''
                ) from err
            if not isinstance(parsed, dict):
                raise UsageError("--env-args must be a JSON object")
            object.__setattr__(self, "env_args", parsed)
        if self.rows < 1:
            raise UsageError("--rows must be at least 1")
        if not self.timeout > 0:
            raise UsageError("--timeout must be more than 0 seconds")
        if self.name is not None and not emit.class_prefix(self.name.replace("-", "_")):
            raise UsageError(f"bad --name {self.name!r}")
        if self.name is not None:
            from vlab.scaffold.create import validate_name

            validate_name(self.name)


def find_v1_python(explicit: str | None) -> tuple[str, str]:
    """(path, verifiers version) of a python with verifiers >= 0.4, or PrerequisiteError (exit 3)."""
    tried: list[str] = []
    named = named_v1_python(explicit)
    if named:
        candidates = [named]
    else:
        candidates = [str(root / c) for root in [Path.cwd(), *SCRIPTS_DIR.parents] for c in V1_CANDIDATES]
    for path in candidates:
        if not Path(path).is_file():
            continue
        version = _verifiers_version(path)
        if version and version_tuple(version) >= (0, 4):
            return path, version
        tried.append(f"{path} (verifiers {version or 'missing'})")
    raise PrerequisiteError(
        "no python with verifiers >= 0.4 found for the v1 side of the proof"
        + (f"; tried {', '.join(tried)}" if tried else ""),
        hint=f"create one: {V1_VENV_HINT}; then pass --v1-python .venv-v1/bin/python (or set {V1_PYTHON_ENV})",
    )


def named_v1_python(explicit: str | None) -> str | None:
    """The v1 python the user named (``--v1-python``, else $VLAB_V1_PYTHON), or None; UsageError (exit 2)
    when that file does not exist."""
    named = explicit or os.environ.get(V1_PYTHON_ENV)
    if named and not Path(named).is_file():
        raise UsageError(f"v1 python not found: {named}", hint=f"pass a python with verifiers >= 0.4 ({V1_VENV_HINT})")
    return named or None


def _verifiers_version(python: str) -> str | None:
    try:
        done = run_command([python, "-c", "import importlib.metadata as m; print(m.version('verifiers'))"], timeout=60)
    except ToolError:  # not runnable, or it did not answer
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def migrate_environment(request: MigrateRequest, result: Result) -> None:
    info = verifiers_info()
    if not info.classic:
        raise PrerequisiteError(
            f"migrate_env reads the classic environment and needs verifiers 0.3.x here (found {info.version or 'none'})",
            hint='run it with a python that has "verifiers==0.3.1"; the v1 side runs in --v1-python',
        )
    static = analyse.read_static(request.env)
    module = (request.name or f"{static.module}_v1").replace("-", "_")
    if module == static.module:
        raise UsageError(f"--name {request.name!r} is the classic module's own name", hint="choose another name")
    out_dir = Path(request.path) if request.path else static.path.parent.parent
    target = out_dir / module
    result.data["classic"] = {"module": static.module, "path": str(static.path), "verifiers": info.version}
    result.data["target"] = str(target)
    if target.exists() and not request.force:
        raise UsageError(
            f"{target} already exists; refusing to overwrite it",
            hint="pass --force to replace its files, or --name/--path",
        )

    named_v1_python(request.v1_python)  # a mistyped path is said at once, not after the classic load

    from vlab.env import load_env

    log(f"loading {static.path.name} under verifiers {info.version}")
    classic = load_env(str(static.path), request.env_args)
    loaded, blockers = analyse.read_loaded(classic.env, static)
    blockers = static.blockers + blockers + _tool_blockers(static, loaded)
    mapping = mapping_table(static, loaded)
    result.data["mapping"] = mapping
    result.data["blockers"] = [b.to_dict() for b in blockers]
    todos = [f"{b.what} ({b.where}): {b.todo}" for b in blockers]
    if blockers:
        for b in blockers:
            result.fail("not_convertible", f"{b.what} ({b.where}) cannot be migrated", f"to do: {b.todo}")
        if not request.partial:
            result.data["files"] = []
            result.skip(
                "proof",
                "nothing written: the environment has parts the migration cannot carry",
                "--partial writes the package with TODO markers",
            )
            return
    if not blockers:  # before writing: an unproven package is never presented as done
        v1_python, v1_version = find_v1_python(request.v1_python)
    files = write_package(static, loaded, target, module, mapping, todos, request.force)
    result.data["files"] = [str(f) for f in files]
    result.data["partial"] = bool(blockers)
    if blockers:
        result.skip("proof", "partial package written with TODO markers; not proven, not usable as it is")
        return
    result.passed("written", f"v1 taskset {module} written to {target} ({len(files)} files)")
    prove(result, classic, loaded, static, target / f"{module}.py", request, v1_python, v1_version)


def _tool_blockers(static: analyse.Static, loaded: analyse.Loaded) -> list[analyse.Blocker]:
    import ast

    names = {n.name for n in ast.parse(static.text).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return [
        analyse.Blocker(
            f"tool {t} is not a module-level function",
            static.path.name,
            "define the tool at module level (the v1 Toolset serves module functions)",
        )
        for t in loaded.tools
        if t not in names
    ]


def mapping_table(static: analyse.Static, loaded: analyse.Loaded) -> list[dict]:
    prefix = emit.class_prefix(static.module + "_v1")
    rows = [
        {
            "classic": f"{static.module}.load_environment(...)",
            "v1": "<Name>Taskset.load() + <Name>Config",
            "note": "exported in __all__; the classic body is carried as classic_load_environment",
        },
        {
            "classic": "dataset rows (question, answer, info, other columns)",
            "v1": "<Name>Data(prompt, system_prompt, answer, info, columns)",
            "note": f"{loaded.rows} rows; columns {loaded.columns}",
        },
    ]
    for p in static.params:
        if p.kind == "var_keyword":
            rows.append({"classic": f"**{p.name}", "v1": "-", "note": "not carried: v1 configs have fixed fields"})
        else:
            rows.append(
                {
                    "classic": f"load_environment({p.name}=)",
                    "v1": f"<Name>Config.{emit.config_field(p.name)}",
                    "note": f"default {p.default}" if p.default else "required",
                }
            )
    rows.append(
        {
            "classic": f"system_prompt ({len(loaded.system_prompt or '')} chars)",
            "v1": "TaskData.system_prompt",
            "note": "verbatim",
        }
    )
    if loaded.few_shot:
        rows.append(
            {
                "classic": f"few_shot ({loaded.few_shot} messages)",
                "v1": "TaskData.prompt (messages before the question)",
                "note": "verbatim",
            }
        )
    rows.append(
        {
            "classic": f"parser {loaded.parser}",
            "v1": f"classic.{loaded.parser} (plain parsing)",
            "note": "same results, no verifiers object",
        }
    )
    for r in loaded.rewards:
        kind = "@vf.metric" if r.weight == 0 else f"@vf.reward(weight={r.weight:g})"
        rows.append(
            {
                "classic": f"reward {r.name} (weight {r.weight:g}, {r.origin})",
                "v1": f"<Name>Task.{r.name} {kind}",
                "note": "async; calls the carried function",
            }
        )
    for t in loaded.tools:
        rows.append(
            {
                "classic": f"ToolEnv tool {t}",
                "v1": f"<Name>Toolset.{t} (@vf.tool, Task.toolsets)",
                "note": "same name, calls the carried function",
            }
        )
    if loaded.env_class == "ToolEnv":
        rows.append(
            {
                "classic": f"ToolEnv max_turns={loaded.max_turns}; metrics num_turns, total_tool_calls, <tool>_calls",
                "v1": "-",
                "note": "v1 agents set their own turn limit and record turns and tool calls",
            }
        )
    for row in rows:
        row["v1"] = row["v1"].replace("<Name>", prefix)
    return rows


def write_package(static, loaded, target: Path, module: str, mapping, todos, force: bool) -> list[Path]:
    source = emit.module_source(static, loaded, module, todos)
    copied = [(target / s.name, s.read_text(encoding="utf-8")) for s in static.siblings]
    files = [(target / f"{module}.py", source)] + copied
    names = [f.name for f, _ in files]
    files.append((target / "pyproject.toml", emit.pyproject(static, module.replace("_", "-"), module, names)))
    files.append((target / "README.md", emit.readme(static, module, mapping, todos)))
    return [write_atomic(path, text, force=force) for path, text in files]


# -- the proof -------------------------------------------------------------------------------------


def prove(result: Result, classic, loaded, static, module_path: Path, request: MigrateRequest, v1_python, v1_version):
    rows = classic.rows(request.rows)
    items = probe_items(rows, classic.format_hints())
    log(f"scoring {len(items)} probes of {len(rows)} rows through the classic environment")
    classic_scores = classic.score_sync([(row, p.text) for row, p in items])
    fields = dict(
        zip(
            [p.name for p in static.params if p.kind != "var_keyword"],
            [emit.config_field(p.name) for p in static.params if p.kind != "var_keyword"],
        )
    )
    dropped = [k for k in request.env_args if k not in fields]
    if dropped:
        result.warn("env_args", f"{dropped} reach only load_environment's **kwargs; the v1 config has no such field")
    v1_args = {fields[k]: v for k, v in request.env_args.items() if k in fields}
    payload = {
        "path": str(module_path),
        "env_args": v1_args,
        "rows": len(rows),
        "items": [[row.index, p.text] for row, p in items],
    }
    log(f"scoring them through the v1 taskset under verifiers {v1_version} ({v1_python})")
    result.data["v1"] = {"python": v1_python, "verifiers": v1_version, "env_args": v1_args}
    try:
        answer = run_v1_side(v1_python, payload, request.timeout)
    except ToolError as err:  # the package is written but unproven: a failed check, never a pass
        result.fail(
            "proof",
            f"the v1 side failed, nothing was compared: {err}",
            "fix the migrated package, then rerun with --force",
        )
        return
    mismatches = compare(rows, items, classic_scores, answer, loaded.rewards)
    by_category: dict[str, list[float]] = {}
    for (_, p), s in zip(items, classic_scores):
        if s.total is not None:
            by_category.setdefault(p.category, []).append(s.total)
    bad_items = {m["item"] for m in mismatches if "item" in m}
    result.data["comparison"] = {
        "rows": len(rows),
        "probes": len(items),
        "functions": [r.name for r in loaded.rewards],
        "matched": len(items) - len(bad_items),
        "mismatched": len(bad_items),
        "differences": len(mismatches),
        "mean_total_by_category": {k: round(sum(v) / len(v), 6) for k, v in sorted(by_category.items())},
        "mismatches": mismatches[:50],
    }
    if mismatches:
        lines = "; ".join(_describe(m) for m in mismatches[:5])
        result.fail(
            "proof",
            f"{len(mismatches)} differences between the classic and the v1 scores: {lines}",
            "the migrated package does not behave like the classic one: see comparison.mismatches",
        )
    else:
        args = f" --env-args {shlex.quote(json.dumps(v1_args))}" if v1_args else ""
        result.step(
            f"under verifiers >= 0.4: {command('test_reward')} {shlex.quote(str(module_path.parent))}/{args}"
            " (and vf-validate), then train it as a v1 taskset"
        )
        result.passed(
            "proof",
            f"{len(items)} probes on {len(rows)} rows score the same, total and per function ({len(loaded.rewards)} functions), under verifiers {classic.verifiers_version} and {v1_version}",
        )


def probe_items(rows, hints) -> list:
    """(row, probe) pairs: test_reward's probes per row (gold, gold_alt, wrong, malformed, hack) and its
    answer-kind probes (number spellings, choice labels, code programs and code hacks)."""
    from vlab.kinds import environment_kind, row_kind
    from vlab.kinds.choice import probes as choices
    from vlab.kinds.code import probes as code
    from vlab.kinds.number import probes as numbers
    from vlab.reward import probes as rp

    golds = {r.index: rp.gold_value(r.answer) for r in rows}
    kinds = {r.index: row_kind(r, golds[r.index]) for r in rows}
    if environment_kind(list(kinds.values())) == "choice":
        kinds = {r.index: row_kind(r, golds[r.index], expect="choice") for r in rows}
    primary = rp.primary_template(hints)
    items = []
    for row in rows:
        gold, kind = golds[row.index], kinds[row.index]
        if gold is None:
            continue
        if kind.kind == "code":
            probes, formats = code.code_probes(gold, kind)
            template = next(iter(formats.values()), "{answer}")
            probes += [p for p in code.hack_probes(kind, gold, template) if p.id not in code.SLOW_PROBES]
        else:
            probes = rp.build_probes(row, hints).probes
            if kind.kind == "choice":
                probes += choices.label_probes(gold, kind, primary)
            elif kind.kind == "number":
                probes += numbers.number_probes(gold, primary)
        items += [(row, p) for p in probes]
    return items


def run_v1_side(python: str, payload: dict, timeout: float) -> dict:
    # Only vlab goes on the child's path (a folder holding a link to it): from an installed wheel, the
    # folder holding vlab is this python's site-packages, whose verifiers 0.3 must not shadow the child's.
    with tempfile.TemporaryDirectory(prefix="vlab-migrate-") as shim:
        os.symlink(SCRIPTS_DIR / "vlab", Path(shim) / "vlab", target_is_directory=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = shim + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return _run_child(python, payload, timeout, env)


def _run_child(python: str, payload: dict, timeout: float, env: dict) -> dict:
    try:
        done = subprocess.run(
            [python, "-m", "vlab.migrate.score_v1"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired as err:
        raise ToolError(f"the v1 side took longer than {timeout:.0f}s") from err
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise ToolError(f"the v1 side failed (exit {done.returncode}): {' | '.join(tail)}") from None
    if "error" in answer:
        raise ToolError(f"the migrated taskset did not load under verifiers >= 0.4: {answer['error']}")
    return answer


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=0, abs_tol=TOLERANCE) or (math.isnan(a) and math.isnan(b))


def _plain_messages(messages) -> list[dict]:
    return [{"role": m.get("role"), "content": m.get("content")} for m in messages]


def compare(rows, items, classic_scores, answer: dict, rewards) -> list[dict]:
    out: list[dict] = []
    v1_rows = answer["rows"]
    if len(v1_rows) != len(rows):
        out.append({"what": "rows", "classic": len(rows), "v1": len(v1_rows)})
    for row, v1_row in zip(rows, v1_rows):
        if _plain_messages(row.prompt) != _plain_messages(v1_row["prompt"]):
            out.append({"row": row.index, "what": "prompt", "classic": row.prompt, "v1": v1_row["prompt"]})
        if json.loads(json.dumps(row.answer, default=str)) != v1_row["answer"]:
            out.append({"row": row.index, "what": "answer", "classic": row.answer, "v1": v1_row["answer"]})
    for i, ((row, probe), cs, vs) in enumerate(zip(items, classic_scores, answer["scores"])):
        base = {"item": i, "row": row.index, "probe": probe.id}
        if vs.get("error"):
            out.append({**base, "what": "v1 scoring error", "classic": cs.total, "v1": vs["error"]})
            continue
        if not _same(cs.total, vs["total"]):
            out.append({**base, "what": "total", "classic": cs.total, "v1": vs["total"]})
        for r in rewards:
            v1_value = (vs["metrics"] if r.weight == 0 else vs["rewards"]).get(r.name)
            if not _same(cs.per_function.get(r.name), v1_value):
                out.append({**base, "what": r.name, "classic": cs.per_function.get(r.name), "v1": v1_value})
    return out


def _describe(m: dict) -> str:
    where = f"row {m['row']}" if "row" in m else "dataset"
    probe = f" probe {m['probe']}" if "probe" in m else ""
    return f"{where}{probe} {m['what']}: classic {m['classic']!r} vs v1 {m['v1']!r}"[:300]
