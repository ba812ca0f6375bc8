"""`local_train --engine prime-rl`: the same config, handed to prime-rl.

Writes `rl.toml` with the current prime-rl keys: every local setting goes through
`vlab.train.primerl_map` (carried, or refused with exit 2), the document is built and checked
by `vlab.hosted` (shared with submit_training), `[deployment]` follows `vlab.train.gpusplit`.
One node: `uv run rl @ rl.toml` in the checkout (2+ GPUs). Several nodes: prime-rl's own
mechanism, `[deployment] type = "multi_node"` + `[slurm]` + `[inference.router]` in the same
rl.toml, submitted once with the same command on the SLURM login node; its sbatch script
starts inference on the first nodes and the trainer (and orchestrator) on the rest.
The environment must be installed in the checkout's own environment (`--install-env`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from vlab.core import secrets
from vlab.core.console import log
from vlab.core.files import ensure_writable, write_atomic
from vlab.core.installed import run_command, which
from vlab.core.result import EXIT_PREREQ, PrerequisiteError, Result, UsageError
from vlab.train.config import TrainConfig
from vlab.train.gpusplit import Layout, layout, model_params

MIN_GPUS = 2


def visible_gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except ImportError:
        return 0


def plan_layout(cfg: TrainConfig, gpus_per_node: int) -> Layout:
    """The GPU (one node) or node (several) split: [deployment] when set, else gpusplit's rule by model size."""
    return layout(
        max(1, cfg.deployment.num_nodes),
        gpus_per_node,
        model_params(cfg.model.name),
        cfg.lora.enabled,
        cfg.deployment.num_train_gpus,
        cfg.deployment.num_infer_gpus,
    )


def env_taskset_id(spec: str) -> tuple[str, str | None]:
    """prime-rl loads environments by installed id; a path becomes its module name + an install hint."""
    p = Path(spec).expanduser()
    if spec.endswith(".py") or p.exists():
        folder = p.parent if p.is_file() else p
        module = (p.stem if p.is_file() else p.name).replace("-", "_")
        return (
            module,
            f"prime-rl loads environments by id from its own environment: install {folder} there "
            f"(--install-env, or the printed command) and it is found as '{module}'",
        )
    return spec, None


def check_prime_rl_dir(path: str | None) -> Path:
    if not path:
        raise UsageError(
            "--engine prime-rl needs --prime-rl-dir (a prime-rl checkout)",
            hint="git clone https://github.com/PrimeIntellect-ai/prime-rl && pass its folder; "
            "or --dry-run to only write rl.toml",
        )
    root = Path(path).expanduser()
    if not root.is_dir():
        raise UsageError(f"--prime-rl-dir {root} is not a folder")
    pyproject = root / "pyproject.toml"
    if not pyproject.is_file() or not (root / "src" / "prime_rl").is_dir():
        raise UsageError(
            f"{root} does not look like a prime-rl checkout (no pyproject.toml + src/prime_rl)",
            hint="pass the root of a prime-rl clone",
        )
    text = pyproject.read_text(encoding="utf-8", errors="replace")
    if not re.search(r"^\s*rl\s*=", text, re.M):
        raise UsageError(
            f"{root}/pyproject.toml declares no `rl` entry point",
            hint="update the checkout (git pull): the unified `uv run rl @ rl.toml` launcher is needed",
        )
    return root


def build_rl_toml(cfg: TrainConfig, plan: Layout, prime_rl_dir: str | None = None) -> tuple[str, list[str], list[dict]]:
    """The rl.toml text, notes for the user, and the settings left at defaults prime-rl has no key for."""
    import tomlkit

    from vlab.hosted.builder import SourceSpec, TrainParams, build_document, set_path, source_name_for
    from vlab.train.primerl_map import map_config

    mapping = map_config(cfg)  # every setting carried, or UsageError naming the ones prime-rl cannot take
    notes = []
    taskset_id, note = env_taskset_id(cfg.env.id)
    if note:
        notes.append(note)
    eval_sources = None
    if "orchestrator.eval.interval" in mapping.values:
        eval_id, eval_args = (cfg.eval.env.id, cfg.eval.env.args) if cfg.eval.env.id else (taskset_id, cfg.env.args)
        eval_id, eval_note = env_taskset_id(eval_id)
        if eval_note and eval_note not in notes:
            notes.append(eval_note)
        eval_sources = [
            SourceSpec(taskset_id=eval_id, args=secrets.reference(dict(eval_args)), num_examples=cfg.eval.num_examples)
        ]
    params = TrainParams(
        sources=[SourceSpec(taskset_id=taskset_id, args=secrets.reference(dict(cfg.env.args)))],
        eval_sources=eval_sources,
        extra=dict(mapping.values),
    )
    doc = build_document(params, template="prime-rl")
    for key, value in plan.deployment().items():
        set_path(doc, f"deployment.{key}", value)
    if plan.nodes > 1:
        for k in ("num_train_gpus", "num_infer_gpus"):
            doc["deployment"].pop(k, None)
        set_path(doc, "slurm.job_name", f"vlab-{source_name_for(taskset_id)}"[:60])
        set_path(
            doc, "slurm.project_dir", str(Path(prime_rl_dir).expanduser().resolve()) if prime_rl_dir else "PRIME_RL_DIR"
        )
        set_path(doc, "inference.router.type", "vllm-router")  # prime-rl: multi-node needs a router in front
        notes.append(
            "multi-node: prime-rl writes a SLURM batch script and submits it (sbatch); set [slurm] partition "
            "(default 'cluster') and account for your cluster; the checkout and its .venv must be on a shared filesystem"
        )
    return _spaced(tomlkit.dumps(doc)), notes, mapping.not_carried


def _spaced(text: str) -> str:
    """A blank line before every table header that follows a key (tomlkit appends tables tightly)."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("[") and out and out[-1].strip() and not out[-1].startswith("#"):
            out.append("")
        out.append(line)
    return "\n".join(out) + "\n"


def env_module(spec: str) -> str:
    """The module name prime-rl imports for an environment (what `import` must find in its .venv)."""
    return env_taskset_id(spec)[0].split("/")[-1].split("@")[0].replace("-", "_")


def install_command(spec: str, root: str) -> str | None:
    """The command that installs the environment into the checkout's .venv (None: an id to check only)."""
    p = Path(spec).expanduser()
    where = shlex.quote(root)
    if spec.endswith(".py") or p.exists():
        folder = (p.parent if p.is_file() else p).resolve()
        return f"cd {where} && uv pip install -e {shlex.quote(str(folder))}"
    if "/" in spec:  # a hub id: prime's installer (uv underneath) targets the project's .venv from inside it
        return f"cd {where} && prime env install {shlex.quote(spec)}"
    return None


def env_installed(root: Path, module: str) -> bool | None:
    """Whether the checkout's own Python imports the environment (None: no .venv yet, `uv sync` first)."""
    python = root / ".venv" / "bin" / "python"
    if not python.is_file():
        return None
    # run_command: never our stdin, and a checkout that hangs on import is a clear exit 4, not a traceback
    return run_command([str(python), "-c", f"import {module}"], timeout=300, cwd=root).returncode == 0


def check_env_install(cfg: TrainConfig, result: Result, root: Path | None, install: bool, strict: bool) -> None:
    """Say whether the environment(s) are importable in prime-rl's .venv; install them with --install-env."""
    specs = [cfg.env.id] + ([cfg.eval.env.id] if cfg.eval.env.id else [])
    for spec in specs:
        module = env_module(spec)
        cmd = install_command(spec, str(root) if root else "PRIME_RL_DIR")
        if root is None:
            if install:
                raise UsageError("--install-env needs --prime-rl-dir (the checkout to install into)")
            result.warn(
                "env_installed",
                f"prime-rl imports '{module}' from the checkout's own .venv: install it there before the run",
                hint=cmd or f"install the package that provides '{module}' into the checkout's .venv",
            )
            if cmd:
                result.step(cmd)
            continue
        state = env_installed(root, module)
        if state is None:
            result.warn(
                "env_installed", f"{root}/.venv does not exist yet", hint=f"cd {shlex.quote(str(root))} && uv sync"
            )
            result.step(f"cd {shlex.quote(str(root))} && uv sync")
            if cmd:
                result.step(cmd)
            continue
        if not state and install and cmd:
            if which("uv") is None and cmd.split("&& ")[1].startswith("uv"):
                raise PrerequisiteError("uv is not on PATH", hint="curl -LsSf https://astral.sh/uv/install.sh | sh")
            log(f"$ {cmd}")
            subprocess.run(cmd, shell=True, stdin=subprocess.DEVNULL, stdout=2, stderr=2)
            state = env_installed(root, module)
        if state:
            result.passed("env_installed", f"'{module}' imports in {root}/.venv")
            continue
        message = f"'{module}' does not import in {root}/.venv (prime-rl loads environments from its own environment)"
        hint = (cmd or f"install the package that provides '{module}' there") + "  (or pass --install-env)"
        if strict:
            result.fail("env_installed", message, hint=hint, exit_code=EXIT_PREREQ)
        else:
            result.warn("env_installed", message, hint=hint)
        if cmd:
            result.step(cmd)


def run_prime_rl(
    cfg: TrainConfig,
    result: Result,
    prime_rl_dir: str | None,
    gpus: int | None,
    dry_run: bool,
    force: bool,
    install_env: bool = False,
    rehearse: bool = True,
) -> None:
    from vlab.hosted.rules_secrets import key_var_names
    from vlab.hosted.validate import validate_document

    if not cfg.model.name:
        raise UsageError("no model given", hint="pass --model or set [model] name")
    if not cfg.env.id:
        raise UsageError("no environment given", hint="pass --env or set [env] id")
    nodes = max(1, cfg.deployment.num_nodes)
    if gpus is not None and gpus < 1:
        raise UsageError("--gpus must be >= 1")
    if nodes > 1 and (cfg.deployment.num_train_gpus or cfg.deployment.num_infer_gpus):
        raise UsageError(
            "deployment.num_train_gpus / num_infer_gpus split one node; with --nodes the split is by whole nodes",
            hint="drop them (the split follows the model size, see local-training.md) or run on one node",
        )
    found = visible_gpus()
    # several nodes are planned for another machine: without --gpus, prime-rl's default of 8 a node
    per_node = gpus if gpus is not None else (found if nodes == 1 or found else 8)
    plan = plan_layout(cfg, max(per_node, MIN_GPUS))
    text, notes, not_carried = build_rl_toml(cfg, plan, prime_rl_dir)
    from vlab.hosted import gate  # classic envs: refused, or legacy blocks on a v0.8.0 checkout

    specs = {env_taskset_id(spec)[0]: spec for spec in (cfg.env.id, cfg.eval.env.id) if spec}
    checked = text  # validated in the current shape; `text` may get legacy blocks
    text, gated = gate.gate_text(result, text, "prime-rl", specs=specs, prime_rl_dir=prime_rl_dir, rehearsing=rehearse)
    if gated.refused:
        result.summary = "refused: a classic environment cannot run on this prime-rl (rl.toml not written)"
        for step in gated.migrate_steps():
            result.step(step)
        return

    import tomllib

    from vlab.hosted.rehearse import rehearse_config

    before = len(result.checks)
    rehearse_config(
        result, tomllib.loads(checked), "prime-rl", gated, rows=20, online=True, rehearsing=rehearse, specs=specs
    )
    if any(c.status == "fail" for c in result.checks[before:]):
        result.summary = "the rehearsal failed: the run would not start (rl.toml not written)"
        result.step("fix what the failed rehearse checks name, then re-run")
        return

    checks = validate_document(tomllib.loads(checked), text=checked, target="prime-rl")
    for c in checks:
        result.checks.append(c)

    out = Path(cfg.output_dir)
    path = ensure_writable(out / "rl.toml", force=force)
    write_atomic(path, text, force=True)
    deployment = dict(tomllib.loads(text)["deployment"])  # the JSON says what the file says
    gpus_each = plan.gpus_per_node if nodes > 1 else 1
    root_hint = str(Path(prime_rl_dir).expanduser().resolve()) if prime_rl_dir else "PRIME_RL_DIR"
    command = f"cd {shlex.quote(root_hint)} && uv run rl @ {shlex.quote(str(path.resolve()))}"
    where = "on the SLURM login node (submits one job for all nodes)" if nodes > 1 else "on the GPU machine"
    roles = plan.roles()
    for r in roles:  # what each node runs; prime-rl's sbatch script starts them (srun), one command submits all
        r["started_by"] = "the sbatch script prime-rl submits" if nodes > 1 else "uv run rl"
    data = {
        "engine": "prime-rl",
        "rl_toml": str(path),
        "gpus_found": found,
        "gpus_per_node": plan.gpus_per_node,
        "nodes": nodes,
        "deployment": deployment,
        "num_train_gpus": plan.train * gpus_each,
        "num_infer_gpus": plan.infer * gpus_each,
        "split": plan.reason,
        "node_roles": roles,
        "command_where": where,
        "not_carried": not_carried,
        "notes": notes,
        "commands": [command]
        + ([f"{command} --dry-run   # writes the sbatch script to inspect first"] if nodes > 1 else []),
    }
    result.data.update(data)
    result.passed(
        "deployment",
        f"{plan.train} {plan.unit}(s) for the trainer, {plan.infer} for inference ({plan.reason})",
    )
    for n in notes:
        result.warn("prime_rl_note", n, hint="see the note; the rest of rl.toml is ready")

    root = None
    if prime_rl_dir:
        try:
            root = check_prime_rl_dir(prime_rl_dir)
            result.passed("prime_rl_dir", f"prime-rl checkout at {root}")
        except UsageError as err:
            if not dry_run and nodes == 1:
                raise
            result.warn("prime_rl_dir", err.message, hint=err.hint)  # a dry run may be for another machine
    elif not dry_run and nodes == 1:
        check_prime_rl_dir(prime_rl_dir)  # raises: a run needs the checkout
    check_env_install(cfg, result, root, install_env, strict=not dry_run and nodes == 1)
    for name in key_var_names(tomllib.loads(text)):  # an environment's judge key: by name here, its value there
        result.step(f"{where}: export {name} where the orchestrator runs (the environment reads its judge key there)")
    for c in data["commands"][:1]:
        result.step(f"{where}: {c}")

    if any(c.status == "fail" for c in result.checks):
        failed = [c.id for c in result.checks if c.status == "fail"]
        result.summary = f"rl.toml written to {path}, but the run would fail ({', '.join(failed)})"
        return
    if dry_run or nodes > 1:
        if per_node < MIN_GPUS:
            result.warn(
                "gpus",
                f"this machine has {per_node} GPU(s); the prime-rl stack needs {MIN_GPUS}+ per node",
                hint="run the printed command on a machine with 2+ GPUs, or --engine builtin on one GPU",
            )
        result.summary = f"wrote {path}; {'dry run: ' if dry_run else ''}run the printed command {where}"
        return
    if per_node < MIN_GPUS:
        result.fail(
            "gpus",
            f"the prime-rl stack needs {MIN_GPUS}+ GPUs (1 inference + 1 trainer); "
            f"{'asked for' if gpus is not None else 'torch sees'} {per_node}",
            hint="use --engine builtin on one GPU, or --dry-run to write the config for a bigger machine",
            exit_code=EXIT_PREREQ,
        )
        return
    if which("uv") is None:
        raise PrerequisiteError(
            "uv is not on PATH (prime-rl runs through `uv run rl`)",
            hint="curl -LsSf https://astral.sh/uv/install.sh | sh",
        )
    log(f"$ {command}")
    proc = subprocess.run(
        ["uv", "run", "rl", "@", str(path.resolve())],
        cwd=root,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
        stdout=2,
        stderr=2,
    )  # prime-rl's logs go to our stderr
    result.data["returncode"] = proc.returncode
    if proc.returncode == 0:
        result.passed("prime_rl_run", "prime-rl finished")
        result.summary = f"prime-rl finished ({path})"
    else:
        result.fail(
            "prime_rl_run",
            f"`uv run rl` exited with {proc.returncode}",
            hint="read prime-rl's log above (stderr); outputs are in the run's output_dir",
        )
        result.summary = f"prime-rl failed (exit {proc.returncode})"
