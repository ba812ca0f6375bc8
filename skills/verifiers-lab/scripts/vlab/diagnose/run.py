"""diagnose_run's flow: read the run, detect the signatures, propose deltas and stop conditions,
optionally write the changed config, draw the run, or watch it until a stop condition fires."""

from __future__ import annotations

import json
from pathlib import Path

from vlab.core.console import log
from vlab.core.files import ensure_writable, write_atomic
from vlab.core.invocation import command
from vlab.core.result import EXIT_PREREQ, Result, UsageError
from vlab.diagnose import deltas as dl
from vlab.diagnose import stops as st
from vlab.diagnose.analysis import Diagnosis, analyse, read_series
from vlab.diagnose.request import DiagnoseRequest
from vlab.diagnose.sources import Located, locate
from vlab.diagnose.thresholds import T


def load_stops(path: str) -> list[st.Stop]:
    p = Path(path)
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError) as err:
        raise UsageError(f"--stops {path}: not a readable JSON file ({err})") from err
    if isinstance(obj, dict):
        obj = (obj.get("data") or obj).get("stop_conditions", obj.get("stop_conditions"))
    if not isinstance(obj, list) or not obj:
        raise UsageError(f"--stops {path} holds no stop conditions", hint="a list, or a diagnose_run --json result")
    return [st.Stop.from_dict(x) for x in obj]


# -- filling the result ----------------------------------------------------------------------------


def fill_result(d: Diagnosis, result: Result, request: DiagnoseRequest, found: Located) -> None:
    s = d.series
    deltas_by_finding: dict[str, list[dl.Delta]] = {}
    for delta in d.deltas:
        deltas_by_finding.setdefault(delta.finding, []).append(delta)
    if len(s) < T["min_steps"]:
        result.skip(
            "steps", f"only {len(s)} step(s) so far: too early to judge trends", "re-run after a few more steps"
        )
    else:
        result.passed("steps", f"read {len(s)} steps ({s.steps[0]}-{s.steps[-1]}) from {found.note}")
    for f in d.findings:
        hint = "; ".join(x.text() for x in deltas_by_finding.get(f.id, []))
        if f.follows:
            hint = f"follows from {f.follows}" + (f"; {hint}" if hint else "")
        elif not hint and f.id in dl.NEXT_STEPS:
            hint = dl.NEXT_STEPS[f.id]
        result.add(f.id, f.status, f.message, hint)
    for fired in d.fired[:1] if not request.watch else []:
        # what a stop condition would have said on this run: informative, the findings carry the verdict
        log(f"stop condition {fired['id']} fires at step {fired['step']}: {fired['text']}")
    data = result.data
    data["run"] = {"source": s.source, "where": s.where, "found": found.note, **s.describe()}
    data["reward_range"] = [d.ctx.lo, d.ctx.hi]
    data["findings"] = [f.to_dict() for f in d.findings]
    data["config"] = {"flavour": d.flavour, "path": request.config, "from": s.info.get("config_from")}
    data["deltas"] = [x.to_dict() for x in d.deltas]
    data["stop_conditions"] = [x.to_dict() for x in d.stops]
    data["stops_fired"] = d.fired
    problems = [f for f in d.findings if f.status == "fail" and not f.follows]
    warns = [f for f in d.findings if f.status == "warn"]
    where = f"{len(s)} steps of {s.source} run {request.run}"
    if problems:
        result.summary = f"{where}: " + ", ".join(f.id for f in problems)
    elif warns:
        result.summary = f"{where}: no failure; watch " + ", ".join(f.id for f in warns)
    else:
        ok = next((f.message for f in d.findings if f.id in ("converged", "reward-rising")), "no failure signature")
        result.summary = f"{where}: healthy ({ok})"
    for f in d.findings:
        if f.status in ("fail", "warn") and f.id in dl.NEXT_STEPS and not f.follows:
            result.step(dl.NEXT_STEPS[f.id])
    if d.deltas and not request.write:
        base = request.config or "CONFIG.toml"
        result.step(
            f"{command('diagnose_run')} --run {request.run} --config {base} --write NEW.toml  "
            "# writes these deltas into a copy of the config, validated"
        )
    if d.stops:
        result.step(
            f"apply the stop conditions (data.stop_conditions): {command('diagnose_run')} --run {request.run} "
            "--watch --stops THIS_RESULT.json"
        )


def write_new_config(d: Diagnosis, result: Result, request: DiagnoseRequest) -> None:
    if not request.config or d.config_text is None:
        raise UsageError("--write needs --config CFG (the config to change)", hint="pass the run's TOML with --config")
    target = Path(request.write)
    ensure_writable(target, request.force)
    if Path(request.config).resolve() == target.resolve():
        raise UsageError("--write must name a new file, not the --config itself", hint="e.g. --write configs/next.toml")
    numeric = [x for x in d.deltas if isinstance(x.new, (int, float, bool))]
    text = dl.apply_deltas(d.config_text, numeric)
    target_schema = request.target or ("prime-rl" if d.series.source == "prime-rl" else "hosted")
    write_atomic(target, text, force=request.force)
    log(f"wrote {target}")
    checks = dl.validate_written(text, d.flavour, target_schema, target)
    result.checks.extend(checks)
    result.data["written"] = {
        "path": str(target),
        "deltas": len(numeric),
        "schema": d.flavour if d.flavour == "local" else target_schema,
        "valid": all(c.status != "fail" for c in checks),
    }
    if not numeric:
        result.warn("write", f"{target} is a copy of {request.config}: no numeric delta to apply")


def draw(d: Diagnosis, result: Result, request: DiagnoseRequest) -> None:
    from vlab.core.result import PrerequisiteError
    from vlab.diagnose.plots import plot_run

    s = d.series
    try:
        drawn = plot_run(
            s.steps,
            s.cols,
            [f.to_dict() for f in d.findings if f.status in ("fail", "warn") or f.id == "converged"],
            request.plot,
            title=f"{s.source}: {s.where}",
            force=request.force,
            reward_range=(d.ctx.lo, d.ctx.hi),
        )
    except PrerequisiteError as err:
        result.fail("plot", f"--plot {request.plot} not drawn: {err.message}", err.hint, exit_code=EXIT_PREREQ)
        return
    result.data["plot"] = drawn
    result.passed("plot", f"drew {len(drawn['panels'])} panels to {drawn['path']}")


def diagnose(request: DiagnoseRequest, result: Result) -> None:
    found = locate(request.run, request.kind)
    log(f"--run {request.run}: {found.note}")
    stops = load_stops(request.stops) if request.stops else None
    if request.write and not request.config:
        raise UsageError("--write needs --config CFG (the config to change)", hint="pass the run's TOML with --config")
    if request.watch:
        from vlab.diagnose.watch import watch

        d = watch(found, request, result, stops)
    else:
        s = read_series(found, request)
        if len(s) == 0:
            raise UsageError(f"{found.path or request.run} holds no steps yet", hint="re-run once the run has logged")
        d = analyse(s, request, stops)
    fill_result(d, result, request, found)
    if request.write:
        write_new_config(d, result, request)
    if request.plot:
        draw(d, result, request)
