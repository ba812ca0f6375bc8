"""local_train's request and its one entry point: build the config from the TOML and the flags, run the engine."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from vlab.core import secrets
from vlab.core.result import Result, UsageError
from vlab.train.config import load_config, parse_override

ENGINES = ("builtin", "prime-rl")


@dataclass(frozen=True)
class LocalTrainRequest:
    """What local_train is asked: a config file, the flags that override it, and how to run."""

    config: str | None = None  # TOML config; flags alone are enough
    engine: str = "builtin"
    env: str | None = None  # [env] id
    env_args: dict[str, Any] | str | None = None  # [env] args: a dict, or its JSON text (--env-args)
    env_arg: tuple[str, ...] = ()  # --env-arg KEY=VALUE (dotted keys nest), on top of env_args
    eval_env: str | None = None  # [eval.env] id: evaluate on another environment
    eval_env_args: dict[str, Any] | str | None = None  # [eval.env] args (--eval-env-args JSON)
    eval_env_arg: tuple[str, ...] = ()  # --eval-env-arg KEY=VALUE
    check_env_args: bool = True  # check argument names against the environment's config / signature
    model: str | None = None  # [model] name
    max_steps: int | None = None
    output_dir: str | None = None
    device: str | None = None  # [model] device
    memory_budget: float | None = None  # [model] memory_budget_gib: GiB the run may use (0: off)
    lora: bool | None = None  # lora.enabled
    wandb: bool | None = None  # wandb.enabled
    sets: tuple[str, ...] = ()  # --set KEY=VALUE overrides, applied first
    resume: str | None = None  # latest | PATH
    force: bool = False
    progress: bool = True
    # prime-rl engine
    prime_rl_dir: str | None = None
    gpus: int | None = None
    nodes: int | None = None  # [deployment] num_nodes
    install_env: bool = False  # install the environment into the prime-rl checkout's environment
    rehearse: bool = True  # rehearse the run (hosted.rehearse) before rl.toml is written; --no-rehearse
    dry_run: bool = False
    # (key path, value) pairs for load_config, derived from the fields above
    overrides: tuple[tuple[tuple[str, ...], Any], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"unknown engine {self.engine!r}", hint="one of: " + ", ".join(ENGINES))
        object.__setattr__(self, "sets", tuple(self.sets))
        if self.memory_budget is not None:
            budget = self.memory_budget
            if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not 0 <= budget < math.inf:
                raise UsageError(
                    f"memory_budget must be a finite number of GiB >= 0 (0: off), got {budget!r}",
                    hint="e.g. --memory-budget 24 for a 24 GB card",
                )
            object.__setattr__(self, "memory_budget", float(budget))
        out = [parse_override(text) for text in self.sets]
        from vlab.train.envargs import parse_dotted_arg

        for name, flag, path in (
            ("env_args", "--env-args", ["env", "args"]),
            ("eval_env_args", "--eval-env-args", ["eval", "env", "args"]),
        ):
            value = _json_object(getattr(self, name), flag)
            object.__setattr__(self, name, value)
            if value is not None:
                secrets.register(value)  # masked wherever it shows up from here on
                out.append((path, value))
            texts = tuple(getattr(self, name.removesuffix("s")))  # --env-arg a.b=1: one key, nested
            object.__setattr__(self, name.removesuffix("s"), texts)
            for text in texts:
                keys, item = parse_dotted_arg(text)
                secrets.register({keys[-1]: item})
                out.append((path + keys, item))
        for flag, key in (
            (self.env, ["env", "id"]),
            (self.eval_env, ["eval", "env", "id"]),
            (self.model, ["model", "name"]),
            (self.max_steps, ["max_steps"]),
            (self.output_dir, ["output_dir"]),
            (self.device, ["model", "device"]),
            (self.memory_budget, ["model", "memory_budget_gib"]),
            (self.lora, ["lora", "enabled"]),
            (self.wandb, ["wandb", "enabled"]),
            (self.nodes, ["deployment", "num_nodes"]),
        ):
            if flag is not None:
                out.append((key, flag))
        object.__setattr__(self, "overrides", tuple((tuple(path), value) for path, value in out))


def _json_object(value: Any, flag: str) -> dict[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise UsageError(f"{flag} is not JSON: {err}", hint=f"e.g. {flag} '{{\"num_examples\": 100}}'") from err
    if value is not None and not isinstance(value, dict):
        raise UsageError(f"{flag} must be a JSON object")
    return value


def check_args(cfg, result: Result) -> None:
    """Refuse an argument name the environment (or the eval environment) does not take."""
    from vlab.train.envargs import check_env_args

    for spec, args, flag in (
        (cfg.env.id, cfg.env.args, "--env-arg"),
        (cfg.eval.env.id, cfg.eval.env.args, "--eval-env-arg"),
    ):
        if spec:
            line = check_env_args(spec, args, flag)
            (result.warn if "not checked" in line else result.passed)("env_args", line)


def run_local_train(request: LocalTrainRequest, result: Result) -> None:
    """The whole local_train run: load the config with the request's overrides, then the engine asked for."""
    cfg = load_config(request.config, [(list(path), value) for path, value in request.overrides])
    if request.check_env_args:
        check_args(cfg, result)
    from vlab.train.plan import seq_len
    from vlab.train.primerl_map import seq_len as prime_rl_seq_len
    from vlab.train.turns import check_turn_budget, max_turns

    budget = prime_rl_seq_len(cfg) if request.engine == "prime-rl" else seq_len(cfg)
    declared = None
    if cfg.env.id and max_turns(cfg.env.args) is None:  # the environment's own limit when no argument names one
        from vlab.train.envargs import declared_turn_limit

        declared = declared_turn_limit(cfg.env.id)
    check_turn_budget(cfg.env.args, cfg.sampling.max_completion_tokens, budget, result, declared)
    from vlab.train.completion import check_completion_budget

    check_completion_budget(cfg.env.id, cfg.env.args, cfg.sampling.max_completion_tokens, result)
    if request.engine == "prime-rl":
        from vlab.train.primerl import run_prime_rl

        run_prime_rl(
            cfg,
            result,
            prime_rl_dir=request.prime_rl_dir,
            gpus=request.gpus,
            dry_run=request.dry_run,
            install_env=request.install_env,
            force=request.force,
            rehearse=request.rehearse,
        )
        return
    if request.dry_run:
        from vlab.train.plan import dry_run

        dry_run(cfg, result)
        return
    from vlab.train.runner import run_builtin

    run_builtin(cfg, result, resume=request.resume, force=request.force, progress=request.progress)
