"""submit_training's flow: build or convert a config, validate it, show it, write it, submit it, report a run."""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import tomlkit

from vlab.core.console import confirm, interactive, log
from vlab.core.files import write_atomic, write_json_atomic
from vlab.core.invocation import command
from vlab.core.result import EXIT_EXTERNAL, EXIT_FAIL, EXIT_PREREQ, EXIT_USAGE, PrerequisiteError, Result, UsageError
from vlab.hosted import gate, prime
from vlab.hosted.builder import SourceSpec, TrainParams, build_document, parse_env_arg, source_name_for
from vlab.hosted.flat import convert_flat, looks_flat
from vlab.hosted.prime_rl_schema import validate_with_prime_rl
from vlab.hosted.rehearse import local_finder, rehearse_config
from vlab.hosted.schema import HOSTED_CLI_KEYS, schema_info
from vlab.hosted.status import run_status
from vlab.hosted.validate import ENV_ID_RE, Lookup, key_var_names, source_env_ids, validate_document

TARGETS = ("hosted", "prime-rl")
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


# -- the request -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvEvent:
    """One --env/--eval-env/--env-arg/--ratio, kept in command-line order so args attach to their env."""

    kind: str  # env | eval-env | arg | ratio
    value: str


@dataclass(frozen=True)
class SubmitRequest:
    """What submit_training is asked: a starting point, run parameters that override it, and what to do."""

    # starting point (one of, or neither for a new config from the parameters)
    config: str | None = None
    from_flat: str | None = None
    target: str = "hosted"
    # run parameters (None: keep the starting TOML's value or the template's)
    model: str | None = None
    env_events: tuple[EnvEvent, ...] = ()
    max_steps: int | None = None
    batch_size: int | None = None
    group_size: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    seq_len: int | None = None
    lr: float | None = None
    lora: bool = False
    lora_rank: int | None = None
    lora_alpha: float | None = None
    train_gpus: int | None = None
    infer_gpus: int | None = None
    wandb_project: str | None = None
    wandb_name: str | None = None
    wandb_entity: str | None = None
    ckpt_interval: int | None = None
    eval_interval: int | None = None
    eval_num_examples: int | None = None
    # what to do
    output: str | None = None
    force: bool = False
    dry_run: bool = False
    submit: bool = False
    yes: bool = False
    forward_env: tuple[str, ...] = ()
    status: str | None = None  # a run id: report it instead of building a config
    offline: bool = False
    prime_rl_dir: str | None = None
    prime_rl_python: str | None = None
    timeout: float = 30.0
    submit_timeout: float = 300.0
    schema_timeout: float = 300.0
    strict: bool = False  # warnings block a submission too
    rehearse: bool = True  # build, install, load and score each environment as the run will (--no-rehearse)
    rehearse_rows: int = 20

    def __post_init__(self) -> None:
        object.__setattr__(self, "env_events", tuple(self.env_events))
        object.__setattr__(self, "forward_env", tuple(self.forward_env))
        if self.submit and self.dry_run:
            raise UsageError("--submit and --dry-run are exclusive")
        if self.rehearse_rows < 1:
            raise UsageError(f"--rehearse-rows {self.rehearse_rows} must be at least 1")
        if self.target not in TARGETS:
            raise UsageError(f"unknown target {self.target!r}", hint="one of: " + ", ".join(TARGETS))
        if self.submit and self.target == "prime-rl":
            raise UsageError(
                "--submit sends a config to Hosted Training; a --target prime-rl config runs on your own machines",
                hint="run it from the prime-rl checkout: cd PRIME_RL_DIR && uv run rl @ CONFIG",
            )
        if self.status:
            if not RUN_ID_RE.match(self.status):
                raise UsageError(f"{self.status!r} is not a run id")
        elif self.config and self.from_flat:
            raise UsageError(
                "--config and --from-flat are exclusive", hint="convert with --from-flat, or check with --config"
            )


# -- command-line events -> parameters -------------------------------------------------------------


@dataclass
class SourcePlan:
    train: list[SourceSpec] = field(default_factory=list)
    eval: list[SourceSpec] = field(default_factory=list)


def sources_from_events(events: list[EnvEvent]) -> SourcePlan:
    """``--env A --env-arg k=v --ratio 0.7 --env B``: each --env-arg/--ratio belongs to the --env before it."""
    plan = SourcePlan()
    last: SourceSpec | None = None
    for ev in events:
        if ev.kind in ("env", "eval-env"):
            if not ENV_ID_RE.match(ev.value):
                raise UsageError(f"{ev.value!r} is not an environment id", hint="use owner/name or owner/name@version")
            last = SourceSpec(taskset_id=ev.value)
            (plan.train if ev.kind == "env" else plan.eval).append(last)
        elif last is None:
            raise UsageError(
                f"--{'env-arg' if ev.kind == 'arg' else 'ratio'} {ev.value} comes before any --env",
                hint="put it after the --env it belongs to",
            )
        elif ev.kind == "arg":
            key, value = parse_env_arg(ev.value)
            last.args[key] = value
        elif ev.kind == "ratio":
            try:
                last.ratio = float(ev.value)
            except ValueError as exc:
                raise UsageError(f"--ratio {ev.value!r} is not a number") from exc
            if last.ratio <= 0:
                raise UsageError(f"--ratio {ev.value} must be > 0")
    for specs in (plan.train, plan.eval):
        seen: dict[str, int] = {}
        for spec in specs:
            name = source_name_for(spec.taskset_id)
            seen[name] = seen.get(name, 0) + 1
            spec.name = name if seen[name] == 1 else f"{name}-{seen[name]}"
    return plan


def params_from_request(req: SubmitRequest) -> TrainParams:
    plan = sources_from_events(list(req.env_events))
    return TrainParams(
        model=req.model,
        max_steps=req.max_steps,
        seq_len=req.seq_len,
        batch_size=req.batch_size,
        group_size=req.group_size,
        max_completion_tokens=req.max_tokens,
        temperature=req.temperature,
        sources=plan.train or None,
        eval_sources=plan.eval or None,
        eval_interval=req.eval_interval,
        eval_num_examples=req.eval_num_examples,
        lr=req.lr,
        lora=True if req.lora else None,
        lora_rank=req.lora_rank,
        lora_alpha=req.lora_alpha,
        num_train_gpus=req.train_gpus,
        num_infer_gpus=req.infer_gpus,
        wandb_project=req.wandb_project,
        wandb_name=req.wandb_name,
        wandb_entity=req.wandb_entity,
        ckpt_interval=req.ckpt_interval,
    )


# -- reading inputs --------------------------------------------------------------------------------


def read_toml_text(path: str, what: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} {path} does not exist or is not a file")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {what} {path}: {exc}") from exc
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{what} {path} is not valid TOML: {exc}",
            hint="fix the line named above (prime's own parser is lenient and would send something else)",
        ) from exc
    return text


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "config"


def default_output(doc: dict) -> Path:
    sources = (
        (doc.get("orchestrator", {}) or {}).get("train", {}).get("source", [])
        if isinstance(doc.get("orchestrator"), dict)
        else []
    )
    env_id = None
    if isinstance(sources, list) and sources and isinstance(sources[0], dict):
        env_id = ((sources[0].get("env") or {}).get("taskset") or {}).get("id")
    return Path("configs") / f"{_slug(source_name_for(env_id) if isinstance(env_id, str) else 'training')}.toml"


def unified_diff(before: str, after: str, before_name: str, after_name: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=before_name, tofile=after_name
        )
    )


# -- online lookups --------------------------------------------------------------------------------


def _prime_lookup(timeout: float) -> Lookup:
    def guarded(fn):
        def call(*a):
            try:
                return fn(*a, timeout=timeout)
            except PrerequisiteError as err:
                return prime.PrimeCall(EXIT_PREREQ, "no_cli", err.message)

        return call

    return Lookup(env_info=guarded(prime.env_info), train_models=guarded(prime.train_models))


# -- the flow --------------------------------------------------------------------------------------


def _schema_checks(result: Result, text: str, req: SubmitRequest) -> None:
    """--prime-rl-dir: validate with the checkout's own RLConfig."""
    doc = tomlkit.parse(text)
    for key in HOSTED_CLI_KEYS:  # read by `prime train`, never seen by prime-rl
        if key in doc:
            del doc[key]
    run = validate_with_prime_rl(
        tomlkit.dumps(doc), req.prime_rl_dir, python=req.prime_rl_python, timeout=req.schema_timeout
    )
    if run.ok is None:
        result.fail(
            "prime-rl-schema",
            f"prime-rl's schema could not be loaded: {run.message}",
            "pass --prime-rl-python PATH to a Python 3.12 with the prime-rl-configs dependencies",
            exit_code=EXIT_PREREQ,
        )
        return
    if run.ok:
        result.passed("prime-rl-schema", f"accepted by prime-rl's own RLConfig ({req.prime_rl_dir})")
        for w in run.warnings[:5]:
            result.warn("prime-rl-schema", f"prime-rl warns: {w}", "read the warning; the run will start anyway")
        return
    for err in run.errors[:10]:
        msg = (err.get("loc") + ": " if err.get("loc") else "") + err.get("msg", "")
        if re.search(r"taskset '.*' not found", msg):
            result.warn(
                "prime-rl-schema",
                f"prime-rl's schema could not import an environment: {msg[:300]}",
                "install the environment into the schema interpreter to check its arguments too",
            )
        else:
            result.fail(
                "prime-rl-schema",
                f"prime-rl's RLConfig rejects the config: {msg[:500]}",
                "fix the key named above; this is the same check `uv run rl @` and the platform run",
            )


def run_submit_training(req: SubmitRequest, result: Result) -> None:
    """The whole submit_training run: --status, or build, validate, show, write and (asked) submit a config."""
    if req.status:
        run_status(req, result)
        return
    if req.submit and not req.yes and not interactive():
        # A usage error comes before any check (exit 2 before 3 and 4): nothing is looked up,
        # written or submitted. On a terminal the question is asked after the checks instead.
        result.fail(
            "confirm",
            "--submit needs --yes when stdin is not a terminal; nothing was checked, written or submitted",
            "review the config with a dry run (the same command without --submit), then add --submit --yes",
            exit_code=EXIT_USAGE,
        )
        result.summary = "not submitted: --submit needs --yes (stdin is not a terminal)"
        return
    if req.yes and not req.submit:
        log("--yes without --submit does nothing: this is a dry run")
    params = params_from_request(req)
    target = req.target
    starting_text: str | None = None
    starting_name = ""
    mappings = None
    if req.from_flat:
        starting_text = read_toml_text(req.from_flat, "flat config")
        starting_name = req.from_flat
        flat = tomllib.loads(starting_text)
        if not looks_flat(flat):
            raise UsageError(
                f'{req.from_flat} is not in the old flat shape (no `model = "..."` string or [[env]])',
                hint=f"check it as it is with --config {req.from_flat}",
            )
        doc, mappings = convert_flat(flat, template="hosted" if target == "hosted" else "prime-rl")
        doc = build_document(params, base=doc)
        result.data["mappings"] = [m.to_dict() for m in mappings]
    elif req.config:
        starting_text = read_toml_text(req.config, "config")
        starting_name = req.config
        doc = build_document(params, base=tomlkit.parse(starting_text))
    else:
        if not params.model or not params.sources:
            raise UsageError(
                "a new config needs --model and at least one --env",
                hint="e.g. --model Qwen/Qwen3-4B-Instruct-2507 --env primeintellect/alphabet-sort, "
                "or start from --config FILE / --from-flat OLD.toml",
            )
        doc = build_document(params, template="hosted" if target == "hosted" else "prime-rl")
    # A starting config's `legacy` blocks (prime-rl v0.8.0) are checked in the current shape, then put back.
    classic_ids = gate.from_legacy(doc)
    checked_text = tomlkit.dumps(doc)
    if not checked_text.endswith("\n"):
        checked_text += "\n"
    plain = tomllib.loads(checked_text)

    # Validate everything before anything leaves the machine.
    online = not req.offline
    lookup = _prime_lookup(req.timeout) if online else None
    for check in validate_document(
        plain,
        text=checked_text,
        target=target,
        forward_env=list(req.forward_env),
        environ=dict(os.environ) if req.submit else None,
        lookup=lookup,
        online=online and target == "hosted",
    ):
        result.checks.append(check)
    # The gate: will the run start? (generation of each environment, placeholders, data paths)
    outcome = gate.run_gate(
        result,
        doc,
        plain,
        target,
        online=online,
        timeout=req.timeout,
        prime_rl_dir=req.prime_rl_dir,
        classic_ids=classic_ids,
        rehearsing=req.rehearse,
        finder=local_finder,
    )
    if not outcome.refused:
        rehearse_config(result, plain, target, outcome, rows=req.rehearse_rows, online=online, rehearsing=req.rehearse)
    final_text = tomlkit.dumps(doc)
    if not final_text.endswith("\n"):
        final_text += "\n"

    # Where the config lives: the starting file when nothing changed, else --output / configs/<env>.toml.
    unchanged = req.config and starting_text == final_text and not req.output
    config_path = Path(req.config) if unchanged else Path(req.output) if req.output else default_output(plain)
    info = schema_info()
    result.data.update(
        {
            "config_path": str(config_path),
            "target": target,
            "config_text": final_text,
            "schema": {
                "prime_rl_version": info.prime_rl_version,
                "prime_rl_commit": info.prime_rl_commit,
                "prime_rl_configs_version": info.prime_rl_configs_version,
            },
            "forward_env": list(req.forward_env),
        }
    )
    if starting_text is not None and not unchanged:
        result.data["diff"] = unified_diff(starting_text, final_text, starting_name, str(config_path))

    env_ids = sorted({e for _, e in source_env_ids(plain) if isinstance(e, str)})
    hub = [c for c in result.checks if c.id == "env-hub"]
    # Fast path: every environment is confirmed on the Hub, so no local environment checks are needed.
    result.data["fast_path"] = bool(
        env_ids and hub and all(c.status == "pass" for c in hub) and all("/" in e for e in env_ids)
    )
    if req.prime_rl_dir:
        _schema_checks(result, final_text, req)

    failed = [c for c in result.checks if c.status == "fail"]
    warned = [c for c in result.checks if c.status == "warn"]

    if outcome.refused:  # a config for a run that cannot start is not written
        result.data["written"] = False
        result.summary = "refused: a classic environment cannot run on " + (
            "Hosted Training" if target == "hosted" else "this prime-rl"
        )
        if req.submit:
            result.skip("submit", "not submitted: a classic environment would fail at start", "migrate it first")
        for step in outcome.migrate_steps():
            result.step(step)
        return

    if failed:  # a config that cannot start is not written (the re-run needs no --force)
        result.data["written"] = False
        result.summary = f"not written: {len(failed)} failed check(s)" + (
            f", {len(warned)} warning(s)" if warned else ""
        )
        if req.submit:
            result.skip("submit", f"not submitted: {len(failed)} failed check(s)", "fix them and re-run")
        result.step("fix what the failed checks name (each hint says how), then re-run the same command")
        return

    # Write the reviewed config (a dry run stops here).
    if not unchanged:
        write_atomic(config_path, final_text, force=req.force)
        log(f"wrote {config_path}")
        result.data["written"] = True
    else:
        result.data["written"] = False

    if not req.submit:
        result.summary = (
            f"dry run: {config_path} is valid"
            + (f", {len(warned)} warning(s)" if warned else "")
            + "; nothing submitted"
        )
        for name in key_var_names(plain):  # the judge's key: by name in the config, its value where the run is
            result.step(
                f"add a secret named {name} to the environment on the Environments Hub (its Secrets tab, or link a "
                "global secret): Hosted Training injects it into the run"
                if target == "hosted"
                else f"export {name} where the prime-rl orchestrator runs (the environment reads its judge key there)"
            )
        if target == "prime-rl":
            result.step(f"review {config_path}, then: {gate.prime_rl_command(config_path, req.prime_rl_dir)}")
        else:
            result.step(
                f"review {config_path}, then: {command('submit_training')} --config {config_path} "
                "--submit --yes" + "".join(f" --forward-env {n}" for n in req.forward_env)
            )
        return

    if req.strict and warned:
        why = f"{len(warned)} warning(s) with --strict"
        result.skip("submit", f"not submitted: {why}", "fix them and re-run")
        result.summary = f"not submitted: {why}"
        return
    if not req.yes and not confirm(f"Launch a Hosted Training run from {config_path} (billed per GPU-hour)?"):
        result.fail(
            "confirm",
            "not submitted: no confirmation (stdin is not a terminal and --yes was not given)",
            "re-run with --submit --yes once you have reviewed the config",
            exit_code=EXIT_USAGE,
        )
        result.summary = "not submitted: needs --yes"
        return
    call = prime.train_submit(str(config_path), list(req.forward_env), timeout=req.submit_timeout)
    if not call.ok:
        hint = {
            "rejected": "the platform rejected the config; fix what it names and re-run",
            "unauthorized": "run `prime login` (or set PRIME_API_KEY) and re-run",
            "no_api_key": "run `prime login` (or set PRIME_API_KEY) and re-run",
            "unreachable": "check the network (or PRIME_API_BASE_URL) and retry",
            "platform_error": "the platform failed; retry later",
            "timeout": "the run may have started anyway: check `prime train list` before submitting again; "
            "raise --submit-timeout",
        }.get(call.state, "run the same `prime train` command yourself to see the full message")
        result.fail(
            "submit",
            f"`prime train` failed ({call.state}): {call.message}",
            hint,
            exit_code=call.exit_code if call.exit_code in (EXIT_FAIL, EXIT_PREREQ, EXIT_EXTERNAL) else EXIT_EXTERNAL,
        )
        result.summary = f"submission failed: {call.state}"
        return
    run = (call.data or {}).get("run", {}) if isinstance(call.data, dict) else {}
    run_id = run.get("runId") or run.get("id")
    if not run_id:
        result.fail(
            "submit", "`prime train` answered without a run id", "check `prime train list`", exit_code=EXIT_EXTERNAL
        )
        return
    url = prime.dashboard_url(run_id)
    record = {
        "run_id": run_id,
        "dashboard_url": url,
        "config_path": str(config_path),
        "config_sha256": hashlib.sha256(final_text.encode()).hexdigest(),
        "submitted_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "model": (plain.get("model") or {}).get("name"),
        "environments": env_ids or None,
        "forwarded_env": list(req.forward_env),  # names only, never values
        "prime_rl_schema": info.prime_rl_commit,
        "platform": {
            k: v for k, v in run.items() if k in ("onDemand", "gpuType", "pricePerGpuHour", "estimatedCostPerHour")
        },
    }
    record_path = config_path.with_name(f"{config_path.stem}.{_slug(run_id)}.run.json")
    write_json_atomic(record_path, record)
    result.passed("submit", f"submitted run {run_id}")
    result.data.update(
        {"run_id": run_id, "dashboard_url": url, "run_record": str(record_path), "platform": record["platform"]}
    )
    result.summary = f"submitted run {run_id}: {url}"
    result.step(f"{command('submit_training')} --status {run_id}")
    result.step(f"prime train logs {run_id} -f")
