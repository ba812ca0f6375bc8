"""submit_training's flow, stage by stage: build the config document from the request, validate it,
gate it (will the run start), rehearse it (and check its token budget), write it, submit it.

``run_submit_training`` hands the request through the stages in that order; each is a function of
its own (``build_draft``, ``validate_draft``, ``gate_draft``, ``rehearse_draft``, ``write_draft``,
``submit_written``) that reads the request and the ``Draft`` and adds its checks to the result. A
stage that refuses (a classic environment, a failed check) leaves nothing written and nothing sent.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit

from vlab.core.console import confirm, interactive, log
from vlab.core.files import write_atomic, write_json_atomic
from vlab.core.invocation import command
from vlab.core.result import EXIT_EXTERNAL, EXIT_FAIL, EXIT_PREREQ, EXIT_USAGE, PrerequisiteError, Result, UsageError
from vlab.hosted import gate, prime
from vlab.hosted.builder import build_document, set_path, source_name_for
from vlab.hosted.document import get, source_env_ids
from vlab.hosted.flat import convert_flat, looks_flat
from vlab.hosted.prime_rl_schema import validate_with_prime_rl
from vlab.hosted.rehearse import RehearseOptions, find_folder, local_finder, rehearse_config, user_path
from vlab.hosted.request import SubmitRequest, params_from_request
from vlab.hosted.rules_envs import Lookup
from vlab.hosted.rules_secrets import key_var_names
from vlab.hosted.schema import HOSTED_CLI_KEYS, SchemaInfo, schema_info
from vlab.hosted.status import run_status
from vlab.hosted.tokens import config_budget
from vlab.hosted.trainsplit import check_train_split
from vlab.hosted.validate import validate_document

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


# -- the stages ------------------------------------------------------------------------------------


@dataclass
class Draft:
    """The config as the request built it: the tomlkit document (what is written, comments kept), its
    plain form in the current shape (what the rules read) and the starting file it came from."""

    doc: Any
    plain: dict
    text: str  # the document in the current shape, as checked
    classic_ids: set[str] = field(default_factory=set)  # a starting config's `legacy` blocks, put back on write
    starting_text: str | None = None
    starting_name: str = ""
    target: str = "hosted"
    seq_len_named: bool = True  # --seq-len, or a seq_len in the starting file; else the pack may choose one

    def set_seq_len(self, seq_len: int) -> None:
        """The seq_len the token budget chose, written into the document (its comment kept) and its plain form."""
        set_path(self.doc, "seq_len", seq_len)
        self.plain["seq_len"] = seq_len
        self.text = tomlkit.dumps(self.doc)

    @property
    def final_text(self) -> str:
        """The text to write: the document as the gate left it (legacy blocks on a v0.8.0 checkout)."""
        text = tomlkit.dumps(self.doc)
        return text if text.endswith("\n") else text + "\n"


@dataclass
class Written:
    """The reviewed config: where it lives (written now, or the unchanged starting file) and its text."""

    path: Path
    text: str
    schema: SchemaInfo


def usage_first(req: SubmitRequest, result: Result) -> bool:
    """--submit without --yes and no terminal: exit 2 before any check (nothing looked up, written or sent).
    False when the run stops here."""
    if req.submit and not req.yes and not interactive():
        # On a terminal the question is asked after the checks instead.
        result.fail(
            "confirm",
            "--submit needs --yes when stdin is not a terminal; nothing was checked, written or submitted",
            "review the config with a dry run (the same command without --submit), then add --submit --yes",
            exit_code=EXIT_USAGE,
        )
        result.summary = "not submitted: --submit needs --yes (stdin is not a terminal)"
        return False
    if req.yes and not req.submit:
        log("--yes without --submit does nothing: this is a dry run")
    return True


def build_draft(req: SubmitRequest, result: Result) -> Draft:
    """Stage 1, build: the document from --from-flat, --config or the template, with the flags applied."""
    params = params_from_request(req)
    template = "hosted" if req.target == "hosted" else "prime-rl"
    starting_text, starting_name = None, ""
    named = req.seq_len is not None
    if req.from_flat:
        starting_text, starting_name = read_toml_text(req.from_flat, "flat config"), req.from_flat
        flat = tomllib.loads(starting_text)
        if not looks_flat(flat):
            raise UsageError(
                f'{req.from_flat} is not in the old flat shape (no `model = "..."` string or [[env]])',
                hint=f"check it as it is with --config {req.from_flat}",
            )
        named = named or "seq_len" in flat
        doc, mappings = convert_flat(flat, template=template)
        doc = build_document(params, base=doc)
        result.data["mappings"] = [m.to_dict() for m in mappings]
    elif req.config:
        starting_text, starting_name = read_toml_text(req.config, "config"), req.config
        doc = build_document(params, base=tomlkit.parse(starting_text))
        starting = tomllib.loads(starting_text)
        named = named or "seq_len" in starting or get(starting, "orchestrator.seq_len") is not None
    else:
        if not params.model or not params.sources:
            raise UsageError(
                "a new config needs --model and at least one --env",
                hint="e.g. --model Qwen/Qwen3-4B-Instruct-2507 --env primeintellect/alphabet-sort, "
                "or start from --config FILE / --from-flat OLD.toml",
            )
        doc = build_document(params, template=template)
    # A starting config's `legacy` blocks (prime-rl v0.8.0) are checked in the current shape, then put back.
    classic_ids = gate.from_legacy(doc)
    text = tomlkit.dumps(doc)
    text = text if text.endswith("\n") else text + "\n"
    return Draft(doc, tomllib.loads(text), text, set(classic_ids), starting_text, starting_name, req.target, named)


def validate_draft(req: SubmitRequest, draft: Draft, result: Result) -> None:
    """Stage 2, validate: every rule of ``validate_document`` before anything leaves the machine."""
    online = not req.offline
    result.checks += validate_document(
        draft.plain,
        text=draft.text,
        target=draft.target,
        forward_env=list(req.forward_env),
        environ=dict(os.environ) if req.submit else None,
        lookup=_prime_lookup(req.timeout) if online else None,
        online=online and draft.target == "hosted",
    )


def gate_draft(req: SubmitRequest, draft: Draft, result: Result) -> gate.GateOutcome:
    """Stage 3, gate: will the run start (each environment's generation, placeholder ids, data paths)."""
    return gate.run_gate(
        result,
        draft.doc,
        draft.plain,
        draft.target,
        online=not req.offline,
        timeout=req.timeout,
        prime_rl_dir=req.prime_rl_dir,
        classic_ids=draft.classic_ids,
        rehearsing=req.rehearse,
        finder=local_finder,
    )


def rehearse_draft(req: SubmitRequest, draft: Draft, outcome: gate.GateOutcome, result: Result) -> None:
    """Stage 4, rehearse: each environment built, installed, loaded and scored as the run will (nothing to
    rehearse fails unless --no-rehearse); then the train split (``hosted.trainsplit``: a test or dev split fails
    without --train-on-eval-split) and the token budget of each train source, on the config's own numbers and what
    the rehearsal measured (``hosted.tokens``); where the user named no seq_len, one that holds the turns is chosen
    and written into the draft."""
    rehearse_config(
        result,
        draft.plain,
        draft.target,
        outcome,
        rows=req.rehearse_rows,
        online=not req.offline,
        rehearsing=req.rehearse,
        required=True,
    )
    check_train_split(result, draft.plain, allowed=req.train_on_eval_split)
    chosen = config_budget(result, draft.plain, rehearsing=req.rehearse, choose=not draft.seq_len_named)
    if chosen is not None:
        draft.set_seq_len(chosen)


def write_draft(req: SubmitRequest, draft: Draft, outcome: gate.GateOutcome, result: Result) -> Written | None:
    """Stage 5, write: the final text shown (a diff against the starting file), checked by prime-rl's own
    schema (--prime-rl-dir), then written only when nothing refused or failed; None when it was not."""
    final_text = draft.final_text
    # Where the config lives: the starting file when nothing changed, else --output / configs/<env>.toml.
    unchanged = bool(req.config and draft.starting_text == final_text and not req.output)
    config_path = Path(req.config) if unchanged else Path(req.output) if req.output else default_output(draft.plain)
    info = schema_info()
    result.data.update(
        {
            "config_path": str(config_path),
            "target": draft.target,
            "config_text": final_text,
            "schema": {
                "prime_rl_version": info.prime_rl_version,
                "prime_rl_commit": info.prime_rl_commit,
                "prime_rl_configs_version": info.prime_rl_configs_version,
            },
            "forward_env": list(req.forward_env),
        }
    )
    if draft.starting_text is not None and not unchanged:
        result.data["diff"] = unified_diff(draft.starting_text, final_text, draft.starting_name, str(config_path))
    env_ids = sorted({e for _, e in source_env_ids(draft.plain) if isinstance(e, str)})
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
            "Hosted Training" if draft.target == "hosted" else "this prime-rl"
        )
        if req.submit:
            result.skip("submit", "not submitted: a classic environment would fail at start", "migrate it first")
        for step in outcome.migrate_steps():
            result.step(step)
        return None
    if failed:  # a config that cannot start is not written (the re-run needs no --force)
        result.data["written"] = False
        result.summary = f"not written: {len(failed)} failed check(s)" + (
            f", {len(warned)} warning(s)" if warned else ""
        )
        if req.submit:
            result.skip("submit", f"not submitted: {len(failed)} failed check(s)", "fix them and re-run")
        result.step("fix what the failed checks name (each hint says how), then re-run the same command")
        return None
    if not unchanged:
        write_atomic(config_path, final_text, force=req.force)
        log(f"wrote {config_path}")
    result.data["written"] = not unchanged
    return Written(config_path, final_text, info)


def review_steps(req: SubmitRequest, draft: Draft, written: Written, result: Result) -> None:
    """A dry run's end: the config is valid, nothing was submitted; the next steps to run it."""
    warned = [c for c in result.checks if c.status == "warn"]
    result.summary = (
        f"dry run: {written.path} is valid" + (f", {len(warned)} warning(s)" if warned else "") + "; nothing submitted"
    )
    if draft.target == "hosted":  # the run installs each environment from the Hub: pushed first, then secrets
        for step in push_steps(draft, result):
            result.step(step)
    for name in key_var_names(draft.plain):  # the judge's key: by name in the config, its value where the run is
        result.step(
            f"add a secret named {name} to the environment on the Environments Hub (its Secrets tab, or link a "
            "global secret): Hosted Training injects it into the run"
            if draft.target == "hosted"
            else f"export {name} where the prime-rl orchestrator runs (the environment reads its judge key there)"
        )
    if draft.target == "prime-rl":
        result.step(f"review {written.path}, then: {gate.prime_rl_command(written.path, req.prime_rl_dir)}")
    else:
        result.step(
            f"review {written.path}, then: {command('submit_training')} --config {written.path} "
            "--submit --yes" + "".join(f" --forward-env {n}" for n in req.forward_env)
        )


def push_steps(draft: Draft, result: Result) -> list[str]:
    """``prime env push`` for each environment of a hosted config, from the folder the rehearsal built (or would
    build) it from; an environment with no folder here is named too, unless the Hub confirmed every one."""
    rehearsal = result.data.get("rehearsal") or {}
    folders = {s.get("env_id"): s.get("folder") for s in rehearsal.get("sources", []) if isinstance(s, dict)}
    steps = []
    for env_id in sorted({e for _, e in source_env_ids(draft.plain) if isinstance(e, str)}):
        folder = folders.get(env_id) or find_folder(env_id, RehearseOptions())
        if folder is None and result.data.get("fast_path"):
            continue  # on the Hub already, and no source here to push
        shown = user_path(Path(folder)) if folder else None
        steps.append(
            f"push {env_id} to the Environments Hub before --submit (the run installs it from there): "
            f"{gate.push_command(shown)} ("
            + ("" if shown else "ENV_FOLDER: the folder with its pyproject.toml; ")
            + "-v PUBLIC if the user chose public: ask, never choose for them)"
        )
    return steps


def submit_written(req: SubmitRequest, draft: Draft, written: Written, result: Result) -> None:
    """Stage 6, submit: `prime train` on the written config (--strict: not with warnings; a confirmation
    typed on a terminal, or --yes), then a run record beside the config."""
    warned = [c for c in result.checks if c.status == "warn"]
    if req.strict and warned:
        why = f"{len(warned)} warning(s) with --strict"
        result.skip("submit", f"not submitted: {why}", "fix them and re-run")
        result.summary = f"not submitted: {why}"
        return
    config_path = written.path
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
    env_ids = sorted({e for _, e in source_env_ids(draft.plain) if isinstance(e, str)})
    record = {
        "run_id": run_id,
        "dashboard_url": url,
        "config_path": str(config_path),
        "config_sha256": hashlib.sha256(written.text.encode()).hexdigest(),
        "submitted_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "model": (draft.plain.get("model") or {}).get("name"),
        "environments": env_ids or None,
        "forwarded_env": list(req.forward_env),  # names only, never values
        "prime_rl_schema": written.schema.prime_rl_commit,
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


# -- the hand-off ----------------------------------------------------------------------------------


def run_submit_training(req: SubmitRequest, result: Result) -> None:
    """The whole submit_training run: --status, or the stages in order (each stops the run when it refuses)."""
    if req.status:
        run_status(req, result)
        return
    if not usage_first(req, result):
        return
    draft = build_draft(req, result)
    validate_draft(req, draft, result)
    outcome = gate_draft(req, draft, result)
    if not outcome.refused:
        rehearse_draft(req, draft, outcome, result)
    written = write_draft(req, draft, outcome, result)
    if written is None:
        return
    if req.submit:
        submit_written(req, draft, written, result)
    else:
        review_steps(req, draft, written, result)
